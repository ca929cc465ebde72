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
 * Several scanners.  Step 2 may be shared by the building backend (the
 * leader) and parallel workers (bg_build_scan()).  The argument above is
 * about one page at a time, and it still holds for each page whoever scans
 * it, because of four things:
 *
 *	- Every page is scanned, once, to its end.  The leader reads the
 *	  table's length after step 1 and hands the pages [0, nblocks) out in
 *	  chunks from one shared counter.  A page past nblocks was added to the
 *	  table after step 1, so every row on it was heap-inserted after step 1
 *	  and is the trigger's.  The leader swaps only after every worker has
 *	  finished without error (WaitForParallelWorkersToFinish() also raises
 *	  an error for a worker that died or never started) and the scanners
 *	  have counted every page as done; any error, in the leader or in a
 *	  worker, abandons the build.
 *	- Every scanner's horizon is a valid one.  Each scanner computes its
 *	  own (GetOldestNonRemovableTransactionId()) when it starts, which is
 *	  after step 1: the leader starts its workers only after publishing the
 *	  generation.  Any horizon computed before the swap would do: a tuple
 *	  that HeapTupleSatisfiesVacuum() calls DEAD against a horizon h is
 *	  invisible to every snapshot that exists when h is computed or later,
 *	  and the snapshot that must see R exists after the swap.
 *	- Nothing is lost by adding in pieces.  Scanners and the trigger add
 *	  to the same generation with atomic ORs, or a scanner sets bits in a
 *	  private array and ORs it in, atomically, before it reports that it is
 *	  done; no one clears a bit.  A worker's ORs (full barriers) precede
 *	  its exit message to the leader, which the leader receives before it
 *	  takes the slot lock to swap.
 *	- No scanner writes into memory that is not the generation any more.
 *	  A scanner writes into it only under the slot lock in shared mode, and
 *	  only after checking that the slot still names it as the generation
 *	  being built, with the seed it was built with (bg_build_put()).  An
 *	  abandoned build is freed under that lock held exclusively, and a
 *	  worker can outlive its build: the leader stops its workers before it
 *	  frees the generation after an error, but if the leader exits
 *	  (pg_terminate_backend) its exit callback frees the generation before
 *	  the transaction abort stops them.  Such a worker finds the check
 *	  failing and stops with an error.
 *
 * Bulk loading.  A scanner hashes the keys of its pages into a batch of
 * BG_BUILD_BATCH keys, then sets their bits, in a private bit array shaped
 * like the filter (with plain ORs) when maintenance_work_mem holds one per
 * participant, else straight into the generation with atomic ORs.  Each
 * key is one cache line; bloom_local_add_batch() and bloom_add_batch()
 * prefetch the line of the key 32 keys ahead.  Sorting a batch by block
 * instead was slower (test/bench/layout.c measures both).  A private array
 * of more than a few megabytes asks for transparent huge pages (zeroing it
 * in 4 kB pages took a quarter of a second per scanner at 150 MB in a
 * virtual machine, and random bits miss the TLB less).  It is ORed in at
 * the end, 1 MB per hold of the slot lock.
 *
 * The background worker's builds stay serial.  It rebuilds right after a
 * restart or a crash, when the server is busiest (caches cold, clients
 * reconnecting), and nobody waits for it: lookups fall back to the index
 * meanwhile, correctly.  Like autovacuum, which does not use parallel
 * workers either, it should not take cores and worker processes from the
 * queries being served.  bloomguard_rebuild() and bloomguard_attach(), run
 * by someone who waits for them, use parallel workers.
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
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>
#include <sys/mman.h>

#include "access/heapam.h"
#include "access/parallel.h"
#include "access/table.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
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
 * What the scanners of one build share: in the parallel context's dynamic
 * shared memory when there are workers, in the leader's memory when not.
 */
