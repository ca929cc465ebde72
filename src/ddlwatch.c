/*-------------------------------------------------------------------------
 *
 * ddlwatch.c
 *	  Noticing when rows can reach a guarded table without the trigger.
 *
 * A filter is complete only while every write fires its trigger.  Checking
 * the trigger on every call (feedcheck.c's bg_feed_check(), which the
 * trust rule runs) is not enough: rows written while it was disabled stay
 * missing after it is enabled again.  So an object access hook watches
 * what the feed depends on, and marks the guard "untrusted" when that
 * transaction commits; it stays so until a rebuild has scanned the table
 * again:
 *
 *	- the "bloomguard" trigger (or any trigger running bloomguard_trigger)
 *	  altered (DISABLE, ENABLE, ENABLE REPLICA, RENAME), replaced (CREATE
 *	  OR REPLACE TRIGGER) or dropped;
 *	- the feed function bloomguard_trigger() itself replaced (CREATE OR
 *	  REPLACE FUNCTION reaches the hook as OAT_POST_CREATE of the existing
 *	  function) or altered: every guard of the database, since every
 *	  trigger calls it.
 *
 * Waiting for the commit is safe because every such command holds a lock
 * that blocks other writers of the table until then (ShareRowExclusiveLock
 * or stronger; CREATE OR REPLACE FUNCTION locks nothing, but then the
 * function no longer passes bg_feed_check(), so no lookup trusts
 * the filter until the commit either), and this transaction's own lookups
 * ask bg_untrust_pending().  pending.c marks it at PRE_COMMIT, before the
 * transaction's rows become visible, and at PRE_PREPARE.  A rolled-back
 * DISABLE TRIGGER changes nothing.  That covers ALTER TABLE ... DISABLE
 * TRIGGER name/USER/ALL, pg_restore --disable-triggers, and DROP TRIGGER.
 * bloomguard_detach() and attach (its feed worker, or itself in the
 * caller's transaction) change the trigger themselves
 * (bg_own_trigger_begin()), which is not a coverage break.
 *
 * On a guarded partitioned table the trigger is cloned onto every
 * partition; the clone's creation (a new partition) and drop (a detached
 * one) are passed on to partition.c, to run just before the commit.  A
 * table joining a partitioned table (the new pg_inherits row) is passed on
 * at once, to be refused if the clone's name would collide.
 *
 * Drops are caught here too, in a way no setting can switch off (a
 * sql_drop event trigger does not fire under session_replication_role =
 * replica, in single-user mode, or with event_triggers = off): DROP TABLE
 * deletes the guard's bloomguard_guards row before the transaction
 * commits and frees its filter when it does; DROP DATABASE and DROP
 * EXTENSION free every filter of the database.  The extension's sql_drop
 * event trigger stays, for a server running without the library
 * preloaded (no hook then).
 *
 * A change to the function's or the trigger's catalog row that no hook
 * sees (a superuser's UPDATE of pg_proc) is caught by its version: a
 * filter is used only by backends that see the row versions it was built
 * under (feedcheck.c reads them, slot.c compares them).
 *
 * Changes to the key itself (ALTER COLUMN TYPE, a new primary key,
 * REINDEX CONCURRENTLY) give the key a new index, which lookups notice by
 * comparing the key identity stored with the filter.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_sql_drop);

static object_access_hook_type prev_object_access_hook = NULL;

/*
 * The table whose trigger attach or detach is changing itself, between
 * bg_own_trigger_begin() and bg_own_trigger_end(); the hook does not
 * count those changes as coverage breaks.
 */
static Oid	bg_own_trigger_relid = InvalidOid;

/*
 * Does rel really have inheritance children?  A query of the table reads
 * their rows too, which its trigger never sees.  relhassubclass alone
 * would do for safety, but it stays set after the last child goes (until
 * VACUUM or ANALYZE clears it); the planner then reads the table alone,
 * and so can we.
 */
bool
bg_has_children(Relation rel)
{
	List	   *children;
	bool		result;

	if (!rel->rd_rel->relhassubclass)
		return false;
	children = find_inheritance_children(RelationGetRelid(rel), NoLock);
	result = children != NIL;
	list_free(children);
	return result;
}

/*
 * Is attach's feed worker or detach changing this table's trigger itself?
 * On a partitioned table, that changes the clones on its partitions too.
 */
static bool
bg_own_trigger(Oid relid, bool clone)
{
	List	   *ancestors;
	bool		result;

	if (!OidIsValid(bg_own_trigger_relid) || relid == bg_own_trigger_relid)
		return relid == bg_own_trigger_relid;
	if (!clone)
		return false;
	ancestors = get_partition_ancestors(relid);
	result = list_member_oid(ancestors, bg_own_trigger_relid);
	list_free(ancestors);
	return result;
}

