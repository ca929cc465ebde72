/*-------------------------------------------------------------------------
 *
 * build.c
 *	  Building a filter generation from a scan of the table, online.
 *
 * bloomguard_attach builds through bg_build_begin() and bg_build_finish();
 * bloomguard_rebuild and the background worker through bg_rebuild(), which
 * also holds the rebuild policy (what can be guarded, the locks, the
 * default sizing).  The protocol is that of rebuilding a Bloom filter
 * without losing keys written meanwhile (CREATE INDEX CONCURRENTLY's
 * problem): write new keys to both generations, scan, then swap.
 *
 *	1. Allocate the new generation and publish it in the slot as
 *	   "building", under the slot lock.  From now on every flush of keys
 *	   (feed.c) adds them to both the serving and the building generation.
 *	2. Scan every heap page and add the key of every tuple that is not
 *	   provably dead to everyone (HeapTupleSatisfiesVacuum against the
 *	   oldest non-removable xid): committed rows, rows of in-progress and
 *	   prepared transactions, and rows deleted recently enough that some
 *	   snapshot may still see them.
 *	3. Swap: the new generation becomes the serving one, and the old one is
 *	   freed, under the slot lock held exclusively.
 *
 * Why no key can be missed.  The trigger does not set bits: it buffers
 * keys, and the buffer is flushed into every live generation before the
 * transaction can commit or prepare, and before this backend can need the
 * keys (feed.c).  So the moment that matters is the flush, not the
 * trigger.  Call a row version "fed" if its key goes through a flush after
 * the version was created: an INSERT's version, and an UPDATE's new
 * version when the UPDATE changed the key or put the version on another
 * page than the old one (trigger.c).
 *
 * Take any row version R that some snapshot can see once the new
 * generation serves, with key K.  Suppose first that R is fed.  R was
 * heap-inserted at some time t_ins, and its key flushed at t_flush > t_ins
 * (AFTER ROW triggers fire at the end of the inserting statement, and the
 * flush follows the trigger, before the commit).  If t_flush is after step
 * 1, the flush saw the building generation and added K.  Otherwise t_ins <
 * t_flush < step 1 < step 2's start, so R is on its page when the scan
 * reads it, and R is not dead to everyone (some snapshot sees it), so the
 * scan adds K.
 *
 * If R is not fed, it is the new version of an UPDATE that kept the key on
 * the same page p.  Follow R's predecessors back while they are not fed:
 * they share R's key and page, back to a version R0 that is fed or was
 * created before step 1.  If R0 is fed and was flushed after step 1, K was
 * added.  Otherwise R0 was on p before step 1, and when the scan reads p
 * (under p's content lock, so no update of p is half done) the newest
 * version of the chain at that moment is on p: R0 or one of its same-page
 * successors.  That version is not dead to everyone: its inserter
 * committed or is still running (R descends from it), and it has no
 * successor yet, since a successor would be on p too; if it is R itself,
 * some snapshot sees it.  So the scan adds K.  The slot lock, buffer locks
 * and the barrier in bg_slot_lock() order these events across backends.
 *
 * This covers what CREATE INDEX CONCURRENTLY needs two waits for, without
 * waiting: a writer that straddles step 1 (its row is in the heap, even if
 * uncommitted or prepared, so the scan takes it: no WaitForLockers), and
 * a REPEATABLE READ transaction that can still see a row deleted before
 * the scan (RECENTLY_DEAD rows are added: no WaitForOlderSnapshots).  The
 * scan needs no snapshot of its own.  Pruning during the scan removes only
 * versions no snapshot can see, never the newest version of a chain, so it
 * changes nothing above.  (With old_snapshot_threshold, VACUUM may remove
 * versions old snapshots can still see; lookups do not trust filters while
 * it is set.)  The extra keys (uncommitted, aborted in progress, recently
 * deleted) cost only false positives.
 *
 * Builds of one table are serialized by the callers' ShareUpdateExclusive
 * lock on it, which also keeps the trigger from being disabled or dropped
 * (those need stronger locks) while a build runs.
 *
 * On a hot standby.  The standby builds its own filters (the launcher runs
 * once the standby is consistent).  Its rows arrive by replay, and so do
 * their keys: a KEYS record (wal.c) is written by the primary's flush,
 * after the row's heap insert and before its commit, and the startup
 * process replays them in that order, adding the keys to every live
 * generation of the table's guard on this node.  So the argument above
 * holds with "replay of the KEYS record" for the flush, and replay of the
 * heap record for the heap insert: a fed version whose KEYS record is
 * replayed after step 1 was added; otherwise its heap record was replayed
 * before step 1, and the scan finds it (or, for a version that is not fed,
 * the newest version of its chain on its page).  That needs the primary to
 * have logged every flush since before step 1, which is why a standby
 * publishes a generation only while it knows that it has (wal.c, under the
 * wal lock), and why an OFF record marks a running build untrusted.  A
 * standby never prunes pages itself; the primary's pruning arrives by
 * replay, which removes only what the primary found dead to everyone, and
 * conflicts with the scan's snapshot cancel the scan rather than remove a
 * version it could still need.  What differs: only AccessShareLock can be
 * taken on a table during recovery, so two builds of a table are
 * serialized by the slot (a second one is refused while a generation is
 * being built), and nothing keeps the trigger from changing meanwhile on
 * the primary; but every such change is followed, before its commit
 * record, by an UNTRUST record, whose replay marks a running build's
 * generation untrusted (bg_untrust()).  A scan cancelled by a conflict
 * with recovery is abandoned and the worker tries again (maintain.c).
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "storage/sinval.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "bloomguard.h"

static void bg_check_standby_feed(Relation rel);

/*
 * Scan every page of rel and add the key of every tuple that is not dead
 * to everyone.  See the file header for why this is enough.
 */
