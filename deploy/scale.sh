#!/usr/bin/env bash
# scale.sh: calls through HAProxy to several `triage-demo proxy` processes,
# on 127.0.0.1 with free ports: a grpcio server (tests/grpc/peer.py), N
# proxies in front of it, HAProxy in the foreground with deploy/haproxy.cfg
# (its bind port and server lines replaced), and the grpcio load generator
# (peer.py spread: K connections at once, M calls each, every call checked
# for exactly the kept messages).
#
#   deploy/scale.sh PATH/TO/triage-demo [--proxies N] [--connections K]
#                   [--calls M] [--workers W] [--check]
#
# Prints each proxy's calls and messages (from its --json tally) and the
# total rate. --check (make test-scale): exit 1 unless every call got
# exactly the kept messages and every proxy served calls. Every process
# started here runs under `timeout` and is killed on exit.
set -u
me=deploy/scale.sh
demo=${1:?usage: $me PATH/TO/triage-demo [--proxies N] [--connections K] [--calls M] [--workers W] [--check]}
shift
proxies=3 conns=8 calls=2 workers=1 check=0
while [ $# -gt 0 ]; do
    case $1 in
    --proxies) proxies=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --calls) calls=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "$me: unknown option '$1'" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
peer=$here/../tests/grpc/peer.py
PY=/usr/bin/python3
command -v haproxy >/dev/null || { echo "$me: needs haproxy (scripts/deps.sh installs it)" >&2; exit 2; }
$PY -c 'import grpc' 2>/dev/null || { echo "$me: needs python3-grpcio for $PY" >&2; exit 2; }

. "$here/../tests/grpc/procs.sh"
fail() { echo "$me: $*" >&2; exit 1; }

# A free loopback port: bound by the kernel, then released (HAProxy binds
# it at once; a race with another program is possible but unlikely).
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

"$demo" gen --count 60 --seed 7 >"$tmp/frames" || exit 2
"$demo" judge <"$tmp/frames" >"$tmp/verdicts" || exit 2

timeout -k 2 300 $PY "$peer" server --port-file "$tmp/server.port" --frames "$tmp/frames" \
    >"$tmp/server.log" 2>&1 &
pids+=($!)
wait_for "$tmp/server.port" . || fail "the server did not start"
sport=$(cat "$tmp/server.port")

servers=
for i in $(seq 1 "$proxies"); do
    timeout -k 2 300 "$demo" proxy --listen 127.0.0.1:0 --to "127.0.0.1:$sport" --json \
        --workers "$workers" >"$tmp/p$i.out" 2>"$tmp/p$i.err" &
    pids+=($!)
    wait_for "$tmp/p$i.out" '^listening ' || fail "proxy $i did not start: $(cat "$tmp/p$i.err")"
    servers+="    server proxy$i $(sed -n 's/^listening //p' "$tmp/p$i.out") proto h2"$'\n'
done

# deploy/haproxy.cfg with a free port and these proxies as its servers
hport=$(free_port)
awk -v port="$hport" -v servers="$servers" '
    /^    bind / { sub(/127\.0\.0\.1:[0-9]+/, "127.0.0.1:" port) }
    /^    server / { next }
    { print }
    /^    # servers/ { printf "%s", servers }' "$here/haproxy.cfg" >"$tmp/haproxy.cfg"
haproxy -c -q -f "$tmp/haproxy.cfg" || fail "haproxy rejects the generated config"
timeout -k 2 300 haproxy -db -f "$tmp/haproxy.cfg" >"$tmp/haproxy.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 500); do
    (exec 3<>"/dev/tcp/127.0.0.1/$hport") 2>/dev/null && break
    kill -0 "${pids[-1]}" 2>/dev/null || fail "haproxy did not start: $(tail -3 "$tmp/haproxy.log")"
    sleep 0.02
done

echo "scale: $proxies proxies ($workers worker(s) each) behind HAProxy 127.0.0.1:$hport; $conns connections x $calls calls x 2 (stream, collect) from grpcio"
t0=$(date +%s.%N)
timeout -k 2 120 $PY "$peer" spread --target "127.0.0.1:$hport" --frames "$tmp/frames" \
    --verdicts "$tmp/verdicts" --label "through haproxy" --connections "$conns" \
    --calls "$calls" >"$tmp/client.out" 2>"$tmp/client.err"
crc=$?
t1=$(date +%s.%N)
grep -E '^(ok|FAIL) ' "$tmp/client.out"
[ $crc -eq 0 ] || { tail -5 "$tmp/client.err"; }

# SIGTERM each proxy (the child of its timeout wrapper) for its tally
for p in "${pids[@]:1:$proxies}"; do
    kill -TERM "$(pgrep -P "$p" | head -1)" 2>/dev/null
done
prc=0
for p in "${pids[@]:1:$proxies}"; do wait "$p" || prc=$?; done
if [ $prc -ne 0 ]; then
    echo "FAIL a proxy exited with status $prc on SIGTERM"
    crc=1
fi
$PY - "$tmp" "$proxies" "$t0" "$t1" "$check" "$crc" <<'PYEOF'
import json, sys
tmp, n, t0, t1, check, crc = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "1", int(sys.argv[6])
rows, bad = [], crc != 0
for i in range(1, n + 1):
    lines = [l for l in open("%s/p%d.out" % (tmp, i)) if not l.startswith("listening ")]
    t = json.loads(lines[0]) if lines else None
    if t is None:
        print("FAIL proxy %d printed no tally" % i)
        bad = True
        continue
    rows.append(t)
    print("  proxy %d: %4d calls, %6d messages seen, %6d kept, %d connection(s) from HAProxy"
          % (i, t["calls"], t["messages"], t["kept"], t["connections"]))
calls = sum(t["calls"] for t in rows)
msgs = sum(t["messages"] for t in rows)
secs = t1 - t0
print("  total: %d calls, %d messages judged in %.2f s: %.0f calls/s, %.0f messages/s"
      " (the grpcio client is the bottleneck here, not the proxies)" % (calls, msgs, secs, calls / secs, msgs / secs))
if check:
    idle = [i + 1 for i, t in enumerate(rows) if t["calls"] == 0]
    print(("ok   " if not idle else "FAIL ") + "every proxy served calls" + (": idle %r" % idle if idle else ""))
    bad = bad or bool(idle)
    # deploy/haproxy.cfg gives each call a connection of its own to a proxy
    # (max-reuse 0: HAProxy 2.6 may fail every call of a shared connection)
    shared = [(i + 1, t["calls"], t["connections"]) for i, t in enumerate(rows)
              if t["connections"] < t["calls"]]
    print(("ok   " if not shared else "FAIL ") + "each call had its own connection from HAProxy"
          + (" (proxy, calls, connections): %r" % shared if shared else ""))
    bad = bad or bool(shared)
    # HAProxy's connections are HTTP/2 from start to end: none ends by an error
    erred = [(i + 1, t["connections_failed"]) for i, t in enumerate(rows) if t["connections_failed"]]
    print(("ok   " if not erred else "FAIL ") + "no proxy ended a connection by an error"
          + (" (proxy, connections): %r" % erred if erred else ""))
    for i, _ in erred:
        for line in open("%s/p%d.err" % (tmp, i)).readlines()[:5]:
            print("    proxy %d: %s" % (i, line.rstrip()))
    bad = bad or bool(erred)
sys.exit(1 if bad else 0)
PYEOF