typedef struct BgBuildShared
{
	/* set by the leader before any worker starts, read-only afterwards */
	Oid			relid;
	int			slotindex;
	uint64		incarnation;	/* of the slot when the build began */
	BgFilterPtr dp;				/* the generation being built */
	uint64		seed;			/* its seed: tells it from a later one at dp */
	BgKeyIdentity key;			/* the key the leader hashes */
	LOCKMODE	lockmode;		/* the leader's lock on the table */
	BlockNumber nblocks;		/* pages to scan, read after step 1 */
	BlockNumber chunk;			/* pages a scanner takes at a time */
	bool		local;			/* scanners set bits in private arrays */
	int			participants;	/* scanners at most: workers planned, leader */
	/* progress */
	pg_atomic_uint64 next_block;	/* first page no scanner has taken */
	pg_atomic_uint64 pages_done;	/* pages scanned to the end */
	pg_atomic_uint64 merges;	/* scanners that began to merge */
} BgBuildShared;

/* the key of the BgBuildShared in a parallel build's table of contents */
#define BG_BUILD_KEY_SHARED		UINT64CONST(0xB100D6A4D0000001)

/* keys a scanner hashes before it sets their bits */
#define BG_BUILD_BATCH			16384

/* private arrays from this size on are laid out for transparent huge pages */
#define BG_HUGE_PAGE			((Size) 2 * 1024 * 1024)
#define BG_HUGE_ARRAY			(4 * BG_HUGE_PAGE)

/* words of a private array ORed into the generation per hold of the slot lock */
#define BG_MERGE_SLICE_WORDS	((uint64) 131072)

/* A scanner's own state. */
typedef struct BgScan
{
	Relation	rel;
	const BgKeyDesc *desc;
	TupleDesc	tupdesc;
	TransactionId oldest_xmin;	/* this scanner's dead-tuple horizon */
	BufferAccessStrategy strategy;
	MemoryContext tmpcxt;		/* what hashing a page's keys allocates */
	BloomFilter *shape;			/* the generation's header, copied */
	uint64	   *local;			/* private bit array, or NULL */
	uint64		local_added;	/* keys set in it */
	BloomHash  *batch;
	int			nbatch;
} BgScan;

PGDLLEXPORT void bloomguard_build_worker_main(dsm_segment *seg, shm_toc *toc);

/*
 * Is the slot's generation being built still the one this build published?
 * Not if the build was abandoned (its memory is then freed, or another
 * build's).  Caller holds the slot lock.
 */
static bool
bg_build_ours(const BgBuildShared *shared, BgSlot *slot)
{
	return slot->incarnation == shared->incarnation &&
		slot->state != BG_STATE_FREE &&
		slot->building == shared->dp &&
		bg_filter_addr(shared->dp)->seed == shared->seed;
}

/* Error out: the build this scanner works for is gone. */
static void
bg_build_gone(const BgBuildShared *shared)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the build of the filter of table \"%s\" was abandoned",
					get_rel_name(shared->relid))));
}

/*
 * Put keys into the generation being built: a batch of hashes, or (local
 * not NULL) the words [first, first + count) of a private bit array,
 * counting nadded adds.  Only under the slot lock in shared mode and only
 * while the generation is still this build's (the file header says why).
 */
static void
bg_build_put(const BgBuildShared *shared, const BloomHash *hashes, int n,
			 const uint64 *local, uint64 first, uint64 count, uint64 nadded)
{
	BgSlot	   *slot = bg_slot(shared->slotindex);
	bool		ours;

	LWLockAcquire(&slot->lock, LW_SHARED);
	ours = bg_build_ours(shared, slot);
	if (ours && local != NULL)
		bloom_merge(bg_filter_addr(shared->dp), local, first, count, nadded);
	else if (ours)
		bloom_add_batch(bg_filter_addr(shared->dp), hashes, n);
	LWLockRelease(&slot->lock);
	if (!ours)
		bg_build_gone(shared);
}

