/*-------------------------------------------------------------------------
 *
 * statement.c
 *	  Which of this backend's own writes a lookup might see before their
 *	  keys reach the filter.
 *
 * The invariant the trust rule needs (trust.c) is:
 *
 *	(I) when a lookup of table T under snapshot S trusts T's filter, every
 *		row of T that S can see has had its key fed.
 *
 * A key is fed when the row's AFTER ROW event of the feed trigger fires
 * (the trigger puts it into this backend's feed buffer; see below for why
 * the buffer does not matter).  Rows of other transactions are visible to
 * S only once committed or prepared, and their writers' events had fired
 * and their buffers were flushed by then (PRE_COMMIT, PRE_PREPARE); rows
 * that were there before the guard was attached or rebuilt are in the
 * build (build.c).  What is left is this transaction's own rows, and when
 * S sees them:
 *
 *	- a row written with command id c is visible to S when c < S->curcid,
 *	  and invisible when c >= S->curcid; so the statement's own scans
 *	  (UPDATE t ... WHERE id = $1, the anti-join of INSERT INTO t SELECT
 *	  ... WHERE NOT EXISTS (SELECT 1 FROM t ...), the other parts of a
 *	  writable CTE) and STABLE functions, which run under its snapshot,
 *	  do not see its rows, while a VOLATILE function's queries, which take
 *	  a new snapshot after CommandCounterIncrement, do;
 *	- except a frozen row, which every snapshot sees whatever its command
 *	  id: COPY ... (FREEZE) into a table created or truncated in the same
 *	  subtransaction writes such rows, and a STABLE default expression or
 *	  trigger function of the same COPY sees the earlier rows of the COPY.
 *
 * When the event fires.  PostgreSQL queues a row's AFTER events in the
 * innermost open trigger level (trigger.c's query_stack) and fires a
 * level's events, those that triggers fired meanwhile add to it included,
 * when the level is closed (AfterTriggerEndQuery).  The feed trigger is
 * not deferrable, so its events never wait for the commit.  Levels are
 * opened by standard_ExecutorStart for a statement that may queue events
 * (not a plain SELECT, and not with EXEC_FLAG_SKIP_TRIGGERS) and closed by
 * its standard_ExecutorFinish, and opened and closed by COPY FROM, by
 * TRUNCATE and by the logical replication apply worker around their own
 * writes.  Levels nest: a statement that opens one runs to its
 * ExecutorFinish before its caller goes on (a cursor can only be a plain
 * SELECT; a portal of INSERT ... RETURNING or of a writable CTE runs to
 * completion at its first fetch).
 *
 * Every writer, and when its rows' feed events fire:
 *
 *	- a statement of the executor with a level of its own (INSERT, UPDATE,
 *	  MERGE, ON CONFLICT, writable CTEs, rule actions; from a client,
 *	  PL/pgSQL, SPI): its rows' events go into its own level, and fire in
 *	  its ExecutorFinish;
 *	- a statement of the executor without a level (EXEC_FLAG_SKIP_TRIGGERS):
 *	  the referential actions (ON UPDATE CASCADE, SET NULL, SET DEFAULT,
 *	  ON DELETE CASCADE), which RI triggers run through
 *	  SPI_execute_snapshot(..., fire_triggers = false): its rows' events go
 *	  into the innermost open level, which is the one whose
 *	  AfterTriggerEndQuery is firing the RI trigger, and fire only when that
 *	  one closes, after the RI trigger has returned and the cascade's own
 *	  ExecutorFinish is long past.  The statement that opened that level
 *	  may be one that writes no key at all (a DELETE, for ON DELETE SET
 *	  DEFAULT), and the cascade may go on from there (a cascade's events
 *	  fire RI triggers of their own, in the same level);
 *	- COPY FROM from a client: its events fire inside CopyFrom(), before
 *	  ProcessUtility returns;
 *	- the logical replication apply worker (ExecSimpleRelationInsert() and
 *	  its kin), the table synchronization worker (CopyFrom() called
 *	  directly) and pglogical's apply: none passes the executor's hooks or
 *	  ProcessUtility, and all run with session_replication_role = replica;
 *	- nothing else in PostgreSQL writes rows into a table that has
 *	  triggers (CREATE TABLE AS and REFRESH MATERIALIZED VIEW write new
 *	  relations, ALTER TABLE's and CLUSTER's rewrites copy rows whose keys
 *	  are fed already).  An extension's C code can: CopyFrom() called
 *	  outside ProcessUtility (Citus's local COPY into a shard) is not on
 *	  the list, and trust.c's header says where that leaves the rule.
 *
 * What is tracked.  The hooks below keep a list of writers, each with the
 * command id its rows get, the tables it writes into, and the number of
 * levels open when it began, and count the levels the executor opens (in
 * every statement that opens one, a DELETE or a SELECT with a writable CTE
 * included).  A writer is on the list from its start until its rows'
 * events have fired:
 *
 *	- one with a level of its own, until its ExecutorFinish has closed it;
 *	- one without, past its ExecutorFinish, until the ExecutorFinish that
 *	  closes the level numbered as the levels it found open (trigger.c
 *	  numbers its levels, so do we).  When that level was opened outside
 *	  the executor (COPY, TRUNCATE, the apply worker), we count one level
 *	  fewer than trigger.c and drop the writer at the end of an enclosing
 *	  level, later than its events fired; with no level of ours, at the end
 *	  of the transaction.  Writers of the same tables waiting for the same
 *	  level are kept as one, with the lowest command id (a cascade runs
 *	  once per parent row);
 *	- a COPY FROM, from ProcessUtility's start to its end, marked frozen
 *	  when it has a FREEZE option;
 *	- an aborted subtransaction's writers are dropped, and the levels it
 *	  opened closed, as trigger.c does; everything is dropped at the end of
 *	  the transaction.
 *
 * The rule (bg_own_writes_fed): a lookup of T under S may trust T's filter
 * unless a writer on the list writes rows into T (or into an ancestor of
 * T, below) with a command id below S->curcid, or marked frozen.  With
 * more writers than the list holds, no lookup trusts a filter until the
 * extra ones are done.  And trust.c trusts no filter while
 * session_replication_role = replica, which covers the writers that pass
 * no hook.  Why that rule: those writers offer no hook to track them by
 * (ExecSimpleRelationInsert() and CopyFrom() call the triggers directly),
 * asking trigger.c per lookup (AfterTriggerPendingOnRel) walks every
 * pending event and cannot tell the statement's own, invisible rows from
 * others, which would end the UPDATE and anti-join shortcuts; while every
 * such writer runs in the replica role, and ordinary sessions, on a
 * subscriber too, do not.  What it costs: a lookup in that role reads the
 * table, as it would without bloomguard (200k absent-key guarded_exists()
 * calls took 1.9 times as long as in an ordinary session), and a check of
 * one variable for every other lookup.
 *
 * Proof of (I).  It rests on a premise: (P) the lookup runs in the
 * backend that owns the list, the one whose transaction wrote the rows.
 * "This transaction's own rows" are the rows of the lookup's own backend
 * only there: a parallel worker shares its leader's transaction and sees
 * its rows, but has a list (and a feed buffer) of its own, which is empty.
 * So trust.c never trusts in a parallel worker, and every other kind of
 * process that can look a key up runs its own transaction (trust.c's
 * header lists them).  Take then, in such a backend, a row of T of this
 * transaction that S sees, written by writer W with command id c, so
 * c < S->curcid or W froze it.  If W is one of the replication workers,
 * the lookup runs in that worker (a trigger or function fired by its
 * writes), with session_replication_role = replica, and does not trust.
 * (A SECURITY DEFINER function of a superuser that sets the role back to
 * origin is outside this argument.)  Otherwise W was on the list from its
 * start, and either its events have fired, so the row's key is fed, or W
 * is still on the list, with c below S->curcid or frozen, and the lookup
 * does not trust.  The cases of the list above show that W leaves the
 * list only after its events fired.
 *
 * The trigger does not set bits itself: it appends the key to this
 * backend's feed buffer (feedbuffer.c).  The rule still holds with the buffer,
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
 * The tables a statement writes rows into are its result relations (the
 * planner lists every ModifyTable target there, writable CTEs and rule
 * actions included, and a partitioned target's root) and, for a
 * partitioned target, every partition below it: INSERT routes rows to
 * leaves that the plan does not name, and a partition attached while the
 * statement runs (ATTACH PARTITION does not wait for it) takes rows too.
 * So a statement notes the tables it names, and a lookup of a partition
 * also looks for its ancestors (get_partition_ancestors() then, only when
 * a writer's command id is visible to the lookup).  Rows that reach other
 * tables do so through statements of their own, nested inside this one
 * (triggers, referential actions), which are tracked the same way.
 *
 * The cross-check (assert-enabled builds, bg_assert_own_writes_fed): when
 * the rule trusts, Assert(!AfterTriggerPendingOnRel(T)).  That function
 * sees every pending event on T, of any trigger and of rows the snapshot
 * cannot see, so the check is weaker than that: it is skipped while a
 * writer on the list writes into T, whatever its command id (its rows
 * may be invisible to S: the UPDATE and anti-join shortcuts, a STABLE
 * function of a COPY), while a level that may delete runs (DELETE, MERGE,
 * a writable CTE: events of rows with no key, on any table a cascade
 * reaches) or a TRUNCATE does, and for a table with a deferrable trigger
 * (its events wait for the commit, after the feed trigger's have fired).
 * What it does catch is a writer that no hook saw, or one dropped from
 * the list too early, in a statement that writes nothing into T itself:
 * with the replica rule or the waiting of referential actions taken out,
 * sql/cascade.sql's triggers and test/t/016's trip it.
 *
 * Why this is one file of some 730 lines: 170 of them are the argument
 * above, and the code is the executor and utility hooks that keep the
 * stack of running writers plus the one question trust.c asks of it
 * (bg_own_writes_fed()).  Split, the argument would sit apart from the
 * code it proves.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "tcop/utility.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "bloomguard.h"

/*
 * A statement of this backend that writes rows whose AFTER ROW events have
 * not all fired.
 */
