/*-------------------------------------------------------------------------
 *
 * launcher.c
 *	  The launcher, bloomguard's static background worker, and the
 *	  per-database maintenance worker it starts.
 *
 * Shared memory is empty after a crash (the postmaster reinitializes it),
 * and after a restart whose saved filters could not be loaded (persist.c),
 * so those guards start "not_loaded" and answer by plain lookups.  The
 * launcher, a static background worker started once the server is
 * consistent (on a hot standby too, where it builds the standby's own
 * filters), brings them back without any SQL call:
 *
 *	- at startup and then every bloomguard.maintenance_interval, it lists
 *	  the databases that accept connections and, one at a time, starts a
 *	  short-lived worker in those that want one;
 *	- that worker makes one maintenance pass over the database's guards
 *	  (maintain.c): it rebuilds the ones that are not loaded or untrusted
 *	  and resizes the ones past their capacity, never waiting for a lock.
 *
 * Which databases want one.  A database whose guards have slots in
 * shared memory does; one without them is left alone, so that the worker
 * never gets in the way of DROP DATABASE, ALTER DATABASE ... RENAME or
 * CREATE DATABASE ... TEMPLATE (which fail while another session is
 * connected) in a database it has nothing to do in.  But the registry,
 * not shared memory, says which tables are guarded, and shared memory is
 * empty at a start whose saved filters were not loaded and after a crash;
 * so the launcher's first pass (it starts again after a crash) visits
 * every database, whose worker claims a slot for every registered guard.
 * After that, registry rows appear without a slot only where no backend
 * of ours wrote them: a restore of the registry's rows, CREATE DATABASE
 * from a template, a schema copy with the trigger.  The first lookup of
 * such a table finds its feed trigger in place and no slot, and asks for a
 * visit (bg_visit_request()), as does the health view when it lists a
 * registered guard without a slot.  A standby's guards have slots only once its
 * own worker has built them (attach runs on the primary), so a standby's
 * launcher visits every database on every pass; there, replay of DROP
 * DATABASE ends the sessions in the way itself.
 *
 * A worker that is in a database someone wants to drop, rename or copy
 * leaves at once, as an autovacuum worker does (dropdb() sends those
 * SIGTERM): those commands take the database's lock in a mode that
 * conflicts with RowExclusiveLock, the one a new session takes, before
 * they count the other sessions, and retry the count for 5 seconds.  The
 * launcher, while it waits for a worker, tries that lock without waiting
 * every 100 ms, and stops the worker when it cannot have it; it also skips
 * a database whose lock it cannot have.
 *
 * On a primary it also keeps the WAL in step with bloomguard.wal_log
 * (wal.c): after a reload it writes the switch at once, rather than at the
 * next flush, and it repeats the ON record while keys are logged.
 *
 * The launcher follows autoprewarm's and pg_cron's shape: signal handlers,
 * then a WaitLatch loop; SIGHUP rereads the settings.  It waits for each
 * database worker without holding any lock or transaction, so that wait
 * can never be part of a deadlock, and absorbs ProcSignalBarriers while it
 * waits: DROP DATABASE waits until every process has absorbed its barrier,
 * and a worker may be waiting for that command's lock, or be busy in
 * another database for as long as a rebuild takes.
 *
 * The database worker itself only makes the maintenance pass (maintain.c).
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/procsignal.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "bloomguard.h"

PGDLLEXPORT void bloomguard_launcher_main(Datum main_arg);
PGDLLEXPORT void bloomguard_db_worker_main(Datum main_arg);

/* settings (bg_launcher_init() defines them) */
#define BG_MAINTENANCE_INTERVAL_DEFAULT	10	/* seconds */
#define BG_MAINTENANCE_INTERVAL_MIN		0
#define BG_MAINTENANCE_INTERVAL_MAX		(INT_MAX / 1000)
static int	bg_maintenance_interval = BG_MAINTENANCE_INTERVAL_DEFAULT;
static bool bg_background_worker = true;

/*
 * Define the launcher's settings; called from _PG_init while preloading,
 * in binary-upgrade mode too, where the launcher is not started (module.c
 * says why): postgresql.conf may set them there as well.
 */
