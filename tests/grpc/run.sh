#!/usr/bin/env bash
# run.sh: `triage-demo proxy` between real gRPC peers: grpcio
# clients and a grpcio server (tests/grpc/peer.py, Debian's python3-grpcio
# under /usr/bin/python3), on 127.0.0.1 with ephemeral ports.
#
#   tests/grpc/run.sh PATH/TO/triage-demo PATH/TO/rawclient
#
# rawclient (tests/grpc/rawclient.c) sends what no gRPC library sends:
# malformed messages, beside a good call on the same connection.
#
# The messages are `triage-demo gen`'s Issues; what the peers must receive is
# computed with `triage-demo judge` on the same frames, so each check asserts
# the exact kept messages, in order. Every process started here runs under
# `timeout` and is killed on exit; the whole test takes about 30 s.
set -u

me=tests/grpc/run.sh
demo=${1:?usage: $me PATH/TO/triage-demo PATH/TO/rawclient}
raw=${2:?usage: $me PATH/TO/triage-demo PATH/TO/rawclient}
[ -x "$demo" ] || { echo "$me: $demo is not executable" >&2; exit 2; }
[ -x "$raw" ] || { echo "$me: $raw is not executable" >&2; exit 2; }
PY=/usr/bin/python3
here=$(cd "$(dirname "$0")" && pwd)
peer=$here/peer.py
if ! $PY -c 'import grpc' 2>/dev/null; then
    echo "$me: needs python3-grpcio for $PY (scripts/deps.sh installs it)" >&2
    exit 2
fi

. "$here/procs.sh"
. "$here/../support/split_optic.sh"

log=$tmp/log
: >"$log"
say() { echo "$*" | tee -a "$log"; }
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then say "ok   $what"; else say "FAIL $what"; fi
}

# peer_run WHAT SECONDS ARGS...: a peer client; its check lines join the log,
# and a client that fails without saying which check (a crash, a timeout)
# is a failure too.
peer_run() {
    local what=$1 secs=$2
    shift 2
    timeout -k 2 "$secs" $PY "$peer" "$@" >"$tmp/peer.out" 2>"$tmp/peer.err"
    local rc=$?
    grep -E '^(ok|FAIL) ' "$tmp/peer.out" | tee -a "$log"
    if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$tmp/peer.out"; then
        say "FAIL $what: the client exited with status $rc"
        tail -5 "$tmp/peer.err" | tee -a "$log"
    fi
}

# start_server NAME [ARGS...]: a peer server; sets port_NAME.
start_server() {
    timeout -k 2 120 $PY "$peer" server --port-file "$tmp/$1.port" --frames "$tmp/frames" \
        "${@:2}" >"$tmp/$1.log" 2>&1 &
    pids+=($!)
    wait_for "$tmp/$1.port" . || { say "FAIL server $1 did not start"; cat "$tmp/$1.log"; return 1; }
    eval "port_$1=$(cat "$tmp/$1.port")"
}

# start_proxy NAME UPSTREAM_PORT ARGS...: a proxy; sets addr_NAME, pid_NAME.
start_proxy() {
    local name=$1 up=$2
    shift 2
    timeout -k 2 120 "$demo" proxy --listen 127.0.0.1:0 --to "127.0.0.1:$up" --json \
        "${rules[@]+"${rules[@]}"}" "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    local pid=$!
    pids+=($pid)
    eval "wpid_$name=$pid"
    wait_for "$tmp/$name.out" '^listening ' || { say "FAIL proxy $name did not start"; cat "$tmp/$name.err"; return 1; }
    eval "addr_$name=$(sed -n 's/^listening //p' "$tmp/$name.out")"
    # the proxy itself, for signals (timeout would forward a TERM twice, and
    # kill the proxy 2 s later)
    eval "pid_$name=$(pgrep -P "$pid" | head -1)"
}

# stop_proxy NAME: SIGTERM, then its exit status (waiting at most 15 s).
stop_proxy() {
    local pid wpid
    eval "pid=\$pid_$1 wpid=\$wpid_$1"
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 150); do
        kill -0 "$wpid" 2>/dev/null || break
        sleep 0.1
    done
    wait "$wpid"
}

