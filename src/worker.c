/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The background worker that rebuilds lost filters and resizes full ones.
 *
 * Shared memory is empty after a restart and after any crash (the
 * postmaster reinitializes it), so every guard starts "not_loaded" and
 * answers by plain lookups.  The launcher, a static background worker
 * started once recovery has finished (so: never on a standby, and right
 * after a promotion), brings them back without any SQL call:
 *
 *	- at startup and then every bloomguard.maintenance_interval, it lists
 *	  the databases that accept connections and, one at a time, starts a
 *	  short-lived worker in each;
 *	- that worker reads the database's bloomguard_guards and, one guard at
 *	  a time, smallest table first (so the most guards are ready soonest),
 *	  rebuilds with the online protocol (build.c) every guard that is
 *	  not_loaded or untrusted, and, while bloomguard.auto_rebuild is on,
 *	  every guard whose load exceeds 1.0, at twice its n_added, if that fits
 *	  in bloomguard.max_memory (otherwise it says so in the health view's
 *	  advice);
 *	- it never waits for a lock: a table being vacuumed or rebuilt by
 *	  someone else is skipped until the next pass.
 *
 * The launcher follows autoprewarm's and pg_cron's shape: signal handlers,
 * then a WaitLatch loop; SIGHUP rereads the settings.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "bloomguard.h"

PGDLLEXPORT void bloomguard_launcher_main(Datum main_arg);
PGDLLEXPORT void bloomguard_db_worker_main(Datum main_arg);

/* Register the launcher; called from _PG_init while preloading. */
void
bg_worker_init(void)
{
	BackgroundWorker worker;

	if (!bg_background_worker)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 10;
	strlcpy(worker.bgw_library_name, "bloomguard", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "bloomguard_launcher_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "bloomguard launcher", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "bloomguard launcher", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* The databases a worker may visit: connectable, not templates. */
static List *
bg_database_list(MemoryContext cxt)
{
	List	   *result = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);
		MemoryContext oldcxt;

		if (!db->datallowconn || db->datistemplate)
			continue;
		oldcxt = MemoryContextSwitchTo(cxt);
		result = lappend_oid(result, db->oid);
		MemoryContextSwitchTo(oldcxt);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return result;
}

/*
 * Start a short-lived, database-connected worker that reports to this
 * backend (so that WaitForBackgroundWorkerShutdown works).  Returns false
 * if no worker slot is free.
 */
bool
bg_start_worker(const char *function, const char *type, const char *name,
				Datum arg, BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "bloomguard", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, type, BGW_MAXLEN);
	worker.bgw_main_arg = arg;
	worker.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&worker, handle);
}

/* Run the per-database worker for dbid and wait for it. */
static void
bg_visit_database(Oid dbid)
{
	BackgroundWorkerHandle *handle;
	char		name[BGW_MAXLEN];

	snprintf(name, sizeof(name), "bloomguard worker for database %u", dbid);
	if (!bg_start_worker("bloomguard_db_worker_main", "bloomguard worker", name,
						 ObjectIdGetDatum(dbid), &handle))
	{
		ereport(LOG,
				(errmsg("bloomguard launcher could not start a worker for database %u", dbid),
				 errhint("You may need to increase max_worker_processes.")));
		return;
	}
	(void) WaitForBackgroundWorkerShutdown(handle);
}

