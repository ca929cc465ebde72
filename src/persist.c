/*-------------------------------------------------------------------------
 *
 * persist.c
 *	  Filters saved at a clean shutdown and loaded at the next start, so
 *	  that a restart needs no rescan.
 *
 * pg_stat_statements is the model: the postmaster saves from an exit
 * callback registered in the shared memory startup hook, and loads in the
 * same hook.  Filters live in the main shared memory segment (shmem.c),
 * so the postmaster reaches them without attaching anything.  The file
 * (BG_SAVE_FILE) holds a header (magic, format version, the bit layout,
 * the system identifier, the identity of the run that wrote it, what kind
 * of shutdown it was, the LSN the filters are complete up to) and, per
 * filter, the table's identity (database, relation, relfilenode, key
 * identity), its sizing and seed, the bits, and a checksum.  It is written to a temporary file and renamed with
 * durable_rename(); it is removed as soon as it has been read, loaded or
 * not, so that a crash restart within the same postmaster, or any later
 * start, can never load it again.
 *
 * Why the save sees every key, and no key comes after it.  The callback
 * runs in the postmaster's proc_exit(0), which it reaches only through
 * ExitPostmaster(0), once every child process has exited; a crash
 * reinitialization calls shmem_exit(1), and the callback does nothing for
 * a non-zero code.  Keys are added by flushes (backends and background
 * workers, in transactions) and by redo (the startup process).  Before the
 * checkpointer is told to write the shutdown checkpoint (PM_SHUTDOWN),
 * the postmaster has waited for every backend, background worker and the
 * startup process to exit (PM_WAIT_BACKENDS); so every key that will ever
 * be added in this life of the server was added before the shutdown
 * checkpoint, and when the callback runs no process is left that could
 * add one: the bits it reads are final.  An immediate shutdown also exits
 * with code 0 but writes no shutdown checkpoint, so the callback reads
 * pg_control from disk and saves only if the checkpointer did write one:
 *
 *	- on a primary, state DB_SHUTDOWNED: the filters hold the key of every
 *	  row in the data files as of the shutdown checkpoint (each went through
 *	  a flush or a scan before it, by the argument in build.c), and the file
 *	  records that checkpoint's LSN;
 *	- on a standby, state DB_SHUTDOWNED_IN_RECOVERY after a restartpoint
 *	  (which may have been skipped, leaving an older checkpoint in
 *	  pg_control): the filters hold every key of the WAL replayed, and the
 *	  file records the replay position, read before the bits are copied
 *	  (nothing replays now anyway).  Only if the standby knew that every
 *	  flush up to there was logged (wal.c).
 *
 * Why a load is safe.  The load runs in the shared memory startup hook of
 * the postmaster, before the startup process or any backend exists, so no
 * write and no redo can come before it.  It loads only if pg_control, read
 * from disk, shows the very shutdown the file was written at:
 *
 *	- the same system identifier (not another cluster, not pg_upgrade);
 *	- a primary's file: state DB_SHUTDOWNED and the same checkpoint LSN.
 *	  Anything that changed the data files since writes WAL and moves the
 *	  checkpoint (a later start and shutdown, single-user mode, crash
 *	  recovery), rewrites pg_control (pg_resetwal, pg_rewind, which also
 *	  leaves state DB_IN_ARCHIVE_RECOVERY), or is a backup being restored
 *	  (a backup_label, or the state of a running server in a copied
 *	  pg_control);
 *	- a standby's file: state DB_SHUTDOWNED_IN_RECOVERY, and the
 *	  checkpoint's redo pointer at or before the file's LSN.  Replay starts
 *	  at the redo pointer and adds again every key after it (a key added
 *	  twice costs nothing), so once replay has passed the file's LSN the
 *	  filters are complete for every position it reaches; wal.c trusts
 *	  them only from then on, and skips the UNTRUST, FORGET and switch
 *	  records up to there, which the saved filters already reflect.  A
 *	  primary's file on a server that starts in recovery (a standby.signal
 *	  or recovery.signal) is treated the same way, and only if the WAL
 *	  carried keys when it was saved.
 *
 * The run identity tells copies of one data directory apart.  pg_control
 * cannot: two copies of one stopped cluster, each started, given the same
 * amount of work and stopped, have the same system identifier and state,
 * and can have the same checkpoint LSN, redo pointer, next XID and OID
 * (and a checkpoint time of one-second resolution).  So every start of
 * the postmaster (or of a standalone backend) draws a random 128-bit run
 * identity (pg_strong_random) and makes it durable in BG_RUN_FILE
 * (written to a temporary file, durable_rename()) before anything can be
 * saved; if that fails, nothing is saved in this run.  The saved file
 * records the identity of the run that wrote it, and a start loads it only
 * if it carries the identity that BG_RUN_FILE holds at that start, read
 * before the new one is drawn: the identity of the last run of this very
 * data directory.  A copy made while the server was stopped holds the
 * same identity and the same saved file, and loading it is right there
 * (the data files are those of the shutdown it was written at); from its
 * first start on, each copy has an identity of its own, so a file saved
 * by one copy is refused by every other, and by later runs of its own
 * copy.  A copy made while the server ran holds the identity of that run,
 * but the run has saved nothing yet, and the copied pg_control does not
 * show a clean shutdown anyway.
 *
 * The relfilenode and the key identity are checked against the catalogs
 * at the first lookup or flush of the table (slot.c): a table rewritten
 * since (say, in single-user mode without the library) is not trusted.
 * Filters of unlogged tables are never saved: crash recovery and promotion
 * reset their contents.
 *
 * Why this is one file of some 620 lines: 100 of them are the arguments
 * above; the save and the load write and read one file format, and
 * change together with it (BG_SAVE_VERSION).
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_control.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/ipc.h"

#include "bloomguard.h"

#define BG_SAVE_FILE		PGSTAT_STAT_PERMANENT_DIRECTORY "/bloomguard.filters"
#define BG_SAVE_MAGIC		0x42474653	/* "BGFS" */
#define BG_SAVE_VERSION		3	/* 2: the feed trigger's version; 3: the run identity */
#define BG_RUN_FILE			PGSTAT_STAT_PERMANENT_DIRECTORY "/bloomguard.run"
#define BG_RUN_MAGIC		0x42475249	/* "BGRI" */
#define BG_RUN_ID_BYTES		16