# tally_key NAME KEY: KEY of the stopped proxy NAME's tally; nothing when
# it has no tally.
tally_key() {
    $PY -c 'import json, sys; print(json.loads([l for l in open(sys.argv[1]) if not l.startswith("listening ")][0])[sys.argv[2]])' \
        "$tmp/$1.out" "$2" 2>/dev/null
}

# The tally (the JSON line) of a stopped proxy: checks it is one object with
# consistent counts; prints "messages kept calls copied peak".
tally() {
    $PY - "$tmp/$1.out" <<'EOF'
import json, sys
lines = [l for l in open(sys.argv[1]) if not l.startswith("listening ")]
assert len(lines) == 1, "one JSON line expected, got %d" % len(lines)
t = json.loads(lines[0])
seen = sum(k["seen"] for k in t["kinds"].values())
kept = sum(k["kept"] for k in t["kinds"].values())
assert seen == t["messages"] and kept == t["kept"], "kinds do not add up"
for key in ("calls", "bytes_copied", "allocations", "h2_allocations", "peak_held_bytes"):
    assert key in t, key
print(t["messages"], t["kept"], t["calls"], t["bytes_copied"], t["peak_held_bytes"],
      t["messages_copied"], t["messages_moved"], t["messages_placed"])
EOF
}

