/*-------------------------------------------------------------------------
 *
 * attach.c
 *	  bloomguard_attach(), bloomguard_detach(), bloomguard_rebuild().
 *
 * Attaching a guard has to create the trigger and commit it before the
 * key scan starts: CREATE TRIGGER holds a ShareRowExclusiveLock, which
 * blocks writers, until its transaction ends, and the scan must not run
 * under it.  A SQL function cannot commit, so bloomguard_attach() has a
 * short-lived background worker (worker.c) do that first transaction, and
 * waits for it in a way the deadlock detector can see:
 *
 *	caller:  validate; wait for the table's current writers without
 *	         blocking new ones (WaitForLockers); claim the guard's slot
 *	         (state "building"); release its own lock on the table, since
 *	         its wait for the worker is invisible to the deadlock detector
 *	worker:  wait again for writers that started meanwhile; CREATE
 *	         TRIGGER; ALTER TABLE ... ENABLE
 *	         ALWAYS TRIGGER; register the guard; COMMIT
 *	caller:  take ShareUpdateExclusiveLock; build (build.c); ready
 *
 * Writers are blocked only while the worker holds its lock, which it
 * requests after the writers that were running have finished.  Every
 * writer that gets its lock after the worker's commit fires the trigger;
 * the ones before it have finished, so their rows are in the heap for the
 * scan.  If the build fails after the worker committed (a cancel, a
 * timeout), the guard stays registered in state "not_loaded": it answers
 * by plain lookups until bloomguard_rebuild() builds it.
 *
 * That needs a caller whose transaction has done nothing the worker would
 * have to see or wait for.  Otherwise (inside a transaction block, a
 * savepoint or a PL/pgSQL exception block, in a pipeline, after the
 * transaction has written anything, or holding a lock on the table that
 * writers conflict with: an event trigger on the CREATE TABLE that made
 * the table, say) attach runs in the caller's transaction, as CREATE
 * INDEX does: it takes ShareRowExclusiveLock on the table (its partitions
 * too), which waits for the writers and keeps new ones out until the
 * transaction ends, registers the guard, creates the trigger (worker.c's
 * bg_create_feed()), and builds.  No writer can come between the trigger
 * and the scan but this transaction's own later statements, which fire the
 * trigger; its earlier rows are in the heap for the scan.  Other sessions
 * see neither the trigger nor the registry row until the commit, so they
 * do not trust the filter before it (the feed check fails).  The filter
 * lives in shared memory, which a rollback does not undo: its slot is
 * claimed for the transaction, and freed if the (sub)transaction that
 * claimed it aborts (pending.c's CLAIM); the worker's orphan sweep leaves
 * it alone meanwhile (maintain.c), and PREPARE TRANSACTION is refused.  A
 * failure undoes the whole attach.  A statement still running that uses
 * the table (attach called from its trigger or its target list) is
 * refused: its rows would not all fire the new trigger.
 *
 * Rebuild needs no second transaction: the trigger is already there.  It
 * runs in the caller's transaction, even inside a transaction block;
 * rebuild.c has its policy, which the background worker shares.
 *
 * Why this is one file of some 730 lines: attach has three ways (the
 * concurrent one, the one in the caller's transaction, and a partitioned
 * tree's, which is either), and they share the checks of the table and of
 * its trigger and the order of the steps above; detach and rebuild share
 * those checks.  Split, the protocol this header states would be in two
 * files.
 *
 * Attach and rebuild reserve shared memory, a cluster-wide resource, so
 * EXECUTE on them is not granted to PUBLIC: the DBA decides who may.
 * Every function also checks ownership of the table itself.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_inherits.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_attach);
PG_FUNCTION_INFO_V1(bloomguard_detach);
PG_FUNCTION_INFO_V1(bloomguard_rebuild);

/*
 * The slot an attach in this backend has claimed but not yet registered:
 * released if the backend exits before the feed worker has committed.
 */
static Oid	bg_attach_pending_relid = InvalidOid;
static bool bg_attach_callback_registered = false;

