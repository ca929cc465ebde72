/*-------------------------------------------------------------------------
 *
 * feedbuffer.c
 *	  The feed's buffer: keys this backend's triggers collected and has not
 *	  yet put into the filters.
 *
 * The trigger does not set bits row by row.  It appends each key's digest,
 * the per-column 64-bit hashes of bg_key_colhashes() (which do not depend
 * on any filter's seed), to a buffer of this backend, one list per table,
 * and the buffer is flushed:
 *
 *	- when it holds BG_FEED_BATCH keys;
 *	- at PRE_COMMIT and PRE_PREPARE, before the transaction can become
 *	  visible to anyone else;
 *	- at the start of every statement of this backend, before anything of
 *	  it runs (statement.c's ExecutorStart and ProcessUtility hooks), so
 *	  that the parallel workers of that statement, which see neither this
 *	  buffer nor this backend's locks, find the keys in the filter;
 *	- before any lookup of the table by this backend (trust.c), for a
 *	  query that starts no statement of its own (a PL/pgSQL expression).
 *
 * Flushing a table's keys takes its guard's slot lock once and sets the
 * bits of every key in every live generation (slot.c); when
 * bloomguard.wal_log is in effect it then writes one WAL record with the
 * digests (wal.c), which therefore comes before the commit record.
 *
 * Why buffering is safe: a row's key is missing from the filter from the
 * row's heap insert to the flush of its key.  No other backend can see the
 * row before its transaction commits (or prepares), and both flush first.
 * This backend can, in a later statement of the transaction (flushed at
 * that statement's start), or in a query nested in the writing statement:
 * statement.c's rule already makes such a query fall back while the
 * statement's triggers have not fired, and once they have fired, the keys
 * are in this buffer and the lookup flushes them first.  For the build
 * protocol, the flush takes the place of the trigger (build.c).
 *
 * Keys come in two kinds: new keys (an INSERT, an UPDATE that changed the
 * key) go to every generation; moved keys (an UPDATE that kept the key but
 * put the new version on another page) only to a generation being built.
 *
 * A top-level abort discards the buffer: it holds only keys of the aborted
 * transaction, since every transaction flushes before it commits.  A
 * subtransaction abort keeps the keys written inside it: an extra key
 * costs only a false positive.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"

/* keys the buffer holds before it is flushed */
#define BG_FEED_BATCH		4096
/* tables the buffer holds keys of at once */
#define BG_FEED_MAX_TABLES	16

/* A growable array of keys, ncols 64-bit hashes each. */
typedef struct BgFeedKeys
{
	uint64	   *hashes;
	int			n;				/* keys */
	Size		capwords;		/* 64-bit words allocated */
} BgFeedKeys;

/* One table's unflushed keys. */
typedef struct BgFeedTable
{
	Oid			relid;			/* InvalidOid: unused */
	Oid			relfilenode;	/* the table's, when its trigger last fired */
	int			ncols;
	BgSlotRef	ref;			/* where its guard was last found */
	BgFeedKeys	keys;			/* for every generation */
	BgFeedKeys	moved;			/* for a generation being built only */
} BgFeedTable;

static BgFeedTable bg_feed[BG_FEED_MAX_TABLES];
static int	bg_feed_nkeys = 0;	/* keys in the buffer, all tables */
static int	bg_feed_last = 0;	/* the entry used last */
static MemoryContext bg_feed_cxt = NULL;

/* Make room for one more key of ncols columns in *k. */
static void
bg_feed_reserve(BgFeedKeys *k, int ncols)
{
	Size		need = (Size) (k->n + 1) * ncols;

	if (need <= k->capwords)
		return;
	k->capwords = Max(need, Max(k->capwords * 2, (Size) 64 * ncols));
	k->capwords = Min(k->capwords, (Size) BG_FEED_BATCH * ncols);
	if (k->hashes == NULL)
		k->hashes = MemoryContextAlloc(bg_feed_cxt, k->capwords * sizeof(uint64));
	else
		k->hashes = repalloc(k->hashes, k->capwords * sizeof(uint64));
}

