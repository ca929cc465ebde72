/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  What the health view reads, probes, and resetting counters.
 *
 * bloomguard_guard_stats_1_1() returns one row per guard of this database
 * that the caller may see, with the guard's state and counters copied out
 * of shared memory (bg_slot_copy(), which takes the slot lock briefly in
 * shared mode) and the health gauges computed from them by filter.c's
 * formulas; the bloomguard_health view adds the health rule and advice.
 * The function is executable by PUBLIC, so it filters the rows itself
 * (the view is not a security barrier): superusers and members of
 * pg_read_all_stats see every guard; other roles see the guards of the
 * tables they could query (USAGE on the schema and SELECT on the table or
 * one of its columns).  Fill is maintained by the adders (bits_set), so
 * the view never scans a filter, and it never waits for a table lock.
 *
 * A guard or a feed trigger on a table whose rows are not in it
 * (tablekind.c: a Citus shell, a foreign table) is in state "unsupported",
 * with last_error saying where the rows are: such a filter is never
 * trusted, and adopting or rebuilding it would not help.
 *
 * bloomguard_guard_stats() is the same for version 1.0 of the SQL
 * interface, whose view computes the gauges itself: a server that runs
 * this library before ALTER EXTENSION bloomguard UPDATE keeps working.
 *
 * bloomguard_probe() asks the filter about keys from the reserved probe
 * hash domain (filter.c), which no real key can produce, so every "maybe"
 * it gets is a false positive.  Probes never touch the table, and say
 * nothing about which keys exist.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_guard_stats);
PG_FUNCTION_INFO_V1(bloomguard_guard_stats_1_1);
PG_FUNCTION_INFO_V1(bloomguard_probe);
PG_FUNCTION_INFO_V1(bloomguard_reset_stats);

typedef enum BgStatsVersion
{
	BG_STATS_V1_0,
	BG_STATS_V1_1
} BgStatsVersion;

/* The columns of version 1.1, in order. */
enum
{
	COL_RELID, COL_STATE, COL_FEED, COL_GENERATION, COL_CAPACITY,
	COL_ERROR_RATE, COL_BITS, COL_HASHES, COL_BLOCK_BITS, COL_MEMORY_BYTES, COL_N_ADDED,
	COL_BITS_SET, COL_LOAD, COL_FILL, COL_ESTIMATED_KEYS, COL_THEORETICAL_FP,
	COL_PROBES, COL_PROBE_HITS, COL_ACTUAL_FP, COL_CHECKS, COL_SHORTCUTS,
	COL_SOURCE_LOOKUPS, COL_SOURCE_HITS, COL_FALLBACKS, COL_OBSERVED_FP,
	COL_SUGGESTED_CAPACITY, COL_BUILT_AT, COL_BUILD_SECONDS, COL_BUILD_WORKERS,
	COL_BUILDER_PID,
	COL_LAST_ERROR, COL_STATS_RESET, COL_MEMORY_IN_USE, COL_MAX_MEMORY,
	COL_SOURCE, COL_SOURCE_AT, COL_PARENT,
	BG_STATS_COLS
};

/* Version 1.0's columns, a subset of 1.1's. */
static const int bg_stats_cols_1_0[] = {
	COL_RELID, COL_STATE, COL_GENERATION, COL_CAPACITY, COL_ERROR_RATE,
	COL_BITS, COL_HASHES, COL_MEMORY_BYTES, COL_N_ADDED, COL_BITS_SET,
	COL_PROBES, COL_PROBE_HITS, COL_CHECKS, COL_SHORTCUTS, COL_SOURCE_LOOKUPS,
	COL_SOURCE_HITS, COL_FALLBACKS, COL_BUILT_AT, COL_BUILD_SECONDS,
	COL_BUILDER_PID, COL_LAST_ERROR, COL_STATS_RESET, COL_MEMORY_IN_USE,
	COL_MAX_MEMORY
};