static void
bg_scan_keys(Relation rel, const BgKeyDesc *desc, BloomFilter *filter)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	BlockNumber blkno;
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	TransactionId oldest_xmin = GetOldestNonRemovableTransactionId(rel);
	TupleDesc	tupdesc = RelationGetDescr(rel);
	MemoryContext tmpcxt;
	BloomHash  *batch;
	OffsetNumber *live;
	uint64	   *local = NULL;
	uint64		nadded = 0;
	Size		local_bytes = filter->nwords * sizeof(uint64);

	tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "bloomguard build",
								   ALLOCSET_DEFAULT_SIZES);
	batch = palloc(sizeof(BloomHash) * MaxHeapTuplesPerPage);
	live = palloc(sizeof(OffsetNumber) * MaxHeapTuplesPerPage);

	/*
	 * Within maintenance_work_mem, set bits in a private copy without
	 * atomics and merge it at the end; the trigger meanwhile adds to the
	 * shared building filter, and OR-ing the two loses nothing.
	 */
	if (local_bytes <= (Size) maintenance_work_mem * 1024)
		local = palloc_extended(local_bytes,
								MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM | MCXT_ALLOC_ZERO);

	for (blkno = 0; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;
		int			nlive = 0;
		int			nbatch = 0;
		int			i;
		MemoryContext oldcxt;

		CHECK_FOR_INTERRUPTS();

		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (!PageIsNew(page))
		{
			OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
			OffsetNumber off;

			for (off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
			{
				ItemId		lp = PageGetItemId(page, off);
				HeapTupleData tuple;

				if (!ItemIdIsNormal(lp))
					continue;
				tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
				tuple.t_len = ItemIdGetLength(lp);
				tuple.t_tableOid = RelationGetRelid(rel);
				ItemPointerSet(&tuple.t_self, blkno, off);
				if (HeapTupleSatisfiesVacuum(&tuple, oldest_xmin, buf) == HEAPTUPLE_DEAD)
					continue;
				live[nlive++] = off;
			}
		}
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);

		/*
		 * Our pin keeps the tuples where they are (pruning needs a cleanup
		 * lock), so their keys can be read and hashed without the content
		 * lock, as heap page-at-a-time scans do.
		 */
		oldcxt = MemoryContextSwitchTo(tmpcxt);
		for (i = 0; i < nlive; i++)
		{
			ItemId		lp = PageGetItemId(page, live[i]);
			HeapTupleData tuple;
			Datum		values[INDEX_MAX_KEYS];
			uint64		colhashes[INDEX_MAX_KEYS];
			bool		isnull = false;
			int			c;

			tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
			tuple.t_len = ItemIdGetLength(lp);
			tuple.t_tableOid = RelationGetRelid(rel);
			ItemPointerSet(&tuple.t_self, blkno, live[i]);
			for (c = 0; c < desc->nkeys && !isnull; c++)
				values[c] = heap_getattr(&tuple, desc->cols[c].attnum, tupdesc,
										 &isnull);
			if (isnull)
				continue;		/* cannot be seen by a primary key lookup */
			bg_key_colhashes(desc, values, colhashes);
			batch[nbatch++] = bloom_hash_key(filter->seed, colhashes, desc->nkeys);
		}
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(tmpcxt);
		ReleaseBuffer(buf);

		if (local)
		{
			bloom_local_add_batch(filter, local, batch, nbatch);
			nadded += nbatch;
		}
		else
			bloom_add_batch(filter, batch, nbatch);
	}

	if (local)
	{
		bloom_merge(filter, local, nadded);
		pfree(local);
	}

	FreeAccessStrategy(strategy);
	pfree(batch);
	pfree(live);
	MemoryContextDelete(tmpcxt);
}

