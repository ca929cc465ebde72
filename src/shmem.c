/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  bloomguard's shared state: the guard slots and the filter memory.
 *
 * Every guard has a slot in a fixed array in the main shared memory
 * segment, sized by bloomguard.max_guards.  Filters live in the filter
 * pool, also in the main segment, after the slots: bloomguard.max_memory
 * plus room for rounding and fragmentation, reserved at postmaster start.
 * A filter is addressed by its offset in the pool (BgFilterPtr), which
 * every process, the postmaster included, can turn into an address
 * without attaching anything: the postmaster itself can load saved
 * filters at startup and save them at shutdown, when no backend runs.
 * The pool is carved by pool.c's first-fit allocator (64-byte chunks, a
 * cache line), under BgShared->lock.  The filters' total size is capped
 * by bloomguard.max_memory (and each one's by bloomguard.max_guard_memory),
 * checked by our own accounting (memory_in_use) before anything is
 * allocated (bg_memory_cap_check(), the one place the caps are tested).
 *
 * Why this is one file of some 990 lines: the slot table and the filter
 * memory are one piece of state under one lock.  Claiming a slot,
 * restoring a saved one, freeing a slot or all of a database's, and
 * allocating or freeing a filter each change the slot table,
 * memory_in_use and the pool's free list together, under one hold of
 * BgShared->lock; a second file would need BgShared itself, and the lock
 * order below would be split across two files.  What takes no part in it
 * is elsewhere: the free list's algorithm (pool.c) and everything done to
 * one slot under its own lock (slot.c).
 *
 * A slot's fields (slot_internal.h) are private to this file and slot.c,
 * under the locking rules below.  Everyone else goes through slot.c:
 * bg_slot_ask() for a lookup, bg_slot_feed_batch() for a flush,
 * bg_slot_copy() for a consistent copy of a slot's numbers (the way
 * pg_stat_statements copies an entry), bg_slot_publish(), _swap() and
 * _abandon() for a build's generations.
 *
 * Locking:
 *
 * - BgShared->lock (an LWLock from the named tranche "bloomguard") protects
 *   the slot table: claiming and freeing slots (dbid, relid, incarnation,
 *   state FREE), memory_in_use, next_incarnation, and the pool's free
 *   list.  Lookups of a slot by (database, table) take it in shared mode.
 *
 * - BgSlot->lock protects everything else in a slot: state, key identity,
 *   the serving and building filter pointers and their metadata,
 *   forget_xid, claim_xid and last_error.  Readers and the trigger hold it in shared
 *   mode for as long as they use a filter, so a filter can only be freed
 *   by someone holding it exclusively: a reader can never see freed
 *   memory.  Swaps, state changes and frees take it exclusively, briefly.
 *
 * - BgShared->lock also protects the lists of databases whose guards want
 *   the background worker (visit_requests, see bg_visit_request(), and
 *   visit_always, see bg_visit_always()).
 *
 * - The lock order is BgShared->lock, then a slot's lock.
 *
 * - The filter bits, n_added and bits_set are atomics (filter.c); the
 *   traffic counters in the slot are atomics too and need no lock.
 *
 * - epoch is bumped whenever a slot is claimed or freed, so a backend that
 *   found no slot for a table can skip the search until something changes.
 *
 * After a crash the postmaster reinitializes shared memory and calls our
 * startup hook again: every slot starts FREE, i.e. every guard falls back
 * to plain lookups until it is rebuilt.  At a first start, persist.c may
 * fill slots with the filters saved at the last clean shutdown, before any
 * other process exists (bg_slot_restore()).
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "slot_internal.h"

typedef struct BgShared
{
	LWLock	   *lock;
	int			tranche_id;
	Size		memory_in_use;
	uint64		next_incarnation;
	pg_atomic_uint64 epoch;
	pg_atomic_uint32 forgets_pending;	/* slots with a forget_xid */
	BgPool		pool;			/* the filter pool's free list (pool.c) */
	int			nvisit_requests;
	Oid			visit_requests[BG_MAX_VISIT_REQUESTS];	/* databases */
	int			nvisit_always;
	Oid			visit_always[BG_MAX_VISIT_REQUESTS];	/* databases */
	int			nslots;
	BgSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} BgShared;

static BgShared *bg_shared = NULL;
static char *bg_pool = NULL;

