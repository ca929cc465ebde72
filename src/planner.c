/*-------------------------------------------------------------------------
 *
 * planner.c
 *	  The planner path: ordinary WHERE pk = ... queries take the guard's
 *	  shortcut.
 *
 * Every index scan or index-only scan of a guarded table's primary key
 * index whose index conditions fix every key column by equality to a value
 * known at execution time (a Const, a Param, an outer Var of a
 * parameterized path, any expression the index scan itself evaluates per
 * scan) is wrapped in a CustomScan, "BloomGuard" (guardscan.c): an
 * unparameterized one after the planner has made the table's paths
 * (set_rel_pathlist_hook), a parameterized one in each join path that uses
 * it, once that is costed (set_join_pathlist_hook).  At execution the wrapper
 * evaluates the key values, asks the filter, and returns nothing when it
 * says absent; otherwise it runs the wrapped scan unchanged.
 *
 * Why the wrapper replaces the index path in place, at the same cost.  It
 * never does more than the wrapped scan (one filter check, a fraction of a
 * microsecond, against an index descent), and it does much less only for
 * absent keys, a share of the traffic the planner cannot know.  Costing it
 * lower would change which plans the planner picks on a guess, and could
 * make hits, which still pay the full scan, slower; at equal cost every
 * plan choice stays the one the planner would have made, with the filter
 * check added under it.  That is why parameterized scans are wrapped only
 * in costed join paths: final_cost_nestloop() costs the inner side of a
 * semi, anti or unique join cheaply only when it is an index scan
 * (has_indexed_join_quals() accepts no custom scan), and a wrapper in the
 * table's own path list made every such nested loop dearer by
 * cpu_tuple_cost per outer row it expected to find no match.  The join
 * paths' own path trees are shared (an index path by every join that uses
 * it, an append or memoize path perhaps by a partial path), so they are
 * copied on the way to a wrapped scan, never changed, and partial paths
 * are left as they are: a parallel nested loop the planner prefers keeps
 * its plain index scan.
 *
 * What is wrapped: a path is wrapped only where the shortcut can be right
 * and the node's plan is the one it was written for:
 *	- an IndexPath of an index scan or index-only scan of the table's
 *	  primary key index, with no ORDER BY operators, whose index clauses
 *	  fix every key column by equality under the key's own btree operator
 *	  family, to a value whose type converts to the key type exactly as
 *	  guarded_exists() converts an argument (args.c);
 *	- of a plain table (a partition is one; an inheritance parent scanned
 *	  with its children is not) that is guarded (it has a slot), with
 *	  bloomguard.transparent on.
 *	  Cached plans follow the guard: a build that puts a filter in place
 *	  (attach's, a rebuild, the worker's first build after a restart)
 *	  sends a relcache invalidation as it swaps the filter in (build.c),
 *	  and detach sends one at commit.  Claiming a slot sends none: a plan
 *	  made before the worker claims one stays unwrapped until that build,
 *	  and one made between the claim and the build is wrapped and falls
 *	  back at execution until then (the guard is not ready).
 * Everything else the trust rule needs is checked at execution, on every
 * rescan (guardscan.c), because cached plans outlive settings and states.
 *
 * What is refused, and gets PostgreSQL's plain plan:
 *	- every other kind of path: bitmap scans, sequential scans, "pk = ANY
 *	  (array)" (handing the wrapped scan a filtered array needs an
 *	  executor parameter of the wrapper's own, which EvalPlanQual
 *	  rechecks, subplans and a second array condition on the column all
 *	  got wrong in review: a crash, lost rows, planning errors), a key
 *	  compared with a subplan (it would be evaluated twice), keys not
 *	  fixed whole;
 *	- a path whose plan create_scan_plan() would put under a gating
 *	  Result: one whose restriction or join clauses include a
 *	  pseudoconstant (a condition that references no column of the
 *	  query level, such as now() > ..., current_user = ..., a boolean
 *	  parameter, or $1 = 6 that an equivalence class derives from id = $1
 *	  AND id = 6; root->hasPseudoConstantQuals answers most queries at
 *	  once).  The node's child would be that Result, not the scan.  The
 *	  other way out, stripping the child's Result in PlanCustomPath (the
 *	  same Result stands above the node), rests on createplan.c gating
 *	  the custom scan with the very clauses it gated the index scan with,
 *	  an internal detail the node would have to re-check on every
 *	  version; refusing costs only the shortcut of such queries;
 *	- parallel paths: a parallel worker's lock table and writer list do
 *	  not show the leader's writes (statement.c, trust.c), so the node is
 *	  parallel_safe = false, partial paths are never wrapped, and a
 *	  parallel append (under a Gather) is left as it is;
 *	- row-level security applying to the query, or to a parent the table
 *	  was expanded from (the wrapped scan would keep its quals, but the
 *	  filter must not be consulted: trust.c).
 * The node cannot be refused once the path is chosen: create_plan() takes
 * whatever PlanCustomPath returns for a CustomScan.  So should the wrapped
 * path's plan be anything but the index scan it promised, PlanCustomPath
 * gives the node no key values (logged at DEBUG1), and guardscan.c tests
 * the child's node type before it reads it and passes any other through.
 *
 * Why this is one file of some 650 lines: the two hooks, the copying of
 * join paths down to a wrapped scan and PlanCustomPath all apply the one
 * decision of what may be wrapped (bg_path_wrappable()), and a third of
 * the file is the list above; split, the decision would be read in one
 * file and applied in others.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/paramassign.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "parser/parsetree.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bloomguard.h"

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;
static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/* bloomguard.shortcut_costing (see bg_shortcut_share()) */
static bool bg_shortcut_costing = false;

