#!/usr/bin/env bash
# run.sh MAKE BUILD SCHEMA [MODEL]: the install, used as a user would (make
# test-install runs it from the repository's root; MODEL is demo when SCHEMA
# declares the demo's model, scripts/demo_model.py, else other). Installs
# into a temporary folder with `make install PREFIX=...`, then, with nothing
# of the repository on any path:
#   - builds examples/filter.c with `cc FILE $(pkg-config --cflags --libs triage)`
#     (and again with -std=c11 -Wall -Wextra -Werror -pedantic: the installed
#     headers are clean), and checks that it prints what `triage-demo judge
#     --rules` prints on the same frames, for several rules and both layouts,
#     and stops like judge on a stream cut inside a frame (the rules: the
#     default ones and some over the demo's optics; for another schema,
#     `keep has(O)` for an optic O that some messages have and others lack,
#     and the default ones when they fit it);
#   - checks that triage-gen, triage-demo and triage-bench print one version,
#     the .pc's, and that the installed triage-gen writes byte for byte the
#     C this build was made of;
#   - builds and runs a program with the proxy engine (h2proxy.h);
#   - builds a program for another schema (tests/models/orders.schema),
#     generated with the installed triage-gen and compiled beside it, linked
#     with the installed library for the runtime;
#   - checks that DESTDIR stages the same tree with PREFIX in the .pc, and
#     that make uninstall removes it.
set -euo pipefail
make=${1:-make}
build=${2:-build}
schema=${3:-schema/issue.schema}
model=${4:-demo}
cd "$(dirname "$0")/../.."
root=$PWD
. tests/support/split_optic.sh
case $build in /*) gen=$build/gen ;; *) gen=$root/$build/gen ;; esac
optics=$(sed -n 's/^OPTICS := //p' "$gen/optics.mk")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/usr
cc=${CC:-cc}
fail=0

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }

$make --no-print-directory BUILD="$build" install PREFIX="$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; echo "FAIL make install"; exit 1; }
echo "== installed tree ($prefix)"
(cd "$prefix" && find . -type f | sort | sed 's/^\.\///')

# From here on: the installed tree only, from a folder outside the repository.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PATH=$prefix/bin:$PATH
cp examples/filter.c schema/default.rules "$tmp/"
cp tests/models/orders.schema "$tmp/"
cd "$tmp"

flags=$(pkg-config --cflags --libs triage)
echo "== pkg-config --cflags --libs triage: $flags"
# shellcheck disable=SC2086
$cc filter.c $flags -o filter && ok "cc filter.c \$(pkg-config --cflags --libs triage)" ||
    { bad "the example does not build"; exit 1; }
# shellcheck disable=SC2086
$cc -std=c11 -Wall -Wextra -Werror -pedantic filter.c $flags -o filter-strict &&
    ok "the same with -std=c11 -Wall -Wextra -Werror -pedantic" ||
    bad "the example does not build with -std=c11 -Wall -Wextra -Werror -pedantic"

# The example against triage-demo judge, on the same frames.
triage-demo gen --count 3000 --seed 7 >late.frames
triage-demo gen --count 1000 --seed 8 --size 3 --layout first >first.frames
# The rules compared (all). main keeps some messages and drops others, so
# that the comparisons say something, and is the one the checks after them
# judge by; other is rules that are not main's.
: >empty.rules
if [ "$model" = demo ]; then
    printf '%s\n' 'keep kind == Bug' >bugs.rules
    printf '%s\n' 'drop severity == Sev4' 'keep votes.count >= 100 || tier != Critical' >mixed.rules
    main=default.rules other=bugs.rules
    all=(default.rules bugs.rules mixed.rules empty.rules)
else
    # shellcheck disable=SC2086
    o=$(split_optic triage-demo late.frames 3000 $optics)
    if [ -n "$o" ]; then
        printf 'keep has(%s)\n' "$o" >has.rules
        main=has.rules other=empty.rules
        all=("$main" empty.rules)
        echo "== rules: has.rules ($(cat has.rules)), empty.rules"
    else
        # no optic tells some messages from others (the schema may declare
        # none): every verdict compared is a drop
        main=empty.rules other=
        all=(empty.rules)
        echo "== rules: empty.rules (no optic of $schema is read from some messages and not others)"
    fi
    # the default rules, when they are this schema's (else judge refuses them)
    if triage-demo judge --rules default.rules </dev/null >/dev/null 2>&1; then
        all+=(default.rules)
        echo "== rules: and default.rules"
    fi
fi
for rules in "${all[@]}"; do
    for frames in late.frames first.frames; do
        ./filter "$rules" <"$frames" >got || { bad "filter $rules < $frames: exit $?"; continue; }
        triage-demo judge --rules "$rules" <"$frames" >want
        if cmp -s got want; then
            ok "filter $rules < $frames: $(wc -l <got) lines, $(grep -c ' keep$' got || true) kept, as judge"
        else
            bad "filter $rules < $frames differs from triage-demo judge:"
            diff got want | head -5
        fi
    done
done
if [ "$main" != empty.rules ]; then
    kept=$(./filter "$main" <late.frames | grep -c ' keep$' || true)
    [ "$kept" -gt 0 ] && [ "$kept" -lt 3000 ] && ok "$main keeps $kept of 3000" ||
        bad "$main keeps $kept of 3000"
fi
# a stream cut inside a frame: the lines before it, exit 2
size=$(wc -c <late.frames)
head -c $((size - 3 < 100000 ? size - 3 : 100000)) late.frames >cut.frames
rc=0; ./filter "$main" <cut.frames >got 2>err || rc=$?
rj=0; triage-demo judge --rules "$main" <cut.frames >want 2>/dev/null || rj=$?
if [ "$rc" = 2 ] && [ "$rj" = 2 ] && cmp -s got want; then
    ok "a cut stream: $(wc -l <got) lines, then exit 2 ($(cat err))"
else
    bad "a cut stream: filter exit $rc, judge exit $rj"
fi
rc=0; ./filter no.rules </dev/null 2>err || rc=$?
[ "$rc" = 2 ] && ok "rules that cannot be read: exit 2 ($(cat err))" || bad "no.rules: exit $rc"

# Rules written as C by the installed triage-rulesc build against the install,
# fit the rules of their text, and judge as the interpreter does.
cat >compiled.c <<'EOF_C'
#include <stdio.h>
#include <string.h>

#include "rules.h"
#include "tr_optics.h"

extern const ru_compiled my_rules;

int main(int argc, char **argv)
{
    char err[256];
    /* argv[1]: the rules my_rules was written from; argv[2], if any, others */
    ru_rules *r = argc > 1 ? ru_load(argv[1], &tr_schema, err, sizeof err) : NULL;
    ru_rules *other = argc > 2 ? ru_load(argv[2], &tr_schema, err, sizeof err) : NULL;
    if (r == NULL || (argc > 2 && other == NULL) || !ru_compiled_fits(&my_rules, r) ||
        (other != NULL && ru_compiled_fits(&my_rules, other)))
        return 1;
    static ru_subject a, b;
    static unsigned char buf[1 << 20], mem_a[1 << 20], mem_b[1 << 20];
    ar_arena arena_a, arena_b; /* strings are unescaped into them */
    ar_init(&arena_a, mem_a, sizeof mem_a);
    ar_init(&arena_b, mem_b, sizeof mem_b);
    if (!ru_subject_init(&a, &tr_schema, &arena_a) || !ru_subject_init(&b, &tr_schema, &arena_b))
        return 1;
    int judged = 0;
    for (;;) { /* gRPC frames on stdin: 5 bytes of prefix, then the message */
        unsigned char h[5];
        if (fread(h, 1, 5, stdin) != 5)
            break;
        size_t n = (size_t)h[1] << 24 | (size_t)h[2] << 16 | (size_t)h[3] << 8 | h[4];
        if (n > sizeof buf || fread(buf, 1, n, stdin) != n)
            return 1;
        ru_subject_bytes(&a, buf, n);
        ru_subject_bytes(&b, buf, n);
        if (ru_decide(r, &a) != my_rules.decide(r, &b) || a.reads != b.reads)
            return 1;
        judged++;
    }
    printf("%d\n", judged);
    ru_free(r);
    ru_free(other);
    return judged > 0 ? 0 : 1;
}
EOF_C
# shellcheck disable=SC2086
if triage-rulesc "$main" my_rules my_rules.c &&
    $cc -std=c11 -Wall -Wextra -Werror compiled.c my_rules.c $flags -o compiled &&
    judged=$(./compiled "$main" ${other:+"$other"} <first.frames); then
    ok "triage-rulesc $main: the C builds against the install and decides $judged messages as the interpreter"