/* settings (bg_shmem_init() defines them) */
#define BG_MAX_MEMORY_DEFAULT		128		/* MB */
#define BG_MAX_MEMORY_MIN			1
#define BG_MAX_MEMORY_MAX			(INT_MAX / 2)
#define BG_MAX_GUARD_MEMORY_DEFAULT	0		/* MB; 0: only max_memory applies */
#define BG_MAX_GUARD_MEMORY_MIN		0
#define BG_MAX_GUARD_MEMORY_MAX		(INT_MAX / 2)
#define BG_MAX_GUARDS_DEFAULT		256
#define BG_MAX_GUARDS_MIN			1
#define BG_MAX_GUARDS_MAX			100000
static int	bg_max_memory_mb = BG_MAX_MEMORY_DEFAULT;
static int	bg_max_guard_memory_mb = BG_MAX_GUARD_MEMORY_DEFAULT;
static int	bg_max_guards = BG_MAX_GUARDS_DEFAULT;

/* Which memory cap a new filter would exceed (bg_memory_cap_check()). */
typedef enum BgCapCheck
{
	BG_CAP_FITS,
	BG_CAP_GUARD,				/* bloomguard.max_guard_memory */
	BG_CAP_TOTAL				/* bloomguard.max_memory */
} BgCapCheck;

static BgCapCheck bg_memory_cap_check(Size bytes, Size in_use);
static void bg_pool_free_locked(BgFilterPtr p, Size bytes);

/* Size of the slot table. */
static Size
bg_shmem_size(void)
{
	return add_size(offsetof(BgShared, slots),
					mul_size(bg_max_guards, sizeof(BgSlot)));
}

/*
 * Size of the filter pool: bloomguard.max_memory, one eighth more for
 * fragmentation (both generations of a resized filter live at once, and
 * freed chunks coalesce only with their neighbours), and the rounding of
 * two filters per guard.  Offset 0 is never handed out.
 */
static Size
bg_pool_size(void)
{
	Size		cap = (Size) bg_max_memory_mb * 1024 * 1024;

	return add_size(add_size(cap, cap / 8),
					mul_size(2 * bg_max_guards + 1, BG_POOL_ALIGN));
}

/* Ask for our space and our lock (module.c's shmem_request_hook). */
void
bg_shmem_request(void)
{
	RequestAddinShmemSpace(bg_shmem_size());
	RequestAddinShmemSpace(add_size(bg_pool_size(), BG_POOL_ALIGN));
	RequestNamedLWLockTranche("bloomguard", 1);
}

/*
 * Create or attach to the slot table and the pool (module.c's
 * shmem_startup_hook, first of ours).
 */
void
bg_shmem_startup(void)
{
	bool		found;
	bool		found_pool;
	char	   *pool_space;

	/* reset in case this is a restart within the postmaster */
	bg_shared = NULL;
	bg_pool = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

	bg_shared = ShmemInitStruct("bloomguard", bg_shmem_size(), &found);
	pool_space = ShmemInitStruct("bloomguard filters",
								 add_size(bg_pool_size(), BG_POOL_ALIGN), &found_pool);
	bg_pool = (char *) TYPEALIGN(BG_POOL_ALIGN, pool_space);
	if (!found)
	{
		int			i;
		int			c;

		bg_shared->lock = &(GetNamedLWLockTranche("bloomguard"))->lock;
		bg_shared->tranche_id = LWLockNewTrancheId();
		bg_shared->memory_in_use = 0;
		bg_shared->next_incarnation = 1;
		pg_atomic_init_u64(&bg_shared->epoch, 1);
		pg_atomic_init_u32(&bg_shared->forgets_pending, 0);
		bg_shared->nvisit_requests = 0;
		bg_shared->nvisit_always = 0;
		bg_shared->nslots = bg_max_guards;
		for (i = 0; i < bg_max_guards; i++)
		{
			BgSlot	   *slot = &bg_shared->slots[i];

			memset(slot, 0, sizeof(BgSlot));
			LWLockInitialize(&slot->lock, bg_shared->tranche_id);
			slot->state = BG_STATE_FREE;
			slot->serving = InvalidBgFilterPtr;
			slot->building = InvalidBgFilterPtr;
			slot->forget_xid = InvalidTransactionId;
			for (c = 0; c < BG_NUM_COUNTERS; c++)
				pg_atomic_init_u64(&slot->counters[c], 0);
		}

		/* one free chunk: the whole pool but its first line */
		bg_pool_init(&bg_shared->pool, bg_pool, bg_pool_size());
	}
	LWLockRelease(AddinShmemInitLock);

	LWLockRegisterTranche(bg_shared->tranche_id, "bloomguard");
}

