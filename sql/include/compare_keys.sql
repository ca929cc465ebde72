-- compare_keys(table, key columns, key argument lists...): for each list,
-- guarded_exists(table, args) (guarded), EXISTS (SELECT 1 FROM table WHERE
-- keycols = (args)) with the planner path off (plain), bloomguard_check(
-- table, args) (filter), and the same EXISTS through the planner path, an
-- index scan forced (path), each evaluated from the same SQL text, so
-- literals keep their types.  A list "VARIADIC array" is compared with
-- keycols = ANY (array).  node says what the path's BloomGuard node did:
-- "answered/checked" keys (EXPLAIN ANALYZE's Answered by Filter and Key
-- Checks), or '-' where the planner did not wrap the scan (a condition the
-- index cannot use, or a type the filter cannot hash as guarded_exists
-- does).
CREATE FUNCTION compare_keys(rel regclass, keycols text, VARIADIC cases text[])
RETURNS TABLE (n int, arg text, guarded boolean, plain boolean, filter text,
               path boolean, node text)
LANGUAGE plpgsql AS $$
DECLARE
  i int;
  cond text;
  plan jsonb;
  guard jsonb;
  settings text[] := ARRAY['bloomguard.transparent', 'enable_seqscan', 'enable_bitmapscan'];
  saved text[] := ARRAY[current_setting('bloomguard.transparent'),
                        current_setting('enable_seqscan'), current_setting('enable_bitmapscan')];
BEGIN
  FOR i IN 1 .. cardinality(cases) LOOP
    n := i;
    arg := cases[i];
    cond := CASE WHEN arg LIKE 'VARIADIC %' THEN format('%s = ANY (%s)', keycols, substr(arg, 10))
                 ELSE format('%s = (%s)', keycols, arg) END;
    PERFORM set_config('bloomguard.transparent', 'off', true);
    EXECUTE format('SELECT guarded_exists(%L, %s), EXISTS (SELECT 1 FROM %s WHERE %s), bloomguard_check(%L, %s)',
                   rel, arg, rel, cond, rel, arg)
      INTO guarded, plain, filter;
    PERFORM set_config('bloomguard.transparent', 'on', true),
            set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE %s)', rel, cond) INTO path;
    EXECUTE format('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) SELECT 1 FROM %s WHERE %s',
                   rel, cond) INTO plan;
    guard := jsonb_path_query_first(plan, 'strict $.** ? (@."Custom Plan Provider" == "BloomGuard")');
    node := CASE WHEN guard IS NULL THEN '-'
                 ELSE format('%s/%s', guard->>'Answered by Filter', guard->>'Key Checks') END;
    FOR j IN 1 .. cardinality(settings) LOOP
      PERFORM set_config(settings[j], saved[j], true);
    END LOOP;
    RETURN NEXT;
  END LOOP;
END $$;
