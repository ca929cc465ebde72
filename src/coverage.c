/*-------------------------------------------------------------------------
 *
 * coverage.c
 *	  Noticing when rows can reach a guarded table without the trigger.
 *
 * A filter is complete only while every write fires its trigger.  Checking
 * the trigger on every call (bg_feed_state(), which lookups use) is not
 * enough: rows written while it was disabled stay missing after it is
 * enabled again.  So an object access hook watches what the feed depends
 * on, and marks the guard "untrusted" when that transaction commits; it
 * stays so until a rebuild has scanned the table again:
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
 * function no longer passes bg_feed_state()'s check, so no lookup trusts
 * the filter until the commit either), and this transaction's own lookups
 * ask bg_untrust_pending().  pending.c marks it at PRE_COMMIT, before the
 * transaction's rows become visible, and at PRE_PREPARE.  A rolled-back
 * DISABLE TRIGGER changes nothing.  That covers ALTER TABLE ... DISABLE
 * TRIGGER name/USER/ALL, pg_restore --disable-triggers, and DROP TRIGGER.
 * bloomguard_detach() and attach's feed worker change the trigger
 * themselves (bg_own_trigger_relid), which is not a coverage break.
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
 * A change to the function's catalog row that no hook sees (a superuser's
 * UPDATE of pg_proc) is caught by its version: a filter is used only by
 * backends that see the row version it was built under (slot.c).
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

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_sql_drop);

static object_access_hook_type prev_object_access_hook = NULL;

/* the table whose trigger attach's worker or detach is changing itself */
Oid			bg_own_trigger_relid = InvalidOid;

/*
 * The OID of this extension's bloomguard_trigger(), once checked.
 * Forgotten on any pg_proc invalidation (a replaced or altered function,
 * DROP/CREATE EXTENSION).
 */
static Oid	bg_feed_funcoid = InvalidOid;
static bool bg_feed_callback_registered = false;

/* Syscache callback: forget the checked feed function. */
static void
bg_feed_funcoid_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	bg_feed_funcoid = InvalidOid;
}

/*
 * Is funcoid this extension's feed trigger function, as the extension
 * script created it: the C function bloomguard_trigger in the bloomguard
 * library, a member of the extension?  Cheap when it is.  Notes the
 * version of its catalog row for slot.c (bg_feed_version).
 */
static bool
bg_is_feed_function(Oid funcoid)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		result;
	Datum		d;
	bool		isnull;
	Oid			extoid;
	TransactionId version;

	if (OidIsValid(funcoid) && funcoid == bg_feed_funcoid)
		return true;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcoid));
	if (!HeapTupleIsValid(tup))
		return false;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	version = HeapTupleHeaderGetRawXmin(tup->t_data);
	result = strcmp(NameStr(proc->proname), BLOOMGUARD_TRIGGER_FUNCTION) == 0 &&
		proc->prolang == ClanguageId;
	if (result)
	{
		d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);
		result = !isnull && strcmp(TextDatumGetCString(d), BLOOMGUARD_TRIGGER_FUNCTION) == 0;
	}
	if (result)
	{
		d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
		result = !isnull && strcmp(TextDatumGetCString(d), "$libdir/bloomguard") == 0;
	}
	ReleaseSysCache(tup);
	if (!result)
		return false;
	extoid = get_extension_oid("bloomguard", true);
	if (!OidIsValid(extoid) ||
		getExtensionOfObject(ProcedureRelationId, funcoid) != extoid)
		return false;
	if (!bg_feed_callback_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, bg_feed_funcoid_invalidate, (Datum) 0);
		bg_feed_callback_registered = true;
	}
	bg_feed_funcoid = funcoid;
	bg_feed_version = version;	/* slot.c compares it with the filter's */
	return true;
}

/*
 * Judge a trigger named "bloomguard": is it exactly what attach creates
 * (AFTER INSERT OR UPDATE FOR EACH ROW, no WHEN, no UPDATE OF, not a
 * constraint trigger, running our feed function), and does it fire
 * ALWAYS?  Anything else might not see every key.
 */
