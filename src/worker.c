/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  bloomguard's background workers: the launcher, the per-database
 *	  maintenance worker, and attach's feed worker.
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
 * The feed worker runs the first transaction of bloomguard_attach()
 * (attach.c): CREATE TRIGGER must commit before the key scan starts.  The
 * attaching backend waits for it, and that wait must be one the deadlock
 * detector can see: the caller may hold locks (an advisory lock, a row
 * its transaction updated) that the worker needs, directly or through a
 * third backend.  So it waits on the worker's virtual transaction id lock,
 * a heavyweight lock, as CREATE INDEX CONCURRENTLY waits for old
 * snapshots; a cycle then ends in "deadlock detected" for one party.  The
 * worker's virtual transaction id changes with each transaction it runs,
 * so the caller reads it again after every wait.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xlog.h"
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
#include "storage/dsm.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/procsignal.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "bloomguard.h"

PGDLLEXPORT void bloomguard_launcher_main(Datum main_arg);
PGDLLEXPORT void bloomguard_db_worker_main(Datum main_arg);
PGDLLEXPORT void bloomguard_feed_worker_main(Datum main_arg);

#define BG_MSG_LEN 512

typedef enum BgFeedStatus
{
	BG_FEED_PENDING = 0,
	BG_FEED_DONE,
	BG_FEED_FAILED
} BgFeedStatus;

/* What attach tells the feed worker, and what it answers. */
typedef struct BgFeedRequest
{
	Oid			dbid;
	Oid			relid;
	Oid			owner;			/* the table's owner: runs the DDL */
	int64		capacity;
	double		error_rate;
	BgFeedStatus status;
	int			sqlerrcode;
	char		message[BG_MSG_LEN];
	char		detail[BG_MSG_LEN];
	char		hint[BG_MSG_LEN];
} BgFeedRequest;

/* Register the launcher; called from _PG_init while preloading. */
void
bg_worker_init(void)
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
 * Start a short-lived, database-connected worker that reports to this
 * backend (so that WaitForBackgroundWorkerShutdown works).  Returns false
 * if no worker slot is free.
 */
static bool
bg_start_worker(const char *function, const char *type, const char *name,
				Datum arg, BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "bloomguard", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker.bgw_name, name, BGW_MAXLEN);
	strlcpy(worker.bgw_type, type, BGW_MAXLEN);
	worker.bgw_main_arg = arg;
	worker.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&worker, handle);
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
	bg_maintain_database();
	proc_exit(0);
}

/*
 * The feed worker: the first transaction of an attach.  Runs as the
 * bootstrap superuser, switching to the table's owner for the DDL.
 */
void
bloomguard_feed_worker_main(Datum main_arg)
{
	dsm_segment *seg;
	BgFeedRequest *req;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	seg = dsm_attach(DatumGetUInt32(main_arg));
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomguard feed worker could not map its request")));
	req = (BgFeedRequest *) dsm_segment_address(seg);

	BackgroundWorkerInitializeConnectionByOid(req->dbid, InvalidOid, 0);

	PG_TRY();
	{
		Relation	rel;
		const char *qname;
		char	   *schema;
		Oid			save_userid;
		int			save_sec_context;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "bloomguard: installing the feed trigger");

		/*
		 * Wait for the transactions now writing the table (or its
		 * partitions), without queueing a lock request that would block
		 * new writers behind us.
		 */
		bg_wait_for_writers(req->relid);

		rel = relation_open(req->relid, ShareRowExclusiveLock);
		qname = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										   RelationGetRelationName(rel));
		/* keep the lock, drop the reference: ALTER TABLE checks it is unused */
		relation_close(rel, NoLock);
		schema = get_namespace_name(bg_extension_schema());

		GetUserIdAndSecContext(&save_userid, &save_sec_context);
		SetUserIdAndSecContext(req->owner, save_sec_context |
							   SECURITY_LOCAL_USERID_CHANGE |
							   SECURITY_RESTRICTED_OPERATION);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		/* our own setup is not a coverage break */
		bg_own_trigger_begin(req->relid);
		if (SPI_execute(psprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE ON %s"
								 " FOR EACH ROW EXECUTE FUNCTION %s.bloomguard_trigger()",
								 BLOOMGUARD_TRIGGER_NAME, qname,
								 quote_identifier(schema)),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create the bloomguard trigger");
		if (SPI_execute(psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s",
								 qname, BLOOMGUARD_TRIGGER_NAME),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not enable the bloomguard trigger");
		SPI_finish();
		bg_own_trigger_end();
		SetUserIdAndSecContext(save_userid, save_sec_context);

		bg_registry_insert(req->relid, req->capacity, req->error_rate);

		PopActiveSnapshot();
		CommitTransactionCommand();
		req->status = BG_FEED_DONE;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(TopMemoryContext);
		edata = CopyErrorData();
		req->sqlerrcode = edata->sqlerrcode;
		strlcpy(req->message, edata->message ? edata->message : "", BG_MSG_LEN);
		strlcpy(req->detail, edata->detail ? edata->detail : "", BG_MSG_LEN);
		strlcpy(req->hint, edata->hint ? edata->hint : "", BG_MSG_LEN);
		pg_write_barrier();
		req->status = BG_FEED_FAILED;
		PG_RE_THROW();
	}
	PG_END_TRY();

	pgstat_report_activity(STATE_IDLE, NULL);
	dsm_detach(seg);
	proc_exit(0);
}