/* The launcher's main loop. */
void
bloomguard_launcher_main(Datum main_arg)
{
	MemoryContext passcxt;

	/*
	 * die, not just a flag: we may be waiting for a worker the postmaster
	 * will no longer start once it is shutting down, and those waits only
	 * leave through CHECK_FOR_INTERRUPTS().
	 */
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	/* no database: we only read the shared catalog pg_database */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	passcxt = AllocSetContextCreate(TopMemoryContext, "bloomguard launcher",
									ALLOCSET_DEFAULT_SIZES);
	ereport(LOG, (errmsg("bloomguard launcher started")));

	for (;;)
	{
		List	   *dbs;
		ListCell   *lc;
		long		timeout;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		MemoryContextReset(passcxt);
		dbs = bg_database_list(passcxt);
		foreach(lc, dbs)
		{
			CHECK_FOR_INTERRUPTS();
			bg_visit_database(lfirst_oid(lc));
		}

		/* the first pass always runs; zero disables the ones after it */
		timeout = bg_maintenance_interval > 0 ? bg_maintenance_interval * 1000L : -1;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
						 (timeout > 0 ? WL_TIMEOUT : 0),
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* What the worker should do about one guard. */
typedef struct BgGuardTodo
{
	Oid			relid;
	int64		capacity;		/* <= 0: keep */
	const char *why;
} BgGuardTodo;

/*
 * Decide whether a guard needs a build: not loaded, untrusted, or (with
 * auto_rebuild) over capacity.  Returns false if not, or if an automatic
 * resize would not fit in bloomguard.max_memory (noted in the slot).
 */
static bool
bg_needs_build(Oid relid, BgGuardTodo *todo)
{
	BgSlotRef	ref;
	BgSlot	   *slot;
	bool		result = false;
	uint64		n_added = 0;
	uint64		capacity = 0;
	double		error_rate = 0;
	Size		serving_bytes = 0;

	todo->relid = relid;
	todo->capacity = 0;
	ref.index = -1;
	ref.epoch = 0;
	slot = bg_slot_lock(&ref, relid, LW_SHARED);
	if (slot == NULL)
	{
		todo->why = "its filter is not loaded";
		return true;
	}
	switch (slot->state)
	{
		case BG_STATE_NOT_LOADED:
			todo->why = "its filter is not loaded";
			result = true;
			break;
		case BG_STATE_UNTRUSTED:
			todo->why = "its coverage was broken";
			result = true;
			break;
		case BG_STATE_READY:
			if (bg_auto_rebuild && DsaPointerIsValid(slot->serving) &&
				!DsaPointerIsValid(slot->building))
			{
				BloomFilter *f = dsa_get_address(bg_dsa(), slot->serving);

				n_added = pg_atomic_read_u64(&f->n_added);
				capacity = f->capacity;
				error_rate = f->error_rate;
				serving_bytes = slot->serving_bytes;
			}
			break;
		default:
			break;				/* building: someone is on it */
	}
	LWLockRelease(&slot->lock);

	if (!result && capacity > 0 && n_added > capacity)
	{
		uint64		nbits;
		int			nhashes;
		Size		bytes;
		Size		cap = (Size) bg_max_memory_mb * 1024 * 1024;

		todo->capacity = (int64) (2 * n_added);
		todo->why = "it is over capacity";
		if (bloom_size((double) todo->capacity, error_rate, &nbits, &nhashes) &&
			(bytes = bloom_filter_bytes(nbits)) <= cap &&
			bg_memory_in_use() + bytes <= cap)
			return true;

		/* does not fit: say so where the DBA looks */
		slot = bg_slot_lock(&ref, relid, LW_EXCLUSIVE);
		if (slot)
		{
			snprintf(slot->last_error, sizeof(slot->last_error),
					 "automatic resize to capacity " INT64_FORMAT " would exceed bloomguard.max_memory",
					 todo->capacity);
			LWLockRelease(&slot->lock);
		}
		(void) serving_bytes;
		return false;
	}
	return result;
}

/* Rebuild one guard in its own transaction; log, never throw. */
static void
bg_worker_build_one(BgGuardTodo *todo)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	TimestampTz start = GetCurrentTimestamp();

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "bloomguard: rebuilding a filter");
	PG_TRY();
	{
		Relation	rel = NULL;
		Oid			registry = get_relname_relid(BLOOMGUARD_REGISTRY_TABLE,
												 bg_extension_schema());

		/*
		 * Never wait for a lock: a waiting worker could close a deadlock
		 * cycle with DDL (DROP TABLE takes the table, then the registry).
		 * Whoever holds these will be done by the next pass.
		 */
		if (!OidIsValid(registry) ||
			!ConditionalLockRelationOid(registry, AccessShareLock) ||
			!ConditionalLockRelationOid(todo->relid, AccessShareLock))
			ereport(DEBUG1,
					(errmsg_internal("bloomguard: relation %u or the registry is locked; trying again next pass",
									 todo->relid)));
		else if ((rel = try_relation_open(todo->relid, NoLock)) == NULL)
			ereport(LOG,
					(errmsg("bloomguard: skipping guard of relation %u, which no longer exists",
							todo->relid)));
		else if (!bg_feed_in_place(rel))
			ereport(DEBUG1,
					(errmsg_internal("bloomguard: skipping \"%s\": its trigger is not enabled ALWAYS",
									 RelationGetRelationName(rel))));
		else
		{
			char	   *name = pstrdup(RelationGetRelationName(rel));

			if (bg_rebuild_guard(rel, todo->capacity, get_float8_nan(), true))
				ereport(LOG,
						(errmsg("bloomguard: rebuilt the filter of \"%s\" in database \"%s\" because %s (%.3f s)",
								name, get_database_name(MyDatabaseId), todo->why,
								(double) (GetCurrentTimestamp() - start) / USECS_PER_SEC)));
			else
				ereport(DEBUG1,
						(errmsg_internal("bloomguard: \"%s\" is locked; trying again next pass",
										 name)));
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
		ereport(WARNING,
				(errmsg("bloomguard: could not rebuild the filter of relation %u: %s",
						todo->relid, edata->message)));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	pgstat_report_activity(STATE_IDLE, NULL);
}

static List *bg_guards_to_build(void);

/* The per-database worker: one pass over this database's guards. */
void
bloomguard_db_worker_main(Datum main_arg)
{
	Oid			dbid = DatumGetObjectId(main_arg);
	List	   *todo = NIL;
	ListCell   *lc;
	bool		installed;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);

	/*
	 * Read the registry, smallest table first.  The extension may be
	 * dropped or created under our feet; then there is nothing to do.
	 */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	PG_TRY();
	{
		installed = OidIsValid(get_extension_oid("bloomguard", true));
		if (installed)
			todo = bg_guards_to_build();
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
						dbid, edata->message)));
		proc_exit(0);
	}
	PG_END_TRY();

	foreach(lc, todo)
		bg_worker_build_one((BgGuardTodo *) lfirst(lc));

	proc_exit(0);
}

/* Read this database's registry and decide what to build, smallest first. */
static List *
bg_guards_to_build(void)
{
	List	   *todo = NIL;

	{
		char	   *query;
		uint64		i;
		MemoryContext outer = TopMemoryContext;

		query = psprintf("SELECT g.relation::pg_catalog.oid"
						 " FROM %s.bloomguard_guards g"
						 " JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) g.relation::pg_catalog.oid"
						 " ORDER BY pg_catalog.pg_relation_size(c.oid), c.oid",
						 quote_identifier(get_namespace_name(bg_extension_schema())));
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute(query, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read bloomguard_guards");
		for (i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			Oid			relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
															   SPI_tuptable->tupdesc, 1, &isnull));
			BgGuardTodo t;

			if (bg_needs_build(relid, &t))
			{
				MemoryContext oldcxt = MemoryContextSwitchTo(outer);
				BgGuardTodo *copy = palloc(sizeof(BgGuardTodo));

				*copy = t;
				todo = lappend(todo, copy);
				MemoryContextSwitchTo(oldcxt);
			}
		}
		SPI_finish();
	}
	return todo;
}
