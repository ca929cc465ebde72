/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  Attach's feed worker, and the start of bloomguard's short-lived
 *	  background workers (the launcher's database workers too).
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
 * The launcher and the database worker it starts are in launcher.c.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bloomguard.h"

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
 * Register relid's guard and create its feed trigger, enabled ALWAYS, in
 * the current transaction, running the DDL as owner (the table's owner).
 * The caller holds ShareRowExclusiveLock on the table, and has no
 * reference to it open (ALTER TABLE checks that it is unused).  Used by
 * the feed worker, and by an attach in the caller's transaction
 * (attach.c).  The registry row comes first: an event trigger that the
 * DDL fires (ALTER TABLE is a command like any other) finds the table
 * guarded already.
 */
void
bg_create_feed(Oid relid, Oid owner, int64 capacity, double error_rate)
{
	if (get_rel_name(relid) == NULL)
		elog(ERROR, "cache lookup failed for relation %u", relid);
	bg_registry_insert(relid, capacity, error_rate);
	CommandCounterIncrement();
	bg_feed_trigger_create(relid, owner);
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
	bg_citus_show_shards();

	PG_TRY();
	{
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

		/* open it to see that it is still there; keep the lock only */
		relation_close(relation_open(req->relid, ShareRowExclusiveLock), NoLock);
		bg_create_feed(req->relid, req->owner, req->capacity, req->error_rate);

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
