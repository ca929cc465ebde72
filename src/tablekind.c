/*-------------------------------------------------------------------------
 *
 * tablekind.c
 *	  Whether a table's rows are in the table itself: the tables bloomguard
 *	  guards and probes from C, and the ones it recognises as holding their
 *	  rows elsewhere.
 *
 * A filter and an index probe answer for the rows in a table's own heap.
 * bloomguard reads those directly only where that is where the rows are:
 * an ordinary table of the heap access method (and a partitioned table,
 * whose leaves are such tables).  Everything else gets PostgreSQL's plain
 * behaviour: it is never guarded (rebuild.c refuses it with the detail
 * bg_table_kind_detail() gives), never trusted (trust.c), never wrapped by
 * the planner path, and guarded_exists() answers for it with the EXISTS
 * query itself (tablelookup.c), which goes wherever the rows are.  The
 * kinds told apart, so that messages can say why:
 *	- foreign tables, other table access methods, and relations that are
 *	  not tables at all;
 *	- Citus's tables.  Citus keeps a distributed table's rows in shards,
 *	  ordinary tables named <table>_<shardid> on the worker nodes (and on
 *	  the coordinator, if it holds shards); the table the user names is an
 *	  empty shell, on the coordinator and, with metadata synced, on every
 *	  worker.  A reference table has one shard, copied on every node; a
 *	  citus-local table has one shard on the coordinator, into which
 *	  citus_add_local_table_to_metadata() turned the original table.
 *	  Every shell has a row in Citus's catalog pg_dist_partition; the shard
 *	  tables have none and are ordinary tables, which bloomguard guards
 *	  like any other.
 *
 * Citus is recognised without linking to it: when the extension "citus"
 * exists in the database, its catalog pg_catalog.pg_dist_partition and
 * its index on logicalrelid are found by name, and their columns
 * (logicalrelid, partmethod, repmodel, colocationid) by name and type.  A
 * catalog of another shape is not guessed at: every table of such a
 * database is then treated as a Citus table of an unrecognised kind.  The
 * kinds follow Citus's own IsCitusTableTypeInternal(): partmethod 'h',
 * 'r' or 'a' is a distributed table; 'n' with repmodel 't' a reference
 * table; 'n' with a colocation group a single-shard distributed table;
 * 'n' without one a citus-local table.
 *
 * Caching.  The answer is cached here per table, for the life of the
 * backend, and forgotten at a relcache invalidation of the table (which
 * ALTER TABLE ... SET ACCESS METHOD sends, as any DDL does), or of every
 * table.  Citus sends one for every change of a pg_dist_partition row: its C code
 * calls CitusInvalidateRelcacheByRelid() after each insert, update and
 * delete (InsertIntoPgDistPartition(), DeletePartitionRow(),
 * UpdatePgDistPartitionAutoConverted(), UpdateDistributionColumn(),
 * UpdateNoneDistTableMetadata() in metadata_utility.c), and the trigger
 * dist_partition_cache_invalidate on the catalog does the same for rows
 * changed by SQL (metadata sync's DELETE FROM pg_dist_partition on a
 * worker included).  The scan here uses the catalog snapshot, so a row
 * committed later reaches this backend as that invalidation does.  An
 * entry is marked valid before it is filled, as keycache.c's are: an
 * invalidation that arrives while the catalogs are read clears the mark
 * again, and the next call reads them again.  Whether Citus is installed
 * at all (bg_citus_present()) is not cached: it is one syscache lookup.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace_d.h"
#include "catalog/pg_type_d.h"
#include "commands/extension.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bloomguard.h"

/* A table's cached kind. */
typedef struct BgKindEntry
{
	Oid			relid;			/* hash key */
	bool		valid;			/* false once invalidated */
	BgTableKind kind;
} BgKindEntry;

static HTAB *bg_kind_cache = NULL;

/* Relcache invalidation callback: forget the table's kind, or every one. */
static void
bg_kind_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	BgKindEntry *entry;

	if (OidIsValid(relid))
	{
		entry = hash_search(bg_kind_cache, &relid, HASH_FIND, NULL);
		if (entry)
			entry->valid = false;
		return;
	}
	hash_seq_init(&status, bg_kind_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
		entry->valid = false;
}

/*
 * The cache entry of relid, made if need be; *fill is set when the caller
 * must work out the kind and store it (the entry is marked valid already).
 */
static BgKindEntry *
bg_kind_cache_entry(Oid relid, bool *fill)
{
	BgKindEntry *entry;
	bool		found;

	if (bg_kind_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(BgKindEntry);
		ctl.hcxt = CacheMemoryContext;
		bg_kind_cache = hash_create("bloomguard table kinds", 64, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(bg_kind_cache_invalidate, (Datum) 0);
	}
	entry = hash_search(bg_kind_cache, &relid, HASH_ENTER, &found);
	*fill = !found || !entry->valid;
	entry->valid = true;
	return entry;
}

/*
 * Is Citus installed in this database?  Its catalog pg_dist_partition is
 * there: one syscache lookup.
 */
bool
bg_citus_present(void)
{
	return OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE));
}

