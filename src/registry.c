/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The persistent list of guards: the bloomguard_guards table.
 *
 * Shared memory forgets everything at a restart; this extension
 * configuration table remembers which tables are guarded and at what
 * capacity and error rate, and pg_dump keeps it (pg_extension_config_dump).
 * It is written only through these functions, as the extension's owner:
 * callers check the table's ownership first, with the checks at the end
 * of this file.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bloomguard.h"

/* Find the bloomguard extension's schema and owner in this database. */
static void
bg_extension_info(Oid *schema, Oid *owner)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	bool		found = false;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("bloomguard"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		Form_pg_extension ext = (Form_pg_extension) GETSTRUCT(tuple);

		*schema = ext->extnamespace;
		*owner = ext->extowner;
		found = true;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);

	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"bloomguard\" is not installed in this database"),
				 errhint("Run CREATE EXTENSION bloomguard.")));
}

/* The schema the extension is installed in. */
Oid
bg_extension_schema(void)
{
	Oid			schema;
	Oid			owner;

	bg_extension_info(&schema, &owner);
	return schema;
}

/* Saved identity while running a registry statement as the extension owner. */
typedef struct BgRegistryCall
{
	Oid			schema;
	Oid			save_userid;
	int			save_sec_context;
} BgRegistryCall;

/* Become the extension owner and connect to SPI; returns the extension's schema. */
static void
bg_registry_begin(BgRegistryCall *call)
{
	Oid			owner;

	bg_extension_info(&call->schema, &owner);
	GetUserIdAndSecContext(&call->save_userid, &call->save_sec_context);
	SetUserIdAndSecContext(owner, call->save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

/* Undo bg_registry_begin(). */
static void
bg_registry_end(BgRegistryCall *call)
{
	SPI_finish();
	SetUserIdAndSecContext(call->save_userid, call->save_sec_context);
}

/*
 * Run one statement against the registry as the extension owner, with
 * $1 the tables (an oid[]), $2 a capacity and $3 an error rate.  Returns
 * SPI_processed; for SELECTs, copies the first row's two numbers out.
 */
static uint64
bg_registry_exec(const char *fmt, const Oid *relids, int nrelids,
				 int64 capacity, double error_rate,
				 int64 *capacity_out, double *error_rate_out)
{
	BgRegistryCall call;
	char	   *query;
	Oid			argtypes[3] = {OIDARRAYOID, INT8OID, FLOAT8OID};
	Datum		values[3];
	Datum	   *elems = palloc(Max(nrelids, 1) * sizeof(Datum));
	int			ret;
	uint64		processed;
	int			i;

	bg_registry_begin(&call);
	query = psprintf(fmt, quote_identifier(get_namespace_name(call.schema)));
	for (i = 0; i < nrelids; i++)
		elems[i] = ObjectIdGetDatum(relids[i]);
	values[0] = PointerGetDatum(construct_array(elems, nrelids, OIDOID, sizeof(Oid),
												true, TYPALIGN_INT));
	values[1] = Int64GetDatum(capacity);
	values[2] = Float8GetDatum(error_rate);

	ret = SPI_execute_with_args(query, 3, argtypes, values, NULL, false, 0);
	if (ret < 0)
		elog(ERROR, "bloomguard registry query failed: %s", SPI_result_code_string(ret));
	processed = SPI_processed;
	if (capacity_out && processed > 0)
	{
		bool		isnull;

		*capacity_out = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 1, &isnull));
		*error_rate_out = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0],
													   SPI_tuptable->tupdesc, 2, &isnull));
	}
	bg_registry_end(&call);		/* frees query and the array */
	pfree(elems);
	return processed;
}

#define BG_REGISTRY_WHERE \
	" WHERE relation::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)"

/* Is relid registered?  Returns its capacity and error rate if so. */
bool
bg_registry_lookup(Oid relid, int64 *capacity, double *error_rate)
{
	int64		c = 0;
	double		p = 0;
	bool		found;

	found = bg_registry_exec("SELECT capacity, error_rate FROM %s.bloomguard_guards"
							 BG_REGISTRY_WHERE
							 " AND $2 IS NOT NULL AND $3 IS NOT NULL",
							 &relid, 1, 0, 0, &c, &p) > 0;
	if (found && capacity)
		*capacity = c;
	if (found && error_rate)
		*error_rate = p;
	return found;
}

