/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  bloomguard's shared state: the guard slots and the filter memory.
 *
 * Every guard has a slot in a fixed array in the main shared memory
 * segment, sized by bloomguard.max_guards.  Filters themselves live in a
 * dynamic shared memory area (DSA) created in place in the main segment at
 * postmaster start, so they can be created, resized and freed while the
 * server runs.  Their total size is capped by bloomguard.max_memory (and
 * each guard's by bloomguard.max_guard_memory); the caps are enforced by
 * our own accounting (memory_in_use), before anything is allocated.
 *
 * This file, slot.c and build.c are the only ones that touch a slot's
 * fields, under the locking rules below.  Everyone else goes through
 * slot.c: bg_slot_ask() for a lookup, bg_slot_feed() for the trigger,
 * bg_slot_copy() for a consistent copy of a slot's numbers (the way
 * pg_stat_statements copies an entry).
 *
 * Locking:
 *
 * - BgShared->lock (an LWLock from the named tranche "bloomguard") protects
 *   the slot table: claiming and freeing slots (dbid, relid, incarnation,
 *   state FREE), memory_in_use, and next_incarnation.  Lookups of a slot
 *   by (database, table) take it in shared mode.
 *
 * - BgSlot->lock protects everything else in a slot: state, key identity,
 *   the serving and building filter pointers and their metadata,
 *   forget_xid and last_error.  Readers and the trigger hold it in shared
 *   mode for as long as they use a filter, so a filter can only be freed
 *   by someone holding it exclusively: a reader can never see freed
 *   memory.  Swaps, state changes and frees take it exclusively, briefly.
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
 * to plain lookups until it is rebuilt.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "bloomguard.h"

/* space for the in-place part of the DSA; bigger filters get DSM segments */
#define BG_DSA_INPLACE_SIZE		(1024 * 1024)

typedef struct BgShared
{
	LWLock	   *lock;
	int			tranche_id;
	Size		memory_in_use;
	uint64		next_incarnation;
	pg_atomic_uint64 epoch;
	pg_atomic_uint32 forgets_pending;	/* slots with a forget_xid */
	int			nslots;
	BgSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} BgShared;

static BgShared *bg_shared = NULL;
static void *bg_dsa_place = NULL;
static dsa_area *bg_area = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Size of the slot table. */
static Size
bg_shmem_size(void)
{
	return add_size(offsetof(BgShared, slots),
					mul_size(bg_max_guards, sizeof(BgSlot)));
}

/* shmem_request_hook: ask for our space and our lock. */
static void
bg_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(bg_shmem_size());
	RequestAddinShmemSpace(BG_DSA_INPLACE_SIZE);
	RequestNamedLWLockTranche("bloomguard", 1);
}

/* shmem_startup_hook: create or attach to the slot table and the DSA. */
static void
bg_shmem_startup(void)
{
	bool		found;
	bool		found_dsa;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	/* reset in case this is a restart within the postmaster */
	bg_shared = NULL;
	bg_dsa_place = NULL;
	bg_area = NULL;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

	bg_shared = ShmemInitStruct("bloomguard", bg_shmem_size(), &found);
	bg_dsa_place = ShmemInitStruct("bloomguard dsa", BG_DSA_INPLACE_SIZE,
								   &found_dsa);
	if (!found)
	{
		dsa_area   *area;
		int			i;
		int			c;

		bg_shared->lock = &(GetNamedLWLockTranche("bloomguard"))->lock;
		bg_shared->tranche_id = LWLockNewTrancheId();
		bg_shared->memory_in_use = 0;
		bg_shared->next_incarnation = 1;
		pg_atomic_init_u64(&bg_shared->epoch, 1);
		pg_atomic_init_u32(&bg_shared->forgets_pending, 0);
		bg_shared->nslots = bg_max_guards;
		for (i = 0; i < bg_max_guards; i++)
		{
			BgSlot	   *slot = &bg_shared->slots[i];

			memset(slot, 0, sizeof(BgSlot));
			LWLockInitialize(&slot->lock, bg_shared->tranche_id);
			slot->state = BG_STATE_FREE;
			slot->serving = InvalidDsaPointer;
			slot->building = InvalidDsaPointer;
			slot->forget_xid = InvalidTransactionId;
			for (c = 0; c < BG_NUM_COUNTERS; c++)
				pg_atomic_init_u64(&slot->counters[c], 0);
		}

		/* the postmaster cannot use DSM segments, so start in place */
		area = dsa_create_in_place(bg_dsa_place, BG_DSA_INPLACE_SIZE,
								   bg_shared->tranche_id, NULL);
		dsa_pin(area);

		/*
		 * No dsa_set_size_limit(): our own accounting caps the filters at
		 * bloomguard.max_memory, before anything is allocated.  A DSA limit
		 * would also count the slack of its geometrically sized segments,
		 * and refuse allocations well within the cap.  Segments whose
		 * large objects are all freed go back to the operating system.
		 */
		dsa_detach(area);
	}
	LWLockRelease(AddinShmemInitLock);

	LWLockRegisterTranche(bg_shared->tranche_id, "bloomguard");
}