/*
 * What Citus's pg_dist_partition says about relid: BG_TABLE_OWN_ROWS when
 * it has no row for it (or Citus is not installed in this database).
 */
static BgTableKind
bg_citus_kind(Oid relid)
{
	Oid			catalog;
	Oid			index;
	Relation	rel;
	TupleDesc	tupdesc;
	AttrNumber	att_relid;
	AttrNumber	att_method;
	AttrNumber	att_model;
	AttrNumber	att_colocation;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	BgTableKind kind = BG_TABLE_OWN_ROWS;

	if (!OidIsValid(get_extension_oid("citus", true)))
		return BG_TABLE_OWN_ROWS;
	catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	if (!OidIsValid(catalog))
		return BG_TABLE_CITUS_OTHER;	/* Citus, but not as we know it */

	rel = table_open(catalog, AccessShareLock);
	tupdesc = RelationGetDescr(rel);
	att_relid = get_attnum(catalog, "logicalrelid");
	att_method = get_attnum(catalog, "partmethod");
	att_model = get_attnum(catalog, "repmodel");
	att_colocation = get_attnum(catalog, "colocationid");
	if (att_relid <= 0 || att_method <= 0 || att_model <= 0 || att_colocation <= 0 ||
		(TupleDescAttr(tupdesc, att_relid - 1)->atttypid != REGCLASSOID &&
		 TupleDescAttr(tupdesc, att_relid - 1)->atttypid != OIDOID) ||
		TupleDescAttr(tupdesc, att_method - 1)->atttypid != CHAROID ||
		TupleDescAttr(tupdesc, att_model - 1)->atttypid != CHAROID ||
		TupleDescAttr(tupdesc, att_colocation - 1)->atttypid != INT4OID)
	{
		table_close(rel, AccessShareLock);
		return BG_TABLE_CITUS_OTHER;
	}

	/* the unique index on logicalrelid, if it is there; else a heap scan */
	index = get_relname_relid("pg_dist_partition_logical_relid_index",
							  PG_CATALOG_NAMESPACE);
	ScanKeyInit(&key, att_relid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, index, OidIsValid(index), NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		null_method;
		bool		null_model;
		bool		null_colocation;
		char		method = DatumGetChar(heap_getattr(tup, att_method, tupdesc, &null_method));
		char		model = DatumGetChar(heap_getattr(tup, att_model, tupdesc, &null_model));
		int32		colocation = DatumGetInt32(heap_getattr(tup, att_colocation, tupdesc,
															&null_colocation));

		if (null_method || null_model || null_colocation)
			kind = BG_TABLE_CITUS_OTHER;
		else if (method == 'h' || method == 'r' || method == 'a')
			kind = BG_TABLE_CITUS_DISTRIBUTED;
		else if (method == 'n' && model == 't')
			kind = BG_TABLE_CITUS_REFERENCE;
		else if (method == 'n' && colocation != 0)
			kind = BG_TABLE_CITUS_DISTRIBUTED;	/* a single-shard one */
		else if (method == 'n')
			kind = BG_TABLE_CITUS_LOCAL;
		else
			kind = BG_TABLE_CITUS_OTHER;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return kind;
}

/*
 * Is the table access method amoid the heap: heap itself, or another name
 * for its handler (CREATE ACCESS METHOD ... HANDLER heap_tableam_handler),
 * as rebuild.c has always accepted through the relcache's rd_tableam?
 */
static bool
bg_am_is_heap(Oid amoid)
{
	HeapTuple	tup;
	bool		heap;

	if (amoid == HEAP_TABLE_AM_OID)
		return true;
	tup = SearchSysCache1(AMOID, ObjectIdGetDatum(amoid));
	if (!HeapTupleIsValid(tup))
		return false;
	heap = ((Form_pg_am) GETSTRUCT(tup))->amhandler == F_HEAP_TABLEAM_HANDLER;
	ReleaseSysCache(tup);
	return heap;
}

/*
 * The kind of a relation given its relkind and whether it uses the heap
 * access method: whether PostgreSQL's own catalogs already say its rows
 * are elsewhere.
 */
static BgTableKind
bg_pg_kind(char relkind, bool heap)
{
	switch (relkind)
	{
		case RELKIND_RELATION:
			return heap ? BG_TABLE_OWN_ROWS : BG_TABLE_OTHER_AM;
		case RELKIND_PARTITIONED_TABLE:
			return BG_TABLE_OWN_ROWS;	/* its leaves are checked one by one */
		case RELKIND_FOREIGN_TABLE:
			return BG_TABLE_FOREIGN;
		default:
			return BG_TABLE_NOT_TABLE;
	}
}

/*
 * Where rel's rows are: BG_TABLE_OWN_ROWS for an ordinary heap table or a
 * partitioned table that no other extension manages, else the kind that
 * holds them elsewhere.  Reads catalogs: callers on a hot path use the
 * cached BgKeyInfo.kind (keycache.c).
 */
BgTableKind
bg_table_kind(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	bool		fill;
	BgKindEntry *entry = bg_kind_cache_entry(relid, &fill);
	BgTableKind kind;

	if (!fill)
		return entry->kind;
	kind = bg_pg_kind(rel->rd_rel->relkind,
					  rel->rd_tableam == GetHeapamTableAmRoutine());
	if (kind == BG_TABLE_OWN_ROWS)
		kind = bg_citus_kind(relid);
	/* reading the catalogs never moves an entry, nor removes one */
	entry->kind = kind;
	return kind;
}

/*
 * bg_table_kind() of a table that is not opened (the health view, which
 * never waits for a table's lock); BG_TABLE_NOT_TABLE if it is gone.
 */
BgTableKind
bg_table_kind_by_oid(Oid relid)
{
	bool		fill;
	BgKindEntry *entry = bg_kind_cache_entry(relid, &fill);
	HeapTuple	tup;
	Form_pg_class form;
	BgTableKind kind;

	if (!fill)
		return entry->kind;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tup))
	{
		/* gone: nothing to cache */
		hash_search(bg_kind_cache, &relid, HASH_REMOVE, NULL);
		return BG_TABLE_NOT_TABLE;
	}
	form = (Form_pg_class) GETSTRUCT(tup);
	kind = bg_pg_kind(form->relkind, bg_am_is_heap(form->relam));
	ReleaseSysCache(tup);
	if (kind == BG_TABLE_OWN_ROWS)
		kind = bg_citus_kind(relid);
	entry->kind = kind;
	return kind;
}

