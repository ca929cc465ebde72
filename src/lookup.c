/*-------------------------------------------------------------------------
 *
 * lookup.c
 *	  guarded_exists() and bloomguard_check(): the read side.
 *
 * guarded_exists(t, k...) must return exactly what
 *		EXISTS (SELECT 1 FROM t WHERE (pk...) = (k...))
 * returns for the same role and snapshot.  It asks the filter first, and
 * only when the filter is trusted and says "definitely absent" does it
 * answer false without reading the table.  Otherwise it probes the primary
 * key index from C under the caller's active snapshot, or, where a C probe
 * could not give the same answer (row-level security, inheritance
 * children, a key argument of a type we do not convert exactly), runs the
 * EXISTS query itself through SPI.
 *
 * The filter is trusted only when all of these hold:
 *	- bloomguard.enabled is on and we are not in recovery;
 *	- the guard's state is READY and the key identity stored with the
 *	  filter still matches the table's primary key;
 *	- the table has no inheritance children;
 *	- this transaction has not written the table.  AFTER ROW triggers fire
 *	  at the end of the statement, so a function running inside a writing
 *	  statement can see rows whose bits are not set yet;
 *	- the isolation level is not SERIALIZABLE: a negative answered from the
 *	  filter would skip the index predicate lock that lets SSI detect a
 *	  concurrent insert of the same key.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/visibilitymap.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(guarded_exists);
PG_FUNCTION_INFO_V1(bloomguard_check);

/* How a key argument becomes a value of the key column's type. */
typedef enum BgArgConv
{
	BG_ARG_SAME,				/* already the column's (base) type */
	BG_ARG_INPUT,				/* unknown literal: the type's input function */
	BG_ARG_INT,					/* int2/int4/int8 to another width */
	BG_ARG_NUMERIC_TO_INT,		/* numeric to an integer key, if integral */
	BG_ARG_INT_TO_NUMERIC,		/* integer to a numeric key */
	BG_ARG_SQL					/* anything else: let SQL's "=" decide */
} BgArgConv;

/* Result of turning the arguments into a key. */
typedef enum BgKeyResult
{
	BG_KEY_OK,					/* values[] holds the key */
	BG_KEY_NULL,				/* some argument is NULL: no row matches */
	BG_KEY_NO_MATCH,			/* no value of the key type can equal it */
	BG_KEY_SQL					/* must be answered by the SQL query */
} BgKeyResult;

/* Per-call-site cache, kept in fn_extra. */
typedef struct BgCallCache
{
	Oid			relid;
	bool		variadic_array;
	int			nargs;
	Oid			argtypes[INDEX_MAX_KEYS];
	BgArgConv	conv[INDEX_MAX_KEYS];
	Oid			typinput[INDEX_MAX_KEYS];
	Oid			typioparam[INDEX_MAX_KEYS];
	bool		any_sql;
	const BgKeyDesc *desc;		/* from the backend's key cache (keys.c) */
	const BgKeyIdentity *identity;	/* of desc, compared with the filter's */
	Oid			indexoid;		/* desc's, when this cache was built */
	BgSlotRef  *ref;			/* the backend's, for this table */
} BgCallCache;

static bool
bg_is_int_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID;
}

static bool
bg_is_text_type(Oid typid)
{
	return typid == TEXTOID || typid == VARCHAROID;
}

static BgArgConv
bg_classify_arg(Oid argtype, const BgKeyColumn *col)
{
	Oid			a = getBaseType(argtype);
	Oid			t = col->basetype;

	if (a == UNKNOWNOID)
		return BG_ARG_INPUT;
	if (a == t)
		return BG_ARG_SAME;
	if (bg_is_text_type(a) && bg_is_text_type(t))
		return BG_ARG_SAME;
	if (bg_is_int_type(a) && bg_is_int_type(t))
		return BG_ARG_INT;
	if (a == NUMERICOID && bg_is_int_type(t))
		return BG_ARG_NUMERIC_TO_INT;
	if (bg_is_int_type(a) && t == NUMERICOID)
		return BG_ARG_INT_TO_NUMERIC;
	return BG_ARG_SQL;
}

