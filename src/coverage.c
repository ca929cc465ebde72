/*-------------------------------------------------------------------------
 *
 * coverage.c
 *	  Noticing when rows can reach a guarded table without the trigger.
 *
 * A filter is complete only while every write fires its trigger.  Checking
 * the trigger on every call (lookup.c does) is not enough: rows written
 * while it was disabled stay missing after it is enabled again.  So an
 * object access hook watches the trigger itself: when the "bloomguard"
 * trigger (or any trigger running bloomguard_trigger) is altered (DISABLE,
 * ENABLE, ENABLE REPLICA, RENAME) or dropped, the guard becomes
 * "untrusted" when that transaction commits, and stays so until a rebuild
 * has scanned the table again.  Waiting for the commit is safe because
 * every such command holds a lock that blocks other writers until then
 * (ShareRowExclusiveLock or stronger), and the transaction's own lookups
 * skip the filter once it holds such a lock (lookup.c).  We mark it at
 * PRE_COMMIT, before the transaction's rows become visible, and at
 * PRE_PREPARE, since nothing of ours runs at COMMIT PREPARED (shmem.c keeps
 * the pending list).  A rolled-back DISABLE TRIGGER or DROP TABLE changes
 * nothing.  That covers ALTER TABLE
 * ... DISABLE TRIGGER name/USER/ALL, pg_restore --disable-triggers, and
 * DROP TRIGGER.  bloomguard_detach() is the exception: it drops the
 * trigger under an AccessExclusiveLock held to commit, at which point the
 * guard goes away, and a rolled-back detach leaves the trigger as it was.
 *
 * Drops are handled here too: DROP TABLE frees the guard's filter when the
 * transaction commits, and a sql_drop event trigger (installed by the
 * extension script) removes its bloomguard_guards row; DROP EXTENSION frees
 * every filter of the database.
 *
 * Changes to the key itself (ALTER COLUMN TYPE, a new primary key,
 * REINDEX CONCURRENTLY) give the key a new index, which lookups notice by
 * comparing the key identity stored with the filter.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_proc.h"
#include "catalog/dependency.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_trigger.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_sql_drop);

static object_access_hook_type prev_object_access_hook = NULL;

/* the table whose trigger attach's worker or detach is changing itself */
Oid			bg_own_trigger_relid = InvalidOid;

/* Mark a guard untrusted: its filter may be missing keys. */
void
bg_untrust(Oid relid, const char *why)
{
	BgSlotRef	ref;
	BgSlot	   *slot;

	ref.index = -1;
	ref.epoch = 0;
	slot = bg_slot_lock(&ref, relid, LW_EXCLUSIVE);
	if (slot == NULL)
		return;
	if (slot->state == BG_STATE_READY)
		slot->state = BG_STATE_UNTRUSTED;
	/* a build now running might already have passed the rows */
	if (DsaPointerIsValid(slot->building))
		slot->coverage_broken = true;
	strlcpy(slot->last_error, why, sizeof(slot->last_error));
	LWLockRelease(&slot->lock);
	ereport(DEBUG1,
			(errmsg_internal("bloomguard: guard of relation %u is untrusted: %s",
							 relid, why)));
}

/*
 * The OID of this extension's bloomguard_trigger(), once seen.  Forgotten
 * on any pg_proc invalidation (DROP/CREATE EXTENSION makes a new one).
 */
static Oid	bg_feed_funcoid = InvalidOid;
static bool bg_feed_callback_registered = false;

static void
bg_feed_funcoid_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	bg_feed_funcoid = InvalidOid;
}

/* Is funcoid this extension's feed trigger function?  Cheap when it is. */
bool
bg_is_feed_function(Oid funcoid)
{
	char	   *proname;
	Oid			extoid;

	if (OidIsValid(funcoid) && funcoid == bg_feed_funcoid)
		return true;
	proname = get_func_name(funcoid);
	if (proname == NULL || strcmp(proname, "bloomguard_trigger") != 0)
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
	return true;
}

/* Fetch a trigger's table and whether it is a bloomguard feed trigger. */
static bool
bg_feed_trigger_table(Oid trigoid, Oid *relid)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	bool		result = false;

	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(trigoid));
	scan = systable_beginscan(rel, TriggerOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);

		*relid = trig->tgrelid;
		result = strcmp(NameStr(trig->tgname), BLOOMGUARD_TRIGGER_NAME) == 0 ||
			bg_is_feed_function(trig->tgfoid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

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

		if (bg_feed_trigger_table(objectId, &relid) &&
			relid != bg_own_trigger_relid)
			bg_untrust_at_commit(relid, access == OAT_DROP ?
								 "its trigger was dropped" :
								 access == OAT_POST_CREATE ?
								 "its trigger was replaced" :
								 "its trigger was disabled or altered");
	}
	else if (classId == RelationRelationId && access == OAT_DROP && subId == 0)
	{
		BgSlotRef	ref;

		if (bg_slot_find(objectId, &ref))
			bg_forget_at_commit(objectId);
	}
	else if (classId == DatabaseRelationId && access == OAT_DROP)
		bg_forget_database_at_commit(objectId);
	else if (classId == ExtensionRelationId && access == OAT_DROP)
	{
		if (objectId == get_extension_oid("bloomguard", true))
			bg_forget_at_commit(InvalidOid);
	}
}

void
bg_coverage_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = bg_object_access;
}

/*
 * bloomguard_sql_drop(): event trigger on sql_drop that unregisters
 * dropped tables.
 */
Datum
bloomguard_sql_drop(PG_FUNCTION_ARGS)
{
	List	   *relids = NIL;
	ListCell   *lc;
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
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			relids = lappend_oid(relids, DatumGetObjectId(d));
	}
	SPI_finish();

	/* the registry itself may be going away (DROP EXTENSION) */
	if (get_extension_oid("bloomguard", true) == InvalidOid)
		PG_RETURN_NULL();
	foreach(lc, relids)
		bg_registry_delete(lfirst_oid(lc));
	PG_RETURN_NULL();
}