/* A state's name, as the health view shows it. */
static const char *
bg_state_name(BgState state)
{
	switch (state)
	{
		case BG_STATE_FREE:
			return "free";
		case BG_STATE_NOT_LOADED:
			return "not_loaded";
		case BG_STATE_BUILDING:
			return "building";
		case BG_STATE_READY:
			return "ready";
		case BG_STATE_UNTRUSTED:
			return "untrusted";
	}
	return "unknown";
}

/* The health view's name for where a filter came from. */
static const char *
bg_source_name(BgSource source)
{
	switch (source)
	{
		case BG_SOURCE_NONE:
			break;
		case BG_SOURCE_BUILT:
			return "built";
		case BG_SOURCE_LOADED:
			return "loaded";
		case BG_SOURCE_REPLAYED:
			return "replayed";
	}
	return NULL;
}

/* The health view's name for a feed trigger's state. */
static const char *
bg_feed_name(BgFeedState state)
{
	switch (state)
	{
		case BG_FEED_MISSING:
			return "missing";
		case BG_FEED_ALTERED:
			return "altered";
		case BG_FEED_NOT_ALWAYS:
			return "not_always";
		case BG_FEED_IN_PLACE:
			return "in_place";
	}
	return "unknown";
}

/*
 * Fill a row of version 1.1's columns for a guard: its registry entry
 * (reg, NULL for a slot with no row yet, mid-attach) and its slot copy
 * (c->relid InvalidOid when it has none: not loaded since a restart).
 * Neither: a table whose feed trigger has no registry row and no slot.
 */
