/*-------------------------------------------------------------------------
 *
 * attach.c
 *	  bloomguard_attach(), bloomguard_detach(), bloomguard_rebuild().
 *
 * Attaching a guard has to create the trigger and commit it before the
 * key scan starts: CREATE TRIGGER holds a ShareRowExclusiveLock, which
 * blocks writers, until its transaction ends, and the scan must not run
 * under it.  A SQL function cannot commit, so bloomguard_attach() has a
 * short-lived background worker do that first transaction, and waits:
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
 * scan.  Like CREATE INDEX CONCURRENTLY, attach refuses to run inside a
 * transaction block.  If the build fails after the worker committed (a
 * cancel, a timeout), the guard stays registered in state "not_loaded":
 * it answers by plain lookups until bloomguard_rebuild() builds it.
 *
 * Rebuild needs no second transaction: the trigger is already there.  It
 * runs in the caller's transaction, even inside a transaction block.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_attach);
PG_FUNCTION_INFO_V1(bloomguard_detach);
PG_FUNCTION_INFO_V1(bloomguard_rebuild);

PGDLLEXPORT void bloomguard_feed_worker_main(Datum main_arg);

#define BG_MSG_LEN 512

typedef enum BgFeedStatus
{
	BG_FEED_PENDING = 0,
	BG_FEED_DONE,
	BG_FEED_FAILED
} BgFeedStatus;

/* What the caller tells the feed worker, and what it answers. */
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

/* Error out unless the current user owns rel. */
void
bg_check_owner(Relation rel)
{
#if PG_VERSION_NUM >= 160000
	if (!object_ownercheck(RelationRelationId, RelationGetRelid(rel), GetUserId()))
#else
	if (!pg_class_ownercheck(RelationGetRelid(rel), GetUserId()))
#endif
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
}

/* Error out unless rel is a kind of table bloomguard can guard. */
void
bg_check_guardable(Relation rel)
{
	const char *name = RelationGetRelationName(rel);

	switch (rel->rd_rel->relkind)
	{
		case RELKIND_RELATION:
			break;
		case RELKIND_PARTITIONED_TABLE:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot guard partitioned table \"%s\"", name),
					 errdetail("Rows can reach a partition without passing through the partitioned table's triggers, and ATTACH PARTITION brings in rows no trigger saw."),
					 errhint("Guard the partitions one by one instead.")));
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("cannot guard \"%s\"", name),
					 errdetail("\"%s\" is not a table.", name),
					 errhint("bloomguard guards ordinary tables by their primary key.")));
	}
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard temporary table \"%s\"", name),
				 errdetail("A temporary table is visible to one session only; a shared filter would not help it.")));
	if (rel->rd_tableam != GetHeapamTableAmRoutine())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard table \"%s\": only the heap table access method is supported", name)));
	if (rel->rd_rel->relhassubclass)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot guard table \"%s\" because it has inheritance children", name),
				 errdetail("A query on the table also reads its children, whose rows its trigger does not see.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot change guards during recovery")));
}

/* Is the guard's trigger on rel (*exists), and does it fire ALWAYS? */
static bool
bg_trigger_in_place(Relation rel, bool *exists)
{
	TriggerDesc *trigdesc = rel->trigdesc;
	int			i;

	*exists = false;
	for (i = 0; trigdesc != NULL && i < trigdesc->numtriggers; i++)
		if (strcmp(trigdesc->triggers[i].tgname, BLOOMGUARD_TRIGGER_NAME) == 0)
			*exists = true;
	return bg_feed_in_place(rel);
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

static const char *
bg_qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
}

/* Resolve and validate attach/rebuild's optional arguments. */
static void
bg_sizing_args(FunctionCallInfo fcinfo, int64 default_capacity,
			   double default_error_rate, int64 *capacity, double *error_rate)
{
	uint64		nbits;
	int			nhashes;
	Size		bytes;

	*capacity = PG_ARGISNULL(1) ? default_capacity : PG_GETARG_INT64(1);
	*error_rate = PG_ARGISNULL(2) ? default_error_rate : PG_GETARG_FLOAT8(2);
	bg_check_sizing(*capacity, *error_rate, &nbits, &nhashes, &bytes);
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
		LOCKTAG		tag;
		const char *qname;
		char	   *schema;
		Oid			save_userid;
		int			save_sec_context;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "bloomguard: installing the feed trigger");

		/*
		 * Wait for the transactions now writing the table, without queueing
		 * a lock request that would block new writers behind us.
		 */
		SET_LOCKTAG_RELATION(tag, MyDatabaseId, req->relid);
		WaitForLockers(tag, ShareRowExclusiveLock, false);

		rel = relation_open(req->relid, ShareRowExclusiveLock);
		qname = bg_qualified_name(rel);
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
		bg_own_trigger_relid = req->relid;
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
		bg_own_trigger_relid = InvalidOid;
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
 * Run the feed worker for rel and wait for it.  Sets *committed once the
 * worker's transaction is known to have committed, even if we then fail.
 */
