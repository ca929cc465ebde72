/*-------------------------------------------------------------------------
 *
 * pending.c
 *	  What this transaction does to guards when it commits.
 *
 * DDL tells bloomguard about a guard from inside a transaction that may
 * still roll back, so the consequences wait for the commit:
 *
 *	UNREGISTER	delete the table's bloomguard_guards row (a dropped table).
 *				Done at PRE_COMMIT (and PRE_PREPARE), inside the
 *				transaction, so the row goes exactly when the table does,
 *				whatever session_replication_role or event_triggers say.
 *	UNTRUST		mark the guard untrusted (its trigger or feed function
 *				changed; InvalidOid: every guard of the database).  Done at
 *				PRE_COMMIT, before the transaction's rows become visible,
 *				while the DDL's lock still keeps other writers out, and at
 *				PRE_PREPARE; an UNTRUST WAL record (wal.c) does the same on
 *				standbys, before the commit record.
 *	FORGET		free the guard's slot and filters (detach, DROP TABLE;
 *				InvalidOid: every guard of the database, DROP EXTENSION).
 *				Done at COMMIT.  A prepared transaction marks the slots
 *				instead, and shmem.c's sweep frees them once the prepared
 *				transaction has committed: no extension code runs at
 *				COMMIT PREPARED.  Standbys are told at PRE_COMMIT (or
 *				PRE_PREPARE) by a FORGET WAL record (wal.c).
 *	FORGET_DATABASE	free every guard of a dropped database, at COMMIT.
 *	CALL		run a function of a file above this one on a table, at
 *				PRE_COMMIT (and PRE_PREPARE), first: partition.c registers
 *				new leaves and unregisters detached ones this way.  It may
 *				add entries of the other kinds.
 *	CLAIM		an attach in this transaction claimed the table's slot
 *				(attach.c, shmem.c's bg_slot_claim()): the filter, in
 *				shared memory, is not undone by a rollback, so the slot is
 *				freed when the (sub)transaction that claimed it aborts,
 *				while its lock still keeps writers out of the table.  At
 *				COMMIT the claim ends (bg_slot_claim_end()).  PREPARE
 *				TRANSACTION is refused, as PostgreSQL refuses it after
 *				touching temporary objects: nothing of ours runs at
 *				ROLLBACK PREPARED to free the slot.
 *
 * Entries of an aborted subtransaction are dropped (a CLAIM's slot freed);
 * a committed subtransaction's entries move to its parent.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bloomguard.h"

typedef enum BgPendingKind
{
	BG_PENDING_UNREGISTER,
	BG_PENDING_UNTRUST,
	BG_PENDING_FORGET,
	BG_PENDING_FORGET_DATABASE, /* relid holds a database OID */
	BG_PENDING_CALL,
	BG_PENDING_CLAIM
} BgPendingKind;

typedef struct BgPending
{
	BgPendingKind kind;
	Oid			relid;
	int			nestlevel;
	const char *why;			/* UNTRUST: the reason, a constant string */
	bg_pending_fn fn;			/* CALL: the function */
} BgPending;

static List *bg_pending = NIL;

/* Add an entry for the current (sub)transaction. */
static void
bg_pending_add(BgPendingKind kind, Oid relid, const char *why, bg_pending_fn fn)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopTransactionContext);
	BgPending  *p = palloc(sizeof(BgPending));

	p->kind = kind;
	p->relid = relid;
	p->nestlevel = GetCurrentTransactionNestLevel();
	p->why = why;
	p->fn = fn;
	bg_pending = lappend(bg_pending, p);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * Run the CALL entries, in the order they were made, once per function
 * and table.  They may add entries (foreach sees them; they are not CALLs).
 */
static void
bg_pending_calls(void)
{
	ListCell   *lc;

	if (!OidIsValid(get_extension_oid("bloomguard", true)))
		return;
	PushActiveSnapshot(GetTransactionSnapshot());
	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);
		ListCell   *prev;
		bool		done = false;

		if (p->kind != BG_PENDING_CALL)
			continue;
		foreach(prev, bg_pending)
		{
			BgPending  *q = (BgPending *) lfirst(prev);

			if (q == p)
				break;
			if (q->kind == BG_PENDING_CALL && q->fn == p->fn && q->relid == p->relid)
				done = true;
		}
		if (!done)
			p->fn(p->relid);
	}
	PopActiveSnapshot();
}

