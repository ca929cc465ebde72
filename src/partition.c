/*-------------------------------------------------------------------------
 *
 * partition.c
 *	  Partitioned tables: their leaves, routing a key to one, and keeping
 *	  the registry in step as partitions come and go.
 *
 * A partitioned table has no rows of its own and so no filter.  Guarding
 * one guards each of its leaf partitions, each with its own filter and its
 * own bloomguard_guards row; the partitioned table keeps a row too, which
 * holds the capacity and error rate given for the whole table and marks
 * the tree as guarded.  The feed trigger is created on the partitioned
 * table: PostgreSQL clones it onto every partition, present and future
 * (with its ALWAYS setting), and drops the clone when a partition is
 * detached.  A leaf's guard is therefore a plain guard in every respect
 * but how it comes and goes:
 *
 *	- a new leaf (CREATE TABLE ... PARTITION OF, ATTACH PARTITION, at any
 *	  depth) gets its trigger clone in the creating transaction; the
 *	  object access hook (ddlwatch.c) has it registered just before that
 *	  transaction commits, with a capacity chosen from its own rows and the
 *	  tree's error rate.  It has no filter until one is built (the
 *	  background worker's next pass, or bloomguard_rebuild()), and until
 *	  then it answers by lookup: rows that came with ATTACH PARTITION were
 *	  never seen by a trigger;
 *	- a leaf detached from the tree loses its clone; it is unregistered
 *	  just before that transaction commits, and its filter freed when it
 *	  commits.  DROP of a leaf is any table's drop;
 *	- the background worker's pass registers any leaf of a guarded tree
 *	  that has no row (a safety net for partitions made while the library
 *	  was not loaded).
 *
 * Routing.  The primary key of a partitioned table contains every
 * partition key column, under the same equality, so a key value names
 * exactly one leaf: the one get_partition_for_tuple() would insert it into
 * (bg_route_key() does the same with the key's values).  Only that leaf
 * can hold the row.  Partition descriptors are the relcache's, with
 * partitions being detached omitted as the snapshot says, as a query of
 * the partitioned table sees them.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "miscadmin.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bloomguard.h"

/*
 * The leaf partitions below a partitioned table, all levels, in OID
 * order; each is locked in lockmode.
 */
List *
bg_partition_leaves(Oid parent, LOCKMODE lockmode)
{
	List	   *all = find_all_inheritors(parent, lockmode, NULL);
	List	   *leaves = NIL;
	ListCell   *lc;

	foreach(lc, all)
	{
		Oid			relid = lfirst_oid(lc);

		if (get_rel_relkind(relid) == RELKIND_RELATION)
			leaves = lappend_oid(leaves, relid);
	}
	list_free(all);
	list_sort(leaves, list_oid_cmp);
	return leaves;
}

/*
 * The leaf partitions of an open partitioned table as a query of it sees
 * them (the relcache's partition descriptors, partitions being detached
 * omitted as the snapshot says), all levels; sub-partitioned tables are
 * locked in lockmode, the leaves too.
 */
List *
bg_partition_leaves_of(Relation parent, LOCKMODE lockmode)
{
	PartitionDesc pd = RelationGetPartitionDesc(parent, true);
	List	   *leaves = NIL;
	int			i;

	for (i = 0; i < pd->nparts; i++)
	{
		if (pd->is_leaf[i])
		{
			LockRelationOid(pd->oids[i], lockmode);
			leaves = lappend_oid(leaves, pd->oids[i]);
		}
		else
		{
			Relation	sub = relation_open(pd->oids[i], lockmode);

			leaves = list_concat(leaves, bg_partition_leaves_of(sub, lockmode));
			relation_close(sub, NoLock);
		}
	}
	return leaves;
}

/*
 * Wait, as a heavyweight lock wait that the deadlock detector and pg_locks
 * can see, for the transactions now writing relid or, if it is
 * partitioned, any of its partitions (a write to a partition need not
 * lock the partitioned table).  No lock request is queued, so new writers
 * are not held up.
 */
void
bg_wait_for_writers(Oid relid)
{
	List	   *tags = NIL;
	List	   *relids = list_make1_oid(relid);
	ListCell   *lc;

	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		relids = find_all_inheritors(relid, NoLock, NULL);
	foreach(lc, relids)
	{
		LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

		SET_LOCKTAG_RELATION(*tag, MyDatabaseId, lfirst_oid(lc));
		tags = lappend(tags, tag);
	}
	WaitForLockersMultiple(tags, ShareRowExclusiveLock, false);
	list_free_deep(tags);
	list_free(relids);
}

/*
 * The guarded partitioned table that relid is a partition of (at any
 * depth), or InvalidOid.  registered lists the registry's tables; NIL
 * means ask the registry.
 */
Oid
bg_partition_guarded_root(Oid relid, List *registered)
{
	List	   *ancestors;
	ListCell   *lc;
	Oid			result = InvalidOid;

	if (!get_rel_relispartition(relid))
		return InvalidOid;
	ancestors = get_partition_ancestors(relid);
	foreach(lc, ancestors)
	{
		Oid			anc = lfirst_oid(lc);

		if (registered != NIL ? list_member_oid(registered, anc) :
			bg_registry_lookup(anc, NULL, NULL))
		{
			result = anc;
			break;
		}
	}
	list_free(ancestors);
	return result;
}

