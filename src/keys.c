/*-------------------------------------------------------------------------
 *
 * keys.c
 *	  The primary key of a guarded table: describing it and hashing it.
 *
 * A filter is only sound if values that the key's equality operator calls
 * equal hash to the same bits.  So the hash of each key column comes from
 * the hash operator family that contains the very equality operator the
 * primary key index uses, called with the index's collation: that handles
 * numeric 1.0 = 1.00, float8 -0 = 0, char(n) trailing blanks, and
 * nondeterministic collations, and it detoasts its input.  For a few types
 * whose equality is byte equality (integers, oid, date, the timestamps,
 * uuid, bytea, and text under a deterministic collation) the bytes are
 * hashed directly with XXH3, which is faster and provably consistent.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/hash.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "bloomguard.h"

/*
 * The extended hash function of the hash opfamily that contains eqop, or
 * InvalidOid.  Using the opfamily of the equality operator itself (rather
 * than the type's default hash opclass) is what guarantees consistency.
 */
static Oid
bg_hash_proc_for_eqop(Oid eqop)
{
	CatCList   *catlist;
	Oid			result = InvalidOid;
	int			i;

	catlist = SearchSysCacheList1(AMOPOPID, ObjectIdGetDatum(eqop));
	for (i = 0; i < catlist->n_members; i++)
	{
		HeapTuple	tuple = &catlist->members[i]->tuple;
		Form_pg_amop aform = (Form_pg_amop) GETSTRUCT(tuple);

		if (aform->amopmethod == HASH_AM_OID &&
			aform->amopstrategy == HTEqualStrategyNumber &&
			aform->amoplefttype == aform->amoprighttype)
		{
			result = get_opfamily_proc(aform->amopfamily,
									   aform->amoplefttype,
									   aform->amoplefttype,
									   HASHEXTENDED_PROC);
			if (OidIsValid(result))
				break;
		}
	}
	ReleaseSysCacheList(catlist);
	return result;
}

/* Can this column be hashed by its bytes?  Which way? */
static bool
bg_raw_method(Oid basetype, Oid opcintype, Oid eqop, Oid collation,
			  BgHashMethod *method)
{
	TypeCacheEntry *tc = lookup_type_cache(opcintype, TYPECACHE_EQ_OPR);

	/* a non-default equality (a custom opclass) might not be byte equality */
	if (tc->eq_opr != eqop)
		return false;

	switch (basetype)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
		case CHAROID:
			*method = BG_HASH_BYVAL;
			return true;
		case UUIDOID:
			*method = BG_HASH_FIXED;
			return true;
		case BYTEAOID:
			*method = BG_HASH_VARLENA;
			return true;
		case TEXTOID:
		case VARCHAROID:
			if (OidIsValid(collation) && get_collation_isdeterministic(collation))
			{
				*method = BG_HASH_VARLENA;
				return true;
			}
			return false;
		default:
			return false;
	}
}

/*
 * The primary key index of rel, or InvalidOid.  RelationGetPrimaryKeyIndex()
 * would not do: before 18 it skips a DEFERRABLE primary key (18 asks with
 * a deferrable_ok argument), and a deferrable key is as good as any for a
 * filter, which tolerates the duplicates it can hold inside a transaction.
 * An invalid index (18 can return one for a partitioned table) is not a
 * usable key, as it is not for 15's relcache.
 */
Oid
bg_primary_key_index(Relation rel)
{
	List	   *indexes = RelationGetIndexList(rel);
	Oid			result = InvalidOid;
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Oid			indexoid = lfirst_oid(lc);
		HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
		Form_pg_index index;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for index %u", indexoid);
		index = (Form_pg_index) GETSTRUCT(tup);
		if (index->indisprimary && index->indisvalid && index->indislive)
			result = indexoid;
		ReleaseSysCache(tup);
		if (OidIsValid(result))
			break;
	}
	list_free(indexes);
	return result;
}

/*
 * Describe the primary key of rel, in memory allocated in the current
 * memory context (which the hash functions' state also uses).  Returns
 * NULL when the table has no usable primary key and missing_ok is true,
 * and raises an error otherwise.  A key type without hash support is an
 * error with require_hash, and otherwise leaves desc->hashable false: such
 * a key can still be looked up, not filtered.
 */