typedef struct BgWriter
{
	const void *owner;			/* its QueryDesc, or its COPY's PlannedStmt;
								 * NULL: its executor is done, its events
								 * wait in trigger level "level" */
	CommandId	cid;			/* the command id its rows get */
	int			nestlevel;		/* transaction nesting level */
	int			level;			/* trigger levels open when it began */
	bool		frozen;			/* COPY FREEZE: every snapshot sees its rows */
	List	   *relids;			/* the tables it writes rows into */
} BgWriter;

/*
 * A trigger level: a statement that began one (AfterTriggerBeginQuery in
 * ExecutorStart) and has not run its AfterTriggerEndQuery yet.
 */
typedef struct BgLevel
{
	const QueryDesc *qd;		/* NULL: ended without ExecutorFinish */
	bool		deletes;		/* may queue events of deleted rows */
} BgLevel;

#define BG_MAX_WRITERS 64

static BgWriter bg_writers[BG_MAX_WRITERS];
static int	bg_nwriters = 0;
static int	bg_writers_overflow = 0;	/* pushes past BG_MAX_WRITERS */

static BgLevel *bg_levels = NULL;	/* in TopMemoryContext */
static int	bg_nlevels = 0;
static int	bg_maxlevels = 0;
static int *bg_levels_at_sub = NULL;	/* bg_nlevels when each subxact began */
static int	bg_max_sub = 0;

