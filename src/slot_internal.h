/*-------------------------------------------------------------------------
 *
 * slot_internal.h
 *	  A guard's slot in shared memory: its fields, private to shmem.c and
 *	  slot.c.
 *
 * Only shmem.c (which keeps the slot table and claims and frees slots) and
 * slot.c (which does everything else to one slot) include this header, so
 * the compiler enforces who may touch a slot's fields.  Every other file
 * uses slot.c's operations (bloomguard.h), which take the slot's lock as
 * shmem.c's header says.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMGUARD_SLOT_INTERNAL_H
#define BLOOMGUARD_SLOT_INTERNAL_H

#include "port/atomics.h"

#include "bloomguard.h"

/*
 * One guard in shared memory, under the locking rules in shmem.c's header.
 */
typedef struct BgSlot
{
	LWLock		lock;
	Oid			dbid;
	Oid			relid;
	uint64		incarnation;	/* changes whenever the slot is (re)claimed */
	BgState		state;
	BgKeyIdentity key;
	BgFilterPtr serving;		/* complete filter readers may use */
	BgFilterPtr building;		/* filter being built; the trigger feeds it too */
	Size		serving_bytes;
	Size		building_bytes;
	uint64		generation;		/* of the serving filter */
	TimestampTz built_at;
	double		build_seconds;
	Oid			relfilenode;	/* the table's, as the serving filter knows it */
	bool		relfilenode_verified;	/* checked against the catalogs */
	bool		permanent;		/* the table is not unlogged */
	BgSource	source;			/* where the serving filter came from */
	TimestampTz source_at;		/* when it was built or loaded */
	int			build_workers;	/* parallel workers of the serving build */
	int			builder_pid;
	bool		coverage_broken;	/* untrusted while a build was running */
	TransactionId forget_xid;	/* free the slot once this xid has committed */
	TransactionId claim_xid;	/* claimed by an attach in this transaction,
								 * which may still abort (pending.c) */
	TransactionId feed_version; /* the feed function's pg_proc row (xmin) when built */
	TransactionId trigger_version;	/* the feed trigger's pg_trigger row (xmin) then */
	char		last_error[BG_ERROR_LEN];	/* why the last build failed, if it did */
	pg_atomic_uint64 counters[BG_NUM_COUNTERS];	/* updated without a lock */
	TimestampTz stats_reset;
} BgSlot;

/* shmem.c: finding and locking a slot, describing its filter */
extern BgSlot *bg_slot(int index);
extern BgSlot *bg_slot_lock_in(BgSlotRef *ref, Oid dbid, Oid relid, LWLockMode mode);
extern BgSlot *bg_slot_lock(BgSlotRef *ref, Oid relid, LWLockMode mode);
extern void bg_slot_describe(BgSlot *slot, const BgSavedGuard *g);

#endif							/* BLOOMGUARD_SLOT_INTERNAL_H */
