/*-------------------------------------------------------------------------
 *
 * lookup.c
 *	  guarded_exists() and bloomguard_check(): the read side.
 *
 * guarded_exists(t, k...) must return exactly what
 *		EXISTS (SELECT 1 FROM t WHERE (pk...) = (k...))
 * returns for the same role and snapshot, errors included.  It asks the
 * filter first, and only when the filter is trusted (trust.c has the rule)
 * and says "definitely absent" does it answer false without reading the
 * table.  Otherwise it reads the table (tablelookup.c).
 *
 * A table whose rows are not in it (tablekind.c: a Citus shell, whose
 * rows are in shards) is never probed from C and its filter, if it has
 * one, is never trusted: the EXISTS query itself answers, and goes
 * wherever the rows are (on a Citus worker, the shard's guard answers it
 * there, through the planner path).  bloomguard_check() of a Citus
 * distributed or reference table asks the guards of the key's shard on
 * their nodes (citusask.c).
 *
 * For a role that row-level security applies to, the filter is not
 * consulted at all (trust.c says why): guarded_exists() runs the query
 * with the policies applied and counts a fallback, and bloomguard_check()
 * says 'unknown'.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(guarded_exists);
PG_FUNCTION_INFO_V1(bloomguard_check);

/* bloomguard.partition_lookup: how guarded_exists() reads a partitioned table */
typedef enum BgPartitionLookup
{
	BG_PARTITION_LOOKUP_ROUTE,	/* ask the one leaf the key routes to */
	BG_PARTITION_LOOKUP_ASK_ALL /* ask every leaf's filter */
} BgPartitionLookup;

static const struct config_enum_entry bg_partition_lookup_options[] = {
	{"route", BG_PARTITION_LOOKUP_ROUTE, false},
	{"ask_all", BG_PARTITION_LOOKUP_ASK_ALL, false},
	{NULL, 0, false}
};
static int	bg_partition_lookup = BG_PARTITION_LOOKUP_ROUTE;

/*
 * Open the table named by the first argument, and check that the caller may
 * run the EXISTS query on it: USAGE on its schema (name lookup needs it,
 * and the table may be given by OID), whether row-level security applies
 * (*rls; an error if it would with row_security off), then SELECT on the
 * table or on every key column, in the order the query checks them, with
 * the same errors.
 */
static Relation
bg_open_for_read(Oid relid, bool *rls)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	AclResult	aclresult;

	bg_check_schema_usage(rel);
	/* the query's rewriter raises row_security = off's error before this */
	*rls = bg_rls_applies(rel, false);
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
	{
		Oid			pkindex = bg_primary_key_index(rel);
		bool		ok = OidIsValid(pkindex);

		/* SELECT on every key column is enough, as it is for the query */
		if (ok)
		{
			Relation	idx = index_open(pkindex, AccessShareLock);
			int			i;

			for (i = 0; i < IndexRelationGetNumberOfKeyAttributes(idx) && ok; i++)
				ok = pg_attribute_aclcheck(relid, idx->rd_index->indkey.values[i],
										   GetUserId(), ACL_SELECT) == ACLCHECK_OK;
			index_close(idx, AccessShareLock);
		}
		if (!ok)
			aclcheck_error(aclresult, get_relkind_objtype(rel->rd_rel->relkind),
						   RelationGetRelationName(rel));
	}

	switch (rel->rd_rel->relkind)
	{
		case RELKIND_RELATION:
		case RELKIND_PARTITIONED_TABLE:
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a table", RelationGetRelationName(rel)),
					 errdetail("guarded_exists() looks up rows of tables by primary key.")));
	}
	return rel;
}

/* What a lookup call has worked out before asking anyone. */
typedef struct BgLookup
{
	Relation	rel;			/* the table, or the leaf a key routes to */
	Relation	parent;			/* the partitioned table named, or NULL */
	BgKeyInfo  *info;
	bool		nowhere;		/* no partition of the table takes the key */
	BgCallCache *cache;
	bool		rls;			/* row-level security applies to the caller */
	int8		children;		/* rel has inheritance children; -1: not known */
	BgKeyResult kr;
	Datum		args[INDEX_MAX_KEYS + 1];
	Datum		values[INDEX_MAX_KEYS];
} BgLookup;

/*
 * A lookup of a partitioned table goes on as a lookup of the one leaf that
 * can hold the key (partition.c routes it).  The leaf's key columns are
 * the partitioned table's, in the same order and types, so the converted
 * values carry over.  Only the partitioned table's privileges and policies
 * govern a query of it, and they were checked; with row-level security
 * applying to the caller there is no routing: the query runs on the
 * partitioned table.  A key no partition takes is in no row.
 */
