/*-------------------------------------------------------------------------
 *
 * wal_internal.h
 *	  bloomguard's WAL records: their formats, private to wal.c (which
 *	  writes them and keeps the switch's state) and walredo.c (which
 *	  replays and describes them).
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMGUARD_WAL_INTERNAL_H
#define BLOOMGUARD_WAL_INTERNAL_H

#include "access/xlogreader.h"
#include "lib/stringinfo.h"

#include "bloomguard.h"

/* record types, in xl_info's high bits */
#define XLOG_BLOOMGUARD_KEYS		0x00
#define XLOG_BLOOMGUARD_UNTRUST		0x10
#define XLOG_BLOOMGUARD_FORGET		0x20
#define XLOG_BLOOMGUARD_WAL_LOG_ON	0x30
#define XLOG_BLOOMGUARD_WAL_LOG_OFF	0x40

/* the format of the records below; bump it when it changes */
#define BG_WAL_FORMAT_VERSION		1

/* Every record begins with this. */
typedef struct xl_bloomguard_header
{
	Oid			dbid;			/* InvalidOid: no database (state records) */
	Oid			relid;			/* InvalidOid: every guard of the database */
	uint16		version;		/* BG_WAL_FORMAT_VERSION */
	uint16		layout;			/* the writer's BLOOM_LAYOUT_VERSION */
} xl_bloomguard_header;

/* KEYS: followed by (nkeys + nmoved) * ncols uint64 digests, moved last. */
typedef struct xl_bloomguard_keys
{
	xl_bloomguard_header h;
	uint16		ncols;
	uint16		flags;			/* none yet */
	uint32		nkeys;			/* for every generation */
	uint32		nmoved;			/* for a generation being built only */
} xl_bloomguard_keys;

/* UNTRUST: followed by the reason, NUL-terminated. */
typedef struct xl_bloomguard_untrust
{
	xl_bloomguard_header h;
	char		why[FLEXIBLE_ARRAY_MEMBER];
} xl_bloomguard_untrust;

/* WAL_LOG_ON and WAL_LOG_OFF: why the record was written. */
typedef enum BgWalStateReason
{
	BG_STATE_SWITCH = 0,		/* the setting changed (or differs at startup) */
	BG_STATE_HEARTBEAT = 1		/* repeated: still on */
} BgWalStateReason;

typedef struct xl_bloomguard_state
{
	xl_bloomguard_header h;
	uint8		reason;			/* BgWalStateReason */
} xl_bloomguard_state;

/* wal.c: the switch's state, for redo */
extern bool bg_wal_redo_begin(XLogRecPtr end, bool *current);
extern void bg_wal_redo_switch(bool on, bool current);
extern void bg_wal_redo_keys_seen(bool current);

/* walredo.c: the resource manager's callbacks (wal.c registers them) */
extern void bg_rmgr_redo(XLogReaderState *record);
extern void bg_rmgr_desc(StringInfo buf, XLogReaderState *record);
extern const char *bg_rmgr_identify(uint8 info);

#endif							/* BLOOMGUARD_WAL_INTERNAL_H */
