#!/usr/bin/env bash
# scripts/test.sh: the whole ratewarden test suite, as the README gives it and
# as .ci/run runs it. Works on a fresh Debian machine: it installs redis-server
# (and curl) through apt-get and staticcheck through `go install` when missing.
#
#   bash scripts/test.sh
#
# Steps: formatting, go vet, staticcheck and `go test -race -shuffle=on` on
# every module of go.work (the Redis tests start their own redis-server
# processes); the example servers and the operator's tool (cmd/ratewarden)
# built, each server started once per configuration and probed (200 then 429,
# dry run, /metrics, JWT tiers, count only failures), then in rules mode with
# examples/rules.yaml (login counting failures only, the API's tiers by key,
# the blocked key, /healthz and a 404 without rate-limit headers, and an edit
# of the file taking effect without a restart); `ratewarden rules validate`
# on examples/rules.yaml (exit 0) and on a broken copy (exit 1); the stdhttp
# server with its rules in a redis-server this script starts: pushed with the
# tool, probed, a new version pushed and seen to take effect, and a start with
# that Redis unreachable on its -rules-fallback file; a fleet of two stdhttp
# servers on one Redis (ratewarden key reset unblocking a client both had
# denied within 1 s, a pushed and a file edit raising 5/h to 10/h giving a
# client that had spent 3 exactly 7 more, a blackholed Redis answered at once
# once the breaker opened); a Redis with requirepass reached by -store, -rules
# and the tool with the password from the environment, a wrong one refused
# without being printed; the demo (with its rules
# reload step) and the simulation run once; the benchmarks run once
# (-benchtime=1x) so they cannot rot; last, the install check builds a local
# module proxy of the tree and a tiny app per adapter, Redis binding, metrics
# module and the rules module from it, and installs the tool with go install,
# as a user outside the repository would. It stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# Tests that need Redis fail (never skip) when CI=true. This script installs
# Redis, so it runs them as CI does unless told otherwise (CI=false).
export CI="${CI:-true}"

STAGING=$(mktemp -d)
SERVER_PIDS=()
STEP_NAMES=()
STEP_SECS=()
CURRENT=""
START_ALL=$SECONDS

cleanup() {
	local status=$? pid
	for pid in "${SERVER_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		kill -CONT "$pid" 2>/dev/null || true # one a probe stopped (a blackholed Redis) ends only once continued
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$STAGING"
	if [ "$status" -ne 0 ]; then
		echo >&2
		echo "test.sh: FAILED at step \"$CURRENT\" (exit status $status; see the output above)" >&2
	fi
}
trap cleanup EXIT

# step NAME CMD...: run CMD under a section header and record its time.
step() {
	local name=$1
	shift
	CURRENT=$name
	echo
	echo "==> $name"
	local t0=$SECONDS
	"$@"
	local dt=$((SECONDS - t0))
	STEP_NAMES+=("$name")
	STEP_SECS+=("$dt")
	echo "    ok ($dt s)"
}

die() {
	echo "test.sh: $*" >&2
	exit 1
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		die "need root (or sudo) to run: $*"
	fi
}

# ---------------------------------------------------------------- tools

install_tools() {
	command -v go >/dev/null || die "go is not on PATH: install Go 1.26 or newer (https://go.dev/doc/install)"
	go version
	local pkgs=()
	if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
		pkgs+=(redis-server)
	fi
	command -v curl >/dev/null || pkgs+=(curl)
	if [ "${#pkgs[@]}" -gt 0 ]; then
		echo "installing with apt-get: ${pkgs[*]}"
		as_root apt-get update -q
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}"
	fi
	redis-server --version
	export PATH="$(go env GOPATH)/bin:$PATH"
	if ! command -v staticcheck >/dev/null; then
		echo "installing staticcheck"
		go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	fi
	staticcheck -version
}

# ---------------------------------------------------------------- modules

MODULES=()
list_modules() {
	local dir
	while IFS= read -r dir; do
		MODULES+=("$dir")
	done < <(go list -m -f '{{.Dir}}')
	[ "${#MODULES[@]}" -gt 0 ] || die "go list -m found no modules in go.work"
	for dir in "${MODULES[@]}"; do
		echo "    $(rel "$dir")"
	done
}

check_gofmt() {
	local bad
	bad=$(gofmt -l .)
	if [ -n "$bad" ]; then
		echo "these files need gofmt -w:" >&2
		echo "$bad" >&2
		return 1
	fi
}

