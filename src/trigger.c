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
 * UPDATE adds the new key only if it differs from the old one ("UPDATE OF
 * pk" would miss keys changed by a BEFORE trigger, so we compare); an
 * UPDATE that keeps the key but puts the new version on another page
 * passes it on for a generation being built only (build.c says why, and
 * why a new version on the same page needs nothing).
 *
 * The trigger does not set bits itself: it hands the key's per-column
 * hashes to this backend's feed buffer (feedbuffer.c), which puts them into
 * every live generation of the guard, the serving one and, during a
 * rebuild, the one being built, before the transaction can commit and
 * before anything else in this backend could need them.  Adding a key
 * whose transaction later rolls back costs only a false positive.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bloomguard.h"

PG_FUNCTION_INFO_V1(bloomguard_trigger);

/* Are the key columns of the old and new row versions byte-equal? */
static bool
bg_key_unchanged(const BgKeyDesc *desc, TupleTableSlot *oldslot,
				 TupleTableSlot *newslot)
{
	int			i;

	for (i = 0; i < desc->nkeys; i++)
	{
		const BgKeyColumn *col = &desc->cols[i];
		bool		oldnull;
		bool		newnull;
		Datum		oldval = slot_getattr(oldslot, col->attnum, &oldnull);
		Datum		newval = slot_getattr(newslot, col->attnum, &newnull);

		/* byte-equal keys hash alike; anything else is added */
		if (oldnull != newnull ||
			(!newnull && !datumIsEqual(oldval, newval, col->typbyval, col->typlen)))
			return false;
	}
	return true;
}

/*
 * Are the old and new versions of an updated row on the same heap page?
 * Not if either position is unknown.
 */
static bool
bg_same_page(TupleTableSlot *oldslot, TupleTableSlot *newslot)
{
	return ItemPointerIsValid(&oldslot->tts_tid) &&
		ItemPointerIsValid(&newslot->tts_tid) &&
		ItemPointerGetBlockNumber(&oldslot->tts_tid) ==
		ItemPointerGetBlockNumber(&newslot->tts_tid);
}

/* The trigger function: hand the new row's key to the feed. */
Datum
bloomguard_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	BgKeyInfo  *info;
	const BgKeyDesc *desc;
	TupleTableSlot *newslot;
	Datum		values[INDEX_MAX_KEYS];
	uint64		colhashes[INDEX_MAX_KEYS];
	bool		moved = false;
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
	info = bg_keyinfo_acquire(rel);
	desc = info->desc;
	if (desc == NULL || !desc->hashable)
	{
		/*
		 * Never fail a write; stop trusting the filter instead, once per
		 * key description: the untrust (and its WAL record) takes effect at
		 * once, whatever becomes of this transaction, and a filter can be
		 * trusted again only after a rebuild, which needs a key, and so a
		 * new description.
		 */
		if (!info->untrust_sent)
		{
			bg_wal_untrust(RelationGetRelid(rel), "its primary key is gone or cannot be hashed");
			info->untrust_sent = true;
		}
		bg_keyinfo_release(info);
		return PointerGetDatum(NULL);
	}

	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		newslot = trigdata->tg_newslot;
		if (bg_key_unchanged(desc, trigdata->tg_trigslot, newslot))
		{
			/* every generation has the key, or a scan will find it here */
			if (bg_same_page(trigdata->tg_trigslot, newslot))
			{
				bg_keyinfo_release(info);
				return PointerGetDatum(NULL);
			}
			moved = true;
		}
	}
	else
		newslot = trigdata->tg_trigslot;

	for (i = 0; i < desc->nkeys; i++)
	{
		bool		isnull;

		values[i] = slot_getattr(newslot, desc->cols[i].attnum, &isnull);
		if (isnull)
		{
			bg_keyinfo_release(info);
			return PointerGetDatum(NULL);	/* not a primary key value */
		}
	}

	bg_key_colhashes(desc, values, colhashes);
	bg_feed_add(rel, colhashes, desc->nkeys, moved);
	bg_keyinfo_release(info);
	return PointerGetDatum(NULL);
}

/*
 * Create relid's feed trigger, as the file header shows it, in the current
 * transaction, running the DDL as owner (the table's owner).  The caller
 * holds ShareRowExclusiveLock on the table, has no reference to it open
 * (ALTER TABLE checks that it is unused), and has registered the guard
 * first if there is to be one (worker.c), so that an event trigger the
 * DDL fires finds the table guarded already.  Used for every guard, and
 * for a Citus shell (citus.c), where Citus copies the trigger to the
 * shards.
 */
void
bg_feed_trigger_create(Oid relid, Oid owner)
{
	const char *qname;
	char	   *schema;
	Oid			save_userid;
	int			save_sec_context;
	Oid			outer;

	qname = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									   get_rel_name(relid));
	schema = get_namespace_name(bg_extension_schema());

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(owner, save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* our own setup is not a coverage break */
	outer = bg_own_trigger_begin(relid);
	PG_TRY();
	{
		if (SPI_execute(psprintf("CREATE TRIGGER %s AFTER INSERT OR UPDATE ON %s"
								 " FOR EACH ROW EXECUTE FUNCTION %s.bloomguard_trigger()",
								 BLOOMGUARD_TRIGGER_NAME, qname,
								 quote_identifier(schema)),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create the bloomguard trigger");
		if (SPI_execute(psprintf("ALTER TABLE %s ENABLE ALWAYS TRIGGER %s",
								 qname, BLOOMGUARD_TRIGGER_NAME),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not enable the bloomguard trigger");
	}
	PG_FINALLY();
	{
		bg_own_trigger_end(outer);
	}
	PG_END_TRY();
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec_context);
}