void
bg_launcher_init(void)
{
	DefineCustomIntVariable("bloomguard.maintenance_interval",
							"Time between the background worker's maintenance passes.",
							"Each pass rebuilds guards that are not loaded or untrusted and, "
							"with bloomguard.auto_rebuild, resizes guards past their capacity. "
							"Zero disables the passes after the one at startup.",
							&bg_maintenance_interval,
							BG_MAINTENANCE_INTERVAL_DEFAULT,
							BG_MAINTENANCE_INTERVAL_MIN,
							BG_MAINTENANCE_INTERVAL_MAX,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("bloomguard.background_worker",
							 "Starts the background worker that rebuilds lost filters and resizes full ones.",
							 "When off, guards stay not_loaded after a restart until bloomguard_rebuild() is called.",
							 &bg_background_worker,
							 true,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);
}

/*
 * Register the launcher, unless bloomguard.background_worker is off;
 * called from _PG_init while preloading, after bg_launcher_init().
 */
void
bg_launcher_register(void)
{
	BackgroundWorker worker;

	if (!bg_background_worker)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
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
 * Does another session want database dbid to itself (DROP DATABASE, ALTER
 * DATABASE ... RENAME or SET TABLESPACE, CREATE DATABASE ... TEMPLATE)?
 * They hold or wait for its lock in a mode that conflicts with the one a
 * session takes to connect; try that without waiting.
 */
static bool
bg_database_claimed(Oid dbid)
{
	LOCKTAG		tag;

	SET_LOCKTAG_OBJECT(tag, InvalidOid, DatabaseRelationId, dbid, 0);
	if (LockAcquire(&tag, RowExclusiveLock, true, true) == LOCKACQUIRE_NOT_AVAIL)
		return true;
	LockRelease(&tag, RowExclusiveLock, true);
	return false;
}

/*
 * Run the per-database worker for dbid and wait for it, on our latch
 * (which the postmaster sets when the worker stops).  On a shutdown
 * request, or when another session wants the database, stop it and
 * return.  Returns true if the worker ran to its end.
 */
static bool
bg_visit_database(Oid dbid)
{
	BackgroundWorkerHandle *handle;
	char		name[BGW_MAXLEN];
	pid_t		pid;

	if (bg_database_claimed(dbid))
		return false;
	snprintf(name, sizeof(name), "bloomguard worker for database %u", dbid);
	if (!bg_start_worker("bloomguard_db_worker_main", "bloomguard worker", name,
						 ObjectIdGetDatum(dbid), &handle))
	{
		ereport(LOG,
				(errmsg("bloomguard launcher could not start a worker for database %u", dbid),
				 errhint("You may need to increase max_worker_processes.")));
		return false;
	}
	for (;;)
	{
		BgwHandleStatus status = GetBackgroundWorkerPid(handle, &pid);

		if (status == BGWH_STOPPED || status == BGWH_POSTMASTER_DIED)
			return status == BGWH_STOPPED;
		if (ShutdownRequestPending)
		{
			TerminateBackgroundWorker(handle);
			return false;
		}
		if (bg_database_claimed(dbid))
		{
			ereport(DEBUG1,
					(errmsg_internal("bloomguard launcher: stopping the worker of database %u, which another session wants",
									 dbid)));
			/* SIGTERM; it needs no cleanup that an error would not do */
			TerminateBackgroundWorker(handle);
			(void) WaitForBackgroundWorkerShutdown(handle);
			return false;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);

		/*
		 * DROP DATABASE waits until every process has absorbed its
		 * barrier; the worker may be waiting for that very command's lock.
		 */
		if (ProcSignalBarrierPending)
			ProcessProcSignalBarrier();
	}
}

/*
 * The launcher's main loop: a pass over the databases that want a worker
 * (every database at the first pass, and on a standby; see the file
 * header), then a sleep of bloomguard.maintenance_interval.  It holds no
 * lock and no transaction while it waits, and leaves quietly on a
 * shutdown request.
 */
void
bloomguard_launcher_main(Datum main_arg)
{
	MemoryContext passcxt;
	List	   *undiscovered = NIL; /* not yet visited to the end */
	bool		first = true;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	/* no database: we only read the shared catalog pg_database */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	passcxt = AllocSetContextCreate(TopMemoryContext, "bloomguard launcher",
									ALLOCSET_DEFAULT_SIZES);
	ereport(LOG, (errmsg("bloomguard launcher started")));

	while (!ShutdownRequestPending)
	{
		List	   *dbs;
		ListCell   *lc;
		long		timeout;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		bg_wal_heartbeat();

		MemoryContextReset(passcxt);
		dbs = bg_database_list(passcxt);
		if (first)
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(TopMemoryContext);

			undiscovered = list_copy(dbs);
			MemoryContextSwitchTo(oldcxt);
			first = false;
		}
		foreach(lc, dbs)
		{
			Oid			dbid = lfirst_oid(lc);
			bool		discover = list_member_oid(undiscovered, dbid);

			if (ShutdownRequestPending)
				break;
			/* bg_visit_wanted() always, to consume the request */
			if (!bg_visit_wanted(dbid, true) && !discover && !RecoveryInProgress())
				continue;
			if (bg_visit_database(dbid) && discover)
				undiscovered = list_delete_oid(undiscovered, dbid);
		}

		/* the first pass always runs; zero disables the ones after it */
		timeout = bg_maintenance_interval > 0 ? bg_maintenance_interval * 1000L : -1;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
						 (timeout > 0 ? WL_TIMEOUT : 0),
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		if (ProcSignalBarrierPending)
			ProcessProcSignalBarrier();
	}
	proc_exit(0);
}

/* The per-database worker: one maintenance pass over this database's guards. */
void
bloomguard_db_worker_main(Datum main_arg)
{
	Oid			dbid = DatumGetObjectId(main_arg);

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dbid, InvalidOid, 0);
	bg_citus_show_shards();
	bg_maintain_database();
	proc_exit(0);
}

