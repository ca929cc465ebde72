/*-------------------------------------------------------------------------
 *
 * slot.c
 *	  Using one guard: asking its filter, feeding it, probing it, copying
 *	  its numbers out, marking it untrusted, and publishing, swapping and
 *	  abandoning a build's generations.
 *
 * Every function here takes the slot's lock as shmem.c's header says:
 * shared while a filter is read or fed (so that nobody frees it
 * meanwhile), exclusive to change the slot's state.  Hashing, which may
 * detoast or run a type's hash function, is done by the callers before,
 * never under the lock.
 *
 * A slot's fields are private to this file and shmem.c (slot_internal.h),
 * so every operation on one slot is here, some 670 lines: the lookup's
 * ask, the flush's feed, the copies, the untrusts, and the build's
 * publish, add, swap and abandon (whose protocol is build.c's).  Keeping
 * them in one file is what lets the compiler keep every other file out.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "common/pg_prng.h"
#include "miscadmin.h"

#include "slot_internal.h"

/*
 * What identifies a slot's serving filter and when it was built, as the
 * health view and the file of saved filters have it.  Caller holds the
 * slot lock, or no other process runs.
 */
static void
bg_slot_guard(const BgSlot *slot, BgSavedGuard *g)
{
	memset(g, 0, sizeof(BgSavedGuard));
	g->dbid = slot->dbid;
	g->relid = slot->relid;
	g->relfilenode = slot->relfilenode;
	g->key = slot->key;
	g->feed_version = slot->feed_version;
	g->trigger_version = slot->trigger_version;
	g->generation = slot->generation;
	g->built_at = slot->built_at;
	g->build_seconds = slot->build_seconds;
	g->build_workers = slot->build_workers;
}

/*
 * Copy the slot at index out under its lock, if it is in use by database
 * dbid (and, if relid is valid, by that table).
 */
bool
bg_slot_copy(int index, Oid dbid, Oid relid, BgSlotCopy *copy)
{
	BgSlot	   *slot = bg_slot(index);
	int			c;

	memset(copy, 0, sizeof(BgSlotCopy));
	LWLockAcquire(&slot->lock, LW_SHARED);
	if (slot->state == BG_STATE_FREE || slot->dbid != dbid ||
		(OidIsValid(relid) && slot->relid != relid))
	{
		LWLockRelease(&slot->lock);
		return false;
	}
	copy->index = index;
	copy->relid = slot->relid;
	copy->state = slot->state;
	copy->bytes = slot->serving_bytes + slot->building_bytes;
	bg_slot_guard(slot, &copy->guard);
	copy->source = slot->source;
	copy->source_at = slot->source_at;
	copy->builder_pid = slot->builder_pid;
	copy->building = BgFilterPtrIsValid(slot->building);
	copy->claim_xid = slot->claim_xid;
	strlcpy(copy->last_error, slot->last_error, sizeof(copy->last_error));
	copy->stats_reset = slot->stats_reset;
	if (BgFilterPtrIsValid(slot->serving))
	{
		BloomFilter *f = bg_filter_addr(slot->serving);

		copy->has_filter = true;
		copy->capacity = f->capacity;
		copy->error_rate = f->error_rate;
		copy->nbits = f->nbits;
		copy->nhashes = f->nhashes;
		copy->block_bits = f->block_bits;
		copy->n_added = pg_atomic_read_u64(&f->n_added);
		copy->bits_set = pg_atomic_read_u64(&f->bits_set);
	}
	LWLockRelease(&slot->lock);
	for (c = 0; c < BG_NUM_COUNTERS; c++)
		copy->counters[c] = pg_atomic_read_u64(&slot->counters[c]);
	return true;
}

/* Copy out the slot of a table of this database, if it has one. */
bool
bg_slot_copy_rel(Oid relid, BgSlotCopy *copy)
{
	BgSlotRef	ref = BG_SLOT_REF_INIT;

	memset(copy, 0, sizeof(BgSlotCopy));
	if (!bg_slot_find(relid, &ref))
		return false;
	return bg_slot_copy(ref.index, MyDatabaseId, relid, copy);
}

