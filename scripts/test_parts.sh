#!/usr/bin/env bash
# test_parts.sh: make test. First BUILD_PART builds everything the parts run
# (make -jJOBS), then the parts run JOBS at a time (each with make -jJOBS),
# in the order given (put the longest first), each into its own log under
# LOGS. A part runs to its end even when another failed (or the build did:
# a part then builds what it needs itself). As each part ends, one line says
# how it went and how long it took; a failed part's log follows. The last
# line: "make test: N passed, M failed" over the build and the parts, the
# failed ones named; exits 1 when any failed.
# Usage: scripts/test_parts.sh MAKE JOBS LOGS BUILD_PART PART...
set -uo pipefail
make_cmd=$1 jobs=$2 logs=$3 build_part=$4
shift 4
rm -rf "$logs"
mkdir -p "$logs"
passed=0
failed=()
t0=$SECONDS

# report PART RC SECONDS: the line, and the log when it failed.
report() {
    if [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
        printf '==== %-12s passed  (%d s)\n' "$1" "$3"
    else
        failed+=("$1")
        printf '==== %-12s FAILED  (%d s; log: %s)\n' "$1" "$3" "$logs/$1.log"
        sed 's/^/    /' "$logs/$1.log" | tail -n 200
    fi
}

echo "==== $build_part (make -j$jobs; log: $logs/$build_part.log)"
start=$SECONDS
$make_cmd --no-print-directory -j"$jobs" "$build_part" >"$logs/$build_part.log" 2>&1
report "$build_part" $? $((SECONDS - start))

# run PART: in the background; its status and time land in LOGS.
run() {
    (
        start=$SECONDS
        $make_cmd --no-print-directory -j"$jobs" "$1" >"$logs/$1.log" 2>&1
        rc=$?
        echo "$rc $((SECONDS - start))" >"$logs/$1.done.tmp"
        mv "$logs/$1.done.tmp" "$logs/$1.done"
    ) &
}

pending=("$@")
running=()
while [ ${#pending[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
    while [ ${#pending[@]} -gt 0 ] && [ ${#running[@]} -lt "$jobs" ]; do
        run "${pending[0]}"
        running+=("${pending[0]}")
        pending=("${pending[@]:1}")
    done
    wait -n 2>/dev/null || true
    still=()
    for part in "${running[@]}"; do
        if [ -e "$logs/$part.done" ]; then
            read -r rc secs <"$logs/$part.done"
            report "$part" "$rc" "$secs"
        else
            still+=("$part")
        fi
    done
    running=("${still[@]+"${still[@]}"}")
done

total=$((SECONDS - t0))
if [ ${#failed[@]} -eq 0 ]; then
    echo "make test: $passed passed, 0 failed ($total s)"
    exit 0
fi
echo "make test: $passed passed, ${#failed[@]} failed: ${failed[*]} ($total s)"
exit 1
