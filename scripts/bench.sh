#!/usr/bin/env bash
# bench.sh: the benchmarks and their page.
#
#   scripts/bench.sh            make bench: installs the bench's Debian packages
#                               (deps.sh --bench), builds, runs every benchmark and
#                               writes, under $BENCH_OUT (default build/bench):
#                                 latest.json   triage-bench --json, one object a line
#                                 run.json      the machine, time, commit, compilers
#                                 RESULTS.md    the tables (scripts/bench_report.py)
#                                 *.png         the plots (bench/plot.gp, gnuplot)
#   scripts/bench.sh --quick    the same with a few reps, to check it runs, into
#                               build/bench-quick ($BENCH_OUT); goes on with whichever
#                               peers are installed when it cannot install them
#   scripts/bench.sh --publish  make bench-publish: the last make bench's results
#                               (build/bench, $BENCH_OUT) become the tracked page:
#                               bench/results/{latest,run}.json, bench/RESULTS.md and
#                               the plots in bench/results; nothing is rerun
#
# A benchmark that fails (a peer that disagrees with our readers) fails the
# run, and latest.json is left as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
build=${BUILD:-build}

# render DIR PAGE OUT: the page and the plots from DIR's latest.json.
render() {
    python3 scripts/bench_report.py "$1/latest.json" "$2" "$3"
    # (the plots are the peers' and the sweep's: benchmarks a build for a
    # schema other than the demo's does not have)
    if ! command -v gnuplot >/dev/null 2>&1; then
        echo "bench.sh: no gnuplot: plots not drawn" >&2
    elif [ ! -s "$3/peers.dat" ] || [ ! -s "$3/sweep.blocks" ]; then
        echo "bench.sh: no peers or sweep rows: plots not drawn" >&2
    else
        gnuplot -e "dir='$3'; blocks=$(cat "$3/sweep.blocks")" bench/plot.gp
    fi
    rm -f "$3/sweep.blocks"
    echo "bench.sh: wrote $2 and the plots in $3" >&2
}

case "${1:-}" in
--publish)
    from=${BENCH_OUT:-build/bench}
    if [ ! -s "$from/latest.json" ] || [ ! -s "$from/run.json" ]; then
        echo "bench.sh: no results in $from: run make bench first" >&2
        exit 1
    fi
    mkdir -p bench/results
    cp "$from/latest.json" "$from/run.json" bench/results/
    render bench/results bench/RESULTS.md bench/results
    exit 0
    ;;
--quick)
    quick=--quick
    out=${BENCH_OUT:-build/bench-quick}
    scripts/deps.sh --bench || echo "bench.sh: going on with the peers this machine has" >&2
    ;;
"")
    quick=
    out=${BENCH_OUT:-build/bench}
    scripts/deps.sh --bench
    ;;
*)
    echo "usage: scripts/bench.sh [--quick | --publish]" >&2
    exit 2
    ;;
esac
"$make" --no-print-directory BUILD="$build" all

mkdir -p "$out"
trap 'rm -f "$out/latest.json.new"' EXIT
"$build/triage-bench" --json $quick >"$out/latest.json.new"
mv "$out/latest.json.new" "$out/latest.json"
python3 scripts/bench_report.py --facts "$out/run.json"
echo "bench.sh: wrote $out/latest.json ($(wc -l <"$out/latest.json") rows)" >&2
render "$out" "$out/RESULTS.md" "$out"
