/*-------------------------------------------------------------------------
 *
 * statement.c
 *	  Which of this backend's own writes a lookup might see before their
 *	  keys reach the filter.
 *
 * A filter misses a row's key only between the row's heap insert and the
 * moment its AFTER ROW trigger adds the key.  Other sessions cannot see
 * the row then (it commits later).  The inserting session can, in one
 * case only: the trigger fires at the end of the inserting statement
 * (AfterTriggerEndQuery, in ExecutorFinish), and queries nested inside
 * that statement run meanwhile: a BEFORE trigger, a volatile function in
 * its target list or WHERE clause, a RETURN QUERY, a referential action.
 *
 * Which of those can see the statement's rows is decided by command ids.
 * The statement writes its rows with its output command id c (es_output_cid,
 * or COPY's command id).  A snapshot sees them only if its curcid > c:
 *
 *	- the statement's own scans (UPDATE t ... WHERE id = $1, the anti-join
 *	  of INSERT INTO t SELECT ... WHERE NOT EXISTS (SELECT 1 FROM t ...),
 *	  the other parts of a writable CTE) use its snapshot, curcid = c: they
 *	  cannot see its rows, and may trust the filter;
 *	- a STABLE function's queries use the same snapshot: they may too;
 *	- a VOLATILE function's queries take a new snapshot after
 *	  CommandCounterIncrement, curcid > c: they may see rows whose keys
 *	  are not in the filter yet, and must not trust it.
 *
 * Earlier statements of the transaction have fired their triggers when
 * they ended.  So the rule is: a lookup of table T under snapshot S may
 * trust T's filter unless a statement of this backend that writes rows
 * into T is still running (ExecutorStart to the end of ExecutorFinish, or
 * a COPY FROM) with an output command id below S->curcid.
 *
 * The trigger does not set bits itself: it appends the key to this
 * backend's feed buffer (feed.c).  The rule still holds with the buffer,
 * because a key that has gone through the trigger is in the filter or in
 * the buffer, and the buffer is flushed before anything could need it:
 *
 *	- a later statement of this backend (or of its parallel workers, which
 *	  cannot see the buffer) starts with a flush: the hooks below flush
 *	  before ExecutorStart and before any utility statement runs;
 *	- a query nested in a statement, or an expression that starts no
 *	  statement at all (PL/pgSQL evaluates simple expressions without the
 *	  executor's hooks), reaches the filter only through a lookup, and a
 *	  lookup of T flushes T's keys first;
 *	- other backends see the rows only once they are committed or
 *	  prepared, and PRE_COMMIT and PRE_PREPARE flush.
 *
 * So for the lookup's purposes a key reaches the filter when its trigger
 * fires, as before, and the statements whose triggers have not fired are
 * the ones the rule already makes lookups fall back for.
 *
 * The tables a statement writes rows into are its result relations (the
 * planner lists every ModifyTable target there, writable CTEs and rule
 * actions included, and a partitioned target's root) and, for a
 * partitioned target, every partition below it: INSERT routes rows to
 * leaves that the plan does not name, and a partition attached while the
 * statement runs (ATTACH PARTITION does not wait for it) takes rows too.
 * So a statement notes the tables it names, and a lookup of a partition
 * also looks for its ancestors (get_partition_ancestors() then, only when
 * a running writer's command id is visible to the lookup).  Rows
 * that reach other tables do so through statements of their own, nested
 * inside this one (triggers, referential actions), which are tracked the
 * same way.
 *
 * The list of running writers is a stack (statements nest); entries of an
 * aborted (sub)transaction are dropped, and it is empty between
 * transactions.  Parallel workers never run bloomguard's lookups.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "tcop/utility.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapshot.h"

#include "bloomguard.h"

/* A statement of this backend that writes rows and has not finished. */
typedef struct BgWriter
{
	const void *owner;			/* its QueryDesc (NULL: a COPY FROM) */
	CommandId	cid;			/* the command id its rows get */
	int			nestlevel;		/* transaction nesting level */
	List	   *relids;			/* the tables it writes rows into */
} BgWriter;

#define BG_MAX_WRITERS 64

static BgWriter bg_writers[BG_MAX_WRITERS];
static int	bg_nwriters = 0;
static int	bg_writers_overflow = 0;	/* pushes past BG_MAX_WRITERS */

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/*
 * Note that a statement writing rows with command id cid into relids has
 * begun.  relids lives as long as the statement.
 */
static void
bg_writer_push(const void *owner, CommandId cid, List *relids)
{
	if (bg_nwriters >= BG_MAX_WRITERS)
	{
		/* too deep to track: count it, and trust no filter meanwhile */
		bg_writers_overflow++;
		return;
	}
	bg_writers[bg_nwriters].owner = owner;
	bg_writers[bg_nwriters].cid = cid;
	bg_writers[bg_nwriters].nestlevel = GetCurrentTransactionNestLevel();
	bg_writers[bg_nwriters].relids = relids;
	bg_nwriters++;
}

/*
 * Note that the statement owner pushed has fired its triggers.  With
 * only_tracked, do nothing for a statement that is not on the stack.
 */
static void
bg_writer_pop(const void *owner, bool only_tracked)
{
	int			i;

	for (i = bg_nwriters - 1; i >= 0; i--)
	{
		if (bg_writers[i].owner == owner)
		{
			memmove(&bg_writers[i], &bg_writers[i + 1],
					(bg_nwriters - i - 1) * sizeof(BgWriter));
			bg_nwriters--;
			return;
		}
	}
	if (!only_tracked && bg_writers_overflow > 0)
		bg_writers_overflow--;
}

