#!/usr/bin/env bash
# run.sh: end-to-end tests of triage-demo on the loopback interface: the
# readers agree (judge and filter), `run` checks out, the three services by
# hand (counts against judge's verdicts, digests end to end), and the
# faults: an upstream that stops after N bytes for many N, a downstream that
# goes away, a peer that cannot be reached; and --verify, gzip frames (run
# --compress gzip, a mixed stream kept exactly as judge --grpc-encoding gzip
# keeps it); judge and check reading --ndjson.
#
#   usage: tests/e2e/run.sh build/triage-demo
#
# With TR_TEST_STRIDE=K in the environment (test-san) the faults try one cut
# of the upstream in K.
# Prints one line per check and a final "N passed, M failed"; exits 1 when
# any failed. Every process runs under `timeout`, so a hang is a failure.
# The scaffolding (checks, $tmp, services, fake peers) is lib.sh's.
set -u
. "$(dirname "$0")/lib.sh"

T="timeout 30"

# ---- 1. judge: the two readers agree on every message

for layout in late first; do
    "$demo" gen --count 3000 --seed 3 --layout $layout >"$tmp/gen.$layout"
    "$demo" judge --reader optics <"$tmp/gen.$layout" >"$tmp/optics.$layout"
    "$demo" judge --reader decode <"$tmp/gen.$layout" >"$tmp/decode.$layout"
    check "judge: optics and decode agree on 3000 messages ($layout)" \
        cmp -s "$tmp/optics.$layout" "$tmp/decode.$layout"
    check "judge: 3000 verdicts, some kept ($layout)" \
        test "$(wc -l <"$tmp/optics.$layout")" -eq 3000 -a "$(grep -c keep "$tmp/optics.$layout")" -gt 0
done

# ---- 2. run: three readers, the downstream checks, the JSON form

if $T "$demo" run 3000 --json >"$tmp/run.json" 2>"$tmp/run.err"; then
    pass "run 3000 --json exits 0"
else
    fail "run 3000 --json exits 0: $(cat "$tmp/run.err")"
fi
check "run: one line per reader, each ok" \
    test "$(grep -c '"ok":true' "$tmp/run.json")" -eq 3 -a "$(wc -l <"$tmp/run.json")" -eq 3
# The tally's rows, as many as the schema has kinds (plus "none").
kinds() { grep "\"reader\":\"$1\"" "$tmp/run.json" | grep -o '"kinds":{\("[^"]*":{"seen":[0-9]*,"kept":[0-9]*},\{0,1\}\)*}'; }
check "run: optics and decode tally alike" test -n "$(kinds optics)" -a "$(kinds optics)" = "$(kinds decode)"
check "run: the relay forwards all 3000" \
    grep -q '"reader":"none".*"none":{"seen":3000,"kept":3000}.*"received":3000' "$tmp/run.json"
$T "$demo" run 2000 --reader optics >"$tmp/run.txt" 2>/dev/null
check "run: the text report" grep -qE '^optics: 2000 messages, [0-9.]+ MB in [0-9.]+ s:$' "$tmp/run.txt"
check "run: the downstream line" grep -qE '^  downstream received [0-9]+ messages \([0-9]+ kept\); [0-9]+ decode as [A-Za-z_][A-Za-z0-9_]*, and the policy keeps [0-9]+ of them$' "$tmp/run.txt"
# A program killed outright (SIGKILL: nothing of it runs to stop them)
# takes what it started with it (runtime/net.h: net_fork_tied): run its
# services, and triage-bench cut short (its stdout closed under it) its
# gRPC server and proxy, which otherwise waited for ever for a SIGTERM that
# never came
"$demo" run 100000000 >/dev/null 2>&1 &
runpid=$!
kids=
for _ in $(seq 1 200); do
    kids=$(pgrep -P $runpid | tr '\n' ' ')
    [ -n "$kids" ] && break
    sleep 0.01