/* Delete the registry rows of dropped tables, if the registry is still there. */
static void
bg_pending_unregister(void)
{
	ListCell   *lc;
	Oid		   *relids;
	int			n = 0;

	foreach(lc, bg_pending)
	{
		if (((BgPending *) lfirst(lc))->kind == BG_PENDING_UNREGISTER)
			n++;
	}
	if (n == 0 || !OidIsValid(get_extension_oid("bloomguard", true)))
		return;					/* the extension went in this transaction too */
	relids = palloc(n * sizeof(Oid));
	n = 0;
	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);

		if (p->kind == BG_PENDING_UNREGISTER)
			relids[n++] = p->relid;
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	bg_registry_delete(relids, n);
	PopActiveSnapshot();
	pfree(relids);
}

/* Mark untrusted what this transaction's DDL made untrustworthy. */
static void
bg_pending_untrust(void)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);

		if (p->kind != BG_PENDING_UNTRUST)
			continue;
		if (!OidIsValid(p->relid))
			bg_untrust_database(MyDatabaseId, p->why);
		else if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(p->relid)))
			bg_untrust(p->relid, p->why);
		else
			continue;			/* a dropped table's slot is forgotten at COMMIT */
		/* and on standbys, through the WAL, before the commit record */
		bg_wal_log_untrust(p->relid, p->why);
	}
}

/*
 * Tell standbys, through the WAL, to forget the guards this transaction
 * removes (at PRE_COMMIT or PRE_PREPARE, before the commit or prepare
 * record).  A standby that forgets a guard whose removal then aborts only
 * rebuilds it.
 */
static void
bg_pending_log_forgets(void)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);

		if (p->kind == BG_PENDING_FORGET)
			bg_wal_log_forget(MyDatabaseId, p->relid);
		else if (p->kind == BG_PENDING_FORGET_DATABASE)
			bg_wal_log_forget(p->relid, InvalidOid);
	}
}

/*
 * Free (at COMMIT) or mark for freeing once xid commits (at PREPARE) the
 * slots of forgotten guards.
 */
static void
bg_pending_forget(TransactionId prepared_xid)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);

		if (p->kind == BG_PENDING_FORGET_DATABASE)
			bg_slot_release_database(p->relid);
		else if (p->kind != BG_PENDING_FORGET)
			continue;
		else if (TransactionIdIsValid(prepared_xid))
			bg_slot_forget_when_committed(MyDatabaseId, p->relid, prepared_xid);
		else if (OidIsValid(p->relid))
			bg_slot_release(MyDatabaseId, p->relid);
		else
			bg_slot_release_database(MyDatabaseId);
	}
}

/*
 * The CLAIM entries at nesting level level and deeper (all of them for 1):
 * with release, free their slots (their (sub)transaction aborts); without,
 * end their claims (it commits).
 */
static void
bg_pending_claims(int level, bool release)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);

		if (p->kind != BG_PENDING_CLAIM || p->nestlevel < level)
			continue;
		if (release)
			bg_slot_release(MyDatabaseId, p->relid);
		else
			bg_slot_claim_end(p->relid);
	}
}

/* Refuse to prepare a transaction that attached a guard (see CLAIM). */
static void
bg_pending_check_prepare(void)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		if (((BgPending *) lfirst(lc))->kind == BG_PENDING_CLAIM)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot PREPARE a transaction that has attached a guard")));
	}
}

/* Transaction callback: carry out the entries at their moment. */
static void
bg_pending_xact_callback(XactEvent event, void *arg)
{
	if (bg_pending == NIL)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			bg_pending_calls();
			bg_pending_unregister();
			bg_pending_untrust();
			bg_pending_log_forgets();
			break;
		case XACT_EVENT_PRE_PREPARE:
			bg_pending_check_prepare();
			bg_pending_calls();
			bg_pending_unregister();
			bg_pending_untrust();
			bg_pending_log_forgets();
			bg_pending_forget(GetTopTransactionId());
			bg_pending = NIL;
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			bg_pending_forget(InvalidTransactionId);
			bg_pending_claims(1, false);
			bg_pending = NIL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			bg_pending_claims(1, true);
			bg_pending = NIL;
			break;
		case XACT_EVENT_PREPARE:
			bg_pending = NIL;
			break;
		default:
			break;
	}
}

