-- shapes: plans and conditions the planner path was not written for get
-- PostgreSQL's plain plan, and every query gives the rows and the errors
-- it gives without bloomguard (src/planner.c and src/guardscan.c list what
-- the BloomGuard node wraps and what it refuses).  explain_guard() shows
-- whether a plan has the node; path_vs_plain() runs a query through the
-- planner path and again with bloomguard.transparent off ("same" must be
-- true everywhere); a generic plan is compared with the same statement
-- prepared and first run with bloomguard.transparent off (no node).  On
-- 4728bac each query of section 1 but the last two crashed the server, and
-- each error of sections 2 and 3 with the key absent or NULL was missing.
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
-- or once (a constant key), and the same in a generic plan.  PostgreSQL
-- 17 and later put it in the join's filter instead, above a plain scan,
-- which the node then wraps (expected/shapes_1.out): the answers are the
-- same either way
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT explain_guard('SELECT g, s.v FROM generate_series(3, 6) g
                        LEFT JOIN LATERAL (SELECT v FROM gt WHERE id = g AND now() > ''2000-01-01'') s ON true');
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

-- 2. Run-time keys besides the key's.  The index scan evaluates every one
-- of its run-time keys (a comparison value that is not a constant) before
-- its first row; the node evaluates all of them before it asks the filter,
-- so an error of any of them is raised whether the key is present, absent
-- or NULL.  An expression of the parameters: the wrapped scan is started
-- with the node, and computes its keys first.
PREPARE gt_div(int, int) AS SELECT v FROM gt WHERE id = $1 AND id < 100 / $2;
SELECT explain_guard('EXECUTE gt_div(4, 1)');
EXECUTE gt_div(999999, 0);
EXECUTE gt_div(NULL, 0);
EXECUTE gt_div(4, 0);
EXECUTE gt_div(4, 1);
SELECT explain_guard('EXECUTE gt_div(5, 1)', true);
-- an initplan's value (a Param the first evaluation computes): the node
-- evaluates it as the scan would, and still skips the scan's start-up for
-- an absent key
PREPARE gt_sub(int, int) AS SELECT v FROM gt WHERE id = $1 AND id < (SELECT 100 / $2);
-- (the InitPlan's lines differ between versions)
SELECT e FROM explain_guard('EXECUTE gt_sub(5, 1)', true) e WHERE e !~ 'InitPlan|Result';
EXECUTE gt_sub(999999, 0);
EXECUTE gt_sub(NULL, 0);
EXECUTE gt_sub(4, 0);
EXECUTE gt_sub(4, 1);
-- a nested loop's inner side, each outer key absent: the second rescan's
-- other key divides by zero
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT explain_guard('SELECT b.x, s.v FROM (VALUES (5), (7)) b(x)
                        CROSS JOIN LATERAL (SELECT v FROM gt WHERE id = b.x AND id < 100 / (b.x - 7)) s');
SELECT b.x, s.v FROM (VALUES (5), (7)) b(x)
  CROSS JOIN LATERAL (SELECT v FROM gt WHERE id = b.x AND id < 100 / (b.x - 7)) s;
SELECT b.x, s.v FROM (VALUES (5::int), (NULL)) b(x)
  CROSS JOIN LATERAL (SELECT v FROM gt WHERE id = b.x AND id < 100 / coalesce(b.x - 5, 0)) s;
-- the same without the node
SET bloomguard.transparent = off;
PREPARE gt_div_plain(int, int) AS SELECT v FROM gt WHERE id = $1 AND id < 100 / $2;
PREPARE gt_sub_plain(int, int) AS SELECT v FROM gt WHERE id = $1 AND id < (SELECT 100 / $2);
SELECT explain_guard('EXECUTE gt_div_plain(4, 1)');
EXECUTE gt_div_plain(999999, 0);
EXECUTE gt_div_plain(NULL, 0);
EXECUTE gt_div_plain(4, 0);
EXECUTE gt_div_plain(4, 1);
EXECUTE gt_sub_plain(999999, 0);
EXECUTE gt_sub_plain(NULL, 0);
EXECUTE gt_sub_plain(4, 1);
SELECT b.x, s.v FROM (VALUES (5), (7)) b(x)
  CROSS JOIN LATERAL (SELECT v FROM gt WHERE id = b.x AND id < 100 / (b.x - 7)) s;
SELECT b.x, s.v FROM (VALUES (5::int), (NULL)) b(x)
  CROSS JOIN LATERAL (SELECT v FROM gt WHERE id = b.x AND id < 100 / coalesce(b.x - 5, 0)) s;
RESET bloomguard.transparent;
RESET enable_hashjoin;
RESET enable_mergejoin;
DEALLOCATE ALL;

-- 3. Start-up checks.  The wrapped scan's start-up checks the EXECUTE
-- privilege of every function it compiles: its conditions' operators (of
-- the index scan's original conditions; of the index-only scan's recheck)
-- and what its target list computes (here a function of a left join's
-- nullable side, evaluated at the scan).  Where the node skips that
-- start-up for an absent key it makes the same checks, or starts the scan
-- at once: a role that may not execute them gets the plain plan's error
-- whatever the filter answers.  Plans made by the owner, run by a role.
CREATE FUNCTION gt_f(t text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RETURN t || ''!''; END';
REVOKE EXECUTE ON FUNCTION gt_f(text) FROM PUBLIC;
CREATE ROLE regress_gt_noexec;
GRANT SELECT ON gt TO regress_gt_noexec;
PREPARE gt_acl(bigint) AS SELECT v FROM gt WHERE id = $1;
PREPARE gt_acl_ios(bigint) AS SELECT id FROM gt WHERE id = $1;
PREPARE gt_phv(int) AS SELECT o.x, s.fv FROM (VALUES (1)) o(x)
  LEFT JOIN (SELECT id, coalesce(gt_f(v), 'z') AS fv FROM gt WHERE id = $1) s ON true;
SELECT explain_guard('EXECUTE gt_acl(5)');
SELECT explain_guard('EXECUTE gt_acl_ios(5)');
SELECT explain_guard('EXECUTE gt_phv(5)');
SELECT explain_guard('EXECUTE gt_acl(5)', true);
SELECT explain_guard('EXECUTE gt_phv(5)', true);
SET bloomguard.transparent = off;
PREPARE gt_acl_plain(bigint) AS SELECT v FROM gt WHERE id = $1;
PREPARE gt_phv_plain(int) AS SELECT o.x, s.fv FROM (VALUES (1)) o(x)
  LEFT JOIN (SELECT id, coalesce(gt_f(v), 'z') AS fv FROM gt WHERE id = $1) s ON true;
EXECUTE gt_acl_plain(5);
EXECUTE gt_phv_plain(5);
RESET bloomguard.transparent;
-- int48eq is the operator of int4 = int8
REVOKE EXECUTE ON FUNCTION int48eq(int4, int8) FROM PUBLIC;
SET ROLE regress_gt_noexec;
EXECUTE gt_acl(5);
EXECUTE gt_acl(4);
EXECUTE gt_acl_ios(5);
EXECUTE gt_acl_plain(5);
EXECUTE gt_phv(5);
EXECUTE gt_phv(4);
EXECUTE gt_phv_plain(5);
RESET ROLE;
GRANT EXECUTE ON FUNCTION int48eq(int4, int8) TO PUBLIC;
SET ROLE regress_gt_noexec;
EXECUTE gt_acl(5);
EXECUTE gt_acl_ios(4);
RESET ROLE;
DEALLOCATE ALL;
REVOKE SELECT ON gt FROM regress_gt_noexec;
DROP ROLE regress_gt_noexec;
DROP FUNCTION gt_f(text);
RESET plan_cache_mode;

RESET enable_bitmapscan;
RESET enable_memoize;
DROP TABLE gt;
DROP FUNCTION explain_guard(text, boolean), path_vs_plain(text);
DROP EXTENSION bloomguard;
