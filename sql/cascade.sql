-- cascade: rows that a referential action or a COPY FREEZE writes are
-- never visible to a lookup before their keys reach the filter
-- (src/statement.c has the argument).
--
-- A referential action (ON UPDATE CASCADE, SET DEFAULT) runs its UPDATE
-- without firing the UPDATE's AFTER triggers: they wait for the statement
-- whose trigger firing started the action, the feed trigger's included.
-- Triggers fired after the action, and the foreign key checks of the same
-- statement, see the new rows meanwhile.  COPY FREEZE writes rows that
-- every snapshot sees, its own included.
--
-- Every lookup below goes three ways: the plain query through the planner
-- path, guarded_exists() and bloomguard_check(); each row of "seen" says
-- whether the lookup found the row ("plain" 1, "guarded" true) and whether
-- the filter said 'absent' (it must not: the row is there).
CREATE EXTENSION bloomguard;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE seen (step serial, who text, k text, plain bigint, guarded bool,
                   said_absent bool);
CREATE VIEW seen_wrong AS
  SELECT count(*) AS lookups,
         count(*) FILTER (WHERE (plain = 1) <> guarded OR (plain = 1 AND said_absent)) AS wrong
    FROM seen;

-- 1. A foreign key check on a valid statement, no user trigger: the
-- cascade writes fk_p's new key, the check of fk_f's new row looks it up
CREATE TABLE fk_q (id int PRIMARY KEY);
CREATE TABLE fk_p (id int PRIMARY KEY REFERENCES fk_q ON UPDATE CASCADE);
CREATE TABLE fk_f (pid int REFERENCES fk_p);
INSERT INTO fk_q SELECT g FROM generate_series(1, 1000) g;
INSERT INTO fk_p SELECT g FROM generate_series(1, 1000) g;
ANALYZE fk_q, fk_p;
SELECT bloomguard_attach('fk_p', 100000, 1e-9);
WITH u AS (UPDATE fk_q SET id = id + 100000 WHERE id = 5 RETURNING id)
INSERT INTO fk_f SELECT id FROM u;
SELECT * FROM fk_f;

-- 2. ON UPDATE CASCADE seen by triggers: aaa (on the child, before the
-- feed trigger) and zzz (on the parent, after the RI trigger) look up the
-- child's new key
CREATE TABLE ric_parent (id int PRIMARY KEY);
CREATE TABLE ric_child (id int PRIMARY KEY REFERENCES ric_parent ON UPDATE CASCADE);
INSERT INTO ric_parent SELECT g FROM generate_series(1, 1000) g;
INSERT INTO ric_child SELECT g FROM generate_series(1, 1000) g;
ANALYZE ric_parent, ric_child;
SELECT bloomguard_attach('ric_child', 100000, 1e-9);
-- a trigger looking up NEW.id in the table its argument names
CREATE FUNCTION look_new() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  plain bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I WHERE id = $1', TG_ARGV[0]) INTO plain USING NEW.id;
  INSERT INTO seen (who, k, plain, guarded, said_absent)
    SELECT TG_NAME || ' on ' || TG_TABLE_NAME || ': ' || TG_ARGV[0], NEW.id::text, plain,
           guarded_exists(TG_ARGV[0]::regclass, NEW.id),
           bloomguard_check(TG_ARGV[0]::regclass, NEW.id) = 'absent';
  RETURN NULL;
END $$;
CREATE TRIGGER zzz AFTER UPDATE ON ric_parent FOR EACH ROW EXECUTE FUNCTION look_new('ric_child');
CREATE TRIGGER aaa AFTER UPDATE ON ric_child FOR EACH ROW EXECUTE FUNCTION look_new('ric_child');
UPDATE ric_parent SET id = id + 1000 WHERE id IN (1, 2, 3);
SELECT who, k, plain, guarded, said_absent FROM seen ORDER BY step;
SELECT * FROM seen_wrong;
TRUNCATE seen;

-- two levels deep: ric_grand follows ric_child.  The cascade into
-- ric_grand runs when ric_child's RI trigger fires, after the triggers on
-- ric_parent: zzz on ric_child and aaa on ric_grand look ric_grand up
CREATE TABLE ric_grand (id int PRIMARY KEY REFERENCES ric_child ON UPDATE CASCADE);
INSERT INTO ric_grand SELECT id FROM ric_child;
ANALYZE ric_grand;
SELECT bloomguard_attach('ric_grand', 100000, 1e-9);
CREATE TRIGGER zzz AFTER UPDATE ON ric_child FOR EACH ROW EXECUTE FUNCTION look_new('ric_grand');
CREATE TRIGGER aaa AFTER UPDATE ON ric_grand FOR EACH ROW EXECUTE FUNCTION look_new('ric_grand');
UPDATE ric_parent SET id = id + 1000 WHERE id IN (4, 5);
SELECT who, k, plain, guarded, said_absent FROM seen ORDER BY step;
SELECT * FROM seen_wrong;
TRUNCATE seen;