/* What kind of shutdown wrote the file. */
typedef enum BgSaveKind
{
	BG_SAVED_PRIMARY = 1,		/* a shutdown checkpoint */
	BG_SAVED_STANDBY = 2		/* a standby's shutdown restartpoint */
} BgSaveKind;

typedef struct BgSaveHeader
{
	uint32		magic;
	uint32		version;		/* BG_SAVE_VERSION */
	uint32		layout;			/* BLOOM_LAYOUT_VERSION */
	uint32		kind;			/* BgSaveKind */
	uint64		system_identifier;
	uint8		run_id[BG_RUN_ID_BYTES];	/* of the run that wrote the file */
	XLogRecPtr	lsn;			/* the filters are complete up to here */
	uint32		wal_log;		/* the WAL carried keys at lsn */
	uint32		nfilters;
	uint32		entry_size;		/* sizeof(BgSaveEntry) of the writer */
	uint32		filter_header;	/* offsetof(BloomFilter, words) of the writer */
	pg_crc32c	crc;			/* of the fields above */
} BgSaveHeader;

/* One filter; its nwords 64-bit words follow. */
typedef struct BgSaveEntry
{
	BgSavedGuard guard;
	uint64		capacity;
	double		error_rate;
	uint64		nbits;
	int32		nhashes;
	uint64		seed;
	uint64		n_added;
	uint64		bits_set;
	uint64		nwords;
	pg_crc32c	crc;			/* of the fields above and the words */
} BgSaveEntry;

/* The contents of BG_RUN_FILE. */
typedef struct BgRunFile
{
	uint32		magic;
	uint8		run_id[BG_RUN_ID_BYTES];
	pg_crc32c	crc;			/* of the fields above */
} BgRunFile;

