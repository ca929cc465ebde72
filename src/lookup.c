/*-------------------------------------------------------------------------
 *
 * lookup.c
 *	  guarded_exists() and bloomguard_check(): the read side, and the rule
 *	  for when a filter may be trusted.
 *
 * guarded_exists(t, k...) must return exactly what
 *		EXISTS (SELECT 1 FROM t WHERE (pk...) = (k...))
 * returns for the same role and snapshot, errors included.  It asks the
 * filter first, and only when the filter is trusted and says "definitely
 * absent" does it answer false without reading the table.  Otherwise it
 * reads the table (source.c).
 *
 * The filter is trusted only when all of these hold (bg_filter_trusted(),
 * and the guard's own state, which bg_slot_ask() checks):
 *	- bloomguard.enabled is on;
 *	- on a hot standby, the standby knows that the primary writes every
 *	  key to the WAL (bloomguard.wal_log: wal.c has the argument), and the
 *	  table is not unlogged;
 *	- the guard's state is READY and the key identity stored with the
 *	  filter still matches the table's primary key;
 *	- the feed trigger is in place, as attach made it, enabled ALWAYS, and
 *	  this transaction has not changed it (bg_untrust_pending());
 *	- the table has no inheritance children;
 *	- no statement of this backend that writes rows is still running with
 *	  a command id the lookup's snapshot can see: AFTER ROW triggers fire at
 *	  the end of the statement, so a query nested inside a writing
 *	  statement can see rows whose keys are not in the filter yet, while
 *	  the statement's own scans cannot (statement.c has the argument);
 *	  keys whose triggers have fired may still be in this backend's feed
 *	  buffer, and the lookup flushes the table's first (feed.c);
 *	- the isolation level is not SERIALIZABLE: a negative answered from the
 *	  filter would skip the index predicate lock that lets SSI detect a
 *	  concurrent insert of the same key;
 *	- old_snapshot_threshold is not set (build.c says why).
 *
 * Row-level security: the filter knows every key, hidden or not, and
 * every observable of a lookup that consulted it (the counters in
 * bloomguard_health, an index probe on "maybe" that idx_scan counts, the
 * time it takes) would tell a role about rows its policies hide.  So for
 * a role that row-level security applies to, the filter is not consulted
 * at all: guarded_exists() runs the query with the policies applied and
 * counts a fallback, and bloomguard_check() says 'unknown'.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(guarded_exists);
PG_FUNCTION_INFO_V1(bloomguard_check);

/*
 * Open the table named by the first argument, and check that the caller may
 * run the EXISTS query on it: USAGE on its schema (name lookup needs it,
 * and the table may be given by OID), then SELECT on the table or on every
 * key column, in the order the query checks them, with the same errors.
 */
static Relation
bg_open_for_read(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	AclResult	aclresult;

	bg_check_schema_usage(rel);
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

/*
 * Does row-level security apply to this caller's lookups of rel?  (Raises
 * the query's error when row_security is off and it would apply.)  The
 * relcache flag answers the common case without a catalog lookup.
 */
static bool
bg_rls_applies(Relation rel)
{
	return rel->rd_rel->relrowsecurity &&
		check_enable_rls(RelationGetRelid(rel), InvalidOid, false) == RLS_ENABLED;
}

/*
 * May a lookup of rel under snapshot snap trust its filter now?  Everything
 * in the file header's list but the guard's own state.
 */
bool
bg_filter_trusted(Relation rel, Snapshot snap)
{
	if (!bg_enabled)
		return false;
	/* a standby: only while it receives every key through the WAL */
	if (RecoveryInProgress() &&
		(rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT ||
		 !bg_wal_standby_trusts()))
		return false;
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		return false;
	if (IsolationIsSerializable())
		return false;
	if (!bg_own_writes_fed(RelationGetRelid(rel), snap))
		return false;
	if (bg_feed_state(rel) != BG_FEED_IN_PLACE)
		return false;
	if (bg_untrust_pending(RelationGetRelid(rel)))
		return false;
	if (bg_has_children(rel))
		return false;
	if (bg_old_snapshot_threshold_set())
		return false;
	return true;
}

/* What a lookup call has worked out before asking anyone. */
typedef struct BgLookup
{
	Relation	rel;
	BgKeyInfo  *info;
	BgCallCache *cache;
	bool		rls;			/* row-level security applies to the caller */
	BgKeyResult kr;
	Datum		args[INDEX_MAX_KEYS + 1];
	Datum		values[INDEX_MAX_KEYS];
} BgLookup;

/* The shared front half of both functions: open, check, convert the key. */
static void
bg_lookup_begin(FunctionCallInfo fcinfo, BgLookup *lk)
{
	bg_require_loaded();
	lk->rel = bg_open_for_read(PG_GETARG_OID(0));
	lk->info = bg_keyinfo_acquire(lk->rel);
	if (lk->info->desc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no primary key",
						RelationGetRelationName(lk->rel)),
				 errhint("bloomguard guards a table by its primary key; add one with ALTER TABLE ... ADD PRIMARY KEY.")));
	lk->rls = bg_rls_applies(lk->rel);
	lk->kr = bg_call_key(fcinfo, lk->rel, lk->info->desc, &lk->cache,
						 lk->args, lk->values);
}

