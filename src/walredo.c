/*-------------------------------------------------------------------------
 *
 * walredo.c
 *	  Redo of bloomguard's WAL records, and their descriptions.
 *
 * wal.c writes the records (its header lists them and has the proof of the
 * bloomguard.wal_log switch) and registers the resource manager whose
 * callbacks are here.  Redo runs in the startup process, with no catalog
 * access, no relcache and no transaction; it never raises ERROR for
 * bloomguard's own reasons: it skips what it cannot apply and marks that
 * guard untrusted.  Filters live in the main shared memory segment
 * (shmem.c), so the startup process reaches them without mapping
 * anything.  A KEYS record's digests go to every live generation of the
 * guard through slot.c, like a flush; UNTRUST and FORGET records through
 * slot.c and shmem.c; WAL_LOG_ON and WAL_LOG_OFF change the switch's
 * state, which is wal.c's (bg_wal_redo_switch()).
 *
 * Locking.  Nothing here takes a lock itself: the wal lock is taken in
 * wal.c, the slot locks in slot.c and shmem.c.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog_internal.h"

#include "wal_internal.h"

/* Redo of KEYS: add the digests to every live generation of the guard. */
static void
bg_redo_keys(const xl_bloomguard_keys *xlrec, Size len, bool current)
{
	static BgSlotRef ref = BG_SLOT_REF_INIT;
	static Oid	ref_dbid = InvalidOid;
	static Oid	ref_relid = InvalidOid;
	const uint64 *keys = (const uint64 *) ((const char *) xlrec + sizeof(*xlrec));
	uint64		ndigests = ((uint64) xlrec->nkeys + xlrec->nmoved) * xlrec->ncols;

	if (xlrec->ncols < 1 || xlrec->ncols > INDEX_MAX_KEYS ||
		len != sizeof(*xlrec) + ndigests * sizeof(uint64))
	{
		bg_untrust_in(xlrec->h.dbid, xlrec->h.relid,
					  "a bloomguard WAL record could not be applied");
		return;
	}
	bg_wal_redo_keys_seen(current);

	if (xlrec->h.dbid != ref_dbid || xlrec->h.relid != ref_relid)
	{
		ref = (BgSlotRef) BG_SLOT_REF_INIT;
		ref_dbid = xlrec->h.dbid;
		ref_relid = xlrec->h.relid;
	}
	(void) bg_slot_feed_batch(&ref, xlrec->h.dbid, xlrec->h.relid, InvalidOid,
							  xlrec->ncols, keys, (int) xlrec->nkeys,
							  keys + (Size) xlrec->nkeys * xlrec->ncols,
							  (int) xlrec->nmoved);
}

