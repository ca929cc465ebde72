/*-------------------------------------------------------------------------
 *
 * citusask.c
 *	  A Citus distributed or reference table seen from any node with
 *	  Citus's metadata: bloomguard_check() of the shell asks the shard
 *	  that holds the key, and bloomguard_placements() (behind the view
 *	  bloomguard_distributed_health) asks every placement for its health.
 *
 * citus.c keeps each placement guarded on its own node; this file only
 * reads.  Both functions reach the placements through Citus's own
 * functions, which open connections of their own, outside the caller's
 * transaction:
 *	- bloomguard_check(shell, key...) maps the key to its shard with
 *	  get_shard_id_for_distribution_column() (a reference table has one
 *	  shard), and runs bloomguard_check(shard, key...) on each active
 *	  placement of it through master_run_on_worker().  The answer is the
 *	  weakest of theirs: 'absent' only when every placement's filter rules
 *	  the key out, 'unknown' when any placement has no trusted filter.  The
 *	  filter's answer does not depend on the caller's snapshot, so asking
 *	  from another session is sound; a key that the caller's own
 *	  transaction wrote and has not committed may be answered 'absent'
 *	  there, as bloomguard_check() on the shard itself, in another session,
 *	  would.  guarded_exists() needs the caller's snapshot, so it is not
 *	  answered here: its EXISTS query goes through Citus's router, inside
 *	  the caller's distributed transaction, and on the worker the
 *	  planner path (planner.c) asks the shard's guard before the index.
 *	- bloomguard_placements() runs, for each guarded shell the caller may
 *	  see, a query of bloomguard_health on every placement through
 *	  run_command_on_placements(), and returns each placement's row as
 *	  JSON text (null when its node has no row for it), or the error that
 *	  Citus reported for it.  The view turns them into typed columns and
 *	  adds a row per table.  JSON keeps it working against a node whose
 *	  bloomguard has fewer columns (not updated yet): they are null.
 *
 * What is recognised: the shells that tablekind.c calls distributed or
 * reference tables, on a node where Citus is installed.  Anything else
 * keeps the single-node behaviour (bloomguard_check() says 'unknown' for
 * a shell's own filter, which is never trusted; the view has no rows).
 *
 * Locking.  AccessShareLock on each shell, for the statement; the remote
 * queries take what bloomguard_check() and bloomguard_health take on
 * their nodes.  Nothing here writes.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_placements);

/* The extension's schema, quoted, for the queries run on other nodes. */
static const char *
bg_remote_schema(void)
{
	return quote_identifier(get_namespace_name(bg_extension_schema()));
}

/*
 * The text of key column i's value, for a query on another node: a quoted
 * literal cast to the column's type, qualified.
 */
static char *
bg_key_literal(const BgKeyColumn *col, Datum value)
{
	Oid			outfn;
	bool		isvarlena;

	getTypeOutputInfo(col->basetype, &outfn, &isvarlena);
	return psprintf("%s::%s", quote_literal_cstr(OidOutputFunctionCall(outfn, value)),
					format_type_be_qualified(col->basetype));
}

/*
 * The text of the shell's distribution column's value among the key's
 * values, or NULL for a table without a distribution column (a reference
 * table).  Citus requires a distributed table's primary key to include
 * its distribution column.
 */
static char *
bg_distribution_value(Relation rel, const BgKeyDesc *desc, const Datum *values)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];
	char	   *column = NULL;
	AttrNumber	attnum;
	int			i;

	args[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	if (SPI_execute_with_args("SELECT pg_catalog.column_to_column_name(logicalrelid, partkey)"
							  " FROM pg_catalog.pg_dist_partition"
							  " WHERE logicalrelid OPERATOR(pg_catalog.=) $1 AND partkey IS NOT NULL",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	if (SPI_processed > 0)
		column = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (column == NULL)
		return NULL;
	attnum = get_attnum(RelationGetRelid(rel), column);
	for (i = 0; i < desc->nkeys; i++)
	{
		Oid			outfn;
		bool		isvarlena;

		if (desc->cols[i].attnum != attnum)
			continue;
		getTypeOutputInfo(desc->cols[i].basetype, &outfn, &isvarlena);
		return OidOutputFunctionCall(outfn, values[i]);
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the primary key of Citus table \"%s\" does not include its distribution column \"%s\"",
					RelationGetRelationName(rel), column)));
	return NULL;				/* keep the compiler quiet */
}

