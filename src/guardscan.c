/*-------------------------------------------------------------------------
 *
 * guardscan.c
 *	  The BloomGuard custom scan: asks the filter before the index scan it
 *	  wraps (planner.c makes it).
 *
 * What the node wraps, and what it refuses.  It was written for one child:
 * an IndexScan or IndexOnlyScan of a plain table's primary key index, the
 * plan of the path planner.c wrapped, with no ORDER BY operators.  At
 * executor start it tests the child's node type before it reads anything
 * of it, and any surprise (another node type, such as the gating Result
 * PostgreSQL puts above a scan with a pseudoconstant condition; more than
 * one child; another index; a key that changed since planning; a plan made
 * to never ask, with no key values) makes it a pass-through: it
 * initialises the child, opens nothing itself, never asks the filter, and
 * returns the child's rows as they are.  A surprise in the plan's shape is
 * logged at DEBUG1, never raised: the plain plan's answer is always right.
 *
 * On each (re)scan, before the first row is asked for, the node evaluates
 * every run-time key of the wrapped scan (each comparison value that is
 * not a constant, the key's and every other column's alike), takes the key
 * values, converts them to the key's types as guarded_exists() converts its
 * arguments (args.c), and, if the filter may be trusted (trust.c's rule,
 * checked here on every rescan: settings, transaction state and the
 * table's trigger can change under a cached plan), asks it.  "Absent": the
 * node returns no row, and the wrapped scan never runs.  "Maybe", or no
 * trusted filter: the wrapped scan runs unchanged and its rows are returned
 * as they are.  A key value that is NULL, or that no value of the key type
 * can equal (5.5 for an integer key), matches no row either.  The node
 * never skips the evaluation of anything the plain scan would evaluate
 * before its first row, so every error the plain plan raises (a division
 * by zero in another column's condition, an initplan's error) is raised
 * whatever the filter answers, and for a NULL key too.
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
 * later rescan.  This lazy start-up is kept only where it is provably
 * equivalent to the plain scan's, the "lazy shape":
 *	- every index condition is an operator or = ANY comparison (or IS
 *	  NULL) of an index column with a Const, a Param (a parameter, an outer
 *	  column of a nested loop, an initplan's value), or an expression that
 *	  is one of the key values: so the node, evaluating each run-time key
 *	  itself, in the scan's order and once, evaluates exactly what the scan
 *	  would, and hands it the values when it starts it;
 *	- the scan has no condition of its own besides the index's and its
 *	  target list is plain columns: nothing else is compiled at its start;
 *	- the start-up checks of what its start-up would compile (the EXECUTE
 *	  privilege of each comparison's function, and the object access
 *	  hook) are made by the node, in the same order.
 * What a skipped start-up leaves out is then only the index's lock and
 * its statistics (idx_scan counts scans that ran).  Every other plan is
 * initialised at start-up, and has the scan compute its run-time keys
 * (ExecReScan) before the node reads the key and asks: plain EXPLAIN
 * (which shows it), EvalPlanQual (never skipped: the recheck must see the
 * row the scan would have produced), and any scan outside the lazy shape.
 * The node opens the table as the wrapped scan does (ExecOpenScanRelation:
 * the executor holds its lock).  While it exists, the wrapped scan is
 * listed in custom_ps, so EXPLAIN, instrumentation and the executor's tree
 * walks see it; one never initialised is shown by EXPLAIN ANALYZE as
 * "Index Scan Skipped" and the index's name.  The index scan itself defers
 * index_beginscan() to its first fetch.
 *
 * Each run-time key is evaluated once per scan, as without the node.
 * Before the wrapped scan exists the node evaluates them (a Const is read
 * from the plan); when it then starts the scan it hands it the values,
 * setting the scan's run-time keys as the scan's first rescan would (a
 * STABLE function as the key is called once), and reads the key from
 * those scan keys from then on.  A scan started at start-up is first made
 * to compute its run-time keys (the ExecReScan() it would make at its
 * first row), and the node reads a key value from the scan key that
 * compares its column by equality with a value of its type; a Const or a
 * Param is read by the node itself, which costs nothing, and so is a
 * value that matches no scan key of its column by type.
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
 * Why this is one file of some 1070 lines: the node's callbacks, the lazy
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
#include "catalog/objectaccess.h"
#include "catalog/pg_type.h"
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
	int			pos;			/* before the scan starts: its run-time key
								 * (lazy shape), or -1 */
	ExprState  *expr;			/* neither: the value's expression... */
	Datum		value;			/* ... or, a Const, its value */
	bool		isnull;
	Datum		arg;			/* the value this scan evaluated */
} BgGuardKey;

