#!/usr/bin/env bash
# demo.sh BUILD/triage-demo: the programs of a schema other than the demo's,
# built whole (make SCHEMA=F BUILD=D all: triage-demo and triage-bench, the
# latter beside it), run on its own generated messages. Any schema the
# checker accepts must build and run; tests/unit/test_model.c and
# test_rules_model.c check the generated code and the rules engine on it,
# this the commands a user runs:
#
#   - judge --print of every optic readable from a message, one column each;
#   - for each of those optics, --where 'has(O)' keeps exactly the messages
#     whose column is not '-', and '!has(O)' the others, through both readers;
#   - judge with no rules: the default rules, or (written for another schema)
#     every message kept with a warning saying why;
#   - check --level schema passes every generated message;
#   - run: the three services on loopback, the downstream's check passing;
#   - triage-bench --quick stream.
#
# The checks and $tmp are the end-to-end scripts' (tests/e2e/lib.sh). Every
# process runs under timeout; nothing listens beyond loopback.
set -u
. "$(dirname "$0")/../e2e/lib.sh" # $demo from $1
build=$(dirname "$demo")
bench=$build/triage-bench
T="timeout -k 5 120"

n=300
$T "$demo" gen --count $n --seed 11 --size 3 >"$tmp/frames"
check "gen: $n messages" test -s "$tmp/frames"

# the optics, as the build generated them (optics.mk), and those a message
# can be read for (the others start inside a type no optic leads to)
optics=$(sed -n 's/^OPTICS := //p' "$build/gen/optics.mk")
readable=()
for o in $optics; do
    if $T "$demo" judge --print "$o" <"$tmp/frames" >"$tmp/col_$o" 2>"$tmp/err"; then
        readable+=("$o")
    elif ! grep -q "cannot be read from a message" "$tmp/err"; then
        check "judge --print $o: $(head -1 "$tmp/err")" false
    fi
done
echo "     ${#readable[@]} of the $(echo $optics | wc -w) optics can be read from a message"

if [ ${#readable[@]} -gt 0 ]; then
    all=$(IFS=,; echo "${readable[*]}")
    $T "$demo" judge --print "$all" <"$tmp/frames" >"$tmp/print"
    check "judge --print of ${#readable[@]} optics: exit 0" test $? -eq 0
    check "judge --print: one line a message" test "$(wc -l <"$tmp/print")" -eq $n
    cols=$(awk -F'\t' '{ print NF }' "$tmp/print" | sort -u)
    check "judge --print: ${#readable[@]} columns on every line ($cols)" test "$cols" = "${#readable[@]}"
fi

i=0
for o in "${readable[@]}"; do
    i=$((i + 1))
    # the column of the print of all equals the print of this optic alone
    check "$o: its column of the print of all is its print alone" \
        cmp -s <(cut -f$i "$tmp/print") "$tmp/col_$o"
    present=$(grep -cv '^-$' "$tmp/col_$o")
    for reader in optics decode; do
        $T "$demo" judge --reader $reader --where "has($o)" <"$tmp/frames" >"$tmp/has"
        $T "$demo" judge --reader $reader --where "!has($o)" <"$tmp/frames" >"$tmp/hasnt"
        kept=$(grep -c ' keep$' "$tmp/has")
        other=$(grep -c ' keep$' "$tmp/hasnt")
        check "$o ($reader): has() keeps the $present messages it prints, !has() the $((n - present)) others ($kept, $other)" \
            test "$kept" -eq "$present" -a "$other" -eq $((n - present))
        # line by line: the messages kept are the ones with a value
        check "$o ($reader): the same messages, line by line" \
            cmp -s <(awk '{ print ($NF == "keep") ? "v" : "-" }' "$tmp/has") \
            <(awk '{ print ($0 == "-") ? "-" : "v" }' "$tmp/col_$o")
    done
done

# no rules given: the default rules, or every message kept and a warning
$T "$demo" judge <"$tmp/frames" >"$tmp/default" 2>"$tmp/err"
check "judge with no rules: exit 0" test $? -eq 0
if grep -q "the default rules do not fit" "$tmp/err"; then
    check "default rules of another schema: every message kept" \
        test "$(grep -c ' keep$' "$tmp/default")" -eq $n
    check "default rules of another schema: the warning says why and what to do" \
        grep -q "give --rules FILE or --where EXPR" "$tmp/err"
else
    check "default rules: one verdict a message" test "$(wc -l <"$tmp/default")" -eq $n
fi

$T "$demo" check --level schema <"$tmp/frames" >"$tmp/check"
check "check --level schema: every message ok" test "$(grep -c '^ok$' "$tmp/check")" -eq $n

$T "$demo" run 3000 >"$tmp/run" 2>"$tmp/run.err"
rc=$?
check "run 3000: exit 0 (rc $rc)" test $rc -eq 0
check "run: the downstream's counts and digests match the filter's" \
    grep -q "the downstream's counts and digests match the filter's" "$tmp/run"

$T "$bench" --quick stream >"$tmp/bench" 2>&1
check "triage-bench --quick stream: exit 0" test $? -eq 0

finish
