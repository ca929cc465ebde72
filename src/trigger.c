/*-------------------------------------------------------------------------
 *
 * trigger.c
 *	  The feed: an AFTER INSERT OR UPDATE row trigger that adds keys.
 *
 * bloomguard_attach creates it on the guarded table as
 *		CREATE TRIGGER bloomguard AFTER INSERT OR UPDATE ON t
 *			FOR EACH ROW EXECUTE FUNCTION bloomguard_trigger();
 *		ALTER TABLE t ENABLE ALWAYS TRIGGER bloomguard;
 * ALWAYS, so that rows applied by logical replication or under
 * session_replication_role = replica are fed too.  It fires for every
 * write path that can create a key: INSERT (multi-row, COPY, ON CONFLICT
 * DO NOTHING's inserts and DO UPDATE's updates, MERGE) and UPDATE.  An
 * UPDATE adds the new key to the serving generation only if it differs from
 * the old one ("UPDATE OF pk" would miss keys changed by a BEFORE trigger,
 * so we compare), and to a generation being built always.
 *
 * The key is added to every live generation: the serving one and, during
 * a rebuild, the one being built (see build.c).  Adding a key whose
 * transaction later rolls back costs only a false positive.
 *
 * Copyright (c) 2026, bloomguard developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_trigger);


/* Add one key (given as per-column hashes) to a filter generation. */
static inline void
bg_add_to(dsa_pointer dp, const uint64 *colhashes, int nkeys)
{
	BloomFilter *filter = dsa_get_address(bg_dsa(), dp);

	bloom_add(filter, bloom_hash_key(filter->seed, colhashes, nkeys));
}

Datum
bloomguard_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	BgSlotRef  *ref;
	const BgKeyDesc *desc;
	TupleTableSlot *newslot;
	Datum		values[INDEX_MAX_KEYS];
	uint64		colhashes[INDEX_MAX_KEYS];
	BgSlot	   *slot;
	bool		same = false;
	int			i;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloomguard_trigger: not called by trigger manager")));
	if (!TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		!(TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) ||
		  TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event)))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bloomguard_trigger must be fired AFTER INSERT OR UPDATE FOR EACH ROW")));

	bg_require_loaded();
	rel = trigdata->tg_relation;

	/* the backend's key cache is current: the writer holds a table lock */
	desc = bg_keydesc_lookup(rel, NULL, &ref);
	if (desc == NULL || !desc->hashable)
	{
		/* never fail a write; stop trusting the filter instead */
		bg_untrust(RelationGetRelid(rel), "its primary key is gone or cannot be hashed");
		return PointerGetDatum(NULL);
	}

	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		TupleTableSlot *oldslot = trigdata->tg_trigslot;

		newslot = trigdata->tg_newslot;
		same = true;
		for (i = 0; i < desc->nkeys && same; i++)
		{
			const BgKeyColumn *col = &desc->cols[i];
			bool		oldnull;
			bool		newnull;
			Datum		oldval = slot_getattr(oldslot, col->attnum, &oldnull);
			Datum		newval = slot_getattr(newslot, col->attnum, &newnull);

			/* byte-equal keys hash alike; anything else is added */
			same = (oldnull == newnull) &&
				(newnull || datumIsEqual(oldval, newval, col->typbyval, col->typlen));
		}
	}
	else
		newslot = trigdata->tg_trigslot;

	for (i = 0; i < desc->nkeys; i++)
	{
		bool		isnull;

		values[i] = slot_getattr(newslot, desc->cols[i].attnum, &isnull);
		if (isnull)
			return PointerGetDatum(NULL);	/* not a primary key value */
	}

	/*
	 * Hash before taking the slot lock: hashing may detoast or run a type's
	 * hash function, neither of which belongs under an LWLock.
	 */
	bg_key_colhashes(desc, values, colhashes);

	slot = bg_slot_lock(ref, RelationGetRelid(rel), LW_SHARED);
	if (slot == NULL)
		return PointerGetDatum(NULL);	/* no filter loaded: nothing to feed */

	/*
	 * The serving generation has the key already if the UPDATE kept it.  A
	 * generation being built gets it anyway: the new row version may sit on
	 * a page the scan has passed, and the old one may be pruned before the
	 * scan reaches it (build.c's argument counts on every version created
	 * after the build began passing through here).
	 */
	if (!same && DsaPointerIsValid(slot->serving))
		bg_add_to(slot->serving, colhashes, desc->nkeys);
	if (DsaPointerIsValid(slot->building))
		bg_add_to(slot->building, colhashes, desc->nkeys);
	LWLockRelease(&slot->lock);

	return PointerGetDatum(NULL);
}

