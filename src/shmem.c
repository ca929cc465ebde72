/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  bloomguard's shared state: the guard slots and the filter memory.
 *
 * Every guard has a slot in a fixed array in the main shared memory
 * segment, sized by bloomguard.max_guards.  Filters themselves live in a
 * dynamic shared memory area (DSA) created in place in the main segment at
 * postmaster start, so they can be created, resized and freed while the
 * server runs.  Their total size is capped by bloomguard.max_memory; the
 * cap is enforced by our own accounting (memory_in_use), before anything
 * is allocated.
 *
 * Locking:
 *
 * - BgShared->lock (an LWLock from the named tranche "bloomguard") protects
 *   the slot table: claiming and freeing slots (dbid, relid, incarnation,
 *   state FREE), memory_in_use, and next_incarnation.  Lookups of a slot
 *   by (database, table) take it in shared mode.
 *
 * - BgSlot->lock protects everything else in a slot: state, key identity,
 *   the serving and building filter pointers and their metadata.  Readers
 *   (guarded_exists, bloomguard_check) and the trigger hold it in shared
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

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
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
	int			nslots;
	BgSlot		slots[FLEXIBLE_ARRAY_MEMBER];
} BgShared;

static BgShared *bg_shared = NULL;
static void *bg_dsa_place = NULL;
static dsa_area *bg_area = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * Backend-local: what to do to guards when this transaction commits.
 * FORGET frees a guard's slot (detach, DROP TABLE; InvalidOid: every guard
 * of the database, DROP EXTENSION) at COMMIT, once the transaction's locks
 * are the only thing keeping writers out.  UNTRUST marks a guard untrusted
 * (its trigger was changed, coverage.c) at PRE_COMMIT, before the
 * transaction's rows become visible.  Entries of an aborted subtransaction
 * are dropped.
 */
typedef enum BgPendingKind
{
	BG_PENDING_FORGET,
	BG_PENDING_FORGET_DATABASE,	/* relid holds a database OID */
	BG_PENDING_UNTRUST
} BgPendingKind;

typedef struct BgPending
{
	BgPendingKind kind;
	Oid			relid;
	int			nestlevel;
	const char *why;			/* UNTRUST: the reason, a constant string */
} BgPending;

static List *bg_pending = NIL;

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

		bg_shared->lock = &(GetNamedLWLockTranche("bloomguard"))->lock;
		bg_shared->tranche_id = LWLockNewTrancheId();
		bg_shared->memory_in_use = 0;
		bg_shared->next_incarnation = 1;
		pg_atomic_init_u64(&bg_shared->epoch, 1);
		bg_shared->nslots = bg_max_guards;
		for (i = 0; i < bg_max_guards; i++)
		{
			BgSlot	   *slot = &bg_shared->slots[i];

			memset(slot, 0, sizeof(BgSlot));
			LWLockInitialize(&slot->lock, bg_shared->tranche_id);
			slot->state = BG_STATE_FREE;
			slot->serving = InvalidDsaPointer;
			slot->building = InvalidDsaPointer;
			pg_atomic_init_u64(&slot->shortcuts, 0);
			pg_atomic_init_u64(&slot->source_lookups, 0);
			pg_atomic_init_u64(&slot->source_hits, 0);
			pg_atomic_init_u64(&slot->fallbacks, 0);
			pg_atomic_init_u64(&slot->probes, 0);
			pg_atomic_init_u64(&slot->probe_hits, 0);
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

/* Is there a pending entry of this kind? */
static bool
bg_pending_any(BgPendingKind kind)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		if (((BgPending *) lfirst(lc))->kind == kind)
			return true;
	}
	return false;
}

/* Carry out the pending entries of one kind. */
static void
bg_pending_run(BgPendingKind kind)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);

		if (p->kind != kind)
			continue;
		if (kind == BG_PENDING_FORGET_DATABASE)
			bg_slot_release_database(p->relid);
		else if (kind == BG_PENDING_UNTRUST)
		{
			/* a dropped table's slot is forgotten at COMMIT instead */
			if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(p->relid)))
				bg_untrust(p->relid, p->why);
		}
		else if (OidIsValid(p->relid))
			bg_slot_release(MyDatabaseId, p->relid);
		else
			bg_slot_release_database(MyDatabaseId);
	}
}

/*
 * Transaction callbacks.  PREPARE with a pending FORGET is refused: nothing
 * of ours runs at COMMIT PREPARED, which would leave a filter that no
 * trigger feeds.  A pending UNTRUST is carried out at PRE_PREPARE for the
 * same reason.
 */
static void
bg_xact_callback(XactEvent event, void *arg)
{
	if (bg_pending == NIL)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (bg_pending_any(BG_PENDING_FORGET))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that has detached a bloomguard guard")));
			bg_pending_run(BG_PENDING_UNTRUST);
			break;
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			bg_pending_run(BG_PENDING_UNTRUST);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			bg_pending_run(BG_PENDING_FORGET);
			bg_pending_run(BG_PENDING_FORGET_DATABASE);
			bg_pending = NIL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			bg_pending = NIL;
			break;
		default:
			break;
	}
}

