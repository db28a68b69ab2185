#!/usr/bin/env bash
# test_parts.sh: make test's parts, one after another, each to its end even
# when one before it failed, then one line: "N passed, M failed" over the
# parts, with the failed ones named; exits 1 when any failed.
# Usage: scripts/test_parts.sh MAKE PART...
set -uo pipefail
make_cmd=$1
shift
passed=0
failed=()
for part in "$@"; do
    echo "==== make $part"
    start=$SECONDS
    if $make_cmd --no-print-directory "$part"; then
        passed=$((passed + 1))
        echo "==== $part: passed ($((SECONDS - start)) s)"
    else
        failed+=("$part")
        echo "==== $part: FAILED ($((SECONDS - start)) s)"
    fi
done
if [ ${#failed[@]} -eq 0 ]; then
    echo "make test: $passed passed, 0 failed"
    exit 0
fi
echo "make test: $passed passed, ${#failed[@]} failed (${failed[*]})"
exit 1
