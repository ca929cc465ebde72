/*-------------------------------------------------------------------------
 *
 * bloomguard.h
 *	  Declarations shared by bloomguard's source files.
 *
 * Declarations are grouped by the file that defines them, from the bottom
 * floor up; a file calls only into files listed above it (module.c has
 * the module map).  It is one header of some 610 lines, not one per file,
 * because the shared types (a guard's slot copy, a key's description)
 * are used on every floor, and one list in floor order shows what each
 * file offers the ones above it.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMGUARD_H
#define BLOOMGUARD_H

#include "access/attnum.h"
#include "access/htup.h"
#include "access/xact.h"
#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "storage/lockdefs.h"
#include "storage/lwlock.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "compat.h"
#include "filter.h"

#define BLOOMGUARD_TRIGGER_NAME		"bloomguard"
#define BLOOMGUARD_TRIGGER_FUNCTION	"bloomguard_trigger"
#define BLOOMGUARD_REGISTRY_TABLE	"bloomguard_guards"

/*
 * bloomguard's custom WAL resource manager.  The id is one that
 * https://wiki.postgresql.org/wiki/CustomWALResourceManagers does not
 * list (128 is for experiments); doc/wal.md says which.
 */
#define BG_RMGR_ID					188
#define BG_RMGR_NAME				"bloomguard"

#define BG_MIN_CAPACITY				1000	/* floor for a chosen capacity */

/* databases that may wait at once for the launcher's visit (shmem.c) */
#define BG_MAX_VISIT_REQUESTS		64

/*
 * True for the transaction callback events after which the transaction
 * has ended (or, PREPARE, left this backend): no statement of it runs any
 * more.
 */
static inline bool
bg_xact_event_ends(XactEvent event)
{
	return event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT;
}


/* A filter's place in the filter pool (shmem.c): an offset, 0 for none. */
typedef uint64 BgFilterPtr;

#define InvalidBgFilterPtr		((BgFilterPtr) 0)
#define BgFilterPtrIsValid(p)	((p) != InvalidBgFilterPtr)

/* pool.c: the filter pool's free list; its chunks are whole cache lines */
#define BG_POOL_ALIGN			64
#define BG_POOL_ROUND(n)		TYPEALIGN(BG_POOL_ALIGN, (n))

typedef struct BgPool
{
	Size		size;			/* bytes of the arena */
	BgFilterPtr free_list;		/* first free chunk */
} BgPool;

extern void bg_pool_init(BgPool *pool, char *base, Size size);
extern BgFilterPtr bg_pool_take(BgPool *pool, char *base, Size size, bool from_top);
extern void bg_pool_give(BgPool *pool, char *base, BgFilterPtr p, Size size);

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
 * What a lookup expects of a guard's serving filter (trust.c fills it in,
 * slot.c compares it under the slot's lock): built for this key identity,
 * under these versions of the feed function's and the feed trigger's
 * catalog rows, for this relfilenode if loaded from the saved file.
 */
typedef struct BgSlotExpect
{
	const BgKeyIdentity *identity;
	TransactionId feed_version;
	TransactionId trigger_version;
	Oid			relfilenode;
} BgSlotExpect;

/* Where a guard's serving filter came from, as the health view shows it. */
typedef enum BgSource
{
	BG_SOURCE_NONE = 0,			/* no filter */
	BG_SOURCE_BUILT,			/* a scan on this node */
	BG_SOURCE_LOADED,			/* the file saved at the last clean shutdown */
	BG_SOURCE_REPLAYED			/* that file, then WAL replayed into it */
} BgSource;

/* A slot's traffic counters, kept in an array indexed by this. */
typedef enum BgCounter
{
	BG_COUNT_SHORTCUT,			/* answered "absent" by the filter */
	BG_COUNT_SOURCE_LOOKUP,		/* the filter said "maybe": the table was read */
	BG_COUNT_SOURCE_HIT,		/* ... and the key was found */
	BG_COUNT_FALLBACK,			/* no trusted filter: the table was read */
	BG_COUNT_PROBE,				/* never-added keys probed */
	BG_COUNT_PROBE_HIT,			/* ... that the filter called "maybe" */
	BG_NUM_COUNTERS
} BgCounter;

/* the length of a slot's last_error, and of its copies */
#define BG_ERROR_LEN				128