else
    bad "triage-rulesc: the rules as C do not build against the install or decide otherwise"
fi

# One version everywhere.
v=$(sed -n 's/^#define TR_VERSION "\(.*\)"$/\1/p' "$root/runtime/version.h")
for p in triage-gen triage-demo triage-bench triage-rulesc; do
    got=$($p --version)
    [ "$got" = "$p $v" ] && ok "$p --version: $got" || bad "$p --version: '$got', not '$p $v'"
done
[ "$(pkg-config --modversion triage)" = "$v" ] && ok "triage.pc Version: $v" ||
    bad "triage.pc Version: $(pkg-config --modversion triage)"

# The installed generator writes what this build compiled, byte for byte
# (given the schema's path as the Makefile gives it, from the root).
(cd "$root" && triage-gen --out "$tmp/gen" "$schema")
same=1
for f in gen/*; do
    cmp -s "$f" "$gen/${f#gen/}" || { bad "triage-gen --out: $f differs from $gen"; same=0; }
done
[ "$same" = 1 ] && ok "triage-gen --out writes $build/gen's $(ls gen | wc -l) files byte for byte"
triage-gen --check orders.schema && ok "triage-gen --check orders.schema" ||
    bad "triage-gen --check orders.schema"

# Another schema: its generated code compiled beside the program, the
# runtime from the library (its members alone are pulled in).
triage-gen --out orders orders.schema
cat >orders.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include "tr_optics.h"
int main(void)
{
    printf("%s %d optics\n", tr_schema.schema, tr_schema.noptics);
    return tr_schema.noptics > 0 && strcmp(tr_schema.schema, "orders.schema") == 0 ? 0 : 1;
}
EOF
# shellcheck disable=SC2086
if $cc -std=c11 -Werror -Iorders orders.c orders/*.c $flags -o orders-prog && ./orders-prog >got; then
    ok "a program for orders.schema: $(cat got)"
else
    bad "a program for orders.schema does not build or run"
fi

# The proxy engine from the library: an engine on an ephemeral port with
# a judge of the program's own, stopped before it runs.
cat >proxy.c <<'EOF'
#include <stdio.h>
#include <h2proxy.h>
static int judge(void *ctx, const hp_message *m, char *why, size_t n)
{
    (void)ctx, (void)why, (void)n;
    return m->n > 0 ? HP_KEEP : HP_DROP;
}
int main(void)
{
    char err[256];
    int fd;
    uint16_t port;
    if (hp_listen("127.0.0.1:0", 1, &fd, &port, err, sizeof err) != 0)
        return fprintf(stderr, "%s\n", err), 1;
    hp_config c = {.listen_fd = fd, .upstream = "127.0.0.1:1", .judge = judge, .stop_fd = -1};
    hp_engine *e = hp_new(&c, err, sizeof err);
    if (e == NULL)
        return fprintf(stderr, "%s\n", err), 1;
    hp_stop(e);
    int rc = hp_run(e, err, sizeof err);
    printf("an engine on port %u, stopped: %d calls\n", (unsigned)port,
           (int)hp_stats_of(e)->calls);
    hp_free(e);
    return rc;
}
EOF
# shellcheck disable=SC2086
if $cc -std=c11 -Wall -Wextra -Werror proxy.c $flags -o proxy-prog && ./proxy-prog >got; then
    ok "a program with the proxy engine (h2proxy.h): $(cat got)"
else
    bad "a program with h2proxy.h does not build or run"
fi

# DESTDIR stages the same tree; the .pc names PREFIX.
cd "$root"
$make --no-print-directory BUILD="$build" install PREFIX=/opt/triage DESTDIR="$tmp/stage" \
    >"$tmp/stage.log" 2>&1 || { cat "$tmp/stage.log"; bad "make install DESTDIR"; }
if diff <(cd "$prefix" && find . -type f | sort) <(cd "$tmp/stage/opt/triage" && find . -type f | sort) >/dev/null &&
    grep -qx 'prefix=/opt/triage' "$tmp/stage/opt/triage/lib/pkgconfig/triage.pc"; then
    ok "make install DESTDIR=STAGE PREFIX=/opt/triage: the same files, prefix=/opt/triage"
else
    bad "make install DESTDIR: another tree, or another prefix"
fi
$make --no-print-directory BUILD="$build" uninstall PREFIX="$prefix" >/dev/null
left=$(find "$prefix" -type f | wc -l)
[ "$left" = 0 ] && ok "make uninstall leaves no file" || bad "make uninstall leaves $left files"

[ "$fail" = 0 ] && echo "install: every check passed" || echo "install: some checks FAILED"
exit "$fail"
