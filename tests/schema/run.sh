#!/usr/bin/env bash
# run.sh: golden tests of the schema checker's diagnostics. Run from the repo
# root (make test-gen does):  tests/schema/run.sh
#
#   tests/schema/NAME.schema + NAME.expected   a broken schema: `trgen --check`
#       must exit 1 with exactly NAME.expected on stderr (paths as given on the
#       command line, i.e. tests/schema/NAME.schema)
#   tests/schema/ok_NAME.schema                a valid schema: exit 0, no output
#   schema/issue.schema                        the real schema: exit 0, no output
#
# To re-bless a case after a deliberate change of wording, check the new text
# by hand, then:  PYTHONPATH=gen scripts/python.sh -m trgen --check \
#     tests/schema/NAME.schema 2> tests/schema/NAME.expected
set -u
cd "$(dirname "$0")/../.." || exit 2

PY=scripts/python.sh
passed=0
failed=0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

check() {  # check SCHEMA [EXPECTED]: runs trgen --check, judges the result
    local schema=$1 expected=${2:-} name rc
    name=${schema#tests/schema/}
    name=${name%.schema}
    PYTHONPATH=gen "$PY" -m trgen --check "$schema" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ -s "$tmp/out" ]; then
        echo "FAIL $name: wrote to stdout:"
        cat "$tmp/out"
        failed=$((failed + 1))
    elif [ -z "$expected" ]; then
        if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ]; then
            echo "PASS $name (valid)"
            passed=$((passed + 1))
        else
            echo "FAIL $name: expected exit 0 and no diagnostics, got exit $rc:"
            cat "$tmp/err"
            failed=$((failed + 1))
        fi
    elif [ ! -f "$expected" ]; then
        echo "FAIL $name: no $expected (broken cases need one; valid ones are named ok_*)"
        failed=$((failed + 1))
    elif ! diff -u "$expected" "$tmp/err" >"$tmp/diff"; then
        echo "FAIL $name: stderr differs from $expected (exit $rc):"
        cat "$tmp/diff"
        failed=$((failed + 1))
    elif [ "$rc" -ne 1 ]; then
        echo "FAIL $name: exit status $rc, expected 1"
        failed=$((failed + 1))
    else
        echo "PASS $name"
        passed=$((passed + 1))
    fi
}

check schema/issue.schema
for schema in tests/schema/*.schema; do
    [ -e "$schema" ] || continue
    case ${schema##*/} in
        ok_*) check "$schema" ;;
        *) check "$schema" "${schema%.schema}.expected" ;;
    esac
done
for expected in tests/schema/*.expected; do
    [ -e "$expected" ] || continue
    if [ ! -f "${expected%.expected}.schema" ]; then
        echo "FAIL ${expected##*/}: no schema for it"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
