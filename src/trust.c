/*-------------------------------------------------------------------------
 *
 * trust.c
 *	  The trust rule: when a lookup may take a filter's "absent" for an
 *	  answer, and asking the filter.
 *
 * guarded_exists() and bloomguard_check() (lookup.c) and the BloomGuard
 * node (guardscan.c) ask a filter only through this file.  The filter is
 * trusted only when all of these hold:
 *	- bloomguard.enabled is on, and for the node bloomguard.transparent;
 *	- row-level security does not apply to the caller (see below);
 *	- on a hot standby, the standby knows that the primary writes every
 *	  key to the WAL (bloomguard.wal_log: wal.c has the argument), and the
 *	  table is not unlogged;
 *	- the table is a plain table, with no inheritance children;
 *	- the guard's state is READY and the key identity stored with the
 *	  filter still matches the table's primary key;
 *	- the feed trigger is in place, as attach made it, enabled ALWAYS, and
 *	  this transaction has not changed it (bg_untrust_pending()), and the
 *	  catalog rows of the trigger and of its function are the versions the
 *	  filter was built under (feedcheck.c);
 *	- no statement of this backend that writes rows is still running, or
 *	  waiting for an enclosing statement to fire its AFTER events (a
 *	  referential action), with a command id the lookup's snapshot can see
 *	  or with rows every snapshot sees (COPY FREEZE): AFTER ROW triggers
 *	  fire at the end of the statement, so a query nested inside a writing
 *	  statement can see rows whose keys are not in the filter yet, while
 *	  the statement's own scans cannot (statement.c has the argument);
 *	  keys whose triggers have fired may still be in this backend's feed
 *	  buffer, and the ask flushes the table's first (feedbuffer.c);
 *	- the lookup does not run in a parallel worker (IsParallelWorker()):
 *	  the writer list and the feed buffer belong to the leader, and a
 *	  worker sees the leader's rows with neither (below);
 *	- session_replication_role is not replica: the logical replication
 *	  apply and table synchronization workers, and pglogical's, write rows
 *	  without passing the hooks that track writers, and run in that role;
 *	- the isolation level is not SERIALIZABLE: a negative answered from the
 *	  filter would skip the index predicate lock that lets SSI detect a
 *	  concurrent insert of the same key;
 *	- old_snapshot_threshold is not set (build.c says why).
 *
 * Where each check is made.  bg_filter_trusted() makes every check of the
 * settings, the transaction, the table and its trigger: they read the
 * relcache and the catalogs, which must not be done under a slot's
 * LWLock.  It also works out what the filter must have been built for
 * (BgSlotExpect: the key identity and the trigger's version from the
 * table's cached key description, the feed function's version from the
 * trigger check, the table's relfilenode).  The guard's own state (READY,
 * and that identity, both versions and the relfilenode of a loaded
 * filter) is compared by bg_slot_ask() in slot.c, under the slot's lock,
 * because a rebuild swaps the filter and what vouches for it together
 * under that lock: read anywhere else, they could belong to another
 * generation.  slot.c is handed everything it compares, and reads no
 * state of a higher floor.
 *
 * These checks run on every call and every scan of the node, since a
 * cached plan outlives settings and states.  Each is a read of a setting,
 * of backend state, of the relcache entry the caller's lock keeps current
 * (its trigger list, relhassubclass) or of a shared flag; the one catalog
 * read (pg_inherits) is made only when relhassubclass is set, and the feed
 * function's check is cached until a pg_proc invalidation (feedcheck.c).
 * Together they cost about 1% of a present key's lookup through the node
 * (perf, PL/pgSQL loop of test/bench/plpgsql_loop.sh), so nothing more is
 * cached.
 *
 * Execution contexts.  statement.c's proof of the rule assumes that the
 * lookup runs in the backend whose statements wrote the rows it can see
 * uncommitted, the one that owns the writer list and the feed buffer, and
 * that every writer of rows of a guarded table passes ExecutorStart (with
 * its ExecutorFinish) or ProcessUtility.  Every kind of process or path
 * that can run a lookup (guarded_exists(), bloomguard_check(), a query with
 * the BloomGuard node) or write rows, and why the rule holds or refuses:
 *	- a client backend, and everything it runs in-process: functions,
 *	  triggers, SPI: the premise itself;
 *	- a parallel worker (parallel query, a parallel index build or vacuum,
 *	  bloomguard's own parallel build): it shares the leader's transaction
 *	  and sees its rows, but not its writer list or feed buffer, and a
 *	  query planned inside it (the body of a function labelled PARALLEL
 *	  SAFE) may carry the node, or call guarded_exists(), whatever their
 *	  own labels say.  The rule refuses: never trusted in a parallel worker
 *	  (sql/workers.sql);
 *	- SPI inside referential integrity triggers: the checks of a foreign
 *	  key look up the referenced table, and the referential actions write
 *	  rows, through SPI in the backend whose statement fired them, so both
 *	  pass the executor's hooks (statement.c's writers without a level of
 *	  their own);
 *	- event triggers: their functions run in the backend that runs the
 *	  DDL, inside ProcessUtility, and their queries and writes go through
 *	  SPI and the executor's hooks: the premise holds;
 *	- autovacuum workers: VACUUM and ANALYZE write no rows of user tables,
 *	  and ANALYZE's user code (index expressions, predicates) runs in a
 *	  transaction with no writes of its own, so it sees rows of other
 *	  transactions only once they are committed, when their keys are fed;
 *	- other extensions' background workers connected to a database (as
 *	  pg_cron's): ordinary backends to the rule.  Their statements pass the
 *	  executor's hooks or ProcessUtility, their lookups run in themselves;
 *	- the logical replication apply worker, its table synchronization
 *	  workers and (16 and later) its parallel apply workers, and
 *	  pglogical's: they write rows with ExecSimpleRelationInsert() and its
 *	  kin or CopyFrom() directly, but always with session_replication_role
 *	  = replica (ApplyWorkerMain() on 15; InitializeLogRepWorker(), which
 *	  the table sync and parallel apply workers call too, on 16 to 18), and
 *	  a lookup in that role is never trusted (above);
 *	- a writer that calls CopyFrom() from C outside ProcessUtility (a
 *	  bulk loader, Citus's LocalCopyToShard() for a shard on the
 *	  coordinator, inside Citus's own COPY): its feed events fire inside
 *	  CopyFrom(), which opens and closes a trigger level of its own, so
 *	  every lookup after it is covered; but a lookup nested inside it (a
 *	  BEFORE trigger or default expression of the table being copied into)
 *	  can see its earlier rows before their keys are fed, and no list has
 *	  the writer.  The rule does not hold there, and nothing at lookup time
 *	  can tell: such a table must not be guarded while such a writer fills
 *	  it.  bloomguard_attach() refuses Citus's distributed, reference and
 *	  local tables; the shards themselves, and the local COPY into them,
 *	  are tested on Citus by the scale-out work (issue 25, item 4);
 *	- a writer that inserts through the table access method without the
 *	  executor or CopyFrom() fires no trigger at all: its keys never reach
 *	  the filter, which no rule can make up for.  Such writers are outside
 *	  what bloomguard supports, as they are for every trigger.
 *
 * Row-level security: the filter knows every key, hidden or not, and
 * every observable of a lookup that consulted it (the counters in
 * bloomguard_health, an index probe on "maybe" that idx_scan counts, the
 * time it takes) would tell a role about rows its policies hide.  So for
 * a role that row-level security applies to, the filter is not consulted
 * at all.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "commands/trigger.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "bloomguard.h"
#include "compat.h"

/* bloomguard.enabled and bloomguard.transparent; read through the accessors */
static bool bg_enabled = true;
static bool bg_transparent = true;