/* Exit callback: release a slot claimed by an unfinished attach. */
static void
bg_attach_exit_callback(int code, Datum arg)
{
	if (OidIsValid(bg_attach_pending_relid))
	{
		LWLockReleaseAll();
		bg_slot_release(MyDatabaseId, bg_attach_pending_relid);
		bg_attach_pending_relid = InvalidOid;
	}
}

/* The qualified name of rel, quoted for SQL. */
static const char *
bg_qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
}

/* Error out if the relation argument is NULL. */
static void
bg_require_relation_arg(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
}

/*
 * May attach run concurrently, in the two transactions of the file header?
 * Only if the caller's transaction has done nothing the feed worker would
 * have to see or wait for (else attach runs in the caller's transaction):
 * outside a transaction block, a subtransaction and a pipeline, with no
 * transaction id yet (nothing written), and without a lock on rel that
 * writers conflict with.
 */
static bool
bg_attach_concurrently(Relation rel)
{
	return !IsTransactionBlock() && !IsSubTransaction() &&
		(MyXactFlags & XACT_FLAGS_PIPELINING) == 0 &&
		!TransactionIdIsValid(GetTopTransactionIdIfAny()) &&
		!CheckRelationLockedByMe(rel, RowExclusiveLock, true);
}

/*
 * Error out if a statement still running uses rel, which the caller has
 * open once (as ALTER TABLE checks, CheckTableNotInUse()): attach called
 * from a trigger or a function of a statement that writes it, whose rows
 * would not all fire the new trigger, or rel has AFTER trigger events
 * still to fire.
 */
static void
bg_attach_check_unused(Relation rel)
{
	if (rel->rd_refcnt != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot attach a guard to table \"%s\" because it is being used by active queries in this session",
						RelationGetRelationName(rel))));
	if (AfterTriggerPendingOnRel(RelationGetRelid(rel)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot attach a guard to table \"%s\" because it has pending trigger events",
						RelationGetRelationName(rel))));
}

/*
 * The leaves of a partitioned table about to be guarded, each checked as a
 * table that attach could guard on its own; fills rows[] (palloc'd) with
 * their estimated rows.  The whole tree must be free of guards and of
 * triggers by our name: the clones would collide.  The tree is locked in
 * AccessShareLock or, for an attach in the caller's transaction
 * (concurrent false), ShareRowExclusiveLock.
 */
static List *
bg_attach_check_leaves(Relation parent, bool concurrent, double **rows, double *total)
{
	List	   *tree = find_all_inheritors(RelationGetRelid(parent),
										   concurrent ? AccessShareLock : ShareRowExclusiveLock,
										   NULL);
	List	   *leaves = NIL;
	ListCell   *lc;

	*total = 0;
	*rows = palloc0(Max(list_length(tree), 1) * sizeof(double));
	foreach(lc, tree)
	{
		Relation	part = relation_open(lfirst_oid(lc), NoLock);

		if (part != parent &&
			(bg_registry_lookup(RelationGetRelid(part), NULL, NULL) ||
			 bg_feed_state(part) != BG_FEED_MISSING))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("partition \"%s\" of table \"%s\" is already guarded or has a trigger named \"%s\"",
							RelationGetRelationName(part), RelationGetRelationName(parent),
							bg_feed_trigger_name(part)),
					 errhint("Detach its guard with bloomguard_detach(), or drop that trigger, first.")));
		if (part->rd_rel->relkind == RELKIND_RELATION)
		{
			bg_check_guardable(part);
			(void) bg_keydesc_build(part, false, true);
			if (!concurrent)
				bg_attach_check_unused(part);
			else if (CheckRelationLockedByMe(part, RowExclusiveLock, true))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_IN_USE),
						 errmsg("cannot attach a guard to table \"%s\" in a statement that writes it",
								RelationGetRelationName(part))));
			(*rows)[list_length(leaves)] = bg_estimate_rows(part);
			*total += (*rows)[list_length(leaves)];
			leaves = lappend_oid(leaves, RelationGetRelid(part));
		}
		relation_close(part, NoLock);
	}
	list_free(tree);
	return leaves;
}