/*
 * A guard's slot in shared memory (BgSlot) is private to shmem.c and
 * slot.c: its definition is in slot_internal.h, which no other file
 * includes.  Everyone else goes through slot.c's operations, with a slot
 * index or a BgSlotRef.
 */

/* A backend's cached reference to a slot, validated by incarnation. */
typedef struct BgSlotRef
{
	int			index;			/* -1: no slot */
	uint64		incarnation;
	uint64		epoch;			/* slot-table epoch when looked up; 0 forces a search */
} BgSlotRef;

#define BG_SLOT_REF_INIT	{-1, 0, 0}

/*
 * A guard as the file of saved filters has it (persist.c): what a slot
 * needs besides the filter itself.
 */
typedef struct BgSavedGuard
{
	Oid			dbid;
	Oid			relid;
	Oid			relfilenode;
	BgKeyIdentity key;
	TransactionId feed_version; /* BgSlot's: the feed function's row */
	TransactionId trigger_version;	/* BgSlot's: the feed trigger's row */
	uint64		generation;
	TimestampTz built_at;
	double		build_seconds;
	int			build_workers;
} BgSavedGuard;

/* A slot copied out under its lock, for readers of its numbers. */
typedef struct BgSlotCopy
{
	int			index;
	Oid			relid;
	BgState		state;
	bool		has_filter;		/* the fields below the line are set */
	Size		bytes;			/* both generations */
	BgSavedGuard guard;			/* identity, generation, when built */
	BgSource	source;
	TimestampTz source_at;
	int			builder_pid;
	bool		building;
	TransactionId claim_xid;	/* an in-transaction attach's (shmem.c) */
	char		last_error[BG_ERROR_LEN];
	TimestampTz stats_reset;
	uint64		counters[BG_NUM_COUNTERS];
	/* ---- the serving filter's, when has_filter */
	uint64		capacity;
	double		error_rate;
	uint64		nbits;
	int			nhashes;
	uint32		block_bits;
	uint64		n_added;
	uint64		bits_set;
} BgSlotCopy;

/* What a filter says about a key. */
typedef enum BgAnswer
{
	BG_ANSWER_UNKNOWN = -1,		/* no trusted filter */
	BG_ANSWER_ABSENT = 0,		/* definitely never added */
	BG_ANSWER_MAYBE = 1
} BgAnswer;

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
	Oid			indexoid;
	int			nkeys;
	bool		hashable;		/* every key column can be hashed */
	BgKeyColumn cols[FLEXIBLE_ARRAY_MEMBER];
} BgKeyDesc;

#define BgKeyDescSize(nkeys) \
	(offsetof(BgKeyDesc, cols) + (nkeys) * sizeof(BgKeyColumn))

/*
 * Where a table's rows are (tablekind.c): in the table itself, or
 * elsewhere, in a kind bloomguard never guards or probes from C.
 */
typedef enum BgTableKind
{
	BG_TABLE_OWN_ROWS,			/* an ordinary heap table, or partitioned */
	BG_TABLE_CITUS_DISTRIBUTED, /* Citus shells: the rows are in shards */
	BG_TABLE_CITUS_REFERENCE,
	BG_TABLE_CITUS_LOCAL,
	BG_TABLE_CITUS_OTHER,		/* Citus, of a kind not recognised */
	BG_TABLE_FOREIGN,
	BG_TABLE_OTHER_AM,			/* a table of another access method */
	BG_TABLE_NOT_TABLE			/* a view, sequence, ... */
} BgTableKind;

/* A backend's cached description of a table's key (keycache.c). */
typedef struct BgKeyInfo
{
	Oid			relid;
	BgTableKind kind;			/* where its rows are (tablekind.c) */
	BgKeyDesc  *desc;			/* NULL: the table has no usable primary key */
	BgKeyIdentity identity;		/* of desc */
	TransactionId trigger_version;	/* the feed trigger's row (xmin), if any */
	bool		untrust_sent;	/* the trigger untrusted the guard: no key */
	BgSlotRef	ref;			/* where the table's guard was last found */
	int			pins;			/* calls using it now */
	bool		retired;		/* evicted while pinned */
	MemoryContext cxt;			/* holds it, and its hash functions' state */
} BgKeyInfo;