/*
 * The build this backend is running, if any, so that it can be abandoned
 * if the backend exits in the middle (pg_terminate_backend, FATAL): an
 * ERROR is handled by PG_CATCH in bg_build_finish(), but an exit skips it,
 * and a guard left "building" would refuse every later build.
 */
static BgBuildState bg_active_build;
static bool bg_active_build_valid = false;
static bool bg_exit_callback_registered = false;

/* Exit callback: abandon this backend's unfinished build. */
static void
bg_build_exit_callback(int code, Datum arg)
{
	if (!bg_active_build_valid)
		return;
	/* we may have been interrupted holding a lock; we are leaving anyway */
	LWLockReleaseAll();
	bg_build_abandon(&bg_active_build, "the building backend exited");
}

/*
 * Forget a failed build: free the building generation, and leave the guard
 * as it was (or "not_loaded", if this was its first build).
 */
void
bg_build_abandon(BgBuildState *bs, const char *why)
{
	BgSlot	   *slot = bg_slot(bs->slotindex);
	bool		ours;

	bg_active_build_valid = false;
	if (!BgFilterPtrIsValid(bs->dp))
		return;
	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	ours = (slot->incarnation == bs->incarnation && slot->building == bs->dp);
	if (ours)
	{
		slot->building = InvalidBgFilterPtr;
		slot->building_bytes = 0;
		slot->builder_pid = 0;
		if (slot->state == BG_STATE_BUILDING)
			slot->state = BG_STATE_NOT_LOADED;
		strlcpy(slot->last_error, why ? why : "build failed",
				sizeof(slot->last_error));
	}
	LWLockRelease(&slot->lock);

	/* if the slot was freed meanwhile, bg_slot_release() freed it already */
	if (ours)
		bg_filter_free(bs->dp, bs->bytes);
	bs->dp = InvalidBgFilterPtr;
}

/*
 * Steps 0 and 1: reserve memory for a new generation, allocate it, and
 * publish it in the slot as "building", so that the trigger feeds it from
 * now on.  Fails without changing anything if the memory cap would be
 * exceeded or a build is already running.
 */