static void
bg_stats_row(Oid relid, const BgRegistryEntry *reg, const BgSlotCopy *c,
			 Oid parent, Datum *values, bool *nulls)
{
	bool		nf = !c->has_filter;
	const uint64 *k = c->counters;
	uint64		lost = k[BG_COUNT_SOURCE_LOOKUP] - k[BG_COUNT_SOURCE_HIT];
	uint64		absent = lost + k[BG_COUNT_SHORTCUT];
	double		keys = 0;
	bool		full = false;
	int64		capacity = nf ? (reg ? reg->capacity : 0) : (int64) c->capacity;
	const char *state;
	BgTableKind kind = bg_table_kind_by_oid(relid);
	char	   *unsupported = NULL;

	if (kind != BG_TABLE_OWN_ROWS)
	{
		/* never trusted, never built: say so, and never advise adopting */
		state = "unsupported";
		if (bg_citus_guards_through_shards(kind) && reg == NULL)
			unsupported = psprintf("%s Its trigger makes every node guard the shards it holds (bloomguard_health there lists them); bloomguard_detach() removes the guards.",
								   bg_table_kind_detail(kind, get_rel_name(relid)));
		else
			unsupported = psprintf("%s bloomguard does not guard it: remove its trigger and guard with bloomguard_detach().",
								   bg_table_kind_detail(kind, get_rel_name(relid)));
	}
	else if (!bg_trust_enabled())
		state = "disabled";
	else if (OidIsValid(c->relid))
		state = bg_state_name(c->state);
	else if (reg == NULL)
		state = "unregistered"; /* an orphan feed trigger */
	else
		state = "not_loaded";
	if (!nf)
		keys = bloom_estimated_keys(c->nbits, c->nhashes, c->block_bits, c->bits_set,
									&full);

#define PUT(col, datum, isnull) (values[col] = (datum), nulls[col] = (isnull))
	PUT(COL_RELID, ObjectIdGetDatum(relid), false);
	PUT(COL_STATE, CStringGetTextDatum(state), false);
	PUT(COL_FEED, CStringGetTextDatum(bg_feed_name(bg_feed_state_by_oid(relid))), false);
	PUT(COL_GENERATION, Int64GetDatum((int64) c->guard.generation), false);
	PUT(COL_CAPACITY, Int64GetDatum(capacity), capacity == 0);
	PUT(COL_ERROR_RATE, Float8GetDatum(nf ? (reg ? reg->error_rate : 0) : c->error_rate),
		nf && reg == NULL);
	PUT(COL_BITS, Int64GetDatum((int64) c->nbits), nf);
	PUT(COL_HASHES, Int32GetDatum(c->nhashes), nf);
	PUT(COL_BLOCK_BITS, Int32GetDatum((int32) c->block_bits), nf);
	PUT(COL_MEMORY_BYTES, Int64GetDatum((int64) c->bytes), false);
	PUT(COL_N_ADDED, Int64GetDatum((int64) c->n_added), nf);
	PUT(COL_BITS_SET, Int64GetDatum((int64) c->bits_set), nf);
	/* the gauges (filter.c's formulas) */
	PUT(COL_LOAD, Float8GetDatum(nf ? 0 : (double) c->n_added / (double) c->capacity), nf);
	PUT(COL_FILL, Float8GetDatum(nf ? 0 : bloom_fill(c->nbits, c->bits_set)), nf);
	PUT(COL_ESTIMATED_KEYS, Float8GetDatum(keys), nf || full);
	PUT(COL_THEORETICAL_FP,
		Float8GetDatum(nf ? 0 : bloom_theoretical_fp(c->nbits, c->nhashes, c->block_bits,
													  c->n_added)), nf);
	PUT(COL_PROBES, Int64GetDatum((int64) k[BG_COUNT_PROBE]), false);
	PUT(COL_PROBE_HITS, Int64GetDatum((int64) k[BG_COUNT_PROBE_HIT]), false);
	PUT(COL_ACTUAL_FP, Float8GetDatum(k[BG_COUNT_PROBE] > 0 ?
									  (double) k[BG_COUNT_PROBE_HIT] / k[BG_COUNT_PROBE] : 0),
		false);
	/* every counted call is exactly one of these three */
	PUT(COL_CHECKS, Int64GetDatum((int64) (k[BG_COUNT_SHORTCUT] + k[BG_COUNT_SOURCE_LOOKUP] +
										   k[BG_COUNT_FALLBACK])), false);
	PUT(COL_SHORTCUTS, Int64GetDatum((int64) k[BG_COUNT_SHORTCUT]), false);
	PUT(COL_SOURCE_LOOKUPS, Int64GetDatum((int64) k[BG_COUNT_SOURCE_LOOKUP]), false);
	PUT(COL_SOURCE_HITS, Int64GetDatum((int64) k[BG_COUNT_SOURCE_HIT]), false);
	PUT(COL_FALLBACKS, Int64GetDatum((int64) k[BG_COUNT_FALLBACK]), false);
	PUT(COL_OBSERVED_FP, Float8GetDatum(absent > 0 ? (double) lost / (double) absent : 0), false);
	/* what a resize would choose: the advice for OVER_CAPACITY */
	PUT(COL_SUGGESTED_CAPACITY,
		Int64GetDatum(nf ? 0 : bg_choose_capacity(bg_live_rows(relid), keys, full,
												   (int64) c->capacity)), nf);
	PUT(COL_BUILT_AT, TimestampTzGetDatum(c->guard.built_at), c->guard.built_at == 0);
	PUT(COL_BUILD_SECONDS, Float8GetDatum(c->guard.build_seconds), c->guard.built_at == 0);
	PUT(COL_BUILD_WORKERS, Int32GetDatum(c->guard.build_workers), c->guard.built_at == 0);
	PUT(COL_BUILDER_PID, Int32GetDatum(c->builder_pid), c->builder_pid == 0);
	if (unsupported)
		PUT(COL_LAST_ERROR, CStringGetTextDatum(unsupported), false);
	else
		PUT(COL_LAST_ERROR, CStringGetTextDatum(c->last_error), c->last_error[0] == '\0');
	PUT(COL_STATS_RESET, TimestampTzGetDatum(c->stats_reset), !OidIsValid(c->relid));
	PUT(COL_MEMORY_IN_USE, Int64GetDatum((int64) bg_memory_in_use()), false);
	PUT(COL_MAX_MEMORY, Int64GetDatum((int64) bg_memory_cap()), false);
	PUT(COL_SOURCE, nf || bg_source_name(c->source) == NULL ? (Datum) 0 :
		CStringGetTextDatum(bg_source_name(c->source)),
		nf || bg_source_name(c->source) == NULL);
	PUT(COL_SOURCE_AT, TimestampTzGetDatum(c->source_at), nf || c->source_at == 0);
	PUT(COL_PARENT, ObjectIdGetDatum(parent), !OidIsValid(parent));
#undef PUT
}