/* lookups a guard must have counted before its share is used for costing */
#define BG_SHARE_MIN_CHECKS 1000

static Plan *bg_plan_guard_path(PlannerInfo *root, RelOptInfo *rel,
								CustomPath *best_path, List *tlist,
								List *clauses, List *custom_plans);

static const CustomPathMethods bg_guard_path_methods = {
	.CustomName = "BloomGuard",
	.PlanCustomPath = bg_plan_guard_path,
};

/* The values an index path fixes the key with. */
typedef struct BgPathKey
{
	List	   *values;			/* one expression per key column */
} BgPathKey;

/*
 * Is this index clause an equality of key column col that the filter can
 * answer?  Sets *value to the expression compared with the column.
 */
static bool
bg_key_equality(IndexOptInfo *index, IndexClause *iclause, const BgKeyColumn *col,
				Node **value)
{
	ListCell   *lc;

	foreach(lc, iclause->indexquals)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		Node	   *clause = (Node *) rinfo->clause;
		Node	   *other = NULL;
		Oid			opno;
		BgArgConv	conv;

		if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
		{
			OpExpr	   *op = (OpExpr *) clause;
			Node	   *left = linitial(op->args);
			Node	   *right = lsecond(op->args);

			opno = op->opno;
			if (match_index_to_operand(left, iclause->indexcol, index))
				other = right;
			else if (match_index_to_operand(right, iclause->indexcol, index))
				other = left;
		}
		/* a subplan would be evaluated twice, once here and once in the scan */
		if (other == NULL || contain_subplans(other))
			continue;
		if (get_op_opfamily_strategy(opno, index->opfamily[iclause->indexcol]) !=
			BTEqualStrategyNumber)
			continue;
		/*
		 * The value must convert to the key the way guarded_exists' does,
		 * in C (an unknown-type value would need its input function: the
		 * index scan has a typed one).
		 */
		conv = bg_classify_arg(exprType(other), col);
		if (conv == BG_ARG_SQL || conv == BG_ARG_INPUT)
			continue;
		*value = other;
		return true;
	}
	return false;
}

/*
 * Does this index path fix every key column of desc by equality?  Fills
 * *pk if so.
 */