/*
 * bloomguard_attach() of a partitioned table (partition.c has the model):
 * the feed worker creates the trigger on it, which PostgreSQL clones onto
 * every partition, and registers it and, through the clones, every leaf;
 * then each leaf is built as bloomguard_rebuild() builds a guard whose
 * trigger is in place.  capacity (0: each leaf's own choice) is split
 * between the leaves by their rows.  The filters are allocated after the
 * commit, not before as for a table, so the memory caps are checked first
 * for all of them together; a leaf whose build fails stays not_loaded
 * (and is retried by the worker), like a table whose attach is cancelled.
 *
 * Not concurrent (the file header), the same is done in the caller's
 * transaction, with the whole tree locked: the leaves' slots are claimed
 * for it first, and the leaves registered at once rather than at commit.
 */
static void
bg_attach_partitioned(Relation rel, int64 capacity, double error_rate,
					  bool concurrent)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			owner = rel->rd_rel->relowner;
	double	   *rows;
	double		total;
	List	   *leaves = bg_attach_check_leaves(rel, concurrent, &rows, &total);
	int64	   *shares = palloc(Max(list_length(leaves), 1) * sizeof(int64));
	int64		sum = 0;
	Size		need = 0;
	bool		fits = true;
	volatile bool committed = false;
	ListCell   *lc;
	int			i;

	foreach(lc, leaves)
	{
		uint64		nbits;
		int			nhashes;
		Size		bytes;

		i = foreach_current_index(lc);
		shares[i] = capacity > 0 ?
			bg_partition_share(capacity, rows[i], total, list_length(leaves)) :
			bg_choose_capacity(rows[i], 0, false, 0);
		bg_filter_size(shares[i], error_rate, &nbits, &nhashes, &bytes);
		fits &= bg_memory_fits(bytes);	/* each under max_guard_memory */
		need += bytes;
		sum += shares[i];
	}
	if (!fits || need > bg_memory_cap() - Min(bg_memory_in_use(), bg_memory_cap()))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("the filters of the %d partitions of table \"%s\" do not fit in the memory bloomguard may use",
						list_length(leaves), RelationGetRelationName(rel)),
				 errhint("Raise bloomguard.max_memory (and bloomguard.max_guard_memory), or attach with a smaller capacity or a larger error_rate.")));

	if (concurrent)
	{
		bg_wait_for_writers(relid);
		/* hold nothing while the worker runs (see the file header) */
		foreach(lc, leaves)
			UnlockRelationOid(lfirst_oid(lc), AccessShareLock);
		relation_close(rel, AccessShareLock);
		bg_install_feed(relid, capacity > 0 ? capacity : Max(sum, 1), error_rate, &committed);
	}
	else
	{
		foreach(lc, leaves)
		{
			Relation	leaf = relation_open(lfirst_oid(lc), NoLock);
			BgKeyIdentity key;

			bg_keydesc_identity(bg_keydesc_build(leaf, false, true), &key);
			relation_close(leaf, NoLock);
			(void) bg_claim_in_transaction(lfirst_oid(lc), &key, BG_STATE_NOT_LOADED);
		}
		/* ALTER TABLE checks that nobody has the table open */
		relation_close(rel, NoLock);
		bg_create_feed(relid, owner, capacity > 0 ? capacity : Max(sum, 1), error_rate);
		CommandCounterIncrement();
		foreach(lc, leaves)
			bg_partition_register(lfirst_oid(lc));
	}

	/* the tree is guarded; build every leaf, including any made meanwhile */
	foreach(lc, bg_partition_leaves(relid, NoLock))
	{
		Oid			leafid = lfirst_oid(lc);
		int64		share = 0;	/* a leaf made meanwhile: its own choice */
		Relation	leaf = try_relation_open(leafid, AccessShareLock);
		ListCell   *k;

		if (leaf == NULL)
			continue;			/* dropped meanwhile */
		foreach(k, leaves)
		{
			if (lfirst_oid(k) == leafid)
				share = shares[foreach_current_index(k)];
		}
		(void) bg_rebuild(leaf, share, error_rate, false);
		relation_close(leaf, NoLock);
	}
}