void
bg_build_begin(Relation rel, const BgKeyDesc *desc, int slotindex,
			   uint64 capacity, double error_rate, BgBuildState *bs)
{
	BgSlot	   *slot = bg_slot(slotindex);
	uint64		nbits;
	int			nhashes;
	Size		bytes;
	BgFilterPtr dp;
	BloomFilter *filter;
	uint64		seed;
	bool		standby;

	memset(bs, 0, sizeof(BgBuildState));
	bs->dp = InvalidBgFilterPtr;
	bs->slotindex = slotindex;
	bs->start = GetCurrentTimestamp();

	if (RecoveryInProgress())
		bg_check_standby_feed(rel);

	bg_filter_size((int64) capacity, error_rate, &nbits, &nhashes, &bytes);

	/*
	 * Both generations count against the caps while they coexist.  The
	 * serving one is read without its lock: it only says where to place
	 * the new one.
	 */
	dp = bg_filter_alloc(bytes, RelationGetRelid(rel), slot->serving);
	filter = bg_filter_addr(dp);
	if (!pg_strong_random(&seed, sizeof(seed)))
		seed = pg_prng_uint64(&pg_global_prng_state);
	bloom_init(filter, capacity, error_rate, nbits, nhashes, seed);

	/* a standby publishes only while it receives every key (wal.c) */
	standby = RecoveryInProgress();
	if (standby && !bg_wal_begin_standby_build())
	{
		bg_filter_free(dp, bytes);
		bg_check_standby_feed(rel);
		elog(ERROR, "the standby stopped receiving keys");
	}
	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	if (slot->relid != RelationGetRelid(rel) || slot->dbid != MyDatabaseId ||
		slot->state == BG_STATE_FREE || BgFilterPtrIsValid(slot->building))
	{
		bool		busy = BgFilterPtrIsValid(slot->building);

		LWLockRelease(&slot->lock);
		if (standby)
			bg_wal_end_standby_build();
		bg_filter_free(dp, bytes);
		if (busy)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("a build of the filter of table \"%s\" is already running",
							RelationGetRelationName(rel))));
		elog(ERROR, "bloomguard slot %d no longer belongs to relation %u",
			 slotindex, RelationGetRelid(rel));
	}
	bs->incarnation = slot->incarnation;
	slot->building = dp;
	slot->building_bytes = bytes;
	slot->builder_pid = MyProcPid;
	slot->coverage_broken = false;
	if (slot->state == BG_STATE_NOT_LOADED)
		slot->state = BG_STATE_BUILDING;
	LWLockRelease(&slot->lock);
	if (standby)
		bg_wal_end_standby_build();

	bs->dp = dp;
	bs->bytes = bytes;
	bs->filter = filter;

	if (!bg_exit_callback_registered)
	{
		before_shmem_exit(bg_build_exit_callback, (Datum) 0);
		bg_exit_callback_registered = true;
	}
	bg_active_build = *bs;
	bg_active_build_valid = true;
}

/*
 * Have every backend make its cached plans of the table again (planner.c
 * wraps a table's scans only while it has a guard).  The slot's state is
 * not transactional, so neither is this: the relcache invalidation is sent
 * now, not at commit, which on a hot standby could not write the WAL
 * record a transactional one needs.
 */
static void
bg_invalidate_plans(Oid relid)
{
	SharedInvalidationMessage msg;

	memset(&msg, 0, sizeof(msg));
	msg.rc.id = SHAREDINVALRELCACHE_ID;
	msg.rc.dbId = MyDatabaseId;
	msg.rc.relId = relid;
	SendSharedInvalidMessages(&msg, 1);
}

/*
 * Steps 2 and 3: scan, then swap the new generation in and free the old
 * one.  The caller holds at least ShareUpdateExclusiveLock on rel and has
 * checked that the guard's trigger is in place.  On error (cancel,
 * timeout, out of memory) the previous generation keeps serving and the
 * new one is freed.
 */
void
bg_build_finish(Relation rel, const BgKeyDesc *desc, BgBuildState *bs)
{
	BgSlot	   *slot = bg_slot(bs->slotindex);
	BgKeyIdentity key;
	BgFilterPtr old;
	Size		old_bytes;
	bool		broken;
	MemoryContext oldcxt = CurrentMemoryContext;

	bg_keydesc_identity(desc, &key);

	PG_TRY();
	{
		pgstat_report_activity(STATE_RUNNING, "bloomguard: building filter");
		bg_scan_keys(rel, desc, bs->filter);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		char		why[sizeof(((BgSlot *) NULL)->last_error)];

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		snprintf(why, sizeof(why), "the last build was interrupted: %s",
				 edata->message);
		FreeErrorData(edata);
		bg_build_abandon(bs, why);
		PG_RE_THROW();
	}
	PG_END_TRY();

	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	bg_active_build_valid = false;
	if (slot->incarnation != bs->incarnation || slot->building != bs->dp)
	{
		/* detached (or dropped) while we were scanning: nothing to serve */
		LWLockRelease(&slot->lock);
		bs->dp = InvalidBgFilterPtr;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("guard of table \"%s\" was removed during the build",
						RelationGetRelationName(rel))));
	}
	broken = slot->coverage_broken;
	old = slot->serving;
	old_bytes = slot->serving_bytes;
	slot->serving = bs->dp;
	slot->serving_bytes = bs->bytes;
	slot->building = InvalidBgFilterPtr;
	slot->building_bytes = 0;
	slot->builder_pid = 0;
	slot->coverage_broken = false;
	slot->generation++;
	slot->key = key;
	/* the caller checked the feed trigger, and so the function's version */
	slot->feed_version = bg_feed_version;
	slot->built_at = GetCurrentTimestamp();
	slot->build_seconds = (double) (slot->built_at - bs->start) / USECS_PER_SEC;
	slot->relfilenode = bg_rel_filenumber(rel);
	slot->relfilenode_verified = true;
	slot->permanent = rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
	slot->source = BG_SOURCE_BUILT;
	slot->source_at = slot->built_at;
	if (broken)
		slot->state = BG_STATE_UNTRUSTED;	/* keep last_error: the reason */
	else
	{
		slot->state = BG_STATE_READY;
		slot->last_error[0] = '\0';
	}
	LWLockRelease(&slot->lock);
	bs->dp = InvalidBgFilterPtr;

	/* readers held the slot lock while using the old one; none can now */
	if (BgFilterPtrIsValid(old))
		bg_filter_free(old, old_bytes);

	bg_invalidate_plans(RelationGetRelid(rel));
	if (broken)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the trigger of table \"%s\" changed during the build; the guard stays untrusted",
						RelationGetRelationName(rel)),
				 errhint("Run bloomguard_rebuild() again.")));
}