static bool
bg_path_fixes_key(IndexPath *ipath, const BgKeyDesc *desc, BgPathKey *pk)
{
	Node	   *values[INDEX_MAX_KEYS];
	ListCell   *lc;
	int			i;

	if (ipath->indexinfo->indexoid != desc->indexoid || ipath->indexorderbys != NIL)
		return false;
	memset(values, 0, sizeof(values));
	foreach(lc, ipath->indexclauses)
	{
		IndexClause *iclause = lfirst_node(IndexClause, lc);
		int			c = iclause->indexcol;
		Node	   *value;

		if (c >= desc->nkeys || values[c] != NULL || iclause->indexcols != NIL)
			continue;
		if (bg_key_equality(ipath->indexinfo, iclause, &desc->cols[c], &value))
			values[c] = value;
	}
	pk->values = NIL;
	for (i = 0; i < desc->nkeys; i++)
	{
		if (values[i] == NULL)
			return false;
		pk->values = lappend(pk->values, values[i]);
	}
	return true;
}

/*
 * Would create_scan_plan() put a gating Result above the plan of this
 * index path?  It does when a clause it enforces for the path is
 * pseudoconstant (references no column of the query level: now() > ...,
 * current_user = ..., a boolean parameter, $1 = 6 derived from id = $1 AND
 * id = 6): those clauses are the index's restriction clauses (the table's,
 * less what the index predicate implies) and, for a parameterized path,
 * its join clauses, as createplan.c takes them on PostgreSQL 15 to 18.
 * root->hasPseudoConstantQuals is false for most queries, and answers
 * them at once.
 */
static bool
bg_path_gated(PlannerInfo *root, IndexPath *ipath)
{
	ListCell   *lc;

	if (!root->hasPseudoConstantQuals)
		return false;
	foreach(lc, ipath->indexinfo->indrestrictinfo)
	{
		if (lfirst_node(RestrictInfo, lc)->pseudoconstant)
			return true;
	}
	if (ipath->path.param_info != NULL)
	{
		foreach(lc, ipath->path.param_info->ppi_clauses)
		{
			if (lfirst_node(RestrictInfo, lc)->pseudoconstant)
				return true;
		}
	}
	return false;
}

/*
 * May this path, of a relation whose key desc describes, be wrapped (the
 * file header's list): an index scan or index-only scan, parallel or not
 * as the caller requires, of the primary key index, fixing the whole key,
 * with no gating Result above its plan?  Fills *pk if so.
 */
static bool
bg_path_wrappable(PlannerInfo *root, Path *path, const BgKeyDesc *desc, BgPathKey *pk)
{
	return IsA(path, IndexPath) &&
		(path->pathtype == T_IndexScan || path->pathtype == T_IndexOnlyScan) &&
		!path->parallel_aware &&
		bg_path_fixes_key((IndexPath *) path, desc, pk) &&
		!bg_path_gated(root, (IndexPath *) path);
}

/*
 * The share of a guarded table's key checks that its filter answered
 * alone, for bloomguard.shortcut_costing: shortcuts / checks of its
 * counters since they were last reset (bloomguard_health), or 0 (cost as
 * the index scan) while the setting is off or fewer than
 * BG_SHARE_MIN_CHECKS checks were counted.
 */
static double
bg_shortcut_share(Oid relid)
{
	BgSlotCopy	copy;
	uint64		checks;

	if (!bg_shortcut_costing || !bg_slot_copy_rel(relid, &copy))
		return 0.0;
	checks = copy.counters[BG_COUNT_SHORTCUT] + copy.counters[BG_COUNT_SOURCE_LOOKUP] +
		copy.counters[BG_COUNT_FALLBACK];
	if (checks < BG_SHARE_MIN_CHECKS)
		return 0.0;
	return (double) copy.counters[BG_COUNT_SHORTCUT] / (double) checks;
}