typedef struct BgGuardScanState
{
	CustomScanState css;
	PlanState  *scan;			/* the wrapped index scan, once initialised */
	int			eflags;			/* to initialise it with */
	Relation	rel;			/* the wrapped scan's table; NULL: pass-through */
	BgKeyInfo  *info;			/* its key, pinned; NULL: never shortcut */
	BgGuardKey *keys;			/* one per key column, where info is set */
	bool	   *keys_ready;		/* the wrapped scan's RuntimeKeysReady, if it
								 * has runtime keys */
	int			nvalues;		/* lazy shape: the wrapped scan's run-time
								 * keys, which the node evaluates until the
								 * scan starts */
	ExprState **vexprs;			/* their expressions, in the scan's order */
	Datum	   *vvalues;		/* what this scan evaluated */
	bool	   *vnulls;
	bool		decided;		/* this scan has asked the filter */
	bool		evaluated;		/* ... having evaluated every run-time key */
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

/* An expression without the binary-compatible relabellings on top. */
static Node *
bg_guard_strip(Node *expr)
{
	while (expr != NULL && IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	return expr;
}

/*
 * Is this key value expression one that costs nothing to evaluate twice,
 * and whose evaluation nobody can see: a Const, a Param (an outer column
 * of a nested loop is one by now), possibly relabelled?
 */
static bool
bg_guard_cheap_value(Node *expr)
{
	expr = bg_guard_strip(expr);
	return IsA(expr, Const) || IsA(expr, Param);
}

/*
 * The wrapped scan's run-time keys (IndexScan and IndexOnlyScan alike):
 * the array, how many, their expression context and RuntimeKeysReady; and
 * its scan keys.
 */
static int
bg_guard_runtime_keys(PlanState *scan, IndexRuntimeKeyInfo **keys,
					  ExprContext **cxt, bool **ready, ScanKey *skeys, int *nskeys)
{
	if (IsA(scan, IndexScanState))
	{
		IndexScanState *iss = (IndexScanState *) scan;

		*keys = iss->iss_RuntimeKeys;
		*cxt = iss->iss_RuntimeContext;
		*ready = &iss->iss_RuntimeKeysReady;
		*skeys = iss->iss_ScanKeys;
		*nskeys = iss->iss_NumScanKeys;
		return iss->iss_NumRuntimeKeys;
	}
	if (IsA(scan, IndexOnlyScanState))
	{
		IndexOnlyScanState *ioss = (IndexOnlyScanState *) scan;

		*keys = ioss->ioss_RuntimeKeys;
		*cxt = ioss->ioss_RuntimeContext;
		*ready = &ioss->ioss_RuntimeKeysReady;
		*skeys = ioss->ioss_ScanKeys;
		*nskeys = ioss->ioss_NumScanKeys;
		return ioss->ioss_NumRuntimeKeys;
	}
	*keys = NULL;
	*cxt = NULL;
	*ready = NULL;
	*skeys = NULL;
	*nskeys = 0;
	return 0;
}

/*
 * The wrapped scan now exists, initialised at start-up: find, for each key
 * column whose value is not cheap to evaluate again, the scan key that
 * compares it by equality with a value of the type custom_exprs has for
 * it (see the file header), and note the scan's RuntimeKeysReady if it has
 * run-time keys: the node has the scan compute them all before it asks.
 */
static void
bg_guard_find_scan_keys(BgGuardScanState *gs, List *exprs)
{
	IndexRuntimeKeyInfo *rk;
	ExprContext *cxt;
	ScanKey		keys;
	int			nkeys;
	bool	   *ready;
	int			nruntime = bg_guard_runtime_keys(gs->scan, &rk, &cxt, &ready, &keys, &nkeys);
	int			i;
	int			j;

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
				break;
			}
		}
	}
	gs->keys_ready = nruntime > 0 ? ready : NULL;
}

