/*-------------------------------------------------------------------------
 *
 * wal.c
 *	  bloomguard's WAL resource manager: the feed through the WAL, to hot
 *	  standbys and through recovery, and the bloomguard.wal_log switch.
 *
 * The records (resource manager "bloomguard", id BG_RMGR_ID):
 *
 *	KEYS		a flush of one table's keys (feedbuffer.c): their per-column
 *				digests, which do not depend on any filter's seed.  Written
 *				before the commit record.  Redo adds them to every live
 *				generation of the table's guard on this node, and skips a
 *				table with no guard here.
 *	UNTRUST		what makes a guard untrusted on the primary: a trigger
 *				change, written at PRE_COMMIT next to pending.c's untrust,
 *				before the commit record; or a key that cannot be hashed
 *				any more, written by the trigger when it meets the first
 *				such row (once per key description), before that row's
 *				transaction can commit.
 *	FORGET		a guard detached or its table dropped, or every guard of a
 *				database (DROP EXTENSION, DROP DATABASE): written at
 *				PRE_COMMIT (and PRE_PREPARE).  Redo frees the guard's slot.
 *	WAL_LOG_ON, WAL_LOG_OFF
 *				bloomguard.wal_log took effect: from this record on, every
 *				flush writes a KEYS record (ON), or none does (OFF).  An ON
 *				record is repeated (a "heartbeat") by the launcher after
 *				other WAL was written, so that a standby started since can
 *				learn that the primary logs keys without waiting for a write
 *				to a guarded table.
 *
 * Every record begins with the database and relation OIDs and a format
 * version, so that redo can tell which guard a record it cannot apply was
 * about (wal_internal.h has the formats).  Redo is in walredo.c; the part
 * of it that changes the state below (the switch) is here, with the rest
 * of the state.  That state is why the rest is one file of some 670
 * lines: the writers of records, the switch, the state file and what a
 * standby believes all act on "announced" and "belief" under the wal lock,
 * and the proof below is about them together.
 *
 * The switch.  Backends reload bloomguard.wal_log at different moments, so
 * a standby that trusted keys "from the ON record on" could miss the keys
 * of a backend that flushed without logging after the record.  So the
 * setting a flush obeys is not the backend's copy but one flag in shared
 * memory, "announced": the state the WAL stream carries.  It changes only
 * under the exclusive wal lock, together with the WAL record that says so,
 * and every flush decides whether to log, and logs, under the same lock in
 * shared mode.  The value wanted is the postmaster's: its assign hook
 * copies bloomguard.wal_log into shared memory ("requested") when the
 * configuration is (re)loaded, and the first flush (or the launcher) that
 * sees requested and announced differ makes the switch.  Proof that no key
 * of a row a standby can see is missed while it trusts a filter:
 *
 *	- A standby trusts (and starts a build) only after replaying an ON or
 *	  KEYS record, and stops trusting at an OFF record (redo marks every
 *	  guard untrusted, and a build running then is not trusted either).
 *	- Take a row whose key has no KEYS record, and a standby build that
 *	  began (published its generation) after an ON or KEYS record at LSN
 *	  L, with no OFF record between L and the row's commit.  The row's
 *	  flush F decided not to log, under the lock, so F came before the
 *	  switch that wrote the last ON record before L (or after an OFF
 *	  record, which is excluded): the switch waited for F to release the
 *	  lock.  The row's heap insert precedes F, so its WAL record precedes
 *	  the ON record, and replay applied it before the build began: the
 *	  scan takes the row (build.c).  Every row inserted after the build
 *	  began therefore has a KEYS record, which redo applies to the
 *	  building generation before the row's commit record makes it visible.
 *	- A restart of the primary resets shared memory.  "announced" is kept
 *	  in a file too (BG_WAL_STATE_FILE): written before an ON record is
 *	  inserted, and after an OFF record is flushed, so after a crash it is
 *	  never OFF while the WAL stream ends in ON.  A primary starting with
 *	  bloomguard.wal_log off after it was on therefore writes an OFF record
 *	  before its first flush; a cluster that never turned it on writes no
 *	  record at all, so nodes without the library are not affected.
 *	- A promoted standby continues from what it replayed: redo keeps
 *	  "announced" (and the file) in step with the records, and the first
 *	  flush after promotion switches if the setting differs.
 *
 * Filters saved at a standby's shutdown (persist.c) are complete as of the
 * replay position they were saved at; when they are loaded, records up to
 * that position were applied before the save, so their UNTRUST, FORGET and
 * state changes are skipped, and nothing is trusted until replay has
 * passed it again.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>
#include <fcntl.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "wal_internal.h"

/* What a standby knows about the primary's logging. */
typedef enum BgWalBelief
{
	BG_BELIEF_UNKNOWN = 0,		/* no record yet: trust nothing */
	BG_BELIEF_ON,				/* every flush since is logged */
	BG_BELIEF_OFF				/* flushes are not logged: trust nothing */
} BgWalBelief;