/* The resource manager's redo: see the file header. */
void
bg_rmgr_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLR_RMGR_INFO_MASK;
	const char *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);
	const xl_bloomguard_header *h = (const xl_bloomguard_header *) data;
	bool		current;

	/* records up to the position loaded filters were saved at are in them */
	if (!bg_wal_redo_begin(record->EndRecPtr, &current))
		return;
	if (len < sizeof(xl_bloomguard_header))
	{
		ereport(LOG,
				(errmsg("bloomguard: skipping a WAL record of %zu bytes at %X/%X",
						len, LSN_FORMAT_ARGS(record->ReadRecPtr))));
		return;
	}
	if (h->version != BG_WAL_FORMAT_VERSION)
	{
		/* written by another version: we cannot apply it */
		if (OidIsValid(h->dbid) && OidIsValid(h->relid))
			bg_untrust_in(h->dbid, h->relid,
						  "a bloomguard WAL record of another version could not be applied");
		else
			bg_untrust_all("a bloomguard WAL record of another version could not be applied");
		return;
	}

	switch (info)
	{
		case XLOG_BLOOMGUARD_KEYS:
			if (len < sizeof(xl_bloomguard_keys))
				bg_untrust_in(h->dbid, h->relid,
							  "a bloomguard WAL record could not be applied");
			else
				bg_redo_keys((const xl_bloomguard_keys *) data, len, current);
			break;
		case XLOG_BLOOMGUARD_UNTRUST:
			if (current)
			{
				char		why[BG_ERROR_LEN];
				Size		n = Min(len - sizeof(*h), sizeof(why) - 1);

				/* the reason, cut at its NUL or at our buffer's end */
				memcpy(why, data + sizeof(*h), n);
				why[n] = '\0';
				if (why[0] == '\0')
					strlcpy(why, "it was marked untrusted on the primary", sizeof(why));
				if (OidIsValid(h->relid))
					bg_untrust_in(h->dbid, h->relid, why);
				else
					bg_untrust_database(h->dbid, why);
			}
			break;
		case XLOG_BLOOMGUARD_FORGET:
			if (current)
			{
				if (OidIsValid(h->relid))
					bg_slot_release(h->dbid, h->relid);
				else
					bg_slot_release_database(h->dbid);
			}
			break;
		case XLOG_BLOOMGUARD_WAL_LOG_ON:
		case XLOG_BLOOMGUARD_WAL_LOG_OFF:
			bg_wal_redo_switch(info == XLOG_BLOOMGUARD_WAL_LOG_ON, current);
			break;
		default:
			ereport(LOG,
					(errmsg("bloomguard: skipping a WAL record of unknown type %u at %X/%X",
							info, LSN_FORMAT_ARGS(record->ReadRecPtr))));
			if (OidIsValid(h->dbid) && OidIsValid(h->relid))
				bg_untrust_in(h->dbid, h->relid,
							  "a bloomguard WAL record could not be applied");
			break;
	}
}

/* The resource manager's description of a record, for pg_walinspect. */
void
bg_rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLR_RMGR_INFO_MASK;
	const char *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);
	const xl_bloomguard_header *h = (const xl_bloomguard_header *) data;

	if (len < sizeof(*h))
		return;
	if (info == XLOG_BLOOMGUARD_WAL_LOG_ON || info == XLOG_BLOOMGUARD_WAL_LOG_OFF)
	{
		if (len >= sizeof(xl_bloomguard_state))
			appendStringInfoString(buf,
								   ((const xl_bloomguard_state *) data)->reason == BG_STATE_HEARTBEAT ?
								   "still on" : "switched");
		return;
	}
	appendStringInfo(buf, "db %u ", h->dbid);
	if (OidIsValid(h->relid))
		appendStringInfo(buf, "rel %u", h->relid);
	else
		appendStringInfoString(buf, "all guards");
	if (h->version != BG_WAL_FORMAT_VERSION)
	{
		appendStringInfo(buf, "; format version %u", h->version);
		return;
	}
	if (info == XLOG_BLOOMGUARD_KEYS && len >= sizeof(xl_bloomguard_keys))
	{
		const xl_bloomguard_keys *k = (const xl_bloomguard_keys *) data;

		appendStringInfo(buf, ": %u keys, %u moved, %u column%s",
						 k->nkeys, k->nmoved, k->ncols, k->ncols == 1 ? "" : "s");
	}
	else if (info == XLOG_BLOOMGUARD_UNTRUST && len > sizeof(*h))
		appendStringInfo(buf, ": %.*s", (int) (len - sizeof(*h)), data + sizeof(*h));
}

/* The resource manager's name for a record type. */
const char *
bg_rmgr_identify(uint8 info)
{
	switch (info & XLR_RMGR_INFO_MASK)
	{
		case XLOG_BLOOMGUARD_KEYS:
			return "KEYS";
		case XLOG_BLOOMGUARD_UNTRUST:
			return "UNTRUST";
		case XLOG_BLOOMGUARD_FORGET:
			return "FORGET";
		case XLOG_BLOOMGUARD_WAL_LOG_ON:
			return "WAL_LOG_ON";
		case XLOG_BLOOMGUARD_WAL_LOG_OFF:
			return "WAL_LOG_OFF";
	}
	return NULL;
}