/*
 * A sentence that says where the rows of a table of that kind are, for an
 * errdetail or the health view ("Table \"acc\" is a Citus distributed
 * table: ..."); NULL for BG_TABLE_OWN_ROWS.
 */
char *
bg_table_kind_detail(BgTableKind kind, const char *name)
{
	switch (kind)
	{
		case BG_TABLE_OWN_ROWS:
			break;
		case BG_TABLE_CITUS_DISTRIBUTED:
			return psprintf("Table \"%s\" is a Citus distributed table: its rows are in its shards, not in the table itself.",
							name);
		case BG_TABLE_CITUS_REFERENCE:
			return psprintf("Table \"%s\" is a Citus reference table: its rows are in a shard on every node, not in the table itself.",
							name);
		case BG_TABLE_CITUS_LOCAL:
			return psprintf("Table \"%s\" is a Citus local table: its rows are in its shard on the coordinator, not in the table itself.",
							name);
		case BG_TABLE_CITUS_OTHER:
			return psprintf("Table \"%s\" may be managed by Citus, whose catalog pg_dist_partition bloomguard does not recognise.",
							name);
		case BG_TABLE_FOREIGN:
			return psprintf("\"%s\" is a foreign table: its rows are not in this database.", name);
		case BG_TABLE_OTHER_AM:
			return psprintf("Table \"%s\" does not use the heap table access method.", name);
		case BG_TABLE_NOT_TABLE:
			return psprintf("\"%s\" is not a table.", name);
	}
	return NULL;
}

/* Is kind one of Citus's tables (a shell whose rows are in shards)? */
bool
bg_table_kind_citus(BgTableKind kind)
{
	return kind == BG_TABLE_CITUS_DISTRIBUTED || kind == BG_TABLE_CITUS_REFERENCE ||
		kind == BG_TABLE_CITUS_LOCAL || kind == BG_TABLE_CITUS_OTHER;
}

/* Is kind a shell whose shards bloomguard guards through it? */
bool
bg_citus_guards_through_shards(BgTableKind kind)
{
	return kind == BG_TABLE_CITUS_DISTRIBUTED || kind == BG_TABLE_CITUS_REFERENCE;
}

/*
 * In one of bloomguard's background workers, let SQL see Citus's shards:
 * Citus hides them from queries of pg_class in background workers of other
 * extensions (worker_shard_visibility.c), unless its setting
 * citus.override_table_visibility is off.  Only where Citus has defined
 * that setting; elsewhere nothing hides them.
 */
void
bg_citus_show_shards(void)
{
	if (GetConfigOption("citus.override_table_visibility", true, false) == NULL)
		return;
	(void) set_config_option("citus.override_table_visibility", "off",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SET,
							 true, 0, false);
}
