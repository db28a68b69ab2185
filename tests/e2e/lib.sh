# lib.sh: what the end-to-end scripts share (sourced by run.sh,
# reliability.sh and tests/models/demo.sh, never run). Checks its arguments (the triage-demo binary
# in $1) and python3, makes $tmp (removed on exit, with any background job
# still running), and gives:
#
#   pass/fail WHAT, check WHAT COMMAND...   one line per check, counted
#   finish                                  "N passed, M failed"; false on a failure
#   addr_of FILE                            the HOST:PORT of a "listening" line
#   start NAME ARGS...                      a service in the background (under $T)
#   jget FILE KEY                           a member of a one-line JSON object
#   fake_downstream N                       a peer that reads N bytes, then closes
#   sink FILE                               a peer that keeps what it receives in FILE
#   (Python)  import frames                 frames.split(data), frames.frame(msg)
#
# Both peers print "listening HOST:PORT" first, for addr_of, and run under
# $T, the timeout command the script sets (so a hang is a failure).

me=$(basename "$0")
demo=${1:?usage: $0 PATH/TO/triage-demo}
[ -x "$demo" ] || { echo "$me: $demo is not executable" >&2; exit 2; }
# python3 for the fake peers and checks: Debian's when it is there (a
# version manager's shims in front of the one on PATH cost a third of a
# second of CPU at every start)
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
command -v "$py" >/dev/null || { echo "$me: needs python3 (fake peers)" >&2; exit 2; }
# their Python reads and writes frames with frames.py, beside this file
export PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)${PYTHONPATH:+:$PYTHONPATH}"

tmp=$(mktemp -d)
cleanup() {
    # Only our own background jobs that are still running.
    local running
    running=$(jobs -pr)
    [ -n "$running" ] && kill $running 2>/dev/null
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
    echo "$passed passed, $failed failed"
    [ $failed -eq 0 ]
}

# The helpers below run no other program where bash can do the work: the
# fault loops call them thousands of times, and starting a program costs
# milliseconds of CPU on these machines (grep, head, cut and tr in each
# jget were most of run.sh's time).

# A JSON member of a one-line object whose key is unique in it: its value
# up to the next ',', '}', ':' or line end, without quotes.
jget() {
    local s re="\"$2\":([^,}:"$'\n'"]*)"
    s=$(<"$1") # bash reads the file itself
    [[ $s =~ $re ]] || return 0
    printf '%s\n' "${BASH_REMATCH[1]//\"/}"
}

# Waits for a whole "listening HOST:PORT" line in a service's stdout file;
# prints HOST:PORT.
addr_of() {
    local i line
    for ((i = 0; i < 1500; i++)); do # 30 s: generation under sanitizers on a busy machine
        if [ -s "$1" ]; then
            while IFS= read -r line; do # a line cut short (no newline yet) is not read
                if [[ $line == "listening "* ]]; then
                    printf '%s\n' "${line#listening }"
                    return 0
                fi
            done <"$1"
        fi
        sleep 0.02
    done
    return 1
}

# Starts a service in the background: start NAME ARGS...; stdout in
# $tmp/NAME.out, stderr in $tmp/NAME.err; its pid in $last_pid.
start() {
    local name=$1
    shift
    # Emptied here, not by the background job's redirection, so addr_of
    # never reads the last run's "listening" line.
    : >"$tmp/$name.out"
    $T "$demo" "$@" >>"$tmp/$name.out" 2>"$tmp/$name.err" &
    last_pid=$!
}

fake_downstream() { # reads $1 bytes, then closes
    $T "$py" -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print("listening 127.0.0.1:%d" % s.getsockname()[1], flush=True)
c, _ = s.accept()
n = int(sys.argv[1]); got = 0
while got < n:
    b = c.recv(min(65536, n - got))
    if not b:
        break
    got += len(b)
c.close()
' "$1"
}

sink() { # keeps what one connection sends in $1
    $T "$py" -c '
import socket, sys
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
print("listening 127.0.0.1:%d" % l.getsockname()[1], flush=True)
c, _ = l.accept()
with open(sys.argv[1], "wb") as f:
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        f.write(b)
' "$1"
}