/*
 * Shared state.  lock (the "wal lock") protects announced and
 * heartbeat_end, and is held exclusively to change belief, an atomic that
 * lookups read without the lock (a stale ON is harmless: an OFF record's
 * redo marks every guard untrusted before any row written after it can
 * become visible); requested is written by the postmaster only,
 * atomically; skip_upto and trust_from are set by the postmaster before
 * any other process runs; trust_passed only goes from false to true.
 */
typedef struct BgWalShared
{
	LWLock	   *lock;
	pg_atomic_uint32 requested; /* the postmaster's bloomguard.wal_log */
	bool		announced;		/* the state the WAL stream carries */
	XLogRecPtr	heartbeat_end;	/* end of our last ON record */
	pg_atomic_uint32 belief;	/* standby: what replay has shown (BgWalBelief) */
	XLogRecPtr	skip_upto;		/* records up to here predate loaded filters */
	XLogRecPtr	trust_from;		/* replay must pass it before trusting */
	pg_atomic_uint32 trust_passed;	/* replay has passed trust_from */
} BgWalShared;

/* The last state written to the WAL, kept across restarts. */
#define BG_WAL_STATE_FILE		"bloomguard.wal_state"
#define BG_WAL_STATE_MAGIC		0x42475753	/* "BGWS" */

typedef struct BgWalStateFile
{
	uint32		magic;
	uint32		version;		/* BG_WAL_FORMAT_VERSION */
	uint32		on;
	pg_crc32c	crc;			/* of the fields above */
} BgWalStateFile;

static BgWalShared *bg_wal = NULL;

/* bloomguard.wal_log (bg_wal_init() defines it) */
static bool bg_wal_log = false;

static void bg_wal_log_assign(bool newval, void *extra);

static RmgrData bg_rmgr = {
	.rm_name = BG_RMGR_NAME,
	.rm_redo = bg_rmgr_redo,
	.rm_desc = bg_rmgr_desc,
	.rm_identify = bg_rmgr_identify,
};

/* Fill a record header. */
static void
bg_wal_header(xl_bloomguard_header *h, Oid dbid, Oid relid)
{
	memset(h, 0, sizeof(*h));
	h->dbid = dbid;
	h->relid = relid;
	h->version = BG_WAL_FORMAT_VERSION;
	h->layout = BLOOM_LAYOUT_VERSION;
}

/*
 * Read the last state written to the WAL from its file.  No file: off
 * (the cluster never logged keys).  A file we cannot read: on, so that a
 * primary with the setting off says so in the WAL before its first flush.
 */
static bool
bg_wal_read_state(void)
{
	BgWalStateFile f;
	pg_crc32c	crc;
	int			fd = OpenTransientFile(BG_WAL_STATE_FILE, O_RDONLY | PG_BINARY);
	int			nread;

	if (fd < 0)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open file \"%s\": %m", BG_WAL_STATE_FILE)));
		return errno != ENOENT;
	}
	nread = read(fd, &f, sizeof(f));
	CloseTransientFile(fd);
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &f, offsetof(BgWalStateFile, crc));
	FIN_CRC32C(crc);
	if (nread != sizeof(f) || f.magic != BG_WAL_STATE_MAGIC ||
		f.version != BG_WAL_FORMAT_VERSION || !EQ_CRC32C(crc, f.crc))
	{
		ereport(LOG,
				(errmsg("bloomguard: ignoring invalid file \"%s\"", BG_WAL_STATE_FILE),
				 errdetail("bloomguard.wal_log will be written to the WAL again before the next flush.")));
		return true;
	}
	return f.on != 0;
}

