/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  What the health view reads, probes, and resetting counters.
 *
 * bloomguard_guard_stats() copies each guard's state and counters out of
 * shared memory, one row per guard of this database, and the
 * bloomguard_health view (in the install script) derives the gauges and
 * the health rule from them.  Only the slot lock is taken, in shared mode
 * and briefly; fill is maintained by the adders (bits_set), so the view
 * never scans a filter and never stalls writers or readers.
 *
 * bloomguard_probe() asks the filter about keys from the reserved probe
 * hash domain (filter.c), which no real key can produce, so every "maybe"
 * it gets is a false positive.  Probes never touch the table.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_authid.h"
#include "common/pg_prng.h"
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
PG_FUNCTION_INFO_V1(bloomguard_probe);
PG_FUNCTION_INFO_V1(bloomguard_reset_stats);

#define BG_STATS_COLS 24

/* May the current user see this guard's row? */
static bool
bg_may_see(Oid relid)
{
	Oid			userid = GetUserId();

	if (has_privs_of_role(userid, ROLE_PG_READ_ALL_STATS))
		return true;
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return false;
	return pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck_all(relid, userid, ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
}

const char *
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

/*
 * bloomguard_guard_stats(): the raw per-guard numbers behind the health
 * view, for guards of this database whose table the caller may read.
 */
Datum
bloomguard_guard_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			i;

	bg_require_loaded();
	InitMaterializedSRF(fcinfo, 0);

	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSlot	   *slot = bg_slot(i);
		Datum		values[BG_STATS_COLS];
		bool		nulls[BG_STATS_COLS];
		Oid			relid;
		BgState		state;
		bool		has_filter = false;
		uint64		capacity = 0;
		double		error_rate = 0;
		uint64		bits = 0;
		int			hashes = 0;
		uint64		n_added = 0;
		uint64		bits_set = 0;
		Size		bytes;
		uint64		generation;
		TimestampTz built_at;
		double		build_seconds;
		int			builder_pid;
		char		last_error[sizeof(slot->last_error)];
		TimestampTz stats_reset;
		int			c = 0;

		LWLockAcquire(&slot->lock, LW_SHARED);
		if (slot->state == BG_STATE_FREE || slot->dbid != MyDatabaseId)
		{
			LWLockRelease(&slot->lock);
			continue;
		}
		relid = slot->relid;
		state = slot->state;
		if (DsaPointerIsValid(slot->serving))
		{
			BloomFilter *f = dsa_get_address(bg_dsa(), slot->serving);

			has_filter = true;
			capacity = f->capacity;
			error_rate = f->error_rate;
			bits = f->nbits;
			hashes = f->nhashes;
			n_added = pg_atomic_read_u64(&f->n_added);
			bits_set = pg_atomic_read_u64(&f->bits_set);
		}
		bytes = slot->serving_bytes + slot->building_bytes;
		generation = slot->generation;
		built_at = slot->built_at;
		build_seconds = slot->build_seconds;
		builder_pid = slot->builder_pid;
		strlcpy(last_error, slot->last_error, sizeof(last_error));
		stats_reset = slot->stats_reset;
		LWLockRelease(&slot->lock);

		if (!bg_may_see(relid))
			continue;

		memset(nulls, 0, sizeof(nulls));
		values[c++] = ObjectIdGetDatum(relid);
		values[c++] = CStringGetTextDatum(bg_state_name(state));
		values[c++] = Int64GetDatum((int64) generation);
		values[c] = Int64GetDatum((int64) capacity);
		nulls[c++] = !has_filter;
		values[c] = Float8GetDatum(error_rate);
		nulls[c++] = !has_filter;
		values[c] = Int64GetDatum((int64) bits);
		nulls[c++] = !has_filter;
		values[c] = Int32GetDatum(hashes);
		nulls[c++] = !has_filter;
		values[c++] = Int64GetDatum((int64) bytes);
		values[c] = Int64GetDatum((int64) n_added);
		nulls[c++] = !has_filter;
		values[c] = Int64GetDatum((int64) bits_set);
		nulls[c++] = !has_filter;
		values[c++] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->probes));
		values[c++] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->probe_hits));
		{
			uint64		shortcuts = pg_atomic_read_u64(&slot->shortcuts);
			uint64		source_lookups = pg_atomic_read_u64(&slot->source_lookups);
			uint64		fallbacks = pg_atomic_read_u64(&slot->fallbacks);

			/* every counted call is exactly one of these three */
			values[c++] = Int64GetDatum((int64) (shortcuts + source_lookups + fallbacks));
			values[c++] = Int64GetDatum((int64) shortcuts);
			values[c++] = Int64GetDatum((int64) source_lookups);
			values[c++] = Int64GetDatum((int64) pg_atomic_read_u64(&slot->source_hits));
			values[c++] = Int64GetDatum((int64) fallbacks);
		}
		values[c] = TimestampTzGetDatum(built_at);
		nulls[c++] = (built_at == 0);
		values[c] = Float8GetDatum(build_seconds);
		nulls[c++] = (built_at == 0);
		values[c] = Int32GetDatum(builder_pid);
		nulls[c++] = (builder_pid == 0);
		values[c] = CStringGetTextDatum(last_error);
		nulls[c++] = (last_error[0] == '\0');
		values[c++] = TimestampTzGetDatum(stats_reset);
		values[c] = Int64GetDatum((int64) bg_memory_in_use());
		nulls[c++] = false;
		values[c++] = Int64GetDatum((int64) bg_max_memory_mb * 1024 * 1024);
		Assert(c == BG_STATS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
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
	BgSlotRef	ref;
	BgSlot	   *slot;
	uint64		start;
	uint64		hits = 0;
	int32		i;

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
	if (!bg_registry_lookup(relid, NULL, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not guarded", RelationGetRelationName(rel)),
				 errhint("Use bloomguard_attach() to guard it.")));
	ref.index = -1;
	ref.epoch = 0;
	slot = bg_slot_lock(&ref, relid, LW_SHARED);
	if (slot == NULL || !DsaPointerIsValid(slot->serving))
	{
		const char *state = slot ? bg_state_name(slot->state) : "not_loaded";

		if (slot)
			LWLockRelease(&slot->lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no filter to probe",
						RelationGetRelationName(rel)),
				 errdetail("The guard's state is \"%s\".", state),
				 errhint("Attach a guard with bloomguard_attach(), or rebuild it with bloomguard_rebuild().")));
	}

	/* a fresh random start, so that batches do not repeat the same probes */
	start = pg_prng_uint64(&pg_global_prng_state);
	{
		BloomFilter *f = dsa_get_address(bg_dsa(), slot->serving);

		for (i = 0; i < n; i++)
		{
			if (bloom_maybe(f, bloom_hash_probe(f->seed, start + (uint64) i)))
				hits++;
			if ((i & 0xFFFF) == 0xFFFF)
			{
				/* let writers and swaps in, then carry on with the same slot */
				LWLockRelease(&slot->lock);
				CHECK_FOR_INTERRUPTS();
				slot = bg_slot_lock(&ref, relid, LW_SHARED);
				if (slot == NULL || !DsaPointerIsValid(slot->serving))
				{
					if (slot)
						LWLockRelease(&slot->lock);
					ereport(ERROR,
							(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
							 errmsg("the filter of table \"%s\" went away during the probe",
									RelationGetRelationName(rel))));
				}
				f = dsa_get_address(bg_dsa(), slot->serving);
			}
		}
	}
	pg_atomic_fetch_add_u64(&slot->probes, (uint64) n);
	pg_atomic_fetch_add_u64(&slot->probe_hits, hits);
	LWLockRelease(&slot->lock);

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

	bg_require_loaded();
	if (!PG_ARGISNULL(0))
	{
		Oid			relid = PG_GETARG_OID(0);
		Relation	rel = bg_open_managed(relid, false);
		BgSlotRef	ref;
		BgSlot	   *slot;

		ref.index = -1;
		ref.epoch = 0;
		slot = bg_slot_lock(&ref, relid, LW_EXCLUSIVE);
		if (slot)
		{
			bg_slot_reset_counters(slot);
			LWLockRelease(&slot->lock);
		}
		relation_close(rel, NoLock);
		PG_RETURN_VOID();
	}

	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSlot	   *slot = bg_slot(i);
		Oid			relid;

		LWLockAcquire(&slot->lock, LW_SHARED);
		relid = (slot->state != BG_STATE_FREE && slot->dbid == MyDatabaseId) ?
			slot->relid : InvalidOid;
		LWLockRelease(&slot->lock);
		if (!OidIsValid(relid))
			continue;
#if PG_VERSION_NUM >= 160000
		if (!object_ownercheck(RelationRelationId, relid, GetUserId()))
#else
		if (!pg_class_ownercheck(relid, GetUserId()))
#endif
			continue;
		LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
		if (slot->state != BG_STATE_FREE && slot->dbid == MyDatabaseId &&
			slot->relid == relid)
			bg_slot_reset_counters(slot);
		LWLockRelease(&slot->lock);
	}
	PG_RETURN_VOID();
}
