#!/usr/bin/env bash
# benchmarks/onekey_runs.sh: BenchmarkMemoryOneKey in separate processes.
#
#   bash benchmarks/onekey_runs.sh            # 5 processes, -benchtime 1s
#   RUNS=7 BENCHTIME=2s bash benchmarks/onekey_runs.sh
#
# A hot-key row is bimodal from one process to the next on a small VM (the
# same binary runs fast or slow as a whole), so this builds the test binary
# once and runs every row of BenchmarkMemoryOneKey (admit and deny, at 1 and
# 2 goroutines: ratewarden's GCRA and token bucket, sethvargo/go-limiter,
# x/time/rate, Echo's memory store, the floor) in each of RUNS processes. It
# prints per row the median and range of ns/op, then, per group (admit or
# deny, 1 or 2 goroutines) and ratewarden row, the processes in which that
# row was faster than every peer of its group. Run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")"
runs=${RUNS:-5}
benchtime=${BENCHTIME:-1s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go test -c -o "$work/benchmarks.test" .
for run in $(seq "$runs"); do
	"$work/benchmarks.test" -test.run '^$' -test.bench 'MemoryOneKey$' \
		-test.benchtime "$benchtime" -test.benchmem |
		awk -v run="$run" '$1 ~ /^BenchmarkMemoryOneKey\// {
			name = $1
			sub(/^BenchmarkMemoryOneKey\//, "", name)
			sub(/-[0-9]+$/, "", name)
			print run, name, $3
		}' >>"$work/rows"
done

echo "BenchmarkMemoryOneKey, $runs processes, -benchtime $benchtime"
sort -k2,2 -k3,3g "$work/rows" | awk '
	{ n[$2]++; v[$2, n[$2]] = $3; if (!($2 in seen)) { seen[$2] = 1; order[++rows] = $2 } }
	END {
		printf "%-40s %10s %21s\n", "row (mode/goroutines/row)", "median", "range"
		for (i = 1; i <= rows; i++) {
			r = order[i]; c = n[r]
			med = (c % 2) ? v[r, (c + 1) / 2] : (v[r, c / 2] + v[r, c / 2 + 1]) / 2
			printf "%-40s %10.1f %10.1f-%-10.1f\n", r, med, v[r, 1], v[r, c]
		}
	}'
# Per process and group (mode/g=N): the fastest peer, and whether each
# ratewarden row beat it.
awk '
	{
		split($2, p, "/"); group = p[1] "/" p[2]; row = p[3]
		ns[$1, group, row] = $3
		if (!((group, row) in seen)) { seen[group, row] = 1; rowsOf[group] = rowsOf[group] " " row }
		if (!(group in gseen)) { gseen[group] = 1; groups[++ng] = group }
		if ($1 > last) last = $1
	}
	END {
		print ""
		printf "%-40s %s\n", "group/ratewarden row", "processes in which it beat every peer"
		for (gi = 1; gi <= ng; gi++) {
			group = groups[gi]; nr = split(rowsOf[group], rs, " ")
			for (i = 1; i <= nr; i++) {
				r = rs[i]
				if (r !~ /^ratewarden-/) continue
				wins = 0
				for (pr = 1; pr <= last; pr++) {
					best = -1
					for (j = 1; j <= nr; j++) {
						q = rs[j]
						if (q !~ /^(ratewarden|floor)-/ && (best < 0 || ns[pr, group, q] < best)) best = ns[pr, group, q]
					}
					if (ns[pr, group, r] < best) wins++
				}
				printf "%-40s %d of %d\n", group "/" r, wins, last
			}
		}
	}' "$work/rows"