/*
 * Wait for the feed worker to finish, as a wait the deadlock detector can
 * see (the file header says why): on the worker's virtual transaction id
 * lock while it is in a transaction, on our latch (which its exit sets,
 * through bgw_notify_pid) between its transactions.
 */
static BgwHandleStatus
bg_wait_for_feed_worker(BackgroundWorkerHandle *handle)
{
	for (;;)
	{
		pid_t		pid;
		BgwHandleStatus status = GetBackgroundWorkerPid(handle, &pid);

		if (status == BGWH_STOPPED || status == BGWH_POSTMASTER_DIED)
			return status;
		if (status == BGWH_STARTED)
		{
			PGPROC	   *proc = BackendPidGetProc(pid);
			VirtualTransactionId vxid;

			if (proc != NULL)
			{
				GET_VXID_FROM_PGPROC(vxid, *proc);
				if (VirtualTransactionIdIsValid(vxid) && proc->pid == pid)
				{
					/* a heavyweight lock wait, visible in pg_locks */
					(void) VirtualXactLock(vxid, true);
					continue;
				}
			}
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* The owner of a relation, from the syscache. */
static Oid
bg_rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Run the feed worker for an attach of relid and wait for it: it creates
 * the trigger and registers the guard, and commits.  Sets *committed once
 * the worker's transaction is known to have committed, even if we then
 * fail.
 */
void
bg_install_feed(Oid relid, int64 capacity, double error_rate,
				volatile bool *committed)
{
	dsm_segment *seg;
	BgFeedRequest *req;
	BackgroundWorkerHandle *handle;
	BgwHandleStatus status;
	char		name[BGW_MAXLEN];

	seg = dsm_create(sizeof(BgFeedRequest), 0);
	req = (BgFeedRequest *) dsm_segment_address(seg);
	memset(req, 0, sizeof(BgFeedRequest));
	req->dbid = MyDatabaseId;
	req->relid = relid;
	req->owner = bg_rel_owner(relid);
	req->capacity = capacity;
	req->error_rate = error_rate;
	req->status = BG_FEED_PENDING;

	snprintf(name, sizeof(name), "bloomguard attach of relation %u", relid);
	if (!bg_start_worker("bloomguard_feed_worker_main", "bloomguard attach", name,
						 UInt32GetDatum(dsm_segment_handle(seg)), &handle))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not register background process"),
				 errhint("You may need to increase max_worker_processes.")));

	PG_TRY();
	{
		status = bg_wait_for_feed_worker(handle);
	}
	PG_CATCH();
	{
		/* cancelled, or a deadlock: stop the worker and learn whether it committed */
		HOLD_INTERRUPTS();
		TerminateBackgroundWorker(handle);
		(void) WaitForBackgroundWorkerShutdown(handle);
		RESUME_INTERRUPTS();
		pg_read_barrier();
		if (req->status == BG_FEED_DONE)
			*committed = true;
		PG_RE_THROW();
	}
	PG_END_TRY();

	pg_read_barrier();
	if (req->status == BG_FEED_DONE)
		*committed = true;
	else if (req->status == BG_FEED_FAILED)
		ereport(ERROR,
				(errcode(req->sqlerrcode),
				 errmsg("%s", req->message),
				 req->detail[0] ? errdetail("%s", req->detail) : 0,
				 req->hint[0] ? errhint("%s", req->hint) : 0));
	else
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("bloomguard feed worker exited without reporting a result"),
				 status == BGWH_POSTMASTER_DIED ?
				 errdetail("The postmaster died.") : 0));
	dsm_detach(seg);
}