/*
 * Does this statement write rows whose keys its feed trigger adds at its
 * end?  A DELETE adds none (unless a writable CTE of it does).
 */
static bool
bg_statement_writes(QueryDesc *queryDesc)
{
	return (queryDesc->operation != CMD_SELECT &&
			queryDesc->operation != CMD_DELETE) ||
		queryDesc->plannedstmt->hasModifyingCTE;
}

/* The tables a planned statement writes rows into (see the file header). */
static List *
bg_statement_targets(QueryDesc *queryDesc)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;
	List	   *relids = NIL;
	ListCell   *lc;

	foreach(lc, stmt->resultRelations)
	{
		RangeTblEntry *rte = rt_fetch(lfirst_int(lc), stmt->rtable);

		if (rte->rtekind == RTE_RELATION)
			relids = list_append_unique_oid(relids, rte->relid);
	}
	return relids;
}

/*
 * ExecutorStart hook: flush this backend's keys before anything of the
 * statement runs (its parallel workers read the filter, not our buffer),
 * and after the standard start, note a writing statement.
 */
static void
bg_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	bg_feed_flush_all();
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 && bg_statement_writes(queryDesc))
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(queryDesc->estate->es_query_cxt);
		List	   *relids = bg_statement_targets(queryDesc);

		MemoryContextSwitchTo(oldcxt);
		bg_writer_push(queryDesc, queryDesc->estate->es_output_cid, relids);
	}
}

/* ExecutorFinish hook: the statement's AFTER triggers have fired. */
static void
bg_ExecutorFinish(QueryDesc *queryDesc)
{
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
	if (bg_statement_writes(queryDesc))
		bg_writer_pop(queryDesc, false);
}

/* ExecutorEnd hook: forget a statement that ended without finishing. */
static void
bg_ExecutorEnd(QueryDesc *queryDesc)
{
	bg_writer_pop(queryDesc, true);
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * ProcessUtility hook: flush this backend's keys first, as at the start of
 * every statement; COPY FROM writes rows without the executor's hooks.
 */
static void
bg_ProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				  ProcessUtilityContext context, ParamListInfo params,
				  QueryEnvironment *queryEnv, DestReceiver *dest,
				  QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		copy_from = IsA(parsetree, CopyStmt) && ((CopyStmt *) parsetree)->is_from;

	if (IsTransactionState())
		bg_feed_flush_all();

	if (copy_from)
	{
		CopyStmt   *copy = (CopyStmt *) parsetree;
		List	   *relids = NIL;
		Oid			relid = copy->relation ?
			RangeVarGetRelid(copy->relation, NoLock, true) : InvalidOid;

		/* an unknown table: COPY will say so; trust nothing meanwhile */
		if (OidIsValid(relid))
			relids = list_make1_oid(relid);
		bg_writer_push(NULL, GetCurrentCommandId(false), relids);
		if (!OidIsValid(relid))
			bg_writers_overflow++;
	}
	PG_TRY();
	{
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		if (copy_from)
			bg_writer_pop(NULL, false);
	}
	PG_END_TRY();
}

/* Transaction end: nothing is running any more. */
static void
bg_statement_xact_callback(XactEvent event, void *arg)
{
	if (bg_xact_event_ends(event))
	{
		bg_nwriters = 0;
		bg_writers_overflow = 0;
	}
}

/* Subtransaction abort: its statements will not finish. */
static void
bg_statement_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							  SubTransactionId parentSubid, void *arg)
{
	int			level;

	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	level = GetCurrentTransactionNestLevel();
	while (bg_nwriters > 0 && bg_writers[bg_nwriters - 1].nestlevel >= level)
		bg_nwriters--;
	/* we cannot tell which level untracked pushes belonged to: keep them */
}

/* Install the hooks; called from _PG_init while preloading. */
void
bg_statement_init(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = bg_ExecutorStart;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = bg_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = bg_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = bg_ProcessUtility;
	RegisterXactCallback(bg_statement_xact_callback, NULL);
	RegisterSubXactCallback(bg_statement_subxact_callback, NULL);
}

/*
 * May a lookup of relid under snapshot snap trust its filter, as far as
 * this backend's own running statements go?  Not if one of them writes
 * rows into it that the snapshot can see (see the file header).
 */
bool
bg_own_writes_fed(Oid relid, Snapshot snap)
{
	List	   *ancestors = NIL;
	bool		have_ancestors = false;
	bool		result = true;
	ListCell   *lc;
	int			i;

	if (snap == NULL || bg_writers_overflow > 0)
		return false;
	for (i = 0; i < bg_nwriters && result; i++)
	{
		if (bg_writers[i].cid >= snap->curcid)
			continue;
		if (list_member_oid(bg_writers[i].relids, relid))
		{
			result = false;
			break;
		}
		/* a partition written through a parent the statement names */
		if (!have_ancestors)
		{
			if (get_rel_relispartition(relid))
				ancestors = get_partition_ancestors(relid);
			have_ancestors = true;
		}
		foreach(lc, ancestors)
		{
			if (list_member_oid(bg_writers[i].relids, lfirst_oid(lc)))
			{
				result = false;
				break;
			}
		}
	}
	list_free(ancestors);
	return result;
}
