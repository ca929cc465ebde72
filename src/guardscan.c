/*-------------------------------------------------------------------------
 *
 * guardscan.c
 *	  The BloomGuard custom scan: asks the filter before the index scan it
 *	  wraps (planner.c makes it).
 *
 * On each (re)scan, before the first row is asked for, the node takes
 * the key values of the wrapped scan's conditions, converts them to the
 * key's types as guarded_exists() converts its arguments (args.c), and,
 * if the filter may be trusted (trust.c's rule, checked here on every
 * rescan: settings, transaction state and the table's trigger can change
 * under a cached plan), asks it.  "Absent": the node returns no row, and
 * the wrapped scan never runs.  "Maybe", or no trusted filter: the wrapped
 * scan runs unchanged and its rows are returned as they are.  A key value
 * that is NULL, or that no value of the key type can equal (5.5 for an
 * integer key), matches no row either.
 *
 * The wrapped scan is initialised only when a scan first needs it: a key
 * the filter calls absent (or NULL) never pays for its start-up (opening
 * and locking the index, building its scan keys and expressions), which
 * costs about as much as the index descent itself.  Append's initial
 * pruning is the model, but the decision cannot be made at start-up: the
 * key is evaluated when the scan runs (so that it raises its errors then,
 * as the index scan would), and a nested loop's inner side gets a new key
 * at every rescan.  So the node initialises the wrapped scan at its first
 * scan that is not ruled out, in the query's memory, and keeps it for every
 * later rescan.  It is initialised at start-up instead where it cannot
 * wait: for plain EXPLAIN (which shows it), under EvalPlanQual (never
 * skipped: the recheck must see the row the scan would have produced), for
 * a node that never asks the filter, and where the wrapped scan has
 * conditions whose start-up checks (such as the EXECUTE privilege of a
 * function in them) must not depend on the filter's answer: conditions of
 * its own besides the index's, and index conditions comparing with an
 * expression that is not one of the key values.  The node opens the table
 * as the wrapped scan does (ExecOpenScanRelation: the executor holds its
 * lock).  While it exists, the wrapped scan is listed in custom_ps, so
 * EXPLAIN, instrumentation and the executor's tree walks see it; one never
 * initialised is shown by EXPLAIN ANALYZE as "Index Scan Skipped" and the
 * index's name.  The index scan itself defers index_beginscan() to its
 * first fetch.
 *
 * Each key value is evaluated once per scan, as without the node.  Before
 * the wrapped scan exists the node evaluates it (a Const is read from the
 * plan; an expression, whose start-up the node does, as the index scan
 * would for its run-time key); when it then starts the scan it hands it
 * the values it evaluated, setting the scan's run-time keys as the scan's
 * first rescan would (a STABLE function as the key is called once).  Once
 * the scan exists, the node has it compute its run-time keys first (the
 * ExecReScan() it would make at its first row) and reads an expression's
 * value from the scan's key for that column; a Const or a Param is still
 * read by the node, which costs nothing, and so is a value that matches no
 * scan key of its column by type.
 *
 * Under EvalPlanQual the node passes the wrapped scan's rows through
 * untouched (restarting it when the recheck rescanned it).  Backward scans
 * and mark/restore are the wrapped scan's, and a skipped scan stays empty
 * in both.
 *
 * Row-level security: where it applies, the filter is not consulted (the
 * planner does not wrap such scans; a cached plan re-checked here falls
 * back), so EXPLAIN ANALYZE's counts and the guard's counters say nothing
 * about which keys exist.
 *
 * Why this is one file of some 770 lines: the node's callbacks, the lazy
 * start-up of the wrapped scan and the handing of key values to it all
 * read and write BgGuardScanState and the wrapped scan's run-time keys,
 * which no other file may see; split, the executor state of one node
 * would be shared across files.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/skey.h"
#include "access/stratnum.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "executor/nodeIndexscan.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"
#include "compat.h"

typedef struct BgGuardKey
{
	Oid			type;			/* of the value */
	BgArgConv	conv;			/* to the key column's type */
	ScanKey		skey;			/* the wrapped scan's key of the column */
	ExprState  *expr;			/* no scan key: the value's expression... */
	Datum		value;			/* ... or, a Const, its value */
	bool		isnull;
	Datum		arg;			/* the value this scan evaluated (expr) */
} BgGuardKey;