/*
 * A BloomGuard path wrapping ipath, with ipath's shape.  Its cost is
 * ipath's, or with a shortcut share (bg_shortcut_share()) a filter probe
 * plus the share's complement of ipath's, start-up and run alike (a key
 * the filter rules out skips the index descent too).  It keeps nothing of
 * its own: the key values are read from the wrapped path when the plan is
 * made, after any reparameterization (partitionwise joins) has adjusted it.
 */
static CustomPath *
bg_guard_path(RelOptInfo *rel, IndexPath *ipath, double share)
{
	CustomPath *cpath = makeNode(CustomPath);

	cpath->path.pathtype = T_CustomScan;
	cpath->path.parent = rel;
	cpath->path.pathtarget = ipath->path.pathtarget;
	cpath->path.param_info = ipath->path.param_info;
	cpath->path.parallel_aware = false;
	cpath->path.parallel_safe = false;
	cpath->path.parallel_workers = 0;
	cpath->path.rows = ipath->path.rows;
	cpath->path.startup_cost = ipath->path.startup_cost;
	cpath->path.total_cost = ipath->path.total_cost;
	if (share > 0.0)
	{
		/* hashing the key and reading one block of the filter */
		cpath->path.startup_cost = 2 * cpu_operator_cost +
			(1.0 - share) * ipath->path.startup_cost;
		cpath->path.total_cost = cpath->path.startup_cost +
			(1.0 - share) * (ipath->path.total_cost - ipath->path.startup_cost);
	}
	cpath->path.pathkeys = ipath->path.pathkeys;
	/* btree scans (every primary key) go backward and mark and restore */
	cpath->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cpath->custom_paths = list_make1(ipath);
	cpath->methods = &bg_guard_path_methods;
	return cpath;
}

/*
 * Does a security barrier (row-level security policies, a security_barrier
 * view) restrict rel's rows, or those of a parent it was expanded from?  A
 * partition or inheritance child gets its parent's policies as quals of
 * its own; its RTE has no securityQuals, and the leaf itself may have no
 * policies, so the parents' RTEs are looked at.
 */
static bool
bg_rel_has_security_quals(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte)
{
	Index		relid = rel->relid;

	if (rte->securityQuals != NIL)
		return true;
	while (root->append_rel_array != NULL && root->append_rel_array[relid] != NULL)
	{
		relid = root->append_rel_array[relid]->parent_relid;
		if (planner_rt_fetch(relid, root)->securityQuals != NIL)
			return true;
	}
	return false;
}

/*
 * May the primary key index paths of rel, a relation of root's query, be
 * wrapped (see the file header)?  Returns its key description, pinned
 * (release it with bg_keyinfo_release()), or NULL.
 */
static BgKeyInfo *
bg_rel_guardable(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte;
	Relation	relation;
	BgKeyInfo  *info;
	BgSlotRef	ref = BG_SLOT_REF_INIT;

	if (!bg_trust_transparent() || !bg_loaded() ||
		(rel->reloptkind != RELOPT_BASEREL &&
		 rel->reloptkind != RELOPT_OTHER_MEMBER_REL))
		return NULL;
	rte = planner_rt_fetch(rel->relid, root);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION ||
		rte->inh || bg_rel_has_security_quals(root, rel, rte) ||
		!bg_slot_find(rte->relid, &ref))
		return NULL;

	/* the planner holds a lock on every relation it plans */
	relation = table_open(rte->relid, NoLock);
	info = bg_keyinfo_acquire(relation);
	if (info->desc == NULL || !info->desc->hashable ||
		bg_rls_applies(relation, true))
	{
		bg_keyinfo_release(info);
		info = NULL;
	}
	table_close(relation, NoLock);
	return info;
}

/*
 * set_rel_pathlist_hook: wrap the unparameterized primary key index paths
 * of a guarded table (see the file header); parameterized ones are wrapped
 * in the join paths that use them, once those are costed.
 */
