/*-------------------------------------------------------------------------
 *
 * args.c
 *	  Turning key arguments into key values.
 *
 * guarded_exists() and bloomguard_check() take their key as VARIADIC
 * "any", so an argument can be of any type.  The rule (the README's "Key
 * arguments") is that of the query WHERE pk = arg:
 *
 *	- an argument of the key column's type, or a domain over it, or text
 *	  for varchar and the reverse, is the value;
 *	- an unknown-typed literal is read with the key type's input function;
 *	- integers of any width mix, and one out of the key type's range can
 *	  equal no key;
 *	- a numeric for an integer key is converted only if it is integral
 *	  (5.5 equals no integer); an integer for a numeric key is exact;
 *	- anything else cannot be hashed the way the key is: the SQL query
 *	  itself answers it (tablelookup.c), with the argument's own type.
 *
 * The planner path converts the comparison values of index conditions
 * with the same rule (bg_classify_arg(), bg_convert_arg()), so that
 * cross-type conditions hash the way guarded_exists() hashes.
 *
 * How a call site's arguments convert depends only on their types, so it
 * is worked out once and kept in fn_extra (BgCallCache).
 *
 * Untyped parameters (what drivers send by default) cannot be read by an
 * "any" argument: the parser leaves them unknown, and refuses.  So since
 * version 1.2 both functions also have a variant whose key arguments are
 * VARIADIC bloomguard_untyped_key[] (the same C functions): a type of the
 * string category into which no type casts, so the parser picks that
 * variant for arguments that are all unknown (a literal or a parameter
 * without a type), and the "any" one for every call with a typed argument,
 * as before.  Its values are the strings as given, read as unknown
 * literals are: with the key column's input function, as WHERE pk = $1
 * reads an untyped $1.  An argument that cannot be read or compared
 * raises its error here, before any query runs, with a context line
 * naming the function and the argument, never the SQL lookup's text.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_oper.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_untyped_key_in);
PG_FUNCTION_INFO_V1(bloomguard_untyped_key_out);
PG_FUNCTION_INFO_V1(bloomguard_untyped_key_recv);
PG_FUNCTION_INFO_V1(bloomguard_untyped_key_send);

/*
 * The I/O functions of bloomguard_untyped_key: a string kept as given (its
 * representation is text's), read with the key's type only by the lookup.
 */
Datum
bloomguard_untyped_key_in(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall1(textin, PG_GETARG_DATUM(0));
}

/* bloomguard_untyped_key's output function: the string. */
Datum
bloomguard_untyped_key_out(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall1(textout, PG_GETARG_DATUM(0));
}

/* bloomguard_untyped_key's binary input: text's (the string's bytes). */
Datum
bloomguard_untyped_key_recv(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall1(textrecv, PG_GETARG_DATUM(0));
}

/* bloomguard_untyped_key's binary output: text's. */
Datum
bloomguard_untyped_key_send(PG_FUNCTION_ARGS)
{
	return DirectFunctionCall1(textsend, PG_GETARG_DATUM(0));
}

/* Is typid one of the integer types that mix freely? */
static bool
bg_is_int_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID;
}

/* Is typid text or varchar, which compare alike? */
static bool
bg_is_text_type(Oid typid)
{
	return typid == TEXTOID || typid == VARCHAROID;
}

/*
 * typid's base type.  The types that key conversions name are their own
 * (none is a domain), and need no catalog lookup: the planner path
 * classifies and converts its key at every executor start and scan.
 */
static Oid
bg_base_type(Oid typid)
{
	if (bg_is_int_type(typid) || bg_is_text_type(typid) || typid == NUMERICOID ||
		typid == UNKNOWNOID)
		return typid;
	return getBaseType(typid);
}