/*
 * Write the last state written to the WAL to its file, durably.  Failures
 * are reported at elevel; returns whether it worked.
 */
static bool
bg_wal_write_state(bool on, int elevel)
{
	BgWalStateFile f;
	char		tmp[MAXPGPATH];
	int			fd;

	memset(&f, 0, sizeof(f));
	f.magic = BG_WAL_STATE_MAGIC;
	f.version = BG_WAL_FORMAT_VERSION;
	f.on = on ? 1 : 0;
	INIT_CRC32C(f.crc);
	COMP_CRC32C(f.crc, &f, offsetof(BgWalStateFile, crc));
	FIN_CRC32C(f.crc);

	snprintf(tmp, sizeof(tmp), "%s.tmp", BG_WAL_STATE_FILE);
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not create file \"%s\": %m", tmp)));
		return false;
	}
	errno = 0;
	if (write(fd, &f, sizeof(f)) != sizeof(f) || pg_fsync(fd) != 0)
	{
		int			save_errno = errno ? errno : ENOSPC;

		CloseTransientFile(fd);
		errno = save_errno;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp)));
		return false;
	}
	if (CloseTransientFile(fd) != 0)
	{
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
		return false;
	}
	return durable_rename(tmp, BG_WAL_STATE_FILE, elevel) == 0;
}

/* Ask for our state and the wal lock (module.c's shmem_request_hook). */
void
bg_wal_shmem_request(void)
{
	RequestAddinShmemSpace(MAXALIGN(sizeof(BgWalShared)));
	RequestNamedLWLockTranche("bloomguard wal", 1);
}

/*
 * Create our state (module.c's shmem_startup_hook, after shmem.c's).  In
 * the postmaster (or a standalone backend) the state starts from the
 * file: that is the state the WAL stream carries after any crash.
 */
