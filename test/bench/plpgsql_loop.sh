# The planner path inside one backend (issue 20), sourced by
# test/bench/run.sh, which provides the cluster and the helpers (sq, rec,
# med, rfx, row, bad, say, calc, f0, f2, ge) and the parameters (ROUNDS).
#
# A PL/pgSQL loop of primary-key SELECTs, where no client round trip hides
# what the node costs per execution:
#
#   SELECT * INTO r FROM acc WHERE id = (i*3+off)
#
# for i = 1 .. BENCH_PLOOP_CALLS, on acc(id bigint PRIMARY KEY, v int)
# holding BENCH_PLOOP_ROWS keys 3, 6, 9, ..., guarded at twice that
# capacity and 1%: off = 0 looks up present keys, off = 1 absent ones.
# Each statement is an execution of the function's cached plan (PL/pgSQL
# switches to the generic plan after five executions), so what is timed is
# executor start-up, the scan and executor end per statement, with the path
# on (bloomguard.transparent, the default) and off (the session's plans
# made without it).  Every measurement runs in a session of its own, path
# on and off one right after the other with the order alternating by
# round, and is the backend's CPU time (/proc/self/schedstat), which other
# processes on a shared machine disturb less than the wall time.
#
# Parameters (environment):
#   BENCH_PLOOP_ROWS   keys in acc                    (1500000; smoke 20000)
#   BENCH_PLOOP_CALLS  lookups per measurement        (150000; smoke 2000)

# Create acc and the loop function.
bench_plpgsql_loop_setup() {
	sq >/dev/null <<EOF
CREATE TABLE acc (id bigint PRIMARY KEY, v int NOT NULL);
INSERT INTO acc SELECT 3 * g, g FROM generate_series(1, $PLOOP_ROWS) g;
VACUUM (ANALYZE) acc;
SELECT bloomguard_attach('acc', 2 * $PLOOP_ROWS, 0.01);
CREATE FUNCTION lk(n int, off int) RETURNS int LANGUAGE plpgsql AS \$\$
DECLARE
    c int := 0;
    r acc;
BEGIN
    FOR i IN 1 .. n LOOP
        SELECT * INTO r FROM acc WHERE id = (i * 3 + off);
        IF FOUND THEN
            c := c + 1;
        END IF;
    END LOOP;
    RETURN c;
END \$\$;
EOF
}

# One measurement: path on|off, off 0|1; prints "found cpu_ms wall_ms"
# (the numbers psql prints: the warm-up's count, the CPU time before, the
# count, the CPU time after).
bench_plpgsql_loop_one() {
	local cpu='SELECT split_part(pg_read_file($$/proc/self/schedstat$$), $$ $$, 1)'
	sq -c "SET bloomguard.transparent = $1" -c "SELECT lk(10, $2)" -c "$cpu" \
		-c '\timing on' -c "SELECT lk($PLOOP_CALLS, $2)" -c '\timing off' -c "$cpu" |
		awk '/^Time: / {w = $2; next} /^[0-9]+$/ {v[n++] = $1}
			END {printf "%s %.3f %s\n", v[2], (v[3] - v[1]) / 1e6, w}'
}

bench_plpgsql_loop_measure() {
	local r off side found cpu wall want v
	PLOOP_ROWS=${BENCH_PLOOP_ROWS:-$([ "$SMOKE" = 1 ] && echo 20000 || echo 1500000)}
	PLOOP_CALLS=${BENCH_PLOOP_CALLS:-$([ "$SMOKE" = 1 ] && echo 2000 || echo 150000)}
	for v in PLOOP_ROWS PLOOP_CALLS; do
		[[ ${!v} =~ ^[0-9]+$ ]] && [ "${!v}" -ge 1 ] || { bad "BENCH_$v must be a whole number >= 1"; return; }
	done
	[ "$PLOOP_CALLS" -le "$PLOOP_ROWS" ] || { bad "BENCH_PLOOP_CALLS must not exceed BENCH_PLOOP_ROWS"; return; }
	say "PL/pgSQL loop: $PLOOP_CALLS SELECTs by primary key on $PLOOP_ROWS rows, path on vs off"
	bench_plpgsql_loop_setup
	for r in $(seq 1 "$ROUNDS"); do
		for off in 0 1; do
			for side in $(order2 "$r" off on); do
				read -r found cpu wall <<<"$(bench_plpgsql_loop_one "$side" "$off")"
				want=$([ "$off" = 0 ] && echo "$PLOOP_CALLS" || echo 0)
				[ "$found" = "$want" ] || bad "PL/pgSQL loop off=$off path $side: found $found of $PLOOP_CALLS keys, expected $want"
				rec plpgsql "off$off" "$side" "$r" "$cpu" ms
				rec plpgsql "off$off.wall" "$side" "$r" "$wall" ms
			done
		done
	done
	sq -c "DROP FUNCTION lk(int, int)" -c "DROP TABLE acc" >/dev/null
}

bench_plpgsql_loop_report() {
	local off name goal x
	for off in 0 1; do
		if [ "$off" = 0 ]; then name="present keys (off = 0)" goal=0.97; else name="absent keys (off = 1)" goal=1.3; fi
		x=$(rmed plpgsql "off$off" off "off$off" on)
		row "planner path, PL/pgSQL loop of $PLOOP_CALLS SELECT * FROM acc WHERE id = i*3+off on $PLOOP_ROWS rows, $name: backend CPU time, path off vs on (ratio = off / on time)" \
			"$(f0 "$(med plpgsql "off$off" off)") ms" "$(f0 "$(med plpgsql "off$off" on)") ms" \
			"$(rfx plpgsql "off$off" off "off$off" on)" "≥ ${goal}×" "$(ge "$x" "$goal")"
		row "the same, wall time" \
			"$(f0 "$(med plpgsql "off$off.wall" off)") ms" "$(f0 "$(med plpgsql "off$off.wall" on)") ms" \
			"$(rfx plpgsql "off$off.wall" off "off$off.wall" on)" "" ""
	done
}
