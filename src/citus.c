/*-------------------------------------------------------------------------
 *
 * citus.c
 *	  Citus's distributed and reference tables, guarded through their
 *	  shards: attach and rebuild of the shell on the coordinator, and each
 *	  node's upkeep of the guards of the placements it holds.
 *
 * A distributed or reference table's rows are in its shards (tablekind.c):
 * ordinary tables on the nodes, which bloomguard guards like any other.
 * The shell itself is never guarded.  bloomguard_attach() of a shell
 * records the intent in a form that every node sees and that Citus itself
 * carries to every placement, now and later: the feed trigger on the
 * shell.
 *	- Attach (bg_citus_attach()) creates the feed trigger on the shell,
 *	  enabled ALWAYS, with citus.enable_unsafe_triggers on for those two
 *	  commands only.  Citus runs them, in the same distributed transaction,
 *	  on every shard placement (the copy is named bloomguard_<shardid>) and
 *	  on the shell of every node with metadata.
 *	- Citus creates every later placement (a move, a split, a copy or
 *	  replication, a new shard of a colocated table) with the shell's
 *	  triggers: once the placement is loaded it runs, for each of them,
 *	  the CREATE TRIGGER and the ALTER TABLE ... ENABLE ... TRIGGER that
 *	  give its state (GetExplicitTriggerCommandList() in Citus's
 *	  commands/trigger.c).  citus.enable_unsafe_triggers matters only to
 *	  CREATE and DROP TRIGGER on a shell and to create_distributed_table()
 *	  of a table with triggers; Citus's own copies do not need it.
 *	- Each node's maintenance pass (bg_citus_upkeep(), from maintain.c)
 *	  registers the placements on that node whose feed trigger is in place
 *	  (feedcheck.c knows it by its function, whatever Citus named it) and
 *	  that have no registry row, and the same pass then builds them as it
 *	  builds any guard that is not loaded.  The launcher visits such a
 *	  database at every pass (bg_visit_always()) from the first time a
 *	  feed trigger is created there, or a pass finds Citus there: Citus
 *	  commits its placements' triggers with COMMIT PREPARED, in a session
 *	  of its own, so no backend of ours can ask for a visit once they are
 *	  committed.
 *
 * Why a placement registered so is sound.  It is trusted only once its
 * own filter is built (trust.c), and that build is the rebuild's
 * (build.c): its scan starts after the feed trigger is committed on the
 * placement, so it takes every row that Citus's initial COPY and its
 * logical replication catch-up brought in before the trigger existed,
 * and the trigger feeds every key written after (enabled ALWAYS, it fires
 * in the apply workers of Citus's subscriptions too, which run in replica
 * role).  Nothing here depends on how the rows got there.  Until it is
 * built, the placement fails open (not registered, or not loaded: every
 * lookup is the index's), and the health view of its node says so.
 *
 * Rebuild.  bloomguard_rebuild() of the shell rebuilds every placement's
 * guard on its node, through Citus's run_command_on_placements(): not one
 * transaction, so it reports the placements that failed (one not yet
 * registered, say) and leaves the others rebuilt.
 *
 * Undoing.  bloomguard_detach() of the shell drops its trigger, and Citus
 * drops the copies on every placement in the same distributed
 * transaction: from then on no placement's feed is in place, so none is
 * trusted, and the next pass on each node removes the registry rows of
 * its placements that have no feed left while the shell has none either
 * (a shard attached directly keeps its own trigger, named bloomguard, and
 * its guard).  A placement that Citus drops (after a move or split, once
 * its deferred cleanup runs) frees its guard at the drop, as any table
 * does (ddlwatch.c).  A shell that has a registry row (a table guarded
 * before create_distributed_table() made it a shell) loses the row at the
 * next pass: its trigger, which Citus copied to the new shards, stays as
 * the intent.
 *
 * What is recognised.  The placements are read through SQL from Citus's
 * catalogs pg_dist_shard, pg_dist_placement and pg_dist_local_group and
 * its function shard_name() (so a node without Citus's metadata, which
 * has not synced it, guards no placement), on a node where
 * tablekind.c finds Citus's catalog of the shape it knows; a placement is
 * a local table whose name shard_name() gives, of a shell that tablekind.c
 * calls a distributed or reference table.  Anything else, a citus-local
 * table included, is left as it is: a citus-local table's one shard is
 * the original table, which keeps its own guard (Citus renames its
 * trigger, which feedcheck.c still recognises; the rename makes the
 * filter untrusted until the maintenance pass rebuilds it).  If the query
 * fails (a Citus of another shape), the pass logs it and goes on with
 * the other guards.
 *
 * Locking.  The pass never waits for a lock: a placement it cannot lock
 * at once is left for the next pass.  Attach takes the locks CREATE
 * TRIGGER takes (ShareRowExclusiveLock on the shell, and, through Citus,
 * on each shard for the moment its trigger is created).
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type_d.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"

/* A placement on this node, and its shell. */
typedef struct BgPlacement
{
	Oid			shell;
	Oid			shard;
} BgPlacement;

