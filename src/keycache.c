/*-------------------------------------------------------------------------
 *
 * keycache.c
 *	  A backend-wide cache of key descriptions.
 *
 * Describing a table's key takes catalog lookups, and a prepared
 * statement's FmgrInfo (so fn_extra) is new at every execution, so
 * guarded_exists(), the BloomGuard node, the planner and the trigger keep
 * each table's description here for the life of the backend, with what a
 * lookup compares against the guard along with it: the key's identity,
 * the version of the feed trigger's row (read by feedcheck.c when the
 * entry is built), the table's guard slot reference, and where its rows
 * are (tablekind.c: a Citus shell's kind changes with a relcache
 * invalidation, which Citus sends).
 *
 * Entries are invalidated by the relcache callback, which every DDL that
 * could change the key sends.  The callback only marks them: a running
 * call may hold an entry (bg_index_probe() opens an index, which accepts
 * invalidations, and then reads its key description), so an entry is
 * freed only when nobody holds it.  Callers pin what they use with
 * bg_keyinfo_acquire() and unpin it with bg_keyinfo_release().  Invalid
 * entries are evicted at the next lookup, and the cache holds at most
 * BG_KEY_CACHE_MAX entries: past that the least recently used go.  An
 * evicted entry that is still pinned is freed when its last pin goes, or
 * at the end of the transaction (an error between acquire and release
 * leaves a pin behind, and no call outlives its transaction).
 *
 * Each entry has its own small memory context, which also holds the state
 * that the key type's hash functions keep in fn_extra, so that evicting
 * an entry gives back everything it used.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"

#define BG_KEY_CACHE_MAX	1000

typedef struct BgKeyCacheEntry
{
	Oid			relid;			/* hash key */
	bool		valid;			/* false once invalidated: rebuild or evict */
	uint64		last_used;		/* for evicting the least recently used */
	BgKeyInfo  *info;
} BgKeyCacheEntry;

static HTAB *bg_key_cache = NULL;
static MemoryContext bg_key_cxt = NULL;
static uint64 bg_key_clock = 0;
static bool bg_key_cache_dirty = false; /* some entry is invalid */
static int	bg_key_pins = 0;		/* pins held in this transaction */
static List *bg_key_retired = NIL;	/* evicted but pinned */
static BgKeyCacheEntry *bg_key_last = NULL; /* the entry acquired last */

/* Free an info's memory now, or when its last pin goes. */
static void
bg_keyinfo_retire(BgKeyInfo *info)
{
	MemoryContext oldcxt;

	if (info->pins == 0)
	{
		MemoryContextDelete(info->cxt);
		return;
	}
	info->retired = true;
	oldcxt = MemoryContextSwitchTo(bg_key_cxt);
	bg_key_retired = lappend(bg_key_retired, info);
	MemoryContextSwitchTo(oldcxt);
}

/* Relcache invalidation callback: mark, never free (see the file header). */
static void
bg_key_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	BgKeyCacheEntry *entry;

	if (!OidIsValid(relid))
	{
		hash_seq_init(&status, bg_key_cache);
		while ((entry = (BgKeyCacheEntry *) hash_seq_search(&status)) != NULL)
			entry->valid = false;
		bg_key_cache_dirty = true;
		return;
	}
	entry = (BgKeyCacheEntry *) hash_search(bg_key_cache, &relid, HASH_FIND, NULL);
	if (entry != NULL)
	{
		entry->valid = false;
		bg_key_cache_dirty = true;
	}
}

/*
 * At the end of a transaction no call is running: drop leftover pins and
 * free what was evicted while pinned.
 */
static void
bg_key_cache_xact_callback(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS status;
	BgKeyCacheEntry *entry;
	ListCell   *lc;

	if (!bg_xact_event_ends(event))
		return;
	if (bg_key_pins != 0)
	{
		hash_seq_init(&status, bg_key_cache);
		while ((entry = (BgKeyCacheEntry *) hash_seq_search(&status)) != NULL)
		{
			if (entry->info)
				entry->info->pins = 0;
		}
		bg_key_pins = 0;
	}
	foreach(lc, bg_key_retired)
		MemoryContextDelete(((BgKeyInfo *) lfirst(lc))->cxt);
	list_free(bg_key_retired);
	bg_key_retired = NIL;
}

/* Remove an entry from the cache, freeing its info when unpinned. */
static void
bg_key_cache_evict(BgKeyCacheEntry *entry)
{
	BgKeyInfo  *info = entry->info;
	Oid			relid = entry->relid;

	if (entry == bg_key_last)
		bg_key_last = NULL;
	hash_search(bg_key_cache, &relid, HASH_REMOVE, NULL);
	if (info)
		bg_keyinfo_retire(info);
}

/*
 * Evict invalid entries (but keep_relid's, which the caller rebuilds), and
 * if the cache is still too big, the least recently used down to 3/4 of
 * the limit.
 */
