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
 *	  the key out, 'unknown' when any placement has no trusted filter.
 *	  guarded_exists() is not answered here: its EXISTS query goes through
 *	  Citus's router, inside the caller's distributed transaction, and on
 *	  the worker the planner path (planner.c) asks the shard's guard
 *	  before the index.
 *	- bloomguard_placements() runs, for each guarded shell the caller may
 *	  see, a query of bloomguard_health on every placement through
 *	  master_run_on_worker(), and returns each placement's row as JSON
 *	  text (null when its node has no row for it), or the error that
 *	  Citus reported for it.  The view turns them into typed columns and
 *	  adds a row per table.  JSON keeps it working against a node whose
 *	  bloomguard has fewer columns (not updated yet): they are null.
 *
 * Why asking from other sessions is sound.  A filter has every key of
 * every committed row of its placement (build.c, trust.c), and a
 * placement's filter is asked on its node like any table's.  What another
 * session cannot see is what the caller's own transaction wrote: the keys
 * its writes on a worker buffered in that worker's backend (feedbuffer.c
 * flushes them at that backend's next statement or commit).  So the
 * placements are asked only in a statement that starts its transaction
 * (bg_citus_check_fresh()): outside a transaction block (explicit, or the
 * implicit one of a multi-statement query string), the transaction's
 * first command (a write earlier in the statement, in a function, marks
 * the command ID used: the next command gets another), no transaction
 * ID, and a top-level statement that is a SELECT without data-modifying
 * WITH.  Anywhere else the answer is 'unknown'.  The last test is not
 * enough alone: Citus's router plans do not carry hasModifyingCTE.  It
 * need not be: the rows a statement writes are not visible to its own
 * snapshot, so EXISTS there does not see them either.  The statement's snapshot is
 * taken when it starts, before the placements are read, so a placement
 * that a move retires meanwhile still holds every key the statement could
 * see.  The key goes to the other node as text, with the settings that
 * change how a value is written (DateStyle, IntervalStyle,
 * extra_float_digits) at fixed values for the call, as postgres_fdw does,
 * and cast to its type without a type modifier (char(n), bit(n): a cast
 * to "character" would cut the value to one character).
 *
 * What is recognised: the shells that tablekind.c calls distributed or
 * reference tables, on a node where Citus is installed; bloomguard_check()
 * routes a key only for a hash or range distributed table, a reference
 * table and a single-shard table (an append-distributed table's shards
 * may overlap).  Anything else keeps the single-node behaviour
 * (bloomguard_check() says 'unknown' for a shell's own filter, which is
 * never trusted; the view has no rows).  The nodes asked are the active
 * primaries holding an active placement (pg_dist_placement shardstate 1,
 * pg_dist_node isactive and noderole 'primary'), each shard named
 * schema-qualified (shard_name(..., false)) and passed as a literal.
 *
 * Locking.  bloomguard_check() holds AccessShareLock on its shell, for
 * the statement; bloomguard_placements() opens no table (it reads the
 * catalogs, as bloomguard_health does).  The remote queries take what
 * bloomguard_check() and bloomguard_health take on their nodes
 * (AccessShareLock on the shard; none).  Since
 * bloomguard_check() asks only at the start of a transaction, its caller
 * holds no lock that those could wait for unseen.  Nothing here writes.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "tcop/pquery.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/portal.h"
#include "utils/rel.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_placements);

/* The extension's schema, quoted, for the queries run on other nodes. */
static const char *
bg_remote_schema(void)
{
	return quote_identifier(get_namespace_name(bg_extension_schema()));
}

/* The same, for a format() template: every % doubled. */
static char *
bg_remote_schema_template(void)
{
	const char *schema = bg_remote_schema();
	StringInfoData buf;

	initStringInfo(&buf);
	for (; *schema; schema++)
	{
		if (*schema == '%')
			appendStringInfoChar(&buf, '%');
		appendStringInfoChar(&buf, *schema);
	}
	return buf.data;
}

/*
 * Set the settings that change how values are written to text (and read
 * back) to fixed values until AtEOXact_GUC(true, the level returned), as
 * postgres_fdw's set_transmission_modes() does.
 */
