/*-------------------------------------------------------------------------
 *
 * build.c
 *	  Building a filter generation from a scan of the table, online: the
 *	  protocol and its proof.
 *
 * bloomguard_attach builds through bg_build_begin() and bg_build_finish();
 * bloomguard_rebuild and the background worker through bg_rebuild()
 * (rebuild.c, the rebuild policy: what can be guarded, the locks, the
 * default sizing).  The scan itself, with its parallel workers, is in
 * buildscan.c.  The protocol is that of rebuilding a Bloom filter
 * without losing keys written meanwhile (CREATE INDEX CONCURRENTLY's
 * problem): write new keys to both generations, scan, then swap.
 *
 *	1. Allocate the new generation and publish it in the slot as
 *	   "building", under the slot lock.  From now on every flush of keys
 *	   (feedbuffer.c) adds them to both the serving and the building generation.
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
 * keys (feedbuffer.c).  So the moment that matters is the flush, not the
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
 * Locking.  Builds of one table are serialized by the callers'
 * ShareUpdateExclusive lock on it (rebuild.c), which also keeps the
 * trigger from being disabled or dropped (those need stronger locks)
 * while a build runs.  Steps 1 and 3, and an abandon, take the slot lock
 * exclusively, briefly, inside slot.c (bg_slot_publish(), bg_slot_swap(),
 * bg_slot_abandon()); nothing here holds it.
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
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/sinval.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "bloomguard.h"

static void bg_check_standby_feed(Relation rel);

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
	bg_active_build_valid = false;
	if (!BgFilterPtrIsValid(bs->dp))
		return;
	/* if the slot was freed meanwhile, bg_slot_release() freed it already */
	(void) bg_slot_abandon(bs->slotindex, bs->incarnation, bs->dp, bs->bytes,
						   why ? why : "build failed");
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
	uint64		nbits;
	int			nhashes;
	Size		bytes;
	BgFilterPtr dp;
	BloomFilter *filter;
	uint64		seed;
	bool		standby;
	BgPublish	published;

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
	dp = bg_filter_alloc(bytes, RelationGetRelid(rel), bg_slot_serving_hint(slotindex));
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
	published = bg_slot_publish(slotindex, RelationGetRelid(rel), dp, bytes,
								&bs->incarnation);
	if (published != BG_PUBLISH_DONE)
	{
		if (standby)
			bg_wal_end_standby_build();
		bg_filter_free(dp, bytes);
		if (published == BG_PUBLISH_BUSY)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("a build of the filter of table \"%s\" is already running",
							RelationGetRelationName(rel))));
		elog(ERROR, "bloomguard slot %d no longer belongs to relation %u",
			 slotindex, RelationGetRelid(rel));
	}
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
	BgSavedGuard g;
	bool		broken;
	char		broken_why[BG_ERROR_LEN];
	int			workers = 0;
	MemoryContext oldcxt = CurrentMemoryContext;
	TransactionId feed_version;

	/*
	 * The feed trigger's row as the scan starts (attach creates the trigger
	 * after bg_build_begin()): a change during the scan, which only a
	 * standby's build can see, leaves the filter with an older version,
	 * and a lookup untrusts it.
	 */
	bs->trigger_version = bg_feed_trigger_version(RelationGetRelid(rel));

	/*
	 * The feed function's version, read before the scan (a catalog read
	 * must not run under the slot lock).  The caller has found the trigger
	 * in place; if it is not any more (a standby replaying a change), the
	 * filter is built under no version, and its first lookup untrusts it.
	 */
	if (bg_feed_check(rel, &feed_version) != BG_FEED_IN_PLACE)
		Assert(feed_version == InvalidTransactionId);

	PG_TRY();
	{
		pgstat_report_activity(STATE_RUNNING, "bloomguard: building filter");
		workers = bg_build_scan(rel, desc, bs);
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		char		why[BG_ERROR_LEN];

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		snprintf(why, sizeof(why), "the last build was interrupted: %s",
				 edata->message);
		FreeErrorData(edata);
		bg_build_abandon(bs, why);
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* what the slot will say about the new generation */
	memset(&g, 0, sizeof(g));
	g.dbid = MyDatabaseId;
	g.relid = RelationGetRelid(rel);
	g.relfilenode = bg_rel_filenumber(rel);
	bg_keydesc_identity(desc, &g.key);
	/* read before the scan: the caller checked that the trigger is in place */
	g.feed_version = feed_version;
	g.trigger_version = bs->trigger_version;
	g.built_at = GetCurrentTimestamp();
	g.build_seconds = (double) (g.built_at - bs->start) / USECS_PER_SEC;
	g.build_workers = workers;

	/* step 3, which also frees the old generation */
	if (!bg_slot_swap(bs->slotindex, bs->incarnation, bs->dp, bs->bytes, &g,
					  rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT,
					  &broken, broken_why))
	{
		/* detached (or dropped) while we were scanning: nothing to serve */
		bg_active_build_valid = false;
		bs->dp = InvalidBgFilterPtr;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("guard of table \"%s\" was removed during the build",
						RelationGetRelationName(rel))));
	}
	bg_active_build_valid = false;
	bs->dp = InvalidBgFilterPtr;

	bg_invalidate_plans(RelationGetRelid(rel));
	if (broken)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the guard of table \"%s\" stays untrusted after its build",
						RelationGetRelationName(rel)),
				 errdetail("The guard was marked untrusted during the build: %s.", broken_why),
				 errhint("Run bloomguard_rebuild() again.")));
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
