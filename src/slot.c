/*-------------------------------------------------------------------------
 *
 * slot.c
 *	  Using one guard: asking its filter, feeding it, probing it, copying
 *	  its numbers out, marking it untrusted.
 *
 * Every function here takes the slot's lock as shmem.c's header says:
 * shared while a filter is read or fed (so that nobody frees it
 * meanwhile), exclusive to change the slot's state.  Hashing, which may
 * detoast or run a type's hash function, is done by the callers before,
 * never under the lock.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_prng.h"
#include "miscadmin.h"

#include "bloomguard.h"

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
	copy->generation = slot->generation;
	copy->built_at = slot->built_at;
	copy->build_seconds = slot->build_seconds;
	copy->build_workers = slot->build_workers;
	copy->builder_pid = slot->builder_pid;
	copy->building = BgFilterPtrIsValid(slot->building);
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
 * Ask a table's serving filter about a key (its per-column hashes), for a
 * caller that has checked everything else the trust rule needs.  nomatch:
 * no value of the key type can equal the argument, which a ready filter
 * reports as absent.  The filter is used only when the guard is ready and
 * was built for the key identity the caller computed; if the key changed
 * under the filter, the guard becomes untrusted.  *slotindex is set to the
 * guard's slot (or -1), for the caller's counters.
 */
BgAnswer
bg_slot_ask(BgSlotRef *ref, Oid relid, const BgKeyIdentity *identity,
			const uint64 *colhashes, int nkeys, bool nomatch, int *slotindex)
{
	BgSlot	   *slot = bg_slot_lock(ref, relid, LW_SHARED);
	BgAnswer	answer = BG_ANSWER_UNKNOWN;
	bool		key_changed = false;

	*slotindex = -1;
	if (slot == NULL)
		return BG_ANSWER_UNKNOWN;
	*slotindex = ref->index;
	if (slot->state == BG_STATE_READY && BgFilterPtrIsValid(slot->serving))
	{
		if (!bg_identity_equal(identity, &slot->key))
			key_changed = true;
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
	if (key_changed)
		bg_untrust(relid, "its primary key changed");
	return answer;
}

/* Add one key to a filter generation. */
static inline void
bg_add_to(BgFilterPtr dp, const uint64 *colhashes, int nkeys)
{
	BloomFilter *filter = bg_filter_addr(dp);

	bloom_add(filter, bloom_hash_key(filter->seed, colhashes, nkeys));
}

/*
 * The trigger's add: put a key into every live generation of the table's
 * guard.  The serving generation has the key already if an UPDATE kept
 * it (key_unchanged).  A generation being built gets it anyway: the new
 * row version may sit on a page the scan has passed, and the old one may
 * be pruned before the scan reaches it (build.c's argument counts on every
 * version created after the build began passing through here).
 */
void
bg_slot_feed(BgSlotRef *ref, Oid relid, const uint64 *colhashes, int nkeys,
			 bool key_unchanged)
{
	BgSlot	   *slot = bg_slot_lock(ref, relid, LW_SHARED);

	if (slot == NULL)
		return;					/* no filter loaded: nothing to feed */
	if (!key_unchanged && BgFilterPtrIsValid(slot->serving))
		bg_add_to(slot->serving, colhashes, nkeys);
	if (BgFilterPtrIsValid(slot->building))
		bg_add_to(slot->building, colhashes, nkeys);
	LWLockRelease(&slot->lock);
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

/* Mark a guard of this database untrusted: its filter may be missing keys. */
void
bg_untrust(Oid relid, const char *why)
{
	BgSlotRef	ref = BG_SLOT_REF_INIT;
	BgSlot	   *slot;

	slot = bg_slot_lock(&ref, relid, LW_EXCLUSIVE);
	if (slot == NULL)
		return;
	if (slot->state == BG_STATE_READY)
		slot->state = BG_STATE_UNTRUSTED;
	/* a build now running might already have passed the rows */
	if (BgFilterPtrIsValid(slot->building))
		slot->coverage_broken = true;
	strlcpy(slot->last_error, why, sizeof(slot->last_error));
	LWLockRelease(&slot->lock);
	ereport(DEBUG1,
			(errmsg_internal("bloomguard: guard of relation %u is untrusted: %s",
							 relid, why)));
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