/* How an argument of argtype becomes a value of col's type. */
BgArgConv
bg_classify_arg(Oid argtype, const BgKeyColumn *col)
{
	Oid			a = bg_base_type(argtype);
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

/* An integer Datum of type typid as an int64. */
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

/*
 * Convert one argument (not NULL) of type argtype into a value of col's
 * type, the way conv says.  For BG_ARG_INPUT, typinput and typioparam are
 * the key type's input function.  Only the integer conversions need
 * argtype's base type.
 */
BgKeyResult
bg_convert_arg(BgArgConv conv, Oid argtype, const BgKeyColumn *col, Datum arg,
			   Oid typinput, Oid typioparam, Datum *value)
{
	Oid			basetype = InvalidOid;

	if (conv == BG_ARG_INT || conv == BG_ARG_INT_TO_NUMERIC)
		basetype = bg_base_type(argtype);
	switch (conv)
	{
		case BG_ARG_SAME:
			*value = arg;
			return BG_KEY_OK;
		case BG_ARG_INPUT:
			*value = OidInputFunctionCall(typinput, DatumGetCString(arg),
										  typioparam, -1);
			return BG_KEY_OK;
		case BG_ARG_INT:
			if (!bg_int_datum(col->basetype, bg_int_value(basetype, arg), value))
				return BG_KEY_NO_MATCH;
			return BG_KEY_OK;
		case BG_ARG_NUMERIC_TO_INT:
			{
				Numeric		num = DatumGetNumeric(arg);
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
				if (!bg_int_datum(col->basetype, v, value))
					return BG_KEY_NO_MATCH;
				return BG_KEY_OK;
			}
		case BG_ARG_INT_TO_NUMERIC:
			*value = NumericGetDatum(int64_to_numeric(bg_int_value(basetype, arg)));
			return BG_KEY_OK;
		case BG_ARG_SQL:
			break;
	}
	return BG_KEY_SQL;
}

/*
 * The call-site cache, allocated empty if there is none yet, knowing which
 * function is called: the "any" variant or the untyped one.
 */
static BgCallCache *
bg_call_site(FunctionCallInfo fcinfo)
{
	BgCallCache *cache = (BgCallCache *) fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BgCallCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	if (!cache->text_keys_known)
	{
		char	   *name = get_func_name(fcinfo->flinfo->fn_oid);

		/* there are two variants: "any", and bloomguard_untyped_key[] */
		cache->text_keys = get_func_variadictype(fcinfo->flinfo->fn_oid) != ANYOID;
		strlcpy(cache->fname, name ? name : "guarded_exists", NAMEDATALEN);
		cache->text_keys_known = true;
	}
	return cache;
}

/* What an argument's error context names. */
typedef struct BgArgErrorContext
{
	const char *fname;
	int			argno;			/* 1-based, of the key arguments */
} BgArgErrorContext;

/* Error context callback: the argument being converted. */
static void
bg_arg_error_callback(void *arg)
{
	BgArgErrorContext *ctx = (BgArgErrorContext *) arg;

	errcontext("key argument %d of %s()", ctx->argno, ctx->fname);
}

/*
 * Collect the key arguments (fcinfo args 1..n, or the elements of a
 * VARIADIC array) with their types.  Returns the number of key values.
 * The untyped variant's elements come back as C strings of type unknown,
 * to be read with the key type's input function.
 */
static int
bg_collect_args(FunctionCallInfo fcinfo, Datum *args, bool *nulls, Oid *types,
				bool *variadic_array)
{
	BgCallCache *site = bg_call_site(fcinfo);
	int			n;
	int			i;

	/* the untyped variant's keys are the elements of one array, expanded or not */
	*variadic_array = site->text_keys || get_fn_expr_variadic(fcinfo->flinfo);
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
			if (site->text_keys)
			{
				/* a string as given (text's representation), read later */
				if (!nulls[i])
					args[i] = CStringGetDatum(TextDatumGetCString(elems[i]));
				types[i] = UNKNOWNOID;
			}
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

/*
 * The collation the query's "pk = arg" compares argument argno (0-based,
 * of the key arguments) with, when that is not the key column's own, or
 * InvalidOid.  The argument's collation (a COLLATE clause, a column or a
 * domain that has one) wins over the column's unless it is the database
 * default; it matters only where either collation is nondeterministic
 * (deterministic ones all compare bytes for equality).  The filter and
 * the index hash and compare with the column's collation, so such an
 * argument is answered by the SQL query, with its collation named.
 */
static Oid
bg_arg_collation(FunctionCallInfo fcinfo, int argno, bool variadic_array,
				 const BgKeyColumn *col)
{
	Node	   *expr = fcinfo->flinfo->fn_expr;
	Oid			coll = PG_GET_COLLATION();

	if (!OidIsValid(col->collation))
		return InvalidOid;
	if (expr != NULL && IsA(expr, FuncExpr))
	{
		List	   *fargs = ((FuncExpr *) expr)->args;
		int			n = variadic_array ? 1 : argno + 1;

		if (n < list_length(fargs))
			coll = exprCollation((Node *) list_nth(fargs, n));
	}
	if (!OidIsValid(coll) || coll == DEFAULT_COLLATION_OID || coll == col->collation)
		return InvalidOid;
	if (get_collation_isdeterministic(coll) &&
		get_collation_isdeterministic(col->collation))
		return InvalidOid;
	return coll;
}

/*
 * An argument that the SQL query answers (its own type) must be one that
 * "pk = arg" can compare; if not, say so naming the call, before the query
 * would fail with its own text and a position inside it.
 */
static void
bg_check_comparable(const BgCallCache *cache, const BgKeyColumn *col,
					int argno, Oid argtype)
{
	Operator	op = oper(NULL, list_make1(makeString("=")), col->typid, argtype,
						  true, -1);

	if (op != NULL)
	{
		ReleaseSysCache(op);
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("key argument %d of %s() is of type %s, which cannot be compared with the key column's type %s",
					argno + 1, cache->fname, format_type_be(argtype),
					format_type_be(col->typid)),
			 errdetail("Column \"%s\" of table \"%s\" has no operator = for type %s.",
					   get_attname(cache->relid, col->attnum, false),
					   get_rel_name(cache->relid), format_type_be(argtype)),
			 errhint("Cast the argument to %s, or pass it as an untyped parameter.",
					 format_type_be(col->typid))));
}

/*
 * The call-site cache for this table, key and argument list, built if it
 * is missing or was built for something else.
 */
static BgCallCache *
bg_call_cache(FunctionCallInfo fcinfo, Relation rel, const BgKeyDesc *desc,
			  int nkeyargs, Oid *argtypes, bool variadic_array)
{
	BgCallCache *cache = bg_call_site(fcinfo);
	bool		text_keys = cache->text_keys;
	char		fname[NAMEDATALEN];
	int			i;

	if (cache->relid == RelationGetRelid(rel) &&
		cache->indexoid == desc->indexoid &&
		cache->nargs == nkeyargs && cache->variadic_array == variadic_array &&
		memcmp(cache->argtypes, argtypes, nkeyargs * sizeof(Oid)) == 0)
		return cache;

	/* what bg_call_site() knows stays */
	strlcpy(fname, cache->fname, NAMEDATALEN);
	memset(cache, 0, sizeof(BgCallCache));
	cache->text_keys_known = true;
	cache->text_keys = text_keys;
	strlcpy(cache->fname, fname, NAMEDATALEN);

	if (nkeyargs != desc->nkeys)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wrong number of key values for table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("The primary key has %d column(s), but %d value(s) were given.",
						   desc->nkeys, nkeyargs)));

	cache->relid = RelationGetRelid(rel);
	cache->indexoid = desc->indexoid;
	cache->nargs = nkeyargs;
	cache->variadic_array = variadic_array;
	memcpy(cache->argtypes, argtypes, nkeyargs * sizeof(Oid));
	for (i = 0; i < nkeyargs; i++)
	{
		const BgKeyColumn *col = &desc->cols[i];

		cache->conv[i] = bg_classify_arg(argtypes[i], col);
		cache->collation[i] = bg_arg_collation(fcinfo, i, variadic_array, col);
		if (OidIsValid(cache->collation[i]) && cache->conv[i] != BG_ARG_INPUT)
			cache->conv[i] = BG_ARG_SQL;
		if (cache->conv[i] == BG_ARG_INPUT && OidIsValid(cache->collation[i]))
			cache->any_sql = true;
		if (cache->conv[i] == BG_ARG_INPUT)
			getTypeInputInfo(col->basetype, &cache->typinput[i], &cache->typioparam[i]);
		if (cache->conv[i] == BG_ARG_SQL)
			cache->any_sql = true;
	}
	return cache;
}

