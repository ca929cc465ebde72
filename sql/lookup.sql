-- lookup: guarded_exists returns what EXISTS returns, in every context.
-- Every answer is printed next to the plain EXISTS query it must equal.
-- bloomguard_check is printed only where its answer is deterministic:
-- 'maybe' for present keys of a trusted filter, 'unknown' where no filter
-- may be trusted; for absent keys only counts that hold with overwhelming
-- probability are printed.
CREATE EXTENSION bloomguard;

-- own transaction: its earlier statements have fired their triggers, so
-- their keys are in the filter, which may answer

CREATE TABLE lk_own (id int PRIMARY KEY, payload text);
INSERT INTO lk_own SELECT g, 'row' FROM generate_series(1, 100) g;
SELECT bloomguard_attach('lk_own', 10000);
BEGIN;
-- nothing written yet: the filter answers
SELECT guarded_exists('lk_own', 5) AS guarded,
       EXISTS (SELECT 1 FROM lk_own WHERE id = 5) AS plain,
       bloomguard_check('lk_own', 5) AS filter;
INSERT INTO lk_own VALUES (1000, 'own');
SELECT k, guarded_exists('lk_own', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_own WHERE id = k) AS plain,
       bloomguard_check('lk_own', k) AS filter
  FROM unnest(ARRAY[5, 999, 1000, 1001]) k ORDER BY k;
