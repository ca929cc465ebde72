/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The persistent list of guards: the bloomguard_guards table.
 *
 * Shared memory forgets everything at a restart; this extension
 * configuration table remembers which tables are guarded and at what
 * capacity and error rate, and pg_dump keeps it (pg_extension_config_dump).
 * It is written only through these functions, as the extension's owner:
 * callers check the table's ownership first.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

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

/*
 * Run one statement against the registry as the extension owner.  Returns
 * SPI_processed; for SELECTs, copies the first row's two numbers out.
 */
static uint64
bg_registry_exec(const char *fmt, Oid relid, int64 capacity, double error_rate,
				 int64 *capacity_out, double *error_rate_out)
{
	Oid			schema;
	Oid			owner;
	Oid			save_userid;
	int			save_sec_context;
	char	   *query;
	Oid			argtypes[3] = {OIDOID, INT8OID, FLOAT8OID};
	Datum		values[3];
	int			ret;
	uint64		processed;

	bg_extension_info(&schema, &owner);
	query = psprintf(fmt, quote_identifier(get_namespace_name(schema)));
	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int64GetDatum(capacity);
	values[2] = Float8GetDatum(error_rate);

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
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
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec_context);
	pfree(query);
	return processed;
}

/* Is relid registered?  Returns its capacity and error rate if so. */
bool
bg_registry_lookup(Oid relid, int64 *capacity, double *error_rate)
{
	int64		c = 0;
	double		p = 0;
	bool		found;

	found = bg_registry_exec("SELECT capacity, error_rate FROM %s.bloomguard_guards"
							 " WHERE relation OPERATOR(pg_catalog.=) $1::pg_catalog.oid"
							 " AND $2 IS NOT NULL AND $3 IS NOT NULL",
							 relid, 0, 0, &c, &p) > 0;
	if (found && capacity)
		*capacity = c;
	if (found && error_rate)
		*error_rate = p;
	return found;
}

void
bg_registry_insert(Oid relid, int64 capacity, double error_rate)
{
	bg_registry_exec("INSERT INTO %s.bloomguard_guards (relation, capacity, error_rate)"
					 " VALUES ($1, $2, $3)",
					 relid, capacity, error_rate, NULL, NULL);
}

void
bg_registry_update(Oid relid, int64 capacity, double error_rate)
{
	bg_registry_exec("UPDATE %s.bloomguard_guards SET capacity = $2, error_rate = $3"
					 " WHERE relation OPERATOR(pg_catalog.=) $1::pg_catalog.oid",
					 relid, capacity, error_rate, NULL, NULL);
}

void
bg_registry_delete(Oid relid)
{
	bg_registry_exec("DELETE FROM %s.bloomguard_guards"
					 " WHERE relation OPERATOR(pg_catalog.=) $1::pg_catalog.oid"
					 " AND $2 IS NOT NULL AND $3 IS NOT NULL",
					 relid, 0, 0, NULL, NULL);
}
