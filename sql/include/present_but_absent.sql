-- present_but_absent(table): keys of the table (column id) that the guard
-- calls absent, that guarded_exists does not find, or that a lookup through
-- the planner path (a nested-loop anti-join of the table with itself on its
-- key, forced) does not find; must always be 0
CREATE FUNCTION present_but_absent(rel regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
  m bigint;
  settings text[] := ARRAY['enable_hashjoin', 'enable_mergejoin', 'enable_memoize', 'enable_seqscan'];
  saved text[];
BEGIN
  EXECUTE format('SELECT count(*) FROM %s WHERE bloomguard_check(%L, id) = ''absent''
                    OR NOT guarded_exists(%L, id)', rel, rel, rel) INTO n;
  SELECT array_agg(current_setting(s) ORDER BY o) INTO saved FROM unnest(settings) WITH ORDINALITY u(s, o);
  PERFORM set_config(s, 'off', true) FROM unnest(settings) s;
  EXECUTE format('SELECT count(*) FROM %s a WHERE NOT EXISTS (SELECT 1 FROM %s b WHERE b.id = a.id)',
                 rel, rel) INTO m;
  PERFORM set_config(settings[i], saved[i], true) FROM generate_subscripts(settings, 1) i;
  RETURN n + m;
END $$;