/*
 * Adopt a feed trigger that came without its registry row (a schema-only
 * dump restored, pglogical's structure synchronization): the trigger is
 * exactly the one attach creates and enabled ALWAYS, and it has been
 * feeding since it was created (committed), so the table needs only its
 * registry row and a build, which is a rebuild's: the scan takes the
 * rows already there, the trigger every key written meanwhile.
 */
static void
bg_attach_adopt(Relation rel, int64 capacity, double error_rate)
{
	bg_registry_insert(RelationGetRelid(rel), capacity, error_rate);
	CommandCounterIncrement();
	ereport(NOTICE,
			(errmsg("adopting the existing trigger \"%s\" of table \"%s\"",
					bg_feed_trigger_name(rel), RelationGetRelationName(rel))));
	(void) bg_rebuild(rel, capacity, error_rate, false);
}

/*
 * bloomguard_attach() of a table in the caller's transaction (the file
 * header), which holds ShareRowExclusiveLock on it and has checked it:
 * claim the slot for the transaction, allocate and publish the filter,
 * register the guard and create the trigger, scan.  A failure is undone
 * with the transaction.  Closes rel (keeping the locks).
 */
static void
bg_attach_in_transaction(Relation rel, BgKeyDesc *desc, int64 capacity,
						 double error_rate)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			owner = rel->rd_rel->relowner;
	BgKeyIdentity key;
	int			slotindex;
	BgBuildState bs;

	bg_keydesc_identity(desc, &key);
	slotindex = bg_claim_in_transaction(relid, &key, BG_STATE_BUILDING);
	bg_build_begin(rel, desc, slotindex, (uint64) capacity, error_rate, &bs);
	PG_TRY();
	{
		/* ALTER TABLE checks that nobody has the table open */
		relation_close(rel, NoLock);
		bg_create_feed(relid, owner, capacity, error_rate);
		CommandCounterIncrement();
		rel = relation_open(relid, NoLock);
		desc = bg_keydesc_build(rel, false, true);
		if (bg_feed_state(rel) != BG_FEED_IN_PLACE)
			elog(ERROR, "the bloomguard trigger of relation %u is not in place after its creation",
				 relid);
		bg_build_finish(rel, desc, &bs);
	}
	PG_CATCH();
	{
		bg_build_abandon(&bs, "the attach failed");
		PG_RE_THROW();
	}
	PG_END_TRY();
	relation_close(rel, NoLock);
}

/*
 * bloomguard_attach(rel regclass, capacity bigint, error_rate float8)
 */