typedef struct BgGuardScanState
{
	CustomScanState css;
	PlanState  *scan;			/* the wrapped index scan, once initialised */
	int			eflags;			/* to initialise it with */
	Relation	rel;			/* the wrapped scan's table */
	BgKeyInfo  *info;			/* its key, pinned; NULL: never shortcut */
	BgGuardKey *keys;			/* one per key column, where info is set */
	bool	   *keys_ready;		/* the wrapped scan's RuntimeKeysReady, if it
								 * has runtime keys */
	bool		decided;		/* this scan has asked the filter */
	bool		evaluated;		/* ... having evaluated every key value */
	bool		skip;			/* this scan returns no row */
	bool		rescan;			/* the wrapped scan must start again */
	bool		marked_skip;
	int			slotindex;		/* the guard's slot, for counting */
	BgSlotExpect expect;		/* what the filter must be (trust.c) */
	uint64		hits_left;		/* "maybe" keys whose row may still count found */
	int64		pos;			/* rows the scan has moved forward past */
	int64		hwm;			/* the most it has (each new row counts once) */
	int64		markpos;		/* pos at the mark */
	uint64		checks;			/* keys looked for (EXPLAIN ANALYZE) */
	uint64		answered;		/* keys the filter called absent */
} BgGuardScanState;

static Node *bg_create_guard_scan_state(CustomScan *cscan);
static void bg_begin_guard_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *bg_exec_guard_scan(CustomScanState *node);
static void bg_end_guard_scan(CustomScanState *node);
static void bg_rescan_guard_scan(CustomScanState *node);
static void bg_mark_guard_scan(CustomScanState *node);
static void bg_restore_guard_scan(CustomScanState *node);
static void bg_explain_guard_scan(CustomScanState *node, List *ancestors,
								  ExplainState *es);

/*
 * Read by other files: planner.c, whose CustomScan plan nodes point to it
 * (as core's plan copying and reading expect); constant, never written.
 */
const CustomScanMethods bg_guard_scan_methods = {
	.CustomName = "BloomGuard",
	.CreateCustomScanState = bg_create_guard_scan_state,
};

static const CustomExecMethods bg_guard_exec_methods = {
	.CustomName = "BloomGuard",
	.BeginCustomScan = bg_begin_guard_scan,
	.ExecCustomScan = bg_exec_guard_scan,
	.EndCustomScan = bg_end_guard_scan,
	.ReScanCustomScan = bg_rescan_guard_scan,
	.MarkPosCustomScan = bg_mark_guard_scan,
	.RestrPosCustomScan = bg_restore_guard_scan,
	.ExplainCustomScan = bg_explain_guard_scan,
};

/* CreateCustomScanState: an empty state of our size. */
static Node *
bg_create_guard_scan_state(CustomScan *cscan)
{
	BgGuardScanState *gs = palloc0(sizeof(BgGuardScanState));

	NodeSetTag(gs, T_CustomScanState);
	gs->css.methods = &bg_guard_exec_methods;
	return (Node *) gs;
}

/*
 * Initialise the wrapped scan, at start-up or at the first scan that needs
 * it (see the file header), in the query's memory.
 */
static void
bg_guard_init_scan(BgGuardScanState *gs)
{
	CustomScan *cscan = (CustomScan *) gs->css.ss.ps.plan;
	EState	   *estate = gs->css.ss.ps.state;
	MemoryContext oldcxt = MemoryContextSwitchTo(estate->es_query_cxt);

	gs->scan = ExecInitNode((Plan *) linitial(cscan->custom_plans), estate, gs->eflags);
	gs->css.custom_ps = list_make1(gs->scan);
	MemoryContextSwitchTo(oldcxt);
	gs->rescan = false;
}