/* Define the two settings the trust rule reads (they exist unpreloaded too). */
void
bg_trust_init(void)
{
	DefineCustomBoolVariable("bloomguard.enabled",
							 "Lets guarded_exists() answer from the filter.",
							 "When off, every call does the plain primary key lookup and "
							 "bloomguard_check() answers 'unknown'. The triggers keep "
							 "feeding the filters.",
							 &bg_enabled,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("bloomguard.transparent",
							 "Lets ordinary primary key lookups ask the filter first.",
							 "When on, index scans of a guarded table's primary key that fix "
							 "the whole key are planned under a BloomGuard custom scan, which "
							 "skips the index for keys the filter rules out. Checked when "
							 "planning and again at execution, so it also governs cached plans.",
							 &bg_transparent,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/* bloomguard.enabled: may any filter answer? */
bool
bg_trust_enabled(void)
{
	return bg_enabled;
}

/* bloomguard.transparent: may the planner path ask filters? */
bool
bg_trust_transparent(void)
{
	return bg_transparent;
}

/*
 * Does row-level security apply to this caller's lookups of rel?  Unless
 * noError, raises the query's error when row_security is off and it would
 * apply.  The relcache flag answers the common case without a catalog
 * lookup.
 */
bool
bg_rls_applies(Relation rel, bool noError)
{
	return rel->rd_rel->relrowsecurity &&
		check_enable_rls(RelationGetRelid(rel), InvalidOid, noError) == RLS_ENABLED;
}

/*
 * May a lookup of rel (key described by info) under snapshot snap trust
 * its filter now?  Everything in the file header's list but row-level
 * security, which the callers decide (guarded_exists() raises its error
 * first), and the guard's own state, which bg_slot_ask() compares with
 * *expect, filled in here when the answer is yes.  If children is not
 * NULL, *children is set to whether rel, a plain table, has inheritance
 * children, whatever the answer (false for any other relkind), so that the
 * caller need not ask again.
 */
bool
bg_filter_trusted(Relation rel, const BgKeyInfo *info, Snapshot snap,
				  BgSlotExpect *expect, bool *children)
{
	if (children)
		*children = false;
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		return false;
	/* a caller that needs the answer anyway has it looked up first */
	if (children && (*children = bg_has_children(rel)))
		return false;
	if (!bg_enabled)
		return false;
	/* a standby: only while it receives every key through the WAL */
	if (RecoveryInProgress() &&
		(rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT ||
		 !bg_wal_standby_trusts()))
		return false;
	if (IsolationIsSerializable())
		return false;
	/* a worker has none of the leader's writer list (see the file header) */
	if (IsParallelWorker())
		return false;
	/* the replication workers write rows without the hooks (statement.c) */
	if (SessionReplicationRole == SESSION_REPLICATION_ROLE_REPLICA)
		return false;
	if (!bg_own_writes_fed(RelationGetRelid(rel), snap))
		return false;
	if (bg_feed_check(rel, &expect->feed_version) != BG_FEED_IN_PLACE)
		return false;
	if (bg_untrust_pending(RelationGetRelid(rel)))
		return false;
	/* the one check that may read a catalog (pg_inherits), last */
	if (!children && bg_has_children(rel))
		return false;
	if (bg_old_snapshot_threshold_set())
		return false;
	bg_assert_own_writes_fed(rel, snap);
	expect->identity = &info->identity;
	expect->trigger_version = info->trigger_version;
	expect->relfilenode = bg_rel_filenumber(rel);
	return true;
}

/*
 * May the BloomGuard node's scan of rel, under snapshot snap, ask the
 * filter now?  The whole rule: bloomguard.transparent, row-level security
 * (a cached plan may outlive the policies it was planned under), and
 * bg_filter_trusted().
 */
bool
bg_trust_scan(Relation rel, const BgKeyInfo *info, Snapshot snap,
			  BgSlotExpect *expect)
{
	return bg_transparent && !bg_rls_applies(rel, true) &&
		bg_filter_trusted(rel, info, snap, expect, NULL);
}

/*
 * Ask rel's filter about one key (values in the key's types), for a
 * caller that bg_filter_trusted() has said yes to and that filled in
 * expect: this backend's own keys of the table go into the filter first
 * (feedbuffer.c), the key is hashed before the slot lock is taken (hash
 * functions may detoast), and slot.c checks the guard's state and answers.
 * nomatch: no value of the key type can equal the argument (values are
 * then not read).  *slotindex is set to the guard's slot, or -1.
 */
BgAnswer
bg_trust_ask(Relation rel, BgKeyInfo *info, const BgSlotExpect *expect,
			 const Datum *values, bool nomatch, int *slotindex)
{
	Oid			relid = RelationGetRelid(rel);
	uint64		colhashes[INDEX_MAX_KEYS];

	bg_feed_flush_rel(relid);
	if (!nomatch)
		bg_key_colhashes(info->desc, values, colhashes);
	return bg_slot_ask(&info->ref, relid, expect, colhashes, info->desc->nkeys,
					   nomatch, slotindex);
}