/* How weak an answer is: the combined answer is the weakest. */
static int
bg_answer_weakness(BgAnswer answer)
{
	switch (answer)
	{
		case BG_ANSWER_ABSENT:
			return 0;
		case BG_ANSWER_MAYBE:
			return 1;
		case BG_ANSWER_UNKNOWN:
			break;
	}
	return 2;
}

/*
 * bloomguard_check() of a Citus distributed or reference table (the file
 * header): the answer of the filters of the placements of the shard that
 * holds the key.  values[] is the key, converted to the key's types.
 */
BgAnswer
bg_citus_check(Relation rel, const BgKeyDesc *desc, const Datum *values)
{
	const char *name = RelationGetRelationName(rel);
	Oid			argtypes[2] = {REGCLASSOID, TEXTOID};
	Datum		args[2];
	char		nulls[2] = {' ', ' '};
	char	   *distvalue;
	StringInfoData keys;
	StringInfoData query;
	BgAnswer	answer = BG_ANSWER_ABSENT;
	uint64		nplacements;
	uint64		i;
	int			k;

	initStringInfo(&keys);
	for (k = 0; k < desc->nkeys; k++)
		appendStringInfo(&keys, ", %s", bg_key_literal(&desc->cols[k], values[k]));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	distvalue = bg_distribution_value(rel, desc, values);
	args[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	if (distvalue != NULL)
		args[1] = CStringGetTextDatum(distvalue);
	else
		nulls[1] = 'n';

	/*
	 * The shard's active placements, and for each the call to run there;
	 * then run them, all at once.
	 */
	initStringInfo(&query);
	appendStringInfo(&query,
					 "WITH s AS (SELECT pg_catalog.get_shard_id_for_distribution_column($1, $2) AS shardid),"
					 " p AS (SELECT pg_catalog.array_agg(n.nodename ORDER BY n.groupid) AS names,"
					 "   pg_catalog.array_agg(n.nodeport ORDER BY n.groupid) AS ports,"
					 "   pg_catalog.array_agg(pg_catalog.format('SELECT %%s.bloomguard_check(%%L::pg_catalog.regclass%%s)',"
					 "                     %s, pg_catalog.shard_name($1, s.shardid), %s) ORDER BY n.groupid) AS commands"
					 "   FROM s JOIN pg_catalog.pg_dist_placement pl ON pl.shardid OPERATOR(pg_catalog.=) s.shardid"
					 "   JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) pl.groupid"
					 "  WHERE pl.shardstate OPERATOR(pg_catalog.=) 1 AND n.isactive)"
					 " SELECT r.node_name, r.node_port, r.success, r.result"
					 "   FROM p, pg_catalog.master_run_on_worker(p.names, p.ports, p.commands, true) r"
					 "  WHERE p.names IS NOT NULL",
					 quote_literal_cstr(bg_remote_schema()), quote_literal_cstr(keys.data));
	if (SPI_execute_with_args(query.data, 2, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not ask the placements of \"%s\"", name);
	nplacements = SPI_processed;
	for (i = 0; i < nplacements; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	tupdesc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		success = SPI_getbinval(tup, tupdesc, 3, &isnull);
		char	   *result = SPI_getvalue(tup, tupdesc, 4);
		BgAnswer	one;

		if (isnull || !DatumGetBool(success))
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_EXCEPTION),
					 errmsg("could not ask the guard of a placement of Citus table \"%s\" on node %s:%s",
							name, SPI_getvalue(tup, tupdesc, 1), SPI_getvalue(tup, tupdesc, 2)),
					 errdetail_internal("%s", result ? result : "(no result)"),
					 errhint("bloomguard_check() on a Citus table asks each placement of the key's shard on its node; bloomguard must be installed there.")));
		if (result != NULL && strcmp(result, "absent") == 0)
			one = BG_ANSWER_ABSENT;
		else if (result != NULL && strcmp(result, "maybe") == 0)
			one = BG_ANSWER_MAYBE;
		else
			one = BG_ANSWER_UNKNOWN;
		if (bg_answer_weakness(one) > bg_answer_weakness(answer))
			answer = one;
	}
	SPI_finish();
	/* no active placement: nothing can answer for the shard */
	return nplacements > 0 ? answer : BG_ANSWER_UNKNOWN;
}

