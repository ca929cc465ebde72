-- present_but_absent(table): keys of the table (column id) that the guard
-- calls absent or guarded_exists does not find; must always be 0
CREATE FUNCTION present_but_absent(rel regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s WHERE bloomguard_check(%L, id) = ''absent''
                    OR NOT guarded_exists(%L, id)', rel, rel, rel) INTO n;
  RETURN n;
END $$;