/* Whether a table's feed trigger is the one attach creates. */
typedef enum BgFeedState
{
	BG_FEED_MISSING,			/* no candidate trigger (feedcheck.c) */
	BG_FEED_ALTERED,			/* there is one, but not as attach makes it */
	BG_FEED_NOT_ALWAYS,			/* as attach makes it, but not enabled ALWAYS */
	BG_FEED_IN_PLACE			/* as attach makes it, enabled ALWAYS */
} BgFeedState;


/* shmem.c */
extern void bg_shmem_init(void);
extern void bg_shmem_request(void);
extern void bg_shmem_startup(void);
extern void bg_require_loaded(void);
extern bool bg_loaded(void);
extern int	bg_slot_count(void);
extern bool bg_slot_find(Oid relid, BgSlotRef *ref);
extern int	bg_slot_claim(Oid relid, const BgKeyIdentity *key, BgState state,
						  TransactionId claim_xid);
extern void bg_slot_claim_end(Oid relid);
extern void bg_slot_release(Oid dbid, Oid relid);
extern void bg_slot_release_database(Oid dbid);
extern void bg_visit_request(void);
extern void bg_visit_always(Oid dbid, bool on);
extern bool bg_visit_wanted(Oid dbid, bool take);
extern void bg_slot_forget_when_committed(Oid dbid, Oid relid, TransactionId xid);
extern void bg_slot_sweep(void);
extern void bg_slot_reset_counters(int index, Oid relid);
extern Size bg_memory_cap(void);
extern BgFilterPtr bg_filter_alloc(Size bytes, Oid relid, BgFilterPtr away_from);
extern void bg_filter_free(BgFilterPtr p, Size bytes);
extern BloomFilter *bg_filter_addr(BgFilterPtr p);
extern bool bg_memory_fits(Size bytes);
extern Size bg_memory_in_use(void);
extern BloomFilter *bg_slot_restore(const BgSavedGuard *g, Size bytes);
extern void bg_slot_restore_abandon(const BgSavedGuard *g);

/* slot.c */
extern bool bg_identity_equal(const BgKeyIdentity *a, const BgKeyIdentity *b);
extern bool bg_slot_copy(int index, Oid dbid, Oid relid, BgSlotCopy *copy);
extern bool bg_slot_copy_rel(Oid relid, BgSlotCopy *copy);
extern void bg_slot_bump(int index, BgCounter counter, uint64 n);
extern int	bg_slot_index(BgSlotRef *ref, Oid relid);
extern BgAnswer bg_slot_ask(BgSlotRef *ref, Oid relid, const BgSlotExpect *expect,
							const uint64 *colhashes, int nkeys, bool nomatch,
							int *slotindex);
extern bool bg_slot_feed_batch(BgSlotRef *ref, Oid dbid, Oid relid, Oid relfilenode,
							   int ncols, const uint64 *keys, int nkeys,
							   const uint64 *moved, int nmoved);
extern BloomFilter *bg_slot_saveable(int index, BgSavedGuard *g);
extern bool bg_slot_probe(Oid relid, int32 n, uint64 *hits, BgState *state);
extern void bg_untrust_in(Oid dbid, Oid relid, const char *why);
extern void bg_untrust(Oid relid, const char *why);
extern void bg_untrust_database(Oid dbid, const char *why);
extern void bg_untrust_all(const char *why);
extern void bg_note_error(Oid relid, const char *why, bool *changed);

/* A generation being built, as its build published it in the slot. */
typedef struct BgGeneration
{
	int			slotindex;
	uint64		incarnation;	/* of the slot when it was published */
	BgFilterPtr dp;
	uint64		seed;			/* tells it from a later one at dp */
} BgGeneration;

/* What bg_slot_publish() found. */
typedef enum BgPublish
{
	BG_PUBLISH_DONE,			/* published */
	BG_PUBLISH_BUSY,			/* another generation is being built */
	BG_PUBLISH_GONE				/* the slot is not the table's any more */
} BgPublish;

extern BgFilterPtr bg_slot_serving_hint(int index);
extern BgPublish bg_slot_publish(int index, Oid relid, BgFilterPtr dp, Size bytes,
								 uint64 *incarnation);