/* Count n events on the slot at index; no lock (atomics). */
void
bg_slot_bump(int index, BgCounter counter, uint64 n)
{
	pg_atomic_fetch_add_u64(&bg_slot(index)->counters[counter], n);
}

/* The index of a table's slot, for counting, or -1. */
int
bg_slot_index(BgSlotRef *ref, Oid relid)
{
	BgSlot	   *slot = bg_slot_lock(ref, relid, LW_SHARED);

	if (slot == NULL)
		return -1;
	LWLockRelease(&slot->lock);
	return ref->index;
}

/*
 * Record the table's relfilenode, as the catalogs give it to a lookup or
 * to the trigger, in the guard of relid of database dbid.  A filter loaded
 * from the saved file (persist.c) is checked against it once: a different
 * one means the table was rewritten since the file was saved, and the
 * guard becomes untrusted (returns false).  A built filter only records a
 * new one, so that the next save is right: TRUNCATE, VACUUM FULL and
 * CLUSTER rewrite a table without breaking coverage (every key of the new
 * file went through a flush or the scan).  A slot with no relfilenode yet
 * (claimed by an attach, or after a crash: its first filter is still to
 * be built) has nothing to check, and records it too.
 *
 * The untrust is the loaded filter's alone: a generation being built
 * scans the table as it is now, so it is not marked broken (a flush
 * during every attach and every build after a crash would otherwise
 * untrust a complete new filter).
 */
static bool
bg_slot_note_relfilenode(BgSlotRef *ref, Oid dbid, Oid relid, Oid relfilenode)
{
	BgSlot	   *slot = bg_slot_lock_in(ref, dbid, relid, LW_EXCLUSIVE);
	bool		ok = true;

	if (slot == NULL)
		return true;
	if (!slot->relfilenode_verified && OidIsValid(slot->relfilenode) &&
		slot->relfilenode != relfilenode)
	{
		ok = false;
		if (slot->state == BG_STATE_READY)
			slot->state = BG_STATE_UNTRUSTED;
		strlcpy(slot->last_error, "its table was rewritten since the filter was saved",
				sizeof(slot->last_error));
	}
	slot->relfilenode = relfilenode;
	slot->relfilenode_verified = true;
	LWLockRelease(&slot->lock);
	return ok;
}

/* Do two key identities describe the same key? */
bool
bg_identity_equal(const BgKeyIdentity *a, const BgKeyIdentity *b)
{
	int			i;

	if (a->indexoid != b->indexoid || a->nkeys != b->nkeys)
		return false;
	for (i = 0; i < a->nkeys; i++)
	{
		if (a->attnums[i] != b->attnums[i] ||
			a->types[i] != b->types[i] ||
			a->collations[i] != b->collations[i])
			return false;
	}
	return true;
}

/*
 * Ask a table's serving filter about a key (its per-column hashes), for a
 * caller that has checked everything else the trust rule needs (trust.c).
 * nomatch: no value of the key type can equal the argument, which a ready
 * filter reports as absent.  The filter is used only when the guard is
 * ready and was built as the caller expects (expect, which trust.c fills
 * in): for the same key identity, under the same feed function version
 * and with the same feed trigger catalog row (a trigger disabled and
 * enabled again changes it, even where no hook saw that happen, as on a
 * standby of a primary that ran without the library); if any changed
 * under the filter, the guard becomes untrusted.  These comparisons are
 * made here because they must be made under the slot's lock, with the
 * filter they vouch for.  expect->relfilenode is the table's: a loaded
 * filter is checked against it (see above).  *slotindex is set to the
 * guard's slot (or -1), for the caller's counters.
 */
