/*
 * untyped.c: bloomguard lookups through the extended protocol with untyped
 * parameters, as drivers send them (node-postgres, psycopg 3 for str,
 * pgJDBC with stringtype=unspecified), and with a varchar parameter, as
 * pgJDBC's setString() sends one.  Built and run by test/t/018_untyped.pl.
 *
 *	untyped CONNINFO TABLE KEY...
 *
 * For each KEY prints "KEY guarded filter plain": guarded_exists(TABLE, $1)
 * and bloomguard_check(TABLE, $1) prepared with parameter type 0
 * (PQprepare), and EXISTS (SELECT 1 FROM TABLE WHERE id = $1) sent with
 * type 0 (PQexecParams).  Then it sends the first KEY as varchar and
 * prints the error's SQLSTATE, message, context, and whether it carries
 * an internal query or a position.
 *
 * Copyright (c) 2026, bloomguard developers. PostgreSQL License: see LICENSE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libpq-fe.h"

#define VARCHAROID 1043

/* Print a result's single value, or the error, and clear it. */
static void
print_value(PGresult *res, int col)
{
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		printf(" %s", PQgetisnull(res, 0, col) ? "null" : PQgetvalue(res, 0, col));
	else
		printf(" error:%s", PQresultErrorField(res, PG_DIAG_SQLSTATE));
}

/* Print what an error carries; a NULL field prints as "-". */
static void
print_error(PGresult *res)
{
	const char *fields[] = {"sqlstate", "message", "context", "internal_query",
	"position", "internal_position"};
	int			codes[] = {PG_DIAG_SQLSTATE, PG_DIAG_MESSAGE_PRIMARY, PG_DIAG_CONTEXT,
		PG_DIAG_INTERNAL_QUERY, PG_DIAG_STATEMENT_POSITION,
	PG_DIAG_INTERNAL_POSITION};
	int			i;

	for (i = 0; i < 6; i++)
	{
		const char *v = PQresultErrorField(res, codes[i]);

		printf("%s: %s\n", fields[i], v ? v : "-");
	}
}

/* Run the lookups (see the file header). */
int
main(int argc, char **argv)
{
	PGconn	   *conn;
	PGresult   *res;
	char		sql[512];
	const char *table;
	Oid			varchar_type[1] = {VARCHAROID};
	int			i;

	if (argc < 4)
	{
		fprintf(stderr, "usage: %s CONNINFO TABLE KEY...\n", argv[0]);
		return 2;
	}
	conn = PQconnectdb(argv[1]);
	if (PQstatus(conn) != CONNECTION_OK)
	{
		fprintf(stderr, "%s", PQerrorMessage(conn));
		return 1;
	}
	table = argv[2];

	snprintf(sql, sizeof(sql),
			 "SELECT guarded_exists('%s', $1), bloomguard_check('%s', $1)", table, table);
	res = PQprepare(conn, "lookup", sql, 1, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
	{
		printf("prepare failed: %s", PQerrorMessage(conn));
		return 1;
	}
	PQclear(res);
	snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM %s WHERE id = $1)", table);

	for (i = 3; i < argc; i++)
	{
		const char *values[1] = {argv[i]};

		printf("%s", argv[i]);
		res = PQexecPrepared(conn, "lookup", 1, values, NULL, NULL, 0);
		print_value(res, 0);
		print_value(res, 1);
		PQclear(res);
		/* paramTypes NULL: every parameter is sent with type 0 */
		res = PQexecParams(conn, sql, 1, NULL, values, NULL, NULL, 0);
		print_value(res, 0);
		PQclear(res);
		printf("\n");
	}

	/* a varchar parameter, as pgJDBC's setString() sends it */
	{
		const char *values[1] = {argv[3]};

		snprintf(sql, sizeof(sql), "SELECT guarded_exists('%s', $1)", table);
		res = PQexecParams(conn, sql, 1, varchar_type, values, NULL, NULL, 0);
		print_error(res);
		PQclear(res);
	}
	PQfinish(conn);
	return 0;
}