static int64
bg_int_value(Oid typid, Datum d)
{
	switch (typid)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

/* Make an integer Datum of type typid, or return false if out of range. */
static bool
bg_int_datum(Oid typid, int64 v, Datum *result)
{
	switch (typid)
	{
		case INT2OID:
			if (v < PG_INT16_MIN || v > PG_INT16_MAX)
				return false;
			*result = Int16GetDatum((int16) v);
			return true;
		case INT4OID:
			if (v < PG_INT32_MIN || v > PG_INT32_MAX)
				return false;
			*result = Int32GetDatum((int32) v);
			return true;
		default:
			*result = Int64GetDatum(v);
			return true;
	}
}

/* Is an integral numeric within int8's range? */
static bool
bg_numeric_in_int8_range(Numeric num)
{
	Datum		lo = NumericGetDatum(int64_to_numeric(PG_INT64_MIN));
	Datum		hi = NumericGetDatum(int64_to_numeric(PG_INT64_MAX));
	Datum		n = NumericGetDatum(num);

	return DatumGetInt32(DirectFunctionCall2(numeric_cmp, n, lo)) >= 0 &&
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, n, hi)) <= 0;
}

/* The schema of an operator. */
static Oid
bg_operator_namespace(Oid opno)
{
	HeapTuple	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	Oid			result;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator %u", opno);
	result = ((Form_pg_operator) GETSTRUCT(tup))->oprnamespace;
	ReleaseSysCache(tup);
	return result;
}

/* Open the table named by the first argument and check the caller may read its key. */
static Relation
bg_open_for_read(Oid relid)
{
	Relation	rel = relation_open(relid, AccessShareLock);
	AclResult	aclresult;

	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
	{
		Oid			pkindex = RelationGetPrimaryKeyIndex(rel);
		bool		ok = OidIsValid(pkindex);

		/* SELECT on every key column is enough, as it is for the query */
		if (ok)
		{
			Relation	idx = index_open(pkindex, AccessShareLock);
			int			i;

			for (i = 0; i < IndexRelationGetNumberOfKeyAttributes(idx) && ok; i++)
				ok = pg_attribute_aclcheck(relid, idx->rd_index->indkey.values[i],
										   GetUserId(), ACL_SELECT) == ACLCHECK_OK;
			index_close(idx, AccessShareLock);
		}
		if (!ok)
			aclcheck_error(aclresult, get_relkind_objtype(rel->rd_rel->relkind),
						   RelationGetRelationName(rel));
	}

	switch (rel->rd_rel->relkind)
	{
		case RELKIND_RELATION:
		case RELKIND_PARTITIONED_TABLE:
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a table", RelationGetRelationName(rel)),
					 errdetail("guarded_exists() looks up rows of tables by primary key.")));
	}
	return rel;
}

/* Get the call-site cache for this relation and argument list, building it if needed. */
static BgCallCache *
bg_call_cache(FunctionCallInfo fcinfo, Relation rel, int nkeyargs,
			  Oid *argtypes, bool variadic_array)
{
	BgCallCache *cache = (BgCallCache *) fcinfo->flinfo->fn_extra;
	const BgKeyIdentity *identity;
	BgSlotRef  *ref;
	const BgKeyDesc *desc = bg_keydesc_lookup(rel, &identity, &ref);
	int			i;

	/* a table without a primary key has no guarded_exists() meaning */
	if (desc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no primary key",
						RelationGetRelationName(rel)),
				 errhint("bloomguard guards a table by its primary key; add one with ALTER TABLE ... ADD PRIMARY KEY.")));

	if (cache != NULL && cache->relid == RelationGetRelid(rel) &&
		cache->indexoid == desc->indexoid &&
		cache->nargs == nkeyargs && cache->variadic_array == variadic_array &&
		memcmp(cache->argtypes, argtypes, nkeyargs * sizeof(Oid)) == 0)
	{
		cache->desc = desc;		/* the cache entry may have been rebuilt */
		cache->identity = identity;
		cache->ref = ref;
		return cache;
	}

	if (cache == NULL)
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BgCallCache));
	else
		memset(cache, 0, sizeof(BgCallCache));
	fcinfo->flinfo->fn_extra = cache;

	if (nkeyargs != desc->nkeys)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wrong number of key values for table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The primary key has %d column(s), but %d value(s) were given.",
						   desc->nkeys, nkeyargs)));

	cache->desc = desc;
	cache->identity = identity;
	cache->indexoid = desc->indexoid;
	cache->relid = RelationGetRelid(rel);
	cache->nargs = nkeyargs;
	cache->variadic_array = variadic_array;
	memcpy(cache->argtypes, argtypes, nkeyargs * sizeof(Oid));
	for (i = 0; i < nkeyargs; i++)
	{
		const BgKeyColumn *col = &desc->cols[i];

		cache->conv[i] = bg_classify_arg(argtypes[i], col);
		if (cache->conv[i] == BG_ARG_INPUT)
			getTypeInputInfo(col->basetype, &cache->typinput[i], &cache->typioparam[i]);
		if (cache->conv[i] == BG_ARG_SQL)
			cache->any_sql = true;
	}
	cache->ref = ref;
	return cache;
}

