/*-------------------------------------------------------------------------
 *
 * bloomguard.h
 *	  Declarations shared by bloomguard's source files.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMGUARD_H
#define BLOOMGUARD_H

#include "access/attnum.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "storage/lwlock.h"
#include "utils/dsa.h"
#include "utils/relcache.h"

#include "filter.h"

#define BLOOMGUARD_TRIGGER_NAME		"bloomguard"
#define BLOOMGUARD_REGISTRY_TABLE	"bloomguard_guards"

/* settings: defaults and limits */
#define BG_MAX_MEMORY_DEFAULT		128		/* MB */
#define BG_MAX_MEMORY_MIN			1
#define BG_MAX_MEMORY_MAX			(INT_MAX / 2)
#define BG_MAX_GUARDS_DEFAULT		256
#define BG_MAX_GUARDS_MIN			1
#define BG_MAX_GUARDS_MAX			100000
#define BG_ERROR_RATE_DEFAULT		0.01
#define BG_ERROR_RATE_MIN			1e-9
#define BG_ERROR_RATE_MAX			0.5
#define BG_MAINTENANCE_INTERVAL_DEFAULT	10	/* seconds */
#define BG_MAINTENANCE_INTERVAL_MIN		0
#define BG_MAINTENANCE_INTERVAL_MAX		(INT_MAX / 1000)
#define BG_MIN_CAPACITY				1000	/* floor for the default capacity */

/* bloomguard.c: settings */
extern bool bg_enabled;
extern int	bg_max_memory_mb;
extern int	bg_max_guards;
extern double bg_default_error_rate;
extern int	bg_maintenance_interval;
extern bool bg_auto_rebuild;
extern bool bg_background_worker;

/*
 * A guard's state, as the health view shows it.  DISABLED is not stored;
 * it is what the view says while bloomguard.enabled is off.
 */
typedef enum BgState
{
	BG_STATE_FREE = 0,			/* slot unused */
	BG_STATE_NOT_LOADED,		/* registered, no complete filter */
	BG_STATE_BUILDING,			/* first build running */
	BG_STATE_READY,				/* serving filter is complete */
	BG_STATE_UNTRUSTED			/* coverage broken; waits for a rebuild */
} BgState;

/*
 * The identity of a guard's key, stored with the filter and compared with
 * the catalogs on every call: if the primary key index, a key column's
 * type or its collation changed, the filter's hashes no longer mean what
 * the lookup would compute, and the filter must not be used.
 */
typedef struct BgKeyIdentity
{
	Oid			indexoid;
	int16		nkeys;
	AttrNumber	attnums[INDEX_MAX_KEYS];
	Oid			types[INDEX_MAX_KEYS];
	Oid			collations[INDEX_MAX_KEYS];
} BgKeyIdentity;

/*
 * One guard in shared memory.  See shmem.c for which lock protects what.
 */
typedef struct BgSlot
{
	LWLock		lock;
	Oid			dbid;
	Oid			relid;
	uint64		incarnation;	/* changes whenever the slot is (re)claimed */
	BgState		state;
	BgKeyIdentity key;
	dsa_pointer serving;		/* complete filter readers may use */
	dsa_pointer building;		/* filter being built; the trigger feeds it too */
	Size		serving_bytes;
	Size		building_bytes;
	uint64		generation;		/* of the serving filter */
	TimestampTz built_at;
	double		build_seconds;
	int			builder_pid;
	bool		coverage_broken;	/* untrusted while a build was running */
	char		last_error[128];	/* why the last build failed, if it did */
	/* traffic counters, updated without a lock */
	pg_atomic_uint64 shortcuts;
	pg_atomic_uint64 source_lookups;
	pg_atomic_uint64 source_hits;
	pg_atomic_uint64 fallbacks;
	pg_atomic_uint64 probes;
	pg_atomic_uint64 probe_hits;
	TimestampTz stats_reset;
} BgSlot;

/* A backend's cached reference to a slot, validated by incarnation. */
typedef struct BgSlotRef
{
	int			index;			/* -1: no slot */
	uint64		incarnation;
	uint64		epoch;			/* slot-table epoch when looked up */
} BgSlotRef;

/*
 * How one key column is hashed.  RAW methods hash the value's bytes; they
 * are used only where the key's equality operator is byte equality.
 */
typedef enum BgHashMethod
{
	BG_HASH_BYVAL,				/* by-value Datum (int2/4/8, oid, date, ...) */
	BG_HASH_FIXED,				/* fixed-length by reference (uuid) */
	BG_HASH_VARLENA,			/* bytea, text under a deterministic collation */
	BG_HASH_FMGR				/* the type's extended hash support function */
} BgHashMethod;