/*
 * Every registered guard of this database: a list of BgRegistryEntry, in
 * table OID order, read as the extension owner (the registry is not
 * readable by PUBLIC; callers filter what they show).
 */
List *
bg_registry_list(void)
{
	BgRegistryCall call;
	List	   *result = NIL;
	MemoryContext outer = CurrentMemoryContext;
	uint64		i;

	bg_registry_begin(&call);
	if (SPI_execute(psprintf("SELECT relation::pg_catalog.oid, capacity, error_rate"
							 " FROM %s.bloomguard_guards ORDER BY 1",
							 quote_identifier(get_namespace_name(call.schema))),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read bloomguard_guards");
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		MemoryContext oldcxt = MemoryContextSwitchTo(outer);
		BgRegistryEntry *e = palloc(sizeof(BgRegistryEntry));

		e->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
		e->capacity = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		e->error_rate = DatumGetFloat8(SPI_getbinval(tup, desc, 3, &isnull));
		result = lappend(result, e);
		MemoryContextSwitchTo(oldcxt);
	}
	bg_registry_end(&call);
	return result;
}

/* Register a guard. */
void
bg_registry_insert(Oid relid, int64 capacity, double error_rate)
{
	bg_registry_exec("INSERT INTO %s.bloomguard_guards (relation, capacity, error_rate)"
					 " VALUES ($1[1], $2, $3)",
					 &relid, 1, capacity, error_rate, NULL, NULL);
}

/* Change a guard's registered capacity and error rate. */
void
bg_registry_update(Oid relid, int64 capacity, double error_rate)
{
	bg_registry_exec("UPDATE %s.bloomguard_guards SET capacity = $2, error_rate = $3"
					 BG_REGISTRY_WHERE,
					 &relid, 1, capacity, error_rate, NULL, NULL);
}

/* Unregister tables (no error for those that are not registered). */
void
bg_registry_delete(const Oid *relids, int n)
{
	bg_registry_exec("DELETE FROM %s.bloomguard_guards" BG_REGISTRY_WHERE
					 " AND $2 IS NOT NULL AND $3 IS NOT NULL",
					 relids, n, 0, 0, NULL, NULL);
}

/*
 * Error out unless the current user has USAGE on rel's schema.  A query
 * naming the table needs it, and our functions take the table as a
 * regclass, which an OID bypasses; this gives the query's own error.
 */
void
bg_check_schema_usage(Relation rel)
{
	Oid			nspid = RelationGetNamespace(rel);
	AclResult	aclresult;

	aclresult = bg_namespace_aclcheck(nspid, GetUserId(), ACL_USAGE);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_SCHEMA, get_namespace_name(nspid));
}

/* Error out unless the current user owns rel and may use its schema. */
void
bg_check_owner(Relation rel)
{
	bg_check_schema_usage(rel);
	if (!bg_class_ownercheck(RelationGetRelid(rel), GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
}

/*
 * Error out unless rel is guarded; returns its registered capacity and
 * error rate (either pointer may be NULL).
 */
void
bg_require_guarded(Relation rel, int64 *capacity, double *error_rate)
{
	if (!bg_registry_lookup(RelationGetRelid(rel), capacity, error_rate))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" is not guarded", RelationGetRelationName(rel)),
				 errhint("Use bloomguard_attach() to guard it.")));
}

/*
 * May the current user see this guard's row?  Only if the table exists and
 * the user could query it, or reads all statistics.
 */
bool
bg_may_see_guard(Oid relid)
{
	Oid			userid = GetUserId();
	Oid			nspid;

	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return false;
	if (has_privs_of_role(userid, ROLE_PG_READ_ALL_STATS))
		return true;
	nspid = get_rel_namespace(relid);
	if (bg_namespace_aclcheck(nspid, userid, ACL_USAGE) != ACLCHECK_OK)
		return false;
	return pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck_all(relid, userid, ACL_SELECT, ACLMASK_ANY) == ACLCHECK_OK;
}
