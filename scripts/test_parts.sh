#!/usr/bin/env bash
# test_parts.sh: make test. BUILD_PART builds everything the parts run (make
# -jJOBS); the parts run JOBS at a time (each with make -jJOBS), in the
# order given (put the longest first), each into its own log under LOGS. A
# part may carry a prefix: early:PART needs nothing BUILD_PART builds, and
# runs beside it; light:PART mostly waits (on sockets and timers), and runs
# beside the others without taking one of the JOBS places, one such part at
# a time. The other parts start once the build ended. A part runs to its
# end even when another failed (or the build did: a part then builds what
# it needs itself). As each part ends, one line says how it went and how
# long it took; a failed part's log follows. The last line: "make test: N
# passed, M failed" over the build and the parts, the failed ones named,
# and ", K left out: ..." when parts said they were left out ("PART: left
# out: why" in their log: test-grpc with a schema no optic of which tells
# some messages from others);
# exits 1 when any failed.
# Usage: scripts/test_parts.sh MAKE JOBS LOGS BUILD_PART [early:|light:]PART...
set -uo pipefail
make_cmd=$1 jobs=$2 logs=$3 build_part=$4
shift 4
rm -rf "$logs"
mkdir -p "$logs"
passed=0
failed=()
leftout=()
t0=$SECONDS

# timed OUT COMMAND...: runs COMMAND (its output where the caller sent it);
# OUT gets "RC TIME", TIME its elapsed and CPU time (user and system, its
# children's too) as "W s, C s CPU".
timed() {
    local out=$1 rc TIMEFORMAT='%R %U %S'
    shift
    # time's line to OUT.time; the command's stderr stays the caller's (fd 3)
    { time "$@" 2>&3; } 3>&2 2>"$out.time"
    rc=$?
    echo "$rc $(awk '{ printf "%d s, %d s CPU", $1, $2 + $3 }' "$out.time")" >"$out"
    rm -f "$out.time"
}

# report PART RC TIME: the line, and the log when it failed.
report() {
    if [ "$2" -eq 0 ] && grep -q "^$1: left out: " "$logs/$1.log" 2>/dev/null; then
        leftout+=("$1")
        printf '==== %-12s left out (%s)\n' "$1" "$(sed -n "s/^$1: left out: //p" "$logs/$1.log" | head -1)"
    elif [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
        printf '==== %-12s passed  (%s)\n' "$1" "$3"
    else
        failed+=("$1")
        printf '==== %-12s FAILED  (%s; log: %s)\n' "$1" "$3" "$logs/$1.log"
        sed 's/^/    /' "$logs/$1.log" | tail -n 200
    fi
}

# run PART: in the background; its status and time land in LOGS.
run() {
    (
        timed "$logs/$1.done.tmp" $make_cmd --no-print-directory -j"$jobs" "$1" \
            >"$logs/$1.log" 2>&1
        mv "$logs/$1.done.tmp" "$logs/$1.done"
    ) &
}

echo "==== $build_part (make -j$jobs; log: $logs/$build_part.log)"
run "$build_part"
built=false
# each part as KIND:PART (KIND empty for a plain one)
pending=()
for spec in "$@"; do
    case $spec in *:*) pending+=("$spec") ;; *) pending+=(":$spec") ;; esac
done
running=(":$build_part")
places=1 # of JOBS, taken by the build and the parts that are not light
light=0  # light parts running
while [ ${#pending[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
    left=()
    for spec in "${pending[@]+"${pending[@]}"}"; do
        kind=${spec%%:*} part=${spec#*:}
        if [ "$kind" = light ] && $built && [ $light -eq 0 ]; then
            light=1
        elif [ "$kind" != light ] && [ $places -lt "$jobs" ] &&
            { $built || [ "$kind" = early ]; }; then
            places=$((places + 1))
        else
            left+=("$spec")
            continue
        fi
        run "$part"
        running+=("$kind:$part")
    done
    pending=("${left[@]+"${left[@]}"}")
    wait -n 2>/dev/null || true
    still=()
    for spec in "${running[@]}"; do
        kind=${spec%%:*} part=${spec#*:}
        if [ -e "$logs/$part.done" ]; then
            read -r rc took <"$logs/$part.done"
            report "$part" "$rc" "$took"
            if [ "$kind" = light ]; then light=0; else places=$((places - 1)); fi
            [ "$part" = "$build_part" ] && built=true
        else
            still+=("$spec")
        fi
    done
    running=("${still[@]+"${still[@]}"}")
done

# the CPU time of everything make test ran (times: the children's user and system)
times >"$logs/times"   # not in a pipe: a subshell's times would not count them
cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } }
           END { printf "%d", s }' "$logs/times")
total="$((SECONDS - t0)) s, $cpu s CPU"
out=
[ ${#leftout[@]} -eq 0 ] || out=", ${#leftout[@]} left out: ${leftout[*]}"
if [ ${#failed[@]} -eq 0 ]; then
    echo "make test: $passed passed, 0 failed$out ($total)"
    exit 0
fi
echo "make test: $passed passed, ${#failed[@]} failed: ${failed[*]}$out ($total)"
exit 1