Datum
bloomguard_attach(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Relation	rel;
	BgKeyDesc  *desc;
	BgKeyIdentity key;
	int64		capacity;
	double		error_rate;
	int			slotindex;
	volatile bool committed = false;
	BgBuildState bs;
	bool		concurrent;

	bg_require_loaded();
	bg_require_relation_arg(fcinfo);
	relid = PG_GETARG_OID(0);
	bg_check_not_in_recovery();

	rel = relation_open(relid, AccessShareLock);
	bg_check_owner(rel);
	if (bg_citus_guards_through_shards(bg_table_kind(rel)))
	{
		/* guarded through its shards (citus.c); closes rel */
		bg_citus_attach(rel, !PG_ARGISNULL(1) || !PG_ARGISNULL(2));
		PG_RETURN_VOID();
	}
	concurrent = bg_attach_concurrently(rel);
	if (!concurrent)
	{
		/* as CREATE INDEX: writers wait for this transaction to end */
		LockRelationOid(relid, ShareRowExclusiveLock);
		bg_attach_check_unused(rel);
	}
	bg_check_guardable(rel);
	desc = bg_keydesc_build(rel, false, true);
	capacity = PG_ARGISNULL(1) ?
		bg_choose_capacity(bg_estimate_rows(rel), 0, false, 0) : PG_GETARG_INT64(1);
	error_rate = PG_ARGISNULL(2) ? bg_error_rate_default() : PG_GETARG_FLOAT8(2);
	bg_check_capacity(capacity);
	bg_check_error_rate(error_rate);

	if (bg_registry_lookup(relid, NULL, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" is already guarded", RelationGetRelationName(rel)),
				 errhint("Use bloomguard_rebuild() to rebuild or resize its filter.")));
	if (bg_feed_state(rel) == BG_FEED_IN_PLACE &&
		rel->rd_rel->relkind == RELKIND_RELATION)
	{
		bg_attach_adopt(rel, capacity, error_rate);
		relation_close(rel, NoLock);
		PG_RETURN_VOID();
	}
	if (bg_feed_state(rel) != BG_FEED_MISSING)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" already has a trigger named \"%s\"",
						RelationGetRelationName(rel), bg_feed_trigger_name(rel)),
				 bg_feed_state(rel) == BG_FEED_NOT_ALWAYS ?
				 errhint("If it is a copy of bloomguard's trigger, enable it with ALTER TABLE %s ENABLE ALWAYS TRIGGER %s and attach again, which adopts it; or remove it with bloomguard_detach().",
						 bg_qualified_name(rel),
						 quote_identifier(bg_feed_trigger_name(rel))) :
				 errhint("Rename or drop that trigger first.")));
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
	{
		bg_attach_partitioned(rel, PG_ARGISNULL(1) ? 0 : capacity, error_rate,
							  concurrent);
		PG_RETURN_VOID();
	}
	if (!concurrent)
	{
		bg_attach_in_transaction(rel, desc, capacity, error_rate);
		PG_RETURN_VOID();
	}

	/*
	 * Wait here for the transactions now writing the table; the worker
	 * waits again for any that started meanwhile.
	 */
	bg_wait_for_writers(relid);

	/*
	 * Claim the slot and allocate the filter before the trigger exists, so
	 * that the memory cap is checked before anything is committed and the
	 * trigger feeds the filter from its first row.
	 */
	bg_keydesc_identity(desc, &key);
	if (!bg_attach_callback_registered)
	{
		before_shmem_exit(bg_attach_exit_callback, (Datum) 0);
		bg_attach_callback_registered = true;
	}
	slotindex = bg_slot_claim(relid, &key, BG_STATE_BUILDING, InvalidTransactionId);
	bg_attach_pending_relid = relid;
	PG_TRY();
	{
		bg_build_begin(rel, desc, slotindex, (uint64) capacity, error_rate, &bs);

		/*
		 * Let go of our lock on the table while the worker runs: a writer
		 * queued behind the worker's ShareRowExclusiveLock must not wait
		 * for us too.  (Our wait for the worker is visible to the deadlock
		 * detector, but holding nothing keeps attach out of the cycles it
		 * would have to break.)
		 */
		relation_close(rel, AccessShareLock);
		rel = NULL;
		bg_install_feed(relid, capacity, error_rate, &committed);
	}
	PG_CATCH();
	{
		bg_attach_pending_relid = InvalidOid;
		if (!committed)
			bg_slot_release(MyDatabaseId, relid);
		else
			bg_build_abandon(&bs, "the attach was interrupted; the guard is registered but not built");
		PG_RE_THROW();
	}
	PG_END_TRY();
	bg_attach_pending_relid = InvalidOid;

	/* from here on the guard is registered; a failure leaves it not_loaded */
	PG_TRY();
	{
		/* serialize with rebuilds, and see the committed trigger */
		rel = relation_open(relid, ShareUpdateExclusiveLock);
		bg_check_guardable(rel);
		desc = bg_keydesc_build(rel, false, true);	/* it may have changed */
		if (bg_feed_state(rel) != BG_FEED_IN_PLACE)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" was changed during the attach",
							RelationGetRelationName(rel)),
					 errhint("Run bloomguard_detach() and then bloomguard_attach() again.")));
		bg_build_finish(rel, desc, &bs);
	}
	PG_CATCH();
	{
		bg_build_abandon(&bs, "the attach was interrupted; the guard is registered but not built");
		PG_RE_THROW();
	}
	PG_END_TRY();

	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}

/*
 * Remove the registry row of a table that no longer exists (a row left by
 * a version that unregistered drops through an event trigger, which
 * session_replication_role = replica skipped).  It names no table, so no
 * ownership can be checked, and removing it can harm no one.
 */