/*
 * Subtransaction callback: drop an aborted level's entries (freeing its
 * claimed slots), lift a committed one's.
 */
static void
bg_pending_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							SubTransactionId parentSubid, void *arg)
{
	int			level;
	ListCell   *lc;

	if (bg_pending == NIL)
		return;
	level = GetCurrentTransactionNestLevel();
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		List	   *keep = NIL;
		MemoryContext oldcxt;

		bg_pending_claims(level, true);
		oldcxt = MemoryContextSwitchTo(TopTransactionContext);

		foreach(lc, bg_pending)
		{
			BgPending  *p = (BgPending *) lfirst(lc);

			if (p->nestlevel < level)
				keep = lappend(keep, p);
		}
		MemoryContextSwitchTo(oldcxt);
		bg_pending = keep;
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		foreach(lc, bg_pending)
		{
			BgPending  *p = (BgPending *) lfirst(lc);

			if (p->nestlevel >= level)
				p->nestlevel = level - 1;
		}
	}
}

/* Register the callbacks; called from _PG_init while preloading. */
void
bg_pending_init(void)
{
	RegisterXactCallback(bg_pending_xact_callback, NULL);
	RegisterSubXactCallback(bg_pending_subxact_callback, NULL);
}

/*
 * Free this table's slot when the current transaction commits (InvalidOid:
 * every guard of this database).
 */
void
bg_forget_at_commit(Oid relid)
{
	bg_pending_add(BG_PENDING_FORGET, relid, NULL, NULL);
}

/* Free every guard of a dropped database when the transaction commits. */
void
bg_forget_database_at_commit(Oid dbid)
{
	bg_pending_add(BG_PENDING_FORGET_DATABASE, dbid, NULL, NULL);
}

/*
 * Mark this table's guard (InvalidOid: every guard of this database)
 * untrusted when the current transaction commits.
 */
void
bg_untrust_at_commit(Oid relid, const char *why)
{
	bg_pending_add(BG_PENDING_UNTRUST, relid, why, NULL);
}

/* Delete this table's registry row before the current transaction commits. */
void
bg_unregister_at_commit(Oid relid)
{
	bg_pending_add(BG_PENDING_UNREGISTER, relid, NULL, NULL);
}

/* Run fn(relid) just before the current transaction commits or prepares. */
void
bg_call_at_commit(bg_pending_fn fn, Oid relid)
{
	bg_pending_add(BG_PENDING_CALL, relid, NULL, fn);
}

/*
 * Claim a slot for relid, whose attach runs in the current transaction
 * (the file header's CLAIM): freed if this subtransaction, or the
 * transaction, aborts.  Returns its index; fails as bg_slot_claim() does.
 */
int
bg_claim_in_transaction(Oid relid, const BgKeyIdentity *key, BgState state)
{
	int			index = -1;

	/*
	 * The entry first, so that nothing can fail between the claim and it;
	 * taken back if the claim fails (the table's slot, if it has one, is
	 * someone else's).
	 */
	bg_pending_add(BG_PENDING_CLAIM, relid, NULL, NULL);
	PG_TRY();
	{
		index = bg_slot_claim(relid, key, state, GetTopTransactionId());
	}
	PG_CATCH();
	{
		bg_pending = list_delete_last(bg_pending);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return index;
}

/*
 * Will this transaction mark the table's guard untrusted?  Until then its
 * own lookups must not trust the filter: the DDL that broke coverage is
 * this transaction's.
 */
bool
bg_untrust_pending(Oid relid)
{
	ListCell   *lc;

	foreach(lc, bg_pending)
	{
		BgPending  *p = (BgPending *) lfirst(lc);

		if (p->kind == BG_PENDING_UNTRUST &&
			(!OidIsValid(p->relid) || p->relid == relid))
			return true;
	}
	return false;
}
