-- explain_guard(query, run): EXPLAIN (COSTS OFF) of query, with ANALYZE
-- if run (TIMING, SUMMARY and BUFFERS off), printed alike on
-- PostgreSQL 15 to 18 and from run to run: the lines only newer versions
-- add ("Index Searches", "Disabled", "Storage") and those that depend on
-- the visibility map or memory ("Heap Fetches", "Sort Method") are left
-- out, and 18's row counts per loop with decimals ("rows=1.75") are
-- rounded as 15-17 print them ("rows=2").
CREATE FUNCTION explain_guard(query text, run boolean DEFAULT false)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
  m text[];
BEGIN
  FOR line IN EXECUTE format('EXPLAIN (COSTS OFF%s) %s',
      CASE WHEN run THEN ', ANALYZE, TIMING OFF, SUMMARY OFF, BUFFERS OFF' ELSE '' END, query) LOOP
    CONTINUE WHEN line ~ '^\s*(Index Searches|Disabled|Storage|Heap Fetches|Sort Method):';
    -- 18 prints actual rows per loop with two decimals; 15-17 round them
    -- as printf's %.0f does, half to even, which round(float8) also does
    LOOP
      m := regexp_match(line, 'rows=(\d+\.\d+)');
      EXIT WHEN m IS NULL;
      line := regexp_replace(line, 'rows=\d+\.\d+', 'rows=' || round(m[1]::float8)::bigint);
    END LOOP;
    RETURN NEXT line;
  END LOOP;
END $$;
-- path_vs_plain(query): runs query, which returns one value, through the
-- planner path and again with bloomguard.transparent off; returns the
-- answer, whether the two agree, and what the plan's BloomGuard nodes did
-- with it: "answered/checked" keys (EXPLAIN ANALYZE's Answered by Filter
-- and Key Checks, summed over the nodes), or '-' if the plan has none.
-- The query runs three times (the EXPLAIN ANALYZE is the third).
CREATE FUNCTION path_vs_plain(query text, OUT answer text, OUT same boolean, OUT node text)
LANGUAGE plpgsql AS $$
DECLARE
  plain text;
  plan jsonb;
  saved text := current_setting('bloomguard.transparent');
BEGIN
  EXECUTE query INTO answer;
  PERFORM set_config('bloomguard.transparent', 'off', true);
  EXECUTE query INTO plain;
  PERFORM set_config('bloomguard.transparent', saved, true);
  same := answer IS NOT DISTINCT FROM plain;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || query INTO plan;
  SELECT CASE WHEN count(*) = 0 THEN '-'
              ELSE format('%s/%s', sum((g->>'Answered by Filter')::int), sum((g->>'Key Checks')::int)) END
    INTO node
    FROM jsonb_path_query(plan, 'strict $.** ? (@."Custom Plan Provider" == "BloomGuard")') g;
END $$;
