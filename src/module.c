/*-------------------------------------------------------------------------
 *
 * module.c
 *	  Module entry point: _PG_init and the shared memory hooks.
 *
 * bloomguard keeps a Bloom filter of a table's primary keys in shared
 * memory, so that lookups of keys that do not exist can be answered
 * without touching the index.  The pieces, one file each, from the bottom
 * floor up (a file calls only into the ones listed before it; this file,
 * the top floor, calls into any of them):
 *
 *	filter.c	the pure filter: the blocked layout, sizing, hashing, atomic
 *				bits, health formulas
 *	pool.c		the filter pool's first-fit allocator, over offsets
 *	shmem.c		shared memory: the guard slot table, filter memory and caps,
 *				and the locking rules
 *	slot.c		using one guard's slot: ask, feed, probe, copy out, untrust,
 *				a build's publish, add, swap and abandon
 *	wal.c		the WAL resource manager: key records for standbys and
 *				recovery, and the bloomguard.wal_log switch
 *	walredo.c	redo of those records, and their descriptions
 *	persist.c	filters saved at a clean shutdown, loaded at the next start
 *	feedbuffer.c	this backend's buffer of keys the trigger collected, and
 *				when it is flushed into the filters (and the WAL)
 *	registry.c	the bloomguard_guards configuration table; ownership checks
 *	tablekind.c	whether a table's rows are in the table itself: ordinary
 *				heap tables, and the ones whose rows are elsewhere (foreign
 *				tables, other access methods, Citus's shells)
 *	pending.c	what a transaction does to guards when it commits
 *	statement.c	which of this backend's own writes a lookup might see before
 *				their keys reach the filter
 *	keys.c		describing and hashing a table's primary key
 *	feedcheck.c	the feed trigger as the catalogs have it: is it attach's, and
 *				the versions of its row and its function's
 *	keycache.c	the backend-wide cache of key descriptions
 *	sizing.c	validating and choosing a filter's capacity, and whether
 *				it fits in the memory caps
 *	partition.c	partitioned tables: leaves, routing a key to one, new and
 *				detached partitions
 *	ddlwatch.c	noticing the feed trigger change, and drops
 *	buildscan.c	a build's scan of the table, with parallel workers
 *	build.c		building a generation online: publish, scan, swap, and
 *				the proof that no key is missed
 *	rebuild.c	the rebuild policy: what can be guarded, locks, sizing
 *	trigger.c	the feed trigger
 *	args.c		turning key arguments into key values
 *	tablelookup.c	the authoritative lookup: index probe or SQL
 *	trust.c		the trust rule: when a filter may answer; asking it
 *	citusask.c	a Citus table seen from any node: bloomguard_check() of its
 *				key's shard, every placement's health
 *	lookup.c	guarded_exists(), bloomguard_check()
 *	guardscan.c	the BloomGuard custom scan: the filter asked before an index
 *				scan
 *	planner.c	the planner path: wrapping primary key index scans
 *	citus.c		Citus's distributed and reference tables, guarded through
 *				their shards: attach of the shell, each node's placements
 *	maintain.c	the background worker's pass over a database's guards:
 *				slot housekeeping, missing leaves, rebuilds
 *	worker.c	attach's feed worker; starting short-lived workers
 *	launcher.c	the launcher and the per-database worker it starts
 *	attach.c	bloomguard_attach(), _detach(), _rebuild()
 *	stats.c		the health view's numbers, probes, counter resets
 *	module.c	_PG_init, and the one shared memory request hook and startup
 *				hook
 *
 * compat.h hides the differences between PostgreSQL versions.
 *
 * Settings.  Each file defines the settings it reads, in its init
 * function, next to the code that reads them; _PG_init only calls those in
 * an order with three rules.  The settings that exist wherever the library
 * is loaded (README's Settings: enabled, transparent, default_error_rate,
 * partition_lookup), and the custom scan methods (plans are copied and
 * read back by name, in any backend), come before the return of a library
 * that is not being preloaded.  RegisterCustomRmgr (in bg_wal_init()) may
 * run only while preloading.  MarkGUCPrefixReserved comes after every
 * definition: it removes, with a WARNING, the placeholder of any
 * bloomguard.* setting not defined yet, and so the value postgresql.conf
 * gave it (test/t/024_settings.pl).
 *
 * pg_upgrade starts both clusters with -b, which sets IsBinaryUpgrade
 * before the preload libraries load (postmaster.c), and promises to leave
 * the old one as it was: so then no saved filters are loaded (a load
 * removes the file) or written, and no launcher rebuilds, resizes or
 * connects to databases pg_upgrade is creating.  The settings are defined
 * all the same.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "bloomguard.h"

PG_MODULE_MAGIC;


static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

/* shmem_request_hook: the space and locks of shmem.c and wal.c. */
static void
bg_module_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	bg_shmem_request();
	bg_wal_shmem_request();
}

/*
 * shmem_startup_hook, in this order: shmem.c makes the slot table and the
 * filter pool; wal.c makes its state, from its file (it needs nothing of
 * shmem.c's); then persist.c loads the saved filters into slots and pool
 * memory that shmem.c made, tells wal.c what they are complete as of
 * (bg_wal_loaded()), and arranges the save at exit, which reads both.
 */
static void
bg_module_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	bg_shmem_startup();
	bg_wal_shmem_startup();
	if (!IsBinaryUpgrade)		/* see the file header */
		bg_persist_shmem_startup();
}

/* Define the settings and, while preloading, install the hooks and workers. */
void
_PG_init(void)
{
	bg_trust_init();
	bg_sizing_init();
	bg_lookup_init();
	bg_guard_scan_register();

	if (!process_shared_preload_libraries_in_progress)
		return;

	bg_shmem_init();
	bg_wal_init();
	bg_maintain_init();
	bg_launcher_init();
	bg_planner_init();
	MarkGUCPrefixReserved("bloomguard");

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bg_module_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bg_module_shmem_startup;
	bg_feed_init();
	bg_pending_init();
	bg_statement_init();
	bg_coverage_init();
	if (!IsBinaryUpgrade)		/* see the file header */
		bg_launcher_register();
}
