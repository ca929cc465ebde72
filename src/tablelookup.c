/*-------------------------------------------------------------------------
 *
 * tablelookup.c
 *	  The authoritative lookup: reading the table.
 *
 * When the filter says "maybe", or cannot be trusted, guarded_exists()
 * must return exactly what EXISTS (SELECT 1 FROM t WHERE (pk...) =
 * (key...)) returns for the caller's role and snapshot.  Two ways:
 *
 *	- bg_index_probe(): a primary key index probe from C under the active
 *	  snapshot, like an index-only scan.  Used when it gives the query's
 *	  answer: an ordinary heap table whose rows are in it (tablekind.c:
 *	  not a Citus shell), without inheritance children and without
 *	  row-level security for this role, and key values of the key's types.
 *	- bg_sql_lookup(): the EXISTS query itself through SPI, with the
 *	  caller's snapshot and privileges, so row-level security and
 *	  inheritance apply as for any query.  With arguments of other types it
 *	  passes them with their own types, so "=" means what it means in SQL.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "catalog/pg_operator.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bloomguard.h"

/* The schema of an operator. */
static Oid
bg_operator_namespace(Oid opno)
{
	HeapTuple	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	Oid			result;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator %u", opno);
	result = ((Form_pg_operator) GETSTRUCT(tup))->oprnamespace;
	ReleaseSysCache(tup);
	return result;
}

/*
 * Probe the primary key index under the active snapshot.  Like an
 * index-only scan: a match on an all-visible heap page is visible to every
 * snapshot, so the heap is read only for pages the visibility map does not
 * vouch for.  Predicate locks are taken as an index-only scan takes them.
 */
bool
bg_index_probe(Relation rel, const BgKeyDesc *desc, const Datum *values)
{
	Relation	idx = index_open(desc->indexoid, AccessShareLock);
	ScanKeyData skeys[INDEX_MAX_KEYS];
	IndexScanDesc scan;
	TupleTableSlot *slot = NULL;
	Snapshot	snapshot = GetActiveSnapshot();
	Buffer		vmbuffer = InvalidBuffer;
	ItemPointer tid;
	bool		found = false;
	int			i;

	for (i = 0; i < desc->nkeys; i++)
		ScanKeyEntryInitialize(&skeys[i], 0, i + 1, BTEqualStrategyNumber,
							   InvalidOid, desc->cols[i].collation,
							   desc->cols[i].eqproc, values[i]);

	scan = bg_index_beginscan(rel, idx, snapshot, desc->nkeys, 0);
	index_rescan(scan, skeys, desc->nkeys, NULL, 0);
	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		if (VM_ALL_VISIBLE(rel, ItemPointerGetBlockNumber(tid), &vmbuffer))
		{
			PredicateLockPage(rel, ItemPointerGetBlockNumber(tid), snapshot);
			found = true;
			break;
		}
		if (slot == NULL)
			slot = table_slot_create(rel, NULL);
		if (index_fetch_heap(scan, slot))
		{
			found = true;
			break;
		}
	}
	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	index_endscan(scan);
	if (slot)
		ExecDropSingleTupleTableSlot(slot);
	index_close(idx, AccessShareLock);
	return found;
}

/*
 * Run EXISTS (SELECT 1 FROM t WHERE k1 = $1 AND ...) through SPI, under the
 * caller's snapshot, with row-level security and inheritance applied as
 * for any query.  With typed, params keep their own types (types[]) and
 * the caller's "=" resolution, and collations[] (if not NULL) names the
 * collation of those whose argument carried one; otherwise they are key values and the key's
 * own equality operators are named explicitly.
 */
bool
bg_sql_lookup(Relation rel, const BgKeyDesc *desc, const Datum *params,
			  const Oid *types, const Oid *collations, bool typed)
{
	StringInfoData q;
	Oid			argtypes[INDEX_MAX_KEYS];
	Datum		result;
	bool		isnull;
	int			ret;
	int			i;

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT EXISTS (SELECT 1 FROM %s WHERE ",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												RelationGetRelationName(rel)));
	for (i = 0; i < desc->nkeys; i++)
	{
		const BgKeyColumn *col = &desc->cols[i];
		char	   *colname = get_attname(RelationGetRelid(rel), col->attnum, false);

		if (i > 0)
			appendStringInfoString(&q, " AND ");
		if (typed)
		{
			appendStringInfo(&q, "%s = $%d", quote_identifier(colname), i + 1);
			if (collations != NULL && OidIsValid(collations[i]))
				appendStringInfo(&q, " COLLATE %s", generate_collation_name(collations[i]));
			argtypes[i] = types[i];
		}
		else
		{
			appendStringInfo(&q, "%s OPERATOR(%s.=) $%d",
							 quote_identifier(colname),
							 quote_identifier(get_namespace_name(bg_operator_namespace(col->eqop))),
							 i + 1);
			argtypes[i] = col->basetype;
		}
	}
	appendStringInfoChar(&q, ')');

	/*
	 * Not a saved plan: fn_extra (and so anything keyed to it) is new at
	 * every execution of a prepared statement, and a kept plan would leak.
	 * read_only: run under the caller's current snapshot.
	 */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args(q.data, desc->nkeys, argtypes, (Datum *) params,
								NULL, true, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "bloomguard lookup query failed: %s", SPI_result_code_string(ret));
	result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	SPI_finish();
	pfree(q.data);
	return DatumGetBool(result);
}