static bool bg_load_attempted = false;

/* this run's identity, and whether BG_RUN_FILE durably holds it */
static uint8 bg_run_id[BG_RUN_ID_BYTES];
static bool bg_run_id_durable = false;

/*
 * Read pg_control from disk into *cf.  Returns false if it cannot be read
 * or is not valid; never raises an error (the postmaster calls this).
 */
static bool
bg_read_control(ControlFileData *cf)
{
	int			fd = OpenTransientFile(XLOG_CONTROL_FILE, O_RDONLY | PG_BINARY);
	int			nread;
	pg_crc32c	crc;

	if (fd < 0)
		return false;
	nread = read(fd, cf, sizeof(ControlFileData));
	CloseTransientFile(fd);
	if (nread != sizeof(ControlFileData))
		return false;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, cf, offsetof(ControlFileData, crc));
	FIN_CRC32C(crc);
	return EQ_CRC32C(crc, cf->crc) && cf->pg_control_version == PG_CONTROL_VERSION;
}

/* Does this file exist in the data directory? */
static bool
bg_file_exists(const char *name)
{
	struct stat st;

	return stat(name, &st) == 0;
}

/* Will this server start in recovery, replaying WAL it did not write? */
static bool
bg_starts_in_recovery(void)
{
	return bg_file_exists(STANDBY_SIGNAL_FILE) || bg_file_exists(RECOVERY_SIGNAL_FILE);
}

/*
 * Read the run identity that BG_RUN_FILE holds into id: the identity of
 * the last run of this data directory.  False if there is none, or it
 * cannot be read or is not valid; never raises an error.
 */
static bool
bg_read_run_id(uint8 *id)
{
	int			fd = OpenTransientFile(BG_RUN_FILE, O_RDONLY | PG_BINARY);
	BgRunFile	rf;
	int			nread;
	pg_crc32c	crc;

	if (fd < 0)
		return false;
	nread = read(fd, &rf, sizeof(rf));
	CloseTransientFile(fd);
	if (nread != sizeof(rf) || rf.magic != BG_RUN_MAGIC)
		return false;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &rf, offsetof(BgRunFile, crc));
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, rf.crc))
		return false;
	memcpy(id, rf.run_id, BG_RUN_ID_BYTES);
	return true;
}

/*
 * Draw this run's identity and make it durable in BG_RUN_FILE (see the
 * file header).  On failure, logs and leaves bg_run_id_durable false: then
 * nothing is saved at the exit of this run.
 */
static void
bg_new_run_id(void)
{
	char		tmp[MAXPGPATH];
	BgRunFile	rf;
	int			fd;

	bg_run_id_durable = false;
	if (!pg_strong_random(bg_run_id, BG_RUN_ID_BYTES))
	{
		ereport(LOG,
				(errmsg("bloomguard: could not generate a random run identity; no filter will be saved at shutdown")));
		return;
	}
	memset(&rf, 0, sizeof(rf));
	rf.magic = BG_RUN_MAGIC;
	memcpy(rf.run_id, bg_run_id, BG_RUN_ID_BYTES);
	INIT_CRC32C(rf.crc);
	COMP_CRC32C(rf.crc, &rf, offsetof(BgRunFile, crc));
	FIN_CRC32C(rf.crc);

	snprintf(tmp, sizeof(tmp), "%s.tmp", BG_RUN_FILE);
	fd = OpenTransientFile(tmp, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0 || write(fd, &rf, sizeof(rf)) != sizeof(rf))
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmp),
				 errdetail("No filter will be saved at shutdown.")));
		if (fd >= 0)
			CloseTransientFile(fd);
		unlink(tmp);
		return;
	}
	if (CloseTransientFile(fd) != 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not close file \"%s\": %m", tmp)));
		unlink(tmp);
		return;
	}
	/* fsyncs the file, and the directory after the rename */
	if (durable_rename(tmp, BG_RUN_FILE, LOG) != 0)
	{
		unlink(tmp);
		return;
	}
	bg_run_id_durable = true;
}