BgAnswer
bg_slot_ask(BgSlotRef *ref, Oid relid, const BgSlotExpect *expect,
			const uint64 *colhashes, int nkeys, bool nomatch, int *slotindex)
{
	BgSlot	   *slot = bg_slot_lock(ref, relid, LW_SHARED);
	BgAnswer	answer = BG_ANSWER_UNKNOWN;
	const char *changed = NULL;
	bool		note = false;

	*slotindex = -1;
	if (slot == NULL)
	{
		/* a feed in place but no slot: the worker should come and look */
		bg_visit_request();
		return BG_ANSWER_UNKNOWN;
	}
	*slotindex = ref->index;
	if (slot->state == BG_STATE_READY && BgFilterPtrIsValid(slot->serving))
	{
		note = !slot->relfilenode_verified || slot->relfilenode != expect->relfilenode;
		if (!bg_identity_equal(expect->identity, &slot->key))
			changed = "its primary key changed";
		else if (slot->feed_version != expect->feed_version)
			changed = "its feed function's catalog row changed";
		else if (slot->trigger_version != expect->trigger_version)
			changed = "its feed trigger's catalog row changed";
		else if (!slot->relfilenode_verified && slot->relfilenode != expect->relfilenode)
			;					/* rewritten since saved: untrusted below */
		else if (nomatch)
			answer = BG_ANSWER_ABSENT;
		else
		{
			BloomFilter *filter = bg_filter_addr(slot->serving);

			answer = bloom_maybe(filter,
								 bloom_hash_key(filter->seed, colhashes, nkeys)) ?
				BG_ANSWER_MAYBE : BG_ANSWER_ABSENT;
		}
	}
	LWLockRelease(&slot->lock);
	if (changed)
		bg_untrust(relid, changed);
	else if (note)
		(void) bg_slot_note_relfilenode(ref, MyDatabaseId, relid, expect->relfilenode);
	return answer;
}

/* Keys hashed at a time into a stack array while feeding a generation. */
#define BG_FEED_CHUNK	256

/*
 * Add n keys (their per-column hashes, ncols each, one after the other) to
 * a filter generation, under its own seed.
 */
static void
bg_add_keys_to(BgFilterPtr dp, const uint64 *keys, int n, int ncols)
{
	BloomFilter *filter = bg_filter_addr(dp);
	BloomHash	hashes[BG_FEED_CHUNK];
	int			done;

	for (done = 0; done < n; done += BG_FEED_CHUNK)
	{
		int			m = Min(BG_FEED_CHUNK, n - done);
		int			i;

		for (i = 0; i < m; i++)
			hashes[i] = bloom_hash_key(filter->seed, keys + (Size) (done + i) * ncols,
									   ncols);
		bloom_add_batch(filter, hashes, m);
	}
}

/*
 * A flush of a table's keys, by a backend (feedbuffer.c) or by redo (walredo.c):
 * put them into every live generation of the guard of table relid of
 * database dbid, under one acquisition of its slot lock.  keys go to
 * every generation; moved keys (an UPDATE kept the key, but put the new
 * version on another page) only to a generation being built, since the
 * serving one has them already (build.c says why a build needs them).
 * Returns false if the table has no guard here.
 */
bool
bg_slot_feed_batch(BgSlotRef *ref, Oid dbid, Oid relid, Oid relfilenode,
				   int ncols, const uint64 *keys, int nkeys,
				   const uint64 *moved, int nmoved)
{
	BgSlot	   *slot = bg_slot_lock_in(ref, dbid, relid, LW_SHARED);
	bool		note;
	bool		replayed;

	if (slot == NULL)
		return false;			/* no filter loaded: nothing to feed */
	if (BgFilterPtrIsValid(slot->serving))
		bg_add_keys_to(slot->serving, keys, nkeys, ncols);
	if (BgFilterPtrIsValid(slot->building))
	{
		bg_add_keys_to(slot->building, keys, nkeys, ncols);
		bg_add_keys_to(slot->building, moved, nmoved, ncols);
	}
	/* a flush knows the table's relfilenode; redo (InvalidOid) does not */
	note = OidIsValid(relfilenode) &&
		(!slot->relfilenode_verified || slot->relfilenode != relfilenode);
	replayed = !OidIsValid(relfilenode) && slot->source == BG_SOURCE_LOADED;
	LWLockRelease(&slot->lock);

	if (note)
		(void) bg_slot_note_relfilenode(ref, dbid, relid, relfilenode);
	if (replayed)
	{
		/* a loaded filter that recovery brings forward */
		slot = bg_slot_lock_in(ref, dbid, relid, LW_EXCLUSIVE);
		if (slot != NULL)
		{
			if (slot->source == BG_SOURCE_LOADED)
				slot->source = BG_SOURCE_REPLAYED;
			LWLockRelease(&slot->lock);
		}
	}
	return true;
}