/*
 * Is expr (stripped) the value of key column col, or, with col -1, of any?
 * Returns its key column, or -1.
 */
static int
bg_guard_key_value(Node *expr, List *exprs, int col)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, exprs)
	{
		Node	   *value = bg_guard_strip((Node *) lfirst(lc));

		if ((col < 0 || col == i) && !IsA(value, Const) && equal(expr, value))
			return i;
		i++;
	}
	return -1;
}

/*
 * Check, as the wrapped scan's start-up would when it compiles this index
 * condition (ExecInitFunc(), and ExecInitExprRec() for = ANY), the EXECUTE
 * privilege of its function, and call the object access hook.
 */
static void
bg_guard_check_functions(Node *qual)
{
	Oid			funcs[2] = {InvalidOid, InvalidOid};
	int			i;

	if (IsA(qual, OpExpr))
		funcs[0] = ((OpExpr *) qual)->opfuncid;
	else if (IsA(qual, ScalarArrayOpExpr))
	{
		funcs[0] = ((ScalarArrayOpExpr *) qual)->opfuncid;
		funcs[1] = ((ScalarArrayOpExpr *) qual)->hashfuncid;
	}
	for (i = 0; i < 2; i++)
	{
		AclResult	aclresult;

		if (!OidIsValid(funcs[i]))
			continue;
		aclresult = bg_proc_aclcheck(funcs[i], GetUserId(), ACL_EXECUTE);
		if (aclresult != ACLCHECK_OK)
			aclcheck_error(aclresult, OBJECT_FUNCTION, get_func_name(funcs[i]));
		InvokeFunctionExecuteHook(funcs[i]);
	}
}

/* index conditions of a scan of the lazy shape, at most */
#define BG_LAZY_MAX_QUALS 32

/*
 * Is the wrapped scan of the lazy shape (see the file header)?  If so, set
 * up the node's evaluation of its run-time keys: one expression per
 * run-time key, in the order ExecIndexBuildScanKeys() makes them (its
 * index conditions' order; the comparison value with one relabelling
 * stripped, unless a Const), and each key column's run-time key.  The
 * EXECUTE privileges the scan's start-up would check are checked here, in
 * its order, and their errors raised.
 */