/* Set the bits of the keys hashed so far (see bg_build_put()). */
static void
bg_scan_flush(const BgBuildShared *shared, BgScan *scan)
{
	if (scan->nbatch == 0)
		return;
	if (scan->local)
	{
		bloom_local_add_batch(scan->shape, scan->local, scan->batch, scan->nbatch);
		scan->local_added += scan->nbatch;
	}
	else
		bg_build_put(shared, scan->batch, scan->nbatch, NULL, 0, 0, 0);
	scan->nbatch = 0;
}

/*
 * Hash the key of every tuple on page blkno that is not dead to everyone
 * (against this scanner's horizon) into the batch, which has room for a
 * page.  See the file header for why this is enough.
 */
static void
bg_scan_page(BgScan *scan, BlockNumber blkno)
{
	Relation	rel = scan->rel;
	const BgKeyDesc *desc = scan->desc;
	OffsetNumber live[MaxHeapTuplesPerPage];
	int			nlive = 0;
	Buffer		buf;
	Page		page;
	MemoryContext oldcxt;
	int			i;

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, scan->strategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (!PageIsNew(page))
	{
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		OffsetNumber off;

		/*
		 * On an all-visible page every tuple is visible to every snapshot,
		 * so none is dead (the flag is cleared, under the exclusive lock,
		 * before a change makes that untrue), as heap scans assume too.
		 */
		bool		all_visible = PageIsAllVisible(page);

		for (off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
		{
			ItemId		lp = PageGetItemId(page, off);
			HeapTupleData tuple;

			if (!ItemIdIsNormal(lp))
				continue;
			if (!all_visible)
			{
				tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
				tuple.t_len = ItemIdGetLength(lp);
				tuple.t_tableOid = RelationGetRelid(rel);
				ItemPointerSet(&tuple.t_self, blkno, off);
				if (HeapTupleSatisfiesVacuum(&tuple, scan->oldest_xmin, buf) == HEAPTUPLE_DEAD)
					continue;
			}
			live[nlive++] = off;
		}
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);

	/*
	 * Our pin keeps the tuples where they are (pruning needs a cleanup
	 * lock), so their keys can be read and hashed without the content
	 * lock, as heap page-at-a-time scans do.
	 */
	oldcxt = MemoryContextSwitchTo(scan->tmpcxt);
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
			values[c] = heap_getattr(&tuple, desc->cols[c].attnum, scan->tupdesc,
									 &isnull);
		if (isnull)
			continue;			/* cannot be seen by a primary key lookup */
		bg_key_colhashes(desc, values, colhashes);
		scan->batch[scan->nbatch++] = bloom_hash_key(scan->shape->seed, colhashes,
													 desc->nkeys);
	}
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(scan->tmpcxt);
	ReleaseBuffer(buf);
}

/*
 * A zeroed private bit array of nwords words, aligned so that each block is
 * one cache line, or NULL if there is not the memory; *space is what to
 * pfree.  A large one (a filter of hundreds of megabytes) is touched all
 * over at random: where the kernel has transparent huge pages, ask for
 * them, so that zeroing it takes a few hundred page faults instead of tens
 * of thousands (each costly in a virtual machine), and setting its bits
 * fewer TLB misses.
 */