/* Detach from the DSA at backend exit. */
static void
bg_dsa_detach(int code, Datum arg)
{
	if (bg_area)
		dsa_detach(bg_area);
	bg_area = NULL;
}

/* Install the shared memory hooks; called from _PG_init while preloading. */
void
bg_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bg_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bg_shmem_startup;
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

/* This backend's handle on the filter memory, attached on first use. */
dsa_area *
bg_dsa(void)
{
	if (bg_area == NULL)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(TopMemoryContext);

		bg_require_loaded();
		bg_area = dsa_attach_in_place(bg_dsa_place, NULL);
		dsa_pin_mapping(bg_area);
		MemoryContextSwitchTo(oldcxt);
		before_shmem_exit(bg_dsa_detach, (Datum) 0);
	}
	return bg_area;
}

/* The slot at index (build.c's access to the fields it owns). */
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

/* Look up the slot of a table in this database; fills *ref. */
bool
bg_slot_find(Oid relid, BgSlotRef *ref)
{
	int			index;

	bg_require_loaded();
	LWLockAcquire(bg_shared->lock, LW_SHARED);
	ref->epoch = pg_atomic_read_u64(&bg_shared->epoch);
	index = bg_slot_search(MyDatabaseId, relid);
	ref->index = index;
	ref->incarnation = index >= 0 ? bg_shared->slots[index].incarnation : 0;
	LWLockRelease(bg_shared->lock);
	return index >= 0;
}

/*
 * Return the slot of a table locked in the given mode, or NULL if the
 * table has none.  *ref caches the search between calls.
 */
BgSlot *
bg_slot_lock(BgSlotRef *ref, Oid relid, LWLockMode mode)
{
	for (;;)
	{
		if (ref->index >= 0)
		{
			BgSlot	   *slot = &bg_shared->slots[ref->index];

			LWLockAcquire(&slot->lock, mode);
			if (slot->incarnation == ref->incarnation &&
				slot->state != BG_STATE_FREE &&
				slot->relid == relid && slot->dbid == MyDatabaseId)
				return slot;
			LWLockRelease(&slot->lock);
		}
		else
		{
			/*
			 * Nothing has been claimed or freed since we last looked, so
			 * there is still no slot.  The barrier orders this read after
			 * the caller's earlier writes (for the trigger: the heap insert
			 * of the row), which is what the build protocol relies on.
			 */
			pg_memory_barrier();
			if (ref->epoch == pg_atomic_read_u64(&bg_shared->epoch))
				return NULL;
		}
		/* look again; if the slot we find changes before we lock it, loop */
		if (!bg_slot_find(relid, ref))
			return NULL;
	}
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
 * Claim a slot for a table in this database, in the given state.  Fails
 * if the table already has one or all slots are in use.  Returns its index.
 */
int
bg_slot_claim(Oid relid, const BgKeyIdentity *key, BgState state)
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
	slot->dbid = MyDatabaseId;
	slot->relid = relid;
	slot->incarnation = bg_shared->next_incarnation++;
	slot->state = state;
	slot->key = *key;
	slot->serving = InvalidDsaPointer;
	slot->building = InvalidDsaPointer;
	slot->serving_bytes = 0;
	slot->building_bytes = 0;
	slot->generation = 0;
	slot->built_at = 0;
	slot->build_seconds = 0;
	slot->builder_pid = 0;
	slot->coverage_broken = false;
	slot->forget_xid = InvalidTransactionId;
	slot->last_error[0] = '\0';
	bg_slot_zero_counters(slot);
	LWLockRelease(&slot->lock);
	pg_atomic_fetch_add_u64(&bg_shared->epoch, 1);
	LWLockRelease(bg_shared->lock);
	return index;
}