/*
 * The serving filter of the slot at index, and in *g what else must be
 * saved with it, if it is worth saving: ready, of a table that is not
 * unlogged (whose contents a crash or a promotion resets).  NULL
 * otherwise.  Only for the postmaster's exit callback (persist.c), when no
 * other process runs: it takes no lock.
 */
BloomFilter *
bg_slot_saveable(int index, BgSavedGuard *g)
{
	BgSlot	   *slot = bg_slot(index);

	/* not one a prepared detach or DROP is to free once it commits */
	if (slot->state != BG_STATE_READY || !BgFilterPtrIsValid(slot->serving) ||
		!slot->permanent || TransactionIdIsValid(slot->forget_xid))
		return NULL;
	bg_slot_guard(slot, g);
	return bg_filter_addr(slot->serving);
}

/*
 * Ask the serving filter of a table about n never-added probe keys and
 * count the "maybe"s in *hits (and in the slot's counters).  Returns false
 * if there is no filter to probe; *state says the guard's state then.
 * Lets writers and swaps in every 64k probes.
 */
bool
bg_slot_probe(Oid relid, int32 n, uint64 *hits, BgState *state)
{
	BgSlotRef	ref = BG_SLOT_REF_INIT;
	BgSlot	   *slot;
	uint64		start = pg_prng_uint64(&pg_global_prng_state);
	int32		done = 0;

	*hits = 0;
	*state = BG_STATE_NOT_LOADED;
	while (done < n)
	{
		BloomFilter *f;
		int32		batch = Min(n - done, 65536);
		int32		i;

		CHECK_FOR_INTERRUPTS();
		slot = bg_slot_lock(&ref, relid, LW_SHARED);
		if (slot == NULL)
			return false;
		*state = slot->state;
		if (!BgFilterPtrIsValid(slot->serving))
		{
			LWLockRelease(&slot->lock);
			return false;
		}
		f = bg_filter_addr(slot->serving);
		for (i = 0; i < batch; i++)
			if (bloom_maybe(f, bloom_hash_probe(f->seed, start + (uint64) (done + i))))
				(*hits)++;
		LWLockRelease(&slot->lock);
		done += batch;
	}
	bg_slot_bump(ref.index, BG_COUNT_PROBE, (uint64) n);
	bg_slot_bump(ref.index, BG_COUNT_PROBE_HIT, *hits);
	return true;
}

/*
 * Mark the guard of table relid of database dbid untrusted: its filter may
 * be missing keys.  A build now running might already have passed the
 * rows, so its generation will not be trusted either.
 */
void
bg_untrust_in(Oid dbid, Oid relid, const char *why)
{
	BgSlotRef	ref = BG_SLOT_REF_INIT;
	BgSlot	   *slot;

	slot = bg_slot_lock_in(&ref, dbid, relid, LW_EXCLUSIVE);
	if (slot == NULL)
		return;
	if (slot->state == BG_STATE_READY)
		slot->state = BG_STATE_UNTRUSTED;
	if (BgFilterPtrIsValid(slot->building))
		slot->coverage_broken = true;
	strlcpy(slot->last_error, why, sizeof(slot->last_error));
	LWLockRelease(&slot->lock);
	ereport(DEBUG1,
			(errmsg_internal("bloomguard: guard of relation %u is untrusted: %s",
							 relid, why)));
}

/* Mark a guard of this database untrusted: its filter may be missing keys. */
void
bg_untrust(Oid relid, const char *why)
{
	bg_untrust_in(MyDatabaseId, relid, why);
}

/*
 * Mark untrusted every guard of database dbid, or of every database if
 * dbid is InvalidOid.
 */
