#!/usr/bin/env bash
# benchmarks/redis_cpu.sh: the Redis server's CPU per call of each limiter's
# Lua script (TestRedisScriptCPU in redis_cpu_test.go).
#
#   bash benchmarks/redis_cpu.sh              # 100,000 calls per run, 3 rounds
#   N=200000 ROUNDS=5 PARTS=1 bash benchmarks/redis_cpu.sh
#   CALLGRIND=1 bash benchmarks/redis_cpu.sh  # instructions per call, 20,000 calls per row
#
# It starts its own redis-server on a free loopback port (no persistence),
# loads every script (SCRIPT LOAD) and, in each round, runs every script back
# to back with `redis-benchmark -n N -c 64 -P 16 -r 10000 EVALSHA <sha> ...`
# (the key holds __rand_int__, so 10,000 keys, fresh and existing), after
# FLUSHALL and CONFIG RESETSTAT, reading usec_per_call of INFO commandstats
# and the main thread's CPU time of INFO cpu. Rows: a script that only
# returns 1, with no KEYS and ARGV and with those of ratewarden's GCRA call
# (what any Lua limiter pays before doing anything), an INCR + PEXPIRE script
# (the cheapest shared counter), the minimal exact script (TIME, GET, SET PX,
# nothing else: the floor), redis_rate's GCRA script (read from its module
# source, not copied here), and ratewarden's six scripts with the very KEYS
# and ARGV its store sends for a limit of 100/s. PARTS=1 adds scripts that do
# one part of the work each. The table gives each row's best round, the
# range of the rounds and the best's ratio to the minimal exact script.
# CALLGRIND=1 runs redis-server under valgrind's callgrind instead and counts
# the instructions it executes per call (one round): on a machine shared with
# other work, timings move by 2x from one minute to the next, instruction
# counts by well under 1%.
set -euo pipefail
cd "$(dirname "$0")"
n=${N:-100000}
if [ -n "${CALLGRIND:-}" ]; then n=${N:-20000}; fi
RW_REDIS_CPU=1 RW_REDIS_CPU_N=$n RW_REDIS_CPU_ROUNDS=${ROUNDS:-3} RW_REDIS_CPU_PARTS=${PARTS:-} \
	RW_REDIS_CPU_CALLGRIND=${CALLGRIND:-} exec go test -timeout 60m -run '^TestRedisScriptCPU$' -count=1 -v .
