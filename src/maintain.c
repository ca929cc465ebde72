/*-------------------------------------------------------------------------
 *
 * maintain.c
 *	  One maintenance pass over a database's guards, as the background
 *	  worker runs it (launcher.c starts it).
 *
 * A pass does three things, in one transaction and then one per guard:
 *
 *	- It keeps this database's part of the slot table in line with the
 *	  catalogs: it frees the slots of tables that are gone (a safety net:
 *	  drops free them at commit), all of them if the extension is gone,
 *	  and, on a standby, those the registry no longer lists (a detach on
 *	  the primary while it did not log keys sends no FORGET record); and
 *	  it claims a slot for every registered guard that has none, so that
 *	  the health view can say why one that cannot be built is not.
 *	- On a primary, it registers the leaf partitions of guarded
 *	  partitioned tables that have no registry row (partition.c's hook
 *	  registers them when they are made, but not while the library is not
 *	  loaded), and, where Citus is installed, keeps the guards of this
 *	  node's shard placements of guarded Citus tables (citus.c).
 *	- It reads the database's bloomguard_guards and, one guard at a time,
 *	  smallest table first (so the most guards are ready soonest),
 *	  rebuilds (rebuild.c) every guard that is not_loaded or untrusted,
 *	  and, while bloomguard.auto_rebuild is on, every guard whose load
 *	  exceeds 1.0, at the capacity sizing.c chooses, if that fits in the
 *	  memory caps (bg_capacity_fits()).  A build that a conflict with
 *	  recovery cancels is tried again at once, a few times; a standby that
 *	  cannot tell whether it receives every key builds nothing.
 *
 * It never waits for a lock, not even to read a table's size (it sorts by
 * pg_class.relpages): a table someone holds (LOCK TABLE, VACUUM FULL, a
 * rebuild) is skipped until the next pass, so no one table can hold up
 * the other guards, and a waiting worker could never close a deadlock
 * cycle with DDL.  What it cannot do it says in the health view's
 * last_error always, and in the log once per reason, not on every pass.
 *
 * Why this is one file of some 610 lines: the pass's steps share its
 * transaction, its never-wait rule and its error handling, and each is
 * short; the Citus step, which knows another extension's catalogs, is
 * citus.c.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bloomguard.h"

/* What the worker should do about one guard. */
typedef struct BgGuardTodo
{
	Oid			relid;
	bool		resize;			/* over capacity: rebuild at a chosen capacity */
	const char *why;
} BgGuardTodo;

/* bloomguard.auto_rebuild (bg_maintain_init() defines it) */
static bool bg_auto_rebuild = true;

/*
 * Decide whether a guard needs a build: not loaded, untrusted, or (with
 * auto_rebuild) over capacity.
 */
static bool
bg_needs_build(Oid relid, BgGuardTodo *todo)
{
	BgSlotCopy	copy;

	todo->relid = relid;
	todo->resize = false;
	if (!bg_slot_copy_rel(relid, &copy))
	{
		todo->why = "its filter is not loaded";
		return true;
	}
	switch (copy.state)
	{
		case BG_STATE_NOT_LOADED:
			todo->why = "its filter is not loaded";
			return true;
		case BG_STATE_UNTRUSTED:
			todo->why = "its coverage was broken";
			return true;
		case BG_STATE_READY:
			if (bg_auto_rebuild && copy.has_filter && !copy.building &&
				copy.n_added > copy.capacity)
			{
				todo->resize = true;
				todo->why = "it is over capacity";
				return true;
			}
			return false;
		default:
			return false;		/* building: someone is on it */
	}
}

/* This database's name, read while the pass had a transaction. */
static char bg_dbname[NAMEDATALEN];

/*
 * Say why a guard was not rebuilt: in the health view always, in the log
 * once per reason (at WARNING if it needs someone to act).  May run
 * outside a transaction.
 */
static void
bg_worker_note(Oid relid, const char *why, bool warning)
{
	bool		changed;

	bg_note_error(relid, why, &changed);
	ereport(changed ? (warning ? WARNING : LOG) : DEBUG1,
			(errmsg("bloomguard: not rebuilding the filter of relation %u in database \"%s\": %s",
					relid, bg_dbname, why)));
}

/*
 * The capacity for an automatic resize of a guard over capacity (the same
 * policy as a rebuild's, rebuild.c), or 0 if it would not fit in the memory
 * caps next to the serving generation (noted for the health view).
 */
static int64
bg_resize_capacity(Relation rel)
{
	BgSlotCopy	copy;
	int64		capacity = bg_rebuild_capacity(rel);

	if (capacity <= 0 || !bg_slot_copy_rel(RelationGetRelid(rel), &copy))
		return 0;
	if (bg_capacity_fits(capacity, copy.error_rate))
		return capacity;
	bg_worker_note(RelationGetRelid(rel),
				   psprintf("automatic resize to capacity " INT64_FORMAT " would exceed the memory caps",
							capacity), false);
	return 0;
}

