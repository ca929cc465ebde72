/*-------------------------------------------------------------------------
 *
 * bloomguard.c
 *	  Module entry point and settings.
 *
 * bloomguard keeps a Bloom filter of a table's primary keys in shared
 * memory, so that lookups of keys that do not exist can be answered
 * without touching the index.  The pieces, one file each:
 *
 *	filter.c	the pure filter: sizing, hashing, atomic bits
 *	shmem.c		guard slots and filter memory in shared memory
 *	keys.c		describing and hashing a table's primary key
 *	build.c		building a filter generation online from a table scan
 *	trigger.c	the feed trigger
 *	lookup.c	guarded_exists() and bloomguard_check()
 *	attach.c	attach, detach, rebuild
 *	registry.c	the bloomguard_guards configuration table
 *	coverage.c	noticing triggers disabled or dropped, and dropped tables
 *	stats.c		the health view's numbers, probes, counter resets
 *	worker.c	the background worker: rebuilds after restarts, resizes
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "bloomguard.h"

PG_MODULE_MAGIC;

bool		bg_enabled = true;
int			bg_max_memory_mb = BG_MAX_MEMORY_DEFAULT;
int			bg_max_guards = BG_MAX_GUARDS_DEFAULT;
double		bg_default_error_rate = BG_ERROR_RATE_DEFAULT;
int			bg_maintenance_interval = BG_MAINTENANCE_INTERVAL_DEFAULT;
bool		bg_auto_rebuild = true;
bool		bg_background_worker = true;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomBoolVariable("bloomguard.enabled",
							 "Lets guarded_exists() answer from the filter.",
							 "When off, every call does the plain primary key lookup and "
							 "bloomguard_check() answers 'unknown'. The triggers keep "
							 "feeding the filters.",
							 &bg_enabled,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

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

#if PG_VERSION_NUM >= 150000
	MarkGUCPrefixReserved("bloomguard");
#else
	EmitWarningsOnPlaceholders("bloomguard");
#endif

	bg_shmem_init();
	bg_coverage_init();
	bg_worker_init();
}
