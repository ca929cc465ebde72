/*-------------------------------------------------------------------------
 *
 * sizing.c
 *	  How big a guard's filter is: validating what the user asked for, and
 *	  choosing a capacity when nobody did.
 *
 * One policy, used by attach's default, by a rebuild that grows with its
 * table, by the background worker's automatic resize and by the health
 * view's advice (bg_choose_capacity()): a filter should hold twice the
 * keys it must represent, where that is the larger of the table's live
 * row count (bg_live_rows(); attach, which has no statistics to go by
 * for a new guard, uses the planner's estimate) and the number of
 * distinct keys the current filter holds (estimated from its fill, which
 * duplicates do not raise).
 * n_added is never used for sizing: it counts every add, so a table whose
 * keys are re-added (an UPDATE that moves a key back and forth) would grow
 * its filter without bound.  Whether a chosen capacity fits in the memory
 * caps now is bg_capacity_fits() (the caps themselves are shmem.c's).
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bloomguard.h"

/* bloomguard.default_error_rate (bg_sizing_init() defines it) */
#define BG_ERROR_RATE_DEFAULT		0.01
#define BG_ERROR_RATE_MIN			1e-9
#define BG_ERROR_RATE_MAX			0.5
static double bg_default_error_rate = BG_ERROR_RATE_DEFAULT;

/* Validate a capacity given at the SQL boundary (attach, rebuild). */
void
bg_check_capacity(int64 capacity)
{
	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be greater than zero"),
				 errdetail("The capacity given was " INT64_FORMAT ".", capacity)));
}

/* Validate an error rate given at the SQL boundary (attach, rebuild). */
void
bg_check_error_rate(double error_rate)
{
	if (isnan(error_rate) || error_rate <= 0.0 || error_rate >= 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("error_rate must be greater than 0 and less than 1"),
				 errdetail("The error rate given was %g.", error_rate)));
}

/*
 * The shape and size in bytes of a filter for a valid capacity and error
 * rate; an error if it would be too large.
 */
void
bg_filter_size(int64 capacity, double error_rate,
			   uint64 *nbits, int *nhashes, Size *bytes)
{
	if (!bloom_size((double) capacity, error_rate, nbits, nhashes))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("filter for capacity " INT64_FORMAT " at error rate %g is too large",
						capacity, error_rate),
				 errdetail("A filter may have at most " UINT64_FORMAT " bits.",
						   BLOOM_MAX_BITS)));
	*bytes = bloom_filter_bytes(*nbits);
}

/*
 * The table's row count as the planner would estimate it now: the last
 * ANALYZE's density times the current number of pages, or, for a table
 * never analyzed, the pages divided by the estimated row width.  Unlike
 * estimate_rel_size() we do not pretend an empty table has ten pages.  A
 * relation without storage (a partitioned table: its leaves are sized one
 * by one) has no pages to ask about, and no rows of its own.
 */
double
bg_estimate_rows(Relation rel)
{
	BlockNumber curpages;
	double		reltuples = rel->rd_rel->reltuples;
	BlockNumber relpages = rel->rd_rel->relpages;
	int32		width;

	if (!RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		return 0;
	curpages = RelationGetNumberOfBlocks(rel);
	if (curpages == 0)
		return 0;
	if (reltuples >= 0 && relpages > 0)
		return rint(reltuples / relpages * curpages);
	width = get_rel_data_width(rel, NULL) +
		MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData);
	return rint((double) curpages * (BLCKSZ - SizeOfPageHeaderData) / width);
}

/*
 * The table's live rows now, as the statistics system counts them (what
 * autovacuum goes by: inserts and deletes keep it current, and dead row
 * versions, which a table whose keys move piles up, do not count), or,
 * without an entry there (statistics are lost in a crash), the last
 * ANALYZE's count.  Takes no lock on the table.
 */
double
bg_live_rows(Oid relid)
{
	PgStat_StatTabEntry *entry = pgstat_fetch_stat_tabentry(relid);
	HeapTuple	tup;
	double		rows = 0;

	if (entry != NULL)
		return (double) Max(bg_stat_live_tuples(entry), 0);
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (HeapTupleIsValid(tup))
	{
		rows = Max(((Form_pg_class) GETSTRUCT(tup))->reltuples, 0);
		ReleaseSysCache(tup);
	}
	return rows;
}

/*
 * The capacity a guard's filter should have (see the file header): twice
 * the larger of the table's estimated rows and the distinct keys its
 * filter holds now (0 when there is no filter), and at least
 * BG_MIN_CAPACITY.  A filter whose every bit is set (full) has no
 * estimate of its keys; then the current capacity doubles.
 */
int64
bg_choose_capacity(double rows, double distinct_keys, bool full, int64 current)
{
	double		need = Max(rows, distinct_keys);
	double		capacity;

	if (full)
		need = Max(need, (double) current);
	capacity = ceil(2.0 * need);
	if (capacity < BG_MIN_CAPACITY)
		capacity = BG_MIN_CAPACITY;
	if (capacity > (double) (PG_INT64_MAX / 2))
		capacity = (double) (PG_INT64_MAX / 2);
	return (int64) capacity;
}

/*
 * Would a filter of capacity at error_rate fit under the memory caps now,
 * next to the filters there are (a resize's new generation, which lives
 * beside the serving one until the swap)?
 */
bool
bg_capacity_fits(int64 capacity, double error_rate)
{
	uint64		nbits;
	int			nhashes;

	return bloom_size((double) capacity, error_rate, &nbits, &nhashes) &&
		bg_memory_fits(bloom_filter_bytes(nbits));
}

/* The target false-positive rate of a filter made without one. */
double
bg_error_rate_default(void)
{
	return bg_default_error_rate;
}

/*
 * Define bloomguard.default_error_rate; called from _PG_init, preloaded or
 * not (README's Settings: it exists wherever the library is loaded).
 */
void
bg_sizing_init(void)
{
	DefineCustomRealVariable("bloomguard.default_error_rate",
							 "Target false-positive rate of new filters when none is given.",
							 NULL,
							 &bg_default_error_rate,
							 BG_ERROR_RATE_DEFAULT,
							 BG_ERROR_RATE_MIN,
							 BG_ERROR_RATE_MAX,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}
