#!/usr/bin/env bash
# bench.sh: `make bench`: installs the bench's Debian packages (deps.sh --bench),
# builds, runs every benchmark, and writes
#   bench/results/latest.json   triage-bench --json, one object per line
#   bench/RESULTS.md            the tables (scripts/bench_report.py)
#   bench/results/*.png         the plots (bench/plot.gp, gnuplot)
# Usage: scripts/bench.sh [--quick]   (--quick: a few reps, to check it runs;
# writes everything into $BENCH_OUT, default build/bench-quick, leaves the page
# alone, and runs with whichever peers are installed when it cannot install them)
# A benchmark that fails (a peer that disagrees with our readers) fails the
# run, and latest.json is left as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
build=${BUILD:-build}

quick=
out=bench/results
page=bench/RESULTS.md
if [ "${1:-}" = "--quick" ]; then
    quick=--quick
    out=${BENCH_OUT:-build/bench-quick}
    page=$out/RESULTS.md
fi

if [ -n "$quick" ]; then
    scripts/deps.sh --bench || echo "bench.sh: going on with the peers this machine has" >&2
else
    scripts/deps.sh --bench
fi
"$make" --no-print-directory BUILD="$build" all

mkdir -p "$out"
trap 'rm -f "$out/latest.json.new"' EXIT
"$build/triage-bench" --json $quick >"$out/latest.json.new"
mv "$out/latest.json.new" "$out/latest.json"
echo "bench.sh: wrote $out/latest.json ($(wc -l <"$out/latest.json") rows)" >&2

python3 scripts/bench_report.py "$out/latest.json" "$page" "$out"
if command -v gnuplot >/dev/null 2>&1; then
    gnuplot -e "dir='$out'; blocks=$(cat "$out/sweep.blocks")" bench/plot.gp
else
    echo "bench.sh: no gnuplot: plots not drawn" >&2
fi
rm -f "$out/sweep.blocks"
echo "bench.sh: wrote $page and the plots in $out" >&2
