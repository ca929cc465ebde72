/*-------------------------------------------------------------------------
 *
 * feedcheck.c
 *	  The feed trigger as the catalogs have it: is it the one attach
 *	  makes, and the versions of its row and of its function's row.
 *
 * Every reader of pg_trigger and of the feed function's pg_proc row is
 * here, so that what "the feed is in place" means is written once:
 *	- bg_feed_check() judges a table's trigger from the relcache (cheap:
 *	  done on every lookup), and returns the version of the feed
 *	  function's catalog row with the verdict;
 *	- bg_feed_state_by_oid() judges it from pg_trigger, for a table that
 *	  is not opened (the health view);
 *	- bg_feed_trigger_version() is the version of the trigger's own row;
 *	- bg_feed_trigger_tables() and bg_feed_trigger_of() find feed triggers
 *	  for the health view and for ddlwatch.c's hook, and
 *	  bg_feed_function_changing() tells that hook whether a function being
 *	  replaced or altered is the feed function.
 *
 * Versions.  A filter is used only by a backend that sees the catalog rows
 * it was built under: the xmin of the feed function's pg_proc row (one
 * function per database, which every trigger runs) and of the table's
 * pg_trigger row.  Any change to either row, even one no hook sees (a
 * superuser's UPDATE of pg_catalog.pg_proc or pg_trigger), makes a new
 * version, and the filter stays untrusted until a rebuild (slot.c compares
 * them under the slot's lock; trust.c passes them).  The versions are
 * returned to the caller, never left in a global.
 *
 * The feed function's OID and version are cached once checked, and
 * forgotten on any pg_proc invalidation (a replaced or altered function,
 * DROP/CREATE EXTENSION).  The check itself reads catalogs, which may
 * process invalidations: one that arrives during the check means the row
 * just read may be old, so the result is then used for this call (as it
 * would be had the invalidation come just after) but not cached, and the
 * next call checks again.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bloomguard.h"

/*
 * The OID of this extension's bloomguard_trigger(), and the version (xmin)
 * of its pg_proc row, once checked (see the file header).
 */
static Oid	bg_feed_funcoid = InvalidOid;
static TransactionId bg_feed_funcversion = InvalidTransactionId;
static bool bg_feed_callback_registered = false;

/* pg_proc invalidations seen, so that a check can tell one came meanwhile */
static uint64 bg_feed_invalidations = 0;

/* Syscache callback: forget the checked feed function. */
static void
bg_feed_funcoid_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	bg_feed_funcoid = InvalidOid;
	bg_feed_invalidations++;
}

/*
 * Is funcoid this extension's feed trigger function, as the extension
 * script created it: the C function bloomguard_trigger in the bloomguard
 * library, a member of the extension?  Cheap when it is.  *version is set
 * to the version of its catalog row when it is.
 */
static bool
bg_is_feed_function(Oid funcoid, TransactionId *version)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	bool		result;
	Datum		d;
	bool		isnull;
	Oid			extoid;
	uint64		invalidations;

	if (OidIsValid(funcoid) && funcoid == bg_feed_funcoid)
	{
		*version = bg_feed_funcversion;
		return true;
	}
	if (!bg_feed_callback_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, bg_feed_funcoid_invalidate, (Datum) 0);
		bg_feed_callback_registered = true;
	}
	invalidations = bg_feed_invalidations;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcoid));
	if (!HeapTupleIsValid(tup))
		return false;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	*version = HeapTupleHeaderGetRawXmin(tup->t_data);
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
	/* cached only if no invalidation came during the check (file header) */
	if (invalidations == bg_feed_invalidations)
	{
		bg_feed_funcoid = funcoid;
		bg_feed_funcversion = *version;
	}
	return true;
}

/*
 * Judge a trigger named "bloomguard": is it exactly what attach creates
 * (AFTER INSERT OR UPDATE FOR EACH ROW, no WHEN, no UPDATE OF, not a
 * constraint trigger, running our feed function), and does it fire
 * ALWAYS?  Anything else might not see every key.  *version is set to the
 * feed function's version if it runs the feed function.
 */
