/*-------------------------------------------------------------------------
 *
 * bloomguard.c
 *	  Module entry point and settings.
 *
 * bloomguard keeps a Bloom filter of a table's primary keys in shared
 * memory, so that lookups of keys that do not exist can be answered
 * without touching the index.  The pieces, one file each, from the bottom
 * floor up (a file calls only into the ones above it in this list):
 *
 *	filter.c	the pure filter: the blocked layout, sizing, hashing, atomic
 *				bits, health formulas
 *	shmem.c		shared memory: the guard slot table, filter memory and caps,
 *				and the locking rules
 *	slot.c		using one guard's slot: ask, feed, probe, copy out, untrust
 *	wal.c		the WAL resource manager: key records for standbys and
 *				recovery, redo, and the bloomguard.wal_log switch
 *	persist.c	filters saved at a clean shutdown, loaded at the next start
 *	feed.c		this backend's buffer of keys the trigger collected, and
 *				when it is flushed into the filters (and the WAL)
 *	registry.c	the bloomguard_guards configuration table; ownership checks
 *	pending.c	what a transaction does to guards when it commits
 *	statement.c	which of this backend's own writes a lookup might see before
 *				their keys reach the filter
 *	keys.c		describing and hashing a table's primary key
 *	feedstate.c	the feed trigger as the catalogs have it: is it attach's, and
 *				the versions of its row and its function's
 *	keycache.c	the backend-wide cache of key descriptions
 *	sizing.c	validating and choosing a filter's capacity
 *	partition.c	partitioned tables: leaves, routing a key to one, new and
 *				detached partitions
 *	coverage.c	noticing the feed trigger change, and drops
 *	build.c		building a generation online from a table scan, with
 *				parallel workers; rebuilds
 *	trigger.c	the feed trigger
 *	args.c		turning key arguments into key values
 *	source.c	the authoritative lookup: index probe or SQL
 *	trust.c		the trust rule: when a filter may answer; asking it
 *	lookup.c	guarded_exists(), bloomguard_check()
 *	guardscan.c	the BloomGuard custom scan: the filter asked before an index
 *				scan
 *	planner.c	the planner path: wrapping primary key index scans
 *	maintain.c	the background worker's pass over a database's guards
 *	worker.c	the background workers: launcher, database worker, attach's
 *				feed worker
 *	attach.c	bloomguard_attach(), _detach(), _rebuild()
 *	stats.c		the health view's numbers, probes, counter resets
 *
 * compat.h hides the differences between PostgreSQL versions.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "bloomguard.h"

PG_MODULE_MAGIC;

int			bg_partition_lookup = BG_PARTITION_LOOKUP_ROUTE;

static const struct config_enum_entry bg_partition_lookup_options[] = {
	{"route", BG_PARTITION_LOOKUP_ROUTE, false},
	{"ask_all", BG_PARTITION_LOOKUP_ASK_ALL, false},
	{NULL, 0, false}
};
int			bg_max_memory_mb = BG_MAX_MEMORY_DEFAULT;
int			bg_max_guard_memory_mb = BG_MAX_GUARD_MEMORY_DEFAULT;
int			bg_max_guards = BG_MAX_GUARDS_DEFAULT;
double		bg_default_error_rate = BG_ERROR_RATE_DEFAULT;
int			bg_maintenance_interval = BG_MAINTENANCE_INTERVAL_DEFAULT;
bool		bg_auto_rebuild = true;
bool		bg_background_worker = true;
bool		bg_wal_log = false;

void		_PG_init(void);

/* Define the settings and, while preloading, install the hooks and workers. */
void
_PG_init(void)
{
	bg_trust_init();

	DefineCustomRealVariable("bloomguard.default_error_rate",
							 "Target false-positive rate of new filters when none is given.",
							 NULL,
							 &bg_default_error_rate,
							 BG_ERROR_RATE_DEFAULT,
							 BG_ERROR_RATE_MIN,
							 BG_ERROR_RATE_MAX,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("bloomguard.partition_lookup",
							 "How guarded_exists() on a partitioned table finds the leaf to ask.",
							 "route (the default) asks the one leaf the key belongs in; ask_all "
							 "asks every leaf's filter and reads the leaves that may hold the key. "
							 "A developer setting, kept to measure one against the other.",
							 &bg_partition_lookup,
							 BG_PARTITION_LOOKUP_ROUTE,
							 bg_partition_lookup_options,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	/* plans are copied and read back by name, in any backend */
	bg_guard_scan_register();

	if (!process_shared_preload_libraries_in_progress)
		return;

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

	DefineCustomBoolVariable("bloomguard.auto_rebuild",
							 "Lets the background worker resize guards whose load exceeds 1.0.",
							 "A guard past its capacity is rebuilt at twice its n_added, if that fits in bloomguard.max_memory.",
							 &bg_auto_rebuild,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("bloomguard.max_memory",
							"Shared memory all filters together may use.",
							"An attach or rebuild that would exceed it fails and changes nothing.",
							&bg_max_memory_mb,
							BG_MAX_MEMORY_DEFAULT,
							BG_MAX_MEMORY_MIN,
							BG_MAX_MEMORY_MAX,
							PGC_POSTMASTER,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("bloomguard.max_guard_memory",
							"Shared memory one guard's filter may use.",
							"An attach, rebuild or automatic resize that would need a larger filter "
							"fails and changes nothing. Zero leaves only bloomguard.max_memory.",
							&bg_max_guard_memory_mb,
							BG_MAX_GUARD_MEMORY_DEFAULT,
							BG_MAX_GUARD_MEMORY_MIN,
							BG_MAX_GUARD_MEMORY_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("bloomguard.max_guards",
							"Maximum number of guarded tables in the cluster.",
							NULL,
							&bg_max_guards,
							BG_MAX_GUARDS_DEFAULT,
							BG_MAX_GUARDS_MIN,
							BG_MAX_GUARDS_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

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

	MarkGUCPrefixReserved("bloomguard");

	bg_shmem_init();
	bg_wal_init();

	/*
	 * pg_upgrade starts both clusters with -b, which sets IsBinaryUpgrade
	 * before the preload libraries load (postmaster.c), and promises to
	 * leave the old one as it was: no saved filters loaded (a load removes
	 * the file) or written, no launcher to rebuild, resize or connect to
	 * databases pg_upgrade is creating.
	 */
	if (!IsBinaryUpgrade)
		bg_persist_init();
	bg_feed_init();
	bg_pending_init();
	bg_statement_init();
	bg_coverage_init();
	bg_planner_init();
	if (!IsBinaryUpgrade)
		bg_worker_init();
}
