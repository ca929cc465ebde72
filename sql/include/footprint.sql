-- footprint(table): what a guard leaves behind on a table: its registry
-- row, the table's triggers and the shared memory slot (a failed or
-- rolled-back attach must leave all three as they were)
CREATE FUNCTION footprint(r regclass,
                          OUT registered bigint, OUT triggers bigint, OUT slots bigint)
LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM bloomguard_guards WHERE relation = r),
           (SELECT count(*) FROM pg_trigger WHERE tgrelid = r),
           (SELECT count(*) FROM bloomguard_guard_stats() WHERE relid = r)
$$;