# rel DIR: DIR relative to the repository root ("." for the root).
rel() {
	local r=${1#"$ROOT"}
	r=${r#/}
	echo "${r:-.}"
}

# in_module DIR CMD...: run CMD inside module DIR.
in_module() {
	local dir=$1
	shift
	(cd "$dir" && "$@")
}

# ---------------------------------------------------------------- examples

build_examples() {
	mkdir -p "$STAGING/bin"
	go build -o "$STAGING/bin/" ./examples/...
	go build -o "$STAGING/bin/ratewarden" ./cmd/ratewarden
	ls "$STAGING/bin"
}

# start_server NAME ARGS...: start example NAME on a free port with ARGS; set
# SERVER_PID, SERVER_LOG, SERVER_DESC (for messages) and ADDR (host:port)
# once it listens.
start_server() {
	local name=$1 i
	shift
	SERVER_DESC="$name $*"
	SERVER_LOG="$STAGING/$name.${#SERVER_PIDS[@]}.log"
	"$STAGING/bin/$name" -addr 127.0.0.1:0 "$@" >"$SERVER_LOG" 2>&1 &
	SERVER_PID=$!
	SERVER_PIDS+=("$SERVER_PID")
	ADDR=""
	# The servers print "listening on http://ADDR" once they accept connections.
	for i in $(seq 1 100); do
		ADDR=$(sed -n 's|.*listening on http://\([^ ]*\).*|\1|p' "$SERVER_LOG" | head -n 1)
		[ -n "$ADDR" ] && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || { cat "$SERVER_LOG" >&2; die "$name $* exited before listening"; }
		sleep 0.1
	done
	cat "$SERVER_LOG" >&2
	die "$name $* did not start listening within 10 s"
}

stop_server() {
	kill "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
}

# expect WANT PATH CURL_ARGS...: one request to the server started last; its
# status must be WANT. Its headers (without CRs) are left in $STAGING/headers
# and its body in $STAGING/body.
expect() {
	local want=$1 path=$2 code
	shift 2
	code=$(curl -s -D "$STAGING/headers.raw" -o "$STAGING/body" -w '%{http_code}' --max-time 5 "$@" "http://$ADDR$path")
	tr -d '\r' <"$STAGING/headers.raw" >"$STAGING/headers"
	[ "$code" = "$want" ] || { cat "$SERVER_LOG" >&2; die "$SERVER_DESC: $path${*:+ (curl $*)} answered $code, want $want"; }
}

# expect_in FILE REGEX: the last response's headers or body (FILE) hold a
# line matching REGEX (extended, case-insensitive).
expect_in() {
	grep -qiE "$2" "$STAGING/$1" || { cat "$STAGING/$1" >&2; die "$SERVER_DESC: no $1 line matching $2"; }
}

# expect_unlimited: the last response has no rate-limit header: no policy
# decided on it.
expect_unlimited() {
	if grep -qiE '^(x-ratelimit-[a-z]+|ratelimit|ratelimit-policy|retry-after):' "$STAGING/headers"; then
		cat "$STAGING/headers" >&2
		die "$SERVER_DESC: rate-limit headers on a response no policy should decide"
	fi
}

# wait_for_policy REGEX PATH CURL_ARGS...: ask PATH of the server started
# last until its RateLimit-Policy matches REGEX (a reload took effect), at
# most 100 times, 0.1 s apart; each answer must be 200.
wait_for_policy() {
	local want=$1 i
	shift
	for i in $(seq 1 100); do
		expect 200 "$@"
		grep -qiE "^ratelimit-policy: $want\$" "$STAGING/headers" && return 0
		sleep 0.1
	done
	cat "$STAGING/headers" >&2
	cat "$SERVER_LOG" >&2
	die "$SERVER_DESC: RateLimit-Policy never became $want"
}

# edited_rules SRC DST: DST is a copy of the rules file SRC at version 2 with
# the API's free tier at 200/s instead of 100/s, written as an editor saves
# (a new file renamed over the old one).
edited_rules() {
	sed -e 's/^version: 1$/version: 2/' -e 's|free: \[100/s\]|free: [200/s]|' "$1" >"$2.new"
	grep -q '^version: 2$' "$2.new" && grep -q 'free: \[200/s\]' "$2.new" || die "could not edit $1"
	mv "$2.new" "$2"
}

# probe NAME: start example NAME once per configuration of its flags, each
# with a limit of 2 per minute unless tiers give it:
#   plain:               GET / 200, 200, 429; GET /healthz 200
#   -dry-run:            GET / 200, 200, 200, the third with RateLimit r=0
#   -metrics:            GET / 200, 200, 429; GET /metrics 200 (never limited)
#                        with ratewarden_decisions_total
#   -tier-claim -tier:   free=1/m (and tokens without the claim) 200, 429;
#                        paid=3/m 200, 200, 200, 429; RateLimit-Policy names
#                        the tier; no token 401
#   -count-only-failures: GET / 200 five times (refunded); POST /login with a
#                        wrong password 401, 401, 429; then the right one 429
probe() {
	local name=$1 i want
	start_server "$name" -limit 2/m
	for want in 200 200 429; do expect "$want" /; done
	expect 200 /healthz
	stop_server

	start_server "$name" -limit 2/m -dry-run
	for i in 1 2 3; do expect 200 /; done
	expect_in headers '^ratelimit: "default";r=0;t=[0-9]+$'
	expect_in headers '^x-ratelimit-remaining: 0$'
	stop_server

	start_server "$name" -limit 2/m -metrics
	for want in 200 200 429; do expect "$want" /; done
	for i in 1 2 3; do expect 200 /metrics; done
	expect_in body '^ratewarden_decisions_total\{outcome="denied",policy="default"\} 1$'
	expect_in body '^ratewarden_memory_store_keys 1$'
	stop_server

	probe_tiers "$name"

	start_server "$name" -limit 2/m -count-only-failures
	for i in 1 2 3 4 5; do expect 200 /; done
	for want in 401 401 429; do expect "$want" /login -d password=wrong; done
	expect 429 /login -d password=letmein
	stop_server

	probe_rules "$name"
	echo "    $name: plain, -dry-run, -metrics, -tier-claim/-tier, -count-only-failures and -rules answered as they should"
}

# probe_beyond NAME: example NAME's flags beyond request rates, seen from
# outside:
#   -concurrency 1: a second request while GET /slow runs is 429 with
#                   Retry-After: 1 and X-Concurrency-Limit, and 200 once it ended
#   -block-for 1h:  the third request of 2/m and the next are refused for the
#                   hour (Retry-After 3600, the later of the block and the limit)
#   -settle-header: GET /tokens?n=4 of 10/m leaves 6 (reserved 1, settled at 4);
#                   a bad n is 400
#   2/month in a zone: RateLimit-Policy without w, t the seconds to the next
#                   1st at midnight in Europe/Berlin (within 2 s)
probe_beyond() {
	local name=$1 i slow next want code t
	start_server "$name" -limit 100/s -concurrency 1
	curl -s -o /dev/null --max-time 10 "http://$ADDR/slow?ms=3000" &
	slow=$!
	for i in $(seq 1 30); do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$ADDR/slow?ms=0")
		[ "$code" = 429 ] && break
		sleep 0.1
	done
	expect 429 "/slow?ms=0"
	expect_in headers '^x-concurrency-limit: "default";n=1$'
	expect_in headers '^retry-after: 1$'
	wait "$slow"
	expect 200 "/slow?ms=0"
	stop_server

	start_server "$name" -limit 2/m -block-for 1h
	for want in 200 200 429 429; do expect "$want" /; done
	expect_in headers '^retry-after: 3600$'
	stop_server

	start_server "$name" -limit 10/m -settle-header X-Cost
	expect 200 "/tokens?n=4"
	expect_in headers '^x-cost: 4$'
	expect_in headers '^x-ratelimit-remaining: 6$'
	expect 400 "/tokens?n=NaN"
	stop_server

	start_server "$name" -algorithm fixed-window -limit 2/month -tz Europe/Berlin
	expect 200 /
	expect_in headers '^ratelimit-policy: "default";q=2$'
	next=$(TZ=Europe/Berlin date -d "$(TZ=Europe/Berlin date +%Y-%m-01) +1 month" +%s)
	want=$((next - $(date +%s)))
	t=$(sed -n 's/^ratelimit: "default";r=1;t=\([0-9]*\)$/\1/Ip' "$STAGING/headers")
	[ -n "$t" ] && [ $((t - want)) -le 2 ] && [ $((want - t)) -le 2 ] ||
		die "$SERVER_DESC: RateLimit t=$t, want the $want s to the next month in Europe/Berlin"
	stop_server
	echo "    $name: -concurrency, -block-for, -settle-header and a calendar -limit answered as they should"
}

# probe_rules NAME: example NAME with -rules, a copy of examples/rules.yaml:
#   POST /login: a right password 200 twice, each given back before its headers go out (remaining 5);
#                a wrong one 401 five times, then 429 named login, and so is
#                a right one
#   /api/items:  by X-API-Key, RateLimit-Policy "api/free"; with X-Plan: paid
#                "api/paid"; the blocked key 429 with q=0
#   /healthz 200 and /nope 404, neither with a rate-limit header
#   the file edited (version 2, free 200/s): the server's answers change,
#   without a restart
probe_rules() {
	local name=$1 rules="$STAGING/rules.$1.yaml" i
	cp examples/rules.yaml "$rules"
	start_server "$name" -rules "$rules"
	for i in 1 2; do
		expect 200 /login -X POST -H 'X-Password: right'
		expect_in headers '^ratelimit-policy: "login";q=5;w=60$'
		expect_in headers '^x-ratelimit-remaining: 5$'
	done
	for i in 1 2 3 4 5; do expect 401 /login -X POST -H 'X-Password: wrong'; done
	expect 429 /login -X POST -H 'X-Password: wrong'
	expect_in headers '^ratelimit: "login";r=0;'
	expect 429 /login -X POST -H 'X-Password: right'

	expect 200 /api/items -H 'X-API-Key: k-free'
	expect_in headers '^ratelimit-policy: "api/free";q=100;w=1$'
	expect 200 /api/items/7 -H 'X-API-Key: k-paid' -H 'X-Plan: paid'
	expect_in headers '^ratelimit-policy: "api/paid";q=1000;w=1$'
	expect_in body '^item 7$'
	expect 429 /api/items -H 'X-API-Key: leaked-key-0001'
	expect_in headers '^ratelimit-policy: "api/override";q=0;'
	expect_in headers '^ratelimit: "api/override";r=0;'

	expect 200 /healthz
	expect_unlimited
	expect 404 /nope
	expect_unlimited

	edited_rules examples/rules.yaml "$rules"
	wait_for_policy '"api/free";q=200;w=1' /api/items -H 'X-API-Key: k-edit'
	grep -q 'msg="ratewarden: rules loaded" source=.* version=2' "$SERVER_LOG" || { cat "$SERVER_LOG" >&2; die "$SERVER_DESC: the reload is not in its log"; }
	stop_server
}

# validate_rules: the operator's tool accepts the example rules (exit 0) and
# refuses a broken copy (exit 1) with the problem, line and column, on stderr.
validate_rules() {
	local broken="$STAGING/broken.yaml" status=0
	"$STAGING/bin/ratewarden" rules validate examples/rules.yaml
	"$STAGING/bin/ratewarden" rules validate examples/rules-jwt.yaml
	"$STAGING/bin/ratewarden" rules validate examples/rules-grpc.yaml
	sed 's|limits: \[5/m\]|limits: [5/x]|' examples/rules.yaml >"$broken"
	"$STAGING/bin/ratewarden" rules validate "$broken" >"$STAGING/validate.out" 2>"$STAGING/validate.err" || status=$?
	cat "$STAGING/validate.err"
	[ "$status" -eq 1 ] || die "rules validate of a broken file: exit status $status, want 1"
	[ ! -s "$STAGING/validate.out" ] || die "rules validate of a broken file wrote to stdout"
	grep -qE "^$broken:[0-9]+:[0-9]+: policies\[0\]\.limits\[0\]: .*invalid limit" "$STAGING/validate.err" ||
		die "rules validate of a broken file: no problem with its position on stderr"
}

# start_redis [PASSWORD]: a redis-server of this script's own on a free
# loopback port, in REDIS_PORT, protected by PASSWORD (requirepass) when
# given; cleanup stops it.
start_redis() {
	local port i j auth=()
	[ $# -eq 0 ] || auth=(--requirepass "$1")
	for i in $(seq 1 20); do
		port=$((20000 + RANDOM % 30000))
		redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$STAGING" "${auth[@]}" >"$STAGING/redis.log" 2>&1 &
		REDIS_PID=$!
		SERVER_PIDS+=("$REDIS_PID")
		for j in $(seq 1 50); do
			# Our server, not another one on that port.
			if REDISCLI_AUTH="${1:-}" redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$REDIS_PID"; then
				REDIS_PORT=$port
				return 0
			fi
			kill -0 "$REDIS_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$REDIS_PID" 2>/dev/null || true
		wait "$REDIS_PID" 2>/dev/null || true
	done
	cat "$STAGING/redis.log" >&2
	die "could not start redis-server on a free port"
}

# probe_rules_redis: the stdhttp server with its rules in Redis: pushed with
# the tool, probed, a new version pushed and taking effect at once; then a
# server whose Redis is unreachable starts on its -rules-fallback file and
# says so.
probe_rules_redis() {
	local url v2="$STAGING/rules.v2.yaml" dead
	start_redis
	url="redis://127.0.0.1:$REDIS_PORT/0"
	"$STAGING/bin/ratewarden" rules push examples/rules.yaml --redis "$url"
	start_server stdhttp -rules "$url" -rules-poll 1s
	expect 200 /api/items -H 'X-API-Key: k-redis'
	expect_in headers '^ratelimit-policy: "api/free";q=100;w=1$'
	expect 429 /api/items -H 'X-API-Key: leaked-key-0001'
	edited_rules examples/rules.yaml "$v2"
	"$STAGING/bin/ratewarden" rules push "$v2" --redis "$url"
	wait_for_policy '"api/free";q=200;w=1' /api/items -H 'X-API-Key: k-redis-2'
	stop_server

	# A port nothing listens on: redis-server was there and is gone.
	dead=$REDIS_PORT
	kill "$REDIS_PID"
	wait "$REDIS_PID" 2>/dev/null || true
	start_server stdhttp -rules "redis://127.0.0.1:$dead/0" -rules-fallback examples/rules.yaml
	expect 200 /api/items -H 'X-API-Key: k-fallback'
	expect_in headers '^ratelimit-policy: "api/free";q=100;w=1$'
	grep -q 'loading the fallback file' "$SERVER_LOG" || { cat "$SERVER_LOG" >&2; die "$SERVER_DESC: no word of the fallback in its log"; }
	stop_server
	echo "    stdhttp: rules pushed to Redis, a push taking effect, and the fallback while Redis is down answered as they should"
}

# The rules of the fleet probes: a quota of 5 an hour per X-API-Key on /api,
# and logins 5 a minute per IP counting failures only.
fleet_rules() {
	cat <<RULES
schema: 1
version: $1
policies:
  - name: quota
    match: {prefixes: [/api]}
    key: {header: X-API-Key}
    limits: [$2]
  - name: login
    match: {methods: [POST], paths: [/login]}
    limits: [5/m]
    count: failures
RULES
}

# expect_at ADDR WANT PATH CURL_ARGS...: expect, against the server at ADDR.
expect_at() {
	local saved=$ADDR
	ADDR=$1
	shift
	expect "$@"
	ADDR=$saved
}

# spend_until_denied ADDR_A ADDR_B KEY: ask /api/items with X-API-Key KEY,
# from A and B in turn, until one answers 429; COUNT is the number admitted.
spend_until_denied() {
	local code i
	COUNT=0
	for i in $(seq 1 50); do
		[ $((i % 2)) -eq 1 ] && ADDR_NOW=$1 || ADDR_NOW=$2
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "X-API-Key: $3" "http://$ADDR_NOW/api/items")
		case $code in
		200) COUNT=$((COUNT + 1)) ;;
		429) return 0 ;;
		*) die "fleet: /api/items for $3 answered $code" ;;
		esac
	done
	die "fleet: $3 was never denied"
}