/* Put one table's keys into the filters (and the WAL), and empty its lists. */
static void
bg_feed_flush_table(BgFeedTable *t)
{
	int			nkeys = t->keys.n;
	int			nmoved = t->moved.n;

	if (nkeys == 0 && nmoved == 0)
		return;
	(void) bg_slot_feed_batch(&t->ref, MyDatabaseId, t->relid, t->relfilenode,
							  t->ncols, t->keys.hashes, nkeys,
							  t->moved.hashes, nmoved);
	bg_wal_log_keys(t->relid, t->ncols, t->keys.hashes, nkeys,
					t->moved.hashes, nmoved);
	/* emptied only now: after a failure, a retry adds the keys again */
	t->keys.n = 0;
	t->moved.n = 0;
	bg_feed_nkeys -= nkeys + nmoved;
}

/* Flush every table's keys. */
void
bg_feed_flush_all(void)
{
	int			i;

	if (bg_feed_nkeys == 0)
		return;
	for (i = 0; i < BG_FEED_MAX_TABLES; i++)
		bg_feed_flush_table(&bg_feed[i]);
	Assert(bg_feed_nkeys == 0);
}

/*
 * Flush this backend's keys of table relid, if it has any: a lookup of the
 * table calls this before it consults the filter (so must the planner's
 * path, for the same reason).
 */
void
bg_feed_flush_rel(Oid relid)
{
	int			i;

	if (bg_feed_nkeys == 0)
		return;
	for (i = 0; i < BG_FEED_MAX_TABLES; i++)
	{
		if (bg_feed[i].relid == relid)
			bg_feed_flush_table(&bg_feed[i]);
	}
}

/* Forget every unflushed key (the transaction that wrote them aborted). */
static void
bg_feed_discard(void)
{
	int			i;

	for (i = 0; i < BG_FEED_MAX_TABLES; i++)
	{
		bg_feed[i].keys.n = 0;
		bg_feed[i].moved.n = 0;
	}
	bg_feed_nkeys = 0;
}

/*
 * The buffer entry of a table with keys of ncols columns: the one it has,
 * or an empty one (flushing everything if none is empty).
 */
static BgFeedTable *
bg_feed_table(Oid relid, int ncols)
{
	BgFeedTable *t = &bg_feed[bg_feed_last];
	int			i;
	int			empty = -1;

	if (t->relid == relid && t->ncols == ncols)
		return t;
	for (i = 0; i < BG_FEED_MAX_TABLES; i++)
	{
		t = &bg_feed[i];
		if (t->relid == relid)
		{
			/* its key changed in this transaction: keep lists uniform */
			if (t->ncols != ncols)
			{
				bg_feed_flush_table(t);
				t->ncols = ncols;
			}
			bg_feed_last = i;
			return t;
		}
		if (empty < 0 && t->keys.n == 0 && t->moved.n == 0)
			empty = i;
	}
	if (empty < 0)
	{
		bg_feed_flush_all();
		empty = 0;
	}
	t = &bg_feed[empty];
	t->relid = relid;
	t->ncols = ncols;
	t->ref = (BgSlotRef) BG_SLOT_REF_INIT;
	bg_feed_last = empty;
	return t;
}

/*
 * The trigger's add: buffer one key of rel (its per-column hashes).  moved:
 * only a generation being built needs it (see the file header).  Flushes
 * the whole buffer when it is full.
 */
void
bg_feed_add(Relation rel, const uint64 *colhashes, int ncols, bool moved)
{
	BgFeedTable *t;
	BgFeedKeys *k;

	if (bg_feed_cxt == NULL)
		bg_feed_cxt = AllocSetContextCreate(TopMemoryContext, "bloomguard feed",
											ALLOCSET_SMALL_SIZES);
	t = bg_feed_table(RelationGetRelid(rel), ncols);
	t->relfilenode = bg_rel_filenumber(rel);
	k = moved ? &t->moved : &t->keys;
	bg_feed_reserve(k, ncols);
	memcpy(k->hashes + (Size) k->n * ncols, colhashes, ncols * sizeof(uint64));
	k->n++;
	if (++bg_feed_nkeys >= BG_FEED_BATCH)
		bg_feed_flush_all();
}

/* Transaction callback: flush before the transaction becomes visible. */
static void
bg_feed_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			bg_feed_flush_all();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			bg_feed_discard();
			break;
		default:
			break;
	}
}

/* Register the callback; called from _PG_init while preloading. */
void
bg_feed_init(void)
{
	RegisterXactCallback(bg_feed_xact_callback, NULL);
}