/*
 * Collect the key arguments (fcinfo args 1..n, or the elements of a
 * VARIADIC array) with their types.  Returns the number of key values.
 */
static int
bg_collect_args(FunctionCallInfo fcinfo, Datum *args, bool *nulls, Oid *types,
				bool *variadic_array)
{
	int			n;
	int			i;

	*variadic_array = get_fn_expr_variadic(fcinfo->flinfo);
	if (*variadic_array)
	{
		ArrayType  *arr;
		Oid			elemtype;
		int16		elmlen;
		bool		elmbyval;
		char		elmalign;
		Datum	   *elems;
		bool	   *elemnulls;

		if (PG_NARGS() != 2)
			elog(ERROR, "unexpected VARIADIC call");
		if (PG_ARGISNULL(1))
			return -1;
		arr = PG_GETARG_ARRAYTYPE_P(1);
		elemtype = ARR_ELEMTYPE(arr);
		get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
		deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
						  &elems, &elemnulls, &n);
		if (n > INDEX_MAX_KEYS)
			n = INDEX_MAX_KEYS + 1;
		for (i = 0; i < n && i < INDEX_MAX_KEYS; i++)
		{
			args[i] = elems[i];
			nulls[i] = elemnulls[i];
			types[i] = elemtype;
		}
		return n;
	}

	n = PG_NARGS() - 1;
	for (i = 0; i < n && i < INDEX_MAX_KEYS; i++)
	{
		args[i] = PG_GETARG_DATUM(i + 1);
		nulls[i] = PG_ARGISNULL(i + 1);
		types[i] = get_fn_expr_argtype(fcinfo->flinfo, i + 1);
		if (!OidIsValid(types[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not determine the data type of key argument %d", i + 1)));
	}
	return n;
}

/* Turn the arguments into key column values. */
static BgKeyResult
bg_convert_key(BgCallCache *cache, Datum *args, bool *nulls, Datum *values)
{
	int			i;

	for (i = 0; i < cache->nargs; i++)
		if (nulls[i])
			return BG_KEY_NULL;
	if (cache->any_sql)
		return BG_KEY_SQL;

	for (i = 0; i < cache->nargs; i++)
	{
		const BgKeyColumn *col = &cache->desc->cols[i];
		Oid			argtype = getBaseType(cache->argtypes[i]);

		switch (cache->conv[i])
		{
			case BG_ARG_SAME:
				values[i] = args[i];
				break;
			case BG_ARG_INPUT:
				values[i] = OidInputFunctionCall(cache->typinput[i],
												 DatumGetCString(args[i]),
												 cache->typioparam[i], -1);
				break;
			case BG_ARG_INT:
				if (!bg_int_datum(col->basetype, bg_int_value(argtype, args[i]),
								  &values[i]))
					return BG_KEY_NO_MATCH;
				break;
			case BG_ARG_NUMERIC_TO_INT:
				{
					Numeric		num = DatumGetNumeric(args[i]);
					Datum		trunc;
					int64		v;

					if (numeric_is_nan(num) || numeric_is_inf(num))
						return BG_KEY_NO_MATCH;
					trunc = DirectFunctionCall2(numeric_trunc, NumericGetDatum(num),
												Int32GetDatum(0));
					if (!DatumGetBool(DirectFunctionCall2(numeric_eq, trunc,
														  NumericGetDatum(num))))
						return BG_KEY_NO_MATCH; /* 5.5 equals no integer */
					if (!bg_numeric_in_int8_range(num))
						return BG_KEY_NO_MATCH;
					v = DatumGetInt64(DirectFunctionCall1(numeric_int8,
														  NumericGetDatum(num)));
					if (!bg_int_datum(col->basetype, v, &values[i]))
						return BG_KEY_NO_MATCH;
					break;
				}
			case BG_ARG_INT_TO_NUMERIC:
				values[i] = NumericGetDatum(int64_to_numeric(bg_int_value(argtype, args[i])));
				break;
			case BG_ARG_SQL:
				return BG_KEY_SQL;
		}
	}
	return BG_KEY_OK;
}

/*
 * Probe the primary key index under the active snapshot.  Like an
 * index-only scan: a match on an all-visible heap page is visible to every
 * snapshot, so the heap is read only for pages the visibility map does not
 * vouch for.  Predicate locks are taken as an index-only scan takes them.
 */
static bool
bg_index_probe(Relation rel, const BgKeyDesc *desc, const Datum *values)
{
	Relation	idx = index_open(desc->indexoid, AccessShareLock);
	ScanKeyData skeys[INDEX_MAX_KEYS];
	IndexScanDesc scan;
	TupleTableSlot *slot = NULL;
	Snapshot	snapshot = GetActiveSnapshot();
	Buffer		vmbuffer = InvalidBuffer;
	ItemPointer tid;
	bool		found = false;
	int			i;

	for (i = 0; i < desc->nkeys; i++)
		ScanKeyEntryInitialize(&skeys[i], 0, i + 1, BTEqualStrategyNumber,
							   InvalidOid, desc->cols[i].collation,
							   desc->cols[i].eqproc, values[i]);

	scan = index_beginscan(rel, idx, snapshot, desc->nkeys, 0);
	index_rescan(scan, skeys, desc->nkeys, NULL, 0);
	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		if (VM_ALL_VISIBLE(rel, ItemPointerGetBlockNumber(tid), &vmbuffer))
		{
			PredicateLockPage(rel, ItemPointerGetBlockNumber(tid), snapshot);
			found = true;
			break;
		}
		if (slot == NULL)
			slot = table_slot_create(rel, NULL);
		if (index_fetch_heap(scan, slot))
		{
			found = true;
			break;
		}
	}
	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	index_endscan(scan);
	if (slot)
		ExecDropSingleTupleTableSlot(slot);
	index_close(idx, AccessShareLock);
	return found;
}

/*
 * Run EXISTS (SELECT 1 FROM t WHERE k1 = $1 AND ...) through SPI, under the
 * caller's snapshot, with row-level security and inheritance applied as
 * for any query.  With typed, arguments keep their own types and the
 * caller's "=" resolution; otherwise they are key values and the key's
 * own equality operators are named explicitly.
 */
static bool
bg_sql_lookup(BgCallCache *cache, Relation rel, const Datum *params, bool typed)
{
	StringInfoData q;
	Oid			types[INDEX_MAX_KEYS];
	Datum		result;
	bool		isnull;
	int			ret;
	int			i;

	initStringInfo(&q);
	appendStringInfo(&q, "SELECT EXISTS (SELECT 1 FROM %s WHERE ",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												RelationGetRelationName(rel)));
	for (i = 0; i < cache->nargs; i++)
	{
		const BgKeyColumn *col = &cache->desc->cols[i];
		char	   *colname = get_attname(cache->relid, col->attnum, false);

		if (i > 0)
			appendStringInfoString(&q, " AND ");
		if (typed)
		{
			appendStringInfo(&q, "%s = $%d", quote_identifier(colname), i + 1);
			/* an unknown literal is passed read with the key's input function */
			types[i] = cache->conv[i] == BG_ARG_INPUT ?
				col->basetype : cache->argtypes[i];
		}
		else
		{
			appendStringInfo(&q, "%s OPERATOR(%s.=) $%d",
							 quote_identifier(colname),
							 quote_identifier(get_namespace_name(bg_operator_namespace(col->eqop))),
							 i + 1);
			types[i] = col->basetype;
		}
	}
	appendStringInfoChar(&q, ')');

	/*
	 * Not a saved plan: fn_extra (and so anything keyed to it) is new at
	 * every execution of a prepared statement, and a kept plan would leak.
	 * read_only: run under the caller's current snapshot.
	 */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args(q.data, cache->nargs, types, (Datum *) params,
								NULL, true, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "bloomguard lookup query failed: %s", SPI_result_code_string(ret));
	result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	SPI_finish();
	pfree(q.data);
	return DatumGetBool(result);
}