/*
 * Define the settings that size shared memory and cap the filters; called
 * from _PG_init while preloading (they exist only then).
 */
void
bg_shmem_init(void)
{
	DefineCustomIntVariable("bloomguard.max_memory",
							"Shared memory all filters together may use.",
							"An attach or rebuild that would exceed it fails and changes nothing.",
							&bg_max_memory_mb,
							BG_MAX_MEMORY_DEFAULT,
							BG_MAX_MEMORY_MIN,
							BG_MAX_MEMORY_MAX,
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("bloomguard.max_guard_memory",
							"Shared memory one guard's filter may use.",
							"An attach, rebuild or automatic resize that would need a larger filter "
							"fails and changes nothing. Zero leaves only bloomguard.max_memory.",
							&bg_max_guard_memory_mb,
							BG_MAX_GUARD_MEMORY_DEFAULT,
							BG_MAX_GUARD_MEMORY_MIN,
							BG_MAX_GUARD_MEMORY_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("bloomguard.max_guards",
							"Maximum number of guarded tables in the cluster.",
							NULL,
							&bg_max_guards,
							BG_MAX_GUARDS_DEFAULT,
							BG_MAX_GUARDS_MIN,
							BG_MAX_GUARDS_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/* Error out unless the library was preloaded. */
void
bg_require_loaded(void)
{
	if (bg_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomguard must be loaded via shared_preload_libraries"),
				 errhint("Add bloomguard to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/* Was the library preloaded (is our shared memory there)? */
bool
bg_loaded(void)
{
	return bg_shared != NULL;
}

/* The slot at index, for slot.c (slot_internal.h). */
BgSlot *
bg_slot(int index)
{
	Assert(index >= 0 && index < bg_shared->nslots);
	return &bg_shared->slots[index];
}

/* Number of slots (bloomguard.max_guards), 0 if not preloaded. */
int
bg_slot_count(void)
{
	return bg_shared ? bg_shared->nslots : 0;
}

/* Search the slot table; caller holds BgShared->lock. */
static int
bg_slot_search(Oid dbid, Oid relid)
{
	int			i;

	for (i = 0; i < bg_shared->nslots; i++)
	{
		BgSlot	   *slot = &bg_shared->slots[i];

		if (slot->state != BG_STATE_FREE &&
			slot->dbid == dbid && slot->relid == relid)
			return i;
	}
	return -1;
}

/* Look up the slot of a table of database dbid; fills *ref. */
static bool
bg_slot_find_in(Oid dbid, Oid relid, BgSlotRef *ref)
{
	int			index;

	bg_require_loaded();
	LWLockAcquire(bg_shared->lock, LW_SHARED);
	ref->epoch = pg_atomic_read_u64(&bg_shared->epoch);
	index = bg_slot_search(dbid, relid);
	ref->index = index;
	ref->incarnation = index >= 0 ? bg_shared->slots[index].incarnation : 0;
	LWLockRelease(bg_shared->lock);
	return index >= 0;
}

/* Look up the slot of a table in this database; fills *ref. */
bool
bg_slot_find(Oid relid, BgSlotRef *ref)
{
	return bg_slot_find_in(MyDatabaseId, relid, ref);
}

/*
 * Return the slot of a table of database dbid locked in the given mode, or
 * NULL if the table has none.  *ref caches the search between calls.
 */
BgSlot *
bg_slot_lock_in(BgSlotRef *ref, Oid dbid, Oid relid, LWLockMode mode)
{
	for (;;)
	{
		if (ref->index >= 0)
		{
			BgSlot	   *slot = &bg_shared->slots[ref->index];

			LWLockAcquire(&slot->lock, mode);
			if (slot->incarnation == ref->incarnation &&
				slot->state != BG_STATE_FREE &&
				slot->relid == relid && slot->dbid == dbid)
				return slot;
			LWLockRelease(&slot->lock);
		}
		else
		{
			/*
			 * Nothing has been claimed or freed since we last looked, so
			 * there is still no slot.  The barrier orders this read after
			 * the caller's earlier writes (for a flush: the heap inserts of
			 * its rows; for redo: the replay of their records), which is
			 * what the build protocol relies on.
			 */
			pg_memory_barrier();
			if (ref->epoch == pg_atomic_read_u64(&bg_shared->epoch))
				return NULL;
		}
		/* look again; if the slot we find changes before we lock it, loop */
		if (!bg_slot_find_in(dbid, relid, ref))
			return NULL;
	}
}

/* bg_slot_lock_in() for a table of this database. */
BgSlot *
bg_slot_lock(BgSlotRef *ref, Oid relid, LWLockMode mode)
{
	return bg_slot_lock_in(ref, MyDatabaseId, relid, mode);
}

/* Zero a slot's traffic counters (not n_added: that is filter state). */
static void
bg_slot_zero_counters(BgSlot *slot)
{
	int			c;

	for (c = 0; c < BG_NUM_COUNTERS; c++)
		pg_atomic_write_u64(&slot->counters[c], 0);
	slot->stats_reset = GetCurrentTimestamp();
}

/* Zero the traffic counters of the slot at index, if it still guards relid. */
void
bg_slot_reset_counters(int index, Oid relid)
{
	BgSlot	   *slot = &bg_shared->slots[index];

	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	if (slot->state != BG_STATE_FREE && slot->dbid == MyDatabaseId &&
		slot->relid == relid)
		bg_slot_zero_counters(slot);
	LWLockRelease(&slot->lock);
}

/*
 * Give a slot just claimed for table relid of database dbid its first
 * values: a new incarnation, the state given, no filter, the claiming
 * transaction (InvalidTransactionId: none that may abort).  Caller holds
 * BgShared->lock and the slot's lock exclusively.
 */
static void
bg_slot_fill(BgSlot *slot, Oid dbid, Oid relid, const BgKeyIdentity *key,
			 BgState state, TransactionId claim_xid)
{
	slot->dbid = dbid;
	slot->relid = relid;
	slot->incarnation = bg_shared->next_incarnation++;
	slot->state = state;
	slot->key = *key;
	slot->serving = InvalidBgFilterPtr;
	slot->building = InvalidBgFilterPtr;
	slot->serving_bytes = 0;
	slot->building_bytes = 0;
	slot->generation = 0;
	slot->built_at = 0;
	slot->build_seconds = 0;
	slot->build_workers = 0;
	slot->relfilenode = InvalidOid;
	slot->relfilenode_verified = false;
	slot->permanent = false;
	slot->source = BG_SOURCE_NONE;
	slot->source_at = 0;
	slot->builder_pid = 0;
	slot->coverage_broken = false;
	slot->forget_xid = InvalidTransactionId;
	slot->claim_xid = claim_xid;
	slot->last_error[0] = '\0';
	bg_slot_zero_counters(slot);
}

/*
 * Claim a slot for a table in this database, in the given state.  Fails
 * if the table already has one or all slots are in use.  Returns its index.
 *
 * claim_xid is the transaction of an attach that runs in the caller's
 * transaction (attach.c): the table, its trigger and its registry row may
 * be that transaction's, invisible to everyone else until it commits, and
 * gone if it aborts.  pending.c frees the slot if it aborts, and calls
 * bg_slot_claim_end() when it commits; meanwhile the worker's sweep of
 * slots whose table is gone (maintain.c) leaves it alone.  Otherwise
 * InvalidTransactionId.
 */
int
bg_slot_claim(Oid relid, const BgKeyIdentity *key, BgState state,
			  TransactionId claim_xid)
{
	int			i;
	int			index = -1;
	BgSlot	   *slot;

	bg_require_loaded();
	bg_slot_sweep();
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	if (bg_slot_search(MyDatabaseId, relid) >= 0)
	{
		LWLockRelease(bg_shared->lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("a filter for table \"%s\" is already loaded",
						get_rel_name(relid))));
	}
	for (i = 0; i < bg_shared->nslots; i++)
	{
		if (bg_shared->slots[i].state == BG_STATE_FREE)
		{
			index = i;
			break;
		}
	}
	if (index < 0)
	{
		LWLockRelease(bg_shared->lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many bloomguard guards"),
				 errdetail("All %d guard slots are in use.", bg_max_guards),
				 errhint("Increase bloomguard.max_guards, or detach guards that are no longer needed.")));
	}

	slot = &bg_shared->slots[index];
	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	bg_slot_fill(slot, MyDatabaseId, relid, key, state, claim_xid);
	LWLockRelease(&slot->lock);
	pg_atomic_fetch_add_u64(&bg_shared->epoch, 1);
	LWLockRelease(bg_shared->lock);
	return index;
}

/*
 * The transaction that claimed relid's slot with a claim_xid has
 * committed: the slot is an ordinary guard's from now on.
 */
void
bg_slot_claim_end(Oid relid)
{
	BgSlotRef	ref = BG_SLOT_REF_INIT;
	BgSlot	   *slot = bg_slot_lock(&ref, relid, LW_EXCLUSIVE);

	if (slot == NULL)
		return;
	slot->claim_xid = InvalidTransactionId;
	LWLockRelease(&slot->lock);
}

/*
 * Describe the slot's serving filter as g does: its key, the feed function's
 * and trigger's versions, its table's relfilenode, when and how it was
 * built (not its generation number).  Caller holds the slot lock
 * exclusively, or no other process runs.
 */
void
bg_slot_describe(BgSlot *slot, const BgSavedGuard *g)
{
	slot->key = g->key;
	slot->feed_version = g->feed_version;
	slot->trigger_version = g->trigger_version;
	slot->relfilenode = g->relfilenode;
	slot->built_at = g->built_at;
	slot->build_seconds = g->build_seconds;
	slot->build_workers = g->build_workers;
}

/*
 * Claim a slot for a guard whose filter was saved at the last clean
 * shutdown, and allocate bytes for the filter, which the caller then
 * reads in.  For persist.c, in the postmaster's shared memory startup,
 * before any other process exists (so no lock is ever contended here).
 * The guard is ready; its relfilenode is checked against the catalogs at
 * the first lookup or flush (slot.c).  Returns NULL, changing nothing, if
 * the guard already has a slot, or no slot or memory is free.
 */
BloomFilter *
bg_slot_restore(const BgSavedGuard *g, Size bytes)
{
	BgFilterPtr p = InvalidBgFilterPtr;
	BgSlot	   *slot = NULL;
	int			i;

	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	if (bg_slot_search(g->dbid, g->relid) < 0 &&
		bg_memory_cap_check(bytes, bg_shared->memory_in_use) == BG_CAP_FITS)
	{
		for (i = 0; i < bg_shared->nslots && slot == NULL; i++)
		{
			if (bg_shared->slots[i].state == BG_STATE_FREE)
				slot = &bg_shared->slots[i];
		}
		if (slot != NULL)
			p = bg_pool_take(&bg_shared->pool, bg_pool, BG_POOL_ROUND(bytes), false);
	}
	if (!BgFilterPtrIsValid(p))
	{
		LWLockRelease(bg_shared->lock);
		return NULL;
	}
	bg_shared->memory_in_use += bytes;

	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	bg_slot_fill(slot, g->dbid, g->relid, &g->key, BG_STATE_READY,
				 InvalidTransactionId);
	slot->serving = p;
	slot->serving_bytes = bytes;
	slot->generation = g->generation;
	bg_slot_describe(slot, g);
	slot->permanent = true;
	slot->source = BG_SOURCE_LOADED;
	slot->source_at = GetCurrentTimestamp();
	LWLockRelease(&slot->lock);
	pg_atomic_fetch_add_u64(&bg_shared->epoch, 1);
	LWLockRelease(bg_shared->lock);
	return bg_filter_addr(p);
}

/* Give back what bg_slot_restore() took, if the filter could not be read. */
void
bg_slot_restore_abandon(const BgSavedGuard *g)
{
	bg_slot_release(g->dbid, g->relid);
}

/*
 * Free a table's slot and its filters, if it has one.  Its traffic
 * counters go to the server log at DEBUG1, since they go with it (the
 * figures of test/core-regress.sh's runs come from there).
 */
void
bg_slot_release(Oid dbid, Oid relid)
{
	int			index;
	uint64		counters[BG_NUM_COUNTERS];

	if (bg_shared == NULL)
		return;
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	index = bg_slot_search(dbid, relid);
	if (index >= 0)
	{
		BgSlot	   *slot = &bg_shared->slots[index];
		int			c;

		/* nobody can reach these after: the slot lock fences out readers */
		LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
		for (c = 0; c < BG_NUM_COUNTERS; c++)
			counters[c] = pg_atomic_read_u64(&slot->counters[c]);
		bg_pool_free_locked(slot->serving, slot->serving_bytes);
		bg_pool_free_locked(slot->building, slot->building_bytes);
		slot->serving = InvalidBgFilterPtr;
		slot->building = InvalidBgFilterPtr;
		slot->serving_bytes = slot->building_bytes = 0;
		slot->source = BG_SOURCE_NONE;
		slot->state = BG_STATE_FREE;
		if (TransactionIdIsValid(slot->forget_xid))
			pg_atomic_fetch_sub_u32(&bg_shared->forgets_pending, 1);
		slot->forget_xid = InvalidTransactionId;
		slot->claim_xid = InvalidTransactionId;
		slot->incarnation = bg_shared->next_incarnation++;
		LWLockRelease(&slot->lock);
		pg_atomic_fetch_add_u64(&bg_shared->epoch, 1);
	}
	LWLockRelease(bg_shared->lock);
	if (index >= 0)
		ereport(DEBUG1,
				(errmsg_internal("bloomguard: freed the guard of relation %u in database %u: "
								 UINT64_FORMAT " checks, " UINT64_FORMAT " shortcuts, "
								 UINT64_FORMAT " source lookups, " UINT64_FORMAT " fallbacks",
								 relid, dbid,
								 counters[BG_COUNT_SHORTCUT] + counters[BG_COUNT_SOURCE_LOOKUP] +
								 counters[BG_COUNT_FALLBACK],
								 counters[BG_COUNT_SHORTCUT], counters[BG_COUNT_SOURCE_LOOKUP],
								 counters[BG_COUNT_FALLBACK])));
}

/* The table of the slot at index if it belongs to dbid, else InvalidOid. */
static Oid
bg_slot_relid(int index, Oid dbid)
{
	BgSlot	   *slot = &bg_shared->slots[index];
	Oid			relid = InvalidOid;

	LWLockAcquire(&slot->lock, LW_SHARED);
	if (slot->state != BG_STATE_FREE && slot->dbid == dbid)
		relid = slot->relid;
	LWLockRelease(&slot->lock);
	return relid;
}

/*
 * Free every slot of a database (DROP EXTENSION, DROP DATABASE), and stop
 * visiting it at every pass.
 */
void
bg_slot_release_database(Oid dbid)
{
	int			i;

	for (i = 0; i < bg_shared->nslots; i++)
	{
		Oid			relid = bg_slot_relid(i, dbid);

		if (OidIsValid(relid))
			bg_slot_release(dbid, relid);
	}
	bg_visit_always(dbid, false);
}

/*
 * Ask the launcher to send its worker to this database at its next pass:
 * a lookup met a table whose feed trigger is in place but which has no
 * slot (a database restored or copied from a template, whose registry
 * rows came without slots, or an orphan trigger).  Once per backend until
 * the slot table changes, so a stream of lookups costs one request.
 */
void
bg_visit_request(void)
{
	static uint64 requested_epoch = 0;
	uint64		epoch;
	int			i;

	if (bg_shared == NULL || !OidIsValid(MyDatabaseId))
		return;
	epoch = pg_atomic_read_u64(&bg_shared->epoch);
	if (epoch == requested_epoch)
		return;
	requested_epoch = epoch;
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < bg_shared->nvisit_requests; i++)
		if (bg_shared->visit_requests[i] == MyDatabaseId)
			break;
	if (i == bg_shared->nvisit_requests && i < BG_MAX_VISIT_REQUESTS)
		bg_shared->visit_requests[bg_shared->nvisit_requests++] = MyDatabaseId;
	LWLockRelease(bg_shared->lock);
}

/*
 * Where dbid is in the list of databases visited always, or -1.  The
 * caller holds BgShared->lock.
 */
static int
bg_visit_always_index(Oid dbid)
{
	int			i;

	for (i = 0; i < bg_shared->nvisit_always; i++)
		if (bg_shared->visit_always[i] == dbid)
			return i;
	return -1;
}

/*
 * Have the launcher send its worker to database dbid at every pass (on),
 * or no longer (off: a pass found no Citus there, or the database is
 * dropped), whether or not its guards have slots: a database
 * with Citus, where Citus makes the shard placements whose guards the
 * worker registers (citus.c), and no backend of ours may see their
 * triggers committed (Citus commits them with COMMIT PREPARED, in another
 * session).  Cheap when nothing changes.
 */
void
bg_visit_always(Oid dbid, bool on)
{
	int			i;
	bool		found;

	if (bg_shared == NULL || !OidIsValid(dbid))
		return;
	LWLockAcquire(bg_shared->lock, LW_SHARED);
	found = bg_visit_always_index(dbid) >= 0;
	LWLockRelease(bg_shared->lock);
	if (found == on)
		return;
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	i = bg_visit_always_index(dbid);
	found = i >= 0;
	if (!found)
		i = bg_shared->nvisit_always;
	if (on && !found && i < BG_MAX_VISIT_REQUESTS)
		bg_shared->visit_always[bg_shared->nvisit_always++] = dbid;
	else if (!on && found)
		bg_shared->visit_always[i] = bg_shared->visit_always[--bg_shared->nvisit_always];
	LWLockRelease(bg_shared->lock);
	if (on && !found && i >= BG_MAX_VISIT_REQUESTS)
		ereport(LOG,
				(errmsg("bloomguard: more than %d databases with Citus; database %u is visited only while its guards have filters",
						BG_MAX_VISIT_REQUESTS, dbid)));
}

/*
 * Does database dbid want the launcher's worker: it has a guard's slot, a
 * lookup asked for a visit, or it is to be visited always?  With take, a
 * lookup's request is consumed.
 */
bool
bg_visit_wanted(Oid dbid, bool take)
{
	bool		wanted = false;
	int			i;

	LWLockAcquire(bg_shared->lock, take ? LW_EXCLUSIVE : LW_SHARED);
	for (i = 0; i < bg_shared->nvisit_requests; i++)
	{
		if (bg_shared->visit_requests[i] != dbid)
			continue;
		wanted = true;
		if (take)
			bg_shared->visit_requests[i] =
				bg_shared->visit_requests[--bg_shared->nvisit_requests];
		break;
	}
	for (i = 0; i < bg_shared->nvisit_always && !wanted; i++)
		wanted = bg_shared->visit_always[i] == dbid;
	for (i = 0; i < bg_shared->nslots && !wanted; i++)
	{
		BgSlot	   *slot = &bg_shared->slots[i];

		/* claiming and freeing take BgShared->lock: state and dbid hold */
		if (slot->state != BG_STATE_FREE && slot->dbid == dbid)
			wanted = true;
	}
	LWLockRelease(bg_shared->lock);
	return wanted;
}

/*
 * Free a guard's slot once xid commits: the prepared transaction xid
 * drops or detaches it, and nothing of ours runs at COMMIT PREPARED.
 * relid InvalidOid: every guard of the database (DROP EXTENSION).
 * bg_slot_sweep() does the freeing, or forgets the mark if xid aborts.
 */
void
bg_slot_forget_when_committed(Oid dbid, Oid relid, TransactionId xid)
{
	int			i;

	for (i = 0; i < bg_shared->nslots; i++)
	{
		BgSlot	   *slot = &bg_shared->slots[i];

		LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
		if (slot->state != BG_STATE_FREE && slot->dbid == dbid &&
			(!OidIsValid(relid) || slot->relid == relid) &&
			!TransactionIdIsValid(slot->forget_xid))
		{
			slot->forget_xid = xid;
			pg_atomic_fetch_add_u32(&bg_shared->forgets_pending, 1);
		}
		LWLockRelease(&slot->lock);
	}
}

/*
 * Carry out the frees that prepared transactions left behind: free the
 * slots whose forget_xid committed, and clear the mark where it aborted.
 * Cheap when there are none.
 */
void
bg_slot_sweep(void)
{
	int			i;

	if (bg_shared == NULL || pg_atomic_read_u32(&bg_shared->forgets_pending) == 0)
		return;
	for (i = 0; i < bg_shared->nslots; i++)
	{
		BgSlot	   *slot = &bg_shared->slots[i];
		TransactionId xid;
		Oid			dbid;
		Oid			relid;

		LWLockAcquire(&slot->lock, LW_SHARED);
		xid = slot->state != BG_STATE_FREE ? slot->forget_xid : InvalidTransactionId;
		dbid = slot->dbid;
		relid = slot->relid;
		LWLockRelease(&slot->lock);
		if (!TransactionIdIsValid(xid) || TransactionIdIsInProgress(xid))
			continue;
		if (TransactionIdDidCommit(xid))
			bg_slot_release(dbid, relid);
		else
		{
			LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
			if (slot->forget_xid == xid)
			{
				slot->forget_xid = InvalidTransactionId;
				pg_atomic_fetch_sub_u32(&bg_shared->forgets_pending, 1);
			}
			LWLockRelease(&slot->lock);
		}
	}
}

/* bloomguard.max_memory in bytes. */
Size
bg_memory_cap(void)
{
	return (Size) bg_max_memory_mb * 1024 * 1024;
}

/* bloomguard.max_guard_memory in bytes; 0 when unset. */
static Size
bg_guard_memory_cap(void)
{
	return (Size) bg_max_guard_memory_mb * 1024 * 1024;
}

/*
 * The memory caps' test, the one place it is written: would a filter of
 * bytes fit next to in_use bytes of filters?
 */
static BgCapCheck
bg_memory_cap_check(Size bytes, Size in_use)
{
	Size		cap = bg_memory_cap();
	Size		guard_cap = bg_guard_memory_cap();

	if (guard_cap > 0 && bytes > guard_cap)
		return BG_CAP_GUARD;
	if (bytes > cap || in_use > cap - bytes)
		return BG_CAP_TOTAL;
	return BG_CAP_FITS;
}

/*
 * Give a chunk of bytes back to the pool (pool.c) and uncount them.
 * Caller holds BgShared->lock exclusively.
 */
static void
bg_pool_free_locked(BgFilterPtr p, Size bytes)
{
	if (!BgFilterPtrIsValid(p))
		return;
	Assert(bg_shared->memory_in_use >= bytes);
	bg_shared->memory_in_use -= bytes;
	bg_pool_give(&bg_shared->pool, bg_pool, p, BG_POOL_ROUND(bytes));
}

/*
 * Allocate a filter of bytes for a guard of relid, counting it against
 * bloomguard.max_memory and the per-guard cap, or fail with the user's
 * error without changing anything.  The memory is not zeroed.
 *
 * away_from is the guard's serving filter, if it has one: the new
 * generation is placed at the other end of the pool (from the top if the
 * old one lies in the lower half), so that when the old one is freed the
 * free space stays in one piece.  A guard that is resized again and again
 * near the memory cap then always finds room, where first fit leaves the
 * live filter in the middle of two holes too small for the next one.
 */
BgFilterPtr
bg_filter_alloc(Size bytes, Oid relid, BgFilterPtr away_from)
{
	Size		size = BG_POOL_ROUND(bytes);
	Size		in_use;
	BgFilterPtr result;

	bg_require_loaded();
	if (bg_memory_cap_check(bytes, 0) == BG_CAP_GUARD)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("filter for table \"%s\" would exceed bloomguard.max_guard_memory",
						get_rel_name(relid)),
				 errdetail("The filter needs %zu bytes; one guard's filter may have at most %zu bytes.",
						   bytes, bg_guard_memory_cap()),
				 errhint("Choose a smaller capacity or a larger error rate, or ask the administrator to raise bloomguard.max_guard_memory.")));
	bg_slot_sweep();
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	in_use = bg_shared->memory_in_use;
	if (bg_memory_cap_check(bytes, in_use) != BG_CAP_FITS)
	{
		LWLockRelease(bg_shared->lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("filter for table \"%s\" would exceed bloomguard.max_memory",
						get_rel_name(relid)),
				 errdetail("The filter needs %zu bytes; %zu of %zu bytes are in use.",
						   bytes, in_use, bg_memory_cap()),
				 errhint("Increase bloomguard.max_memory, or choose a smaller capacity or a larger error rate.")));
	}
	result = bg_pool_take(&bg_shared->pool, bg_pool, size,
						  BgFilterPtrIsValid(away_from) &&
						  away_from < bg_shared->pool.size / 2);
	if (BgFilterPtrIsValid(result))
		bg_shared->memory_in_use += bytes;
	LWLockRelease(bg_shared->lock);
	if (!BgFilterPtrIsValid(result))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("no room in shared memory for the filter of table \"%s\"",
						get_rel_name(relid)),
				 errdetail("The filter needs %zu bytes; %zu bytes are in use, but the free space is split into smaller pieces.",
						   bytes, in_use),
				 errhint("Rebuild or detach other guards, or increase bloomguard.max_memory.")));
	return result;
}

/* Give back a filter bg_filter_alloc() allocated (bytes as allocated). */
void
bg_filter_free(BgFilterPtr p, Size bytes)
{
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	bg_pool_free_locked(p, bytes);
	LWLockRelease(bg_shared->lock);
}

/* The address of a filter in the pool. */
BloomFilter *
bg_filter_addr(BgFilterPtr p)
{
	Assert(BgFilterPtrIsValid(p) && p < bg_shared->pool.size);
	return (BloomFilter *) (bg_pool + p);
}

/* Would bytes more fit under the memory caps right now? */
bool
bg_memory_fits(Size bytes)
{
	return bg_memory_cap_check(bytes, bg_memory_in_use()) == BG_CAP_FITS;
}

/* Bytes all filters use now. */
Size
bg_memory_in_use(void)
{
	Size		result;

	bg_require_loaded();
	LWLockAcquire(bg_shared->lock, LW_SHARED);
	result = bg_shared->memory_in_use;
	LWLockRelease(bg_shared->lock);
	return result;
}