static void
bg_key_cache_trim(Oid keep_relid)
{
	HASH_SEQ_STATUS status;
	BgKeyCacheEntry *entry;
	long		target = BG_KEY_CACHE_MAX * 3 / 4;

	if (bg_key_cache_dirty)
	{
		hash_seq_init(&status, bg_key_cache);
		while ((entry = (BgKeyCacheEntry *) hash_seq_search(&status)) != NULL)
		{
			if (!entry->valid && entry->relid != keep_relid)
				bg_key_cache_evict(entry);
		}
		bg_key_cache_dirty = false;
	}
	if (hash_get_num_entries(bg_key_cache) < BG_KEY_CACHE_MAX)
		return;
	while (hash_get_num_entries(bg_key_cache) > target)
	{
		BgKeyCacheEntry *oldest = NULL;

		hash_seq_init(&status, bg_key_cache);
		while ((entry = (BgKeyCacheEntry *) hash_seq_search(&status)) != NULL)
		{
			if (entry->relid != keep_relid &&
				(oldest == NULL || entry->last_used < oldest->last_used))
				oldest = entry;
		}
		if (oldest == NULL)
			break;
		bg_key_cache_evict(oldest);
	}
}

/* Describe rel's key into a new info with its own memory context. */
static BgKeyInfo *
bg_keyinfo_build(Relation rel)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	BgKeyInfo  *info;
	BgKeyDesc  *desc;
	BgTableKind kind = bg_table_kind(rel);

	cxt = AllocSetContextCreate(bg_key_cxt, "bloomguard key description",
								ALLOCSET_SMALL_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		desc = bg_keydesc_build(rel, true, false);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		MemoryContextDelete(cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	info = palloc0(sizeof(BgKeyInfo));
	MemoryContextSwitchTo(oldcxt);

	info->cxt = cxt;
	info->relid = RelationGetRelid(rel);
	info->kind = kind;
	info->desc = desc;
	if (desc)
		bg_keydesc_identity(desc, &info->identity);
	info->trigger_version = bg_feed_trigger_version(info->relid);
	info->ref = (BgSlotRef) BG_SLOT_REF_INIT;
	return info;
}

/*
 * The description of rel's primary key, pinned: call bg_keyinfo_release()
 * when done.  info->desc is NULL if the table has no usable primary key;
 * desc->hashable says whether it can be filtered.  info->ref is the
 * table's cached guard slot reference.  The caller holds a lock on rel, so
 * pending invalidations have been processed.
 */
BgKeyInfo *
bg_keyinfo_acquire(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	BgKeyCacheEntry *entry;
	bool		found;

	if (bg_key_cache == NULL)
	{
		HASHCTL		ctl;

		bg_key_cxt = AllocSetContextCreate(CacheMemoryContext,
										   "bloomguard key cache",
										   ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(BgKeyCacheEntry);
		ctl.hcxt = bg_key_cxt;
		bg_key_cache = hash_create("bloomguard key descriptions", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(bg_key_cache_invalidate, (Datum) 0);
		RegisterXactCallback(bg_key_cache_xact_callback, NULL);
	}

	/*
	 * The trigger asks for the same table once per row: the entry acquired
	 * last, if it is still valid, needs no hash lookup (entries do not move
	 * in the hash table, and an evicted one is forgotten here).
	 */
	entry = bg_key_last;
	if (entry != NULL && entry->relid == relid && entry->valid)
	{
		entry->last_used = ++bg_key_clock;
		entry->info->pins++;
		bg_key_pins++;
		return entry->info;
	}

	if (bg_key_cache_dirty ||
		hash_get_num_entries(bg_key_cache) >= BG_KEY_CACHE_MAX)
		bg_key_cache_trim(relid);

	entry = (BgKeyCacheEntry *) hash_search(bg_key_cache, &relid, HASH_ENTER, &found);
	if (!found)
	{
		entry->valid = false;
		entry->info = NULL;
	}
	entry->last_used = ++bg_key_clock;
	if (!entry->valid)
	{
		BgKeyInfo  *info;

		/*
		 * Mark it valid first: an invalidation that arrives while we build
		 * (catalog lookups accept them) clears the flag again, and the next
		 * call builds again.  This call uses what it built, as it would if
		 * the invalidation had come just after: the caller's lock keeps the
		 * key as it is, and the trigger's version is read in one scan.
		 * Building again here would never end with debug_discard_caches,
		 * where every catalog lookup invalidates every entry.
		 */
		entry->valid = true;
		PG_TRY();
		{
			info = bg_keyinfo_build(rel);
		}
		PG_CATCH();
		{
			entry = hash_search(bg_key_cache, &relid, HASH_FIND, NULL);
			if (entry)
				bg_key_cache_evict(entry);
			PG_RE_THROW();
		}
		PG_END_TRY();
		/* building may have run the callback, but never moves the entry */
		if (entry->info)
			bg_keyinfo_retire(entry->info);
		entry->info = info;
	}
	bg_key_last = entry;
	entry->info->pins++;
	bg_key_pins++;
	return entry->info;
}

/* Unpin an info returned by bg_keyinfo_acquire(). */
void
bg_keyinfo_release(BgKeyInfo *info)
{
	Assert(info->pins > 0);
	info->pins--;
	bg_key_pins--;
	if (info->retired && info->pins == 0)
	{
		bg_key_retired = list_delete_ptr(bg_key_retired, info);
		MemoryContextDelete(info->cxt);
	}
}