"$demo" gen --count 60 --seed 7 >"$tmp/frames" || exit 2
# The rules every proxy here judges by, and judge with them what the peers
# must receive: the default rules; with a schema other than the demo's
# (TR_GRPC_OPTICS, its optics: mk/grpc.mk), whose default rules are the
# demo's and so keep every message, `has(O)` for the first optic O that some
# messages of the pool have and others lack (the checks need both).
rules=()
# shellcheck disable=SC2086
o=$(split_optic "$demo" "$tmp/frames" 60 ${TR_GRPC_OPTICS:-})
[ -n "$o" ] && rules=(--where "has($o)")
if [ -n "${TR_GRPC_OPTICS+set}" ] && [ ${#rules[@]} -eq 0 ]; then
    echo "test-grpc: left out: no optic of this schema is read from some of the pool's messages and not others"
    exit 0
fi
"$demo" judge "${rules[@]+"${rules[@]}"}" <"$tmp/frames" >"$tmp/verdicts" || exit 2
args=(--frames "$tmp/frames" --verdicts "$tmp/verdicts")
say "== pool: 60 messages, $(grep -c keep "$tmp/verdicts") kept by ${rules[1]:-the default rules}"

# ---- options
check "proxy --help" "$demo" proxy --help >/dev/null
"$demo" proxy --listen 127.0.0.1:0 >/dev/null 2>&1
check "proxy without --to: exit 2" test $? -eq 2
"$demo" proxy --listen 127.0.0.1:0 --to nowhere >/dev/null 2>&1
check "proxy --to without a port: exit 2" test $? -eq 2
"$demo" proxy --listen 127.0.0.1:0 --to 127.0.0.1:1 --direction sideways >/dev/null 2>&1
check "proxy --direction sideways: exit 2" test $? -eq 2
"$demo" proxy --listen 127.0.0.1:0 --to 127.0.0.1:1 --where 'kind ==' >/dev/null 2>&1
check "proxy --where with bad rules: exit 2" test $? -eq 2
"$demo" proxy --listen 127.0.0.1:0 --to 127.0.0.1:1 --idle-timeout soon >/dev/null 2>&1
check "proxy --idle-timeout soon: exit 2" test $? -eq 2
"$demo" proxy --listen 127.0.0.1:0 --to 127.0.0.1:1 --workers 2 --max-connections 1 >/dev/null 2>&1
check "proxy --max-connections fewer than --workers: exit 2" test $? -eq 2

# ---- the main run: every kind of call, both directions judged (optics)
start_server main || exit 1
start_proxy main "$port_main" || exit 1
say "== grpcio client -> proxy $addr_main -> grpcio server :$port_main"
peer_run "main client" 90 client --target "$addr_main" "${args[@]}"
stop_proxy main
check "SIGTERM: the proxy exits 0" test $? -eq 0
if t=$(tally main 2>"$tmp/tally.err"); then
    read -r msgs kept calls copied peak mcopied moved placed <<<"$t"
    say "   tally: $msgs messages judged, $kept kept, $calls calls, $copied bytes copied ($mcopied messages, $moved of them moved out of a stalled call's way; $placed split messages placed without a copy), peak $peak bytes held"
    check "tally: one JSON object, the kinds add up" true
    check "tally: at least 30 calls" test "$calls" -ge 30
    check "tally: memory held stayed under 64 MiB" test "$peak" -lt 67108864
else
    say "FAIL tally: $(cat "$tmp/tally.err" | tail -1)"
fi

# ---- one direction judged; other readers; busy polling; gzip
start_server other || exit 1
start_proxy resp "$port_other" --direction responses --reader decode || exit 1
peer_run responses/decode 30 quick --target "$addr_resp" "${args[@]}" \
    --label responses/decode --requests all --responses kept
start_proxy req "$port_other" --direction requests --verify schema --busy-poll 100 || exit 1
peer_run requests/schema 30 quick --target "$addr_req" "${args[@]}" \
    --label requests/schema --requests kept --responses all
start_proxy relay "$port_other" --reader none || exit 1
peer_run relay 30 quick --target "$addr_relay" "${args[@]}" \
    --label "relay (none)" --requests all --responses all
start_proxy gz "$port_other" --grpc-encoding gzip || exit 1
peer_run gzip 30 quick --target "$addr_gz" "${args[@]}" \
    --label "gzip requests" --requests kept --responses kept --compression gzip
# compressed both ways, each way its own encoding: a server that deflates
# its answers, a client that gzips its requests, a proxy reading what each
# call names (the default); one reading identity refuses them
start_server zipped --compression deflate || exit 1
start_proxy zip "$port_zipped" || exit 1
peer_run "gzip requests, deflate responses" 30 quick --target "$addr_zip" "${args[@]}" \
    --label "gzip requests, deflate responses" --requests kept --responses kept \
    --compression gzip
start_proxy plain "$port_zipped" --grpc-encoding identity || exit 1
peer_run "identity only" 30 quick --target "$addr_plain" "${args[@]}" \
    --label "proxy reading identity, deflate responses" --requests kept --responses kept \
    --refused
# ---- malformed messages from a raw HTTP/2 client: each ends its own call
# with INTERNAL, and the good call beside them on the same connection goes on
start_proxy raw "$port_other" || exit 1
kept_hex=$($PY - "$tmp/frames" "$tmp/verdicts" <<'EOF'
import struct, sys
data, verdicts = open(sys.argv[1], "rb").read(), open(sys.argv[2]).read().split("\n")
i = k = 0
while i < len(data):
    n = struct.unpack(">I", data[i + 1:i + 5])[0]
    if verdicts[k].endswith("keep"):
        print(data[i:i + 5 + n].hex())
        break
    i, k = i + 5 + n, k + 1
EOF
)
U=/triage.Test/Unary
timeout -k 2 20 "$raw" "$addr_raw" $U 0000000064$(printf '7b%.0s' $(seq 1 10)) \
    $U 01000000027b7d $U 02000000027b7d $U "$kept_hex" >"$tmp/rawclient.out" 2>&1
check "raw client: every call ended" test $? -eq 0
line() { sed -n "s/^call $1: //p" "$tmp/rawclient.out"; }
check "a message cut short by END_STREAM: INTERNAL ($(line 1))" \
    grep -q '^call 1: status 13 message "proxy: the client.s stream ended inside a message"' "$tmp/rawclient.out"
check "a compressed message without grpc-encoding: INTERNAL ($(line 2))" \
    grep -q '^call 2: status 13 message "proxy: compressed message without a grpc-encoding"' "$tmp/rawclient.out"
check "a flag byte of 2: INTERNAL ($(line 3))" \
    grep -q '^call 3: status 13 message "proxy: message flag byte is 2' "$tmp/rawclient.out"
check "the good call on the same connection: status 0, its message back ($(line 4))" \
    grep -q "^call 4: status 0 message \"\" data $(( ${#kept_hex} / 2 )) rst -" "$tmp/rawclient.out"

# ---- clients that are not HTTP/2 or stop halfway cost only their connection
peer_run garbage 40 garbage --target "$addr_raw" "${args[@]}"

for p in resp req relay gz zip plain raw; do
    stop_proxy $p
    check "$p: exits 0 on SIGTERM" test $? -eq 0
done
n=$(tally_key zip inflated)
check "zip: it inflated the messages it judged (${n:-none})" test "${n:-0}" -gt 0
n=$(tally_key plain refused)
check "plain: the compressed messages it does not read are counted refused (${n:-none})" \
    test "${n:-0}" -gt 0
# the connections the proxy gave up on are on its stderr, each with its
# peer and the reason, and counted in its tally
sed -n 's/^triage-demo proxy: /   log: /p' "$tmp/raw.err" | tee -a "$log"
n=$(grep -c '^triage-demo proxy: \(worker [0-9]*: \)\?a client connection from 127\.0\.0\.1:[0-9]*[,:] ' "$tmp/raw.err")
check "raw: 4 connections given up on, each logged with its peer and why ($n)" test "$n" -eq 4
n=$(tally_key raw connections_failed)
check "raw: the tally counts them (${n:-none})" test "${n:-0}" -eq 4

# ---- --idle-timeout: a client connection with no call for that long is
# closed (GOAWAY); the client's channel connects again for its next call
start_proxy idle "$port_other" --idle-timeout 1 || exit 1
peer_run idle 30 idle --target "$addr_idle" "${args[@]}" --wait 2.5
stop_proxy idle
check "idle: exits 0 on SIGTERM" test $? -eq 0
n=$(tally_key idle idle_closed)
check "idle: the tally counts the connection closed (${n:-none})" test "${n:-0}" -ge 1

# ---- a server that never answers the connect: UNAVAILABLE after --connect-timeout
timeout -k 2 60 $PY "$peer" blackhole --port-file "$tmp/hole.port" >"$tmp/hole.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 250); do [ -s "$tmp/hole.port" ] && break; sleep 0.02; done
start_proxy hole "$(cat "$tmp/hole.port")" --connect-timeout 1000 || exit 1
peer_run "connect timeout" 30 unavailable --target "$addr_hole"
stop_proxy hole
check "hole: exits 0 on SIGTERM" test $? -eq 0

# ---- --workers: event loops on threads, one listening socket each
# (SO_REUSEPORT); 24 connections at once spread over them (the kernel
# hashes each connection to one: all 24 on one of 2 has odds 2^-23)
"$demo" proxy --listen 127.0.0.1:0 --to 127.0.0.1:1 --workers 0 >/dev/null 2>&1
check "proxy --workers 0: exit 2" test $? -eq 2
start_proxy workers "$port_other" --workers 2 || exit 1
peer_run workers 60 spread --target "$addr_workers" "${args[@]}" --label "workers 2" \
    --connections 24
stop_proxy workers
check "workers: exits 0 on SIGTERM" test $? -eq 0
if w=$($PY - "$tmp/workers.out" <<'EOF' 2>&1
import json, sys
t = json.loads([l for l in open(sys.argv[1]) if not l.startswith("listening ")][0])
w = t["per_worker"]
assert t["workers"] == 2 and len(w) == 2, "2 workers expected: %r" % t["workers"]
for key in ("calls", "connections", "messages", "kept"):
    assert sum(x[key] for x in w) == t[key], key + ": the workers' sum is not the total"
assert t["calls"] == 48, "48 calls expected, %d" % t["calls"]
assert t["connections_failed"] == 0, "the proxy ended %d connections" % t["connections_failed"]
assert all(x["calls"] > 0 and x["upstream_connections"] >= 1 for x in w), \
    "a worker served no call: %r" % w
print(" ".join("%d/%d" % (x["calls"], x["connections"]) for x in w))
EOF
); then
    say "   per worker (calls/connections): $w"
    check "workers: each served calls on its own connection to the server; sums are the totals" true
else
    say "FAIL workers: tally: $(echo "$w" | tail -1)"
    head -20 "$tmp/workers.err" | tee -a "$log"
fi

# ---- SIGTERM with calls in flight (two workers, whatever the cores)
start_proxy drain "$port_other" --grace 3000 --workers 2 || exit 1  # the signal reaches every worker
peer_run drain 30 drain --target "$addr_drain" "${args[@]}" --proxy-pid "$pid_drain"
stop_proxy drain
check "drain: the proxy exits 0 after the grace period" test $? -eq 0

passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^FAIL' "$log")
echo "grpc: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