/*
 * A leaf's share of a capacity given for the whole table: in proportion
 * to its rows (evenly when the table is empty), and at least what an
 * empty leaf needs to start with (a full one is resized by the worker).
 */
int64
bg_partition_share(int64 capacity, double rows, double total_rows, int nleaves)
{
	double		share;
	double		floor_cap = Min((double) BG_MIN_CAPACITY, (double) capacity / Max(nleaves, 1));

	if (total_rows > 0)
		share = ceil((double) capacity * rows / total_rows);
	else
		share = ceil((double) capacity / Max(nleaves, 1));
	share = Max(share, ceil(floor_cap));
	return (int64) Max(share, 1.0);
}

/*
 * Register a new leaf of a guarded tree, if it is one and has no row yet:
 * capacity from its own rows, the tree's error rate.  Runs just before
 * the transaction that created its trigger clone commits (pending.c), and
 * in the worker's safety net.
 */
void
bg_partition_register(Oid relid)
{
	Oid			root;
	double		error_rate;
	int64		capacity;

	if (get_rel_relkind(relid) != RELKIND_RELATION ||
		bg_registry_lookup(relid, NULL, NULL))
		return;
	root = bg_partition_guarded_root(relid, NIL);
	if (!OidIsValid(root) || !bg_registry_lookup(root, NULL, &error_rate))
		return;
	/*
	 * Size it from the table, which the creating DDL holds locked; the
	 * worker's safety net does not wait for a lock, and takes the
	 * statistics system's count instead.
	 */
	if (ConditionalLockRelationOid(relid, AccessShareLock))
	{
		Relation	rel = relation_open(relid, NoLock);

		capacity = bg_choose_capacity(bg_estimate_rows(rel), 0, false, 0);
		relation_close(rel, AccessShareLock);
	}
	else
		capacity = bg_choose_capacity(bg_live_rows(relid), 0, false, 0);
	bg_registry_insert(relid, capacity, error_rate);
}

/*
 * A leaf lost its trigger clone: if it has left its guarded tree
 * (DETACH PARTITION), unregister it now and free its filter at commit.
 * (If it is still in the tree, the trigger was dropped some other way;
 * ddlwatch.c has marked the guard untrusted, as for any table.)
 */
void
bg_partition_recheck(Oid relid)
{
	if (get_rel_relkind(relid) != RELKIND_RELATION ||
		!bg_registry_lookup(relid, NULL, NULL) ||
		OidIsValid(bg_partition_guarded_root(relid, NIL)))
		return;
	bg_registry_delete(&relid, 1);
	bg_forget_at_commit(relid);
}

/*
 * Does relid have a trigger named bloomguard?  *own says whether it is its
 * own rather than a clone of a partitioned table's.
 */
static bool
bg_named_trigger(Oid relid, bool *own)
{
	HeapTuple	tuple = bg_named_trigger_tuple(relid);

	if (tuple == NULL)
		return false;
	*own = !OidIsValid(((Form_pg_trigger) GETSTRUCT(tuple))->tgparentid);
	heap_freetuple(tuple);
	return true;
}

/*
 * Table child is joining partitioned table parent: the object access hook
 * (ddlwatch.c) sees the new pg_inherits row, before ATTACH PARTITION
 * clones parent's row triggers onto child and its partitions.  If parent
 * has a trigger named bloomguard (its tree is guarded), a relation of the
 * new branch with one of its own (a table guarded on its own, or a user's
 * trigger of that name) would collide with the clone; say so in our own
 * words rather than let CREATE TRIGGER fail with "already exists".  The
 * leaf's guard is not adopted: its filter was built under its own
 * trigger's catalog row, which the clone replaces, and its sizing is not
 * the tree's.  The hook also runs for DETACH PARTITION, whose partition
 * still has the clone (not its own), and for CREATE TABLE ... PARTITION
 * OF, whose new table has no trigger.
 */