static bool
bg_guard_lazy_shape(BgGuardScanState *gs, Plan *wrapped, List *exprs)
{
	List	   *quals;
	List	   *origs;
	Node	   *values[BG_LAZY_MAX_QUALS];	/* NULL: no run-time key */
	int			keyof[BG_LAZY_MAX_QUALS];	/* the key column it is the value
											 * of, or -1 */
	int			nquals;
	int			nkeys = gs->info->desc->nkeys;
	ListCell   *lq;
	ListCell   *lo;
	ListCell   *lc;
	int			i;
	int			j;

	if (wrapped->qual != NIL)
		return false;
	foreach(lc, wrapped->targetlist)
	{
		if (!IsA(((TargetEntry *) lfirst(lc))->expr, Var))
			return false;
	}
	if (IsA(wrapped, IndexScan))
	{
		if (((IndexScan *) wrapped)->indexorderby != NIL)
			return false;
		quals = ((IndexScan *) wrapped)->indexqual;
		/* what its start-up compiles */
		origs = ((IndexScan *) wrapped)->indexqualorig;
	}
	else
	{
		quals = ((IndexOnlyScan *) wrapped)->indexqual;
		origs = ((IndexOnlyScan *) wrapped)->recheckqual;
	}
	nquals = list_length(quals);
	if (nquals != list_length(origs) || nquals > BG_LAZY_MAX_QUALS)
		return false;

	/* the shape first: nothing is checked or compiled for another one */
	j = 0;
	forboth(lq, quals, lo, origs)
	{
		Node	   *qual = (Node *) lfirst(lq);
		Node	   *orig = (Node *) lfirst(lo);
		Node	   *value = NULL;
		Node	   *bare;
		int			col = -1;

		values[j] = NULL;
		keyof[j] = -1;
		if (!IsA(orig, OpExpr) && !IsA(orig, ScalarArrayOpExpr) && !IsA(orig, NullTest))
			return false;
		if (IsA(qual, OpExpr) && list_length(((OpExpr *) qual)->args) == 2)
		{
			/* the index column compared: a key value's own condition */
			bare = bg_guard_strip(linitial(((OpExpr *) qual)->args));
			if (IsA(bare, Var) && ((Var *) bare)->varattno <= nkeys)
				col = ((Var *) bare)->varattno - 1;
			value = lsecond(((OpExpr *) qual)->args);
		}
		else if (IsA(qual, ScalarArrayOpExpr))
			value = lsecond(((ScalarArrayOpExpr *) qual)->args);	/* an array */
		else if (!IsA(qual, NullTest))
			return false;
		/* ExecIndexBuildScanKeys() strips one relabelling */
		if (value != NULL && IsA(value, RelabelType))
			value = (Node *) ((RelabelType *) value)->arg;
		if (value != NULL && !IsA(value, Const))
		{
			bare = bg_guard_strip(value);
			/* the key column's own value, or another column's Param */
			if (col >= 0)
				keyof[j] = bg_guard_key_value(bare, exprs, col);
			if (keyof[j] < 0 && !IsA(bare, Param))
				return false;
			values[j] = value;
		}
		j++;
	}

	/* every key value that is not a Const is one of the run-time keys */
	for (i = 0; i < nkeys; i++)
	{
		gs->keys[i].pos = -1;
		if (IsA(bg_guard_strip((Node *) list_nth(exprs, i)), Const))
			continue;
		for (j = 0; j < nquals && gs->keys[i].pos < 0; j++)
		{
			if (keyof[j] == i)
				gs->keys[i].pos = j;
		}
		if (gs->keys[i].pos < 0)
			return false;
	}

	/*
	 * The scan's start-up, in its order: each condition's function, then
	 * its comparison value (ExecInitExpr() checks the value's functions).
	 * The run-time keys are numbered as the scan numbers them.
	 */
	gs->vexprs = palloc(sizeof(ExprState *) * Max(nquals, 1) +
						MAXALIGN(sizeof(Datum) * Max(nquals, 1)) +
						sizeof(bool) * Max(nquals, 1));
	gs->vvalues = (Datum *) ((char *) gs->vexprs + sizeof(ExprState *) * Max(nquals, 1));
	gs->vnulls = (bool *) ((char *) gs->vvalues + MAXALIGN(sizeof(Datum) * Max(nquals, 1)));
	gs->nvalues = 0;
	j = 0;
	foreach(lo, origs)
	{
		bg_guard_check_functions((Node *) lfirst(lo));
		if (values[j] != NULL)
		{
			for (i = 0; i < nkeys; i++)
			{
				if (gs->keys[i].pos == j)
					gs->keys[i].pos = gs->nvalues;
			}
			gs->vexprs[gs->nvalues++] = ExecInitExpr((Expr *) values[j], &gs->css.ss.ps);
		}
		j++;
	}
	return true;
}

/*
 * A wrapped scan of the lazy shape started after this scan evaluated its
 * run-time keys: set them as its first ExecReScan() would
 * (nodeIndexscan.c's ExecIndexEvalRuntimeKeys()), from the values the
 * node evaluated, so that no expression is evaluated twice (a STABLE
 * function is called once per scan, as without the node), and read the
 * key from its scan keys from now on.  The values live in the node's
 * expression context, which is reset only at the node's next decision,
 * before which the wrapped scan is rescanned (and evaluates its keys
 * itself) or does not run.  False if the scan's run-time keys are not
 * those the node evaluated (the shape was misread).
 */