/*
 * Is this key value expression one that costs nothing to evaluate twice,
 * and whose evaluation nobody can see: a Const, a Param (an outer column
 * of a nested loop is one by now), possibly relabelled?
 */
static bool
bg_guard_cheap_value(Node *expr)
{
	while (IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	return IsA(expr, Const) || IsA(expr, Param);
}

/*
 * Find, for each key column whose value is not cheap to evaluate again,
 * the wrapped scan's scan key that compares it by equality with a value of
 * the type custom_exprs has for it (see the file header); note whether the
 * scan then computes keys at each (re)scan.
 */
static void
bg_guard_find_scan_keys(BgGuardScanState *gs, List *exprs)
{
	ScanKey		keys;
	int			nkeys;
	int			nruntime;
	bool	   *ready;
	bool		any = false;
	int			i;
	int			j;

	if (IsA(gs->scan, IndexScanState))
	{
		IndexScanState *iss = (IndexScanState *) gs->scan;

		keys = iss->iss_ScanKeys;
		nkeys = iss->iss_NumScanKeys;
		nruntime = iss->iss_NumRuntimeKeys;
		ready = &iss->iss_RuntimeKeysReady;
	}
	else if (IsA(gs->scan, IndexOnlyScanState))
	{
		IndexOnlyScanState *ioss = (IndexOnlyScanState *) gs->scan;

		keys = ioss->ioss_ScanKeys;
		nkeys = ioss->ioss_NumScanKeys;
		nruntime = ioss->ioss_NumRuntimeKeys;
		ready = &ioss->ioss_RuntimeKeysReady;
	}
	else
		return;
	for (i = 0; i < gs->info->desc->nkeys; i++)
	{
		if (bg_guard_cheap_value((Node *) list_nth(exprs, i)))
			continue;
		for (j = 0; j < nkeys; j++)
		{
			ScanKey		sk = &keys[j];

			if (sk->sk_attno == i + 1 && sk->sk_strategy == BTEqualStrategyNumber &&
				(sk->sk_flags & (SK_ROW_HEADER | SK_SEARCHARRAY | SK_SEARCHNULL |
								 SK_SEARCHNOTNULL | SK_ORDER_BY)) == 0 &&
				sk->sk_subtype == gs->keys[i].type)
			{
				gs->keys[i].skey = sk;
				any = true;
				break;
			}
		}
	}
	gs->keys_ready = any && nruntime > 0 ? ready : NULL;
}

/* An expression without the binary-compatible relabellings on top. */
static Node *
bg_guard_strip(Node *expr)
{
	while (expr != NULL && IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	return expr;
}

/*
 * Can the wrapped scan's start-up wait for a scan that needs it?  Only if
 * each of its index conditions compares with a Const or a Param, or with
 * an expression that is one of the key values, which the node initialises
 * itself at start-up: then the privilege checks and look-ups of every
 * function in them happen at start-up, whatever the filter answers.  Its
 * conditions besides the index's (plan.qual) must not depend on the
 * filter either (the caller checks).
 */
static bool
bg_guard_quals_own(Plan *wrapped, List *exprs)
{
	List	   *quals = IsA(wrapped, IndexOnlyScan) ?
		((IndexOnlyScan *) wrapped)->indexqual : ((IndexScan *) wrapped)->indexqual;
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *qual = (Node *) lfirst(lc);
		Node	   *value;
		ListCell   *vc;
		bool		own = false;

		if (IsA(qual, NullTest))
			continue;
		if (IsA(qual, OpExpr) && list_length(((OpExpr *) qual)->args) == 2)
			value = lsecond(((OpExpr *) qual)->args);
		else if (IsA(qual, ScalarArrayOpExpr))
			value = lsecond(((ScalarArrayOpExpr *) qual)->args);
		else
			return false;
		value = bg_guard_strip(value);
		if (IsA(value, Const) || IsA(value, Param))
			continue;
		foreach(vc, exprs)
		{
			if (equal(value, bg_guard_strip((Node *) lfirst(vc))))
				own = true;
		}
		if (!own)
			return false;
	}
	return true;
}

/*
 * The wrapped scan's run-time keys (IndexScan and IndexOnlyScan alike):
 * the array, how many, their expression context and RuntimeKeysReady.
 */
static int
bg_guard_runtime_keys(PlanState *scan, IndexRuntimeKeyInfo **keys,
					  ExprContext **cxt, bool **ready)
{
	if (IsA(scan, IndexScanState))
	{
		IndexScanState *iss = (IndexScanState *) scan;

		*keys = iss->iss_RuntimeKeys;
		*cxt = iss->iss_RuntimeContext;
		*ready = &iss->iss_RuntimeKeysReady;
		return iss->iss_NumRuntimeKeys;
	}
	if (IsA(scan, IndexOnlyScanState))
	{
		IndexOnlyScanState *ioss = (IndexOnlyScanState *) scan;

		*keys = ioss->ioss_RuntimeKeys;
		*cxt = ioss->ioss_RuntimeContext;
		*ready = &ioss->ioss_RuntimeKeysReady;
		return ioss->ioss_NumRuntimeKeys;
	}
	return 0;
}

/*
 * A wrapped scan initialised after this scan evaluated the key: set its
 * run-time keys as its first ExecReScan() would (nodeIndexscan.c's
 * ExecIndexEvalRuntimeKeys()), a key whose expression is one of the key
 * values from the value already evaluated, so that no expression is
 * evaluated twice (a STABLE function is called once per scan, as without
 * the node); the others by their expressions.  The value lives in the
 * node's expression context, which is reset only at the node's next
 * decision, before which the wrapped scan is rescanned (and evaluates its
 * keys itself) or does not run.
 */
static void
bg_guard_hand_keys(BgGuardScanState *gs)
{
	CustomScan *cscan = (CustomScan *) gs->css.ss.ps.plan;
	IndexRuntimeKeyInfo *rk;
	ExprContext *cxt;
	bool	   *ready;
	int			nrk = bg_guard_runtime_keys(gs->scan, &rk, &cxt, &ready);
	int			j;

	for (j = 0; j < nrk; j++)
	{
		Node	   *expr = bg_guard_strip((Node *) rk[j].key_expr->expr);
		ScanKey		sk = rk[j].scan_key;
		ListCell   *lc;
		int			i = 0;
		int			own = -1;

		foreach(lc, cscan->custom_exprs)
		{
			if (own < 0 && gs->keys[i].expr != NULL &&
				equal(expr, bg_guard_strip((Node *) lfirst(lc))))
				own = i;
			i++;
		}
		if (own < 0)
		{
			ExecIndexEvalRuntimeKeys(cxt, &rk[j], 1);
			continue;
		}
		/* evaluated and not NULL, or the scan would not run */
		sk->sk_argument = gs->keys[own].arg;
		if (rk[j].key_toastable)
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(cxt->ecxt_per_tuple_memory);

			sk->sk_argument = PointerGetDatum(PG_DETOAST_DATUM(sk->sk_argument));
			MemoryContextSwitchTo(oldcxt);
		}
		sk->sk_flags &= ~SK_ISNULL;
	}
	if (nrk > 0)
		*ready = true;
}