void
bg_wal_shmem_startup(void)
{
	bool		found;

	bg_wal = NULL;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bg_wal = ShmemInitStruct("bloomguard wal", sizeof(BgWalShared), &found);
	if (!found)
	{
		memset(bg_wal, 0, sizeof(BgWalShared));
		bg_wal->lock = &(GetNamedLWLockTranche("bloomguard wal"))->lock;
		pg_atomic_init_u32(&bg_wal->requested, bg_wal_log ? 1 : 0);
		bg_wal->announced = bg_wal_read_state();
		bg_wal->heartbeat_end = InvalidXLogRecPtr;
		pg_atomic_init_u32(&bg_wal->belief, BG_BELIEF_UNKNOWN);
		bg_wal->skip_upto = InvalidXLogRecPtr;
		bg_wal->trust_from = InvalidXLogRecPtr;
		pg_atomic_init_u32(&bg_wal->trust_passed, 1);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Register the resource manager (which only a preloaded library may do)
 * and define bloomguard.wal_log; called from _PG_init while preloading.
 */
void
bg_wal_init(void)
{
	RegisterCustomRmgr(BG_RMGR_ID, &bg_rmgr);

	DefineCustomBoolVariable("bloomguard.wal_log",
							 "Writes the feed's keys to the WAL, so that standbys can trust their filters.",
							 "Every node that replays this server's WAL (standbys, and this server "
							 "itself in recovery) must then have bloomguard in "
							 "shared_preload_libraries. While it is off, no standby trusts a filter.",
							 &bg_wal_log,
							 false,
							 PGC_SIGHUP,
							 0,
							 NULL, bg_wal_log_assign, NULL);
}

/*
 * Assign hook of bloomguard.wal_log.  Only the postmaster (or a standalone
 * backend) passes the value on: it reloads the configuration first, and
 * one process's value is the one every flush is brought in line with.
 */
static void
bg_wal_log_assign(bool newval, void *extra)
{
	if (!IsUnderPostmaster && bg_wal != NULL)
		pg_atomic_write_u32(&bg_wal->requested, newval ? 1 : 0);
}

/* Write a WAL_LOG_ON or WAL_LOG_OFF record; returns its end. */
static XLogRecPtr
bg_wal_log_state(bool on, BgWalStateReason reason)
{
	xl_bloomguard_state xlrec;

	bg_wal_header(&xlrec.h, InvalidOid, InvalidOid);
	xlrec.reason = (uint8) reason;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	if (reason == BG_STATE_HEARTBEAT)
		XLogSetRecordFlags(XLOG_MARK_UNIMPORTANT);
	return XLogInsert(BG_RMGR_ID, on ? XLOG_BLOOMGUARD_WAL_LOG_ON :
					  XLOG_BLOOMGUARD_WAL_LOG_OFF);
}

/*
 * Bring the state the WAL carries in line with bloomguard.wal_log, if
 * they differ: the one moment at which the setting takes effect for every
 * flush (see the file header).  A primary only.
 */
static void
bg_wal_sync(void)
{
	bool		want;
	XLogRecPtr	lsn;

	if (bg_wal == NULL || RecoveryInProgress())
		return;
	want = pg_atomic_read_u32(&bg_wal->requested) != 0;
	if (want == bg_wal->announced)	/* a hint; checked again under the lock */
		return;
	LWLockAcquire(bg_wal->lock, LW_EXCLUSIVE);
	want = pg_atomic_read_u32(&bg_wal->requested) != 0;
	if (want != bg_wal->announced)
	{
		if (want)
		{
			/* the file first: it must never say off while the WAL says on */
			(void) bg_wal_write_state(true, ERROR);
			lsn = bg_wal_log_state(true, BG_STATE_SWITCH);
			bg_wal->announced = true;
			bg_wal->heartbeat_end = lsn;
		}
		else
		{
			lsn = bg_wal_log_state(false, BG_STATE_SWITCH);
			XLogFlush(lsn);
			bg_wal->announced = false;
			(void) bg_wal_write_state(false, ERROR);
		}
		ereport(LOG,
				(errmsg("bloomguard: bloomguard.wal_log is %s from WAL position %X/%X on",
						want ? "on" : "off", LSN_FORMAT_ARGS(lsn))));
	}
	LWLockRelease(bg_wal->lock);
}

/*
 * The launcher's heartbeat: while keys are logged, repeat the ON record
 * once other WAL has been written since the last one, so that a standby
 * started meanwhile learns it can trust its filters.  An idle server
 * writes nothing (the record is marked unimportant).
 */
void
bg_wal_heartbeat(void)
{
	if (bg_wal == NULL || RecoveryInProgress())
		return;
	bg_wal_sync();
	LWLockAcquire(bg_wal->lock, LW_EXCLUSIVE);
	if (bg_wal->announced && GetXLogInsertRecPtr() > bg_wal->heartbeat_end)
		bg_wal->heartbeat_end = bg_wal_log_state(true, BG_STATE_HEARTBEAT);
	LWLockRelease(bg_wal->lock);
}

/*
 * Begin a record of the feed: if keys are logged, return true holding the
 * wal lock in shared mode (release it with LWLockRelease(bg_wal->lock)
 * once the record is inserted); otherwise return false.  The decision is
 * taken under the lock, which is what the switch's proof needs.
 */
static bool
bg_wal_logging(void)
{
	if (bg_wal == NULL)
		return false;
	bg_wal_sync();
	LWLockAcquire(bg_wal->lock, LW_SHARED);
	if (bg_wal->announced)
		return true;
	LWLockRelease(bg_wal->lock);
	return false;
}

/*
 * Write the KEYS record of one flush (feedbuffer.c), if keys are logged: the
 * digests of nkeys keys for every generation and nmoved for a generation
 * being built, ncols each.
 */
void
bg_wal_log_keys(Oid relid, int ncols, const uint64 *keys, int nkeys,
				const uint64 *moved, int nmoved)
{
	xl_bloomguard_keys xlrec;

	if (!bg_wal_logging())
		return;
	bg_wal_header(&xlrec.h, MyDatabaseId, relid);
	xlrec.ncols = (uint16) ncols;
	xlrec.flags = 0;
	xlrec.nkeys = (uint32) nkeys;
	xlrec.nmoved = (uint32) nmoved;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	if (nkeys > 0)
		XLogRegisterData((char *) keys, (Size) nkeys * ncols * sizeof(uint64));
	if (nmoved > 0)
		XLogRegisterData((char *) moved, (Size) nmoved * ncols * sizeof(uint64));
	(void) XLogInsert(BG_RMGR_ID, XLOG_BLOOMGUARD_KEYS);
	LWLockRelease(bg_wal->lock);
}

/*
 * Write an UNTRUST record for a guard of this database (InvalidOid: every
 * guard of it), if keys are logged.  While they are not, no standby trusts
 * a filter anyway.
 */
void
bg_wal_log_untrust(Oid relid, const char *why)
{
	xl_bloomguard_untrust xlrec;

	if (!bg_wal_logging())
		return;
	bg_wal_header(&xlrec.h, MyDatabaseId, relid);
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, offsetof(xl_bloomguard_untrust, why));
	XLogRegisterData((char *) why, strlen(why) + 1);
	(void) XLogInsert(BG_RMGR_ID, XLOG_BLOOMGUARD_UNTRUST);
	LWLockRelease(bg_wal->lock);
}

/*
 * Write a FORGET record: a guard of database dbid went away (InvalidOid:
 * every guard of it), if keys are logged.
 */
void
bg_wal_log_forget(Oid dbid, Oid relid)
{
	xl_bloomguard_header xlrec;

	if (!bg_wal_logging())
		return;
	bg_wal_header(&xlrec, dbid, relid);
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, sizeof(xlrec));
	(void) XLogInsert(BG_RMGR_ID, XLOG_BLOOMGUARD_FORGET);
	LWLockRelease(bg_wal->lock);
}