static void
bg_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	int			level;
	ListCell   *lc;

	if (bg_pending == NIL)
		return;
	level = GetCurrentTransactionNestLevel();
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		List	   *keep = NIL;
		MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);

		foreach(lc, bg_pending)
		{
			BgPending  *p = (BgPending *) lfirst(lc);

			if (p->nestlevel < level)
				keep = lappend(keep, p);
		}
		MemoryContextSwitchTo(oldcxt);
		bg_pending = keep;
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		foreach(lc, bg_pending)
		{
			BgPending  *p = (BgPending *) lfirst(lc);

			if (p->nestlevel >= level)
				p->nestlevel = level - 1;
		}
	}
}

/* Called from _PG_init while preloading. */
void
bg_shmem_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bg_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bg_shmem_startup;
	RegisterXactCallback(bg_xact_callback, NULL);
	RegisterSubXactCallback(bg_subxact_callback, NULL);
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

BgSlot *
bg_slot(int index)
{
	Assert(index >= 0 && index < bg_shared->nslots);
	return &bg_shared->slots[index];
}

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

/*
 * Claim a slot for a table in this database, in the given state.  Fails
 * if the table already has one or all slots are in use.
 */
int
bg_slot_claim(Oid relid, const BgKeyIdentity *key, BgState state)
{
	int			i;
	int			index = -1;
	BgSlot	   *slot;

	bg_require_loaded();
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
	slot->last_error[0] = '\0';
	bg_slot_reset_counters(slot);
	LWLockRelease(&slot->lock);
	pg_atomic_fetch_add_u64(&bg_shared->epoch, 1);
	LWLockRelease(bg_shared->lock);
	return index;
}

/* Zero a slot's traffic counters (not n_added: that is filter state). */
void
bg_slot_reset_counters(BgSlot *slot)
{
	pg_atomic_write_u64(&slot->shortcuts, 0);
	pg_atomic_write_u64(&slot->source_lookups, 0);
	pg_atomic_write_u64(&slot->source_hits, 0);
	pg_atomic_write_u64(&slot->fallbacks, 0);
	pg_atomic_write_u64(&slot->probes, 0);
	pg_atomic_write_u64(&slot->probe_hits, 0);
	slot->stats_reset = GetCurrentTimestamp();
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

/* Free every slot of a database (DROP EXTENSION). */
void
bg_slot_release_database(Oid dbid)
{
	int			i;

	for (i = 0; i < bg_shared->nslots; i++)
	{
		BgSlot	   *slot = &bg_shared->slots[i];
		Oid			relid = InvalidOid;

		LWLockAcquire(&slot->lock, LW_SHARED);
		if (slot->state != BG_STATE_FREE && slot->dbid == dbid)
			relid = slot->relid;
		LWLockRelease(&slot->lock);
		if (OidIsValid(relid))
			bg_slot_release(dbid, relid);
	}
}

/* Count bytes against bloomguard.max_memory, or fail without changing anything. */
void
bg_memory_reserve(Size bytes, Oid relid)
{
	Size		cap = (Size) bg_max_memory_mb * 1024 * 1024;
	Size		in_use;

	bg_require_loaded();
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

/* Would bytes more fit under bloomguard.max_memory right now? */
bool
bg_memory_fits(Size bytes)
{
	Size		cap = (Size) bg_max_memory_mb * 1024 * 1024;

	return bytes <= cap && bg_memory_in_use() <= cap - bytes;
}

void
bg_memory_unreserve(Size bytes)
{
	LWLockAcquire(bg_shared->lock, LW_EXCLUSIVE);
	Assert(bg_shared->memory_in_use >= bytes);
	bg_shared->memory_in_use -= bytes;
	LWLockRelease(bg_shared->lock);
}

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

static void
bg_pending_add(BgPendingKind kind, Oid relid, const char *why)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	BgPending  *p = palloc(sizeof(BgPending));

	p->kind = kind;
	p->relid = relid;
	p->nestlevel = GetCurrentTransactionNestLevel();
	p->why = why;
	bg_pending = lappend(bg_pending, p);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Free this table's slot when the current transaction commits (InvalidOid:
 * every guard of this database).
 */
void
bg_forget_at_commit(Oid relid)
{
	(void) bg_dsa();			/* no DSA attach (or error) inside COMMIT */
	bg_pending_add(BG_PENDING_FORGET, relid, NULL);
}

/* Free every guard of a dropped database when the transaction commits. */
void
bg_forget_database_at_commit(Oid dbid)
{
	(void) bg_dsa();
	bg_pending_add(BG_PENDING_FORGET_DATABASE, dbid, NULL);
}

/* Mark this table's guard untrusted when the current transaction commits. */
void
bg_untrust_at_commit(Oid relid, const char *why)
{
	bg_pending_add(BG_PENDING_UNTRUST, relid, why);
}