/*
 * Exit callback of the postmaster (or a standalone backend): save every
 * trusted filter, if this was a clean shutdown (see the file header).
 */
static void
bg_persist_save(int code, Datum arg)
{
	ControlFileData cf;
	BgSaveHeader hdr;
	const char *why = NULL;
	char		tmp[MAXPGPATH];
	FILE	   *file;
	Size		bytes = 0;
	int			nfilters = 0;
	int			i;

	if (code != 0 || !bg_loaded())
		return;					/* a crash: never */

	memset(&hdr, 0, sizeof(hdr));
	if (!bg_read_control(&cf))
		why = "pg_control could not be read";
	else if (cf.state == DB_SHUTDOWNED)
	{
		hdr.kind = BG_SAVED_PRIMARY;
		hdr.lsn = cf.checkPoint;
	}
	else if (cf.state == DB_SHUTDOWNED_IN_RECOVERY)
	{
		hdr.kind = BG_SAVED_STANDBY;
		hdr.lsn = GetXLogReplayRecPtr(NULL);
		if (!bg_wal_standby_saveable(&hdr.lsn))
			why = "the standby did not know that it received every key";
		else if (cf.checkPointCopy.redo > hdr.lsn)
			why = "the restartpoint is ahead of replay";
	}
	else
		why = "the server did not write a shutdown checkpoint";
	if (why == NULL && !bg_run_id_durable)
		why = "this run of the server has no identity in the data directory";

	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSavedGuard g;

		if (bg_slot_saveable(i, &g) != NULL)
			nfilters++;
	}
	if (nfilters == 0)
		return;
	if (why != NULL)
	{
		ereport(LOG,
				(errmsg("bloomguard: not saving %d filters: %s", nfilters, why)));
		return;
	}

	hdr.magic = BG_SAVE_MAGIC;
	hdr.version = BG_SAVE_VERSION;
	hdr.layout = BLOOM_LAYOUT_VERSION;
	hdr.system_identifier = cf.system_identifier;
	memcpy(hdr.run_id, bg_run_id, BG_RUN_ID_BYTES);
	hdr.wal_log = bg_wal_announced() ? 1 : 0;
	hdr.nfilters = nfilters;
	hdr.entry_size = sizeof(BgSaveEntry);
	hdr.filter_header = offsetof(BloomFilter, words);
	INIT_CRC32C(hdr.crc);
	COMP_CRC32C(hdr.crc, &hdr, offsetof(BgSaveHeader, crc));
	FIN_CRC32C(hdr.crc);

	snprintf(tmp, sizeof(tmp), "%s.tmp", BG_SAVE_FILE);
	file = AllocateFile(tmp, PG_BINARY_W);
	if (file == NULL)
		goto error;
	if (fwrite(&hdr, sizeof(hdr), 1, file) != 1)
		goto error;
	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSaveEntry e;
		BloomFilter *f;

		memset(&e, 0, sizeof(e));
		if ((f = bg_slot_saveable(i, &e.guard)) == NULL)
			continue;
		e.capacity = f->capacity;
		e.error_rate = f->error_rate;
		e.nbits = f->nbits;
		e.nhashes = f->nhashes;
		e.seed = f->seed;
		e.n_added = pg_atomic_read_u64(&f->n_added);
		e.bits_set = pg_atomic_read_u64(&f->bits_set);
		e.nwords = bloom_nwords(f->nbits);
		INIT_CRC32C(e.crc);
		COMP_CRC32C(e.crc, &e, offsetof(BgSaveEntry, crc));
		/* no process runs: the words can be read as plain memory */
		COMP_CRC32C(e.crc, f->words, e.nwords * sizeof(uint64));
		FIN_CRC32C(e.crc);
		if (fwrite(&e, sizeof(e), 1, file) != 1 ||
			fwrite(f->words, sizeof(uint64), e.nwords, file) != e.nwords)
			goto error;
		bytes += e.nwords * sizeof(uint64);
	}
	if (FreeFile(file) != 0)
	{
		file = NULL;
		goto error;
	}
	if (durable_rename(tmp, BG_SAVE_FILE, LOG) != 0)
	{
		unlink(tmp);
		return;
	}
	ereport(LOG,
			(errmsg("bloomguard: saved %d filters (%zu bytes) complete as of %X/%X",
					nfilters, bytes, LSN_FORMAT_ARGS(hdr.lsn))));
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", tmp)));
	if (file)
		FreeFile(file);
	unlink(tmp);
}

