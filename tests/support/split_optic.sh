# split_optic.sh: sourced by the scripts that judge a schema other than the
# demo's (tests/grpc/run.sh, tests/install/run.sh), whose default rules may
# keep everything: they judge by `has(O)` for an optic O that tells messages
# apart instead.
#
#   split_optic TRIAGE_DEMO FRAMES N OPTIC...
#
# prints the first OPTIC that some of the N messages in FRAMES have and
# others lack (`judge --where 'has(O)'` keeps more than none, fewer than
# all), or nothing when none does.
split_optic() {
    local demo=$1 frames=$2 n=$3 o k
    shift 3
    for o in "$@"; do
        k=$("$demo" judge --where "has($o)" <"$frames" 2>/dev/null | grep -c ' keep$' || true)
        if [ "$k" -gt 0 ] && [ "$k" -lt "$n" ]; then
            echo "$o"
            return 0
        fi
    done
}