static void
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
		status = WaitForBackgroundWorkerShutdown(handle);
	}
	PG_CATCH();
	{
		/* cancelled: stop the worker and learn whether it committed */
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

/*
 * The slot an attach in this backend has claimed but not yet registered:
 * released if the backend exits before the feed worker has committed.
 */
static Oid	bg_attach_pending_relid = InvalidOid;
static bool bg_attach_callback_registered = false;

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

/*
 * bloomguard_attach(rel regclass, capacity bigint, error_rate float8)
 */
Datum
bloomguard_attach(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Relation	rel;
	BgKeyDesc	desc;
	BgKeyIdentity key;
	int64		capacity;
	double		error_rate;
	int			slotindex;
	bool		exists;
	volatile bool committed = false;
	BgBuildState bs;

	bg_require_loaded();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));
	relid = PG_GETARG_OID(0);
	PreventInTransactionBlock(true, "bloomguard_attach()");

	rel = relation_open(relid, AccessShareLock);
	bg_check_owner(rel);
	bg_check_guardable(rel);
	bg_keydesc_build(rel, &desc, false, true);
	bg_sizing_args(fcinfo, (int64) bg_default_capacity(rel), bg_default_error_rate,
				   &capacity, &error_rate);

	if (bg_registry_lookup(relid, NULL, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" is already guarded", RelationGetRelationName(rel)),
				 errhint("Use bloomguard_rebuild() to rebuild or resize its filter.")));
	(void) bg_trigger_in_place(rel, &exists);
	if (exists)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" already has a trigger named \"%s\"",
						RelationGetRelationName(rel), BLOOMGUARD_TRIGGER_NAME),
				 errhint("Rename or drop that trigger first.")));
	if (CheckRelationLockedByMe(rel, RowExclusiveLock, true))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot attach a guard to table \"%s\" in a statement that writes it",
						RelationGetRelationName(rel))));

	/*
	 * Wait here, as a heavyweight lock wait that the deadlock detector and
	 * pg_locks can see, for the transactions now writing the table; the
	 * worker waits again for any that started meanwhile.  Neither wait
	 * queues a lock request, so new writers are not held up.
	 */
	{
		LOCKTAG		tag;

		SET_LOCKTAG_RELATION(tag, MyDatabaseId, relid);
		WaitForLockers(tag, ShareRowExclusiveLock, false);
	}

	/*
	 * Claim the slot and allocate the filter before the trigger exists, so
	 * that the memory cap is checked before anything is committed and the
	 * trigger feeds the filter from its first row.
	 */
	bg_keydesc_identity(&desc, &key);
	if (!bg_attach_callback_registered)
	{
		before_shmem_exit(bg_attach_exit_callback, (Datum) 0);
		bg_attach_callback_registered = true;
	}
	slotindex = bg_slot_claim(relid, &key, BG_STATE_BUILDING);
	bg_attach_pending_relid = relid;
	PG_TRY();
	{
		bg_build_begin(rel, &desc, slotindex, (uint64) capacity, error_rate, &bs);

		/*
		 * Let go of our lock on the table while the worker runs: we wait for
		 * it on a latch, which the deadlock detector cannot see, so a
		 * writer waiting for our lock while the worker waits for that
		 * writer would hang all three.
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
		bg_keydesc_build(rel, &desc, false, true);	/* it may have changed */
		if (!bg_trigger_in_place(rel, &exists))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the bloomguard trigger of table \"%s\" was changed during the attach",
							RelationGetRelationName(rel)),
					 errhint("Run bloomguard_detach() and then bloomguard_attach() again.")));
		bg_build_finish(rel, &desc, &bs);
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
 * bloomguard_detach(rel regclass): drop the trigger, unregister, and free
 * the filter when the transaction commits.
 */