static BgFeedState
bg_judge_trigger(char tgenabled, int16 tgtype, int16 tgnattr, bool has_qual,
				 Oid tgconstraint, bool tgdeferrable, Oid tgfoid)
{
	if (tgtype != (TRIGGER_TYPE_ROW | TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE) ||
		tgnattr != 0 || has_qual || OidIsValid(tgconstraint) || tgdeferrable ||
		!bg_is_feed_function(tgfoid))
		return BG_FEED_ALTERED;
	if (tgenabled != TRIGGER_FIRES_ALWAYS)
		return BG_FEED_NOT_ALWAYS;
	return BG_FEED_IN_PLACE;
}

/*
 * Is the feed trigger on rel as attach made it?  A cheap scan of the
 * relcache's trigger list, done on every lookup.
 */
BgFeedState
bg_feed_state(Relation rel)
{
	TriggerDesc *trigdesc = rel->trigdesc;
	int			i;

	for (i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		Trigger    *trig = &trigdesc->triggers[i];

		if (strcmp(trig->tgname, BLOOMGUARD_TRIGGER_NAME) == 0)
			return bg_judge_trigger(trig->tgenabled, trig->tgtype, trig->tgnattr,
									trig->tgqual != NULL, trig->tgconstraint,
									trig->tgdeferrable, trig->tgfoid);
	}
	return BG_FEED_MISSING;
}

/*
 * bg_feed_state() for a table we do not open (the health view must not
 * wait for a table lock): read its trigger from pg_trigger.
 */
BgFeedState
bg_feed_state_by_oid(Oid relid)
{
	HeapTuple	tuple = bg_feed_trigger_tuple(relid);
	BgFeedState result = BG_FEED_MISSING;

	if (tuple)
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);

		result = bg_judge_trigger(trig->tgenabled, trig->tgtype,
								  trig->tgattr.dim1,
								  !heap_attisnull(tuple, Anum_pg_trigger_tgqual, NULL),
								  trig->tgconstraint, trig->tgdeferrable,
								  trig->tgfoid);
		heap_freetuple(tuple);
	}
	return result;
}

/*
 * The tables of this database that have a trigger named "bloomguard"
 * running the feed function, whatever its events or enabled state: the
 * candidates for orphan feeds (a schema copy carries the trigger without
 * the registry row).  A scan of pg_trigger, for the health view.
 */
List *
bg_feed_trigger_tables(void)
{
	List	   *result = NIL;
	Relation	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;

	ScanKeyInit(&key, Anum_pg_trigger_tgname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(BLOOMGUARD_TRIGGER_NAME));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);

		if (bg_is_feed_function(trig->tgfoid))
			result = lappend_oid(result, trig->tgrelid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

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
 * Fetch a trigger's table and whether it is a clone of a partitioned
 * table's trigger; returns whether it is a bloomguard feed trigger.  The
 * row is read as this very command left it (SnapshotSelf): a trigger just
 * created is not in the catalog snapshot yet.
 */
static bool
bg_feed_trigger_table(Oid trigoid, Oid *relid, bool *clone)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	bool		result = false;

	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(trigoid));
	scan = systable_beginscan(rel, TriggerOidIndexId, true, SnapshotSelf, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);

		*relid = trig->tgrelid;
		*clone = OidIsValid(trig->tgparentid);
		result = strcmp(NameStr(trig->tgname), BLOOMGUARD_TRIGGER_NAME) == 0 ||
			bg_is_feed_function(trig->tgfoid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
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
 * Is funcoid (being replaced or altered) the feed function?  The hook may
 * see the catalog row before or after the change, so go by the name it
 * had or has and by membership in the extension, not by the checks that
 * bg_is_feed_function() makes of a function in use.
 */
static bool
bg_feed_function_changing(Oid funcoid)
{
	char	   *proname;
	Oid			extoid;

	if (funcoid == bg_feed_funcoid && OidIsValid(funcoid))
		return true;
	proname = get_func_name(funcoid);
	if (proname == NULL || strcmp(proname, BLOOMGUARD_TRIGGER_FUNCTION) != 0)
		return false;
	extoid = get_extension_oid("bloomguard", true);
	return OidIsValid(extoid) &&
		getExtensionOfObject(ProcedureRelationId, funcoid) == extoid;
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

		if (!bg_feed_trigger_table(objectId, &relid, &clone))
			return;
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