/*
 * Turn the key arguments of a guarded_exists() or bloomguard_check() call
 * on rel into key values.  Sets *cachep (NULL for a NULL VARIADIC array),
 * fills args[] with the arguments and, with BG_KEY_OK, values[] with the
 * key.
 */
BgKeyResult
bg_call_key(FunctionCallInfo fcinfo, Relation rel, const BgKeyDesc *desc,
			BgCallCache **cachep, Datum *args, Datum *values)
{
	bool		nulls[INDEX_MAX_KEYS + 1];
	Oid			types[INDEX_MAX_KEYS + 1];
	bool		variadic_array;
	BgCallCache *cache;
	int			n;
	int			i;

	*cachep = NULL;
	n = bg_collect_args(fcinfo, args, nulls, types, &variadic_array);
	if (n < 0)
		return BG_KEY_NULL;
	cache = bg_call_cache(fcinfo, rel, desc, Min(n, INDEX_MAX_KEYS + 1), types,
						  variadic_array);
	*cachep = cache;

	for (i = 0; i < cache->nargs; i++)
		if (nulls[i])
			return BG_KEY_NULL;
	if (cache->any_sql)
		return BG_KEY_SQL;
	for (i = 0; i < cache->nargs; i++)
	{
		BgKeyResult kr;
		BgArgErrorContext ctx = {cache->fname, i + 1};
		ErrorContextCallback errcb = {error_context_stack, bg_arg_error_callback, &ctx};

		error_context_stack = &errcb;
		kr = bg_convert_arg(cache->conv[i], cache->argtypes[i],
							&desc->cols[i], args[i],
							cache->typinput[i], cache->typioparam[i],
							&values[i]);
		error_context_stack = errcb.previous;
		if (kr != BG_KEY_OK)
			return kr;
	}
	return BG_KEY_OK;
}

/*
 * The parameters, their types and collations (InvalidOid: the column's)
 * for answering a call by the SQL query with the arguments' own types:
 * each argument as given, except that an unknown literal is read with the
 * key type's input function.
 */
void
bg_call_sql_params(const BgCallCache *cache, const BgKeyDesc *desc,
				   const Datum *args, Datum *params, Oid *types,
				   Oid *collations)
{
	int			i;

	for (i = 0; i < cache->nargs; i++)
	{
		collations[i] = cache->collation[i];
		if (cache->conv[i] == BG_ARG_INPUT)
		{
			BgArgErrorContext ctx = {cache->fname, i + 1};
			ErrorContextCallback errcb = {error_context_stack, bg_arg_error_callback, &ctx};

			error_context_stack = &errcb;
			params[i] = OidInputFunctionCall(cache->typinput[i],
											 DatumGetCString(args[i]),
											 cache->typioparam[i], -1);
			error_context_stack = errcb.previous;
			types[i] = desc->cols[i].basetype;
		}
		else
		{
			if (cache->conv[i] == BG_ARG_SQL)
				bg_check_comparable(cache, &desc->cols[i], i, cache->argtypes[i]);
			params[i] = args[i];
			types[i] = cache->argtypes[i];
		}
	}
}