/* Free a table's slot and its filters, if it has one. */
void
bg_slot_release(Oid dbid, Oid relid)
{
	int			index;
	dsa_pointer serving = InvalidDsaPointer;
	dsa_pointer building = InvalidDsaPointer;
	Size		bytes = 0;

	if (bg_shared == NULL)
		return;
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	index = bg_slot_search(dbid, relid);
	if (index >= 0)
	{
		BgSlot	   *slot = &bg_shared->slots[index];

		LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
		serving = slot->serving;
		building = slot->building;
		bytes = slot->serving_bytes + slot->building_bytes;
		slot->serving = InvalidDsaPointer;
		slot->building = InvalidDsaPointer;
		slot->serving_bytes = slot->building_bytes = 0;
		slot->state = BG_STATE_FREE;
		if (TransactionIdIsValid(slot->forget_xid))
			pg_atomic_fetch_sub_u32(&bg_shared->forgets_pending, 1);
		slot->forget_xid = InvalidTransactionId;
		slot->incarnation = bg_shared->next_incarnation++;
		LWLockRelease(&slot->lock);
		bg_shared->memory_in_use -= bytes;
		pg_atomic_fetch_add_u64(&bg_shared->epoch, 1);
	}
	LWLockRelease(bg_shared->lock);

	/* nobody can reach these any more: the slot lock fenced out readers */
	if (DsaPointerIsValid(serving))
		dsa_free(bg_dsa(), serving);
	if (DsaPointerIsValid(building))
		dsa_free(bg_dsa(), building);
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

/* Free every slot of a database (DROP EXTENSION, DROP DATABASE). */
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
Size
bg_guard_memory_cap(void)
{
	return (Size) bg_max_guard_memory_mb * 1024 * 1024;
}

/*
 * Count bytes of one filter against bloomguard.max_memory (and the
 * per-guard cap), or fail without changing anything.
 */
void
bg_memory_reserve(Size bytes, Oid relid)
{
	Size		cap = bg_memory_cap();
	Size		guard_cap = bg_guard_memory_cap();
	Size		in_use;

	bg_require_loaded();
	if (guard_cap > 0 && bytes > guard_cap)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("filter for table \"%s\" would exceed bloomguard.max_guard_memory",
						get_rel_name(relid)),
				 errdetail("The filter needs %zu bytes; one guard's filter may have at most %zu bytes.",
						   bytes, guard_cap),
				 errhint("Choose a smaller capacity or a larger error rate, or ask the administrator to raise bloomguard.max_guard_memory.")));
	bg_slot_sweep();
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	in_use = bg_shared->memory_in_use;
	if (bytes > cap || in_use > cap - bytes)
	{
		LWLockRelease(bg_shared->lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("filter for table \"%s\" would exceed bloomguard.max_memory",
						get_rel_name(relid)),
				 errdetail("The filter needs %zu bytes; %zu of %zu bytes are in use.",
						   bytes, in_use, cap),
				 errhint("Increase bloomguard.max_memory, or choose a smaller capacity or a larger error rate.")));
	}
	bg_shared->memory_in_use += bytes;
	LWLockRelease(bg_shared->lock);
}

/* Would bytes more fit under the memory caps right now? */
bool
bg_memory_fits(Size bytes)
{
	Size		cap = bg_memory_cap();
	Size		guard_cap = bg_guard_memory_cap();

	if (guard_cap > 0 && bytes > guard_cap)
		return false;
	return bytes <= cap && bg_memory_in_use() <= cap - bytes;
}

/* Give back bytes counted by bg_memory_reserve(). */
void
bg_memory_unreserve(Size bytes)
{
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	Assert(bg_shared->memory_in_use >= bytes);
	bg_shared->memory_in_use -= bytes;
	LWLockRelease(bg_shared->lock);
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
