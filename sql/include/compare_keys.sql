-- compare_keys(table, key columns, key argument lists...): for each list,
-- guarded_exists(table, args) (guarded), EXISTS (SELECT 1 FROM table WHERE
-- keycols = (args)) (plain) and bloomguard_check(table, args) (filter),
-- each evaluated from the same SQL text, so literals keep their types.  A
-- list "VARIADIC array" is compared with keycols = ANY (array).
CREATE FUNCTION compare_keys(rel regclass, keycols text, VARIADIC cases text[])
RETURNS TABLE (n int, arg text, guarded boolean, plain boolean, filter text)
LANGUAGE plpgsql AS $$
DECLARE
  i int;
  cond text;
BEGIN
  FOR i IN 1 .. cardinality(cases) LOOP
    n := i;
    arg := cases[i];
    cond := CASE WHEN arg LIKE 'VARIADIC %' THEN format('%s = ANY (%s)', keycols, substr(arg, 10))
                 ELSE format('%s = (%s)', keycols, arg) END;
    EXECUTE format('SELECT guarded_exists(%L, %s), EXISTS (SELECT 1 FROM %s WHERE %s), bloomguard_check(%L, %s)',
                   rel, arg, rel, cond, rel, arg)
      INTO guarded, plain, filter;
    RETURN NEXT;
  END LOOP;
END $$;
