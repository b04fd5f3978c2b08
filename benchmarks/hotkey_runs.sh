#!/usr/bin/env bash
# benchmarks/hotkey_runs.sh: BenchmarkMemoryHotKey in separate processes.
#
#   bash benchmarks/hotkey_runs.sh            # 5 processes, -benchtime 1s
#   RUNS=7 BENCHTIME=2s bash benchmarks/hotkey_runs.sh
#
# On a small VM every hot-key row is bimodal from one process to the next
# (the same binary runs fast or slow as a whole), so one process says little:
# this builds the test binary once, runs every row (ratewarden's, the peers',
# the floor) in each of RUNS processes one after another, and prints per row
# the median and range of ns/op and the median's ratio to floor-clock-cas.
# Then, for each ratewarden row, the processes in which it was faster than
# every peer. Every row admits every decision (allowed/op 1, or the benchmark
# fails). Run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")"
runs=${RUNS:-5}
benchtime=${BENCHTIME:-1s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go test -c -o "$work/benchmarks.test" .
for run in $(seq "$runs"); do
	"$work/benchmarks.test" -test.run '^$' -test.bench 'MemoryHotKey$' \
		-test.benchtime "$benchtime" -test.benchmem |
		awk -v run="$run" '$1 ~ /^BenchmarkMemoryHotKey\// {
			name = $1
			sub(/^BenchmarkMemoryHotKey\//, "", name)
			sub(/-[0-9]+$/, "", name)
			print run, name, $3
		}' >>"$work/rows"
done

echo "BenchmarkMemoryHotKey, $runs processes, -benchtime $benchtime"
# Per row: the sorted values, then the median, range and ratio to the floor.
sort -k2,2 -k3,3g "$work/rows" | awk '
	{ n[$2]++; v[$2, n[$2]] = $3; if (!($2 in seen)) { seen[$2] = 1; order[++rows] = $2 } }
	END {
		for (i = 1; i <= rows; i++) {
			r = order[i]; c = n[r]
			med[r] = (c % 2) ? v[r, (c + 1) / 2] : (v[r, c / 2] + v[r, c / 2 + 1]) / 2
		}
		floor = med["floor-clock-cas"]
		printf "%-28s %10s %21s %9s\n", "row", "median", "range", "x floor"
		for (i = 1; i <= rows; i++) {
			r = order[i]
			printf "%-28s %10.1f %10.1f-%-10.1f %8.2fx\n", r, med[r], v[r, 1], v[r, n[r]], floor ? med[r] / floor : 0
		}
	}'
# Per process: the fastest peer, and whether each ratewarden row beat it.
awk '
	{ ns[$1, $2] = $3; if (!($2 in seen)) { seen[$2] = 1; order[++rows] = $2 }; if ($1 > last) last = $1 }
	END {
		for (p = 1; p <= last; p++) {
			best[p] = -1
			for (i = 1; i <= rows; i++) {
				r = order[i]
				if (r !~ /^(ratewarden|floor)-/ && (best[p] < 0 || ns[p, r] < best[p])) best[p] = ns[p, r]
			}
		}
		print ""
		printf "%-28s %s\n", "ratewarden row", "processes in which it beat every peer"
		for (i = 1; i <= rows; i++) {
			r = order[i]
			if (r !~ /^ratewarden-/) continue
			wins = 0
			for (p = 1; p <= last; p++) if (ns[p, r] < best[p]) wins++
			printf "%-28s %d of %d\n", r, wins, last
		}
	}' "$work/rows"