void
bg_partition_check_joining(Oid child, Oid parent)
{
	List	   *branch;
	ListCell   *lc;
	Oid			clash = InvalidOid;
	bool		own = false;
	char	   *detail;
	char	   *hint;

	if (get_rel_relkind(parent) != RELKIND_PARTITIONED_TABLE ||
		!bg_named_trigger(parent, &own))
		return;
	if (bg_named_trigger(child, &own))
	{
		if (!own)
			return;				/* a clone: a partition being detached */
		clash = child;
	}
	else
	{
		/* ATTACH PARTITION has locked every partition of child */
		branch = find_all_inheritors(child, NoLock, NULL);
		foreach(lc, branch)
		{
			if (bg_named_trigger(lfirst_oid(lc), &own) && own)
			{
				clash = lfirst_oid(lc);
				break;
			}
		}
		list_free(branch);
	}
	if (!OidIsValid(clash))
		return;
	if (bg_registry_lookup(clash, NULL, NULL))
	{
		detail = psprintf(_("Table \"%s\" is guarded on its own; the guarded table's trigger \"%s\", which every partition gets, would collide with its trigger."),
						  get_rel_name(clash), BLOOMGUARD_TRIGGER_NAME);
		hint = psprintf(_("Run bloomguard_detach() on \"%s\" first; as a partition it is then guarded as part of \"%s\"."),
						get_rel_name(clash), get_rel_name(parent));
	}
	else
	{
		detail = psprintf(_("Table \"%s\" has a trigger named \"%s\"; the guarded table's trigger of that name, which every partition gets, would collide with it."),
						  get_rel_name(clash), BLOOMGUARD_TRIGGER_NAME);
		hint = pstrdup(_("Rename or drop that trigger first."));
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("cannot attach table \"%s\" as a partition of guarded table \"%s\"",
					get_rel_name(child), get_rel_name(parent)),
			 errdetail_internal("%s", detail),
			 errhint("%s", hint)));
}

/*
 * The position among the key columns of each partition key column of
 * partitioned table rel: its primary key must contain them all.  False if
 * some partition key column is not a key column (cannot happen for a
 * table with a primary key, but then we do not route).
 */
static bool
bg_partition_key_positions(Relation rel, PartitionKey key, int *positions)
{
	Oid			indexoid = bg_primary_key_index(rel);
	HeapTuple	tup;
	Form_pg_index index;
	int			i;
	int			j;
	bool		ok = true;

	if (!OidIsValid(indexoid))
		return false;
	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	if (!HeapTupleIsValid(tup))
		return false;
	index = (Form_pg_index) GETSTRUCT(tup);
	for (i = 0; i < key->partnatts && ok; i++)
	{
		positions[i] = -1;
		for (j = 0; j < index->indnkeyatts; j++)
		{
			if (key->partattrs[i] != 0 && index->indkey.values[j] == key->partattrs[i])
				positions[i] = j;
		}
		ok = positions[i] >= 0;
	}
	ReleaseSysCache(tup);
	return ok;
}

/*
 * Which partition of this one level would hold a row with these
 * partition key values: get_partition_for_tuple() (execPartition.c),
 * for values that are never NULL.  -1: none.
 */
static int
bg_partition_index(PartitionKey key, PartitionDesc pd, Datum *values)
{
	PartitionBoundInfo boundinfo = pd->boundinfo;
	bool		isnull[PARTITION_MAX_KEYS] = {false};
	bool		equal = false;
	int			part_index = -1;
	int			offset;

	switch (get_partition_strategy(key))
	{
		case PARTITION_STRATEGY_HASH:
			part_index = boundinfo->indexes[compute_partition_hash_value(key->partnatts,
																		 key->partsupfunc,
																		 key->partcollation,
																		 values, isnull) %
											boundinfo->nindexes];
			break;
		case PARTITION_STRATEGY_LIST:
			offset = partition_list_bsearch(key->partsupfunc, key->partcollation,
											boundinfo, values[0], &equal);
			if (offset >= 0 && equal)
				part_index = boundinfo->indexes[offset];
			break;
		case PARTITION_STRATEGY_RANGE:
			offset = partition_range_datum_bsearch(key->partsupfunc, key->partcollation,
												   boundinfo, key->partnatts, values,
												   &equal);
			part_index = boundinfo->indexes[offset + 1];
			break;
	}
	if (part_index < 0)
		part_index = boundinfo->default_index;
	return part_index;
}

/*
 * The leaf partition of parent that can hold the row with primary key
 * values (in the key's types, key column order), locked in lockmode; or
 * InvalidOid if no partition accepts the key.  Sets *routed to false
 * (and returns InvalidOid) if it cannot tell.
 */
Oid
bg_route_key(Relation parent, const Datum *values, LOCKMODE lockmode, bool *routed)
{
	Relation	rel = parent;
	Oid			result = InvalidOid;

	*routed = false;
	for (;;)
	{
		PartitionKey key = RelationGetPartitionKey(rel);
		PartitionDesc pd = RelationGetPartitionDesc(rel, true);
		int			positions[PARTITION_MAX_KEYS];
		Datum		partvalues[PARTITION_MAX_KEYS];
		int			i;
		int			part;
		Oid			child;

		if (key == NULL || !bg_partition_key_positions(rel, key, positions))
			break;
		for (i = 0; i < key->partnatts; i++)
			partvalues[i] = values[positions[i]];
		part = pd->nparts > 0 ? bg_partition_index(key, pd, partvalues) : -1;
		if (part < 0)
		{
			*routed = true;		/* no partition takes it: no row has it */
			break;
		}
		child = pd->oids[part];
		if (pd->is_leaf[part])
		{
			LockRelationOid(child, lockmode);
			result = child;
			*routed = true;
			break;
		}
		/* a sub-partitioned table: its key columns are the same, in order */
		if (rel != parent)
			relation_close(rel, NoLock);
		rel = relation_open(child, lockmode);
	}
	if (rel != parent)
		relation_close(rel, NoLock);
	return result;
}