/*
 * Start the wrapped scan at the first scan that needs it: initialise it,
 * hand it the key values this scan evaluated, and read the key from its
 * scan keys from now on (its rescans evaluate them).
 */
static void
bg_guard_start_scan(BgGuardScanState *gs)
{
	bg_guard_init_scan(gs);
	if (gs->info == NULL)
		return;
	if (gs->evaluated)
		bg_guard_hand_keys(gs);
	bg_guard_find_scan_keys(gs, ((CustomScan *) gs->css.ss.ps.plan)->custom_exprs);
}

/*
 * How each key value is read at every scan: from the wrapped scan's key,
 * found above; a Const (possibly relabelled: the same Datum) from the plan,
 * with nothing to initialise; anything else by its expression.
 */
static void
bg_guard_init_values(BgGuardScanState *gs, List *exprs)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, exprs)
	{
		BgGuardKey *key = &gs->keys[i++];
		Node	   *expr = (Node *) lfirst(lc);
		Node	   *bare = expr;

		if (key->skey != NULL)
			continue;
		while (IsA(bare, RelabelType))
			bare = (Node *) ((RelabelType *) bare)->arg;
		if (IsA(bare, Const))
		{
			key->value = ((Const *) bare)->constvalue;
			key->isnull = ((Const *) bare)->constisnull;
		}
		else
			key->expr = ExecInitExpr((Expr *) expr, &gs->css.ss.ps);
	}
}

