/*-------------------------------------------------------------------------
 *
 * rebuild.c
 *	  Rebuilding a guard's filter: the policy bloomguard_rebuild() and the
 *	  background worker share, and what can be guarded.
 *
 * bg_rebuild() checks that the table can be guarded and its feed trigger is
 * in place, chooses the capacity and error rate (the serving generation's,
 * grown with the table if it outgrew it and the bigger filter fits,
 * sizing.c), and builds with build.c's protocol.
 *
 * Locking.  A rebuild holds the table in ShareUpdateExclusiveLock
 * (AccessShareLock during recovery, bg_build_lockmode()) from before it
 * reads the trigger and the key until the build has swapped: that is what
 * serializes builds of one table (build.c's header).  With nowait it takes
 * the table's lock and its key index's conditionally, so that the
 * background worker never queues behind anyone.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/heapam.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/rel.h"

#include "bloomguard.h"

/*
 * Error out unless rel is a kind of table bloomguard can guard: a heap
 * table without inheritance children, or a partitioned table (whose leaves
 * are each checked as tables, partition.c), whose rows are in it
 * (tablekind.c).  Attach checks this before it creates anything: with
 * citus.enable_unsafe_triggers on, a trigger created on a Citus shell
 * would be copied to every shard.
 */
void
bg_check_guardable(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	bool		partitioned = false;
	BgTableKind kind = bg_table_kind(rel);

	switch (rel->rd_rel->relkind)
	{
		case RELKIND_RELATION:
			break;
		case RELKIND_PARTITIONED_TABLE:
			partitioned = true;
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("cannot guard \"%s\"", name),
					 errdetail("%s", bg_table_kind_detail(kind, name)),
					 errhint("bloomguard guards ordinary and partitioned tables by their primary key.")));
	}
	if (bg_table_kind_citus(kind))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard table \"%s\" because its rows are not in it", name),
				 errdetail("%s", bg_table_kind_detail(kind, name)),
				 errhint("Guard its shards instead: attach a guard to each shard table (%s_<shard id>, listed by citus_shards) on the node that holds it.",
						 name)));
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard temporary table \"%s\"", name),
				 errdetail("A temporary table is visible to one session only; a shared filter would not help it.")));
	if (!partitioned && rel->rd_tableam != GetHeapamTableAmRoutine())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard table \"%s\": only the heap table access method is supported", name)));
	if (!partitioned && bg_has_children(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard table \"%s\" because it has inheritance children", name),
				 errdetail("A query on the table also reads its children, whose rows its trigger does not see.")));
	if (RecoveryInProgress() && rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot build the filter of unlogged table \"%s\" during recovery", name)));
}

/* Error out during recovery: what the caller does writes to the database. */
void
bg_check_not_in_recovery(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change guards during recovery"),
				 errhint("Attach and detach guards on the primary; a standby builds its own filters.")));
}

/* Error out, saying what to do, unless rel's feed trigger is in place. */
static void
bg_require_feed(Relation rel)
{
	const char *name = RelationGetRelationName(rel);

	switch (bg_feed_state(rel))
	{
		case BG_FEED_IN_PLACE:
			return;
		case BG_FEED_NOT_ALWAYS:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" is not enabled ALWAYS", name),
					 errdetail("Without it the filter cannot see every new key."),
					 errhint("Run ALTER TABLE %s ENABLE ALWAYS TRIGGER %s, then rebuild.",
							 quote_identifier(name),
							 quote_identifier(bg_feed_trigger_name(rel)))));
			break;
		case BG_FEED_ALTERED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" is not the one bloomguard_attach() creates", name),
					 errdetail("Without it the filter cannot see every new key."),
					 errhint("Run bloomguard_detach() and then bloomguard_attach() to recreate it.")));
			break;
		case BG_FEED_MISSING:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" is missing", name),
					 errdetail("Without it the filter cannot see new keys."),
					 errhint("Run bloomguard_detach() and then bloomguard_attach() to recreate it.")));
			break;
	}
}

/*
 * The capacity a rebuild of rel's guard without an explicit one should
 * have, or 0 to keep the serving generation's: when the table has
 * outgrown that capacity, or the filter is past it (load above 1.0),
 * sizing.c's choice from the table's live rows and the filter's distinct
 * keys.
 */