/*
 * bloomguard_attach() of a Citus distributed or reference table (the file
 * header): create the feed trigger on the shell, for Citus to copy to
 * every placement.  rel is open; the caller has checked its owner.
 */
void
bg_citus_attach(Relation rel, bool sized)
{
	const char *name = RelationGetRelationName(rel);
	Oid			relid = RelationGetRelid(rel);
	Oid			owner = rel->rd_rel->relowner;
	int			gucnest;

	if (sized)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot choose the capacity or error rate of the guards of Citus table \"%s\"",
						name),
				 errdetail("Each shard's guard is sized from that shard's rows, at bloomguard.default_error_rate."),
				 errhint("Attach without them; resize a shard's guard with bloomguard_rebuild() on the node that holds it.")));
	if (bg_feed_state(rel) != BG_FEED_MISSING)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("Citus table \"%s\" already has a trigger named \"%s\"",
						name, bg_feed_trigger_name(rel)),
				 errhint("If its shards are guarded, bloomguard_health on each node lists them; bloomguard_detach() removes the trigger.")));
	/* the key must be one bloomguard can hash: the shards have the shell's */
	(void) bg_keydesc_build(rel, false, true);

	relation_close(rel, NoLock);	/* ALTER TABLE checks that it is unused */
	LockRelationOid(relid, ShareRowExclusiveLock);
	gucnest = NewGUCNestLevel();
	(void) set_config_option("citus.enable_unsafe_triggers", "on",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	bg_feed_trigger_create(relid, owner);
	AtEOXact_GUC(true, gucnest);

	ereport(NOTICE,
			(errmsg("the shards of Citus table \"%s\" will be guarded by the node that holds each of them",
					get_rel_name(relid)),
			 errdetail("Citus copies the trigger to every placement; each node's background worker registers and builds the guards of its placements at its next maintenance pass."),
			 errhint("bloomguard_health on each node shows them; until a placement's guard is ready, its lookups use the index.")));
}

/*
 * bloomguard_rebuild() of a guarded Citus distributed or reference table:
 * rebuild the guard of every placement, on its node, through Citus's
 * run_command_on_placements() (a connection per placement, each its own
 * transaction: the placements that succeed stay rebuilt if another
 * fails).  Errors out listing the placements that failed.  rel is open;
 * the caller has checked its owner.
 */
void
bg_citus_rebuild(Relation rel, bool sized)
{
	const char *name = RelationGetRelationName(rel);
	Oid			argtypes[1] = {REGCLASSOID};
	Datum		values[1];
	StringInfoData failures;
	uint64		nfailed = 0;
	uint64		nplacements;
	uint64		i;

	if (sized)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot choose the capacity or error rate of the guards of Citus table \"%s\"",
						name),
				 errdetail("Each shard's guard is sized from that shard's rows."),
				 errhint("Rebuild without them; resize a shard's guard with bloomguard_rebuild() on the node that holds it.")));
	if (bg_feed_state(rel) != BG_FEED_IN_PLACE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("Citus table \"%s\" is not guarded", name),
				 errhint("Guard its shards with bloomguard_attach(%s).",
						 quote_literal_cstr(quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)), name)))));
	/* its connections would wait, unseen, for this transaction's locks */
	PreventInTransactionBlock(true, "bloomguard_rebuild() of a Citus table");

	values[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	initStringInfo(&failures);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args(psprintf("SELECT nodename, nodeport, shardid, success, result"
									   " FROM pg_catalog.run_command_on_placements($1,"
									   " 'SELECT %s.bloomguard_rebuild(%%L)', false)",
									   quote_identifier(get_namespace_name(bg_extension_schema()))),
							  1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run the rebuild on the placements of \"%s\"", name);
	nplacements = SPI_processed;
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		Datum		success = SPI_getbinval(tup, desc, 4, &isnull);

		if (!isnull && DatumGetBool(success))
			continue;
		if (nfailed++ < 5)
			appendStringInfo(&failures, "%sshard %s on %s:%s: %s",
							 nfailed > 1 ? "; " : "",
							 SPI_getvalue(tup, desc, 3), SPI_getvalue(tup, desc, 1),
							 SPI_getvalue(tup, desc, 2), SPI_getvalue(tup, desc, 5));
	}
	SPI_finish();
	if (nfailed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg_plural("could not rebuild the guard of %llu of the %llu placements of Citus table \"%s\"",
							   "could not rebuild the guards of %llu of the %llu placements of Citus table \"%s\"",
							   (unsigned long) nfailed,
							   (unsigned long long) nfailed, (unsigned long long) nplacements, name),
				 errdetail_internal("%s%s", failures.data, nfailed > 5 ? "; ..." : ""),
				 errhint("The other placements were rebuilt. A placement that is not guarded yet is registered at its node's next maintenance pass; try again then.")));
}

