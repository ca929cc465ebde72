# Partitioned tables (issue 12), sourced by test/bench/run.sh, which
# provides the cluster and the helpers (sq, sq_ms, pgb, rec, med, rmed,
# rfx, row, order2, bad, say, calc, f0, f2, ge) and the parameters (ROWS,
# ROUNDS, CALLS, TXNS, CLIENTS).
#
# Three tables of $ROWS bigint keys (even numbers; the odd ones are the
# absent keys), hash-partitioned into 4, 16 and 64 leaves, each guarded
# with bloomguard_attach() on the partitioned table.
#   - guarded_exists() on the partitioned table, routing the key to its
#     leaf (the default) against asking every leaf's filter
#     (bloomguard.partition_lookup = ask_all), at 4 and 64 leaves, in a
#     server-side loop (µs per call);
#   - on 16 leaves, pgbench -M prepared: the plain lookup on the
#     partitioned table (bloomguard.transparent = off) against the same
#     query through the planner path, and against guarded_exists() on the
#     partitioned table, for absent and present keys.

# pgbench with extra settings for its sessions
pgb_opts() {
	local opts=$1 saved=$PGOPTIONS rc=0 out
	shift
	export PGOPTIONS="$saved $opts"
	out=$(pgb "$@") || rc=$?
	export PGOPTIONS=$saved
	[ "$rc" = 0 ] && echo "$out"
	return "$rc"
}

bench_partitions_measure() {
	local n r kind mode v ms out got want key tps
	say "partitioned tables: $ROWS keys in 4, 16 and 64 hash partitions"
	for n in 4 16 64; do
		sq -c "CREATE TABLE p$n (id bigint NOT NULL) PARTITION BY HASH (id)" >/dev/null
		sq -c "SELECT format('CREATE TABLE p${n}_%s PARTITION OF p$n FOR VALUES WITH (MODULUS $n, REMAINDER %s);', i, i) FROM generate_series(0, $n - 1) i" |
			sq >/dev/null
		sq >/dev/null <<EOF
INSERT INTO p$n SELECT 2 * g FROM generate_series(1, $ROWS) g;
ALTER TABLE p$n ADD PRIMARY KEY (id);
VACUUM (ANALYZE) p$n;
SELECT bloomguard_attach('p$n');
EOF
		got=$(sq -c "SELECT count(*) FILTER (WHERE state = 'ready') || '/' || count(*) FROM bloomguard_health WHERE parent = 'p$n'::regclass")
		[ "$got" = "$n/$n" ] || bad "partitioned p$n: leaves ready $got"
	done

	# answers: routing and ask_all both equal the plain lookup
	for mode in route ask_all; do
		got=$(sq -c "SET bloomguard.partition_lookup = $mode" -c "SET bloomguard.transparent = off" -c "
			SELECT count(*) FROM (SELECT floor(random() * (2 * $ROWS + 4))::bigint AS x FROM generate_series(1, 2000)) s
			 WHERE guarded_exists('p16', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM p16 WHERE id = x)
			    OR guarded_exists('p64', x) IS DISTINCT FROM EXISTS (SELECT 1 FROM p64 WHERE id = x)" | tail -1)
		[ "$got" = 0 ] || bad "partitioned, $mode: guarded_exists differs from EXISTS on $got keys"
	done

	# route vs ask_all, server-side loop
	for r in $(seq 1 "$ROUNDS"); do
		for n in 4 64; do
			for kind in miss hit; do
				key=$(loopkey "$kind")
				want=$([ "$kind" = hit ] && echo "$CALLS" || echo 0)
				for mode in $(order2 "$r" route ask_all); do
					out=$(sq -c "SET bloomguard.partition_lookup = $mode" -c '\timing on' \
						-c "SELECT count(*) FILTER (WHERE guarded_exists('p$n', $key)) FROM generate_series(1, $CALLS) g")
					got=$(printf '%s\n' "$out" | grep -v '^Time' | tail -1)
					ms=$(printf '%s\n' "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
					[ "$got" = "$want" ] || bad "partitioned p$n $kind $mode: found $got of $CALLS keys, expected $want"
					rec ploop "p${n}_$kind" "$mode" "$r" "$(calc "1000 * $ms / $CALLS")" us/call
				done
			done
		done
	done

	# 16 leaves, pgbench: plain vs planner path vs guarded_exists
	for kind in miss hit; do
		{ gen_set "$kind"; echo 'SELECT EXISTS (SELECT 1 FROM p16 WHERE id = :id::bigint);'; } >"$sc/p16_$kind.plain.sql"
		cp "$sc/p16_$kind.plain.sql" "$sc/p16_$kind.planner.sql"
		{ gen_set "$kind"; echo "SELECT guarded_exists('p16', :id::bigint);"; } >"$sc/p16_$kind.guarded.sql"
	done
	if [ "$TXNS" = 0 ]; then
		for f in "$sc"/p16_*.sql; do pgb_opts "-c bloomguard.transparent=on" "$f" 1 >/dev/null || bad "pgbench warm-up $(basename "$f")"; done
	fi
	for r in $(seq 1 "$ROUNDS"); do
		say "partitioned lookups round $r/$ROUNDS"
		for kind in miss hit; do
			case $((r % 3)) in
			1) order="plain planner guarded" ;;
			2) order="planner guarded plain" ;;
			0) order="guarded plain planner" ;;
			esac
			for v in $order; do
				tps=$(pgb_opts "-c bloomguard.transparent=$([ "$v" = planner ] && echo on || echo off)" \
					"$sc/p16_$kind.$v.sql") || { bad "pgbench p16 $kind $v round $r"; continue; }
				rec plookup "p16_$kind" "$v" "$r" "$tps" lookups/s
			done
		done
	done
}

bench_partitions_report() {
	local n kind p g
	for n in 4 64; do
		for kind in miss hit; do
			p=$(med ploop "p${n}_$kind" ask_all) g=$(med ploop "p${n}_$kind" route)
			row "partitioned, $n leaves, $kind: guarded_exists on the parent, ask every leaf vs route to one (µs per call, server-side loop; ratio = ask_all / route time)" \
				"$(f2 "$p") µs" "$(f2 "$g") µs" "$(rfx ploop "p${n}_$kind" ask_all "p${n}_$kind" route)" "" ""
		done
	done
	for kind in miss hit; do
		p=$(med plookup "p16_$kind" plain)
		for v in planner guarded; do
			g=$(med plookup "p16_$kind" "$v")
			row "partitioned, 16 leaves, $kind: plain lookup on the parent vs $([ "$v" = planner ] && echo "the same query through the planner path" || echo "guarded_exists() on the parent")" \
				"$(f0 "$p") lookups/s" "$(f0 "$g") lookups/s" "$(rfx plookup "p16_$kind" "$v" "p16_$kind" plain)" "" ""
		done
	done
}