/* The reason a guard's trigger keeps it from being rebuilt. */
static const char *
bg_feed_problem(BgFeedState state)
{
	switch (state)
	{
		case BG_FEED_MISSING:
			return "its trigger is missing";
		case BG_FEED_ALTERED:
			return "its trigger is not the one bloomguard_attach() creates";
		case BG_FEED_NOT_ALWAYS:
			return "its trigger is not enabled ALWAYS";
		case BG_FEED_IN_PLACE:
			break;
	}
	return NULL;
}

/* builds a conflict with recovery cancels are tried again this many times */
#define BG_CONFLICT_ATTEMPTS	3

/*
 * One attempt to rebuild a guard, in its own transaction; logs, never
 * throws, never waits.  Returns true if a conflict with recovery cancelled
 * it and it should be tried again.
 */
static bool
bg_worker_build_attempt(BgGuardTodo *todo, int attempt)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	TimestampTz start = GetCurrentTimestamp();
	bool		retry = false;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "bloomguard: rebuilding a filter");
	PG_TRY();
	{
		Relation	rel;

		if (!ConditionalLockRelationOid(todo->relid, AccessShareLock))
			ereport(DEBUG1,
					(errmsg_internal("bloomguard: relation %u is locked; trying again next pass",
									 todo->relid)));
		else if ((rel = try_relation_open(todo->relid, NoLock)) != NULL)
		{
			const char *problem = bg_feed_problem(bg_feed_state(rel));
			char	   *name = pstrdup(RelationGetRelationName(rel));
			int64		capacity = 0;
			BgTableKind kind = bg_table_kind(rel);

			/* a Citus shell made of a guarded table: not an error, a fact */
			if (kind != BG_TABLE_OWN_ROWS)
				bg_worker_note(todo->relid, bg_table_kind_detail(kind, name), false);
			else if (problem)
				bg_worker_note(todo->relid, problem, false);
			else if (RecoveryInProgress() &&
					 rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
			{
				/* expected, not an error: a standby has no such rows */
				bg_worker_note(todo->relid,
							   "a standby has no rows of an unlogged table to build its filter from",
							   false);
			}
			else if (!todo->resize || (capacity = bg_resize_capacity(rel)) > 0)
			{
				if (bg_rebuild(rel, capacity, get_float8_nan(), true))
					ereport(LOG,
							(errmsg("bloomguard: rebuilt the filter of \"%s\" in database \"%s\" because %s (%.3f s)",
									name, bg_dbname, todo->why,
									(double) (GetCurrentTimestamp() - start) / USECS_PER_SEC)));
				else
					ereport(DEBUG1,
							(errmsg_internal("bloomguard: \"%s\" is locked; trying again next pass",
											 name)));
			}
			relation_close(rel, NoLock);
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();

		/*
		 * Forget a cancel that is still pending, as PostgresMain() does after
		 * an error ("second to avoid race condition"): it was for the
		 * transaction just aborted.  The startup process repeats its conflict
		 * signal every 5 ms until our lock is gone, and before PostgreSQL 17
		 * the signal handler itself sets QueryCancelPending while we are in
		 * a transaction (postgres.c's RecoveryConflictInterrupt()): during
		 * this block, or between ProcessInterrupts() clearing the flag and
		 * reading RecoveryConflictPending.  Left set, it cancels the next
		 * attempt before it starts, or this pass outside any handler: the
		 * worker exits at ERROR, "canceling statement due to user request".
		 * (From 17 on, a conflict is judged when it is processed; outside a
		 * transaction, as at the next attempt's CHECK_FOR_INTERRUPTS(), it
		 * is ignored.)
		 */
		QueryCancelPending = false;
		if (RecoveryInProgress() && edata->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE)
		{
			/* the scan's snapshot or lock held up replay: expected, try again */
			retry = attempt < BG_CONFLICT_ATTEMPTS;
			bg_worker_note(todo->relid,
						   psprintf("the build was cancelled by a conflict with recovery (attempt %d of %d); %s",
									attempt, BG_CONFLICT_ATTEMPTS,
									retry ? "retrying" : "trying again next pass"),
						   false);
		}
		else
			bg_worker_note(todo->relid, edata->message, true);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	pgstat_report_activity(STATE_IDLE, NULL);
	return retry;
}

/*
 * Rebuild one guard; a build that a conflict with recovery cancels is
 * tried again at once, a few times.  On a standby that cannot tell
 * whether it receives every key, say why instead.
 */
static void
bg_worker_build_one(BgGuardTodo *todo)
{
	int			attempt;

	if (RecoveryInProgress())
	{
		const char *why = bg_wal_standby_why_not();

		if (why != NULL)
		{
			bg_worker_note(todo->relid, why, false);
			return;
		}
	}
	for (attempt = 1; attempt <= BG_CONFLICT_ATTEMPTS; attempt++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!bg_worker_build_attempt(todo, attempt))
			break;
	}
}

/*
 * On a standby: free the slots of this database whose table the registry
 * no longer lists (detached on the primary while it did not log keys, so
 * that no FORGET record came).  On a primary an attach claims its slot
 * before its registry row commits, so this is for standbys only.
 */
static void
bg_release_unregistered(List *registered)
{
	int			i;

	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSlotCopy	copy;

		if (bg_slot_copy(i, MyDatabaseId, InvalidOid, &copy) &&
			!list_member_oid(registered, copy.relid))
			bg_slot_release(MyDatabaseId, copy.relid);
	}
}