static int
bg_set_transmission_modes(void)
{
	int			nest = NewGUCNestLevel();

	if (DateStyle != USE_ISO_DATES)
		(void) set_config_option("datestyle", "ISO", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	if (IntervalStyle != INTSTYLE_POSTGRES)
		(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	if (extra_float_digits < 3)
		(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	return nest;
}

/*
 * May this call's placements be asked from other sessions (the file
 * header)?  Only in a statement that starts its transaction and writes
 * nothing.
 */
static bool
bg_citus_check_fresh(void)
{
	ListCell   *lc;

	if (IsTransactionBlock() || IsSubTransaction() ||
		GetCurrentCommandId(false) != FirstCommandId ||
		TransactionIdIsValid(GetTopTransactionIdIfAny()) ||
		ActivePortal == NULL || ActivePortal->stmts == NIL)
		return false;
	foreach(lc, ActivePortal->stmts)
	{
		PlannedStmt *stmt = lfirst_node(PlannedStmt, lc);

		if (stmt->commandType != CMD_SELECT || stmt->hasModifyingCTE ||
			stmt->utilityStmt != NULL)
			return false;
	}
	return true;
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
					format_type_extended(col->basetype, -1,
										 FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY));
}

/*
 * Can bloomguard_check() route a key of this shell to one shard, and with
 * what distribution value?  *value is set to the text of the shell's
 * distribution column's value among the key's values, or NULL for a table
 * without a distribution column (a reference or single-shard table).
 * False for an append-distributed table, whose shards may overlap, or a
 * partition method not known here.  Citus requires a distributed table's
 * primary key to include its distribution column.  Inside SPI.
 */
static bool
bg_distribution_value(Relation rel, const BgKeyDesc *desc, const Datum *values,
					  char **value)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];
	char	   *method;
	char	   *column;
	AttrNumber	attnum;
	int			i;

	*value = NULL;
	args[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	if (SPI_execute_with_args("SELECT partmethod::pg_catalog.text,"
							  " pg_catalog.column_to_column_name(logicalrelid, partkey)"
							  " FROM pg_catalog.pg_dist_partition"
							  " WHERE logicalrelid OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	if (SPI_processed == 0)
		return false;
	method = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	column = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	if (method != NULL && strcmp(method, "n") == 0)
		return true;
	if (method == NULL || (strcmp(method, "h") != 0 && strcmp(method, "r") != 0) ||
		column == NULL)
		return false;
	attnum = get_attnum(RelationGetRelid(rel), column);
	for (i = 0; i < desc->nkeys; i++)
	{
		Oid			outfn;
		bool		isvarlena;

		if (desc->cols[i].attnum != attnum)
			continue;
		getTypeOutputInfo(desc->cols[i].basetype, &outfn, &isvarlena);
		*value = OidOutputFunctionCall(outfn, values[i]);
		return true;
	}
	return false;				/* no key column is the distribution column */
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
	int			nest;

	if (!bg_citus_check_fresh())
		return BG_ANSWER_UNKNOWN;
	nest = bg_set_transmission_modes();
	initStringInfo(&keys);
	for (k = 0; k < desc->nkeys; k++)
		appendStringInfo(&keys, ", %s", bg_key_literal(&desc->cols[k], values[k]));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!bg_distribution_value(rel, desc, values, &distvalue))
	{
		SPI_finish();
		AtEOXact_GUC(true, nest);
		return BG_ANSWER_UNKNOWN;
	}
	args[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	if (distvalue != NULL)
		args[1] = CStringGetTextDatum(distvalue);
	else
		nulls[1] = 'n';

	/*
	 * The shard's placements on active primaries, and for each the call to
	 * run there; then run them, all at once.  master_run_on_worker()
	 * returns its rows in the order of its arrays.
	 */
	initStringInfo(&query);
	appendStringInfo(&query,
					 "WITH s AS (SELECT pg_catalog.get_shard_id_for_distribution_column($1, $2) AS shardid),"
					 " p AS (SELECT pg_catalog.array_agg(n.nodename ORDER BY n.nodeid) AS names,"
					 "   pg_catalog.array_agg(n.nodeport ORDER BY n.nodeid) AS ports,"
					 "   pg_catalog.array_agg(pg_catalog.format('SELECT %%s.bloomguard_check(%%L::pg_catalog.regclass%%s)',"
					 "                     %s, pg_catalog.shard_name($1, s.shardid, false), %s) ORDER BY n.nodeid) AS commands"
					 "   FROM s JOIN pg_catalog.pg_dist_placement pl ON pl.shardid OPERATOR(pg_catalog.=) s.shardid"
					 "   JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) pl.groupid"
					 "  WHERE pl.shardstate OPERATOR(pg_catalog.=) 1 AND n.isactive"
					 "    AND n.noderole OPERATOR(pg_catalog.=) 'primary')"
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
		{
			bool		connection = result != NULL &&
				(strncmp(result, "failed to connect", 17) == 0 ||
				 strncmp(result, "failed to send query", 20) == 0 ||
				 strcmp(result, "connection lost") == 0);

			ereport(ERROR,
					(errcode(connection ? ERRCODE_CONNECTION_FAILURE : ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("could not ask the guard of a placement of Citus table \"%s\" on node %s:%s",
							name, SPI_getvalue(tup, tupdesc, 1), SPI_getvalue(tup, tupdesc, 2)),
					 errdetail_internal("%s", result ? result : "(no result)"),
					 connection ?
					 errhint("bloomguard_check() on a Citus table asks each placement of the key's shard on its node; check that the node is up.") :
					 errhint("bloomguard_check() on a Citus table runs bloomguard_check() of the shard on each node that holds it, as the same role; bloomguard must be installed there.")));
		}
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
	AtEOXact_GUC(true, nest);
	/* no active placement: nothing can answer for the shard */
	return nplacements > 0 ? answer : BG_ANSWER_UNKNOWN;
}

/*
 * The guarded Citus shells the caller may see, in OID order: distributed
 * and reference tables whose feed trigger is in place.  Not a partitioned
 * one: its placements are partitioned tables, which hold no rows and have
 * no filter (partition.c); its partitions are distributed tables of their
 * own, with the trigger PostgreSQL cloned onto them, and are listed, each
 * placement of each one of them guarding that part of the rows.
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
	/* from the catalogs, without opening a shell: the view never waits for a table lock */
	foreach(lc, candidates)
	{
		Oid			relid = lfirst_oid(lc);

		if (bg_may_see_guard(relid) &&
			get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE &&
			bg_citus_guards_through_shards(bg_table_kind_by_oid(relid)) &&
			bg_feed_state_by_oid(relid) == BG_FEED_IN_PLACE)
			shells = lappend_oid(shells, relid);
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

	/* a format() template, for each placement's shard name */
	command = psprintf("SELECT COALESCE((SELECT (pg_catalog.to_jsonb(h)"
					   " OPERATOR(pg_catalog.-) 'relation'::pg_catalog.text"
					   " OPERATOR(pg_catalog.-) 'parent'::pg_catalog.text)::pg_catalog.text"
					   " FROM %s.bloomguard_health h"
					   " WHERE h.relation::pg_catalog.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass(%%L)::pg_catalog.oid),"
					   " 'null')",
					   bg_remote_schema_template());
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

		/*
		 * The shell's placements on active primaries, each with its query
		 * (the shard named schema-qualified, as a literal), run all at once;
		 * master_run_on_worker() returns its rows in the order of its arrays
		 */
		if (SPI_execute_with_args("WITH p AS (SELECT s.shardid, n.nodename, n.nodeport,"
								  "   pg_catalog.format($2, pg_catalog.shard_name($1, s.shardid, false)) AS command"
								  "   FROM pg_catalog.pg_dist_shard s"
								  "   JOIN pg_catalog.pg_dist_placement pl ON pl.shardid OPERATOR(pg_catalog.=) s.shardid"
								  "   JOIN pg_catalog.pg_dist_node n ON n.groupid OPERATOR(pg_catalog.=) pl.groupid"
								  "  WHERE s.logicalrelid OPERATOR(pg_catalog.=) $1"
								  "    AND pl.shardstate OPERATOR(pg_catalog.=) 1 AND n.isactive"
								  "    AND n.noderole OPERATOR(pg_catalog.=) 'primary'),"
								  " a AS (SELECT pg_catalog.array_agg(shardid ORDER BY shardid, nodeport, nodename) AS ids,"
								  "   pg_catalog.array_agg(nodename ORDER BY shardid, nodeport, nodename) AS names,"
								  "   pg_catalog.array_agg(nodeport ORDER BY shardid, nodeport, nodename) AS ports,"
								  "   pg_catalog.array_agg(command ORDER BY shardid, nodeport, nodename) AS commands FROM p)"
								  " SELECT a.ids[r.i], r.node_name, r.node_port, r.success, r.result"
								  "   FROM a, pg_catalog.master_run_on_worker(a.names, a.ports, a.commands, true)"
								  "        WITH ORDINALITY r(node_name, node_port, success, result, i)"
								  "  WHERE a.names IS NOT NULL ORDER BY r.i",
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
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_finish();
	return (Datum) 0;
}