#ifdef USE_ASSERT_CHECKING
static int	bg_truncating = 0;	/* TRUNCATEs running (their AFTER events) */
#endif

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/*
 * Does this statement write rows whose keys its feed trigger adds?  A
 * DELETE adds none (unless a writable CTE of it does).
 */
static bool
bg_statement_writes(QueryDesc *queryDesc)
{
	return (queryDesc->operation != CMD_SELECT &&
			queryDesc->operation != CMD_DELETE) ||
		queryDesc->plannedstmt->hasModifyingCTE;
}

/*
 * Note that a statement writing rows with command id cid into relids has
 * begun.  relids lives as long as the statement.
 */
static void
bg_writer_push(const void *owner, CommandId cid, List *relids, bool frozen)
{
	BgWriter   *w;

	if (bg_nwriters >= BG_MAX_WRITERS)
	{
		/* too deep to track: count it, and trust no filter meanwhile */
		bg_writers_overflow++;
		return;
	}
	w = &bg_writers[bg_nwriters++];
	w->owner = owner;
	w->cid = cid;
	w->nestlevel = GetCurrentTransactionNestLevel();
	w->level = bg_nlevels;
	w->frozen = frozen;
	w->relids = relids;
}

/* Take entry i off the list of writers. */
static void
bg_writer_remove(int i)
{
	if (bg_writers[i].owner == NULL)
		list_free(bg_writers[i].relids);	/* copied by bg_writer_defer() */
	memmove(&bg_writers[i], &bg_writers[i + 1],
			(bg_nwriters - i - 1) * sizeof(BgWriter));
	bg_nwriters--;
}