/* Mark a guard of this database untrusted here and, in the WAL, on standbys. */
void
bg_wal_untrust(Oid relid, const char *why)
{
	bg_untrust(relid, why);
	bg_wal_log_untrust(relid, why);
}

/*
 * May this node trust its filters, as far as the feed through the WAL
 * goes?  A primary always; a standby only while it knows that the primary
 * logs every flush, and once replay has passed the position its loaded
 * filters were saved at.
 */
bool
bg_wal_standby_trusts(void)
{
	if (!RecoveryInProgress())
		return true;
	if (bg_wal == NULL)
		return false;
	if (pg_atomic_read_u32(&bg_wal->trust_passed) == 0)
	{
		if (GetXLogReplayRecPtr(NULL) < bg_wal->trust_from)
			return false;
		pg_atomic_write_u32(&bg_wal->trust_passed, 1);
	}
	return pg_atomic_read_u32(&bg_wal->belief) == BG_BELIEF_ON;
}

/*
 * Why a standby does not trust its filters now (for the health view and
 * the worker), or NULL if it does.
 */
const char *
bg_wal_standby_why_not(void)
{
	BgWalBelief belief;

	if (bg_wal_standby_trusts())
		return NULL;
	if (bg_wal == NULL)
		return "the standby does not receive keys";
	belief = (BgWalBelief) pg_atomic_read_u32(&bg_wal->belief);
	if (belief == BG_BELIEF_OFF)
		return "bloomguard.wal_log is off on the primary";
	if (belief == BG_BELIEF_UNKNOWN)
		return "no bloomguard WAL record replayed yet (bloomguard.wal_log must be on at the primary)";
	return "replay has not yet reached the position the filters were saved at";
}

/*
 * A standby build publishes its generation only while the standby trusts
 * the feed, and holds the wal lock meanwhile, so that an OFF record
 * replayed at the same time sees the generation and untrusts it.  Returns
 * false (and takes no lock) if it may not start.  Call
 * bg_wal_end_standby_build() after publishing.
 */