/*
 * BeginCustomScan: open the table and work out the key's conversion.  The
 * wrapped scan is initialised here only where it cannot wait for a scan
 * that needs it (see the file header).
 */
static void
bg_begin_guard_scan(CustomScanState *node, EState *estate, int eflags)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Scan	   *wrapped = (Scan *) linitial(cscan->custom_plans);
	ListCell   *lc;
	int			i = 0;

	gs->eflags = eflags;
	node->custom_ps = NIL;

	/*
	 * Without a projection the node hands on the wrapped scan's slots, which
	 * are not the virtual slots ExecInitCustomScan() declared: tell the
	 * nodes above not to rely on the slot type.
	 */
	node->ss.ps.resultopsset = true;
	node->ss.ps.resultopsfixed = false;
	node->ss.ps.resultops = NULL;
	/* the wrapped scan's own table, as it opens it (the executor holds the lock) */
	gs->rel = ExecOpenScanRelation(estate, wrapped->scanrelid, eflags);
	gs->rescan = false;
	gs->slotindex = -1;
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) || cscan->custom_exprs == NIL ||
		estate->es_epq_active != NULL || wrapped->plan.qual != NIL ||
		!bg_guard_quals_own(&wrapped->plan, cscan->custom_exprs))
	{
		bg_guard_init_scan(gs);
		if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) || cscan->custom_exprs == NIL)
			return;
	}
	gs->info = bg_keyinfo_acquire(gs->rel);
	if (gs->info->desc == NULL || !gs->info->desc->hashable ||
		list_length(cscan->custom_exprs) != gs->info->desc->nkeys)
	{
		/* the key changed since planning: the plan will be made again */
		bg_keyinfo_release(gs->info);
		gs->info = NULL;
		return;
	}
	gs->keys = palloc0(sizeof(BgGuardKey) * gs->info->desc->nkeys);
	foreach(lc, cscan->custom_exprs)
	{
		Oid			type = exprType((Node *) lfirst(lc));

		gs->keys[i].type = type;
		gs->keys[i].conv = bg_classify_arg(type, &gs->info->desc->cols[i]);
		i++;
	}
	/* a costly key is read from the wrapped scan, initialised above */
	if (gs->scan != NULL)
		bg_guard_find_scan_keys(gs, cscan->custom_exprs);
	bg_guard_init_values(gs, cscan->custom_exprs);
}

/*
 * May this scan ask the filter?  The trust rule (trust.c), as of now and
 * under the scan's snapshot; fills in gs->expect when it may.
 */
static bool
bg_guard_trusted(BgGuardScanState *gs)
{
	return gs->info != NULL &&
		bg_trust_scan(gs->rel, gs->info, gs->css.ss.ps.state->es_snapshot, &gs->expect);
}

/*
 * Ask the filter about one key (values in the key's types).  Counts it as
 * EXPLAIN ANALYZE and the guard's counters show it.
 */