/* Release what bg_lookup_begin() took. */
static void
bg_lookup_end(BgLookup *lk)
{
	bg_keyinfo_release(lk->info);
	relation_close(lk->rel, NoLock);
}

/*
 * Ask the filter about the call's key, if it may be asked (see the file
 * header); *slotindex is set to the guard's slot, or -1.
 */
static BgAnswer
bg_lookup_ask(BgLookup *lk, int *slotindex)
{
	const BgKeyDesc *desc = lk->info->desc;
	Oid			relid = RelationGetRelid(lk->rel);
	uint64		colhashes[INDEX_MAX_KEYS];
	bool		nomatch = lk->kr == BG_KEY_NO_MATCH;

	if (lk->rls || !desc->hashable ||
		(lk->kr != BG_KEY_OK && !nomatch) ||
		!bg_filter_trusted(lk->rel, ActiveSnapshotSet() ? GetActiveSnapshot() : NULL))
	{
		*slotindex = bg_slot_index(&lk->info->ref, relid);
		return BG_ANSWER_UNKNOWN;
	}
	/* this backend's own keys of the table first (feed.c) */
	bg_feed_flush_rel(relid);
	/* hash before taking the slot lock (hash functions may detoast) */
	if (!nomatch)
		bg_key_colhashes(desc, lk->values, colhashes);
	return bg_slot_ask(&lk->info->ref, relid, bg_rel_filenumber(lk->rel),
					   &lk->info->identity, colhashes, desc->nkeys, nomatch,
					   slotindex);
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

		bg_call_sql_params(lk->cache, desc, lk->args, params, types);
		return bg_sql_lookup(rel, desc, params, types, true);
	}
	if (rel->rd_rel->relkind == RELKIND_RELATION && !lk->rls &&
		!bg_has_children(rel))
		return bg_index_probe(rel, desc, lk->values);
	return bg_sql_lookup(rel, desc, lk->values, NULL, false);
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
	if (lk.kr == BG_KEY_NULL || lk.kr == BG_KEY_NO_MATCH)
	{
		bg_lookup_end(&lk);
		PG_RETURN_BOOL(false);
	}

	/*
	 * One atomic add per call on the shortcut path: checks is derived as
	 * shortcuts + source_lookups + fallbacks.
	 */
	answer = bg_lookup_ask(&lk, &slotindex);
	if (answer == BG_ANSWER_ABSENT)
	{
		bg_slot_bump(slotindex, BG_COUNT_SHORTCUT, 1);
		bg_lookup_end(&lk);
		PG_RETURN_BOOL(false);
	}

	found = bg_lookup_source(&lk);
	if (slotindex >= 0)
	{
		if (answer == BG_ANSWER_MAYBE)
		{
			bg_slot_bump(slotindex, BG_COUNT_SOURCE_LOOKUP, 1);
			if (found)
				bg_slot_bump(slotindex, BG_COUNT_SOURCE_HIT, 1);
		}
		else
			bg_slot_bump(slotindex, BG_COUNT_FALLBACK, 1);
	}
	bg_lookup_end(&lk);
	PG_RETURN_BOOL(found);
}

/*
 * bloomguard_check(rel regclass, VARIADIC key "any") returns text
 *
 * The filter's own answer, never the table's: 'absent', 'maybe', or
 * 'unknown' when no trusted filter can answer (or row-level security
 * applies to the caller).
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