typedef struct BgKeyColumn
{
	AttrNumber	attnum;			/* heap attribute number */
	Oid			typid;			/* column type (may be a domain) */
	Oid			basetype;		/* type the index compares */
	int32		typmod;
	Oid			collation;		/* index collation */
	Oid			opfamily;		/* btree opfamily of the index column */
	Oid			eqop;			/* btree equality operator */
	RegProcedure eqproc;		/* its function, for the index scan key */
	int16		typlen;
	bool		typbyval;
	BgHashMethod method;
	FmgrInfo	hashfn;			/* BG_HASH_FMGR only */
} BgKeyColumn;

typedef struct BgKeyDesc
{
	Oid			relid;
	Oid			indexoid;
	int			nkeys;
	bool		hashable;		/* every key column can be hashed */
	BgKeyColumn cols[INDEX_MAX_KEYS];
} BgKeyDesc;


/* shmem.c */
extern void bg_require_loaded(void);
extern bool bg_loaded(void);
extern void bg_shmem_init(void);
extern dsa_area *bg_dsa(void);
extern BgSlot *bg_slot(int index);
extern bool bg_slot_find(Oid relid, BgSlotRef *ref);
extern BgSlot *bg_slot_lock(BgSlotRef *ref, Oid relid, LWLockMode mode);
extern int	bg_slot_claim(Oid relid, const BgKeyIdentity *key, BgState state);
extern void bg_slot_release(Oid dbid, Oid relid);
extern void bg_slot_release_database(Oid dbid);
extern void bg_memory_reserve(Size bytes, Oid relid);
extern void bg_memory_unreserve(Size bytes);
extern bool bg_memory_fits(Size bytes);
extern Size bg_memory_in_use(void);
extern int	bg_slot_count(void);
extern void bg_forget_at_commit(Oid relid);
extern void bg_forget_database_at_commit(Oid dbid);
extern void bg_untrust_at_commit(Oid relid, const char *why);
extern void bg_slot_reset_counters(BgSlot *slot);

/* coverage.c */
extern Oid	bg_own_trigger_relid;
extern bool bg_is_feed_function(Oid funcoid);
extern void bg_coverage_init(void);
extern void bg_untrust(Oid relid, const char *why);

/* keys.c */
extern bool bg_keydesc_build(Relation rel, BgKeyDesc *desc, bool missing_ok,
							 bool require_hash);
extern const BgKeyDesc *bg_keydesc_lookup(Relation rel, const BgKeyIdentity **identity,
										  BgSlotRef **ref);
extern void bg_keydesc_identity(const BgKeyDesc *desc, BgKeyIdentity *key);
extern bool bg_identity_equal(const BgKeyIdentity *a, const BgKeyIdentity *b);
extern void bg_key_colhashes(const BgKeyDesc *desc, const Datum *values,
							 uint64 *colhashes);

/* build.c */
typedef struct BgBuildState
{
	int			slotindex;
	uint64		incarnation;
	dsa_pointer dp;
	Size		bytes;
	BloomFilter *filter;
	TimestampTz start;
} BgBuildState;

extern void bg_build_begin(Relation rel, const BgKeyDesc *desc, int slotindex,
						   uint64 capacity, double error_rate, BgBuildState *bs);
extern void bg_build_finish(Relation rel, const BgKeyDesc *desc, BgBuildState *bs);
extern void bg_build_abandon(BgBuildState *bs, const char *why);
extern void bg_build(Relation rel, const BgKeyDesc *desc, int slotindex,
					 uint64 capacity, double error_rate);
extern uint64 bg_default_capacity(Relation rel);
extern double bg_estimate_rows(Relation rel);
extern void bg_check_sizing(int64 capacity, double error_rate,
							uint64 *nbits, int *nhashes, Size *bytes);

/* registry.c */
extern Oid	bg_extension_schema(void);
extern bool bg_registry_lookup(Oid relid, int64 *capacity, double *error_rate);
extern void bg_registry_insert(Oid relid, int64 capacity, double error_rate);
extern void bg_registry_update(Oid relid, int64 capacity, double error_rate);
extern void bg_registry_delete(Oid relid);

/* lookup.c */
extern bool bg_feed_in_place(Relation rel);

/* worker.c */
extern void bg_worker_init(void);
struct BackgroundWorkerHandle;
extern bool bg_start_worker(const char *function, const char *type,
							const char *name, Datum arg,
							struct BackgroundWorkerHandle **handle);

/* stats.c */
extern const char *bg_state_name(BgState state);

/* attach.c */
extern void bg_check_guardable(Relation rel);
extern void bg_check_owner(Relation rel);
extern bool bg_rebuild_guard(Relation rel, int64 capacity, double error_rate,
							 bool nowait);

#endif							/* BLOOMGUARD_H */