/* Does a plain C index probe give the same answer as the SQL query? */
static bool
bg_can_probe_index(Relation rel)
{
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		return false;
	if (rel->rd_rel->relhassubclass)
		return false;
	if (check_enable_rls(RelationGetRelid(rel), InvalidOid, false) == RLS_ENABLED)
		return false;
	return true;
}

/* The authoritative answer: read the table. */
static bool
bg_source_lookup(BgCallCache *cache, Relation rel, BgKeyResult kr,
				 const Datum *args, const Datum *values)
{
	if (kr == BG_KEY_SQL)
	{
		Datum		params[INDEX_MAX_KEYS];
		int			i;

		for (i = 0; i < cache->nargs; i++)
			params[i] = cache->conv[i] == BG_ARG_INPUT ?
				OidInputFunctionCall(cache->typinput[i], DatumGetCString(args[i]),
									 cache->typioparam[i], -1) :
				args[i];
		return bg_sql_lookup(cache, rel, params, true);
	}
	if (bg_can_probe_index(rel))
		return bg_index_probe(rel, cache->desc, values);
	return bg_sql_lookup(cache, rel, values, false);
}

/*
 * Is the feed trigger there, exactly as attach made it, and firing ALWAYS?
 * A cheap scan of the relcache's trigger list.  Anything else named
 * "bloomguard" (another function, a WHEN clause, UPDATE OF columns, a
 * deferred constraint trigger, other events) might not see every key.
 * (coverage.c marks the guard untrusted when the trigger changes; this
 * catches the state in between, and replacements it cannot see.)
 */