static BgFeedState
bg_judge_trigger(char tgenabled, int16 tgtype, int16 tgnattr, bool has_qual,
				 Oid tgconstraint, bool tgdeferrable, Oid tgfoid,
				 TransactionId *version)
{
	if (tgtype != (TRIGGER_TYPE_ROW | TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE) ||
		tgnattr != 0 || has_qual || OidIsValid(tgconstraint) || tgdeferrable ||
		!bg_is_feed_function(tgfoid, version))
		return BG_FEED_ALTERED;
	if (tgenabled != TRIGGER_FIRES_ALWAYS)
		return BG_FEED_NOT_ALWAYS;
	return BG_FEED_IN_PLACE;
}

/*
 * Is the feed trigger on rel as attach made it?  A cheap scan of the
 * relcache's trigger list, done on every lookup.  *feed_version is set to
 * the version of the feed function's catalog row when the answer is
 * BG_FEED_IN_PLACE, to InvalidTransactionId otherwise.
 */
BgFeedState
bg_feed_check(Relation rel, TransactionId *feed_version)
{
	TriggerDesc *trigdesc = rel->trigdesc;
	int			i;

	*feed_version = InvalidTransactionId;
	for (i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		Trigger    *trig = &trigdesc->triggers[i];
		TransactionId version = InvalidTransactionId;
		BgFeedState state;

		if (strcmp(trig->tgname, BLOOMGUARD_TRIGGER_NAME) != 0)
			continue;
		state = bg_judge_trigger(trig->tgenabled, trig->tgtype, trig->tgnattr,
								 trig->tgqual != NULL, trig->tgconstraint,
								 trig->tgdeferrable, trig->tgfoid, &version);
		if (state == BG_FEED_IN_PLACE)
			*feed_version = version;
		return state;
	}
	return BG_FEED_MISSING;
}

/* bg_feed_check() for a caller that needs only the verdict. */
BgFeedState
bg_feed_state(Relation rel)
{
	TransactionId version;

	return bg_feed_check(rel, &version);
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
		TransactionId version;

		result = bg_judge_trigger(trig->tgenabled, trig->tgtype,
								  trig->tgattr.dim1,
								  !heap_attisnull(tuple, Anum_pg_trigger_tgqual, NULL),
								  trig->tgconstraint, trig->tgdeferrable,
								  trig->tgfoid, &version);
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
		TransactionId version;

		if (bg_is_feed_function(trig->tgfoid, &version))
			result = lappend_oid(result, trig->tgrelid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * Fetch a trigger's table and whether it is a clone of a partitioned
 * table's trigger; returns whether it is a bloomguard feed trigger (named
 * bloomguard, or running the feed function).  The row is read as this very
 * command left it (SnapshotSelf): a trigger just created is not in the
 * catalog snapshot yet.
 */
bool
bg_feed_trigger_of(Oid trigoid, Oid *relid, bool *clone)
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
		TransactionId version;

		*relid = trig->tgrelid;
		*clone = OidIsValid(trig->tgparentid);
		result = strcmp(NameStr(trig->tgname), BLOOMGUARD_TRIGGER_NAME) == 0 ||
			bg_is_feed_function(trig->tgfoid, &version);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * Is funcoid (being replaced or altered) the feed function?  The hook may
 * see the catalog row before or after the change, so go by the name it
 * had or has and by membership in the extension, not by the checks that
 * bg_is_feed_function() makes of a function in use.
 */
bool
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

/*
 * A copy of the pg_trigger row of relid's feed trigger (the one named
 * bloomguard, as the catalog snapshot sees it), or NULL if it has none.
 */
HeapTuple
bg_feed_trigger_tuple(Oid relid)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData keys[2];
	HeapTuple	tuple;

	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyInit(&keys[0], Anum_pg_trigger_tgrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	ScanKeyInit(&keys[1], Anum_pg_trigger_tgname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum(BLOOMGUARD_TRIGGER_NAME));
	scan = systable_beginscan(rel, TriggerRelidNameIndexId, true, NULL, 2, keys);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		tuple = heap_copytuple(tuple);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return tuple;
}

/*
 * The version of relid's feed trigger row: the xmin of its pg_trigger
 * tuple, which every change of the trigger (ENABLE, DISABLE, a new
 * trigger of the name) makes new; InvalidTransactionId without one.
 */
TransactionId
bg_feed_trigger_version(Oid relid)
{
	HeapTuple	tuple = bg_feed_trigger_tuple(relid);
	TransactionId version = InvalidTransactionId;

	if (tuple)
	{
		version = HeapTupleHeaderGetRawXmin(tuple->t_data);
		heap_freetuple(tuple);
	}
	return version;
}
