-- shapes: plans and conditions the planner path was not written for get
-- PostgreSQL's plain plan, and every query gives the rows and the errors
-- it gives without bloomguard (src/planner.c and src/guardscan.c list what
-- the BloomGuard node wraps and what it refuses).  explain_guard() shows
-- whether a plan has the node; path_vs_plain() runs a query through the
-- planner path and again with bloomguard.transparent off ("same" must be
-- true everywhere); a generic plan is compared with the same statement
-- prepared and first run with bloomguard.transparent off (no node).  On
-- 4728bac each query of section 1 but the last two crashed the server.
CREATE EXTENSION bloomguard;
\i sql/include/path_vs_plain.sql

-- gt: the even numbers 2..2000 are present, the odd ones absent; large
-- enough that the planner scans the index for one key
CREATE TABLE gt (id int PRIMARY KEY, v text);
INSERT INTO gt SELECT 2 * g, 'v' || g FROM generate_series(1, 1000) g;
ANALYZE gt;
SELECT bloomguard_attach('gt', 100000, 1e-9);
SET enable_bitmapscan = off;
SET enable_memoize = off;

-- 1. Pseudoconstant conditions.  A condition that references no column of
-- the table (now() > ..., current_user = ..., a boolean parameter, or the
-- equality of two values that an equivalence class derives from two
-- equalities of the key) is evaluated once, by a gating Result that
-- PostgreSQL puts above the scan, and above the node too: such a path is
-- not wrapped.  Plain EXPLAIN first (it initialises every node), then the
-- rows: present key, absent key, the condition false.
SELECT explain_guard('SELECT * FROM gt WHERE id = 4 AND now() > ''2000-01-01''');
SELECT explain_guard('SELECT v FROM gt WHERE id = 4 AND current_user = ''app''');
SELECT q, p.*
  FROM (VALUES ('SELECT v FROM gt WHERE id = 4 AND now() > ''2000-01-01'''),
               ('SELECT v FROM gt WHERE id = 5 AND now() > ''2000-01-01'''),
               ('SELECT v FROM gt WHERE id = 4 AND now() < ''2000-01-01'''),
               ('SELECT v FROM gt WHERE id = 4 AND current_user = ''app'''),
               ('SELECT v FROM gt WHERE id = 4 AND current_user <> ''app'''),
               ('SELECT v FROM gt WHERE id = 5 AND current_user <> ''app'''),
               ('SELECT v FROM gt WHERE id = 4 AND id = 6'),
               ('SELECT v FROM gt WHERE id = 6 AND id = 6')) c(q),
       path_vs_plain(q) p;
-- generic plans: a boolean parameter; a parameter and a constant for the
-- key ($1 = 6 is the gating condition)
SET plan_cache_mode = force_generic_plan;
PREPARE gt_flag(int, bool) AS SELECT v FROM gt WHERE id = $1 AND $2;
PREPARE gt_two(int) AS SELECT v FROM gt WHERE id = $1 AND id = 6;
SELECT explain_guard('EXECUTE gt_flag(4, true)');
SELECT explain_guard('EXECUTE gt_two(6)');
SELECT q, p.*
  FROM (VALUES ('EXECUTE gt_flag(4, true)'), ('EXECUTE gt_flag(5, true)'),
               ('EXECUTE gt_flag(4, false)'), ('EXECUTE gt_flag(4, NULL)'),
               ('EXECUTE gt_flag(NULL, true)'),
               ('EXECUTE gt_two(6)'), ('EXECUTE gt_two(4)'), ('EXECUTE gt_two(NULL)')) c(q),
       path_vs_plain(q) p;
-- a pseudoconstant below an outer join stays with the scan it was written
-- for: a LATERAL subquery scanned once per outer row (parameterized by it)
-- or once (a constant key), and the same in a generic plan
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT explain_guard('SELECT g, s.v FROM generate_series(3, 6) g
                        LEFT JOIN LATERAL (SELECT v FROM gt WHERE id = g AND now() > ''2000-01-01'') s ON true');
SELECT explain_guard('SELECT g, s.v FROM generate_series(3, 6) g
                        LEFT JOIN LATERAL (SELECT v FROM gt WHERE id = 4 AND current_user <> ''app'') s ON true');
PREPARE gt_lat(bool) AS
  SELECT string_agg(g || ':' || coalesce(s.v, '-'), ',' ORDER BY g) FROM generate_series(3, 6) g
    LEFT JOIN LATERAL (SELECT v FROM gt WHERE id = g AND $1) s ON true;
SELECT explain_guard('EXECUTE gt_lat(true)');
SELECT q, p.*
  FROM (VALUES ('SELECT string_agg(g || '':'' || coalesce(s.v, ''-''), '','' ORDER BY g) FROM generate_series(3, 6) g
                   LEFT JOIN LATERAL (SELECT v FROM gt WHERE id = g AND now() > ''2000-01-01'') s ON true'),
               ('SELECT string_agg(g || '':'' || coalesce(s.v, ''-''), '','' ORDER BY g) FROM generate_series(3, 6) g
                   LEFT JOIN LATERAL (SELECT v FROM gt WHERE id = 4 AND current_user <> ''app'') s ON true'),
               ('EXECUTE gt_lat(true)'), ('EXECUTE gt_lat(false)')) c(q),
       path_vs_plain(q) p;
-- not below an outer join, a pseudoconstant gates the whole join, and the
-- parameterized scan under it is wrapped or not by version (15 and 16 call
-- no set_join_pathlist_hook for a join with a pseudoconstant clause):
-- only the answers are shown
SELECT q, p.answer, p.same
  FROM (VALUES ('SELECT string_agg(g || '':'' || s.v, '','' ORDER BY g) FROM generate_series(3, 6) g
                   CROSS JOIN LATERAL (SELECT v FROM gt WHERE id = g AND now() > ''2000-01-01'') s'),
               ('SELECT string_agg(g || '':'' || s.v, '','' ORDER BY g) FROM generate_series(3, 6) g
                   CROSS JOIN LATERAL (SELECT v FROM gt WHERE id = g AND now() < ''2000-01-01'') s')) c(q),
       path_vs_plain(q) p;
RESET enable_hashjoin;
RESET enable_mergejoin;
DEALLOCATE gt_flag;
DEALLOCATE gt_two;
DEALLOCATE gt_lat;
RESET plan_cache_mode;

RESET enable_bitmapscan;
RESET enable_memoize;
DROP TABLE gt;
DROP FUNCTION explain_guard(text, boolean), path_vs_plain(text);
DROP EXTENSION bloomguard;