static void
bg_detach_orphan(Oid relid)
{
	if (!bg_registry_lookup(relid, NULL, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	bg_registry_delete(&relid, 1);
	bg_forget_at_commit(relid);
}

/*
 * bloomguard_detach(rel regclass): drop the trigger, unregister, and free
 * the filter when the transaction commits.
 */
Datum
bloomguard_detach(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;

	bg_require_loaded();
	bg_check_not_in_recovery();
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
	{
		bg_detach_orphan(relid);
		PG_RETURN_VOID();
	}
	bg_check_owner(rel);
	if (bg_table_kind(rel) == BG_TABLE_OWN_ROWS)
	{
		/* a placement keeps the trigger Citus copied to all (citus.c) */
		Oid			shell = bg_citus_shell_of(relid);
		/* a leaf shard's trigger is a clone of its partitioned shell's */
		Oid			root = bg_citus_guarded_root(shell);

		if (OidIsValid(root) ||
			(OidIsValid(shell) && bg_feed_state_by_oid(shell) == BG_FEED_IN_PLACE))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("shard \"%s\" is guarded as part of Citus table \"%s\"",
							RelationGetRelationName(rel),
							get_rel_name(OidIsValid(root) ? root : shell)),
					 errhint("Detach the guard of \"%s\" on the coordinator.",
							 get_rel_name(OidIsValid(root) ? root : shell))));
	}
	/*
	 * A leaf's guard is its tree's.  A partition of a guarded Citus shell
	 * holds a clone of the shell's trigger, which cannot be dropped alone.
	 */
	{
		bool		citus = bg_citus_guards_through_shards(bg_table_kind(rel));
		Oid			root = citus ? bg_citus_guarded_root(relid) :
			bg_partition_guarded_root(relid, NIL);

		if (OidIsValid(root))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 citus ?
					 errmsg("partition \"%s\" is guarded as part of Citus table \"%s\"",
							RelationGetRelationName(rel), get_rel_name(root)) :
					 errmsg("partition \"%s\" is guarded as part of table \"%s\"",
							RelationGetRelationName(rel), get_rel_name(root)),
					 errhint("Detach the guard of \"%s\", or detach the partition from it.",
							 get_rel_name(root))));
	}
	/* a Citus shell's trigger: its shards' guards go with it (citus.c) */
	if (bg_citus_guards_through_shards(bg_table_kind(rel)) &&
		bg_feed_state(rel) != BG_FEED_MISSING)
		ereport(NOTICE,
				(errmsg("dropping the trigger \"%s\" of Citus table \"%s\" and its copies on every shard",
						bg_feed_trigger_name(rel), RelationGetRelationName(rel)),
				 errdetail("The shards' guards stop answering at once; each node's background worker removes them at its next maintenance pass.")));
	/* an orphan feed trigger (a schema copy's) is removed as well */
	else if (!bg_registry_lookup(relid, NULL, NULL) &&
		(bg_feed_state(rel) == BG_FEED_IN_PLACE ||
		 bg_feed_state(rel) == BG_FEED_NOT_ALWAYS))
		ereport(NOTICE,
				(errmsg("table \"%s\" is not guarded; dropping its trigger \"%s\"",
						RelationGetRelationName(rel), bg_feed_trigger_name(rel))));
	else
		bg_require_guarded(rel, NULL, NULL);

	if (bg_feed_state(rel) != BG_FEED_MISSING)
	{
		int			gucnest = NewGUCNestLevel();
		Oid			outer;
		/* every candidate (feedcheck.c): a copy left would run on */
		List	   *names = bg_feed_trigger_names(rel);

		/*
		 * A trigger left on a Citus distributed or reference table (the
		 * health view's "unsupported"): Citus refuses DROP TRIGGER on one
		 * unless citus.enable_unsafe_triggers is on, and then drops the
		 * copies it made on the shards too.  On for this DROP only.
		 */
		if (bg_table_kind_citus(bg_table_kind(rel)))
			(void) set_config_option("citus.enable_unsafe_triggers", "on",
									 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
									 true, 0, false);

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		/* not a coverage break: the filter goes away with the trigger */
		outer = bg_own_trigger_begin(relid);
		PG_TRY();
		{
			ListCell   *lc;

			foreach(lc, names)
			{
				if (SPI_execute(psprintf("DROP TRIGGER %s ON %s",
										 quote_identifier(lfirst(lc)),
										 bg_qualified_name(rel)),
								false, 0) != SPI_OK_UTILITY)
					elog(ERROR, "could not drop the bloomguard trigger \"%s\"",
						 (char *) lfirst(lc));
			}
		}
		PG_FINALLY();
		{
			bg_own_trigger_end(outer);
		}
		PG_END_TRY();
		SPI_finish();
		AtEOXact_GUC(true, gucnest);
	}
	bg_registry_delete(&relid, 1);
	bg_forget_at_commit(relid);
	/* plans with the BloomGuard node are made again without it (planner.c) */
	CacheInvalidateRelcache(rel);
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
	{
		/* DROP TRIGGER dropped the clones too (and locked the partitions) */
		List	   *leaves = bg_partition_leaves(relid, NoLock);
		ListCell   *lc;

		foreach(lc, leaves)
		{
			Oid			leafid = lfirst_oid(lc);

			bg_registry_delete(&leafid, 1);
			bg_forget_at_commit(leafid);
		}
	}

	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}