extern bool bg_slot_building_shape(const BgGeneration *gen, BloomFilter *shape);
extern bool bg_slot_building_put(const BgGeneration *gen, const BloomHash *hashes,
								 int n, const uint64 *local, uint64 first,
								 uint64 count, uint64 nadded);
extern bool bg_slot_abandon(int index, uint64 incarnation, BgFilterPtr dp,
							Size bytes, const char *why);
extern bool bg_slot_swap(int index, uint64 incarnation, BgFilterPtr dp, Size bytes,
						 const BgSavedGuard *g, bool permanent, bool *broken,
						 char *broken_why);

/* wal.c */
extern void bg_wal_init(void);
extern void bg_wal_shmem_request(void);
extern void bg_wal_shmem_startup(void);
extern void bg_wal_heartbeat(void);
extern void bg_wal_log_keys(Oid relid, int ncols, const uint64 *keys, int nkeys,
							const uint64 *moved, int nmoved);
extern void bg_wal_log_untrust(Oid relid, const char *why);
extern void bg_wal_log_forget(Oid dbid, Oid relid);
extern void bg_wal_untrust(Oid relid, const char *why);
extern bool bg_wal_standby_trusts(void);
extern const char *bg_wal_standby_why_not(void);
extern bool bg_wal_begin_standby_build(void);
extern void bg_wal_end_standby_build(void);
extern void bg_wal_loaded(XLogRecPtr lsn);
extern bool bg_wal_standby_saveable(XLogRecPtr *lsn);
extern bool bg_wal_announced(void);

/* persist.c */
extern void bg_persist_shmem_startup(void);

/* feedbuffer.c */
extern void bg_feed_init(void);
extern void bg_feed_add(Relation rel, const uint64 *colhashes, int ncols, bool moved);
extern void bg_feed_flush_rel(Oid relid);
extern void bg_feed_flush_all(void);

/* tablekind.c */
extern BgTableKind bg_table_kind(Relation rel);
extern BgTableKind bg_table_kind_by_oid(Oid relid);
extern char *bg_table_kind_detail(BgTableKind kind, const char *name);
extern bool bg_table_kind_citus(BgTableKind kind);
extern bool bg_citus_present(void);
extern bool bg_citus_guards_through_shards(BgTableKind kind);
extern void bg_citus_show_shards(void);

/* pending.c */
extern void bg_pending_init(void);
typedef void (*bg_pending_fn) (Oid relid);
extern void bg_forget_at_commit(Oid relid);
extern void bg_call_at_commit(bg_pending_fn fn, Oid relid);
extern void bg_forget_database_at_commit(Oid dbid);
extern void bg_untrust_at_commit(Oid relid, const char *why);
extern void bg_unregister_at_commit(Oid relid);
extern int	bg_claim_in_transaction(Oid relid, const BgKeyIdentity *key,
									BgState state);
extern bool bg_untrust_pending(Oid relid);

/* registry.c */
typedef struct BgRegistryEntry
{
	Oid			relid;
	int64		capacity;
	double		error_rate;
} BgRegistryEntry;

extern List *bg_registry_list(void);
extern Oid	bg_extension_schema(void);
extern bool bg_registry_lookup(Oid relid, int64 *capacity, double *error_rate);
extern void bg_registry_insert(Oid relid, int64 capacity, double error_rate);
extern void bg_registry_update(Oid relid, int64 capacity, double error_rate);
extern void bg_registry_delete(const Oid *relids, int n);
extern void bg_check_schema_usage(Relation rel);
extern void bg_check_owner(Relation rel);
extern bool bg_may_see_guard(Oid relid);
extern void bg_require_guarded(Relation rel, int64 *capacity, double *error_rate);

/* statement.c */
extern void bg_statement_init(void);
extern bool bg_own_writes_fed(Oid relid, Snapshot snap);
#ifdef USE_ASSERT_CHECKING
extern void bg_assert_own_writes_fed(Relation rel, Snapshot snap);
#else
#define bg_assert_own_writes_fed(rel, snap) ((void) 0)
#endif

/* keys.c */
extern Oid	bg_primary_key_index(Relation rel);
extern BgKeyDesc *bg_keydesc_build(Relation rel, bool missing_ok, bool require_hash);
extern void bg_keydesc_identity(const BgKeyDesc *desc, BgKeyIdentity *key);
extern void bg_key_colhashes(const BgKeyDesc *desc, const Datum *values,
							 uint64 *colhashes);