/*
 * The guarded Citus shells the caller may see, in OID order: distributed
 * and reference tables whose feed trigger is in place.
 */
static List *
bg_guarded_shells(void)
{
	List	   *shells = NIL;
	List	   *candidates = NIL;
	ListCell   *lc;
	uint64		i;

	if (SPI_execute("SELECT logicalrelid::pg_catalog.oid FROM pg_catalog.pg_dist_partition"
					" ORDER BY 1", true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			candidates = lappend_oid(candidates, DatumGetObjectId(d));
	}
	foreach(lc, candidates)
	{
		Oid			relid = lfirst_oid(lc);
		Relation	rel;

		if (!bg_may_see_guard(relid) ||
			!bg_citus_guards_through_shards(bg_table_kind_by_oid(relid)))
			continue;
		rel = try_relation_open(relid, AccessShareLock);
		if (rel == NULL)
			continue;			/* dropped meanwhile */
		if (bg_feed_state(rel) == BG_FEED_IN_PLACE)
			shells = lappend_oid(shells, relid);
		relation_close(rel, NoLock);
	}
	list_free(candidates);
	return shells;
}

/*
 * bloomguard_placements(OUT relation regclass, OUT shardid int8,
 *		OUT nodename text, OUT nodeport int4, OUT success bool,
 *		OUT health text) returns setof record
 *
 * For every placement of every guarded Citus shell the caller may see,
 * its node's bloomguard_health row as JSON text (without the relation and
 * parent columns, which name objects of that node), 'null' when the node
 * has no row for it, or, with success false, Citus's error.  No rows on a
 * node without Citus.
 */
Datum
bloomguard_placements(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *shells;
	ListCell   *lc;
	char	   *command;

	InitMaterializedSRF(fcinfo, 0);
	if (!bg_citus_present())
		return (Datum) 0;

	command = psprintf("SELECT COALESCE((SELECT (pg_catalog.to_jsonb(h)"
					   " OPERATOR(pg_catalog.-) 'relation'::pg_catalog.text"
					   " OPERATOR(pg_catalog.-) 'parent'::pg_catalog.text)::pg_catalog.text"
					   " FROM %s.bloomguard_health h"
					   " WHERE h.relation::pg_catalog.oid OPERATOR(pg_catalog.=) '%%s'::pg_catalog.regclass::pg_catalog.oid),"
					   " 'null')",
					   bg_remote_schema());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	shells = bg_guarded_shells();
	foreach(lc, shells)
	{
		Oid			argtypes[2] = {REGCLASSOID, TEXTOID};
		Datum		args[2];
		uint64		i;

		args[0] = ObjectIdGetDatum(lfirst_oid(lc));
		args[1] = CStringGetTextDatum(command);
		if (SPI_execute_with_args("SELECT shardid, nodename, nodeport, success, result"
								  " FROM pg_catalog.run_command_on_placements($1, $2)"
								  " ORDER BY shardid, nodename, nodeport",
								  2, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not ask the placements of \"%s\"", get_rel_name(lfirst_oid(lc)));
		for (i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			TupleDesc	tupdesc = SPI_tuptable->tupdesc;
			Datum		values[6];
			bool		nulls[6] = {false, false, false, false, false, false};
			int			col;

			/* shardid, nodename, nodeport, success, result */
			values[0] = ObjectIdGetDatum(lfirst_oid(lc));
			for (col = 1; col <= 5; col++)
				values[col] = SPI_getbinval(tup, tupdesc, col, &nulls[col]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	SPI_finish();
	return (Datum) 0;
}