/*
 * Why the saved filters described by hdr must not be loaded, given
 * pg_control as read from disk and the identity of the last run of this
 * data directory (last_run, NULL if none could be read); NULL if they may.
 */
static const char *
bg_load_refusal(const BgSaveHeader *hdr, const uint8 *last_run)
{
	ControlFileData cf;
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, hdr, offsetof(BgSaveHeader, crc));
	FIN_CRC32C(crc);
	if (hdr->magic != BG_SAVE_MAGIC || !EQ_CRC32C(crc, hdr->crc))
		return "the file is not valid";
	if (hdr->version != BG_SAVE_VERSION || hdr->layout != BLOOM_LAYOUT_VERSION ||
		hdr->entry_size != sizeof(BgSaveEntry) ||
		hdr->filter_header != offsetof(BloomFilter, words))
		return "the file was written by another version of bloomguard";
	if (!bg_read_control(&cf))
		return "pg_control could not be read";
	if (cf.system_identifier != hdr->system_identifier)
		return "the file belongs to another database system";
	if (bg_file_exists(BACKUP_LABEL_FILE))
		return "a backup is being restored";
	if (hdr->kind == BG_SAVED_PRIMARY)
	{
		if (cf.state != DB_SHUTDOWNED)
			return "the server did not shut down cleanly since the file was written";
		if (cf.checkPoint != hdr->lsn)
			return "the last checkpoint is not the one the file was written at";
		if (bg_starts_in_recovery() && !hdr->wal_log)
			return "the server starts in recovery, and the WAL did not carry keys when the file was written";
	}
	else if (hdr->kind == BG_SAVED_STANDBY)
	{
		if (cf.state != DB_SHUTDOWNED_IN_RECOVERY)
			return "the standby did not shut down cleanly since the file was written";
		if (cf.checkPointCopy.redo > hdr->lsn)
			return "replay would start after the position the file was written at";
	}
	else
		return "the file is not valid";
	/* last: pg_control cannot tell copies of this data directory apart */
	if (last_run == NULL)
		return "the identity of the last run of this data directory could not be read";
	if (memcmp(hdr->run_id, last_run, BG_RUN_ID_BYTES) != 0)
		return "the file was not written by the last run of this data directory (it comes from a copy of it)";
	return NULL;
}

/*
 * Load the filters of the file into shared memory, after the header was
 * accepted; returns how many were loaded.  Stops at the first entry that
 * is not valid (keeping the ones before, each checked on its own).
 */