/*
 * The shell of which relid is a placement on this node, or InvalidOid if
 * it is none (or Citus is not installed here).  For detach, which must
 * not take from one placement the trigger that Citus copied to all of
 * them (a later detach of the shell would fail on that node).
 */
Oid
bg_citus_shell_of(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1];
	Oid			shell = InvalidOid;

	if (!bg_citus_present())
		return InvalidOid;
	values[0] = ObjectIdGetDatum(relid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT s.logicalrelid::pg_catalog.oid FROM pg_catalog.pg_dist_shard s"
							  " WHERE pg_catalog.to_regclass(pg_catalog.shard_name(s.logicalrelid, s.shardid))::pg_catalog.oid"
							  " OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_shard");
	if (SPI_processed > 0)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			shell = DatumGetObjectId(d);
	}
	SPI_finish();
	return shell;
}

/*
 * The Citus shell whose feed trigger shell's feed trigger is a clone of,
 * or InvalidOid if shell is no partition of a guarded shell.  An attach
 * of a partitioned distributed table puts its trigger on the partitioned
 * shell, and PostgreSQL clones it onto every partition (and Citus onto
 * their shards): that clone cannot be dropped on its own, so detach names
 * the table whose guard it is.  The link is the clone's (feedcheck.c), so
 * it holds whatever the state of the shell's trigger: disabled, it is
 * still the one to detach.
 */
Oid
bg_citus_guarded_root(Oid shell)
{
	Oid			root;

	if (!OidIsValid(shell) || !get_rel_relispartition(shell))
		return InvalidOid;
	root = bg_feed_clone_root(shell);
	if (!OidIsValid(root) ||
		!bg_citus_guards_through_shards(bg_table_kind_by_oid(root)))
		return InvalidOid;
	return root;
}

/* One step of the upkeep, run by bg_citus_try(). */
typedef void (*BgCitusStep) (void *arg);

/*
 * Step: *(List **) arg = this node's placements of distributed and
 * reference tables: the active placements (shardstate 1) that
 * pg_dist_placement gives this node's group, whose table exists here.
 * Not a move's or split's target before Citus completes the operation:
 * Citus adds its placement row at the end, so the build never holds a
 * lock that the operation's last steps need.
 */
static void
bg_citus_read_placements(void *arg)
{
	List	  **result = (List **) arg;
	MemoryContext outer = CurrentMemoryContext;
	uint64		i;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT s.logicalrelid::pg_catalog.oid,"
					" pg_catalog.to_regclass(pg_catalog.shard_name(s.logicalrelid, s.shardid))::pg_catalog.oid"
					" FROM pg_catalog.pg_dist_shard s"
					" JOIN pg_catalog.pg_dist_placement p ON p.shardid OPERATOR(pg_catalog.=) s.shardid"
					" WHERE p.groupid OPERATOR(pg_catalog.=) (SELECT groupid FROM pg_catalog.pg_dist_local_group)"
					" AND p.shardstate OPERATOR(pg_catalog.=) 1"
					" AND pg_catalog.to_regclass(pg_catalog.shard_name(s.logicalrelid, s.shardid)) IS NOT NULL",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_shard");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		MemoryContext oldcxt = MemoryContextSwitchTo(outer);
		BgPlacement *p = palloc(sizeof(BgPlacement));

		p->shell = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
												  SPI_tuptable->tupdesc, 1, &isnull));
		p->shard = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
												  SPI_tuptable->tupdesc, 2, &isnull));
		*result = lappend(*result, p);
		MemoryContextSwitchTo(oldcxt);
	}
	SPI_finish();
}