/* The entry of the running writer owner, or -1. */
static int
bg_writer_find(const void *owner)
{
	int			i;

	for (i = bg_nwriters - 1; i >= 0; i--)
		if (bg_writers[i].owner == owner)
			return i;
	return -1;
}

/*
 * Note that the writer owner has fired its triggers.  With only_tracked,
 * do nothing for a statement that is not on the list.
 */
static void
bg_writer_pop(const void *owner, bool only_tracked)
{
	int			i = bg_writer_find(owner);

	if (i >= 0)
		bg_writer_remove(i);
	else if (!only_tracked && bg_writers_overflow > 0)
		bg_writers_overflow--;
}

/*
 * The executor of writer owner is done, but its AFTER events wait for the
 * statement whose trigger level it ran in (EXEC_FLAG_SKIP_TRIGGERS): keep
 * it until that level ends (bg_level_pop).  A writer of the same tables
 * already waiting at that level stands for it, with the lower command id
 * of the two; so a cascade run once per row takes one entry.  A writer
 * that overflowed the list keeps its count until the transaction ends.
 */
static void
bg_writer_defer(const void *owner)
{
	int			i = bg_writer_find(owner);
	BgWriter   *w;
	int			j;
	MemoryContext oldcxt;

	if (i < 0)
		return;
	w = &bg_writers[i];
	for (j = 0; j < bg_nwriters; j++)
	{
		BgWriter   *other = &bg_writers[j];

		if (other->owner == NULL && other->level == w->level &&
			other->nestlevel == w->nestlevel && !other->frozen && !w->frozen &&
			equal(other->relids, w->relids))
		{
			other->cid = Min(other->cid, w->cid);
			bg_writer_remove(i);
			return;
		}
	}
	oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	w->relids = list_copy(w->relids);
	MemoryContextSwitchTo(oldcxt);
	w->owner = NULL;
}

/*
 * An array of *max elements of size elem in TopMemoryContext (or NULL),
 * made to hold element index at least.
 */
static void *
bg_grow(void *array, int *max, int index, Size elem)
{
	int			n;

	if (index < *max)
		return array;
	n = Max(16, index * 2);
	array = array == NULL ? MemoryContextAlloc(TopMemoryContext, n * elem) :
		repalloc(array, n * elem);
	*max = n;
	return array;
}

/*
 * A statement began a trigger level: note it, with what the cross-check
 * needs to know (bg_assert_own_writes_fed).
 */