static void
bg_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					RangeTblEntry *rte)
{
	BgKeyInfo  *info;
	double		share;
	ListCell   *lc;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if ((info = bg_rel_guardable(root, rel)) == NULL)
		return;
	share = bg_shortcut_share(rte->relid);
	foreach(lc, rel->pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);
		BgPathKey	pk;

		/* a discounted path must be in the list before joins are costed */
		if ((path->param_info == NULL || share > 0.0) &&
			bg_path_wrappable(root, path, info->desc, &pk))
			lfirst(lc) = bg_guard_path(rel, (IndexPath *) path, share);
	}
	bg_keyinfo_release(info);
}

/* A flat copy of a path node of size bytes, no longer parallel safe. */
static Path *
bg_path_copy(Path *path, Size size)
{
	Path	   *copy = palloc(size);

	memcpy(copy, path, size);
	copy->parallel_safe = false;
	return copy;
}

/*
 * The path with the parameterized primary key index paths of guarded
 * tables below it wrapped, through the join, memoize and (non-parallel)
 * append paths above them (the planner materializes no parameterized
 * path); path itself if none is.  Paths
 * are shared (a base relation's index path by every join that uses it, an
 * append or memoize path perhaps by a partial path too), so every path on
 * the way is copied, never changed, and the copies are not parallel safe.
 */
static Path *
bg_wrap_inner_paths(PlannerInfo *root, Path *path)
{
	Path	   *copy = NULL;
	ListCell   *lc;

	check_stack_depth();
	switch (nodeTag(path))
	{
		case T_IndexPath:
			if (path->param_info != NULL)
			{
				BgKeyInfo  *info = bg_rel_guardable(root, path->parent);
				BgPathKey	pk;

				if (info != NULL)
				{
					if (bg_path_wrappable(root, path, info->desc, &pk))
						copy = (Path *) bg_guard_path(path->parent, (IndexPath *) path, 0.0);
					bg_keyinfo_release(info);
				}
			}
			break;
		case T_NestPath:
		case T_MergePath:
		case T_HashPath:
			{
				JoinPath   *jp = (JoinPath *) path;
				Path	   *outer = bg_wrap_inner_paths(root, jp->outerjoinpath);
				Path	   *inner = bg_wrap_inner_paths(root, jp->innerjoinpath);

				if (outer == jp->outerjoinpath && inner == jp->innerjoinpath)
					break;
				copy = bg_path_copy(path, IsA(path, NestPath) ? sizeof(NestPath) :
									IsA(path, MergePath) ? sizeof(MergePath) :
									sizeof(HashPath));
				((JoinPath *) copy)->outerjoinpath = outer;
				((JoinPath *) copy)->innerjoinpath = inner;
				break;
			}
		case T_MemoizePath:
			{
				Path	   *sub = bg_wrap_inner_paths(root, ((MemoizePath *) path)->subpath);

				if (sub == ((MemoizePath *) path)->subpath)
					break;
				copy = bg_path_copy(path, sizeof(MemoizePath));
				((MemoizePath *) copy)->subpath = sub;
				break;
			}
		case T_AppendPath:
		case T_MergeAppendPath:
			{
				List	   *subpaths = IsA(path, AppendPath) ?
					((AppendPath *) path)->subpaths : ((MergeAppendPath *) path)->subpaths;
				List	   *newsubs = NIL;
				bool		changed = false;

				/* a parallel append runs under a Gather */
				if (path->parallel_aware)
					break;
				foreach(lc, subpaths)
				{
					Path	   *sub = bg_wrap_inner_paths(root, (Path *) lfirst(lc));

					changed |= sub != (Path *) lfirst(lc);
					newsubs = lappend(newsubs, sub);
				}
				if (!changed)
					break;
				if (IsA(path, AppendPath))
				{
					copy = bg_path_copy(path, sizeof(AppendPath));
					((AppendPath *) copy)->subpaths = newsubs;
				}
				else
				{
					copy = bg_path_copy(path, sizeof(MergeAppendPath));
					((MergeAppendPath *) copy)->subpaths = newsubs;
				}
				break;
			}
		default:
			/* custom, gather (parallel below), bitmap and other paths */
			break;
	}
	return copy ? copy : path;
}