static void
bg_untrust_each(Oid dbid, const char *why)
{
	int			i;

	for (i = 0; i < bg_slot_count(); i++)
	{
		BgSlot	   *slot = bg_slot(i);
		Oid			slot_dbid;
		Oid			relid = InvalidOid;

		LWLockAcquire(&slot->lock, LW_SHARED);
		slot_dbid = slot->dbid;
		if (slot->state != BG_STATE_FREE &&
			(!OidIsValid(dbid) || slot->dbid == dbid))
			relid = slot->relid;
		LWLockRelease(&slot->lock);
		if (OidIsValid(relid))
			bg_untrust_in(slot_dbid, relid, why);
	}
}

/* Mark every guard of database dbid untrusted. */
void
bg_untrust_database(Oid dbid, const char *why)
{
	if (OidIsValid(dbid))
		bg_untrust_each(dbid, why);
}

/* Mark every guard of every database untrusted. */
void
bg_untrust_all(const char *why)
{
	bg_untrust_each(InvalidOid, why);
}

/*
 * Record why the worker could not do something for a guard (for the
 * health view); *changed says whether that is news, so that a reason is
 * logged once and not on every pass.
 */
void
bg_note_error(Oid relid, const char *why, bool *changed)
{
	BgSlotRef	ref = BG_SLOT_REF_INIT;
	BgSlot	   *slot;

	*changed = true;
	slot = bg_slot_lock(&ref, relid, LW_EXCLUSIVE);
	if (slot == NULL)
		return;
	*changed = strncmp(slot->last_error, why, sizeof(slot->last_error) - 1) != 0;
	strlcpy(slot->last_error, why, sizeof(slot->last_error));
	LWLockRelease(&slot->lock);
}


/*
 * Where the slot at index keeps its serving filter, read without the lock:
 * only a hint, for placing a new generation away from it (shmem.c).
 */
BgFilterPtr
bg_slot_serving_hint(int index)
{
	return bg_slot(index)->serving;
}

/*
 * Step 1 of a build (build.c): publish the generation at dp (bytes) in the
 * slot at index as the one being built, so that every flush feeds it from
 * now on, if the slot is still relid's in this database and no other
 * generation is being built; sets *incarnation to the slot's.
 */
BgPublish
bg_slot_publish(int index, Oid relid, BgFilterPtr dp, Size bytes, uint64 *incarnation)
{
	BgSlot	   *slot = bg_slot(index);

	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	if (slot->relid != relid || slot->dbid != MyDatabaseId ||
		slot->state == BG_STATE_FREE || BgFilterPtrIsValid(slot->building))
	{
		bool		busy = BgFilterPtrIsValid(slot->building);

		LWLockRelease(&slot->lock);
		return busy ? BG_PUBLISH_BUSY : BG_PUBLISH_GONE;
	}
	*incarnation = slot->incarnation;
	slot->building = dp;
	slot->building_bytes = bytes;
	slot->builder_pid = MyProcPid;
	slot->coverage_broken = false;
	if (slot->state == BG_STATE_NOT_LOADED)
		slot->state = BG_STATE_BUILDING;
	LWLockRelease(&slot->lock);
	return BG_PUBLISH_DONE;
}

/*
 * Is the slot's generation being built still gen?  Not if the build was
 * abandoned (its memory is then freed, or another build's).  Caller holds
 * the slot lock.
 */
static bool
bg_slot_building_is(const BgSlot *slot, const BgGeneration *gen)
{
	return slot->incarnation == gen->incarnation &&
		slot->state != BG_STATE_FREE &&
		slot->building == gen->dp &&
		bg_filter_addr(gen->dp)->seed == gen->seed;
}

/*
 * Copy the header of generation gen into shape (offsetof(BloomFilter,
 * words) bytes), if it is still the slot's generation being built.
 */
bool
bg_slot_building_shape(const BgGeneration *gen, BloomFilter *shape)
{
	BgSlot	   *slot = bg_slot(gen->slotindex);
	bool		ours;

	LWLockAcquire(&slot->lock, LW_SHARED);
	ours = bg_slot_building_is(slot, gen);
	if (ours)
		memcpy(shape, bg_filter_addr(gen->dp), offsetof(BloomFilter, words));
	LWLockRelease(&slot->lock);
	return ours;
}