/*
 * attach or detach is about to change relid's feed trigger itself (create
 * it, enable it, drop it): until bg_own_trigger_end(), the hook does not
 * mark the guard untrusted for it.  Returns what to hand to
 * bg_own_trigger_end(): the DDL may fire an event trigger that attaches
 * another table meanwhile, whose change is the only one then.  A caller
 * that can fail between the two ends it in PG_FINALLY, or exits.
 */
Oid
bg_own_trigger_begin(Oid relid)
{
	Oid			outer = bg_own_trigger_relid;

	bg_own_trigger_relid = relid;
	return outer;
}

/* The change bg_own_trigger_begin() announced is done (or failed). */
void
bg_own_trigger_end(Oid outer)
{
	bg_own_trigger_relid = outer;
}

/* The object access hook: see the file header. */
static void
bg_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (!bg_loaded() || !IsTransactionState())
		return;

	if (classId == TriggerRelationId &&
		(access == OAT_POST_ALTER || access == OAT_DROP ||
		 access == OAT_POST_CREATE))
	{
		Oid			relid;
		bool		clone = false;

		if (!bg_feed_trigger_of(objectId, &relid, &clone))
			return;
		/* Citus copying a guarded shell's trigger to a placement (citus.c) */
		if (access == OAT_POST_CREATE && bg_citus_present())
			bg_visit_always(MyDatabaseId, true);
		if (!bg_own_trigger(relid, clone))
			bg_untrust_at_commit(relid, access == OAT_DROP ?
								 "its trigger was dropped" :
								 access == OAT_POST_CREATE ?
								 "its trigger was replaced" :
								 "its trigger was disabled or altered");
		/* a partition joining or leaving a guarded tree (partition.c) */
		if (clone && access == OAT_POST_CREATE)
			bg_call_at_commit(bg_partition_register, relid);
		else if (clone && access == OAT_DROP)
			bg_call_at_commit(bg_partition_recheck, relid);
	}
	else if (classId == ProcedureRelationId &&
			 (access == OAT_POST_CREATE || access == OAT_POST_ALTER))
	{
		if (bg_feed_function_changing(objectId))
			bg_untrust_at_commit(InvalidOid,
								 "its feed function bloomguard_trigger() was replaced or altered");
	}
	else if (classId == RelationRelationId && access == OAT_DROP && subId == 0)
	{
		BgSlotRef	ref = BG_SLOT_REF_INIT;
		char		relkind = get_rel_relkind(objectId);

		/*
		 * A registry row can outlive its filter (after a restart), so every
		 * dropped table that could be guarded is unregistered, in one
		 * statement at commit; most have no row.
		 */
		if ((relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE) &&
			get_rel_persistence(objectId) != RELPERSISTENCE_TEMP)
		{
			bg_unregister_at_commit(objectId);
			if (bg_slot_find(objectId, &ref))
				bg_forget_at_commit(objectId);
		}
	}
	else if (classId == InheritsRelationId && access == OAT_POST_ALTER && arg != NULL)
	{
		/* a table joining a partitioned table: the trigger clone's name */
		Oid			parent = ((ObjectAccessPostAlter *) arg)->auxiliary_id;

		if (OidIsValid(parent))
			bg_partition_check_joining(objectId, parent);
	}
	else if (classId == DatabaseRelationId && access == OAT_DROP)
		bg_forget_database_at_commit(objectId);
	else if (classId == ExtensionRelationId && access == OAT_DROP)
	{
		if (objectId == get_extension_oid("bloomguard", true))
			bg_forget_at_commit(InvalidOid);
	}
}

/* Install the object access hook; called from _PG_init while preloading. */
void
bg_coverage_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = bg_object_access;
}

/*
 * bloomguard_sql_drop(): event trigger on sql_drop that unregisters
 * dropped tables.  With the library preloaded, the object access hook
 * does that already, in every mode; this covers a server running without
 * it, where the hook is not installed but the event trigger still fires.
 */
Datum
bloomguard_sql_drop(PG_FUNCTION_ARGS)
{
	Oid		   *relids;
	int			n = 0;
	uint64		i;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloomguard_sql_drop: not fired by event trigger manager")));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT objid FROM pg_catalog.pg_event_trigger_dropped_objects()"
					" WHERE classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass"
					" AND objsubid OPERATOR(pg_catalog.=) 0",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the dropped objects");
	relids = MemoryContextAlloc(CurTransactionContext, Max(SPI_processed, 1) * sizeof(Oid));
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			relids[n++] = DatumGetObjectId(d);
	}
	SPI_finish();

	/* the registry itself may be going away (DROP EXTENSION) */
	if (n > 0 && OidIsValid(get_extension_oid("bloomguard", true)))
		bg_registry_delete(relids, n);
	PG_RETURN_NULL();
}