/* Add a guard's row to the result, in the caller's version. */
static void
bg_stats_emit(ReturnSetInfo *rsinfo, BgStatsVersion version, Oid relid,
			  const BgRegistryEntry *reg, const BgSlotCopy *c, Oid parent)
{
	Datum		values[BG_STATS_COLS];
	bool		nulls[BG_STATS_COLS];

	bg_stats_row(relid, reg, c, parent, values, nulls);
	if (version == BG_STATS_V1_0)
	{
		Datum		v10[lengthof(bg_stats_cols_1_0)];
		bool		n10[lengthof(bg_stats_cols_1_0)];
		int			i;

		for (i = 0; i < lengthof(bg_stats_cols_1_0); i++)
		{
			v10[i] = values[bg_stats_cols_1_0[i]];
			n10[i] = nulls[bg_stats_cols_1_0[i]];
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v10, n10);
	}
	else
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* The rows of bloomguard_guard_stats() in either version. */
static void
bg_guard_stats(FunctionCallInfo fcinfo, BgStatsVersion version)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	List	   *registry = NIL;
	ListCell   *lc;
	int			i;

	bg_require_loaded();
	InitMaterializedSRF(fcinfo, 0);
	bg_slot_sweep();

	/*
	 * version 1.1: every registered guard, with its slot if it has one.  A
	 * guarded partitioned table has no filter of its own: its leaves have
	 * the rows, each naming it as parent.
	 */
	if (version == BG_STATS_V1_1)
	{
		List	   *registered = NIL;

		registry = bg_registry_list();
		foreach(lc, registry)
			registered = lappend_oid(registered, ((BgRegistryEntry *) lfirst(lc))->relid);
		foreach(lc, registry)
		{
			BgRegistryEntry *reg = (BgRegistryEntry *) lfirst(lc);
			BgSlotCopy	copy;

			if (get_rel_relkind(reg->relid) == RELKIND_PARTITIONED_TABLE ||
				!bg_may_see_guard(reg->relid))
				continue;
			if (!bg_slot_copy_rel(reg->relid, &copy))
			{
				copy.relid = InvalidOid;
				/* registered where no backend of ours did (a restore) */
				bg_visit_request();
			}
			bg_stats_emit(rsinfo, version, reg->relid, reg, &copy,
						  bg_partition_guarded_root(reg->relid, registered));
		}
	}

	/* slots: every one in 1.0; in 1.1 those not registered (yet) */
	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSlotCopy	copy;
		bool		registered = false;

		if (!bg_slot_copy(i, MyDatabaseId, InvalidOid, &copy))
			continue;
		foreach(lc, registry)
			registered |= ((BgRegistryEntry *) lfirst(lc))->relid == copy.relid;
		if (registered || !bg_may_see_guard(copy.relid))
			continue;
		bg_stats_emit(rsinfo, version, copy.relid, NULL, &copy, InvalidOid);
	}

	/*
	 * version 1.1: tables with the feed trigger but neither a registry row
	 * nor a slot (a schema-only copy); bloomguard_attach() adopts them
	 */
	if (version == BG_STATS_V1_1)
	{
		foreach(lc, bg_feed_trigger_tables())
		{
			Oid			relid = lfirst_oid(lc);
			BgSlotCopy	copy;
			bool		registered = false;
			ListCell   *r;

			foreach(r, registry)
				registered |= ((BgRegistryEntry *) lfirst(r))->relid == relid;
			/*
			 * A partitioned table's trigger has clones: its leaves have the
			 * rows.  A table whose rows are elsewhere (a Citus shell, a
			 * foreign table) has a row, in state unsupported.
			 */
			if (registered || bg_slot_copy_rel(relid, &copy) || !bg_may_see_guard(relid) ||
				(get_rel_relkind(relid) != RELKIND_RELATION &&
				 bg_table_kind_by_oid(relid) == BG_TABLE_OWN_ROWS))
				continue;
			memset(&copy, 0, sizeof(copy));
			copy.relid = InvalidOid;
			bg_stats_emit(rsinfo, version, relid, NULL, &copy, InvalidOid);
		}
	}
}