static uint64 *
bg_private_array(uint64 nwords, char **space)
{
	Size		bytes = nwords * sizeof(uint64);
	Size		align = bytes >= BG_HUGE_ARRAY ? BG_HUGE_PAGE : 64;
	char	   *start;

	*space = palloc_extended(bytes + align, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (*space == NULL)
		return NULL;
	start = (char *) TYPEALIGN(align, *space);
#ifdef MADV_HUGEPAGE
	if (align == BG_HUGE_PAGE)
		(void) madvise(start, TYPEALIGN_DOWN(BG_HUGE_PAGE, bytes), MADV_HUGEPAGE);
#endif
	memset(start, 0, bytes);
	return (uint64 *) start;
}

/*
 * One scanner of a build (the leader or a parallel worker): take chunks of
 * pages until none are left, add their keys to the generation being built,
 * and, if it set them in a private array, OR that in before returning.
 */
static void
bg_scan_keys(Relation rel, const BgKeyDesc *desc, BgBuildShared *shared)
{
	BgSlot	   *slot = bg_slot(shared->slotindex);
	BgScan		scan;
	char	   *local_space = NULL;
	uint64		nwords;
	bool		ours;

	memset(&scan, 0, sizeof(scan));
	scan.rel = rel;
	scan.desc = desc;
	scan.tupdesc = RelationGetDescr(rel);

	/* the generation's shape, copied while it is certainly still ours */
	scan.shape = palloc(offsetof(BloomFilter, words));
	LWLockAcquire(&slot->lock, LW_SHARED);
	ours = bg_build_ours(shared, slot);
	if (ours)
		memcpy(scan.shape, bg_filter_addr(shared->dp), offsetof(BloomFilter, words));
	LWLockRelease(&slot->lock);
	if (!ours)
		bg_build_gone(shared);

	/* this scanner's own horizon, taken after step 1 (file header) */
	scan.oldest_xmin = GetOldestNonRemovableTransactionId(rel);
	scan.strategy = GetAccessStrategy(BAS_BULKREAD);
	scan.tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "bloomguard build",
										ALLOCSET_DEFAULT_SIZES);
	scan.batch = palloc(sizeof(BloomHash) * BG_BUILD_BATCH);

	/*
	 * A private array, aligned so that each block is one cache line, if the
	 * plan gave room for it; without one (or if it cannot be had) bits go
	 * straight into shared memory, atomically.
	 */
	nwords = bloom_nwords(scan.shape->nbits);
	if (shared->local)
		scan.local = bg_private_array(nwords, &local_space);

	for (;;)
	{
		uint64		first = pg_atomic_fetch_add_u64(&shared->next_block, shared->chunk);
		uint64		end;
		uint64		blkno;

		if (first >= shared->nblocks)
			break;
		end = Min(first + shared->chunk, (uint64) shared->nblocks);
		for (blkno = first; blkno < end; blkno++)
		{
			CHECK_FOR_INTERRUPTS();
			bg_scan_page(&scan, (BlockNumber) blkno);
			if (scan.nbatch > BG_BUILD_BATCH - MaxHeapTuplesPerPage)
				bg_scan_flush(shared, &scan);
		}
		pg_atomic_fetch_add_u64(&shared->pages_done, end - first);
	}
	bg_scan_flush(shared, &scan);

	if (scan.local)
	{
		/*
		 * Scanners run out of pages together; each starts its merge at its
		 * own place in the array, so that they do not OR into the same
		 * cache lines at the same time.
		 */
		uint64		nslices = (nwords + BG_MERGE_SLICE_WORDS - 1) / BG_MERGE_SLICE_WORDS;
		uint64		start = pg_atomic_fetch_add_u64(&shared->merges, 1) * nslices /
			shared->participants;
		uint64		i;

		for (i = 0; i < nslices; i++)
		{
			uint64		first = ((start + i) % nslices) * BG_MERGE_SLICE_WORDS;
			uint64		count = Min(BG_MERGE_SLICE_WORDS, nwords - first);

			CHECK_FOR_INTERRUPTS();
			bg_build_put(shared, NULL, 0, scan.local, first, count,
						 i == nslices - 1 ? scan.local_added : 0);
		}
		pfree(local_space);
	}

	FreeAccessStrategy(scan.strategy);
	pfree(scan.shape);
	pfree(scan.batch);
	MemoryContextDelete(scan.tmpcxt);
}

/*
 * The lock a build holds on its table, the leader's and its workers' (a
 * worker takes the same mode, in the leader's lock group): during recovery
 * only AccessShareLock can be taken.
 */
static LOCKMODE
bg_build_lockmode(void)
{
	return RecoveryInProgress() ? AccessShareLock : ShareUpdateExclusiveLock;
}

