/*-------------------------------------------------------------------------
 *
 * feedcheck.c
 *	  The feed trigger as the catalogs have it: is it the one attach
 *	  makes, and the versions of its row and of its function's row.
 *
 * Every reader of pg_trigger and of the feed function's pg_proc row is
 * here, so that what "the feed is in place" means is written once.
 *
 * Which trigger is the feed.  A trigger is recognised by what it runs,
 * not by its name: the candidates are the table's triggers that run this
 * extension's bloomguard_trigger(), and one named "bloomguard" that runs
 * something else (CREATE OR REPLACE TRIGGER bloomguard ... EXECUTE
 * FUNCTION f(), so that it is reported as altered rather than missing).
 * Tools that copy triggers rename them: Citus names a shard's copy of a
 * table's trigger bloomguard_<shardid>, and citus_add_local_table_to_metadata()
 * renames the trigger of the table it turns into a shard.  The feed is the
 * first candidate, in name order, that is exactly what attach creates and
 * enabled ALWAYS (one such trigger sees every key, whatever the others
 * do), or else the first candidate, whose state is then the verdict.  The
 * relcache and pg_trigger's (tgrelid, tgname) index both list a table's
 * triggers in name order, so every reader below picks the same one.
 *
 * The readers:
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
	/* the extension has one feed function: any other is not it */
	if (OidIsValid(bg_feed_funcoid))
		return false;
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
 * Judge a candidate trigger (the file header): is it exactly what attach creates
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
 * Could a trigger be the feed (the file header)?  Named bloomguard, or
 * running the feed function.
 */
static bool
bg_feed_candidate(const char *tgname, Oid tgfoid)
{
	TransactionId version;

	return strcmp(tgname, BLOOMGUARD_TRIGGER_NAME) == 0 ||
		bg_is_feed_function(tgfoid, &version);
}

/*
 * Of the candidates seen so far (*have of them) and one more judged
 * state, is the new one the feed (the file header)?
 */
static bool
bg_feed_prefer(bool have, BgFeedState best, BgFeedState state)
{
	return !have || (best != BG_FEED_IN_PLACE && state == BG_FEED_IN_PLACE);
}

/*
 * rel's trigger list, to scan while judging the triggers.  Judging one
 * may read pg_proc, which processes invalidations, which may rebuild
 * rel's relcache entry and its trigger list under the scan: unless the
 * feed function is known already (then no catalog is read), the scan
 * gets a copy, and *copied says so.
 */
static TriggerDesc *
bg_feed_triggers(Relation rel, bool *copied)
{
	*copied = rel->trigdesc != NULL && !OidIsValid(bg_feed_funcoid);
	return *copied ? CopyTriggerDesc(rel->trigdesc) : rel->trigdesc;
}

/*
 * Find rel's feed trigger in the relcache's trigger list (the file
 * header), a cheap scan done on every lookup.  Returns its state,
 * BG_FEED_MISSING if there is no candidate.  *feed_version is set to the
 * version of the feed function's catalog row when the answer is
 * BG_FEED_IN_PLACE, to InvalidTransactionId otherwise; *tgname (if not
 * NULL) to the trigger's name, or NULL.
 */
static BgFeedState
bg_feed_find(Relation rel, TransactionId *feed_version, const char **tgname)
{
	bool		copied;
	TriggerDesc *trigdesc = bg_feed_triggers(rel, &copied);
	BgFeedState best = BG_FEED_MISSING;
	bool		have = false;
	int			i;

	*feed_version = InvalidTransactionId;
	if (tgname)
		*tgname = NULL;
	for (i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		Trigger    *trig = &trigdesc->triggers[i];
		TransactionId version = InvalidTransactionId;
		BgFeedState state;

		if (!bg_feed_candidate(trig->tgname, trig->tgfoid))
			continue;
		state = bg_judge_trigger(trig->tgenabled, trig->tgtype, trig->tgnattr,
								 trig->tgqual != NULL, trig->tgconstraint,
								 trig->tgdeferrable, trig->tgfoid, &version);
		if (!bg_feed_prefer(have, best, state))
			continue;
		have = true;
		best = state;
		*feed_version = state == BG_FEED_IN_PLACE ? version : InvalidTransactionId;
		if (tgname)
			*tgname = pstrdup(trig->tgname);
	}
	if (copied)
		FreeTriggerDesc(trigdesc);
	return best;
}

/*
 * Is rel's feed trigger as attach made it?  *feed_version as for
 * bg_feed_find().
 */
BgFeedState
bg_feed_check(Relation rel, TransactionId *feed_version)
{
	return bg_feed_find(rel, feed_version, NULL);
}

/*
 * The name of rel's feed trigger, for messages and for the commands that
 * name it; "bloomguard", the name attach gives it, if there is none.
 */
const char *
bg_feed_trigger_name(Relation rel)
{
	TransactionId version;
	const char *name;

	(void) bg_feed_find(rel, &version, &name);
	return name ? name : pstrdup(BLOOMGUARD_TRIGGER_NAME);
}

/*
 * The names of all of rel's candidate triggers (the file header), which
 * detach drops: a copy that is not the feed would otherwise be left
 * behind, running the feed function for a table no longer guarded.
 */