BgKeyDesc *
bg_keydesc_build(Relation rel, bool missing_ok, bool require_hash)
{
	Oid			indexoid = bg_primary_key_index(rel);
	Relation	idx;
	TupleDesc	tupdesc = RelationGetDescr(rel);
	BgKeyDesc  *desc;
	int			nkeys;
	int			i;

	if (!OidIsValid(indexoid))
	{
		if (missing_ok)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no primary key",
						RelationGetRelationName(rel)),
				 errhint("bloomguard guards a table by its primary key; add one with ALTER TABLE ... ADD PRIMARY KEY.")));
	}

	idx = index_open(indexoid, AccessShareLock);
	nkeys = IndexRelationGetNumberOfKeyAttributes(idx);
	desc = palloc0(BgKeyDescSize(nkeys));
	desc->indexoid = indexoid;
	desc->nkeys = nkeys;
	desc->hashable = true;

	for (i = 0; i < nkeys; i++)
	{
		BgKeyColumn *col = &desc->cols[i];
		AttrNumber	attnum = idx->rd_index->indkey.values[i];
		Form_pg_attribute att;
		Oid			opcintype = idx->rd_opcintype[i];
		Oid			hashproc;

		Assert(attnum > 0);		/* primary keys have no expressions */
		att = TupleDescAttr(tupdesc, attnum - 1);
		col->attnum = attnum;
		col->typid = att->atttypid;
		col->basetype = getBaseType(att->atttypid);
		col->collation = idx->rd_indcollation[i];
		col->opfamily = idx->rd_opfamily[i];
		col->eqop = get_opfamily_member(col->opfamily, opcintype, opcintype,
										BTEqualStrategyNumber);
		if (!OidIsValid(col->eqop))
			elog(ERROR, "missing equality operator for type %u in opfamily %u",
				 opcintype, col->opfamily);
		col->eqproc = get_opcode(col->eqop);
		get_typlenbyval(col->basetype, &col->typlen, &col->typbyval);

		if (bg_raw_method(col->basetype, opcintype, col->eqop, col->collation,
						  &col->method))
			continue;

		/* otherwise use the hash support of the key's own equality */
		hashproc = bg_hash_proc_for_eqop(col->eqop);
		if (OidIsValid(hashproc))
		{
			/* container types need hashable elements, too */
			TypeCacheEntry *tc = lookup_type_cache(col->basetype,
												   TYPECACHE_HASH_EXTENDED_PROC);

			if (!OidIsValid(tc->hash_extended_proc))
				hashproc = InvalidOid;
		}
		if (!OidIsValid(hashproc))
		{
			if (!require_hash)
			{
				desc->hashable = false;
				continue;
			}
			index_close(idx, AccessShareLock);
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("primary key column \"%s\" of type %s has no hash support",
							NameStr(att->attname), format_type_be(att->atttypid)),
					 errdetail("bloomguard needs an extended hash function in a hash operator family that contains the key's equality operator %s.",
							   format_operator(col->eqop)),
					 errhint("Guard a table whose primary key types support hashing.")));
		}
		col->method = BG_HASH_FMGR;
		fmgr_info_cxt(hashproc, &col->hashfn, CurrentMemoryContext);
	}
	index_close(idx, AccessShareLock);
	return desc;
}

/* The identity stored with a filter built from desc. */
void
bg_keydesc_identity(const BgKeyDesc *desc, BgKeyIdentity *key)
{
	int			i;

	memset(key, 0, sizeof(BgKeyIdentity));
	key->indexoid = desc->indexoid;
	key->nkeys = desc->nkeys;
	for (i = 0; i < desc->nkeys; i++)
	{
		key->attnums[i] = desc->cols[i].attnum;
		key->types[i] = desc->cols[i].typid;
		key->collations[i] = desc->cols[i].collation;
	}
}

/* Hash one key column's value. */
static inline uint64
bg_hash_column(const BgKeyColumn *col, Datum value)
{
	switch (col->method)
	{
		case BG_HASH_BYVAL:
			{
				/*
				 * Only the low typlen bytes are the value: a Datum read from a
				 * tuple is sign-extended, one made by oidin or charin is not.
				 */
				uint64		v = (uint64) value;

				if (col->typlen < (int) sizeof(Datum))
					v &= (UINT64CONST(1) << (8 * col->typlen)) - 1;
				return bloom_hash_bytes(&v, sizeof(v));
			}
		case BG_HASH_FIXED:
			return bloom_hash_bytes(DatumGetPointer(value), col->typlen);
		case BG_HASH_VARLENA:
			{
				struct varlena *v = (struct varlena *) DatumGetPointer(value);
				struct varlena *d = v;
				uint64		h;

				if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
					d = pg_detoast_datum_packed(v);
				h = bloom_hash_bytes(VARDATA_ANY(d), VARSIZE_ANY_EXHDR(d));
				if (d != v)
					pfree(d);
				return h;
			}
		case BG_HASH_FMGR:
			return DatumGetUInt64(FunctionCall2Coll((FmgrInfo *) &col->hashfn,
													col->collation, value,
													UInt64GetDatum(0)));
	}
	return 0;					/* keep compiler quiet */
}

/*
 * Compute the per-column hashes of a key (values in the key column types,
 * none NULL).  Combine them with bloom_hash_key() under a filter's seed.
 */
void
bg_key_colhashes(const BgKeyDesc *desc, const Datum *values, uint64 *colhashes)
{
	int			i;

	for (i = 0; i < desc->nkeys; i++)
		colhashes[i] = bg_hash_column(&desc->cols[i], values[i]);
}
