/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Differences between the PostgreSQL major versions bloomguard supports.
 *
 * bloomguard builds from one tree against PostgreSQL 15, 16, 17 and 18.
 * Every difference in an internal API it uses is hidden here, behind one
 * name, so that the rest of the code has no version tests of its own.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMGUARD_COMPAT_H
#define BLOOMGUARD_COMPAT_H

#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "utils/acl.h"

#if PG_VERSION_NUM < 150000
#error "bloomguard needs PostgreSQL 15 or later"
#endif

/*
 * 64-bit builds only: keys of int8, timestamp and the like are hashed as
 * by-value Datums, and filter sizes are computed in Size; on a 32-bit
 * build the first would hash pointers and the second could wrap.
 */
#if SIZEOF_VOID_P < 8
#error "bloomguard needs a 64-bit build of PostgreSQL"
#endif

/*
 * 16 replaced the per-catalog ownership and ACL checks with object_*()
 * functions that take the catalog's OID.
 */
#if PG_VERSION_NUM >= 160000
#define bg_class_ownercheck(relid, roleid) \
	object_ownercheck(RelationRelationId, (relid), (roleid))
#define bg_namespace_aclcheck(nspid, roleid, mode) \
	object_aclcheck(NamespaceRelationId, (nspid), (roleid), (mode))
#define bg_proc_aclcheck(procid, roleid, mode) \
	object_aclcheck(ProcedureRelationId, (procid), (roleid), (mode))
#else
#define bg_class_ownercheck(relid, roleid) \
	pg_class_ownercheck((relid), (roleid))
#define bg_namespace_aclcheck(nspid, roleid, mode) \
	pg_namespace_aclcheck((nspid), (roleid), (mode))
#define bg_proc_aclcheck(procid, roleid, mode) \
	pg_proc_aclcheck((procid), (roleid), (mode))
#endif

/*
 * old_snapshot_threshold lets VACUUM remove row versions that old
 * snapshots can still see; 17 removed the setting.
 */
#if PG_VERSION_NUM < 170000
#include "utils/snapmgr.h"
#define bg_old_snapshot_threshold_set() (old_snapshot_threshold >= 0)
#else
#define bg_old_snapshot_threshold_set() false
#endif

/*
 * 18 added an IndexScanInstrumentation argument to index_beginscan();
 * core passes NULL for scans it does not instrument.
 */
#if PG_VERSION_NUM >= 180000
#define bg_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), (norderbys))
#else
#define bg_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#endif

/*
 * 16 renamed a relation's physical identifier: rd_node (a RelFileNode, its
 * relNode) became rd_locator (a RelFileLocator, its relNumber), and the
 * relcache's rd_firstRelfilenodeSubid (set while a rollback could bring
 * back the file the relation had when its top transaction began) became
 * rd_firstRelfilelocatorSubid.
 */
#if PG_VERSION_NUM >= 160000
#define bg_rel_filenumber(rel) ((Oid) (rel)->rd_locator.relNumber)
#define bg_rel_file_changed_in_xact(rel) \
	((rel)->rd_firstRelfilelocatorSubid != InvalidSubTransactionId)
#else
#define bg_rel_filenumber(rel) ((rel)->rd_node.relNode)
#define bg_rel_file_changed_in_xact(rel) \
	((rel)->rd_firstRelfilenodeSubid != InvalidSubTransactionId)
#endif

/*
 * 17 replaced the IsBackgroundWorker flag with AmBackgroundWorkerProcess()
 * (parallel workers are background workers in both).
 */
#if PG_VERSION_NUM >= 170000
#define bg_is_background_worker() AmBackgroundWorkerProcess()
#else
#define bg_is_background_worker() IsBackgroundWorker
#endif

/* 16 renamed the statistics entry's live tuple count. */
#if PG_VERSION_NUM >= 160000
#define bg_stat_live_tuples(entry) ((entry)->live_tuples)
#else
#define bg_stat_live_tuples(entry) ((entry)->n_live_tuples)
#endif

/* 18 moved ExplainProperty*() out of commands/explain.h. */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#else
#include "commands/explain.h"
#endif

#endif							/* BLOOMGUARD_COMPAT_H */