/*
 * bloomguard_rebuild() of a guarded partitioned table: rebuild every leaf
 * (registering any the hook missed), with capacity (0: each keeps its own)
 * split by rows and error_rate (NaN: each keeps its own).
 */
static void
bg_rebuild_partitioned(Relation rel, int64 capacity, double error_rate)
{
	Oid			relid = RelationGetRelid(rel);
	int64		reg_capacity;
	double		reg_error_rate;
	List	   *leaves;
	double	   *rows;
	double		total = 0;
	ListCell   *lc;

	bg_require_guarded(rel, &reg_capacity, &reg_error_rate);
	leaves = bg_partition_leaves(relid, AccessShareLock);
	rows = palloc0(Max(list_length(leaves), 1) * sizeof(double));
	foreach(lc, leaves)
	{
		rows[foreach_current_index(lc)] = bg_live_rows(lfirst_oid(lc));
		total += rows[foreach_current_index(lc)];
		bg_partition_register(lfirst_oid(lc));
	}
	foreach(lc, leaves)
	{
		Relation	leaf = relation_open(lfirst_oid(lc), NoLock);

		(void) bg_rebuild(leaf, capacity > 0 ?
						  bg_partition_share(capacity, rows[foreach_current_index(lc)],
											 total, list_length(leaves)) : 0,
						  error_rate, false);
		relation_close(leaf, NoLock);
	}
	if ((capacity > 0 && capacity != reg_capacity) ||
		(!isnan(error_rate) && error_rate != reg_error_rate))
		bg_registry_update(relid, capacity > 0 ? capacity : reg_capacity,
						   isnan(error_rate) ? reg_error_rate : error_rate);
}

/*
 * bloomguard_rebuild(rel regclass, capacity bigint, error_rate float8)
 */
Datum
bloomguard_rebuild(PG_FUNCTION_ARGS)
{
	Relation	rel;
	int64		capacity = 0;
	double		error_rate = get_float8_nan();

	bg_require_loaded();
	bg_require_relation_arg(fcinfo);

	/* validate explicit arguments before anything else */
	if (!PG_ARGISNULL(1))
	{
		capacity = PG_GETARG_INT64(1);
		bg_check_capacity(capacity);
	}
	if (!PG_ARGISNULL(2))
	{
		error_rate = PG_GETARG_FLOAT8(2);
		bg_check_error_rate(error_rate);
	}

	rel = relation_open(PG_GETARG_OID(0), AccessShareLock);
	bg_check_owner(rel);
	if (bg_citus_guards_through_shards(bg_table_kind(rel)))
		bg_citus_rebuild(rel, !PG_ARGISNULL(1) || !PG_ARGISNULL(2));
	else if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		bg_rebuild_partitioned(rel, capacity, error_rate);
	else
		(void) bg_rebuild(rel, capacity, error_rate, false);
	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}