# probe_fleet: two stdhttp servers on one Redis, their rules pushed with the
# tool, as a fleet runs:
#   a client both servers denied (5 failed logins, then 429 from each, cached)
#   is admitted by both within 1 s of `ratewarden key reset login 127.0.0.1`;
#   a push that only raises the quota from 5/h to 10/h gives a client that had
#   spent 3 exactly 7 more, across both servers; so does a file edit, on one;
#   a server whose Redis accepts connections and never answers (a stopped
#   redis-server), failing open, answers every request at once (well under
#   the store's 100 ms timeout) once its breaker has opened.
probe_fleet() {
	local url a b i ok_a ok_b file="$STAGING/fleet.yaml" t slow=0
	start_redis
	url="redis://127.0.0.1:$REDIS_PORT/0"
	fleet_rules 1 5/h >"$file"
	"$STAGING/bin/ratewarden" rules push "$file" --redis "$url" >/dev/null
	start_server stdhttp -rules "$url" -store "$url" -rules-poll 1s
	a=$ADDR
	start_server stdhttp -rules "$url" -store "$url" -rules-poll 1s
	b=$ADDR

	for i in 1 2 3 4 5; do expect_at "$a" 401 /login -X POST -H 'X-Password: wrong'; done
	expect_at "$a" 429 /login -X POST -H 'X-Password: right'
	expect_at "$b" 429 /login -X POST -H 'X-Password: right'
	expect_at "$a" 429 /login -X POST -H 'X-Password: right'
	expect_at "$b" 429 /login -X POST -H 'X-Password: right'
	"$STAGING/bin/ratewarden" key reset login 127.0.0.1 --redis "$url"
	ok_a=""
	ok_b=""
	for i in $(seq 1 10); do
		[ -z "$ok_a" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST -H 'X-Password: right' "http://$a/login")" = 200 ] && ok_a=1
		[ -z "$ok_b" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST -H 'X-Password: right' "http://$b/login")" = 200 ] && ok_b=1
		[ -n "$ok_a" ] && [ -n "$ok_b" ] && break
		sleep 0.1
	done
	[ -n "$ok_a" ] && [ -n "$ok_b" ] || die "fleet: after key reset, a server still denied the client (a: ${ok_a:-no}, b: ${ok_b:-no})"

	for i in 1 2 3; do expect_at "$a" 200 /api/items -H 'X-API-Key: k-edit'; done
	fleet_rules 2 10/h >"$file"
	"$STAGING/bin/ratewarden" rules push "$file" --redis "$url" >"$STAGING/push.out"
	grep -q 'quota: re-expressed (5/h -> 10/h)' "$STAGING/push.out" || { cat "$STAGING/push.out" >&2; die "fleet: the push did not say the quota's counters are kept"; }
	ADDR=$a wait_for_policy '"quota";q=10;w=3600' /api/items -H 'X-API-Key: k-wait-a'
	ADDR=$b wait_for_policy '"quota";q=10;w=3600' /api/items -H 'X-API-Key: k-wait-b'
	spend_until_denied "$a" "$b" k-edit
	[ "$COUNT" -eq 7 ] || die "fleet: after raising 5/h to 10/h, a client that had spent 3 got $COUNT more, want 7"
	stop_server
	SERVER_PID=${SERVER_PIDS[${#SERVER_PIDS[@]}-2]}
	stop_server

	fleet_rules 1 5/h >"$file"
	start_server stdhttp -rules "$file"
	for i in 1 2 3; do expect 200 /api/items -H 'X-API-Key: k-file'; done
	fleet_rules 2 10/h >"$file.new"
	mv "$file.new" "$file"
	wait_for_policy '"quota";q=10;w=3600' /api/items -H 'X-API-Key: k-wait'
	spend_until_denied "$ADDR" "$ADDR" k-file
	[ "$COUNT" -eq 7 ] || die "fleet: after a file edit raising 5/h to 10/h, a client that had spent 3 got $COUNT more, want 7"
	stop_server

	kill -STOP "$REDIS_PID"
	start_server stdhttp -store "$url" -limit 100/m
	for i in 1 2 3 4 5 6; do expect 200 /; done # failing open, each after the timeout, until the breaker opens
	for i in $(seq 1 20); do
		t=$(curl -s -o /dev/null -w '%{time_total}' --max-time 5 "http://$ADDR/")
		awk -v t="$t" 'BEGIN { exit !(t < 0.05) }' || slow=$((slow + 1))
		echo "$t" >>"$STAGING/blackhole.times"
	done
	stop_server
	kill -CONT "$REDIS_PID"
	[ "$slow" -eq 0 ] || { cat "$STAGING/blackhole.times" >&2; die "fleet: $slow of 20 requests on a blackholed Redis took 50 ms or more after the breaker opened"; }
	echo "    fleet: key reset unblocking both servers, a raised limit keeping what was spent (push and file edit), and a blackholed Redis answered at once ($(sort -n "$STAGING/blackhole.times" | tail -n 1) s at most)"
}

# probe_managed: a Redis that requires a password, as a managed one does: the
# stdhttp server takes its URL in -store and -rules with the password from
# $RATEWARDEN_REDIS_PASSWORD (GET / 200, 200, 429; the rules pushed by the
# tool, whose URL and password come from the environment, decide /api); a
# wrong password is a clear error from the tool that never prints it.
probe_managed() {
	local pw=s3cret-pass-9d2f url
	start_redis "$pw"
	url="redis://127.0.0.1:$REDIS_PORT/0"
	RATEWARDEN_REDIS=$url RATEWARDEN_REDIS_PASSWORD=$pw "$STAGING/bin/ratewarden" rules push examples/rules.yaml >/dev/null
	RATEWARDEN_REDIS_PASSWORD=$pw start_server stdhttp -store "$url" -limit 2/m
	for want in 200 200 429; do expect "$want" /; done
	stop_server
	RATEWARDEN_REDIS_PASSWORD=$pw start_server stdhttp -store "$url" -rules "$url"
	expect 200 /api/items -H 'X-API-Key: k-managed'
	expect_in headers '^ratelimit-policy: "api/free";q=100;w=1$'
	stop_server
	local status=0
	"$STAGING/bin/ratewarden" rules show --redis "redis://:wrong-$pw@127.0.0.1:$REDIS_PORT/0" >"$STAGING/managed.out" 2>"$STAGING/managed.err" || status=$?
	[ "$status" -eq 1 ] || { cat "$STAGING/managed.err" >&2; die "ratewarden with a wrong password: exit status $status, want 1"; }
	if grep -q -- "$pw" "$STAGING/managed.out" "$STAGING/managed.err"; then die "ratewarden printed the password"; fi
	grep -qi 'password' "$STAGING/managed.err" || { cat "$STAGING/managed.err" >&2; die "ratewarden with a wrong password: no clear error"; }
	echo "    managed Redis: -store and -rules with the password from the environment, the tool likewise, and a wrong password refused without printing it"
}

# probe_tiers NAME: example NAME with -key jwt and tiers free=1/m, paid=3/m
# picked by the claim "plan", driven with tokens from examples/internal/mintjwt.
probe_tiers() {
	local name=$1 secret=0123456789abcdef0123456789abcdef free paid none gold token want
	free=$("$STAGING/bin/mintjwt" -secret "$secret" -sub alice -claim plan=free)
	paid=$("$STAGING/bin/mintjwt" -secret "$secret" -sub bob -claim plan=paid)
	none=$("$STAGING/bin/mintjwt" -secret "$secret" -sub carol)
	gold=$("$STAGING/bin/mintjwt" -secret "$secret" -sub dave -claim plan=gold)
	start_server "$name" -key jwt -jwt-secret "$secret" -tier-claim plan -tier free=1/m -tier paid=3/m
	for want in 200 200 200 429; do expect "$want" / -H "Authorization: Bearer $paid"; done
	expect_in headers '^ratelimit-policy: "paid";q=3;w=60$'
	for token in "$free" "$none" "$gold"; do
		expect 200 / -H "Authorization: Bearer $token"
		expect_in headers '^ratelimit-policy: "free";q=1;w=60$'
		expect 429 / -H "Authorization: Bearer $token"
		expect_in headers '^ratelimit: "free";r=0;'
	done
	expect 401 /
	stop_server
}

# start_grpc_server ARGS...: start examples/grpc on a free port with ARGS;
# set SERVER_PID, SERVER_LOG, SERVER_DESC, ADDR (host:port) and, with
# -metrics-addr, METRICS_URL, once it serves. It prints "listening on
# grpc://ADDR" (and ", metrics on http://ADDR/metrics") then.
start_grpc_server() {
	local i
	SERVER_DESC="grpc $*"
	SERVER_LOG="$STAGING/grpc.${#SERVER_PIDS[@]}.log"
	"$STAGING/bin/grpc" -addr 127.0.0.1:0 "$@" >"$SERVER_LOG" 2>&1 &
	SERVER_PID=$!
	SERVER_PIDS+=("$SERVER_PID")
	for i in $(seq 1 100); do
		ADDR=$(sed -n 's|.*listening on grpc://\([^ ,]*\).*|\1|p' "$SERVER_LOG" | head -n 1)
		METRICS_URL=$(sed -n 's|.*, metrics on \(http://[^ ]*\)$|\1|p' "$SERVER_LOG" | head -n 1)
		[ -n "$ADDR" ] && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || { cat "$SERVER_LOG" >&2; die "$SERVER_DESC exited before listening"; }
		sleep 0.1
	done
	cat "$SERVER_LOG" >&2
	die "$SERVER_DESC did not start listening within 10 s"
}

# probe_grpc: examples/grpc, driven by examples/internal/grpcprobe (curl
# speaks no gRPC), which checks how each call ends and leaves what it saw in
# $STAGING/grpc.out:
#   -limit 2/m -metrics-addr: OK, OK (a stream), then ResourceExhausted with
#                RetryInfo, QuotaFailure and retry-after; health SERVING
#                every time, without rate-limit metadata; the metrics count
#                the denial
#   -rules examples/rules-grpc.yaml (a copy): UnaryCall's successes given
#                back, its failures NotFound five times then ResourceExhausted
#                by "unary"; the blocked key refused with q=0; no key
#                Unauthenticated; health SERVING; the file edited (version 2,
#                the service at 200/s) taking effect without a restart
probe_grpc() {
	local rules="$STAGING/rules-grpc.yaml" i out="$STAGING/grpc.out"
	gprobe() { "$STAGING/bin/grpcprobe" -addr "$ADDR" "$@" >"$out" || { cat "$out" "$SERVER_LOG" >&2; die "$SERVER_DESC: grpcprobe $*"; }; }
	start_grpc_server -limit 2/m -metrics-addr 127.0.0.1:0
	gprobe empty=OK stream=OK unary=ResourceExhausted health=SERVING health=SERVING
	grep -qx '  ratelimit-policy: "default";q=2;w=60' "$out" || { cat "$out" >&2; die "$SERVER_DESC: no ratelimit-policy"; }
	grep -qx '  QuotaFailure: subject "default" quota_id "default" quota_value 2' "$out" || { cat "$out" >&2; die "$SERVER_DESC: no QuotaFailure"; }
	gprobe health=SERVING
	if grep -qE '^  (ratelimit|retry-after|x-ratelimit)' "$out"; then cat "$out" >&2; die "$SERVER_DESC: rate-limit metadata on a health check"; fi
	curl -sf --max-time 5 "$METRICS_URL" -o "$STAGING/body" || die "$SERVER_DESC: GET $METRICS_URL failed"
	expect_in body '^ratewarden_decisions_total\{outcome="denied",policy="default"\} 1$'
	stop_server

	cp examples/rules-grpc.yaml "$rules"
	start_grpc_server -rules "$rules"
	gprobe -md x-api-key=k-probe unary=OK unary=OK
	grep -qx '  ratelimit-policy: "unary";q=5;w=60, "service";q=100;w=1' "$out" || { cat "$out" >&2; die "$SERVER_DESC: UnaryCall's policies"; }
	grep -qx '  x-ratelimit-remaining: 4' "$out" || { cat "$out" >&2; die "$SERVER_DESC: a success was not given back"; }
	gprobe -md x-api-key=k-probe unary/NotFound=NotFound unary/NotFound=NotFound unary/NotFound=NotFound \
		unary/NotFound=NotFound unary/NotFound=NotFound unary/NotFound=ResourceExhausted unary=ResourceExhausted
	grep -q '^  QuotaFailure: subject "unary"' "$out" || { cat "$out" >&2; die "$SERVER_DESC: the denial does not name unary"; }
	gprobe -md x-api-key=leaked-key-0001 empty=ResourceExhausted
	grep -q '^  ratelimit-policy: "service/override";q=0;' "$out" || { cat "$out" >&2; die "$SERVER_DESC: the blocked key"; }
	gprobe empty=Unauthenticated health=SERVING health=SERVING health=SERVING
	sed -e 's/^version: 1$/version: 2/' -e 's|limits: \[100/s\]|limits: [200/s]|' examples/rules-grpc.yaml >"$rules.new"
	grep -q '^version: 2$' "$rules.new" && grep -q 'limits: \[200/s\]' "$rules.new" || die "could not edit examples/rules-grpc.yaml"
	mv "$rules.new" "$rules"
	for i in $(seq 1 100); do
		gprobe -md "x-api-key=k-edit-$i" empty=OK
		grep -qx '  ratelimit-policy: "service";q=200;w=1' "$out" && break
		[ "$i" -lt 100 ] || { cat "$out" "$SERVER_LOG" >&2; die "$SERVER_DESC: the edit never took effect"; }
		sleep 0.1
	done
	grep -q 'msg="ratewarden: rules loaded" source=.* version=2' "$SERVER_LOG" || { cat "$SERVER_LOG" >&2; die "$SERVER_DESC: the reload is not in its log"; }
	stop_server
	echo "    grpc: -limit with -metrics-addr, and -rules with an edit, answered as they should"
}

# install_check: a user outside the repository installs each module at its
# release version from a local proxy of the working tree (RELEASING.md).
install_check() {
	in_module "$ROOT/scripts/installcheck" go run . -root "$ROOT"
}

# ---------------------------------------------------------------- run

step "tools: go, redis-server, curl, staticcheck" install_tools
step "modules of go.work" list_modules
step "gofmt" check_gofmt
for mod in "${MODULES[@]}"; do
	name=$(rel "$mod")
	if [ -z "$(find "$mod" -name '*.go' -print -quit)" ]; then
		echo
		echo "==> $name: no Go files yet, nothing to check"
		continue
	fi
	step "go vet ($name)" in_module "$mod" go vet ./...
	step "staticcheck ($name)" in_module "$mod" staticcheck ./...
	step "go test -race -shuffle=on ($name)" in_module "$mod" go test -race -shuffle=on ./...
	# The race detector's sync.Pool drops items on purpose, so the tests
	# that count allocations per decision build only without it: run them
	# here, once, without -race.
	if grep -rlq --include='*_test.go' '^//go:build !race' "$mod"; then
		step "allocation tests, without -race ($name)" in_module "$mod" go test -count=1 -run 'Alloc' ./...
	fi
done
step "build examples" build_examples
for ex in stdhttp gin echo echo5 fiber fiber3; do
	step "probe examples/$ex" probe "$ex"
done
step "probe examples/stdhttp beyond request rates (in-flight, penalty box, settle, calendar)" probe_beyond stdhttp
step "probe examples/fiber beyond request rates (in-flight, penalty box, settle, calendar)" probe_beyond fiber
step "probe examples/grpc (with examples/internal/grpcprobe)" probe_grpc
step "ratewarden rules validate (examples/rules.yaml, and a broken copy)" validate_rules
step "probe examples/stdhttp with -rules redis:// (rules pushed with ratewarden)" probe_rules_redis
step "probe a fleet: two stdhttp servers on one Redis, key reset, a raised limit, a blackholed Redis" probe_fleet
step "probe a Redis that requires a password (-store, -rules, the tool)" probe_managed
step "run examples/demo" "$STAGING/bin/demo"
step "run examples/simulate" "$STAGING/bin/simulate" -svg "$STAGING/algorithms.svg"
step "benchmarks, once (-benchtime=1x -short)" in_module "$ROOT/benchmarks" go test -short -run '^$' -bench . -benchtime=1x ./...
step "install check: go get and build every module at its release version" install_check

echo
echo "==> timing"
for i in "${!STEP_NAMES[@]}"; do
	printf '%6d s  %s\n' "${STEP_SECS[$i]}" "${STEP_NAMES[$i]}"
done
echo
echo "test.sh: all ${#STEP_NAMES[@]} steps passed in $((SECONDS - START_ALL)) s"