done
kill -9 $runpid
wait $runpid 2>/dev/null
outlived() { # outlived PID...: those still running 5 s on
    local left=$*
    for _ in $(seq 1 100); do
        left=$(for k in $left; do kill -0 $k 2>/dev/null && echo $k; done)
        [ -z "$left" ] && break
        sleep 0.05
    done
    echo $left
}
left=$(outlived $kids)
check "run killed: its services ($kids) end with it" test -n "$kids" -a -z "$left"
[ -n "$left" ] && kill -9 $left 2>/dev/null
bench=$(dirname "$demo")/triage-bench
if [ -x "$bench" ]; then
    $T "$bench" --quick grpc | head -c 1 >/dev/null
    sleep 0.5
    kids=$(pgrep -f "^$bench --quick grpc" | tr '\n' ' ')
    left=$(outlived $kids)
    check "triage-bench grpc cut short: its server and proxy end with it" test -z "$left"
    [ -n "$left" ] && kill -9 $left 2>/dev/null
fi

# ---- 3. the services by hand: counts against judge, digests end to end

want_kept=$(grep -c keep "$tmp/optics.late")
digest_of=()
for reader in optics decode none; do
    start up upstream --listen 127.0.0.1:0 --count 3000 --seed 3
    up=$last_pid
    only=()
    [ $reader = none ] && only=(--count-only)
    start down downstream --listen 127.0.0.1:0 "${only[@]}"
    down=$last_pid
    ua=$(addr_of "$tmp/up.out") && da=$(addr_of "$tmp/down.out")
    $T "$demo" filter --from "$ua" --to "$da" --reader $reader --json >"$tmp/filter.json" 2>"$tmp/filter.err"
    frc=$?
    wait $up
    wait $down
    drc=$?
    check "filter --reader $reader exits 0, and the downstream too" test $frc -eq 0 -a $drc -eq 0
    fd=$(jget "$tmp/filter.json" digest)
    dd=$(jget "$tmp/down.out" digest)
    check "filter --reader $reader: the downstream's digest is the filter's" test -n "$fd" -a "$fd" = "$dd"
    check "filter --reader $reader: bytes forwarded = bytes received" \
        test "$(jget "$tmp/filter.json" kept_bytes)" = "$(jget "$tmp/down.out" bytes)"
    if [ $reader = none ]; then
        check "relay: the downstream received all 3000" test "$(jget "$tmp/down.out" received)" -eq 3000
        check "relay: it forwarded the stream unchanged (bytes)" \
            test "$(jget "$tmp/down.out" bytes)" -eq "$(stat -c %s "$tmp/gen.late")"
    else
        check "filter --reader $reader: the downstream received judge's $want_kept kept" \
            test "$(jget "$tmp/down.out" received)" -eq "$want_kept"
        check "filter --reader $reader: they all decode, the policy keeps them all" \
            test "$(jget "$tmp/down.out" decoded)" -eq "$want_kept" -a "$(jget "$tmp/down.out" kept_by_policy)" -eq "$want_kept"
        digest_of+=("$fd")
    fi
done
check "optics and decode forward the same frames (digest)" test "${digest_of[0]}" = "${digest_of[1]}"

# The writer thread gives the same result.
start up upstream --listen 127.0.0.1:0 --count 3000 --seed 3
start down downstream --listen 127.0.0.1:0
ua=$(addr_of "$tmp/up.out") && da=$(addr_of "$tmp/down.out")
$T "$demo" filter --from "$ua" --to "$da" --threads 2 --json >"$tmp/filter.json" 2>"$tmp/filter.err"
frc=$?
wait
check "filter --threads 2: same digest, exit 0" test $frc -eq 0 -a "$(jget "$tmp/down.out" digest)" = "${digest_of[0]}"

# ---- 4. faults: the upstream stops after N bytes, for many N