static void
bg_level_push(QueryDesc *queryDesc)
{
	BgLevel    *l;

	bg_levels = bg_grow(bg_levels, &bg_maxlevels, bg_nlevels, sizeof(BgLevel));
	l = &bg_levels[bg_nlevels++];
	l->qd = queryDesc;
	l->deletes = queryDesc->operation == CMD_DELETE ||
		queryDesc->operation == CMD_MERGE ||
		queryDesc->plannedstmt->hasModifyingCTE;
}

/*
 * A statement's AfterTriggerEndQuery has run: it fired the events of the
 * innermost trigger level, the one numbered bg_nlevels (trigger.c counts
 * levels, it does not name them, and neither do we: a cursor closed by a
 * function fires the level of the statement that called the function).
 * Forget the writers whose events those were, the statement's own
 * included, then the level.
 */
static void
bg_level_pop(QueryDesc *queryDesc)
{
	int			top = bg_nlevels;
	int			i;

	if (bg_statement_writes(queryDesc) && bg_writer_find(queryDesc) < 0 &&
		bg_writers_overflow > 0)
		bg_writers_overflow--;
	for (i = bg_nwriters - 1; i >= 0; i--)
		if (bg_writers[i].owner == queryDesc ||
			(bg_writers[i].owner == NULL && bg_writers[i].level >= top))
			bg_writer_remove(i);
	if (bg_nlevels == 0)
		return;
	for (i = bg_nlevels - 1; i >= 0 && bg_levels[i].qd != queryDesc; i--)
		;
	if (i < 0)
		i = bg_nlevels - 1;		/* as trigger.c does: the innermost */
	memmove(&bg_levels[i], &bg_levels[i + 1],
			(bg_nlevels - i - 1) * sizeof(BgLevel));
	bg_nlevels--;
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
 * and after the standard start, note the trigger level it began, if it
 * began one (as standard_ExecutorStart decided: es_top_eflags), and a
 * writing statement.
 */
static void
bg_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	bg_feed_flush_all();
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	if ((queryDesc->estate->es_top_eflags & EXEC_FLAG_SKIP_TRIGGERS) == 0)
		bg_level_push(queryDesc);
	if (bg_statement_writes(queryDesc))
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(queryDesc->estate->es_query_cxt);
		List	   *relids = bg_statement_targets(queryDesc);

		MemoryContextSwitchTo(oldcxt);
		bg_writer_push(queryDesc, queryDesc->estate->es_output_cid, relids, false);
	}
}

/*
 * ExecutorFinish hook: a statement with a trigger level of its own has
 * fired that level's AFTER events, its own rows' and those of every
 * statement that ran in the level without one; a writer without a level
 * leaves its events to the enclosing statement.
 */
static void
bg_ExecutorFinish(QueryDesc *queryDesc)
{
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
	if (queryDesc->estate->es_top_eflags & EXEC_FLAG_SKIP_TRIGGERS)
	{
		if (bg_statement_writes(queryDesc))
			bg_writer_defer(queryDesc);
	}
	else
		bg_level_pop(queryDesc);
}

/*
 * ExecutorEnd hook: a statement that ended without ExecutorFinish (only
 * EXPLAIN without ANALYZE may, and it is not noted) fired nothing; keep
 * what it queued as waiting, and forget its QueryDesc.
 */