/*
 * Put keys into generation gen, a scanner's (buildscan.c): a batch of hashes,
 * or (local not NULL) the words [first, first + count) of a private bit
 * array, counting nadded adds.  Only under the slot lock in shared mode
 * and only while gen is still the slot's generation being built (build.c's
 * header says why); returns false, adding nothing, if it is not.
 */
bool
bg_slot_building_put(const BgGeneration *gen, const BloomHash *hashes, int n,
					 const uint64 *local, uint64 first, uint64 count, uint64 nadded)
{
	BgSlot	   *slot = bg_slot(gen->slotindex);
	bool		ours;

	LWLockAcquire(&slot->lock, LW_SHARED);
	ours = bg_slot_building_is(slot, gen);
	if (ours && local != NULL)
		bloom_merge(bg_filter_addr(gen->dp), local, first, count, nadded);
	else if (ours)
		bloom_add_batch(bg_filter_addr(gen->dp), hashes, n);
	LWLockRelease(&slot->lock);
	return ours;
}

/*
 * Abandon a build (build.c): if the slot at index still has the generation
 * at dp (bytes) of incarnation as the one being built, unpublish and free
 * it, leave the guard as it was (or "not_loaded" after a first build) and
 * note why.  Returns false if it had gone already (a slot freed meanwhile
 * freed its generations with it).
 */
bool
bg_slot_abandon(int index, uint64 incarnation, BgFilterPtr dp, Size bytes,
				const char *why)
{
	BgSlot	   *slot = bg_slot(index);
	bool		ours;

	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	ours = (slot->incarnation == incarnation && slot->building == dp);
	if (ours)
	{
		slot->building = InvalidBgFilterPtr;
		slot->building_bytes = 0;
		slot->builder_pid = 0;
		if (slot->state == BG_STATE_BUILDING)
			slot->state = BG_STATE_NOT_LOADED;
		strlcpy(slot->last_error, why, sizeof(slot->last_error));
	}
	LWLockRelease(&slot->lock);
	if (ours)
		bg_filter_free(dp, bytes);
	return ours;
}

/*
 * Step 3 of a build (build.c): make the generation at dp (bytes) of
 * incarnation the serving one, described by g (its key, feed and trigger
 * versions, relfilenode, when and how it was built; the generation number
 * is the slot's next) and permanent (the table is not unlogged), and free
 * the old one.  *broken is set if the guard was marked untrusted while it
 * was being built (it stays so, and broken_why, BG_ERROR_LEN bytes, gets
 * the reason); otherwise it is ready.  Returns false, changing nothing, if
 * the generation is no longer the slot's (detached during the build).
 */
bool
bg_slot_swap(int index, uint64 incarnation, BgFilterPtr dp, Size bytes,
			 const BgSavedGuard *g, bool permanent, bool *broken, char *broken_why)
{
	BgSlot	   *slot = bg_slot(index);
	BgFilterPtr old;
	Size		old_bytes;

	LWLockAcquire(&slot->lock, LW_EXCLUSIVE);
	if (slot->incarnation != incarnation || slot->building != dp)
	{
		LWLockRelease(&slot->lock);
		return false;
	}
	*broken = slot->coverage_broken;
	strlcpy(broken_why, slot->last_error, BG_ERROR_LEN);
	old = slot->serving;
	old_bytes = slot->serving_bytes;
	slot->serving = dp;
	slot->serving_bytes = bytes;
	slot->building = InvalidBgFilterPtr;
	slot->building_bytes = 0;
	slot->builder_pid = 0;
	slot->coverage_broken = false;
	slot->generation++;
	bg_slot_describe(slot, g);
	slot->relfilenode_verified = true;
	slot->permanent = permanent;
	slot->source = BG_SOURCE_BUILT;
	slot->source_at = g->built_at;
	if (*broken)
		slot->state = BG_STATE_UNTRUSTED;	/* keep last_error: the reason */
	else
	{
		slot->state = BG_STATE_READY;
		slot->last_error[0] = '\0';
	}
	LWLockRelease(&slot->lock);

	/* readers held the slot lock while using the old one; none can now */
	if (BgFilterPtrIsValid(old))
		bg_filter_free(old, old_bytes);
	return true;
}