/* feedcheck.c */
extern BgFeedState bg_feed_check(Relation rel, TransactionId *feed_version);
extern BgFeedState bg_feed_state(Relation rel);
extern BgFeedState bg_feed_state_by_oid(Oid relid);
extern const char *bg_feed_trigger_name(Relation rel);
extern List *bg_feed_trigger_names(Relation rel);
extern List *bg_feed_trigger_tables(void);
extern bool bg_feed_trigger_of(Oid trigoid, Oid *relid, bool *clone);
extern bool bg_feed_function_changing(Oid funcoid);
extern HeapTuple bg_feed_trigger_tuple(Oid relid);
extern HeapTuple bg_named_trigger_tuple(Oid relid);
extern TransactionId bg_feed_trigger_version(Oid relid);
extern Oid	bg_feed_clone_root(Oid relid);

/* keycache.c */
extern BgKeyInfo *bg_keyinfo_acquire(Relation rel);
extern void bg_keyinfo_release(BgKeyInfo *info);

/* sizing.c */
extern void bg_check_capacity(int64 capacity);
extern void bg_check_error_rate(double error_rate);
extern void bg_filter_size(int64 capacity, double error_rate,
						   uint64 *nbits, int *nhashes, Size *bytes);
extern double bg_estimate_rows(Relation rel);
extern double bg_live_rows(Oid relid);
extern int64 bg_choose_capacity(double rows, double distinct_keys, bool full,
								int64 current);
extern bool bg_capacity_fits(int64 capacity, double error_rate);
extern double bg_error_rate_default(void);
extern void bg_sizing_init(void);

/* partition.c */
extern List *bg_partition_leaves(Oid parent, LOCKMODE lockmode);
extern List *bg_partition_leaves_of(Relation parent, LOCKMODE lockmode);
extern void bg_wait_for_writers(Oid relid);
extern Oid	bg_partition_guarded_root(Oid relid, List *registered);
extern int64 bg_partition_share(int64 capacity, double rows, double total_rows,
								int nleaves);
extern void bg_partition_register(Oid relid);
extern void bg_partition_recheck(Oid relid);
extern void bg_partition_check_joining(Oid child, Oid parent);
extern Oid	bg_route_key(Relation parent, const Datum *values, LOCKMODE lockmode,
						 bool *routed);

/* ddlwatch.c */
extern void bg_coverage_init(void);
extern Oid	bg_own_trigger_begin(Oid relid);
extern void bg_own_trigger_end(Oid outer);
extern bool bg_has_children(Relation rel);

/* a build under way (build.c; buildscan.c reads it) */
typedef struct BgBuildState
{
	int			slotindex;
	uint64		incarnation;
	BgFilterPtr dp;
	Size		bytes;
	BloomFilter *filter;
	TimestampTz start;
	TransactionId trigger_version;	/* the feed trigger's row as the scan starts */
} BgBuildState;

/* buildscan.c */
extern LOCKMODE bg_build_lockmode(void);
extern int	bg_build_scan(Relation rel, const BgKeyDesc *desc, BgBuildState *bs);

/* build.c */
extern void bg_build_begin(Relation rel, const BgKeyDesc *desc, int slotindex,
						   uint64 capacity, double error_rate, BgBuildState *bs);
extern void bg_build_finish(Relation rel, const BgKeyDesc *desc, BgBuildState *bs);
extern void bg_build_abandon(BgBuildState *bs, const char *why);

/* rebuild.c */
extern void bg_check_guardable(Relation rel);
extern void bg_check_not_in_recovery(void);
extern int64 bg_rebuild_capacity(Relation rel);
extern bool bg_rebuild(Relation rel, int64 capacity, double error_rate, bool nowait);

/* trigger.c */
extern void bg_feed_trigger_create(Oid relid, Oid owner);

/* args.c */
typedef enum BgArgConv
{
	BG_ARG_SAME,				/* already the column's (base) type */
	BG_ARG_INPUT,				/* unknown literal: the type's input function */
	BG_ARG_INT,					/* int2/int4/int8 to another width */
	BG_ARG_NUMERIC_TO_INT,		/* numeric to an integer key, if integral */
	BG_ARG_INT_TO_NUMERIC,		/* integer to a numeric key */
	BG_ARG_SQL					/* anything else: let SQL's "=" decide */
} BgArgConv;