bool
bg_feed_in_place(Relation rel)
{
	TriggerDesc *trigdesc = rel->trigdesc;
	int			i;

	if (trigdesc == NULL)
		return false;
	for (i = 0; i < trigdesc->numtriggers; i++)
	{
		Trigger    *trig = &trigdesc->triggers[i];

		if (strcmp(trig->tgname, BLOOMGUARD_TRIGGER_NAME) == 0)
			return trig->tgenabled == TRIGGER_FIRES_ALWAYS &&
				trig->tgtype == (TRIGGER_TYPE_ROW | TRIGGER_TYPE_INSERT |
								 TRIGGER_TYPE_UPDATE) &&	/* AFTER: no bit */
				trig->tgnattr == 0 &&
				trig->tgqual == NULL &&
				!OidIsValid(trig->tgconstraint) &&
				!trig->tgdeferrable &&
				bg_is_feed_function(trig->tgfoid);
	}
	return false;
}

/*
 * Can the filter be trusted for this call?  Checks everything but the
 * slot's state (see the file header).
 */
static bool
bg_filter_usable(Relation rel)
{
	if (!bg_enabled || RecoveryInProgress())
		return false;
	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relhassubclass)
		return false;
	if (IsolationIsSerializable())
		return false;
	if (CheckRelationLockedByMe(rel, RowExclusiveLock, true))
		return false;
	if (!bg_feed_in_place(rel))
		return false;
#if PG_VERSION_NUM < 170000
	/*
	 * With old_snapshot_threshold, VACUUM may remove row versions that old
	 * snapshots can still see ("snapshot too old"); the build's argument
	 * (build.c) needs every visible version to be in the heap or to have
	 * passed through the trigger.
	 */
	if (old_snapshot_threshold >= 0)
		return false;
#endif
	return true;
}

/*
 * What the filter says about a key: -1 no trusted filter, 0 absent, 1 maybe.
 * values is NULL when the key could not be converted for hashing; nomatch
 * means no value of the key's type can equal the argument, which a trusted
 * filter may report as absent.  *slotp is set to the guard's slot, if any,
 * for the caller's counters (which need no lock).
 */
static int
bg_filter_says(BgCallCache *cache, Relation rel, const Datum *values,
			   bool nomatch, BgSlot **slotp)
{
	BgSlot	   *slot;
	int			answer = -1;
	bool		key_changed = false;
	uint64		colhashes[INDEX_MAX_KEYS];
	bool		hashed = false;

	/* hash before taking the slot lock (hash functions may detoast) */
	if (values != NULL && cache->desc->hashable)
	{
		bg_key_colhashes(cache->desc, values, colhashes);
		hashed = true;
	}

	*slotp = NULL;
	slot = bg_slot_lock(cache->ref, cache->relid, LW_SHARED);
	if (slot == NULL)
		return -1;
	*slotp = slot;
	if (slot->state == BG_STATE_READY && DsaPointerIsValid(slot->serving) &&
		(hashed || (nomatch && cache->desc->hashable)) && bg_filter_usable(rel))
	{
		if (!bg_identity_equal(cache->identity, &slot->key))
			key_changed = true;
		else if (nomatch)
			answer = 0;
		else
		{
			BloomFilter *filter = dsa_get_address(bg_dsa(), slot->serving);

			answer = bloom_maybe(filter,
								 bloom_hash_key(filter->seed, colhashes,
												cache->desc->nkeys)) ? 1 : 0;
		}
	}
	LWLockRelease(&slot->lock);
	if (key_changed)
		bg_untrust(cache->relid, "its primary key changed");
	return answer;
}

