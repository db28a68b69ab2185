#!/usr/bin/env bash
# reliability.sh: the limits end to end. No output is lost silently (every
# command that writes results, against /dev/full or a reader that went
# away); options outside their range are errors; the policy file's rules;
# `run`'s upstream memory does not grow with N; a peer that goes away is
# named with the byte and the messages written; and what each verify level
# lets through, line by line as docs/security.md states it.
#
#   usage: tests/e2e/reliability.sh build/triage-demo
#
# Prints one line per check (ok or FAIL) and a final "N passed, M failed";
# exits 1 when any failed. Every process runs under `timeout`, so a hang is a
# failure. The scaffolding (checks, $tmp, fake peers) is lib.sh's.
set -u
. "$(dirname "$0")/lib.sh"
[ -w /dev/full ] || { echo "reliability.sh: needs /dev/full" >&2; exit 2; }

T="timeout 60"

# ---- 1. lost output: a non-zero exit and one line naming stdout and errno

"$demo" gen --count 20000 --seed 3 >"$tmp/gen20k"
"$demo" gen --count 2 --seed 3 >"$tmp/gen2"

# lost_output NAME STDIN COMMAND...: stdout is /dev/full
lost_output() {
    local name=$1 in=$2
    shift 2
    $T "$demo" "$@" <"$in" >/dev/full 2>"$tmp/err"
    local rc=$?
    if [ $rc -ne 0 ] && grep -q "^triage-demo $name: cannot write stdout: No space left on device\$" "$tmp/err"; then
        pass "$* >/dev/full: exit $rc, names stdout"
    else
        fail "$* >/dev/full: exit $rc, stderr: $(head -3 "$tmp/err")"
    fi
}
lost_output gen /dev/null gen --count 20000
lost_output gen /dev/null gen --count 1 # all in the buffer: the last flush fails
lost_output judge "$tmp/gen20k" judge
lost_output judge "$tmp/gen2" judge
lost_output judge "$tmp/gen20k" judge --reader decode --verify schema
lost_output check "$tmp/gen20k" check
lost_output check "$tmp/gen2" check --level json
lost_output run /dev/null run 2000 --reader none --warmup 0
lost_output run /dev/null run 2000 --reader optics --json
lost_output upstream /dev/null upstream --listen 127.0.0.1:0
lost_output downstream /dev/null downstream --listen 127.0.0.1:0