typedef enum BgKeyResult
{
	BG_KEY_OK,					/* values[] holds the key */
	BG_KEY_NULL,				/* some argument is NULL: no row matches */
	BG_KEY_NO_MATCH,			/* no value of the key type can equal it */
	BG_KEY_SQL					/* must be answered by the SQL query */
} BgKeyResult;

/* How a call site's key arguments convert, kept in fn_extra. */
typedef struct BgCallCache
{
	Oid			relid;
	Oid			indexoid;		/* of the key this was worked out for */
	bool		variadic_array;
	int			nargs;
	Oid			argtypes[INDEX_MAX_KEYS];
	BgArgConv	conv[INDEX_MAX_KEYS];
	Oid			typinput[INDEX_MAX_KEYS];
	Oid			typioparam[INDEX_MAX_KEYS];
	Oid			collation[INDEX_MAX_KEYS];	/* the SQL query's, if not the key's */
	bool		any_sql;
	/* of the function called, whatever the call: kept across rebuilds */
	bool		text_keys_known;
	bool		text_keys;		/* the VARIADIC text[] variant (1.2) */
	char		fname[NAMEDATALEN];
} BgCallCache;

extern BgArgConv bg_classify_arg(Oid argtype, const BgKeyColumn *col);
extern BgKeyResult bg_convert_arg(BgArgConv conv, Oid argtype, const BgKeyColumn *col,
								  Datum arg, Oid typinput, Oid typioparam,
								  Datum *value);
extern BgKeyResult bg_call_key(FunctionCallInfo fcinfo, Relation rel,
							   const BgKeyDesc *desc, BgCallCache **cachep,
							   Datum *args, Datum *values);
extern void bg_call_sql_params(const BgCallCache *cache, const BgKeyDesc *desc,
							   const Datum *args, Datum *params, Oid *types,
							   Oid *collations);

/* tablelookup.c */
extern bool bg_index_probe(Relation rel, const BgKeyDesc *desc, const Datum *values);
extern bool bg_sql_lookup(Relation rel, const BgKeyDesc *desc, const Datum *params,
						  const Oid *types, const Oid *collations, bool typed);

/* trust.c */
extern void bg_trust_init(void);
extern bool bg_trust_enabled(void);
extern bool bg_trust_transparent(void);
extern bool bg_rls_applies(Relation rel, bool noError);
extern bool bg_filter_trusted(Relation rel, const BgKeyInfo *info, Snapshot snap,
							  BgSlotExpect *expect, bool *children);
extern bool bg_trust_scan(Relation rel, const BgKeyInfo *info, Snapshot snap,
						  BgSlotExpect *expect);
extern BgAnswer bg_trust_ask(Relation rel, BgKeyInfo *info, const BgSlotExpect *expect,
							 const Datum *values, bool nomatch, int *slotindex);

/* lookup.c */
extern void bg_lookup_init(void);

/* guardscan.c */
extern const struct CustomScanMethods bg_guard_scan_methods;
extern void bg_guard_scan_register(void);

/* planner.c */
extern void bg_planner_init(void);

/* citus.c */
extern void bg_citus_attach(Relation rel, bool sized);
extern void bg_citus_rebuild(Relation rel, bool sized);
extern void bg_citus_upkeep(void);
extern Oid	bg_citus_shell_of(Oid relid);
extern Oid	bg_citus_guarded_root(Oid shell);

/* citusask.c */
extern BgAnswer bg_citus_check(Relation rel, const BgKeyDesc *desc, const Datum *values);

/* maintain.c */
extern void bg_maintain_init(void);
extern void bg_maintain_database(void);

/* worker.c */
struct BackgroundWorkerHandle;
extern bool bg_start_worker(const char *function, const char *type, const char *name,
							Datum arg, struct BackgroundWorkerHandle **handle);
extern void bg_create_feed(Oid relid, Oid owner, int64 capacity, double error_rate);
extern void bg_install_feed(Oid relid, int64 capacity, double error_rate,
							volatile bool *committed);

/* launcher.c */
extern void bg_launcher_init(void);
extern void bg_launcher_register(void);

/* attach.c */

#endif							/* BLOOMGUARD_H */