/* Shared front half of both functions. */
static BgKeyResult
bg_prepare_call(FunctionCallInfo fcinfo, Relation *relp, BgCallCache **cachep,
				Datum *args, Datum *values)
{
	bool		nulls[INDEX_MAX_KEYS + 1];
	Oid			types[INDEX_MAX_KEYS + 1];
	bool		variadic_array;
	int			n;
	Relation	rel;
	BgCallCache *cache;

	bg_require_loaded();
	rel = bg_open_for_read(PG_GETARG_OID(0));
	*relp = rel;
	n = bg_collect_args(fcinfo, args, nulls, types, &variadic_array);
	if (n < 0)
	{
		*cachep = NULL;
		return BG_KEY_NULL;
	}
	cache = bg_call_cache(fcinfo, rel, Min(n, INDEX_MAX_KEYS + 1), types, variadic_array);
	*cachep = cache;
	return bg_convert_key(cache, args, nulls, values);
}

/*
 * guarded_exists(rel regclass, VARIADIC key "any") returns boolean
 */
Datum
guarded_exists(PG_FUNCTION_ARGS)
{
	Relation	rel;
	BgCallCache *cache;
	Datum		args[INDEX_MAX_KEYS + 1];
	Datum		values[INDEX_MAX_KEYS];
	BgKeyResult kr;
	BgSlot	   *slot;
	int			says;
	bool		found;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();

	kr = bg_prepare_call(fcinfo, &rel, &cache, args, values);
	if (kr == BG_KEY_NULL || kr == BG_KEY_NO_MATCH)
	{
		relation_close(rel, NoLock);
		PG_RETURN_BOOL(false);
	}

	/*
	 * One atomic add per call on the shortcut path: checks is derived as
	 * shortcuts + source_lookups + fallbacks.
	 */
	says = bg_filter_says(cache, rel, kr == BG_KEY_OK ? values : NULL, false, &slot);
	if (says == 0)
	{
		pg_atomic_fetch_add_u64(&slot->shortcuts, 1);
		relation_close(rel, NoLock);
		PG_RETURN_BOOL(false);
	}

	found = bg_source_lookup(cache, rel, kr, args, values);
	if (slot)
	{
		if (says == 1)
		{
			pg_atomic_fetch_add_u64(&slot->source_lookups, 1);
			if (found)
				pg_atomic_fetch_add_u64(&slot->source_hits, 1);
		}
		else
			pg_atomic_fetch_add_u64(&slot->fallbacks, 1);
	}
	relation_close(rel, NoLock);
	PG_RETURN_BOOL(found);
}

/*
 * bloomguard_check(rel regclass, VARIADIC key "any") returns text
 *
 * The filter's own answer, never the table's: 'absent', 'maybe', or
 * 'unknown' when no trusted filter can answer.
 */
Datum
bloomguard_check(PG_FUNCTION_ARGS)
{
	Relation	rel;
	BgCallCache *cache;
	Datum		args[INDEX_MAX_KEYS + 1];
	Datum		values[INDEX_MAX_KEYS];
	BgKeyResult kr;
	BgSlot	   *slot;
	int			says;
	const char *answer;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();

	kr = bg_prepare_call(fcinfo, &rel, &cache, args, values);
	if (kr == BG_KEY_NULL)
	{
		relation_close(rel, NoLock);
		PG_RETURN_NULL();
	}

	says = bg_filter_says(cache, rel, kr == BG_KEY_OK ? values : NULL,
						  kr == BG_KEY_NO_MATCH, &slot);

	/*
	 * Under row-level security the filter's answer would tell a role about
	 * rows its policies hide from it; say nothing.
	 */
	if (check_enable_rls(RelationGetRelid(rel), InvalidOid, false) == RLS_ENABLED)
		says = -1;
	if (says == 1)
		answer = "maybe";
	else if (says == 0)
		answer = "absent";
	else
		answer = "unknown";
	relation_close(rel, NoLock);
	PG_RETURN_TEXT_P(cstring_to_text(answer));
}
