# procs.sh: sourced by tests/grpc/run.sh and deploy/scale.sh (bash). A
# scratch folder, $tmp, and the list of the background processes started
# ($pids: add each one's pid), both gone when the script exits (an EXIT
# trap); and wait_for, to wait for a process to say it is ready.
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

wait_for() { # wait_for FILE PATTERN: a line of FILE matches, at most 10 s
    for _ in $(seq 1 500); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.02; done
    return 1
}