/*
 * The parallel workers a build of rel should ask for, and whether each
 * participant sets bits in a private array of filter_bytes (*local).  The
 * rule is CREATE INDEX's: the table's parallel_workers setting, or else
 * one worker from min_parallel_table_scan_size on and one more each time
 * the table triples, within max_parallel_maintenance_workers; and, as
 * CREATE INDEX does for its sort memory, fewer workers when
 * maintenance_work_mem cannot hold a private array for each participant.
 * A filter larger than maintenance_work_mem is built straight into shared
 * memory, with atomic ORs, by as many participants as planned.  No
 * workers for the background worker's builds (file header), or when a key
 * column's hash function is not parallel safe.
 */
static int
bg_build_workers(Relation rel, const BgKeyDesc *desc, BlockNumber nblocks,
				 Size filter_bytes, bool *local)
{
	Size		mem = (Size) maintenance_work_mem * 1024;
	int			nworkers;
	int			i;

	*local = filter_bytes <= mem;
	if (bg_is_background_worker() || !IsUnderPostmaster || IsInParallelMode() ||
		max_parallel_maintenance_workers == 0)
		return 0;
	for (i = 0; i < desc->nkeys; i++)
	{
		if (desc->cols[i].method == BG_HASH_FMGR &&
			func_parallel(desc->cols[i].hashfn.fn_oid) != PROPARALLEL_SAFE)
			return 0;
	}

	nworkers = RelationGetParallelWorkers(rel, -1);
	if (nworkers < 0)
	{
		double		threshold = Max(min_parallel_table_scan_size, 1);

		if (nblocks < (BlockNumber) min_parallel_table_scan_size)
			return 0;
		nworkers = 1;
		while (nblocks >= threshold * 3)
		{
			nworkers++;
			threshold *= 3;
		}
	}
	nworkers = Min(nworkers, max_parallel_maintenance_workers);
	if (*local)
	{
		while (nworkers > 0 && (Size) (nworkers + 1) * filter_bytes > mem)
			nworkers--;
	}
	return nworkers;
}

/*
 * A parallel worker of a build: open the table under the leader's lock
 * (its lock group's), check it hashes the same key, and scan.
 */
void
bloomguard_build_worker_main(dsm_segment *seg, shm_toc *toc)
{
	BgBuildShared *shared = shm_toc_lookup(toc, BG_BUILD_KEY_SHARED, false);
	Relation	rel;
	BgKeyDesc  *desc;
	BgKeyIdentity key;

	pgstat_report_activity(STATE_RUNNING, "bloomguard: building filter (parallel worker)");
	rel = table_open(shared->relid, shared->lockmode);
	desc = bg_keydesc_build(rel, false, true);
	bg_keydesc_identity(desc, &key);
	if (!bg_identity_equal(&key, &shared->key))
		elog(ERROR, "bloomguard: the key of relation %u changed during a build",
			 shared->relid);
	bg_scan_keys(rel, desc, shared);
	table_close(rel, shared->lockmode);
}

/*
 * Step 2: scan the table into the generation being built, with as many
 * parallel workers as bg_build_workers() plans and the server has, the
 * leader taking part.  Returns only once every scanner has finished and
 * every page was scanned; on any error the workers are stopped before it
 * is rethrown.  Returns the number of workers that ran.
 */