static void
bg_ExecutorEnd(QueryDesc *queryDesc)
{
	int			i;

	bg_writer_defer(queryDesc);
	for (i = 0; i < bg_nlevels; i++)
		if (bg_levels[i].qd == queryDesc)
			bg_levels[i].qd = NULL;
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/* Does a COPY FROM's option list ask for FREEZE (whatever its value)? */
static bool
bg_copy_freezes(CopyStmt *copy)
{
	ListCell   *lc;

	foreach(lc, copy->options)
	{
		DefElem    *opt = lfirst_node(DefElem, lc);

		if (strcmp(opt->defname, "freeze") == 0)
			return true;
	}
	return false;
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
		bg_writer_push(pstmt, GetCurrentCommandId(false), relids,
					   bg_copy_freezes(copy));
		if (!OidIsValid(relid))
			bg_writers_overflow++;
	}
#ifdef USE_ASSERT_CHECKING
	if (IsA(parsetree, TruncateStmt))
		bg_truncating++;
#endif
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
			bg_writer_pop(pstmt, false);
#ifdef USE_ASSERT_CHECKING
		if (IsA(parsetree, TruncateStmt))
			bg_truncating--;
#endif
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
		bg_nlevels = 0;
#ifdef USE_ASSERT_CHECKING
		bg_truncating = 0;
#endif
	}
}

/*
 * Subtransaction start: remember how many trigger levels are open, as
 * trigger.c does.  Abort: its statements will not finish, and trigger.c
 * closes the levels they opened.
 */
static void
bg_statement_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							  SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();

	if (event == SUBXACT_EVENT_START_SUB)
	{
		bg_levels_at_sub = bg_grow(bg_levels_at_sub, &bg_max_sub, level, sizeof(int));
		bg_levels_at_sub[level] = bg_nlevels;
		return;
	}
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	while (bg_nwriters > 0 && bg_writers[bg_nwriters - 1].nestlevel >= level)
		bg_writer_remove(bg_nwriters - 1);
	/* we cannot tell which level untracked pushes belonged to: keep them */
	if (level < bg_max_sub && bg_nlevels > bg_levels_at_sub[level])
		bg_nlevels = bg_levels_at_sub[level];
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
 * Does a writer on the list write rows into relid, or into an ancestor of
 * it, with a command id below curcid or frozen (InvalidCommandId: any
 * writer)?
 */
static bool
bg_written_into(Oid relid, CommandId curcid)
{
	List	   *ancestors = NIL;
	bool		have_ancestors = false;
	bool		result = false;
	ListCell   *lc;
	int			i;

	for (i = 0; i < bg_nwriters && !result; i++)
	{
		if (bg_writers[i].cid >= curcid && !bg_writers[i].frozen)
			continue;
		if (list_member_oid(bg_writers[i].relids, relid))
		{
			result = true;
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
				result = true;
				break;
			}
		}
	}
	list_free(ancestors);
	return result;
}

/*
 * May a lookup of relid under snapshot snap trust its filter, as far as
 * this backend's own statements go?  Not if one of them writes rows into
 * it that the snapshot can see and whose AFTER events have not all fired
 * (see the file header).
 */
bool
bg_own_writes_fed(Oid relid, Snapshot snap)
{
	if (snap == NULL || bg_writers_overflow > 0)
		return false;
	return !bg_written_into(relid, snap->curcid);
}

#ifdef USE_ASSERT_CHECKING
/* Has rel a trigger whose events may wait past the end of the statement? */
static bool
bg_has_deferrable_trigger(Relation rel)
{
	int			i;

	if (rel->trigdesc == NULL)
		return false;
	for (i = 0; i < rel->trigdesc->numtriggers; i++)
		if (rel->trigdesc->triggers[i].tgdeferrable)
			return true;
	return false;
}

/*
 * The cross-check of assert-enabled builds, for a lookup of rel under
 * snap that the rule trusts: no AFTER event of this backend on rel is
 * pending, unless one may be pending for a reason the rule allows (see
 * the file header).
 */
void
bg_assert_own_writes_fed(Relation rel, Snapshot snap)
{
	int			i;

	if (snap == NULL || bg_truncating > 0 || bg_has_deferrable_trigger(rel))
		return;
	for (i = 0; i < bg_nlevels; i++)
		if (bg_levels[i].deletes)
			return;
	if (bg_written_into(RelationGetRelid(rel), InvalidCommandId))
		return;
	Assert(!AfterTriggerPendingOnRel(RelationGetRelid(rel)));
}
#endif