static BgAnswer
bg_guard_ask(BgGuardScanState *gs, const Datum *values, bool trusted)
{
	BgAnswer	answer = BG_ANSWER_UNKNOWN;

	gs->checks++;
	if (trusted)
		answer = bg_trust_ask(gs->rel, gs->info, &gs->expect, values, false,
							  &gs->slotindex);
	else
		gs->slotindex = bg_slot_index(&gs->info->ref, RelationGetRelid(gs->rel));
	if (gs->slotindex >= 0)
		bg_slot_bump(gs->slotindex,
					 answer == BG_ANSWER_ABSENT ? BG_COUNT_SHORTCUT :
					 answer == BG_ANSWER_MAYBE ? BG_COUNT_SOURCE_LOOKUP :
					 BG_COUNT_FALLBACK, 1);
	if (answer == BG_ANSWER_ABSENT)
		gs->answered++;
	return answer;
}

/*
 * Before a scan's first row: evaluate the key, ask the filter, and decide
 * whether the wrapped scan runs (see the file header).
 */
static void
bg_guard_decide(BgGuardScanState *gs)
{
	ExprContext *econtext = gs->css.ss.ps.ps_ExprContext;
	Datum		values[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	bool		trusted;
	int			i;

	gs->decided = true;
	gs->evaluated = false;
	gs->skip = false;
	gs->hits_left = 0;
	gs->pos = 0;
	gs->hwm = 0;
	if (gs->info == NULL)
		return;
	trusted = bg_guard_trusted(gs);
	/* the wrapped scan computes its runtime keys, as at its first row */
	if (gs->keys_ready != NULL && (gs->rescan || !*gs->keys_ready))
	{
		ExecReScan(gs->scan);
		gs->rescan = false;
	}
	ResetExprContext(econtext);

	/*
	 * Every key value first, as the index scan evaluates all its run-time
	 * keys before it looks at any: a later column's error (or a STABLE
	 * function's NOTICE) must not depend on an earlier column being NULL.
	 */
	for (i = 0; i < gs->info->desc->nkeys; i++)
	{
		BgGuardKey *key = &gs->keys[i];

		nulls[i] = key->isnull;
		key->arg = key->value;
		if (key->skey != NULL)
		{
			nulls[i] = (key->skey->sk_flags & SK_ISNULL) != 0;
			key->arg = key->skey->sk_argument;
		}
		else if (key->expr != NULL)
			key->arg = ExecEvalExprSwitchContext(key->expr, econtext, &nulls[i]);
	}
	for (i = 0; i < gs->info->desc->nkeys; i++)
	{
		BgGuardKey *key = &gs->keys[i];

		/* a NULL key equals no row */
		if (nulls[i])
		{
			gs->skip = true;
			return;
		}
		if (bg_convert_arg(key->conv, key->type, &gs->info->desc->cols[i],
						   key->arg, InvalidOid, InvalidOid, &values[i]) != BG_KEY_OK)
		{
			/* no value of the key type can equal it */
			gs->skip = true;
			return;
		}
	}
	gs->evaluated = true;
	switch (bg_guard_ask(gs, values, trusted))
	{
		case BG_ANSWER_ABSENT:
			gs->skip = true;
			break;
		case BG_ANSWER_MAYBE:
			gs->hits_left = 1;
			break;
		case BG_ANSWER_UNKNOWN:
			break;
	}
}

/*
 * A row of a "maybe" key was found: count it as a source hit, once per
 * row.  Under a merge join (restore) or a scroll cursor (backward fetches)
 * the wrapped scan returns rows again; only a row past the furthest point
 * the scan has reached forward is new, and a key is unique, so hits never
 * outnumber the keys that were looked up.
 */
static void
bg_guard_count_row(BgGuardScanState *gs)
{
	if (!ScanDirectionIsForward(gs->css.ss.ps.state->es_direction))
	{
		gs->pos--;
		return;
	}
	if (++gs->pos <= gs->hwm)
		return;
	gs->hwm = gs->pos;
	if (gs->hits_left > 0 && gs->slotindex >= 0)
	{
		bg_slot_bump(gs->slotindex, BG_COUNT_SOURCE_HIT, 1);
		gs->hits_left--;
	}
}

/* ExecCustomScan: the wrapped scan's next row, unless the filter ruled it out. */
static TupleTableSlot *
bg_exec_guard_scan(CustomScanState *node)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;
	TupleTableSlot *slot;

	/* an EvalPlanQual recheck must see what the scan itself returns */
	if (node->ss.ps.state->es_epq_active != NULL)
	{
		if (gs->scan == NULL)
			bg_guard_init_scan(gs);
		if (gs->rescan)
		{
			ExecReScan(gs->scan);
			gs->rescan = false;
		}
		return ExecProcNode(gs->scan);
	}

	if (!gs->decided)
		bg_guard_decide(gs);
	if (gs->skip)
		return NULL;
	if (gs->scan == NULL)
		bg_guard_start_scan(gs);
	else if (gs->rescan)
	{
		ExecReScan(gs->scan);
		gs->rescan = false;
	}
	slot = ExecProcNode(gs->scan);
	if (TupIsNull(slot))
		return NULL;
	bg_guard_count_row(gs);
	if (node->ss.ps.ps_ProjInfo)
	{
		/* the projection was compiled for the node's own (virtual) scan slot */
		ExecCopySlot(node->ss.ss_ScanTupleSlot, slot);
		node->ss.ps.ps_ExprContext->ecxt_scantuple = node->ss.ss_ScanTupleSlot;
		return ExecProject(node->ss.ps.ps_ProjInfo);
	}
	return slot;
}