"$demo" gen --count 60 --seed 9 >"$tmp/small"
size=$(stat -c %s "$tmp/small")
bounds=(0)
o=0
for _ in $(seq 1 8); do
    len=$(od -An -tu1 -j $((o + 1)) -N4 "$tmp/small" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
    o=$((o + 5 + len))
    bounds+=($o)
done
cuts=()
for b in "${bounds[@]}"; do
    for d in -1 0 1 4 5 6 700; do
        c=$((b + d))
        [ $c -ge 0 ] && cuts+=($c)
    done
done
RANDOM=7
for _ in $(seq 1 12); do cuts+=($(((RANDOM * 32768 + RANDOM) % size))); done
cuts+=($((size - 1)) $size)
# Under the sanitizers (TR_TEST_STRIDE=K, as make test-san sets it) one cut
# in K, each one its four processes: every Kth from one that depends on the
# stream's size, as the suites pick their positions.
stride=${TR_TEST_STRIDE:-1}
if [ "$stride" -gt 1 ]; then
    picked=()
    for i in "${!cuts[@]}"; do
        [ $(((i + size) % stride)) -eq 0 ] && picked+=("${cuts[$i]}")
    done
    cuts=("${picked[@]}")
fi

cut_fail=0
for n in "${cuts[@]}"; do
    head -c "$n" "$tmp/small" | "$demo" judge --reader optics >"$tmp/cut.judge" 2>/dev/null
    jrc=$?
    want=$(grep -c keep "$tmp/cut.judge")
    start up upstream --listen 127.0.0.1:0 --count 60 --seed 9 --stop-after "$n"
    start down downstream --listen 127.0.0.1:0
    ua=$(addr_of "$tmp/up.out") && da=$(addr_of "$tmp/down.out")
    $T "$demo" filter --from "$ua" --to "$da" --json >"$tmp/filter.json" 2>"$tmp/filter.err"
    frc=$?
    wait
    got=$(jget "$tmp/down.out" received)
    why=""
    if [ $jrc -eq 0 ]; then # the cut fell between frames: a clean end
        [ $frc -eq 0 ] || why="exit $frc on a clean end"
    else
        [ $frc -eq 2 ] || why="exit $frc, want 2"
        grep -q "input ends inside a frame (FRAME_TRUNCATED) at byte $n\$" "$tmp/filter.err" ||
            why="$why; stderr: $(cat "$tmp/filter.err")"
    fi
    [ "$got" = "$want" ] || why="$why; downstream received $got, judge keeps $want"
    [ "$(jget "$tmp/filter.json" digest)" = "$(jget "$tmp/down.out" digest)" ] || why="$why; digests differ"
    if [ -n "$why" ]; then
        fail "upstream stops after $n bytes: $why"
        cut_fail=1
    fi
done
[ $cut_fail -eq 0 ] && pass "upstream stops after N bytes, ${#cuts[@]} values of N: the kept messages before the cut arrive, the filter names the offset"

# ---- 5. the downstream goes away; a peer cannot be reached

for n in 0 1 10000 1000000; do
    start up upstream --listen 127.0.0.1:0 --count 5000 --seed 2
    : >"$tmp/down.out"
    fake_downstream $n >>"$tmp/down.out" &
    ua=$(addr_of "$tmp/up.out") && da=$(addr_of "$tmp/down.out")
    start filter filter --from "$ua" --to "$da" --reader none
    wait $last_pid
    frc=$?
    wait
    check "downstream leaves after $n bytes: the filter exits 1, naming it" \
        test $frc -eq 1 -a -n "$(grep 'triage-demo filter: .*downstream' "$tmp/filter.err")"
done

$T "$demo" filter --from 127.0.0.1:1 --to 127.0.0.1:1 >/dev/null 2>"$tmp/err"
rc=$?
check "unreachable downstream: exit 1, a clear error" \
    test $rc -eq 1 -a -n "$(grep 'triage-demo filter: downstream: cannot connect to 127.0.0.1:1: ' "$tmp/err")"
start down downstream --listen 127.0.0.1:0
down=$last_pid
da=$(addr_of "$tmp/down.out")
$T "$demo" filter --from 127.0.0.1:1 --to "$da" >/dev/null 2>"$tmp/err"
rc=$?
kill $down 2>/dev/null
wait
check "unreachable upstream: exit 1, a clear error" \
    test $rc -eq 1 -a -n "$(grep 'triage-demo filter: upstream: cannot connect to 127.0.0.1:1: ' "$tmp/err")"

echo '{"urgent":["Sev 9"]}' >"$tmp/bad.policy"
$T "$demo" filter --from 127.0.0.1:1 --to 127.0.0.1:1 --policy "$tmp/bad.policy" >/dev/null 2>"$tmp/err"
check "a bad policy file: exit 2 before connecting" test $? -eq 2 -a -n "$(grep bad.policy "$tmp/err")"
for cmd in judge "filter --from 127.0.0.1:1 --to 127.0.0.1:1"; do
    # shellcheck disable=SC2086 # $cmd is a command and its options
    $T "$demo" $cmd --where 'kind == Bug' --where 'kind == Request' </dev/null >/dev/null 2>"$tmp/err"
    check "$cmd: --where twice is an error (exit 2), not the last one silently" \
        test $? -eq 2 -a -n "$(grep -F -- '--where is given twice' "$tmp/err")"
done

# ---- 6. verify levels and gzip frames

for args in "--compress gzip" "--compress deflate" "--verify schema"; do
    if $T "$demo" run 2000 $args --json >"$tmp/run.json" 2>"$tmp/run.err"; then
        pass "run 2000 $args exits 0"
    else
        fail "run 2000 $args exits 0: $(cat "$tmp/run.err")"
    fi
    check "run $args: one line per reader, each ok" \
        test "$(grep -c '"ok":true' "$tmp/run.json")" -eq 3 -a "$(wc -l <"$tmp/run.json")" -eq 3
    check "run $args: optics and decode tally alike" test -n "$(kinds optics)" -a "$(kinds optics)" = "$(kinds decode)"
    for reader in optics decode; do
        line=$(grep "\"reader\":\"$reader\"" "$tmp/run.json")
        fd=$(echo "$line" | grep -o '"kept_bytes":[0-9]*,"digest":"[0-9a-f]*"' | grep -o '[0-9a-f]\{16\}')
        dd=$(echo "$line" | grep -o '"downstream":{[^}]*}' | grep -o '"digest":"[0-9a-f]*"' | grep -o '[0-9a-f]\{16\}')
        check "run $args ($reader): the downstream's digest is the filter's" test -n "$fd" -a "$fd" = "$dd"
        check "run $args ($reader): counts match" \
            test "$(echo "$line" | grep -o '"kept":[0-9]*,"kept_bytes"' | grep -o '[0-9]*')" = \
                 "$(echo "$line" | grep -o '"received":[0-9]*' | cut -d: -f2)"
    done
done
$T "$demo" run 2000 --compress gzip --reader optics >"$tmp/run.txt" 2>/dev/null
check "run --compress gzip: the text report's gzip line" \
    grep -qE '^  gzip: 2000 messages inflated, compression ratio 0\.[0-9]+ \(compressed/inflated\); inflating took [0-9.]+ µs per message' "$tmp/run.txt"
$T "$demo" run 2000 --compress gzip --reader optics --json >"$tmp/run.json" 2>/dev/null
check "run --compress gzip --json: compression_ratio and inflate_ns_per_msg" \
    grep -qE '"compression_ratio":0\.[0-9]+,"inflate_ns_per_msg":[0-9.]+' "$tmp/run.json"
$T "$demo" run 2000 --compress deflate --reader optics >"$tmp/run.txt" 2>/dev/null
check "run --compress deflate: the text report's line names deflate" \
    grep -qE '^  deflate: 2000 messages inflated, compression ratio 0\.[0-9]+ ' "$tmp/run.txt"

# deflate frames (gRPC's deflate: zlib streams) judge as the same messages
# plain; gzip and deflate frames are not taken for each other.
"$demo" gen --count 500 --seed 9 >"$tmp/plain9"
"$demo" gen --count 500 --seed 9 --compress deflate >"$tmp/zl9"
"$demo" gen --count 500 --seed 9 --compress gzip >"$tmp/gz9"
"$py" - "$tmp/zl9" <<'PY'
import sys, frames
got = frames.split(open(sys.argv[1], 'rb').read())
assert len(got) == 500 and all(flag == 1 and body[0] == 0x78 for flag, body, _ in got), len(got)
PY
check "gen --compress deflate: every frame flagged, each a zlib stream" test $? -eq 0
$T "$demo" judge <"$tmp/plain9" >"$tmp/plain9.v"
$T "$demo" judge --grpc-encoding deflate <"$tmp/zl9" >"$tmp/zl9.v"
check "judge --grpc-encoding deflate: the verdicts of the same messages plain" \
    test -s "$tmp/plain9.v" -a "$(cat "$tmp/plain9.v")" = "$(cat "$tmp/zl9.v")"
$T "$demo" judge --grpc-encoding deflate <"$tmp/gz9" >/dev/null 2>"$tmp/err"
check "judge --grpc-encoding deflate on gzip frames: exit 2, the error named with its offset" \
    test $? -eq 2 -a -n "$(grep -F 'judge: deflate: ' "$tmp/err" | grep -F '(ZLIB_CORRUPT) at byte 5 (byte 0 of the message of the frame at byte 0)')"
$T "$demo" judge --grpc-encoding gzip <"$tmp/zl9" >/dev/null 2>"$tmp/err"
check "judge --grpc-encoding gzip on deflate frames: exit 2 (GZIP_CORRUPT)" \
    test $? -eq 2 -a -n "$(grep -F '(GZIP_CORRUPT) at byte 5' "$tmp/err")"
# check reads compressed frames too: every message ok inflated, each bad
# (at its first byte, naming the error) when read as the other format
$T "$demo" check --grpc-encoding deflate <"$tmp/zl9" >"$tmp/zl9.c"
check "check --grpc-encoding deflate: every message ok" \
    test $? -eq 0 -a "$(grep -c '^ok$' "$tmp/zl9.c")" -eq 500
$T "$demo" check --grpc-encoding gzip <"$tmp/zl9" >"$tmp/zl9.c"
check "check --grpc-encoding gzip on deflate frames: each bad at byte 0 (GZIP_CORRUPT)" \
    test $? -eq 0 -a "$(grep -c '^bad 0 corrupt gzip member (GZIP_CORRUPT)$' "$tmp/zl9.c")" -eq 500

# A mix (half the frames gzipped): the filter keeps exactly what judge
# --grpc-encoding gzip keeps, and forwards those frames as they came.
"$demo" gen --count 3000 --seed 5 --compress gzip --compress-ratio 0.5 >"$tmp/mix"
"$demo" judge --grpc-encoding gzip <"$tmp/mix" >"$tmp/mix.judge"
"$py" - "$tmp/mix" "$tmp/mix.judge" "$tmp/mix.want" <<'PY'
import sys, frames
got = frames.split(open(sys.argv[1], 'rb').read())
verdicts = open(sys.argv[2]).read().split('\n')
flags = sum(flag for flag, _, _ in got)
assert len(got) == 3000 and 0 < flags < 3000, (len(got), flags)
out = b''.join(f for (_, _, f), v in zip(got, verdicts) if v.endswith(' keep'))
open(sys.argv[3], 'wb').write(out)
PY
check "gen --compress-ratio 0.5: a mix of compressed and plain frames" test $? -eq 0
# The downstream: a plain socket that keeps what it receives.
: >"$tmp/sink.out"
sink "$tmp/mix.got" >>"$tmp/sink.out" &
start up upstream --listen 127.0.0.1:0 --count 3000 --seed 5 --compress gzip --compress-ratio 0.5
ua=$(addr_of "$tmp/up.out") && da=$(addr_of "$tmp/sink.out")
$T "$demo" filter --from "$ua" --to "$da" --grpc-encoding gzip --json >"$tmp/filter.json" 2>"$tmp/filter.err"
frc=$?
wait
check "filter --grpc-encoding gzip on a mix: exit 0" test $frc -eq 0
check "filter --grpc-encoding gzip on a mix: forwards exactly judge's kept frames, byte for byte" \
    cmp -s "$tmp/mix.want" "$tmp/mix.got"
check "filter --grpc-encoding gzip on a mix: judge's count" \
    test "$(grep -o '"kept":[0-9]*,"kept_bytes"' "$tmp/filter.json" | grep -o '[0-9]*')" -eq "$(grep -c keep "$tmp/mix.judge")"

# judge --summary: a tally on stderr whose rows add up the verdict lines
$T "$demo" gen --count 300 --seed 3 | $T "$demo" judge --summary >"$tmp/sum.v" 2>"$tmp/sum.t"
sum_ok=1
while read -r kind seen kept; do
    [ "$kind" = kind ] && continue
    [ "$seen" = "$(grep -c "^$kind " "$tmp/sum.v")" ] && [ "$kept" = "$(grep -c "^$kind keep\$" "$tmp/sum.v")" ] ||
        sum_ok=0
done <"$tmp/sum.t"
check "judge --summary: a row a kind and none, each adding up judge's lines" \
    test $sum_ok = 1 -a "$(wc -l <"$tmp/sum.t")" -eq 5 -a "$(head -1 "$tmp/sum.t" | tr -s ' ')" = "kind seen kept"

# ---- 7. --ndjson: one JSON message per line, for judge and check
# The same 500 messages as frames and as lines (LF, CRLF, blank and
# whitespace-only lines between them, the last without its newline): the
# same verdicts, the same values, every message ok. Then a malformed line
# and a line longer than a message may be.
$T "$demo" gen --count 500 --seed 21 >"$tmp/nd.frames"
$py - "$tmp/nd.frames" "$tmp/nd.json" <<'PY'
import sys, frames
msgs = [m for _, m, _ in frames.split(open(sys.argv[1], 'rb').read())]
assert len(msgs) == 500 and not any(b'\n' in m for m in msgs)
out = b''
for k, m in enumerate(msgs):
    out += m + (b'\r\n' if k % 3 == 1 else b'\n')
    if k % 50 == 7:
        out += b'\n  \t\r\n'
open(sys.argv[2], 'wb').write(out[:-1])
PY
$T "$demo" judge <"$tmp/nd.frames" >"$tmp/nd.want"
$T "$demo" judge --ndjson <"$tmp/nd.json" >"$tmp/nd.got"
check "judge --ndjson: the verdicts judge gives the same messages as frames" \
    test $? -eq 0 -a "$(wc -l <"$tmp/nd.got")" -eq 500 -a -n "$(grep ' keep$' "$tmp/nd.got")"
check "judge --ndjson: line for line as the frames" cmp -s "$tmp/nd.want" "$tmp/nd.got"
$T "$demo" judge --print kind,severity,votes <"$tmp/nd.frames" >"$tmp/nd.pwant"
$T "$demo" judge --ndjson --print kind,severity,votes <"$tmp/nd.json" >"$tmp/nd.pgot"
check "judge --ndjson --print: the values read from the frames" cmp -s "$tmp/nd.pwant" "$tmp/nd.pgot"
$T "$demo" check --ndjson --level schema <"$tmp/nd.json" >"$tmp/nd.check"
check "check --ndjson: every message ok" test $? -eq 0 -a "$(grep -cx ok "$tmp/nd.check")" -eq 500
# a malformed line among good ones: its own 'bad <offset> <reason>', the
# offset inside the line (8: the '}' where a key should follow the ',')
printf '{"id":1}\n\n{"id":1,}\n' >"$tmp/nd.bad"
$T "$demo" check --ndjson --level json <"$tmp/nd.bad" >"$tmp/nd.badout"
check "check --ndjson: a malformed line is bad at its offset, the others ok" \
    test "$(tr '\n' '|' <"$tmp/nd.badout")" = "ok|bad 8 unexpected character (SYNTAX)|"
$T "$demo" judge --ndjson --verify json <"$tmp/nd.bad" >"$tmp/nd.badj"
check "judge --ndjson --verify json: a malformed line is none drop" \
    test "$(tail -1 "$tmp/nd.badj")" = "none drop" -a "$(wc -l <"$tmp/nd.badj")" -eq 2
# a line past 4 MiB: the lines before it, then where it starts, exit 2
{ head -n 3 "$tmp/nd.json"; head -c $((5 << 20)) /dev/zero | tr '\0' ' '; echo; } \
    >"$tmp/nd.long"
skip=$(head -n 3 "$tmp/nd.json" | wc -c)
$T "$demo" judge --ndjson <"$tmp/nd.long" >"$tmp/nd.longout" 2>"$tmp/nd.longerr"
lrc=$?
check "judge --ndjson: a line longer than a message may be: exit 2 after the lines before it" \
    test $lrc -eq 2 -a "$(wc -l <"$tmp/nd.longout")" -eq 3
check "judge --ndjson: that line named, at its first byte ($skip)" \
    grep -q "a line longer than 4194304 bytes, the most a message may be (FRAME_SIZE) at byte $skip\$" \
    "$tmp/nd.longerr"
# at the bound: a line of 4 MiB is a message, one of 4 MiB + 1 is not,
# however its newline arrives (here with the byte past the bound), and
# whether lines end in LF or CRLF (the CR is the line's end, not the message's)
for eol in lf crlf; do
    $py - "$tmp/nd.edge" "$eol" <<'PY'
import sys
eol = b'\r\n' if sys.argv[2] == 'crlf' else b'\n'
pad = lambda n, v: b' ' * (n - len(v)) + v + eol
open(sys.argv[1], 'wb').write(b'{"id":1}' + eol + pad(4 << 20, b'{"id":2}') + pad((4 << 20) + 1, b'{"id":3}'))
PY
    $T "$demo" judge --ndjson <"$tmp/nd.edge" >"$tmp/nd.edgeout" 2>"$tmp/nd.edgeerr"
    erc=$?
    e=$([ $eol = crlf ] && echo 2 || echo 1)
    check "judge --ndjson ($eol): a line of 4 MiB is a message, the next of 4 MiB + 1 bytes an error at its first byte" \
        test $erc -eq 2 -a "$(wc -l <"$tmp/nd.edgeout")" -eq 2 -a \
        -n "$(grep "(FRAME_SIZE) at byte $((8 + e + (4 << 20) + e))\$" "$tmp/nd.edgeerr")"
done

# ---- 8. judge --print writes one line a message, whatever the whitespace
# The same 300 messages compact, pretty-printed with tabs and line breaks
# (as frames), and with tabs between their tokens (as lines): every optic's
# values alike, a raw value (detail) written without the whitespace, so
# each message is one line of tab-separated columns.
optics=$("$demo" judge --print '?' </dev/null 2>&1 | sed -n 's/.*(optics: \(.*\))$/\1/p' | tr -d ' ')
$T "$demo" gen --count 300 --seed 22 >"$tmp/ws.frames"
$py - "$tmp/ws.frames" "$tmp/ws.pretty" "$tmp/ws.ndjson" <<'PY'
import json, sys, frames
msgs = [json.loads(m) for _, m, _ in frames.split(open(sys.argv[1], 'rb').read())]
pretty = b''.join(frames.frame(json.dumps(m, indent='\t', ensure_ascii=False).encode()) for m in msgs)
lines = b''.join(json.dumps(m, separators=(',\t', ' :\t'), ensure_ascii=False).encode() + b'\n'
                 for m in msgs)
open(sys.argv[2], 'wb').write(pretty)
open(sys.argv[3], 'wb').write(lines)
PY
$T "$demo" judge --print "$optics" <"$tmp/ws.frames" >"$tmp/ws.want"
$T "$demo" judge --print "$optics" <"$tmp/ws.pretty" >"$tmp/ws.got"
check "judge --print (all optics: $optics): 300 lines, the raw detail among the values" \
    test "$(wc -l <"$tmp/ws.want")" -eq 300 -a "$(grep -c '{"type":' "$tmp/ws.want")" -gt 0
check "judge --print of pretty-printed messages: one line each, the compact ones' values" \
    cmp -s "$tmp/ws.want" "$tmp/ws.got"
$T "$demo" judge --ndjson --print "$optics" <"$tmp/ws.ndjson" >"$tmp/ws.ndgot"
check "judge --ndjson --print of lines with tabs between tokens: the compact ones' values" \
    cmp -s "$tmp/ws.want" "$tmp/ws.ndgot"
$T "$demo" judge --reader decode --print "$optics" <"$tmp/ws.pretty" >"$tmp/ws.dec"
check "judge --reader decode --print of pretty-printed messages: one line each" \
    test "$(wc -l <"$tmp/ws.dec")" -eq 300 -a "$(awk -F'\t' '{print NF}' "$tmp/ws.dec" | sort -u)" = "$(echo "$optics" | tr ',' '\n' | wc -l)"

finish