List *
bg_feed_trigger_names(Relation rel)
{
	bool		copied;
	TriggerDesc *trigdesc = bg_feed_triggers(rel, &copied);
	List	   *result = NIL;
	int			i;

	for (i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
	{
		Trigger    *trig = &trigdesc->triggers[i];

		if (bg_feed_candidate(trig->tgname, trig->tgfoid))
			result = lappend(result, pstrdup(trig->tgname));
	}
	if (copied)
		FreeTriggerDesc(trigdesc);
	return result;
}

/* bg_feed_check() for a caller that needs only the verdict. */
BgFeedState
bg_feed_state(Relation rel)
{
	TransactionId version;

	return bg_feed_check(rel, &version);
}

/* Judge a pg_trigger row as bg_judge_trigger() does. */
static BgFeedState
bg_judge_tuple(HeapTuple tuple)
{
	Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);
	TransactionId version;

	return bg_judge_trigger(trig->tgenabled, trig->tgtype, trig->tgattr.dim1,
							!heap_attisnull(tuple, Anum_pg_trigger_tgqual, NULL),
							trig->tgconstraint, trig->tgdeferrable,
							trig->tgfoid, &version);
}

/*
 * bg_feed_state() for a table we do not open (the health view must not
 * wait for a table lock): read its feed trigger from pg_trigger.
 */
BgFeedState
bg_feed_state_by_oid(Oid relid)
{
	HeapTuple	tuple = bg_feed_trigger_tuple(relid);
	BgFeedState result = BG_FEED_MISSING;

	if (tuple)
	{
		result = bg_judge_tuple(tuple);
		heap_freetuple(tuple);
	}
	return result;
}

/*
 * The tables of this database that have a trigger running the feed
 * function, whatever its name, events or enabled state: the candidates
 * for orphan feeds (a schema copy carries the trigger without the
 * registry row).  A scan of pg_trigger, for the health view.
 */
List *
bg_feed_trigger_tables(void)
{
	List	   *result = NIL;
	Relation	rel = table_open(TriggerRelationId, AccessShareLock);
	SysScanDesc scan;
	HeapTuple	tuple;

	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);
		TransactionId version;

		if (bg_is_feed_function(trig->tgfoid, &version))
			result = list_append_unique_oid(result, trig->tgrelid);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * A copy of the pg_trigger row of trigoid, read under snapshot (NULL: a
 * catalog snapshot), or NULL if there is none.  rel is pg_trigger, open.
 */
static HeapTuple
bg_trigger_row(Relation rel, Oid trigoid, Snapshot snapshot)
{
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;

	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(trigoid));
	scan = systable_beginscan(rel, TriggerOidIndexId, true, snapshot, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		tuple = heap_copytuple(tuple);
	systable_endscan(scan);
	return tuple;
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
	HeapTuple	tuple;
	bool		result = false;

	rel = table_open(TriggerRelationId, AccessShareLock);
	tuple = bg_trigger_row(rel, trigoid, SnapshotSelf);
	if (tuple)
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);
		TransactionId version;

		*relid = trig->tgrelid;
		*clone = OidIsValid(trig->tgparentid);
		result = strcmp(NameStr(trig->tgname), BLOOMGUARD_TRIGGER_NAME) == 0 ||
			bg_is_feed_function(trig->tgfoid, &version);
		heap_freetuple(tuple);
	}
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * The table at the top of the chain of partitioned tables whose feed
 * trigger relid's feed trigger is a clone of (pg_trigger.tgparentid,
 * followed to a trigger that is no clone), or InvalidOid if relid's feed
 * trigger is its own or it has none.  PostgreSQL records the link
 * exactly, whatever state the triggers are in: a clone cannot be dropped
 * alone, so detach names the table whose trigger it is.
 */
Oid
bg_feed_clone_root(Oid relid)
{
	HeapTuple	tuple = bg_feed_trigger_tuple(relid);
	Oid			root = InvalidOid;
	Relation	rel;

	if (tuple == NULL)
		return InvalidOid;
	rel = table_open(TriggerRelationId, AccessShareLock);
	/* a partition tree is finite and acyclic; so is the chain of clones */
	while (OidIsValid(((Form_pg_trigger) GETSTRUCT(tuple))->tgparentid))
	{
		HeapTuple	parent = bg_trigger_row(rel,
											((Form_pg_trigger) GETSTRUCT(tuple))->tgparentid,
											NULL);

		heap_freetuple(tuple);
		if (parent == NULL)
		{
			tuple = NULL;
			break;
		}
		tuple = parent;
		root = ((Form_pg_trigger) GETSTRUCT(tuple))->tgrelid;
	}
	if (tuple)
		heap_freetuple(tuple);
	table_close(rel, AccessShareLock);
	return root;
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
 * A copy of the pg_trigger row of relid's feed trigger (the file header;
 * as the catalog snapshot sees it), or NULL if it has none.
 */
HeapTuple
bg_feed_trigger_tuple(Oid relid)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	HeapTuple	result = NULL;
	BgFeedState best = BG_FEED_MISSING;

	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	/* in name order, as the relcache lists them */
	scan = systable_beginscan(rel, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger trig = (Form_pg_trigger) GETSTRUCT(tuple);
		BgFeedState state;

		if (!bg_feed_candidate(NameStr(trig->tgname), trig->tgfoid))
			continue;
		state = bg_judge_tuple(tuple);
		if (!bg_feed_prefer(result != NULL, best, state))
			continue;
		if (result)
			heap_freetuple(result);
		result = heap_copytuple(tuple);
		best = state;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * A copy of the pg_trigger row of relid's trigger named bloomguard, the
 * name attach gives the feed and a partitioned table's clones carry, or
 * NULL if it has none (partition.c: names are what collide).
 */
HeapTuple
bg_named_trigger_tuple(Oid relid)
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
 * tuple, which every change of the trigger (ENABLE, DISABLE, RENAME, a
 * new trigger of the name) makes new; InvalidTransactionId without one.
 * Another trigger becoming the feed changes it too.
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
