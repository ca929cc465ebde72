-- discard: the caches a backend keeps (key descriptions and their guard
-- slot references, plans with the BloomGuard node, the trigger's state)
-- give the answers EXISTS gives however often they are invalidated.  The
-- assert-enabled run (test/run-all.sh --assert: make installcheck-discard)
-- runs this file with debug_discard_caches = 1, where every catalog access
-- discards every cache; there a lookup costs a few hundred catalog reads,
-- so the file is small, and the ordinary run checks the same answers.
CREATE EXTENSION bloomguard;
\i sql/include/path_vs_plain.sql
SET enable_bitmapscan = off;
SET enable_seqscan = off;

-- an int key and a two-column key; each key's answer against EXISTS
CREATE TABLE dc (id int PRIMARY KEY, v text);
INSERT INTO dc SELECT g, 'v' || g FROM generate_series(1, 40) g;
CREATE TABLE dc2 (a text, b int, PRIMARY KEY (a, b));
INSERT INTO dc2 SELECT 'k' || g % 4, g FROM generate_series(1, 20) g;
SELECT bloomguard_attach('dc', 10000, 1e-9);
SELECT bloomguard_attach('dc2', 10000, 1e-9);
SELECT count(*) FILTER (WHERE guarded_exists('dc', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM dc WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('dc', g)) AS found,
       count(*) FILTER (WHERE g <= 40 AND bloomguard_check('dc', g) = 'absent') AS present_absent
  FROM generate_series(1, 60) g;
SELECT count(*) FILTER (WHERE guarded_exists('dc2', 'k' || g % 4, g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM dc2 WHERE a = 'k' || g % 4 AND b = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('dc2', 'k' || g % 4, g)) AS found
  FROM generate_series(1, 30) g;

-- the planner path: a wrapped scan, a generic plan kept across
-- invalidations, and made again after DDL
SELECT explain_guard('SELECT v FROM dc WHERE id = 7');
SELECT * FROM path_vs_plain('SELECT v FROM dc WHERE id = 7');
SELECT * FROM path_vs_plain('SELECT v FROM dc WHERE id = 70');
SET plan_cache_mode = force_generic_plan;
PREPARE dc_get(int) AS SELECT v FROM dc WHERE id = $1;
EXECUTE dc_get(7);
EXECUTE dc_get(70);
ALTER TABLE dc ADD COLUMN w int;
EXECUTE dc_get(8);
SELECT explain_guard('EXECUTE dc_get(70)', true);
DEALLOCATE dc_get;
-- a key computed at execution: evaluated by the node, the scan started
-- only for a key the filter does not rule out, and handed the value
PREPARE dc_expr(int) AS SELECT v FROM dc WHERE id = $1 * 1;
EXECUTE dc_expr(9);
EXECUTE dc_expr(90);
SELECT explain_guard('EXECUTE dc_expr(90)', true);
DEALLOCATE dc_expr;
-- a pseudoconstant condition: not wrapped (shapes.sql); every run-time key
-- of a wrapped scan is evaluated before the filter is asked, the scan
-- started at start-up (an expression) or late (an initplan's value)
PREPARE dc_gate(int, bool) AS SELECT v FROM dc WHERE id = $1 AND $2;
EXECUTE dc_gate(7, true);
EXECUTE dc_gate(70, true);
SELECT explain_guard('EXECUTE dc_gate(7, true)');
PREPARE dc_div(int, int) AS SELECT v FROM dc WHERE id = $1 AND id < 100 / $2;
PREPARE dc_sub(int, int) AS SELECT v FROM dc WHERE id = $1 AND id < (SELECT 100 / $2);
EXECUTE dc_div(70, 0);
EXECUTE dc_div(NULL, 0);
EXECUTE dc_div(7, 1);
EXECUTE dc_sub(70, 0);
EXECUTE dc_sub(7, 1);
-- (the InitPlan's lines differ between versions)
SELECT e FROM explain_guard('EXECUTE dc_sub(70, 1)', true) e WHERE e !~ 'InitPlan|Result';
DEALLOCATE dc_gate;
DEALLOCATE dc_div;
DEALLOCATE dc_sub;
RESET plan_cache_mode;
-- a nested-loop anti-join, the inner scan rescanned with each outer key
CREATE TABLE dc_batch (id int);
INSERT INTO dc_batch VALUES (3), (30), (300), (3000);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_memoize = off;
SELECT * FROM path_vs_plain('SELECT string_agg(id::text, '','' ORDER BY id) FROM dc_batch b
                               WHERE NOT EXISTS (SELECT 1 FROM dc WHERE dc.id = b.id)');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_memoize;

-- the trigger feeds new keys; this transaction's own keys are seen
INSERT INTO dc (id, v) SELECT g, 'new' FROM generate_series(41, 50) g;
SELECT count(*) FILTER (WHERE bloomguard_check('dc', g) = 'absent') AS present_absent,
       count(*) FILTER (WHERE guarded_exists('dc', g)) AS found
  FROM generate_series(41, 50) g;
BEGIN;
INSERT INTO dc (id, v) VALUES (500, 'own');
SELECT guarded_exists('dc', 500) AS guarded, EXISTS (SELECT 1 FROM dc WHERE id = 500) AS plain;
SELECT * FROM path_vs_plain('SELECT v FROM dc WHERE id = 500');
ROLLBACK;
SELECT guarded_exists('dc', 500) AS after_rollback;

-- a coverage break: untrusted, the lookups fail open; rebuilt, trusted
ALTER TABLE dc DISABLE TRIGGER bloomguard;
INSERT INTO dc (id, v) VALUES (600, 'unfed');
SELECT guarded_exists('dc', 600) AS found, bloomguard_check('dc', 600) AS filter,
       (SELECT state FROM bloomguard_health WHERE relation = 'dc'::regclass) AS state;
SELECT * FROM path_vs_plain('SELECT v FROM dc WHERE id = 600');
ALTER TABLE dc ENABLE ALWAYS TRIGGER bloomguard;
SELECT bloomguard_rebuild('dc');
SELECT guarded_exists('dc', 600) AS found, bloomguard_check('dc', 600) AS filter,
       (SELECT state FROM bloomguard_health WHERE relation = 'dc'::regclass) AS state;

-- a partitioned table: each key is routed to its leaf
CREATE TABLE dp (id int PRIMARY KEY) PARTITION BY HASH (id);
CREATE TABLE dp0 PARTITION OF dp FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE dp1 PARTITION OF dp FOR VALUES WITH (MODULUS 2, REMAINDER 1);
INSERT INTO dp SELECT generate_series(1, 20);
SELECT bloomguard_attach('dp');
SELECT count(*) FILTER (WHERE guarded_exists('dp', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM dp WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('dp', g)) AS found
  FROM generate_series(1, 30) g;

-- a table dropped and made again under the same name: a new key
SELECT bloomguard_detach('dc2');
DROP TABLE dc2;
CREATE TABLE dc2 (a int PRIMARY KEY);
INSERT INTO dc2 SELECT generate_series(1, 10);
SELECT bloomguard_attach('dc2', 10000, 1e-9);
SELECT count(*) FILTER (WHERE guarded_exists('dc2', g)) AS found,
       count(*) FILTER (WHERE g <= 10 AND bloomguard_check('dc2', g) = 'absent') AS present_absent
  FROM generate_series(1, 20) g;

DROP TABLE dc, dc2, dc_batch, dp;
DROP FUNCTION explain_guard(text, boolean), path_vs_plain(text);
DROP EXTENSION bloomguard;