/*
 * Error out unless rel is a kind of table bloomguard can guard: a heap
 * table without inheritance children, or a partitioned table (whose leaves
 * are each checked as tables, partition.c).
 */
void
bg_check_guardable(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	bool		partitioned = false;

	switch (rel->rd_rel->relkind)
	{
		case RELKIND_RELATION:
			break;
		case RELKIND_PARTITIONED_TABLE:
			partitioned = true;
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("cannot guard \"%s\"", name),
					 errdetail("\"%s\" is not a table.", name),
					 errhint("bloomguard guards ordinary and partitioned tables by their primary key.")));
	}
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard temporary table \"%s\"", name),
				 errdetail("A temporary table is visible to one session only; a shared filter would not help it.")));
	if (!partitioned && rel->rd_tableam != GetHeapamTableAmRoutine())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard table \"%s\": only the heap table access method is supported", name)));
	if (!partitioned && bg_has_children(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard table \"%s\" because it has inheritance children", name),
				 errdetail("A query on the table also reads its children, whose rows its trigger does not see.")));
	if (RecoveryInProgress() && rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot build the filter of unlogged table \"%s\" during recovery", name)));
}

/* Error out during recovery: what the caller does writes to the database. */
void
bg_check_not_in_recovery(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change guards during recovery"),
				 errhint("Attach and detach guards on the primary; a standby builds its own filters.")));
}

/* Error out unless this standby may start a build now (wal.c says why not). */
static void
bg_check_standby_feed(Relation rel)
{
	const char *why = bg_wal_standby_why_not();

	if (why != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot build the filter of table \"%s\" on this standby",
						RelationGetRelationName(rel)),
				 errdetail("The standby cannot tell whether it receives every key: %s.", why)));
}

/* Error out, saying what to do, unless rel's feed trigger is in place. */
static void
bg_require_feed(Relation rel)
{
	const char *name = RelationGetRelationName(rel);

	switch (bg_feed_state(rel))
	{
		case BG_FEED_IN_PLACE:
			return;
		case BG_FEED_NOT_ALWAYS:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" is not enabled ALWAYS", name),
					 errdetail("Without it the filter cannot see every new key."),
					 errhint("Run ALTER TABLE %s ENABLE ALWAYS TRIGGER bloomguard, then rebuild.",
							 quote_identifier(name))));
			break;
		case BG_FEED_ALTERED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" is not the one bloomguard_attach() creates", name),
					 errdetail("Without it the filter cannot see every new key."),
					 errhint("Run bloomguard_detach() and then bloomguard_attach() to recreate it.")));
			break;
		case BG_FEED_MISSING:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" is missing", name),
					 errdetail("Without it the filter cannot see new keys."),
					 errhint("Run bloomguard_detach() and then bloomguard_attach() to recreate it.")));
			break;
	}
}