-- 3. SET DEFAULT into a guarded table's key, from an UPDATE and from a
-- DELETE (which writes no key itself): sd_child's key (pid, n) gets pid 0
CREATE TABLE sd_parent (id int PRIMARY KEY);
CREATE TABLE sd_child (pid int DEFAULT 0 REFERENCES sd_parent
                         ON UPDATE SET DEFAULT ON DELETE SET DEFAULT,
                       n int, PRIMARY KEY (pid, n));
INSERT INTO sd_parent SELECT g FROM generate_series(0, 1000) g;
INSERT INTO sd_child SELECT g, g FROM generate_series(1, 1000) g;
ANALYZE sd_parent, sd_child;
SELECT bloomguard_attach('sd_child', 100000, 1e-9);
CREATE FUNCTION look_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO seen (who, k, plain, guarded, said_absent)
    SELECT TG_NAME || ' ' || TG_OP, '(0,' || OLD.id || ')',
           (SELECT count(*) FROM sd_child WHERE pid = 0 AND n = OLD.id),
           guarded_exists('sd_child', 0, OLD.id),
           bloomguard_check('sd_child', 0, OLD.id) = 'absent';
  RETURN NULL;
END $$;
CREATE TRIGGER zzz AFTER UPDATE OR DELETE ON sd_parent FOR EACH ROW EXECUTE FUNCTION look_default();
UPDATE sd_parent SET id = id + 1000 WHERE id IN (1, 2);
DELETE FROM sd_parent WHERE id IN (3, 4);
SELECT who, k, plain, guarded, said_absent FROM seen ORDER BY step;
SELECT * FROM seen_wrong;
TRUNCATE seen;

-- 4. COPY FREEZE: its rows are frozen, visible to every snapshot, the
-- COPY's own included.  A STABLE BEFORE trigger (rows go in one at a
-- time) looks up the row before; a STABLE default looks up the first row
-- (rows go in by the thousand: from row 1001 on, row 1 is in the table)
CREATE TABLE cf (id int PRIMARY KEY, prev_seen text, first_seen text DEFAULT '-');
INSERT INTO cf (id) SELECT g FROM generate_series(1, 100) g;
ANALYZE cf;
SELECT bloomguard_attach('cf', 100000, 1e-9);
CREATE FUNCTION cf_prev() RETURNS trigger LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF NEW.id > 500000 THEN
    NEW.prev_seen := (SELECT count(*) FROM cf WHERE id = NEW.id - 1) || ' ' ||
                     guarded_exists('cf', NEW.id - 1) || ' ' ||
                     bloomguard_check('cf', NEW.id - 1);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER cf_prev BEFORE INSERT ON cf FOR EACH ROW EXECUTE FUNCTION cf_prev();
BEGIN;
TRUNCATE cf;
COPY cf (id) FROM stdin (FREEZE);
500001
500002
500003
500004
\.
SELECT id, prev_seen, bloomguard_check('cf', id) AS now FROM cf ORDER BY id;
COMMIT;
DROP TRIGGER cf_prev ON cf;
CREATE FUNCTION cf_first() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT (SELECT count(*) FROM cf WHERE id = 600001) || ' ' ||
         guarded_exists('cf', 600001) || ' ' ||
         (bloomguard_check('cf', 600001) = 'absent')
$$;
ALTER TABLE cf ALTER first_seen SET DEFAULT cf_first();
BEGIN;
TRUNCATE cf;
COPY cf (id) FROM PROGRAM 'seq 600001 602500' (FREEZE);
SELECT first_seen, count(*), min(id), max(id) FROM cf GROUP BY 1 ORDER BY 1;
COMMIT;
-- the same COPY without FREEZE: nothing of it is visible to the COPY, and
-- the default's lookups may take the shortcut
BEGIN;
TRUNCATE cf;
COPY cf (id) FROM PROGRAM 'seq 600001 602500';
SELECT first_seen, count(*) FROM cf GROUP BY 1 ORDER BY 1;
COMMIT;

-- 5. What the rule keeps: once the statement that ran the cascade has
-- fired its triggers, lookups take the shortcut again, in the same
-- transaction too; and a statement's own scans always may (UPDATE by an
-- absent key)
SELECT shortcuts AS before FROM bloomguard_health WHERE relation = 'ric_child'::regclass \gset
BEGIN;
UPDATE ric_parent SET id = id + 1000 WHERE id = 6;
SELECT count(*) FROM ric_child WHERE id = -1;
UPDATE ric_child SET id = id WHERE id = -2;
COMMIT;
SELECT shortcuts - :before AS shortcuts FROM bloomguard_health
 WHERE relation = 'ric_child'::regclass;
SELECT * FROM seen_wrong;

DROP TABLE fk_f, fk_p, fk_q, ric_grand, ric_child, ric_parent,
  sd_child, sd_parent, cf, seen CASCADE;
DROP FUNCTION look_new(), look_default(), cf_prev(), cf_first();
DROP EXTENSION bloomguard;