static bool
bg_guard_hand_keys(BgGuardScanState *gs)
{
	IndexRuntimeKeyInfo *rk;
	ExprContext *cxt;
	bool	   *ready;
	ScanKey		skeys;
	int			nskeys;
	int			nrk = bg_guard_runtime_keys(gs->scan, &rk, &cxt, &ready, &skeys, &nskeys);
	int			i;
	int			j;

	if (nrk != gs->nvalues)
		return false;
	for (j = 0; j < nrk; j++)
	{
		if (!equal(rk[j].key_expr->expr, gs->vexprs[j]->expr))
			return false;
	}
	for (j = 0; j < nrk; j++)
	{
		ScanKey		sk = rk[j].scan_key;

		sk->sk_argument = gs->vvalues[j];
		if (gs->vnulls[j])
		{
			sk->sk_flags |= SK_ISNULL;
			continue;
		}
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
	for (i = 0; i < gs->info->desc->nkeys; i++)
	{
		if (gs->keys[i].pos >= 0)
			gs->keys[i].skey = rk[gs->keys[i].pos].scan_key;
		gs->keys[i].pos = -1;
	}
	gs->keys_ready = nrk > 0 ? ready : NULL;
	return true;
}

/*
 * Start the wrapped scan at the first scan that needs it: initialise it,
 * and hand it the run-time keys this scan evaluated.  Should they not be
 * the scan's, the node passes the scan through from now on, and the scan
 * evaluates its keys itself.
 */
static void
bg_guard_start_scan(BgGuardScanState *gs)
{
	bg_guard_init_scan(gs);
	if (gs->info == NULL)
		return;
	if (!gs->evaluated || !bg_guard_hand_keys(gs))
	{
		if (gs->evaluated)
			ereport(DEBUG1,
					(errmsg_internal("BloomGuard: the run-time keys of the scan of \"%s\" are not those planned; passing it through",
									 RelationGetRelationName(gs->rel))));
		bg_keyinfo_release(gs->info);
		gs->info = NULL;
	}
}

/*
 * How each key value is read at every scan where it is not read from a
 * scan key or a run-time key the node evaluates: a Const (possibly
 * relabelled: the same Datum) from the plan, with nothing to initialise;
 * anything else by its expression.
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
		Node	   *bare = bg_guard_strip(expr);

		if (key->skey != NULL || key->pos >= 0)
			continue;
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
 * The plan's wrapped scan, if it is one the node was written for: one
 * IndexScan or IndexOnlyScan without ORDER BY operators, of a relation of
 * the range table.  NULL for anything else (the caller passes it through).
 */
static Scan *
bg_guard_wrapped(CustomScan *cscan, EState *estate)
{
	Plan	   *child;
	Scan	   *scan;

	if (list_length(cscan->custom_plans) != 1)
		return NULL;
	child = (Plan *) linitial(cscan->custom_plans);
	if (IsA(child, IndexScan))
	{
		if (((IndexScan *) child)->indexorderby != NIL)
			return NULL;
	}
	else if (!IsA(child, IndexOnlyScan) ||
			 ((IndexOnlyScan *) child)->indexorderby != NIL)
		return NULL;
	scan = (Scan *) child;
	if (scan->scanrelid == 0 ||
		scan->scanrelid > (Index) list_length(estate->es_range_table) ||
		exec_rt_fetch(scan->scanrelid, estate)->rtekind != RTE_RELATION)
		return NULL;
	return scan;
}

/* The index a wrapped scan (bg_guard_wrapped()) reads. */
static Oid
bg_guard_indexid(Scan *wrapped)
{
	return IsA(wrapped, IndexOnlyScan) ?
		((IndexOnlyScan *) wrapped)->indexid : ((IndexScan *) wrapped)->indexid;
}

/*
 * BeginCustomScan: check that the child is one the node was written for
 * (or pass it through), open the table and work out the key's conversion.
 * The wrapped scan is initialised here only where it cannot wait for a
 * scan that needs it (see the file header).
 */
static void
bg_begin_guard_scan(CustomScanState *node, EState *estate, int eflags)
{
	BgGuardScanState *gs = (BgGuardScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Scan	   *wrapped = bg_guard_wrapped(cscan, estate);
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
	gs->rescan = false;
	gs->slotindex = -1;
	if (wrapped == NULL)
	{
		/* a child of another shape: passed through, nothing opened */
		ereport(DEBUG1,
				(errmsg_internal("BloomGuard: the wrapped plan is a node of type %d, not a primary key index scan; passing it through",
								 list_length(cscan->custom_plans) == 1 ?
								 (int) nodeTag(linitial(cscan->custom_plans)) : -1)));
		bg_guard_init_scan(gs);
		return;
	}
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) || cscan->custom_exprs == NIL)
	{
		/* shown, or planned never to ask: passed through */
		bg_guard_init_scan(gs);
		return;
	}
	/* the wrapped scan's own table, as it opens it (the executor holds the lock) */
	gs->rel = ExecOpenScanRelation(estate, wrapped->scanrelid, eflags);
	gs->info = bg_keyinfo_acquire(gs->rel);
	if (gs->info->desc == NULL || !gs->info->desc->hashable ||
		list_length(cscan->custom_exprs) != gs->info->desc->nkeys ||
		gs->info->desc->indexoid != bg_guard_indexid(wrapped))
	{
		/* the key changed since planning: the plan will be made again */
		bg_keyinfo_release(gs->info);
		gs->info = NULL;
		bg_guard_init_scan(gs);
		return;
	}
	gs->keys = palloc0(sizeof(BgGuardKey) * gs->info->desc->nkeys);
	foreach(lc, cscan->custom_exprs)
	{
		Oid			type = exprType((Node *) lfirst(lc));

		gs->keys[i].type = type;
		gs->keys[i].conv = bg_classify_arg(type, &gs->info->desc->cols[i]);
		gs->keys[i].pos = -1;
		i++;
	}
	if (estate->es_epq_active != NULL ||
		!bg_guard_lazy_shape(gs, &wrapped->plan, cscan->custom_exprs))
	{
		/* started now; a costly key is read from its scan keys */
		for (i = 0; i < gs->info->desc->nkeys; i++)
			gs->keys[i].pos = -1;
		gs->nvalues = 0;
		bg_guard_init_scan(gs);
		bg_guard_find_scan_keys(gs, cscan->custom_exprs);
	}
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
 * Before a scan's first row: evaluate every run-time key of the wrapped
 * scan, ask the filter about the key, and decide whether the wrapped scan
 * runs (see the file header).
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
	 * Not started yet (the lazy shape): every run-time key of the scan, in
	 * its order, as the index scan evaluates all of them before it looks at
	 * any, so that an error of any (or a STABLE function's NOTICE) does not
	 * depend on the filter's answer or on a key column being NULL.
	 */
	if (gs->scan == NULL)
	{
		for (i = 0; i < gs->nvalues; i++)
			gs->vvalues[i] = ExecEvalExprSwitchContext(gs->vexprs[i], econtext,
													   &gs->vnulls[i]);
	}
	gs->evaluated = true;
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
		else if (key->pos >= 0)
		{
			nulls[i] = gs->vnulls[key->pos];
			key->arg = gs->vvalues[key->pos];
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

	if (!es->analyze)
		return;
	ExplainPropertyInteger("Key Checks", NULL, (int64) gs->checks, es);
	ExplainPropertyInteger("Answered by Filter", NULL, (int64) gs->answered, es);
	/* only a scan of the lazy shape, an index scan, is ever left out */
	if (gs->scan == NULL)
	{
		char	   *name = get_rel_name(bg_guard_indexid((Scan *) linitial(cscan->custom_plans)));

		ExplainPropertyText("Index Scan Skipped", name ? quote_identifier(name) : "?", es);
	}
}

/* Make plans with the node readable by name (nodes/extensible.c). */
void
bg_guard_scan_register(void)
{
	RegisterCustomScanMethods(&bg_guard_scan_methods);
}