static void
bg_lookup_route(BgLookup *lk)
{
	bool		routed;
	Oid			leafid = bg_route_key(lk->rel, lk->values, AccessShareLock, &routed);
	Relation	leaf;
	BgKeyInfo  *info;

	if (!routed)
		return;
	if (!OidIsValid(leafid))
	{
		lk->nowhere = true;
		return;
	}
	leaf = try_relation_open(leafid, NoLock);
	if (leaf == NULL)
		return;					/* dropped meanwhile: ask the partitioned table */
	info = bg_keyinfo_acquire(leaf);
	if (info->desc == NULL || info->desc->nkeys != lk->info->desc->nkeys ||
		info->kind != BG_TABLE_OWN_ROWS)
	{
		bg_keyinfo_release(info);
		relation_close(leaf, NoLock);
		return;
	}
	bg_keyinfo_release(lk->info);
	lk->info = info;
	lk->parent = lk->rel;
	lk->rel = leaf;
	lk->children = -1;
}

/* The shared front half of both functions: open, check, convert the key. */
static void
bg_lookup_begin(FunctionCallInfo fcinfo, BgLookup *lk)
{
	bg_require_loaded();
	lk->rel = bg_open_for_read(PG_GETARG_OID(0), &lk->rls);
	lk->info = bg_keyinfo_acquire(lk->rel);
	if (lk->info->desc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no primary key",
						RelationGetRelationName(lk->rel)),
				 errhint("bloomguard guards a table by its primary key; add one with ALTER TABLE ... ADD PRIMARY KEY.")));
	lk->parent = NULL;
	lk->nowhere = false;
	lk->children = -1;
	lk->kr = bg_call_key(fcinfo, lk->rel, lk->info->desc, &lk->cache,
						 lk->args, lk->values);
	if (lk->rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE &&
		lk->info->kind == BG_TABLE_OWN_ROWS &&
		lk->kr == BG_KEY_OK && !lk->rls && lk->info->desc->hashable &&
		bg_partition_lookup == BG_PARTITION_LOOKUP_ROUTE)
		bg_lookup_route(lk);
}

/* Release what bg_lookup_begin() took. */
static void
bg_lookup_end(BgLookup *lk)
{
	bg_keyinfo_release(lk->info);
	relation_close(lk->rel, NoLock);
	if (lk->parent)
		relation_close(lk->parent, NoLock);
}

/*
 * Ask the filter about the call's key, if it may be asked (trust.c);
 * *slotindex is set to the guard's slot, or -1.
 */
static BgAnswer
bg_lookup_ask(BgLookup *lk, int *slotindex)
{
	const BgKeyDesc *desc = lk->info->desc;
	bool		nomatch = lk->kr == BG_KEY_NO_MATCH;
	BgSlotExpect expect;
	bool		children;
	bool		trusted;

	if (lk->rls || !desc->hashable || (lk->kr != BG_KEY_OK && !nomatch))
		trusted = false;
	else
	{
		trusted = bg_filter_trusted(lk->rel, lk->info,
									ActiveSnapshotSet() ? GetActiveSnapshot() : NULL,
									&expect, &children);
		lk->children = children;
	}
	if (!trusted)
	{
		*slotindex = bg_slot_index(&lk->info->ref, RelationGetRelid(lk->rel));
		return BG_ANSWER_UNKNOWN;
	}
	return bg_trust_ask(lk->rel, lk->info, &expect, lk->values, nomatch, slotindex);
}

/* Does the call's table have inheritance children?  Asked once per table. */
static bool
bg_lookup_children(BgLookup *lk)
{
	if (lk->children < 0)
		lk->children = bg_has_children(lk->rel);
	return lk->children;
}

/* The authoritative answer: read the table. */
static bool
bg_lookup_source(BgLookup *lk)
{
	const BgKeyDesc *desc = lk->info->desc;
	Relation	rel = lk->rel;

	if (lk->kr == BG_KEY_SQL)
	{
		Datum		params[INDEX_MAX_KEYS];
		Oid			types[INDEX_MAX_KEYS];
		Oid			collations[INDEX_MAX_KEYS];

		bg_call_sql_params(lk->cache, desc, lk->args, params, types, collations);
		return bg_sql_lookup(rel, desc, params, types, collations, true);
	}
	if (rel->rd_rel->relkind == RELKIND_RELATION &&
		lk->info->kind == BG_TABLE_OWN_ROWS && !lk->rls &&
		!bg_lookup_children(lk))
		return bg_index_probe(rel, desc, lk->values);
	return bg_sql_lookup(rel, desc, lk->values, NULL, NULL, false);
}

/*
 * Count one call's outcome in its guard's counters: absent (shortcut),
 * maybe (a source lookup, and whether it found the row), or unknown (a
 * fallback).
 */
static void
bg_lookup_count(int slotindex, BgAnswer answer, bool found)
{
	if (slotindex < 0)
		return;
	if (answer == BG_ANSWER_ABSENT)
		bg_slot_bump(slotindex, BG_COUNT_SHORTCUT, 1);
	else if (answer == BG_ANSWER_MAYBE)
	{
		bg_slot_bump(slotindex, BG_COUNT_SOURCE_LOOKUP, 1);
		if (found)
			bg_slot_bump(slotindex, BG_COUNT_SOURCE_HIT, 1);
	}
	else
		bg_slot_bump(slotindex, BG_COUNT_FALLBACK, 1);
}

/*
 * guarded_exists() on a partitioned table without routing
 * (bloomguard.partition_lookup = ask_all, kept to measure against
 * routing): ask every leaf's filter, and read only the leaves that do not
 * rule the key out.
 */