Datum
bloomguard_detach(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	bool		exists;

	bg_require_loaded();
	rel = relation_open(relid, AccessShareLock);
	bg_check_owner(rel);
	if (!bg_registry_lookup(relid, NULL, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not guarded", RelationGetRelationName(rel))));

	(void) bg_trigger_in_place(rel, &exists);
	if (exists)
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		/* not a coverage break: the filter goes away with the trigger */
		bg_own_trigger_relid = relid;
		PG_TRY();
		{
			if (SPI_execute(psprintf("DROP TRIGGER %s ON %s", BLOOMGUARD_TRIGGER_NAME,
									 bg_qualified_name(rel)),
							false, 0) != SPI_OK_UTILITY)
				elog(ERROR, "could not drop the bloomguard trigger");
		}
		PG_FINALLY();
		{
			bg_own_trigger_relid = InvalidOid;
		}
		PG_END_TRY();
		SPI_finish();
	}
	bg_registry_delete(relid);
	bg_forget_at_commit(relid);

	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}

/*
 * Rebuild a guard's filter.  capacity <= 0 and error_rate NaN mean "keep
 * the current one" (capacity grows to twice the row estimate if the table
 * outgrew it).  With nowait, returns false instead of waiting when another
 * build (or VACUUM, or DDL) holds the table; the background worker uses
 * that so that it never queues behind anyone.  The caller has checked
 * permissions and that the table is guarded.
 */
bool
bg_rebuild_guard(Relation rel, int64 capacity, double error_rate, bool nowait)
{
	Oid			relid = RelationGetRelid(rel);
	BgKeyDesc	desc;
	BgKeyIdentity key;
	BgSlotRef	ref;
	BgSlot	   *slot;
	int64		reg_capacity;
	double		reg_error_rate;
	int64		cur_capacity;
	double		cur_error_rate;
	bool		exists;
	uint64		estimate;
	uint64		nbits;
	int			nhashes;
	Size		bytes;

	if (!bg_registry_lookup(relid, &reg_capacity, &reg_error_rate))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not guarded", RelationGetRelationName(rel)),
				 errhint("Use bloomguard_attach() to guard it.")));
	bg_check_guardable(rel);

	/* one build at a time; waits show up as heavyweight lock waits */
	if (nowait)
	{
		if (!ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
			return false;
	}
	else
		LockRelationOid(relid, ShareUpdateExclusiveLock);

	if (!bg_trigger_in_place(rel, &exists))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the bloomguard trigger of table \"%s\" is %s",
						RelationGetRelationName(rel),
						exists ? "not the one bloomguard_attach() creates, enabled ALWAYS" : "missing"),
				 errdetail("Without it the filter cannot see new keys."),
				 errhint("Run ALTER TABLE ... ENABLE ALWAYS TRIGGER bloomguard, or bloomguard_detach() and then bloomguard_attach().")));
	bg_keydesc_build(rel, &desc, false, true);

	/* read the registry again: a rebuild we waited for may have resized it */
	if (!bg_registry_lookup(relid, &reg_capacity, &reg_error_rate))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not guarded", RelationGetRelationName(rel))));

	/* defaults: the serving generation's sizing, else the registry's */
	cur_capacity = reg_capacity;
	cur_error_rate = reg_error_rate;
	ref.index = -1;
	ref.epoch = 0;
	slot = bg_slot_lock(&ref, relid, LW_SHARED);
	if (slot != NULL)
	{
		if (DsaPointerIsValid(slot->serving))
		{
			BloomFilter *f = dsa_get_address(bg_dsa(), slot->serving);

			cur_capacity = (int64) f->capacity;
			cur_error_rate = f->error_rate;
		}
		LWLockRelease(&slot->lock);
	}
	estimate = (uint64) bg_estimate_rows(rel);
	if (capacity <= 0)
	{
		capacity = cur_capacity;

		/*
		 * Grow with the table, if that fits: a filter at the old capacity
		 * (DEGRADED, over capacity) is better than none at all.
		 */
		if (estimate > (uint64) cur_capacity &&
			bloom_size(2.0 * estimate, isnan(error_rate) ? cur_error_rate : error_rate,
					   &nbits, &nhashes) &&
			bg_memory_fits(bloom_filter_bytes(nbits)))
			capacity = (int64) (2 * estimate);
	}
	if (isnan(error_rate))
		error_rate = cur_error_rate;
	bg_check_sizing(capacity, error_rate, &nbits, &nhashes, &bytes);

	if (slot == NULL)
	{
		bg_keydesc_identity(&desc, &key);
		(void) bg_slot_claim(relid, &key, BG_STATE_NOT_LOADED);
		(void) bg_slot_find(relid, &ref);
	}

	bg_build(rel, &desc, ref.index, (uint64) capacity, error_rate);

	if (capacity != reg_capacity || error_rate != reg_error_rate)
		bg_registry_update(relid, capacity, error_rate);
	return true;
}

/*
 * bloomguard_rebuild(rel regclass, capacity bigint, error_rate float8)
 */
Datum
bloomguard_rebuild(PG_FUNCTION_ARGS)
{
	Relation	rel;
	int64		capacity = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1);
	double		error_rate = PG_ARGISNULL(2) ? get_float8_nan() : PG_GETARG_FLOAT8(2);
	uint64		nbits;
	int			nhashes;
	Size		bytes;

	bg_require_loaded();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("relation must not be null")));

	/* validate explicit arguments before anything else */
	if (!PG_ARGISNULL(1) || !PG_ARGISNULL(2))
		bg_check_sizing(PG_ARGISNULL(1) ? 1000 : capacity,
						PG_ARGISNULL(2) ? 0.01 : error_rate,
						&nbits, &nhashes, &bytes);

	rel = relation_open(PG_GETARG_OID(0), AccessShareLock);
	bg_check_owner(rel);
	(void) bg_rebuild_guard(rel, capacity, error_rate, false);
	relation_close(rel, NoLock);
	PG_RETURN_VOID();
}