static int
bg_load_entries(FILE *file, const BgSaveHeader *hdr)
{
	int			loaded = 0;
	uint32		n;

	for (n = 0; n < hdr->nfilters; n++)
	{
		BgSaveEntry e;
		BloomFilter *f;
		pg_crc32c	crc;
		Size		bytes;

		if (fread(&e, sizeof(e), 1, file) != 1 ||
			e.nbits < 1 || e.nbits > BLOOM_MAX_BITS ||
			e.nhashes < 1 || e.nhashes > BLOOM_MAX_HASHES ||
			e.nwords != bloom_nwords(e.nbits) ||
			(e.nbits > BLOOM_BLOCK_BITS && e.nbits % BLOOM_BLOCK_BITS != 0) ||
			e.capacity < 1 || !(e.error_rate > 0 && e.error_rate < 1))
		{
			ereport(LOG,
					(errmsg("bloomguard: the file of saved filters is not valid after %d filters", loaded)));
			break;
		}
		bytes = bloom_filter_bytes(e.nbits);
		f = bg_slot_restore(&e.guard, bytes);
		if (f == NULL)
		{
			ereport(LOG,
					(errmsg("bloomguard: no room to load the saved filter of relation %u in database %u",
							e.guard.relid, e.guard.dbid),
					 errdetail("bloomguard.max_guards, bloomguard.max_memory or bloomguard.max_guard_memory is smaller than at the last shutdown.")));
			if (fseeko(file, (off_t) (e.nwords * sizeof(uint64)), SEEK_CUR) != 0)
				break;
			continue;
		}
		bloom_init(f, e.capacity, e.error_rate, e.nbits, e.nhashes, e.seed);
		INIT_CRC32C(crc);
		COMP_CRC32C(crc, &e, offsetof(BgSaveEntry, crc));
		if (fread(f->words, sizeof(uint64), e.nwords, file) == e.nwords)
			COMP_CRC32C(crc, f->words, e.nwords * sizeof(uint64));
		FIN_CRC32C(crc);
		if (!EQ_CRC32C(crc, e.crc))
		{
			bg_slot_restore_abandon(&e.guard);
			ereport(LOG,
					(errmsg("bloomguard: the saved filter of relation %u in database %u has a wrong checksum",
							e.guard.relid, e.guard.dbid)));
			break;
		}
		pg_atomic_write_u64(&f->n_added, e.n_added);
		pg_atomic_write_u64(&f->bits_set, e.bits_set);
		loaded++;
	}
	return loaded;
}

/*
 * Load the filters saved at the last clean shutdown, if every check holds
 * (see the file header), and remove the file; last_run is the identity of
 * the last run of this data directory (NULL if none).
 */
static void
bg_persist_load(const uint8 *last_run)
{
	FILE	   *file;
	BgSaveHeader hdr;
	const char *why;
	int			loaded = 0;

	file = AllocateFile(BG_SAVE_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", BG_SAVE_FILE)));
		return;
	}
	if (fread(&hdr, sizeof(hdr), 1, file) != 1)
		why = "the file is not valid";
	else
		why = bg_load_refusal(&hdr, last_run);
	if (why == NULL)
	{
		loaded = bg_load_entries(file, &hdr);
		/* filters complete as of hdr.lsn, and replay will go on from before it */
		if (loaded > 0 && (hdr.kind == BG_SAVED_STANDBY || bg_starts_in_recovery()))
			bg_wal_loaded(hdr.lsn);
	}
	FreeFile(file);
	/* never again: not after a crash, not at any later start */
	if (unlink(BG_SAVE_FILE) != 0)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m", BG_SAVE_FILE)));
	if (why != NULL)
		ereport(LOG,
				(errmsg("bloomguard: ignoring the filters saved at the last shutdown: %s", why)));
	else
		ereport(LOG,
				(errmsg("bloomguard: loaded %d of %u filters saved at the last shutdown, complete as of %X/%X",
						loaded, hdr.nfilters, LSN_FORMAT_ARGS(hdr.lsn))));
}

/*
 * Part of module.c's shmem_startup_hook, after shmem.c's and wal.c's: in
 * the postmaster (or a standalone backend), once: read the last run's
 * identity, load the saved filters, and draw this run's identity; then
 * (again after each crash reinitialization, which runs the exit
 * callbacks) arrange to save the filters at exit.
 */
void
bg_persist_shmem_startup(void)
{
	if (IsUnderPostmaster)
		return;
	if (!bg_load_attempted)
	{
		uint8		last_run[BG_RUN_ID_BYTES];
		bool		have_last = bg_read_run_id(last_run);

		bg_load_attempted = true;
		bg_persist_load(have_last ? last_run : NULL);
		/* pg_upgrade's servers (binary-upgrade mode) write nothing of ours */
		if (!IsBinaryUpgrade)
			bg_new_run_id();
	}
	on_shmem_exit(bg_persist_save, (Datum) 0);
}