/*
 * set_join_pathlist_hook: in the join's paths, now costed, wrap the
 * parameterized primary key index scans they use (see the file header).
 * Partial paths are left alone: the node is not parallel safe.
 */
static void
bg_set_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					 RelOptInfo *innerrel, JoinType jointype,
					 JoinPathExtraData *extra)
{
	ListCell   *lc;

	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);
	if (!bg_trust_transparent() || !bg_loaded())
		return;
	foreach(lc, joinrel->pathlist)
		lfirst(lc) = bg_wrap_inner_paths(root, (Path *) lfirst(lc));
}

/*
 * Is this plan the one the node was written for: an index scan or
 * index-only scan of rel through the index ipath chose, with no ORDER BY
 * operators?
 */
static bool
bg_plan_expected(Plan *plan, RelOptInfo *rel, IndexPath *ipath)
{
	if (IsA(plan, IndexScan))
		return ((IndexScan *) plan)->scan.scanrelid == rel->relid &&
			((IndexScan *) plan)->indexid == ipath->indexinfo->indexoid &&
			((IndexScan *) plan)->indexorderby == NIL;
	if (IsA(plan, IndexOnlyScan))
		return ((IndexOnlyScan *) plan)->scan.scanrelid == rel->relid &&
			((IndexOnlyScan *) plan)->indexid == ipath->indexinfo->indexoid &&
			((IndexOnlyScan *) plan)->indexorderby == NIL;
	return false;
}

/*
 * PlanCustomPath: the CustomScan node.  It returns the wrapped scan's
 * tuples as they are: its scan tuple is the wrapped plan's target list,
 * and its own target list refers to that one-to-one.  custom_exprs are the
 * key values (create_customscan_plan() replaces outer Vars in them with the
 * same nestloop parameters as in the wrapped scan's conditions).  The node
 * cannot be refused here (create_customscan_plan() takes whatever this
 * returns for a CustomScan): a wrapped plan the path did not promise gets
 * a node with no key values, which passes it through (guardscan.c).
 */
static Plan *
bg_plan_guard_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *scan = (Plan *) linitial(custom_plans);
	IndexPath  *ipath = (IndexPath *) linitial(best_path->custom_paths);
	Relation	relation = table_open(planner_rt_fetch(rel->relid, root)->relid, NoLock);
	BgKeyInfo  *info = bg_keyinfo_acquire(relation);
	BgPathKey	pk;

	/* the path was made from this very key; if it changed, never shortcut */
	if (info->desc == NULL || !bg_path_fixes_key(ipath, info->desc, &pk))
		pk.values = NIL;
	bg_keyinfo_release(info);
	table_close(relation, NoLock);
	if (list_length(custom_plans) != 1 || !bg_plan_expected(scan, rel, ipath))
	{
		ereport(DEBUG1,
				(errmsg_internal("BloomGuard: the plan of the wrapped path is a node of type %d, not the index scan planned; it is passed through",
								 (int) nodeTag(scan))));
		pk.values = NIL;
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;	/* the wrapped scan enforces every clause */
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = copyObject(pk.values);
	cscan->custom_private = NIL;
	cscan->custom_scan_tlist = copyObject(scan->targetlist);
	cscan->custom_relids = rel->relids;
	cscan->methods = &bg_guard_scan_methods;
	(void) clauses;
	return &cscan->scan.plan;
}

/* Install the planner hook; called from _PG_init while preloading. */
void
bg_planner_init(void)
{
	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = bg_set_rel_pathlist;
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = bg_set_join_pathlist;

	DefineCustomBoolVariable("bloomguard.shortcut_costing",
							 "Costs the planner path by the share of lookups the filter answers alone.",
							 "When on, a BloomGuard scan costs a filter probe plus the index scan's "
							 "cost times the share of the guard's key checks that the filter did not "
							 "answer, counted since its statistics were last reset. Off: the index "
							 "scan's cost, and the plans the planner picks without bloomguard.",
							 &bg_shortcut_costing,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}