int64
bg_rebuild_capacity(Relation rel)
{
	BgSlotCopy	copy;
	double		rows = bg_live_rows(RelationGetRelid(rel));
	double		keys = 0;
	bool		full = false;

	if (!bg_slot_copy_rel(RelationGetRelid(rel), &copy) || !copy.has_filter)
		return 0;
	if (rows <= (double) copy.capacity && copy.n_added <= copy.capacity)
		return 0;
	keys = bloom_estimated_keys(copy.nbits, copy.nhashes, copy.block_bits,
								copy.bits_set, &full);
	return bg_choose_capacity(rows, keys, full, (int64) copy.capacity);
}

/*
 * Rebuild a guard's filter: the policy shared by bloomguard_rebuild() and
 * the background worker.  capacity <= 0 and error_rate NaN mean "keep the
 * serving generation's" (capacity grows with the table if it outgrew it
 * and the bigger filter fits).  With nowait, returns false instead of
 * waiting when another build (or VACUUM, or DDL) holds the table or its
 * key index; the background worker uses that so that it never queues
 * behind anyone.  The caller has checked permissions.
 */
bool
bg_rebuild(Relation rel, int64 capacity, double error_rate, bool nowait)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			indexoid;
	BgKeyDesc  *desc;
	BgKeyIdentity key;
	BgSlotCopy	copy;
	int64		reg_capacity;
	double		reg_error_rate;
	int64		cur_capacity;
	double		cur_error_rate;
	int			slotindex;
	BgBuildState bs;
	LOCKMODE	lockmode;

	bg_require_guarded(rel, NULL, NULL);
	bg_check_guardable(rel);

	/*
	 * One build at a time; waits show up as heavyweight lock waits.  During
	 * recovery only AccessShareLock can be taken: the slot serializes the
	 * builds (bg_build_begin() refuses a second one).
	 */
	lockmode = bg_build_lockmode();
	indexoid = bg_primary_key_index(rel);
	if (nowait)
	{
		if (!ConditionalLockRelationOid(relid, lockmode))
			return false;
		if (OidIsValid(indexoid) &&
			!ConditionalLockRelationOid(indexoid, AccessShareLock))
			return false;
	}
	else
		LockRelationOid(relid, lockmode);

	/*
	 * Not in the transaction that truncated or rewrote the table: the scan
	 * reads the new file, but a rollback would bring back the old one, and
	 * the swap, which is not transactional, would leave a filter without
	 * its rows serving.
	 */
	if (bg_rel_file_changed_in_xact(rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot rebuild the filter of table \"%s\" in the transaction that truncated or rewrote it",
						RelationGetRelationName(rel)),
				 errdetail("A rollback would bring back rows that the new filter would not hold."),
				 errhint("Commit first, then rebuild. Until then the filter keeps the keys it had, which costs only false positives.")));

	bg_require_feed(rel);
	desc = bg_keydesc_build(rel, false, true);

	/* read the registry again: a rebuild we waited for may have resized it */
	bg_require_guarded(rel, &reg_capacity, &reg_error_rate);

	/* defaults: the serving generation's sizing, else the registry's */
	cur_capacity = reg_capacity;
	cur_error_rate = reg_error_rate;
	if (bg_slot_copy_rel(relid, &copy) && copy.has_filter)
	{
		cur_capacity = (int64) copy.capacity;
		cur_error_rate = copy.error_rate;
	}
	if (isnan(error_rate))
		error_rate = cur_error_rate;
	if (capacity <= 0)
	{
		int64		grown = bg_rebuild_capacity(rel);

		/*
		 * Grow if the policy says so and the bigger filter fits: a filter
		 * at the old capacity (DEGRADED, over capacity) is better than none
		 * at all.
		 */
		capacity = cur_capacity;
		if (grown > 0 && bg_capacity_fits(grown, error_rate))
			capacity = grown;
	}

	if (bg_slot_copy_rel(relid, &copy))
		slotindex = copy.index;
	else
	{
		bg_keydesc_identity(desc, &key);
		slotindex = bg_slot_claim(relid, &key, BG_STATE_NOT_LOADED,
								  InvalidTransactionId);
	}

	bg_build_begin(rel, desc, slotindex, (uint64) capacity, error_rate, &bs);
	bg_build_finish(rel, desc, &bs);

	/* a standby's sizing is its own: the registry is the primary's */
	if ((capacity != reg_capacity || error_rate != reg_error_rate) &&
		!RecoveryInProgress())
		bg_registry_update(relid, capacity, error_rate);
	return true;
}