static bool
bg_lookup_ask_all(BgLookup *lk)
{
	Relation	parent = lk->rel;
	BgKeyInfo  *parent_info = lk->info;
	List	   *leaves = bg_partition_leaves_of(parent, AccessShareLock);
	ListCell   *lc;
	bool		found = false;
	bool		unasked = false;

	foreach(lc, leaves)
	{
		BgAnswer	answer;
		int			slotindex;

		lk->rel = relation_open(lfirst_oid(lc), NoLock);
		lk->info = bg_keyinfo_acquire(lk->rel);
		lk->children = -1;
		if (lk->info->desc != NULL && lk->info->desc->nkeys == parent_info->desc->nkeys)
		{
			answer = bg_lookup_ask(lk, &slotindex);
			found = answer != BG_ANSWER_ABSENT && bg_lookup_source(lk);
			bg_lookup_count(slotindex, answer, found);
		}
		else
			unasked = true;		/* a leaf whose key cannot be described */
		bg_keyinfo_release(lk->info);
		relation_close(lk->rel, NoLock);
		if (found)
			break;
	}
	lk->rel = parent;
	lk->info = parent_info;
	lk->children = -1;
	list_free(leaves);
	/* a leaf not asked may hold the key: the query on the parent says */
	if (!found && unasked)
		found = bg_sql_lookup(parent, parent_info->desc, lk->values, NULL, NULL, false);
	return found;
}

/*
 * guarded_exists(rel regclass, VARIADIC key "any") returns boolean
 */
Datum
guarded_exists(PG_FUNCTION_ARGS)
{
	BgLookup	lk;
	BgAnswer	answer;
	int			slotindex;
	bool		found;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();

	bg_lookup_begin(fcinfo, &lk);
	if (lk.kr == BG_KEY_NULL || lk.kr == BG_KEY_NO_MATCH || lk.nowhere)
	{
		bg_lookup_end(&lk);
		PG_RETURN_BOOL(false);
	}
	if (lk.rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE && !lk.rls &&
		lk.info->kind == BG_TABLE_OWN_ROWS &&
		lk.kr == BG_KEY_OK && bg_partition_lookup == BG_PARTITION_LOOKUP_ASK_ALL)
	{
		found = bg_lookup_ask_all(&lk);
		bg_lookup_end(&lk);
		PG_RETURN_BOOL(found);
	}

	/*
	 * One atomic add per call on the shortcut path: checks is derived as
	 * shortcuts + source_lookups + fallbacks.
	 */
	answer = bg_lookup_ask(&lk, &slotindex);
	found = answer != BG_ANSWER_ABSENT && bg_lookup_source(&lk);
	bg_lookup_count(slotindex, answer, found);
	bg_lookup_end(&lk);
	PG_RETURN_BOOL(found);
}

/*
 * bloomguard_check(rel regclass, VARIADIC key "any") returns text
 *
 * The filter's own answer, never the table's: 'absent', 'maybe', or
 * 'unknown' when no trusted filter can answer (or row-level security
 * applies to the caller).  For a Citus distributed or reference table,
 * the answer of the filters of the key's shard (citusask.c).
 */
Datum
bloomguard_check(PG_FUNCTION_ARGS)
{
	BgLookup	lk;
	BgAnswer	answer;
	int			slotindex;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();

	bg_lookup_begin(fcinfo, &lk);
	if (lk.kr == BG_KEY_NULL)
	{
		bg_lookup_end(&lk);
		PG_RETURN_NULL();
	}
	if (lk.nowhere)
		answer = BG_ANSWER_ABSENT;
	else if (bg_citus_guards_through_shards(lk.info->kind) &&
			 lk.kr == BG_KEY_OK && !lk.rls && lk.info->desc->hashable)
		answer = bg_citus_check(lk.rel, lk.info->desc, lk.values);
	else
		answer = bg_lookup_ask(&lk, &slotindex);
	bg_lookup_end(&lk);
	switch (answer)
	{
		case BG_ANSWER_ABSENT:
			PG_RETURN_TEXT_P(cstring_to_text("absent"));
		case BG_ANSWER_MAYBE:
			PG_RETURN_TEXT_P(cstring_to_text("maybe"));
		case BG_ANSWER_UNKNOWN:
			break;
	}
	PG_RETURN_TEXT_P(cstring_to_text("unknown"));
}

/*
 * Define bloomguard.partition_lookup; called from _PG_init, preloaded or
 * not (README's Settings: it exists wherever the library is loaded).
 */
void
bg_lookup_init(void)
{
	DefineCustomEnumVariable("bloomguard.partition_lookup",
							 "How guarded_exists() on a partitioned table finds the leaf to ask.",
							 "route (the default) asks the one leaf the key belongs in; ask_all "
							 "asks every leaf's filter and reads the leaves that may hold the key. "
							 "A developer setting, kept to measure one against the other.",
							 &bg_partition_lookup,
							 BG_PARTITION_LOOKUP_ROUTE,
							 bg_partition_lookup_options,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
}