SELECT count(*) FILTER (WHERE guarded_exists('lk_own', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_own WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_own', g)) AS found,
       count(*) FILTER (WHERE bloomguard_check('lk_own', g) <> 'unknown') AS not_unknown
  FROM generate_series(-10, 2000) g;
-- an UPDATE of the key inside the transaction
UPDATE lk_own SET id = 2000 WHERE id = 1000;
SELECT k, guarded_exists('lk_own', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_own WHERE id = k) AS plain,
       bloomguard_check('lk_own', k) AS filter
  FROM unnest(ARRAY[1000, 2000]) k ORDER BY k;
COMMIT;
SELECT k, guarded_exists('lk_own', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_own WHERE id = k) AS plain
  FROM unnest(ARRAY[1000, 2000]) k ORDER BY k;
SELECT bloomguard_check('lk_own', 2000) AS filter;
-- a write undone by ROLLBACK TO SAVEPOINT: present keys are never 'absent'
BEGIN;
SAVEPOINT s1;
INSERT INTO lk_own VALUES (3000, 'undone');
ROLLBACK TO SAVEPOINT s1;
SELECT guarded_exists('lk_own', 3000) AS guarded,
       EXISTS (SELECT 1 FROM lk_own WHERE id = 3000) AS plain,
       bloomguard_check('lk_own', 5) <> 'absent' AS present_not_absent;
COMMIT;
SELECT bloomguard_detach('lk_own');
DROP TABLE lk_own;

-- BEFORE INSERT trigger of the same table looks up the row inserted just before
CREATE TABLE lk_self (id int PRIMARY KEY);
CREATE TABLE lk_self_log (id int, prev_guarded bool, prev_plain bool, prev_filter text,
                          next_guarded bool, next_plain bool, old_guarded bool, old_plain bool);
CREATE FUNCTION lk_self_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lk_self_log VALUES (
        NEW.id,
        guarded_exists('lk_self', NEW.id - 1),
        EXISTS (SELECT 1 FROM lk_self WHERE id = NEW.id - 1),
        bloomguard_check('lk_self', NEW.id - 1),
        guarded_exists('lk_self', NEW.id + 1),
        EXISTS (SELECT 1 FROM lk_self WHERE id = NEW.id + 1),
        guarded_exists('lk_self', NEW.id - 1000),
        EXISTS (SELECT 1 FROM lk_self WHERE id = NEW.id - 1000));
    RETURN NEW;
END $$;
CREATE TRIGGER check_prev BEFORE INSERT ON lk_self
    FOR EACH ROW EXECUTE FUNCTION lk_self_check();
SELECT bloomguard_attach('lk_self', 10000);
INSERT INTO lk_self SELECT g FROM generate_series(1, 200) g;
INSERT INTO lk_self SELECT g FROM generate_series(1001, 1200) g;
SELECT count(*) AS calls,
       count(*) FILTER (WHERE prev_guarded IS DISTINCT FROM prev_plain) AS prev_disagree,
       count(*) FILTER (WHERE next_guarded IS DISTINCT FROM next_plain) AS next_disagree,
       count(*) FILTER (WHERE old_guarded IS DISTINCT FROM old_plain) AS old_disagree,
       count(*) FILTER (WHERE prev_guarded) AS prev_found,
       count(*) FILTER (WHERE next_guarded) AS next_found,
       count(*) FILTER (WHERE old_guarded) AS old_found,
       count(*) FILTER (WHERE prev_filter <> 'unknown') AS filter_trusted
  FROM lk_self_log;
-- the first row of each statement has no predecessor
SELECT id, prev_guarded, prev_plain FROM lk_self_log WHERE NOT prev_plain ORDER BY id;
DROP TRIGGER check_prev ON lk_self;

-- BEFORE INSERT trigger of another table looks up rows of the guarded table
CREATE TABLE lk_other (ref int);
CREATE TABLE lk_other_log (ref int, guarded bool, plain bool, filter text);
CREATE FUNCTION lk_other_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lk_other_log VALUES (
        NEW.ref,
        guarded_exists('lk_self', NEW.ref),
        EXISTS (SELECT 1 FROM lk_self WHERE id = NEW.ref),
        bloomguard_check('lk_self', NEW.ref));
    RETURN NEW;
END $$;
CREATE TRIGGER check_ref BEFORE INSERT ON lk_other
    FOR EACH ROW EXECUTE FUNCTION lk_other_check();
-- lk_self is not written by this statement: the filter may answer
INSERT INTO lk_other SELECT g FROM generate_series(1, 2000) g;
SELECT count(*) AS calls,
       count(*) FILTER (WHERE guarded IS DISTINCT FROM plain) AS disagree,
       count(*) FILTER (WHERE guarded) AS found,
       count(*) FILTER (WHERE plain AND filter <> 'maybe') AS present_not_maybe,
       count(*) FILTER (WHERE filter = 'unknown') AS filter_unknown
  FROM lk_other_log;
TRUNCATE lk_other_log;
-- the same statement writes lk_self (a writable CTE) and lk_other
WITH ins AS (INSERT INTO lk_self SELECT g FROM generate_series(5001, 5300) g RETURNING id)
INSERT INTO lk_other SELECT id FROM ins;
SELECT count(*) AS calls,
       count(*) FILTER (WHERE guarded IS DISTINCT FROM plain) AS disagree,
       count(*) FILTER (WHERE guarded) AS found,
       count(*) FILTER (WHERE filter <> 'unknown') AS filter_trusted
  FROM lk_other_log;
TRUNCATE lk_other_log;
-- an AFTER INSERT trigger on lk_self that fires before the feed trigger
-- ("a..." sorts before "bloomguard") inserts into lk_other
CREATE FUNCTION lk_self_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lk_other VALUES (NEW.id);
    RETURN NULL;
END $$;
CREATE TRIGGER a_forward AFTER INSERT ON lk_self
    FOR EACH ROW EXECUTE FUNCTION lk_self_forward();
INSERT INTO lk_self SELECT g FROM generate_series(7001, 7300) g;
SELECT count(*) AS calls,
       count(*) FILTER (WHERE guarded IS DISTINCT FROM plain) AS disagree,
       count(*) FILTER (WHERE guarded) AS found,
       count(*) FILTER (WHERE filter <> 'unknown') AS filter_trusted
  FROM lk_other_log;
SELECT count(*) FILTER (WHERE bloomguard_check('lk_self', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(7001, 7300) g;
SELECT bloomguard_detach('lk_self');
DROP TABLE lk_self, lk_self_log, lk_other, lk_other_log;
DROP FUNCTION lk_self_check(), lk_other_check(), lk_self_forward();

-- a STABLE trigger function sees the statement's own snapshot
CREATE TABLE lk_stable (id int PRIMARY KEY);
INSERT INTO lk_stable SELECT g FROM generate_series(1, 50) g;
SELECT bloomguard_attach('lk_stable', 10000);
CREATE FUNCTION lk_stable_check() RETURNS trigger LANGUAGE plpgsql STABLE AS $$
DECLARE
    g bool := guarded_exists('lk_stable', NEW.id - 1);
    p bool := EXISTS (SELECT 1 FROM lk_stable WHERE id = NEW.id - 1);
BEGIN
    IF g IS DISTINCT FROM p THEN
        RAISE NOTICE 'disagree for %: guarded %, plain %', NEW.id - 1, g, p;
    END IF;
    IF g THEN
        PERFORM set_config('lk.found', (current_setting('lk.found')::int + 1)::text, false);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER check_prev BEFORE INSERT ON lk_stable
    FOR EACH ROW EXECUTE FUNCTION lk_stable_check();
SET lk.found = 0;
INSERT INTO lk_stable SELECT g FROM generate_series(51, 150) g;
SELECT current_setting('lk.found') AS found;
SELECT bloomguard_detach('lk_stable');
DROP TABLE lk_stable;
DROP FUNCTION lk_stable_check();
RESET lk.found;

-- volatile plpgsql functions and CTEs
CREATE TABLE lk_func (id int PRIMARY KEY);
INSERT INTO lk_func SELECT g FROM generate_series(1, 500) g;
SELECT bloomguard_attach('lk_func', 10000);
CREATE FUNCTION lk_func_probe(k int) RETURNS bool LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN guarded_exists('lk_func', k);
END $$;
SELECT count(*) AS calls,
       count(*) FILTER (WHERE lk_func_probe(g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_func WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE lk_func_probe(g)) AS found
  FROM generate_series(-100, 1500) g;
-- a function that inserts one key per call and looks up the previous call's key
CREATE FUNCTION lk_func_insert_probe(k int) RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    g bool;
    p bool;
BEGIN
    INSERT INTO lk_func VALUES (k);
    g := guarded_exists('lk_func', k - 1);
    p := EXISTS (SELECT 1 FROM lk_func WHERE id = k - 1);
    RETURN g::text || '/' || p::text || '/' || bloomguard_check('lk_func', k - 1);
END $$;
SELECT r, count(*) FROM (SELECT lk_func_insert_probe(g) AS r FROM generate_series(1001, 1100) g) s
 GROUP BY r ORDER BY r;
SELECT count(*) FILTER (WHERE NOT guarded_exists('lk_func', g)) AS missing,
       count(*) FILTER (WHERE bloomguard_check('lk_func', g) IS DISTINCT FROM 'maybe') AS not_maybe
  FROM generate_series(1001, 1100) g;
-- CTEs
WITH keys AS (SELECT g FROM generate_series(-100, 1500) g),
     answers AS (SELECT g, guarded_exists('lk_func', g) AS guarded,
                        EXISTS (SELECT 1 FROM lk_func WHERE id = g) AS plain FROM keys)
SELECT count(*) AS calls, count(*) FILTER (WHERE guarded IS DISTINCT FROM plain) AS disagree,
       count(*) FILTER (WHERE guarded) AS found
  FROM answers;
WITH answers AS MATERIALIZED (SELECT g, guarded_exists('lk_func', g) AS guarded
                                            FROM generate_series(490, 510) g)
SELECT g, guarded, EXISTS (SELECT 1 FROM lk_func WHERE id = g) AS plain
  FROM answers WHERE g IN (499, 500, 501) ORDER BY g;
-- a volatile function in the SELECT list of an INSERT ... SELECT runs
-- inside the writing statement with a later command id: it sees the rows
-- inserted so far, whose keys reach the filter only when the statement
-- ends, so it must not trust the filter (a STABLE one shares the
-- statement's snapshot, which does not see them)
CREATE TABLE lk_insel (id int PRIMARY KEY, guarded bool, plain bool, filter text);
SELECT bloomguard_attach('lk_insel', 10000);
CREATE FUNCTION lk_insel_probe(k int, OUT guarded bool, OUT plain bool, OUT filter text)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    guarded := guarded_exists('lk_insel', k);
    plain := EXISTS (SELECT 1 FROM lk_insel WHERE id = k);
    filter := bloomguard_check('lk_insel', k);
END $$;
INSERT INTO lk_insel SELECT g, (p).guarded, (p).plain, (p).filter
  FROM (SELECT g, lk_insel_probe(g - 1) AS p FROM generate_series(1, 100) g) s;
SELECT count(*) FILTER (WHERE guarded IS DISTINCT FROM plain) AS disagree,
       count(*) FILTER (WHERE guarded) AS found_previous,
       count(*) FILTER (WHERE filter <> 'unknown') AS filter_trusted
  FROM lk_insel;
SELECT count(*) FILTER (WHERE bloomguard_check('lk_insel', g) <> 'maybe') AS not_maybe
  FROM generate_series(1, 100) g;
SELECT bloomguard_detach('lk_insel');
DROP TABLE lk_insel;
DROP FUNCTION lk_insel_probe(int);
-- a writable CTE: the main query does not see the CTE's row, and neither does guarded_exists
WITH ins AS (INSERT INTO lk_func VALUES (6000) RETURNING id)
SELECT (SELECT count(*) FROM ins) AS inserted,
       guarded_exists('lk_func', 6000) AS guarded,
       EXISTS (SELECT 1 FROM lk_func WHERE id = 6000) AS plain,
       bloomguard_check('lk_func', 6000) AS filter;
SELECT guarded_exists('lk_func', 6000) AS guarded,
       EXISTS (SELECT 1 FROM lk_func WHERE id = 6000) AS plain,
       bloomguard_check('lk_func', 6000) AS filter;
SELECT bloomguard_detach('lk_func');
DROP TABLE lk_func;
DROP FUNCTION lk_func_probe(int), lk_func_insert_probe(int);

-- REPEATABLE READ
CREATE TABLE lk_rr (id int PRIMARY KEY);
INSERT INTO lk_rr SELECT g FROM generate_series(1, 300) g;
SELECT bloomguard_attach('lk_rr', 10000);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FILTER (WHERE guarded_exists('lk_rr', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_rr WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_rr', g)) AS found,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lk_rr WHERE id = g)
                        AND bloomguard_check('lk_rr', g) IS DISTINCT FROM 'maybe') AS present_not_maybe
  FROM generate_series(-100, 1000) g;
INSERT INTO lk_rr VALUES (500);
DELETE FROM lk_rr WHERE id = 1;
SELECT k, guarded_exists('lk_rr', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_rr WHERE id = k) AS plain,
       bloomguard_check('lk_rr', k) AS filter
  FROM unnest(ARRAY[1, 2, 500, 501]) k ORDER BY k;
SELECT count(*) FILTER (WHERE guarded_exists('lk_rr', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_rr WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_rr', g)) AS found
  FROM generate_series(-100, 1000) g;
COMMIT;
SELECT bloomguard_check('lk_rr', 500) AS filter;

-- SERIALIZABLE: the filter is never used
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT k, guarded_exists('lk_rr', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_rr WHERE id = k) AS plain,
       bloomguard_check('lk_rr', k) AS filter
  FROM unnest(ARRAY[1, 2, 500, 501]) k ORDER BY k;
SELECT count(*) FILTER (WHERE guarded_exists('lk_rr', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_rr WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_rr', g)) AS found,
       count(*) FILTER (WHERE bloomguard_check('lk_rr', g) <> 'unknown') AS not_unknown
  FROM generate_series(-100, 1000) g;
INSERT INTO lk_rr VALUES (600);
SELECT k, guarded_exists('lk_rr', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_rr WHERE id = k) AS plain,
       bloomguard_check('lk_rr', k) AS filter
  FROM unnest(ARRAY[600, 601]) k ORDER BY k;
COMMIT;
-- SERIALIZABLE as the session default, in a read-only transaction
SET default_transaction_isolation = 'serializable';
SELECT guarded_exists('lk_rr', 600) AS guarded, bloomguard_check('lk_rr', 600) AS filter;
RESET default_transaction_isolation;
SELECT bloomguard_check('lk_rr', 600) AS filter;
SELECT bloomguard_detach('lk_rr');
DROP TABLE lk_rr;

-- bloomguard.enabled = off
CREATE TABLE lk_off (id int PRIMARY KEY);
INSERT INTO lk_off SELECT g FROM generate_series(1, 300) g;
SELECT bloomguard_attach('lk_off', 10000);
SET bloomguard.enabled = off;
SELECT count(*) FILTER (WHERE guarded_exists('lk_off', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_off WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_off', g)) AS found,
       count(*) FILTER (WHERE bloomguard_check('lk_off', g) <> 'unknown') AS not_unknown
  FROM generate_series(-100, 1000) g;
SELECT state, status, reasons FROM bloomguard_health WHERE relation = 'lk_off'::regclass;
-- the trigger keeps feeding while the filter is not used
INSERT INTO lk_off VALUES (700);
SELECT guarded_exists('lk_off', 700) AS guarded,
       EXISTS (SELECT 1 FROM lk_off WHERE id = 700) AS plain,
       bloomguard_check('lk_off', 700) AS filter;
RESET bloomguard.enabled;
SELECT guarded_exists('lk_off', 700) AS guarded,
       EXISTS (SELECT 1 FROM lk_off WHERE id = 700) AS plain,
       bloomguard_check('lk_off', 700) AS filter;
SELECT state, status, reasons FROM bloomguard_health WHERE relation = 'lk_off'::regclass;
SELECT bloomguard_detach('lk_off');
DROP TABLE lk_off;

-- inheritance child created after attach
CREATE TABLE lk_parent (id int PRIMARY KEY, payload text);
INSERT INTO lk_parent SELECT g, 'parent' FROM generate_series(1, 100) g;
SELECT bloomguard_attach('lk_parent', 10000);
SELECT bloomguard_check('lk_parent', 50) AS filter;
CREATE TABLE lk_child () INHERITS (lk_parent);
-- 500 is only in the child; 50 is in both
INSERT INTO lk_child VALUES (500, 'child'), (50, 'child');
SELECT k, guarded_exists('lk_parent', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_parent WHERE id = k) AS plain,
       EXISTS (SELECT 1 FROM ONLY lk_parent WHERE id = k) AS only_parent,
       bloomguard_check('lk_parent', k) AS filter
  FROM unnest(ARRAY[1, 50, 100, 500, 501]) k ORDER BY k;
SELECT count(*) FILTER (WHERE guarded_exists('lk_parent', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_parent WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_parent', g)) AS found,
       count(*) FILTER (WHERE bloomguard_check('lk_parent', g) <> 'unknown') AS not_unknown
  FROM generate_series(-100, 1000) g;
-- a second child attached with ALTER TABLE ... INHERIT
CREATE TABLE lk_child2 (id int NOT NULL, payload text);
INSERT INTO lk_child2 VALUES (800, 'child2');
ALTER TABLE lk_child2 INHERIT lk_parent;
SELECT guarded_exists('lk_parent', 800) AS guarded,
       EXISTS (SELECT 1 FROM lk_parent WHERE id = 800) AS plain;
SELECT bloomguard_detach('lk_parent');
DROP TABLE lk_child, lk_child2, lk_parent;

-- attach refuses a table that already has inheritance children
CREATE TABLE lk_parent2 (id int PRIMARY KEY);
CREATE TABLE lk_child3 () INHERITS (lk_parent2);
SELECT bloomguard_attach('lk_parent2');
SELECT count(*) FROM bloomguard_guards WHERE relation = 'lk_parent2'::regclass;
SELECT count(*) FROM pg_trigger WHERE tgrelid = 'lk_parent2'::regclass;
INSERT INTO lk_child3 VALUES (1);
SELECT guarded_exists('lk_parent2', 1) AS guarded,
       EXISTS (SELECT 1 FROM lk_parent2 WHERE id = 1) AS plain,
       bloomguard_check('lk_parent2', 1) AS filter;
DROP TABLE lk_child3, lk_parent2;

-- an unguarded table (never attached)
CREATE TABLE lk_plain (id int PRIMARY KEY);
INSERT INTO lk_plain SELECT g FROM generate_series(1, 300) g;
SELECT count(*) FILTER (WHERE guarded_exists('lk_plain', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_plain WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_plain', g)) AS found,
       count(*) FILTER (WHERE bloomguard_check('lk_plain', g) <> 'unknown') AS not_unknown
  FROM generate_series(-100, 1000) g;
DROP TABLE lk_plain;

-- a detached table
CREATE TABLE lk_detached (id int PRIMARY KEY);
INSERT INTO lk_detached SELECT g FROM generate_series(1, 300) g;
SELECT bloomguard_attach('lk_detached', 10000);
SELECT bloomguard_check('lk_detached', 150) AS filter;
SELECT bloomguard_detach('lk_detached');
-- rows written after the detach are not fed, and need not be
INSERT INTO lk_detached SELECT g FROM generate_series(301, 600) g;
SELECT count(*) FILTER (WHERE guarded_exists('lk_detached', g)
                        IS DISTINCT FROM EXISTS (SELECT 1 FROM lk_detached WHERE id = g)) AS disagree,
       count(*) FILTER (WHERE guarded_exists('lk_detached', g)) AS found,
       count(*) FILTER (WHERE bloomguard_check('lk_detached', g) <> 'unknown') AS not_unknown
  FROM generate_series(-100, 1000) g;
-- detach in this session's transaction, then look up in the same transaction
SELECT bloomguard_attach('lk_detached', 10000);
BEGIN;
SELECT bloomguard_detach('lk_detached');
INSERT INTO lk_detached VALUES (900);
SELECT guarded_exists('lk_detached', 900) AS guarded,
       EXISTS (SELECT 1 FROM lk_detached WHERE id = 900) AS plain;
COMMIT;
SELECT guarded_exists('lk_detached', 900) AS guarded,
       EXISTS (SELECT 1 FROM lk_detached WHERE id = 900) AS plain,
       bloomguard_check('lk_detached', 900) AS filter;
DROP TABLE lk_detached;

-- counters of a known workload
CREATE TABLE lk_stats (id int PRIMARY KEY);
INSERT INTO lk_stats SELECT g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('lk_stats', 10000);
SELECT bloomguard_reset_stats('lk_stats');
SELECT checks, shortcuts, source_lookups, source_hits, fallbacks
  FROM bloomguard_health WHERE relation = 'lk_stats'::regclass;
-- 100 present keys, 1000 absent keys
SELECT count(*) FILTER (WHERE guarded_exists('lk_stats', g)) AS found
  FROM generate_series(1, 1100) g;
SELECT checks, source_hits, shortcuts + (source_lookups - source_hits) AS absent_answers,
       fallbacks, shortcuts > 900 AS mostly_shortcuts
  FROM bloomguard_health WHERE relation = 'lk_stats'::regclass;
-- with the filter off, every call is a fallback
SET bloomguard.enabled = off;
SELECT count(*) FILTER (WHERE guarded_exists('lk_stats', g)) AS found
  FROM generate_series(51, 250) g;
RESET bloomguard.enabled;
SELECT checks, source_hits, shortcuts + (source_lookups - source_hits) AS absent_answers,
       fallbacks
  FROM bloomguard_health WHERE relation = 'lk_stats'::regclass;
-- calls in a transaction that wrote the table in an earlier statement use
-- the filter (the statement fed it when it ended)
BEGIN;
INSERT INTO lk_stats VALUES (5000);
SELECT count(*) FILTER (WHERE guarded_exists('lk_stats', g)) AS found
  FROM generate_series(4991, 5010) g;
COMMIT;
SELECT checks, fallbacks FROM bloomguard_health WHERE relation = 'lk_stats'::regclass;
SELECT bloomguard_reset_stats('lk_stats');
SELECT checks, shortcuts, source_lookups, source_hits, fallbacks, stats_reset IS NOT NULL AS was_reset
  FROM bloomguard_health WHERE relation = 'lk_stats'::regclass;
SELECT bloomguard_detach('lk_stats');
DROP TABLE lk_stats;

-- prepared statements: the function is VOLATILE, so answers change between executions
CREATE TABLE lk_prep (id int PRIMARY KEY);
INSERT INTO lk_prep SELECT g FROM generate_series(1, 100) g;
SELECT bloomguard_attach('lk_prep', 10000);
PREPARE lk_p(int) AS SELECT guarded_exists('lk_prep', $1::int) AS guarded,
                            EXISTS (SELECT 1 FROM lk_prep WHERE id = $1) AS plain;
PREPARE lk_q AS SELECT guarded_exists('lk_prep', 424242) AS guarded;
PREPARE lk_c(int) AS SELECT bloomguard_check('lk_prep', $1::int) AS filter;
EXECUTE lk_p(424242);
EXECUTE lk_q;
-- run them often enough for the plan cache to switch to a generic plan
EXECUTE lk_p(1);
EXECUTE lk_p(2);
EXECUTE lk_p(3);
EXECUTE lk_p(4);
EXECUTE lk_p(5);
EXECUTE lk_q;
EXECUTE lk_q;
EXECUTE lk_q;
EXECUTE lk_q;
EXECUTE lk_q;
INSERT INTO lk_prep VALUES (424242);
EXECUTE lk_p(424242);
EXECUTE lk_q;
EXECUTE lk_c(424242);
DELETE FROM lk_prep WHERE id = 424242;
EXECUTE lk_p(424242);
EXECUTE lk_q;
-- forced generic plans
SET plan_cache_mode = force_generic_plan;
PREPARE lk_g(int) AS SELECT guarded_exists('lk_prep', $1) AS guarded,
                            EXISTS (SELECT 1 FROM lk_prep WHERE id = $1) AS plain;
EXECUTE lk_g(434343);
INSERT INTO lk_prep VALUES (434343);
EXECUTE lk_g(434343);
EXECUTE lk_c(434343);
RESET plan_cache_mode;
DEALLOCATE lk_p;
DEALLOCATE lk_q;
DEALLOCATE lk_c;
DEALLOCATE lk_g;
SELECT bloomguard_detach('lk_prep');
DROP TABLE lk_prep;

-- a transaction that only read the table still uses the filter
CREATE TABLE lk_read (id int PRIMARY KEY, payload text);
INSERT INTO lk_read SELECT g, 'row' FROM generate_series(1, 1000) g;
SELECT bloomguard_attach('lk_read', 10000);
CREATE TABLE lk_read_other (id int);
BEGIN;
SELECT count(*) FROM lk_read;
SELECT id FROM lk_read WHERE id <= 3 ORDER BY id FOR UPDATE;
-- writing another table does not matter
INSERT INTO lk_read_other VALUES (1);
SELECT k, guarded_exists('lk_read', k) AS guarded,
       EXISTS (SELECT 1 FROM lk_read WHERE id = k) AS plain,
       bloomguard_check('lk_read', k) AS filter
  FROM unnest(ARRAY[1, 2, 500, 1000]) k ORDER BY k;
SELECT count(*) FILTER (WHERE bloomguard_check('lk_read', g) IS DISTINCT FROM 'maybe') AS present_not_maybe
  FROM generate_series(1, 1000) g;
SELECT count(*) FILTER (WHERE bloomguard_check('lk_read', g) = 'unknown') AS absent_unknown,
       count(*) FILTER (WHERE bloomguard_check('lk_read', g) = 'absent') > 9000 AS mostly_absent,
       count(*) FILTER (WHERE guarded_exists('lk_read', g)) AS absent_found
  FROM generate_series(100001, 110000) g;
COMMIT;
BEGIN READ ONLY;
SELECT bloomguard_check('lk_read', 7) AS filter;
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM lk_read;
SELECT bloomguard_check('lk_read', 7) AS filter;
COMMIT;
SELECT bloomguard_detach('lk_read');
DROP TABLE lk_read, lk_read_other;

SELECT count(*) AS guards_left FROM bloomguard_guards;
DROP EXTENSION bloomguard CASCADE;