# The services' reports: stdout a pipe whose reader left after the
# "listening" line (SIGPIPE ignored, so the write fails with EPIPE).
# start_fifo NAME ARGS...: starts the service, reads its first line into
# $first, closes the pipe; the pid in $last_pid.
start_fifo() {
    local name=$1
    shift
    rm -f "$tmp/$name.fifo"
    mkfifo "$tmp/$name.fifo"
    (trap '' PIPE; exec "$demo" "$@") >"$tmp/$name.fifo" 2>"$tmp/$name.err" &
    last_pid=$!
    exec 3<"$tmp/$name.fifo"
    first=""
    read -r -t 30 first <&3
    exec 3<&-
}
start_fifo down downstream --listen 127.0.0.1:0
down=$last_pid
da=${first#listening }
start up upstream --listen 127.0.0.1:0 --count 300 --seed 3
ua=$(addr_of "$tmp/up.out")
$T "$demo" filter --from "$ua" --to "$da" >/dev/full 2>"$tmp/filter.err"
frc=$?
wait $down
drc=$?
wait
check "filter >/dev/full: exit 1, names stdout" \
    test $frc -eq 1 -a -n "$(grep '^triage-demo filter: cannot write stdout: No space left on device$' "$tmp/filter.err")"
check "downstream, its reader gone: exit 1, names stdout and EPIPE" \
    test $drc -eq 1 -a -n "$(grep '^triage-demo downstream: cannot write stdout: Broken pipe$' "$tmp/down.err")"

start_fifo up upstream --listen 127.0.0.1:0 --count 300 --seed 3
up=$last_pid
ua=${first#listening }
start down downstream --listen 127.0.0.1:0 --count-only
da=$(addr_of "$tmp/down.out")
$T "$demo" filter --from "$ua" --to "$da" --reader none >/dev/null 2>&1
wait $up
urc=$?
wait
check "upstream, its reader gone: exit 1 after serving, names stdout" \
    test $urc -eq 1 -a -n "$(grep '^triage-demo upstream: cannot write stdout: Broken pipe$' "$tmp/up.err")" \
    -a "$(jget "$tmp/down.out" received)" = 300

# And when nothing fails, 0 as before.
$T "$demo" judge <"$tmp/gen2" >/dev/null
check "judge >/dev/null: exit 0" test $? -eq 0

# ---- 2. options outside their range: exit 2 and a message naming the option

# bad_option WANT_STDERR ARGS...
bad_option() {
    local want=$1
    shift
    $T "$demo" "$@" </dev/null >/dev/null 2>"$tmp/err"
    local rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/err"; then
        pass "$*: exit 2, '$want'"
    else
        fail "$*: exit $rc, stderr: $(cat "$tmp/err")"
    fi
}
bad_option "--threads must be at least 1, not '0'" filter --threads 0 --from 127.0.0.1:1 --to 127.0.0.1:1
bad_option "--threads wants a number up to 2, got '3'" filter --threads 3 --from 127.0.0.1:1 --to 127.0.0.1:1
bad_option "--progress must be at least 1, not '0'" filter --progress 0 --from 127.0.0.1:1 --to 127.0.0.1:1
bad_option "--threads must be at least 1, not '0'" run --threads 0
bad_option "N must be at least 1, not '0'" run 0
bad_option "N wants a number, got '-5'" run -5
bad_option "--count wants a number, got '-1'" gen --count -1
bad_option "--size wants a number up to 1000, got '1001'" gen --size 1001
bad_option "--compress-ratio is a number in [0, 1], not '1.5'" gen --compress gzip --compress-ratio 1.5
bad_option "--compress-ratio is a number in [0, 1], not 'nan'" gen --compress gzip --compress-ratio nan
bad_option "--count wants a number, got '-3'" upstream --listen 127.0.0.1:0 --count -3
bad_option "--pool wants a number, got '-1'" upstream --listen 127.0.0.1:0 --pool -1
bad_option "--verify is off, json or schema, not 'all'" judge --verify all
bad_option "--level is json or schema" check --level off

# The policy file (filter/jsonpolicy.c): a directory, a negative minVotes, an
# escaped key.
mkdir "$tmp/pdir"
bad_option "triage-demo judge: $tmp/pdir: cannot read: is a directory" judge --policy "$tmp/pdir"
bad_option "triage-demo filter: $tmp/pdir: cannot read: is a directory" filter --policy "$tmp/pdir" --from 127.0.0.1:1 --to 127.0.0.1:1
echo '{"minVotes":-1}' >"$tmp/neg.policy"
bad_option "'minVotes' must be from 0 to 2147483647, not -1" judge --policy "$tmp/neg.policy"
bad_option "'minVotes' must be from 0 to 2147483647, not -1" run 10 --policy "$tmp/neg.policy"
echo '{"urgent":["Sev3"],"\u0075rgent":["Sev4"]}' >"$tmp/twice.policy"
bad_option "key 'urgent' appears twice" judge --policy "$tmp/twice.policy"
echo '{"\u0075rgent":["Sev3"],"min\u0056otes":7}' >"$tmp/esc.policy"
echo '{"urgent":["Sev3"],"minVotes":7}' >"$tmp/plain.policy"
"$demo" judge --policy "$tmp/esc.policy" <"$tmp/gen20k" >"$tmp/esc.judge"
"$demo" judge --policy "$tmp/plain.policy" <"$tmp/gen20k" >"$tmp/plain.judge"
"$demo" judge <"$tmp/gen20k" >"$tmp/default.judge"
check "policy keys compare unescaped: \\u0075rgent is urgent (same verdicts, not the default's)" \
    eval 'cmp -s "$tmp/esc.judge" "$tmp/plain.judge" && ! cmp -s "$tmp/esc.judge" "$tmp/default.judge"'

# ---- 3. run: the upstream's memory does not grow with N

rss_of() { # N: the upstream's max RSS in kB for run N (relay, no warm-up)
    $T "$demo" run "$1" --reader none --warmup 0 --json 2>"$tmp/run.err" |
        grep -o '"upstream":{[^}]*}' | grep -o '"max_rss_kb":[0-9]*' | cut -d: -f2
}
r1=$(rss_of 20000)
r10=$(rss_of 200000)
if [ -n "$r1" ] && [ -n "$r10" ] && [ $((r10 * 100)) -le $((r1 * 120)) ]; then
    pass "run 20000 and run 200000: the upstream's max RSS is flat ($r1 kB, $r10 kB)"
else
    fail "run 20000 and run 200000: the upstream's max RSS $r1 kB, $r10 kB: $(cat "$tmp/run.err")"
fi
$T "$demo" run 5000 --reader optics --warmup 0 >"$tmp/run.txt" 2>&1
check "run: the report says the upstream cycles a pool and gives its max RSS" \
    grep -qE '^  upstream: 4096 distinct messages \([0-9.]+ MB of frames\), cycled; its max RSS [0-9.]+ MB, which does not grow with N$' "$tmp/run.txt"

# The stream cycles through the pool: message i is gen's message i mod P.
"$demo" gen --count 300 --seed 3 >"$tmp/gen300"
start up upstream --listen 127.0.0.1:0 --count 1000 --pool 300 --seed 3
ua=$(addr_of "$tmp/up.out")
$T "$py" -c '
import socket, sys
h, p = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((h, int(p)))
with open(sys.argv[2], "wb") as f:
    while True:
        b = s.recv(1 << 16)
        if not b:
            break
        f.write(b)
' "$ua" "$tmp/cycled"
wait
"$py" - "$tmp/gen300" "$tmp/cycled" <<'PY'
import sys, frames
got = [f for _, _, f in frames.split(open(sys.argv[1], 'rb').read())]
c = open(sys.argv[2], 'rb').read()
want = b''.join(got[i % 300] for i in range(1000))
sys.exit(0 if c == want else 1)
PY
check "upstream --count 1000 --pool 300: gen's 300 messages, cycled" test $? -eq 0

# ---- 4. a peer that goes away: the byte and the messages written

"$demo" gen --count 5000 --seed 2 >"$tmp/gen5k"
"$demo" judge <"$tmp/gen5k" >"$tmp/gen5k.judge"
# consistent STREAM BYTES MESSAGES [VERDICTS]: the first MESSAGES frames of
# STREAM (only those judged keep, when VERDICTS is given) hold BYTES bytes;
# for the upstream, BYTES may end inside the next frame.
consistent() {
    "$py" - "$@" <<'PY'
import sys, frames
got = frames.split(open(sys.argv[1], 'rb').read())
b, m = int(sys.argv[2]), int(sys.argv[3])
keep = open(sys.argv[4]).read().split('\n') if len(sys.argv) > 4 else None
out = [len(f) for i, (_, _, f) in enumerate(got) if keep is None or keep[i].endswith(' keep')]
whole = sum(out[:m])
if keep is None:   # the upstream: m whole frames, and b inside the next one
    ok = whole <= b < whole + out[m] if m < len(out) else b == whole
else:              # the filter: exactly m kept frames
    ok = whole == b
sys.exit(0 if ok else 1)
PY
}
for n in 0 10000 1000000; do
    # --pool 0: message i is issue i, as in gen5k, however far the upstream gets
    start up upstream --listen 127.0.0.1:0 --count 5000 --seed 2 --pool 0
    : >"$tmp/down.out"
    fake_downstream $n >>"$tmp/down.out" &
    ua=$(addr_of "$tmp/up.out") && da=$(addr_of "$tmp/down.out")
    $T "$demo" filter --from "$ua" --to "$da" >/dev/null 2>"$tmp/filter.err"
    frc=$?
    wait
    line=$(grep -E '^triage-demo filter: .*downstream.*, at byte [0-9]+ of the stream to it, after [0-9]+ messages written$' "$tmp/filter.err")
    b=$(echo "$line" | sed -n 's/.*at byte \([0-9]*\) of the stream.*/\1/p')
    m=$(echo "$line" | sed -n 's/.*after \([0-9]*\) messages written$/\1/p')
    if [ $frc -eq 1 ] && [ -n "$b" ] && consistent "$tmp/gen5k" "$b" "$m" "$tmp/gen5k.judge"; then
        pass "downstream leaves after $n bytes: the filter names byte $b and $m messages written, consistent"
    else
        fail "downstream leaves after $n bytes: exit $frc, stderr: $(cat "$tmp/filter.err")"
    fi
    line=$(grep -E '^triage-demo upstream: connection 1: write: peer closed the connection \(.*\), at byte [0-9]+, after [0-9]+ messages written$' "$tmp/up.err")
    b=$(echo "$line" | sed -n 's/.*at byte \([0-9]*\), after.*/\1/p')
    m=$(echo "$line" | sed -n 's/.*after \([0-9]*\) messages written$/\1/p')
    if [ -n "$b" ] && consistent "$tmp/gen5k" "$b" "$m" &&
        [ "$(jget "$tmp/up.out" bytes)" = "$b" ] && [ "$(jget "$tmp/up.out" messages)" = "$m" ]; then
        pass "the filter leaves the upstream: it names byte $b and $m messages written, consistent"
    else
        fail "the filter leaves the upstream: stderr: $(cat "$tmp/up.err"), stdout: $(cat "$tmp/up.out")"
    fi
done

# ---- 5. the verify levels: what each lets through (docs/security.md's table)

# One kept Incident, then one variant per line of the table; each line of
# cases.txt: NAME<TAB>JSON-LEVEL<TAB>SCHEMA-LEVEL<TAB>CHECK-SCHEMA-CODE<TAB>OFF,
# the verdicts `judge --verify json` and `--verify schema` must give (keep:
# the base's "Incident keep"), the code `check --level schema` must name,
# and the verdict of `--verify off` (the json one's, except where given).
"$py" - "$demo" "$tmp" <<'PY'
import re, subprocess, sys, frames
demo, tmp = sys.argv[1], sys.argv[2]
raw = subprocess.run([demo, 'gen', '--count', '200', '--seed', '4', '--size', '2'],
                     capture_output=True, check=True).stdout
msgs = [m for _, m, _ in frames.split(raw)]
verdicts = subprocess.run([demo, 'judge'], input=raw, capture_output=True).stdout.decode().split('\n')
base = next(m for m, v in zip(msgs, verdicts) if v == 'Incident keep').decode()
def sub(pat, rep):
    out, k = re.subn(pat, lambda _: rep, base, count=1)
    assert k == 1, pat
    return out
before_title = lambda s: sub(r'"title":', s + '"title":')
K, D = 'keep', 'drop'  # keep: the base's verdict; drop: none drop
cases = [
    # what json lets through and schema rejects
    ('integer field written 130.0', sub(r'"slaMinutes":\d+', '"slaMinutes":130.0'), K, D, 'NOT_INTEGER'),
    ('integer field written 1e2', sub(r'"slaMinutes":\d+', '"slaMinutes":1e2'), K, D, 'NOT_INTEGER'),
    ('i32 overflow 2147483648', sub(r'"slaMinutes":\d+', '"slaMinutes":2147483648'), K, D, 'RANGE'),
    ('i32 overflow -2147483649', sub(r'"slaMinutes":\d+', '"slaMinutes":-2147483649'), K, D, 'RANGE'),
    ('i64 overflow 9223372036854775808', sub(r'"revision":\d+', '"revision":9223372036854775808'), K, D, 'RANGE'),
    ('i64 20 digits', sub(r'"revision":\d+', '"revision":10000000000000000000'), K, D, 'RANGE'),
    ('f64 overflow 1e400', sub(r'"budget":[0-9.]+', '"budget":1e400'), K, D, 'RANGE'),
    ('f64 overflow -1.8e308', sub(r'"budget":[0-9.]+', '"budget":-1.8e308'), K, D, 'RANGE'),
    ('number written as a string', sub(r'"slaMinutes":\d+', '"slaMinutes":"5"'), K, D, 'TYPE'),
    ('bool written 0', sub(r'"flaky":(true|false)', '"flaky":0'), K, D, 'TYPE'),
    ('required field missing', sub(r'"title":"[^"]*",', ''), K, D, 'MISSING'),
    ('required field null', sub(r'"title":"[^"]*"', '"title":null'), K, D, 'NULL_REQUIRED'),
    ('unknown enum case', sub(r'"status":"[^"]*"', '"status":"Opened"'), K, D, 'ENUM'),
    ('enum case in another letter case', sub(r'"status":"[^"]*"', '"status":"closed"'), K, D, 'ENUM'),
    ('a record field twice', sub(r'"title":', '"title":"x","title":'), K, D, 'DUPLICATE'),
    # (an empty map takes the two without a comma after them)
    ('a map key twice', sub(r'"tags":\{(?!\})', '"tags":{"dup":"1","dup":"2",') if '"tags":{}' not in base
        else sub(r'"tags":\{\}', '"tags":{"dup":"1","dup":"2"}'), K, D, 'DUPLICATE_KEY'),
    ('detail twice (json reads the first)', sub(r'"detail":', '"detail":{"type":"Bug","component":"a","build":"b","reproducible":true,"trace":{"exception":"e","message":"m","frames":[]}},"detail":'), 'Bug drop', D, 'DUPLICATE'),
    ('the message a JSON array', '[' + base + ']', D, D, 'TYPE'),
    # what both let through
    ('integer field -0', sub(r'"slaMinutes":\d+', '"slaMinutes":-0'), K, K, 'OK'),
    ('i32 and i64 at their bounds', sub(r'"slaMinutes":\d+', '"slaMinutes":-2147483648').replace(re.search(r'"revision":\d+', base).group(0), '"revision":9223372036854775807'), K, K, 'OK'),
    ('f64 underflow 1e-400 (reads 0)', sub(r'"budget":[0-9.]+', '"budget":1e-400'), K, K, 'OK'),
    ('f64 written as an integer', sub(r'"budget":[0-9.]+', '"budget":5'), K, K, 'OK'),
    ('optional field null', before_title('"parentId":null,') if '"parentId"' not in base else sub(r'"parentId":\d+', '"parentId":null'), K, K, 'OK'),
    ('unknown fields, repeated, any JSON', before_title('"x":[1,{"a":null}],"x":1e400,'), K, K, 'OK'),
    ('escaped key and surrogate pair', sub(r'"title":"', '"\\u0074itle":"\\ud83d\\ude00'), K, K, 'OK'),
    ('whitespace around tokens and after', ' ' + base.replace(',"', ' ,\n "', 3) + ' \r\n\t', K, K, 'OK'),
    ('nesting 256 deep', before_title('"x":' + '[' * 255 + ']' * 255 + ','), K, K, 'OK'),
    # what both reject
    # what both reject; off keeps what its walk can step over
    ('invalid UTF-8', sub(r'"title":"', '"title":"\udcff'), D, D, 'UTF8', K),
    ('lone surrogate escape', sub(r'"title":"', '"title":"\\ud800'), D, D, 'SURROGATE'),
    ('raw control character', sub(r'"title":"', '"title":"\x01'), D, D, 'CTRL', K),
    ('bytes after the message', base + 'x', D, D, 'TRAILING', K),
    ('byte-order mark', '\ufeff' + base, D, D, 'BOM'),
    ('leading zero', sub(r'"slaMinutes":\d+', '"slaMinutes":0130'), D, D, 'NUMBER', K),
    ('NaN', sub(r'"budget":[0-9.]+', '"budget":NaN'), D, D, 'NUMBER', K),
    ('not JSON outside the detail', sub(r'"title":"[^"]*"', '"title":"t","x":[1,}'), D, D, 'SYNTAX', K),
    ('nesting 257 deep', before_title('"x":' + '[' * 256 + ']' * 256 + ','), D, D, 'DEPTH'),
]
with open(tmp + '/cases.bin', 'wb') as f:
    for _, text, *_ in cases:
        b = text.encode('utf-8', 'surrogateescape')
        f.write(frames.frame(b))
with open(tmp + '/cases.txt', 'w') as f:
    for name, _, j, s, code, *off in cases:
        v = lambda x: 'Incident keep' if x == K else 'none drop' if x == D else x
        f.write(f'{name}\t{v(j)}\t{v(s)}\t{code}\t{v(off[0] if off else j)}\n')
PY
check "verify cases built" test -s "$tmp/cases.bin"
"$demo" judge --verify off <"$tmp/cases.bin" >"$tmp/v.off"
"$demo" judge --verify json <"$tmp/cases.bin" >"$tmp/v.json"
"$demo" judge --verify schema <"$tmp/cases.bin" >"$tmp/v.schema"
"$demo" judge --reader decode <"$tmp/cases.bin" >"$tmp/v.decode"
"$demo" check --level schema <"$tmp/cases.bin" >"$tmp/c.schema"
i=0
while IFS=$'\t' read -r name want_json want_schema code want_off; do
    i=$((i + 1))
    got_off=$(sed -n "${i}p" "$tmp/v.off")
    got_json=$(sed -n "${i}p" "$tmp/v.json")
    got_schema=$(sed -n "${i}p" "$tmp/v.schema")
    got_decode=$(sed -n "${i}p" "$tmp/v.decode")
    got_check=$(sed -n "${i}p" "$tmp/c.schema")
    if [ "$code" = OK ]; then want_check="ok"; else want_check="($code"; fi
    if [ "$got_json" = "$want_json" ] && [ "$got_schema" = "$want_schema" ] &&
        [ "$got_decode" = "$want_schema" ] && [[ "$got_check" == *"$want_check"* ]] &&
        [ "$got_off" = "$want_off" ]; then
        pass "verify: $name: off '$got_off', json '$got_json', schema '$got_schema' ($code)"
    else
        fail "verify: $name: off '$got_off' (want '$want_off'), json '$got_json' (want '$want_json'), schema '$got_schema' (want '$want_schema'), decode '$got_decode', check '$got_check' (want $code)"
    fi
done <"$tmp/cases.txt"

finish