static int
bg_build_scan(Relation rel, const BgKeyDesc *desc, BgBuildState *bs)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);
	ParallelContext *pcxt = NULL;
	BgBuildShared *shared;
	uint64		pages_done;
	bool		local;
	int			nworkers = bg_build_workers(rel, desc, nblocks, bs->bytes, &local);
	int			launched = 0;

	if (nworkers > 0)
	{
		EnterParallelMode();
		pcxt = CreateParallelContext("bloomguard", "bloomguard_build_worker_main",
									 nworkers);
		shm_toc_estimate_chunk(&pcxt->estimator, sizeof(BgBuildShared));
		shm_toc_estimate_keys(&pcxt->estimator, 1);
		InitializeParallelDSM(pcxt);
		shared = shm_toc_allocate(pcxt->toc, sizeof(BgBuildShared));
	}
	else
		shared = palloc(sizeof(BgBuildShared));

	shared->relid = RelationGetRelid(rel);
	shared->lockmode = bg_build_lockmode();
	shared->slotindex = bs->slotindex;
	shared->incarnation = bs->incarnation;
	shared->dp = bs->dp;
	shared->seed = bs->filter->seed;
	bg_keydesc_identity(desc, &shared->key);
	shared->nblocks = nblocks;
	shared->chunk = Max(1, Min(8192, nblocks / 2048));
	shared->local = local;
	shared->participants = nworkers + 1;
	pg_atomic_init_u64(&shared->next_block, 0);
	pg_atomic_init_u64(&shared->pages_done, 0);
	pg_atomic_init_u64(&shared->merges, 0);

	if (pcxt)
	{
		shm_toc_insert(pcxt->toc, BG_BUILD_KEY_SHARED, shared);
		LaunchParallelWorkers(pcxt);
		launched = pcxt->nworkers_launched;
	}

	PG_TRY();
	{
		if (launched == 0 || parallel_leader_participation)
			bg_scan_keys(rel, desc, shared);
		if (pcxt)
			WaitForParallelWorkersToFinish(pcxt);
	}
	PG_CATCH();
	{
		/* stop the workers before the caller frees the generation */
		if (pcxt)
		{
			HOLD_INTERRUPTS();
			DestroyParallelContext(pcxt);
			ExitParallelMode();
			RESUME_INTERRUPTS();
		}
		PG_RE_THROW();
	}
	PG_END_TRY();

	pages_done = pg_atomic_read_u64(&shared->pages_done);
	if (pcxt)
	{
		DestroyParallelContext(pcxt);
		ExitParallelMode();
	}
	else
		pfree(shared);
	if (pages_done != nblocks)
		elog(ERROR, "bloomguard: the build of relation %u scanned " UINT64_FORMAT " of %u pages",
			 RelationGetRelid(rel), pages_done, nblocks);
	return launched;
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
	char		broken_why[sizeof(((BgSlot *) NULL)->last_error)];
	int			workers = 0;
	MemoryContext oldcxt = CurrentMemoryContext;
	TransactionId feed_version;

	bg_keydesc_identity(desc, &key);

	/*
	 * The feed trigger's row as the scan starts (attach creates the trigger
	 * after bg_build_begin()): a change during the scan, which only a
	 * standby's build can see, leaves the filter with an older version,
	 * and a lookup untrusts it.
	 */
	bs->trigger_version = bg_feed_trigger_version(RelationGetRelid(rel));
	(void) bg_feed_check(rel, &feed_version);

	PG_TRY();
	{
		pgstat_report_activity(STATE_RUNNING, "bloomguard: building filter");
		workers = bg_build_scan(rel, desc, bs);
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
	strlcpy(broken_why, slot->last_error, sizeof(broken_why));
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
	/* read before the lock: the caller checked that the trigger is in place */
	slot->feed_version = feed_version;
	slot->trigger_version = bs->trigger_version;
	slot->built_at = GetCurrentTimestamp();
	slot->build_seconds = (double) (slot->built_at - bs->start) / USECS_PER_SEC;
	slot->relfilenode = bg_rel_filenumber(rel);
	slot->relfilenode_verified = true;
	slot->permanent = rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
	slot->source = BG_SOURCE_BUILT;
	slot->source_at = slot->built_at;
	slot->build_workers = workers;
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
				 errmsg("the guard of table \"%s\" stays untrusted after its build",
						RelationGetRelationName(rel)),
				 errdetail("The guard was marked untrusted during the build: %s.", broken_why),
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
	keys = bloom_estimated_keys(copy.nbits, copy.nhashes, copy.block_bits,
								copy.bits_set, &full);
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
	lockmode = bg_build_lockmode();
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