/*
 * Register the leaf partitions of guarded partitioned tables that have no
 * registry row (partition.c: the hook registers them when they are made,
 * but not while the library is not loaded).  Reads pg_inherits, so that
 * no partition is locked.
 */
static void
bg_register_missing_leaves(const char *schema)
{
	List	   *leaves = NIL;
	ListCell   *lc;
	uint64		i;

	if (SPI_execute(psprintf("WITH RECURSIVE tree(relid) AS ("
							 " SELECT g.relation::pg_catalog.oid FROM %s.bloomguard_guards g"
							 " JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) g.relation::pg_catalog.oid"
							 " WHERE c.relkind OPERATOR(pg_catalog.=) 'p'"
							 " UNION ALL"
							 " SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree t"
							 " ON i.inhparent OPERATOR(pg_catalog.=) t.relid"
							 " WHERE NOT i.inhdetachpending)"
							 " SELECT t.relid FROM tree t"
							 " JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) t.relid"
							 " WHERE c.relkind OPERATOR(pg_catalog.=) 'r' AND c.relispartition"
							 " AND NOT EXISTS (SELECT FROM %s.bloomguard_guards g"
							 " WHERE g.relation::pg_catalog.oid OPERATOR(pg_catalog.=) t.relid)",
							 schema, schema),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the partitions of guarded tables");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		leaves = lappend_oid(leaves,
							 DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
															SPI_tuptable->tupdesc, 1, &isnull)));
	}
	foreach(lc, leaves)
		bg_partition_register(lfirst_oid(lc));
}

/* A registered table and its size in pages, for ordering the builds. */
typedef struct BgTableSize
{
	Oid			relid;
	int32		relpages;
} BgTableSize;

/* qsort comparator: smallest table first, then by OID. */
static int
bg_table_size_cmp(const void *a, const void *b)
{
	const BgTableSize *x = a;
	const BgTableSize *y = b;

	if (x->relpages != y->relpages)
		return x->relpages < y->relpages ? -1 : 1;
	return x->relid < y->relid ? -1 : (x->relid > y->relid ? 1 : 0);
}

/*
 * Read this database's registry and decide what to build, smallest table
 * first (by pg_class.relpages: reading a table's size would lock it).
 * Every registered guard gets a slot, so that the health view can say why
 * one that cannot be built is not.  Returns NIL if the registry is locked.
 * What outlives SPI_finish() (which frees everything allocated after
 * SPI_connect()) is allocated outside SPI's context: the list of what to
 * build in cxt, the list of what is registered in the caller's context.
 */
