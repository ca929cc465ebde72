/*-------------------------------------------------------------------------
 *
 * buildscan.c
 *	  Step 2 of a build: the scan of the table into the generation being
 *	  built, by the building backend and parallel workers.
 *
 * build.c publishes the generation (step 1), calls bg_build_scan(), and
 * swaps (step 3); its header has the protocol and the argument that a scan
 * of every page misses no key.  This file holds the scan: which pages and
 * tuples, how many scanners, and how their bits reach the generation.
 *
 * Several scanners.  Step 2 may be shared by the building backend (the
 * leader) and parallel workers (bg_build_scan()).  The argument in build.c's
 * header is about one page at a time, and it still holds for each page
 * whoever scans it, because of four things:
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
 * Locking.  Every scanner holds the table in the leader's lock mode
 * (bg_build_lockmode(); a worker takes it in the leader's lock group),
 * each page's content lock while it decides which tuples are not dead,
 * and the slot lock in shared mode only inside slot.c's
 * bg_slot_building_shape() and bg_slot_building_put(), which check the
 * generation is still this build's before it is read or written.  No
 * scanner holds two of these at a time but the table lock.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/heapam.h"
#include "access/parallel.h"
#include "access/table.h"
#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/pg_proc.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "optimizer/paths.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"

/*
 * What the scanners of one build share: in the parallel context's dynamic
 * shared memory when there are workers, in the leader's memory when not.
 */
typedef struct BgBuildShared
{
	/* set by the leader before any worker starts, read-only afterwards */
	Oid			relid;
	BgGeneration gen;			/* the generation being built */
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
 * Put keys into the generation being built (bg_slot_building_put()), or
 * error out if it is not this build's any more (the file header says why).
 */
static void
bg_build_put(const BgBuildShared *shared, const BloomHash *hashes, int n,
			 const uint64 *local, uint64 first, uint64 count, uint64 nadded)
{
	if (!bg_slot_building_put(&shared->gen, hashes, n, local, first, count, nadded))
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
	BgScan		scan;
	char	   *local_space = NULL;
	uint64		nwords;

	memset(&scan, 0, sizeof(scan));
	scan.rel = rel;
	scan.desc = desc;
	scan.tupdesc = RelationGetDescr(rel);

	/* the generation's shape, copied while it is certainly still ours */
	scan.shape = palloc(offsetof(BloomFilter, words));
	if (!bg_slot_building_shape(&shared->gen, scan.shape))
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
LOCKMODE
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
int
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
	shared->gen.slotindex = bs->slotindex;
	shared->gen.incarnation = bs->incarnation;
	shared->gen.dp = bs->dp;
	shared->gen.seed = bs->filter->seed;
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