bool
bg_wal_begin_standby_build(void)
{
	if (!bg_wal_standby_trusts())
		return false;
	LWLockAcquire(bg_wal->lock, LW_SHARED);
	if (pg_atomic_read_u32(&bg_wal->belief) != BG_BELIEF_ON)
	{
		LWLockRelease(bg_wal->lock);
		return false;
	}
	return true;
}

/* Release what bg_wal_begin_standby_build() took. */
void
bg_wal_end_standby_build(void)
{
	LWLockRelease(bg_wal->lock);
}

/*
 * Filters were loaded that are complete as of lsn, on a node whose WAL up
 * to there carried keys (persist.c, in the postmaster before any other
 * process runs): the records up to lsn were applied before they were
 * saved, and the primary logged keys at lsn.
 */
void
bg_wal_loaded(XLogRecPtr lsn)
{
	pg_atomic_write_u32(&bg_wal->belief, BG_BELIEF_ON);
	bg_wal->skip_upto = lsn;
	bg_wal->trust_from = lsn;
	pg_atomic_write_u32(&bg_wal->trust_passed, 0);
}

/*
 * Did this standby, at shutdown, know that every flush up to the end of
 * replay (*lsn) was logged?  Only then may its filters be saved
 * (persist.c, in the postmaster's exit callback).  Filters loaded at this
 * start that replay has not caught up with are complete as of the
 * position they were saved at, which *lsn is moved up to.
 */
bool
bg_wal_standby_saveable(XLogRecPtr *lsn)
{
	if (bg_wal == NULL || pg_atomic_read_u32(&bg_wal->belief) != BG_BELIEF_ON)
		return false;
	if (pg_atomic_read_u32(&bg_wal->trust_passed) == 0)
		*lsn = Max(*lsn, bg_wal->trust_from);
	return true;
}

/* Does the WAL this node writes (or last replayed) carry keys? */
bool
bg_wal_announced(void)
{
	return bg_wal != NULL && bg_wal->announced;
}

/*
 * Redo of a record that shows the state the WAL carries: update what this
 * node knows of it (and its file), and, unless the record predates loaded
 * filters, the standby's belief.  Caller holds the wal lock exclusively.
 */
static void
bg_redo_state(bool on, bool current)
{
	if (bg_wal->announced != on)
	{
		bg_wal->announced = on;
		(void) bg_wal_write_state(on, LOG);
	}
	if (!current)
		return;
	if (on)
		pg_atomic_write_u32(&bg_wal->belief, BG_BELIEF_ON);
	else if (pg_atomic_read_u32(&bg_wal->belief) != BG_BELIEF_OFF)
	{
		pg_atomic_write_u32(&bg_wal->belief, BG_BELIEF_OFF);
		/* under the lock: a standby build publishing now sees it (above) */
		bg_untrust_all("bloomguard.wal_log is off on the primary");
	}
}

/*
 * Redo (walredo.c) begins a record ending at end: false if there is no
 * state to apply it to (not preloaded); *current is false for a record
 * that predates the filters loaded at this start (they have it already).
 */
bool
bg_wal_redo_begin(XLogRecPtr end, bool *current)
{
	if (bg_wal == NULL)
		return false;
	*current = end > bg_wal->skip_upto;
	return true;
}

/* Redo of WAL_LOG_ON (on) or WAL_LOG_OFF: bg_redo_state() under the lock. */
void
bg_wal_redo_switch(bool on, bool current)
{
	LWLockAcquire(bg_wal->lock, LW_EXCLUSIVE);
	bg_redo_state(on, current);
	LWLockRelease(bg_wal->lock);
}

/*
 * Redo of KEYS: the record says the primary logs keys, as an ON record
 * would, if this node did not know it yet.
 */
void
bg_wal_redo_keys_seen(bool current)
{
	/* redo alone changes these during recovery: no lock to see no change */
	if (!bg_wal->announced ||
		(current && pg_atomic_read_u32(&bg_wal->belief) != BG_BELIEF_ON))
		bg_wal_redo_switch(true, current);
}