/*
 * bloomguard_guard_stats() (version 1.0 of the SQL interface): the raw
 * per-guard numbers behind that version's health view.
 */
Datum
bloomguard_guard_stats(PG_FUNCTION_ARGS)
{
	bg_guard_stats(fcinfo, BG_STATS_V1_0);
	return (Datum) 0;
}

/*
 * bloomguard_guard_stats_1_1(): the per-guard numbers and gauges behind
 * the health view, for the guards the caller may see.
 */
Datum
bloomguard_guard_stats_1_1(PG_FUNCTION_ARGS)
{
	bg_guard_stats(fcinfo, BG_STATS_V1_1);
	return (Datum) 0;
}

/* Open a guarded table for probe/reset, checking the caller's rights. */
static Relation
bg_open_managed(Oid relid, bool monitor_ok)
{
	Relation	rel = relation_open(relid, AccessShareLock);

	if (monitor_ok && has_privs_of_role(GetUserId(), ROLE_PG_MONITOR))
		return rel;
	bg_check_owner(rel);
	return rel;
}

/*
 * bloomguard_probe(rel regclass, n integer) returns float8
 *
 * Ask the serving filter about n keys that were certainly never added and
 * return the fraction it wrongly answered "maybe".  Counted in the view.
 */
Datum
bloomguard_probe(PG_FUNCTION_ARGS)
{
	Oid			relid;
	int32		n;
	Relation	rel;
	uint64		hits;
	BgState		state;

	bg_require_loaded();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	relid = PG_GETARG_OID(0);
	n = PG_GETARG_INT32(1);
	if (n <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of probes must be greater than zero")));

	rel = bg_open_managed(relid, true);
	bg_require_guarded(rel, NULL, NULL);
	if (!bg_slot_probe(relid, n, &hits, &state))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no filter to probe",
						RelationGetRelationName(rel)),
				 errdetail("The guard's state is \"%s\".", bg_state_name(state)),
				 errhint("Attach a guard with bloomguard_attach(), or rebuild it with bloomguard_rebuild().")));
	relation_close(rel, NoLock);
	PG_RETURN_FLOAT8((double) hits / (double) n);
}

/*
 * bloomguard_reset_stats(rel regclass DEFAULT NULL)
 *
 * NULL resets every guard of this database the caller owns (all of them,
 * for a superuser).
 */
Datum
bloomguard_reset_stats(PG_FUNCTION_ARGS)
{
	int			i;
	List	   *relids = NIL;

	bg_require_loaded();
	if (!PG_ARGISNULL(0))
	{
		/* the owner of that table only; a partitioned table: its leaves' */
		Relation	rel = bg_open_managed(PG_GETARG_OID(0), false);

		if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
			relids = bg_partition_leaves_of(rel, AccessShareLock);
		else
			relids = list_make1_oid(RelationGetRelid(rel));
		relation_close(rel, NoLock);
	}
	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSlotCopy	copy;

		if (!bg_slot_copy(i, MyDatabaseId, InvalidOid, &copy))
			continue;
		if (PG_ARGISNULL(0) ? !bg_class_ownercheck(copy.relid, GetUserId()) :
			!list_member_oid(relids, copy.relid))
			continue;
		bg_slot_reset_counters(i, copy.relid);
	}
	list_free(relids);
	PG_RETURN_VOID();
}