/* EndCustomScan: end the wrapped scan and unpin the key. */
static void
bg_end_guard_scan(CustomScanState *node)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;

	if (gs->scan)
		ExecEndNode(gs->scan);
	if (gs->info)
		bg_keyinfo_release(gs->info);
	gs->info = NULL;
}

/*
 * ReScanCustomScan: decide again at the next row.  The wrapped scan starts
 * again only if it is to run (a skipped scan costs no index access).
 */
static void
bg_rescan_guard_scan(CustomScanState *node)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;

	if (gs->scan != NULL && node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(gs->scan, node->ss.ps.chgParam);
	gs->decided = false;
	gs->rescan = true;
}

/* MarkPosCustomScan: the wrapped scan's position, or that this one is empty. */
static void
bg_mark_guard_scan(CustomScanState *node)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;

	if (!gs->decided)
		bg_guard_decide(gs);
	gs->marked_skip = gs->skip;
	gs->markpos = gs->pos;
	if (!gs->skip)
	{
		if (gs->scan == NULL)
			bg_guard_start_scan(gs);
		ExecMarkPos(gs->scan);
	}
}

/* RestrPosCustomScan: back to the marked position. */
static void
bg_restore_guard_scan(CustomScanState *node)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;

	gs->skip = gs->marked_skip;
	gs->pos = gs->markpos;
	if (!gs->skip)
		ExecRestrPos(gs->scan);
}

/*
 * ExplainCustomScan: with ANALYZE, how many keys the filter answered, and
 * the index of a wrapped scan that no scan needed (it was never
 * initialised, so EXPLAIN cannot show it as a node).
 */
static void
bg_explain_guard_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Plan	   *wrapped = (Plan *) linitial(cscan->custom_plans);

	if (!es->analyze)
		return;
	ExplainPropertyInteger("Key Checks", NULL, (int64) gs->checks, es);
	ExplainPropertyInteger("Answered by Filter", NULL, (int64) gs->answered, es);
	if (gs->scan == NULL)
	{
		Oid			indexid = IsA(wrapped, IndexOnlyScan) ?
			((IndexOnlyScan *) wrapped)->indexid : ((IndexScan *) wrapped)->indexid;
		char	   *name = get_rel_name(indexid);

		ExplainPropertyText("Index Scan Skipped", name ? quote_identifier(name) : "?", es);
	}
}

/* Make plans with the node readable by name (nodes/extensible.c). */
void
bg_guard_scan_register(void)
{
	RegisterCustomScanMethods(&bg_guard_scan_methods);
}