/*
 * The capacity a rebuild of rel's guard without an explicit one should
 * have, or 0 to keep the serving generation's: when the table has
 * outgrown that capacity, or the filter is past it (load above 1.0),
 * sizing.c's choice from the table's live rows and the filter's distinct
 * keys.
 */
int64
bg_rebuild_capacity(Relation rel)
{
	BgSlotCopy	copy;
	double		rows = bg_live_rows(RelationGetRelid(rel));
	double		keys = 0;
	bool		full = false;

	if (!bg_slot_copy_rel(RelationGetRelid(rel), &copy) || !copy.has_filter)
		return 0;
	if (rows <= (double) copy.capacity && copy.n_added <= copy.capacity)
		return 0;
	keys = bloom_estimated_keys(copy.nbits, copy.nhashes, copy.bits_set, &full);
	return bg_choose_capacity(rows, keys, full, (int64) copy.capacity);
}

/*
 * Rebuild a guard's filter: the policy shared by bloomguard_rebuild() and
 * the background worker.  capacity <= 0 and error_rate NaN mean "keep the
 * serving generation's" (capacity grows with the table if it outgrew it
 * and the bigger filter fits).  With nowait, returns false instead of
 * waiting when another build (or VACUUM, or DDL) holds the table or its
 * key index; the background worker uses that so that it never queues
 * behind anyone.  The caller has checked permissions.
 */
bool
bg_rebuild(Relation rel, int64 capacity, double error_rate, bool nowait)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			indexoid;
	BgKeyDesc  *desc;
	BgKeyIdentity key;
	BgSlotCopy	copy;
	int64		reg_capacity;
	double		reg_error_rate;
	int64		cur_capacity;
	double		cur_error_rate;
	int			slotindex;
	BgBuildState bs;
	LOCKMODE	lockmode;

	bg_require_guarded(rel, NULL, NULL);
	bg_check_guardable(rel);

	/*
	 * One build at a time; waits show up as heavyweight lock waits.  During
	 * recovery only AccessShareLock can be taken: the slot serializes the
	 * builds (bg_build_begin() refuses a second one).
	 */
	lockmode = RecoveryInProgress() ? AccessShareLock : ShareUpdateExclusiveLock;
	indexoid = bg_primary_key_index(rel);
	if (nowait)
	{
		if (!ConditionalLockRelationOid(relid, lockmode))
			return false;
		if (OidIsValid(indexoid) &&
			!ConditionalLockRelationOid(indexoid, AccessShareLock))
			return false;
	}
	else
		LockRelationOid(relid, lockmode);

	bg_require_feed(rel);
	desc = bg_keydesc_build(rel, false, true);

	/* read the registry again: a rebuild we waited for may have resized it */
	bg_require_guarded(rel, &reg_capacity, &reg_error_rate);

	/* defaults: the serving generation's sizing, else the registry's */
	cur_capacity = reg_capacity;
	cur_error_rate = reg_error_rate;
	if (bg_slot_copy_rel(relid, &copy) && copy.has_filter)
	{
		cur_capacity = (int64) copy.capacity;
		cur_error_rate = copy.error_rate;
	}
	if (isnan(error_rate))
		error_rate = cur_error_rate;
	if (capacity <= 0)
	{
		int64		grown = bg_rebuild_capacity(rel);
		uint64		nbits;
		int			nhashes;

		/*
		 * Grow if the policy says so and the bigger filter fits: a filter
		 * at the old capacity (DEGRADED, over capacity) is better than none
		 * at all.
		 */
		capacity = cur_capacity;
		if (grown > 0 &&
			bloom_size((double) grown, error_rate, &nbits, &nhashes) &&
			bg_memory_fits(bloom_filter_bytes(nbits)))
			capacity = grown;
	}

	if (bg_slot_copy_rel(relid, &copy))
		slotindex = copy.index;
	else
	{
		bg_keydesc_identity(desc, &key);
		slotindex = bg_slot_claim(relid, &key, BG_STATE_NOT_LOADED);
	}

	bg_build_begin(rel, desc, slotindex, (uint64) capacity, error_rate, &bs);
	bg_build_finish(rel, desc, &bs);

	/* a standby's sizing is its own: the registry is the primary's */
	if ((capacity != reg_capacity || error_rate != reg_error_rate) &&
		!RecoveryInProgress())
		bg_registry_update(relid, capacity, error_rate);
	return true;
}