static List *
bg_guards_to_build(MemoryContext cxt)
{
	MemoryContext callercxt = CurrentMemoryContext;
	List	   *todo = NIL;
	List	   *registered = NIL;
	Oid			registry = get_relname_relid(BLOOMGUARD_REGISTRY_TABLE,
											 bg_extension_schema());
	char	   *query;
	BgTableSize *tables;
	uint64		ntables = 0;
	uint64		i;

	if (!OidIsValid(registry) ||
		!ConditionalLockRelationOid(registry, AccessShareLock))
	{
		ereport(DEBUG1,
				(errmsg_internal("bloomguard: the registry is locked; trying again next pass")));
		return NIL;
	}
	query = psprintf("SELECT g.relation::pg_catalog.oid FROM %s.bloomguard_guards g",
					 quote_identifier(get_namespace_name(bg_extension_schema())));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* registering writes: a standby's pass leaves it to its primary */
	if (!RecoveryInProgress())
		bg_register_missing_leaves(quote_identifier(get_namespace_name(bg_extension_schema())));
	if (SPI_execute(query, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read bloomguard_guards");

	/*
	 * The tables, smallest first, from the syscache rather than by a join
	 * with pg_class: Citus hides its shards from queries of pg_class in
	 * background workers of other extensions (worker_shard_visibility.c).
	 * bg_citus_show_shards() turns that off in ours; the syscache does
	 * not depend on it.
	 */
	tables = palloc(Max(SPI_processed, 1) * sizeof(BgTableSize));
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc, 1, &isnull));
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

		if (!HeapTupleIsValid(tup))
			continue;
		if (((Form_pg_class) GETSTRUCT(tup))->relkind == RELKIND_RELATION)
		{
			tables[ntables].relid = relid;
			tables[ntables].relpages = ((Form_pg_class) GETSTRUCT(tup))->relpages;
			ntables++;
		}
		ReleaseSysCache(tup);
	}
	qsort(tables, ntables, sizeof(BgTableSize), bg_table_size_cmp);
	for (i = 0; i < ntables; i++)
	{
		Oid			relid = tables[i].relid;
		BgGuardTodo t;
		BgSlotRef	ref = BG_SLOT_REF_INIT;
		MemoryContext spicxt = MemoryContextSwitchTo(callercxt);

		registered = lappend_oid(registered, relid);
		MemoryContextSwitchTo(spicxt);

		if (!bg_slot_find(relid, &ref))
		{
			BgKeyIdentity none;

			memset(&none, 0, sizeof(none));
			PG_TRY();
			{
				(void) bg_slot_claim(relid, &none, BG_STATE_NOT_LOADED,
									 InvalidTransactionId);
			}
			PG_CATCH();
			{
				/* no free slot: the build will say so */
				MemoryContextSwitchTo(spicxt);
				FlushErrorState();
			}
			PG_END_TRY();
		}
		if (bg_needs_build(relid, &t))
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
			BgGuardTodo *copy = palloc(sizeof(BgGuardTodo));

			*copy = t;
			todo = lappend(todo, copy);
			MemoryContextSwitchTo(oldcxt);
		}
	}
	SPI_finish();
	if (RecoveryInProgress())
		bg_release_unregistered(registered);
	return todo;
}

/*
 * Free the slots of this database that nothing should keep: those whose
 * table is gone (a safety net: drops free their slots at commit), and, if
 * the extension is gone, all of them.
 *
 * Not a slot that an attach claimed in a transaction still in progress
 * (shmem.c's bg_slot_claim()): its table, and the extension itself, may
 * be that transaction's, which our snapshots cannot see yet; if it aborts,
 * it frees the slot itself (pending.c).  Once it is over, the catalogs are
 * read with a new catalog snapshot, taken after it ended: our own was
 * taken at the start of this pass, perhaps before it committed.  (No
 * negative catalog cache entry for its table can be older: nothing here
 * looks a slot's table up while its claim is in progress.)
 */
static void
bg_release_orphans(bool installed)
{
	int			i;

	bg_slot_sweep();
	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSlotCopy	copy;

		if (!bg_slot_copy(i, MyDatabaseId, InvalidOid, &copy))
			continue;
		if (TransactionIdIsValid(copy.claim_xid))
		{
			if (TransactionIdIsInProgress(copy.claim_xid))
				continue;
			InvalidateCatalogSnapshot();
			installed = OidIsValid(get_extension_oid("bloomguard", true));
		}
		if (!installed ||
			!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(copy.relid)))
			bg_slot_release(MyDatabaseId, copy.relid);
	}
}

/*
 * One maintenance pass over the guards of the database this background
 * worker is connected to.  Never throws.
 */
void
bg_maintain_database(void)
{
	List	   *todo = NIL;
	ListCell   *lc;

	/*
	 * Read the registry, smallest table first.  The extension may be
	 * dropped or created under our feet; then there is nothing to do.
	 */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	PG_TRY();
	{
		bool		installed = OidIsValid(get_extension_oid("bloomguard", true));

		strlcpy(bg_dbname, get_database_name(MyDatabaseId), sizeof(bg_dbname));

		bg_release_orphans(installed);
		if (installed)
		{
			/* Citus placements to register first, then built as any */
			bg_citus_upkeep();
			CommandCounterIncrement();
			PopActiveSnapshot();
			PushActiveSnapshot(GetTransactionSnapshot());
			todo = bg_guards_to_build(TopMemoryContext);
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		ereport(LOG,
				(errmsg("bloomguard: could not read the guards of database %u: %s",
						MyDatabaseId, edata->message)));
		return;
	}
	PG_END_TRY();

	foreach(lc, todo)
	{
		CHECK_FOR_INTERRUPTS();
		bg_worker_build_one((BgGuardTodo *) lfirst(lc));
	}
}

/* Define bloomguard.auto_rebuild; called from _PG_init while preloading. */
void
bg_maintain_init(void)
{
	DefineCustomBoolVariable("bloomguard.auto_rebuild",
							 "Lets the background worker resize guards whose load exceeds 1.0.",
							 "A guard past its capacity is rebuilt at twice the larger of the table's live rows and the keys "
							 "its filter holds, if that fits in bloomguard.max_memory and bloomguard.max_guard_memory.",
							 &bg_auto_rebuild,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
}