/* Step: remove the shells' own registry rows (the file header). */
static void
bg_citus_unregister_shells(void *arg)
{
	ListCell   *lc;

	foreach(lc, bg_registry_list())
	{
		BgRegistryEntry *e = lfirst(lc);

		if (bg_citus_guards_through_shards(bg_table_kind_by_oid(e->relid)))
		{
			bg_registry_delete(&e->relid, 1);
			bg_forget_at_commit(e->relid);
		}
	}
}

/*
 * Register one placement whose feed is in place (the file header), unless
 * it cannot be locked at once; its guard is then built by this pass as
 * one that is not loaded.  Throws if it cannot be guarded.
 */
static void
bg_citus_register(Oid shard)
{
	Relation	rel;

	if (!ConditionalLockRelationOid(shard, AccessShareLock))
		return;
	rel = try_relation_open(shard, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(shard, AccessShareLock);
		return;
	}
	/* as it was judged before the lock */
	if (bg_feed_state(rel) != BG_FEED_IN_PLACE)
	{
		relation_close(rel, AccessShareLock);
		return;
	}
	bg_check_guardable(rel);
	(void) bg_keydesc_build(rel, false, true);
	bg_registry_insert(shard,
					   bg_choose_capacity(bg_estimate_rows(rel), 0, false, 0),
					   bg_error_rate_default());
	relation_close(rel, NoLock);
}

/*
 * Step: the upkeep of one placement (a BgPlacement): register it, or
 * unregister it, as the file header says.
 */
static void
bg_citus_upkeep_one(void *arg)
{
	const BgPlacement *p = arg;
	bool		shell_fed;
	bool		registered;
	BgFeedState feed;

	if (!bg_citus_guards_through_shards(bg_table_kind_by_oid(p->shell)) ||
		bg_table_kind_by_oid(p->shard) != BG_TABLE_OWN_ROWS)
		return;
	shell_fed = bg_feed_state_by_oid(p->shell) == BG_FEED_IN_PLACE;
	registered = bg_registry_lookup(p->shard, NULL, NULL);
	feed = bg_feed_state_by_oid(p->shard);
	if (shell_fed && !registered && feed == BG_FEED_IN_PLACE)
		bg_citus_register(p->shard);
	else if (!shell_fed && registered && feed == BG_FEED_MISSING)
	{
		bg_registry_delete(&p->shard, 1);
		bg_forget_at_commit(p->shard);
	}
}

/*
 * Run one step of the upkeep in a subtransaction: a step that fails is
 * rolled back and logged, and the pass goes on.  A cancel is not a
 * failure of the step: it is thrown again once the step is rolled back.
 * Each pass is a process of its own, so a step that fails on every pass
 * is logged on every pass.
 */
static void
bg_citus_try(BgCitusStep step, void *arg, Oid table)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	char	   *name = OidIsValid(table) ? get_rel_name(table) : NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		step(arg);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			ReThrowError(edata);
		if (name)
			ereport(LOG,
					(errmsg("bloomguard: could not keep the guard of Citus shard \"%s\"", name),
					 errdetail_internal("%s", edata->message)));
		else
			ereport(LOG,
					(errmsg("bloomguard: could not read this node's Citus shards"),
					 errdetail_internal("%s", edata->message)));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
}

/*
 * The maintenance pass's Citus step (the file header), in the pass's
 * transaction, before it reads the registry (with a new snapshot, so that
 * it builds the placements registered here).  Registers only on a
 * primary.  Never throws for one table.
 */
void
bg_citus_upkeep(void)
{
	List	   *placements = NIL;
	ListCell   *lc;

	if (!bg_citus_present())
	{
		bg_visit_always(MyDatabaseId, false);
		return;
	}
	/* every pass from now on: Citus makes placements on its own */
	bg_visit_always(MyDatabaseId, true);
	if (RecoveryInProgress())
		return;
	bg_citus_try(bg_citus_unregister_shells, NULL, InvalidOid);
	bg_citus_try(bg_citus_read_placements, &placements, InvalidOid);
	foreach(lc, placements)
	{
		BgPlacement *p = lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		bg_citus_try(bg_citus_upkeep_one, p, p->shard);
	}
}
