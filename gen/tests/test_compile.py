"""Every schema the checker accepts generates C that compiles warning-free.

Small schemas, each aimed at one shape the templates must handle (nothing
declared but the root, declarations nothing uses, every optional type,
containers of containers, a union case without fields, an optic on every
kind of focus, ...) are generated into a temporary folder, run through re2c
as the Makefile does, and compiled with gcc and clang under the Makefile's
warning flags and -Werror (make test-models builds tests/models/*.schema in
full). Skipped when jinja2, re2c or either compiler is missing.

Run from the repo root: PYTHONPATH=gen python3 -m unittest discover -s gen/tests
"""

import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.dirname(HERE)
ROOT = os.path.dirname(GEN)

sys.path.insert(0, GEN)

from trgen.schema import parse  # noqa: E402
from test_schema import run_trgen  # noqa: E402
from randschema import random_schema  # noqa: E402

try:
    import jinja2  # noqa: F401
    HAVE_JINJA = True
except ImportError:
    HAVE_JINJA = False

COMPILERS = [c for c in ("gcc", "clang") if shutil.which(c)]
RE2C = shutil.which("re2c")
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes",
          "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "runtime")]
RE2C_FLAGS = ["-W", "-Werror", "--no-generation-date", "--no-version", "-i"]

# name -> schema text. Each must pass the checker.
SCHEMAS = {
    "only_root": """
root A
record A { x: i32 }
""",
    "unused_declarations": """
root A
record A { n: i64 }
enum Color { Red Green }
record Unused { x: i32  c: Color  l: list<Unused2> }
record Unused2 { s: string  b: bool }
union Lone tag "t" { One { x: f64 } }
""",
    # An enum's field turned into a string: the enum stays declared, unused.
    "enum_now_string": """
root A
record A { frames: list<Frame> }
record Frame { module: string  line: i32 }
enum Module { Auth Billing }
optic module = A.frames[0].module
""",
    "every_optional": """
root A
record A {
    a: optional i32
    b: optional i64
    c: optional f64
    d: optional bool
    e: optional string
    f: optional E
    g: optional B
    h: optional U
}
record B { x: i32 }
enum E { One Two }
union U tag "kind" { P { x: optional B } Q { y: optional E } }
optic a = A.a
optic b = A.b
optic c = A.c
optic d = A.d
optic e = A.e
optic f = A.f
optic g = A.g
optic gx = A.g.x
optic h = A.h raw
optic hy = A.h.Q.y
""",
    "containers_of_containers": """
root A
record A {
    ll: list<list<i32>>
    lm: list<map<E>>
    ml: map<list<string>>
    mm: map<map<B>>
    mr: map<B>
    lu: list<U>
}
record B { x: i32  f: f64 }
enum E { One Two }
union U tag "t" { P { b: B } Q { l: list<list<bool>> } }
optic ll = A.ll raw
optic ll0 = A.ll[0] raw
optic ll01 = A.ll[0][1]
optic lm0 = A.lm[0] raw
optic mr = A.mr raw
optic lu2 = A.lu[2] raw
optic lu2t = A.lu[2].t
optic lu2pbx = A.lu[2].P.b.x
optic ql = U.Q.l[0][0]
""",
    "empty_union_cases": """
root A
record A { u: U  v: V }
union U tag "t" { P { } Q { x: i32 } }
union V tag "t" { R { } }
optic p = U.P raw
optic ut = A.u.t
optic vr = A.v.R raw
""",
    # An optic focused on every kind of value.
    "every_focus": """
root A
record A {
    i: i32
    j: i64
    f: f64
    b: bool
    s: string
    e: E
    r: B
    u: U
    l: list<B>
    m: map<i32>
}
record B { x: i32  s: string }
enum E { One Two Three }
union U tag "type" { P { b: B  e: E } Q { s: string } }
optic i = A.i
optic j = A.j
optic f = A.f
optic b = A.b
optic s = A.s
optic e = A.e
optic r = A.r
optic rraw = A.r raw
optic u = A.u
optic uraw = A.u raw
optic kind = U.type
optic utag = A.u.type
optic l = A.l raw
optic l1 = A.l[1]
optic l1s = A.l[1].s
optic m = A.m raw
optic p = U.P raw
optic pb = U.P.b
optic pe = U.P.e
optic qs = U.Q.s
optic upe = uraw . pe
""",
    # The root is a record; a union may hold the only string, bool or enum.
    "leaves_only_in_union": """
root A
record A { u: U }
union U tag "t" { P { s: string } Q { b: bool } R { e: E } }
enum E { X }
""",
    "deep_nesting": """
root A
record A { b: B }
record B { c: list<C> }
record C { d: map<D> }
record D { e: optional E }
record E { u: U }
union U tag "k" { V { f: list<list<F>> } }
record F { g: G }
enum G { H I }
optic g = A.b.c[3].d raw
optic deep = E.u.V.f[0][1].g
""",
    # Map steps: keys with escapes, empty, non-ASCII, '*/' and trigraphs (in
    # comments), composed, after an index, in a row; a tag needing escapes.
    "map_keys": r"""
root A
record A { tags: map<string>  people: map<P>  mm: map<map<i32>>  l: list<map<E>>  u: U }
record P { name: string  team: T }
record T { name: string }
enum E { X Y }
union U tag "ty\"pe/*??/" { C1 { m: map<P> } C2 { x: i32 } }
optic env = A.tags["env"]
optic esc = A.tags["a\"b\\c\n\u00e9*/??/\/"]
optic utf8 = A.tags["é€😀"]
optic pair = A.tags["\ud83d\ude00"]
optic empty = A.tags[""]
optic team = A.people["x"].team.name
optic personRaw = A.people["x"] raw
optic mm = A.mm["a"]["b"]
optic lm = A.l[1]["k"]
optic c1 = U.C1.m["zz"].name
optic people = A.people raw
optic pname = P.team.name
optic pteam = personRaw . pname
""",
    # Schema names that are C keywords, macros of the included headers, or
    # reserved: members get a '_' after them (c_field), the rest a prefix.
    "c_names": """
root A
record A {
    int: i32
    EOF: i32
    NULL: optional string
    __typename: string
    _Id: i64
    TR_MODEL_H: bool
    INT32_MAX: f64
    default: U
    e: Kind
    s: switch
}
record switch { case: i32  x: optional i32 }
union U tag "type" { int { x: i32 } default { y: i32  while: switch } }
enum Kind { OK int NULL EOF }
optic int = A.int
optic NULL = A.NULL
optic default = A.default raw
optic sw = A.s
optic ui = U.int.x
optic dw = U.default.while.case
optic kind = A.default.type
""",
    # Tags that are no names: a first byte past ASCII (the decoder's switch
    # on a uint8_t, the rest compared by bytes), and text that would end a C
    # comment or make a trigraph where paths are written in comments.
    "tag_bytes": r"""
root A
record A { u: U  v: V  w: W }
union U tag "é" { X { x: i32 } Y { y: i32 } }
union V tag "*/" { X { x: i32 } }
union W tag "??/\n" { X { x: i32 } }
optic u = U["é"]
optic v = V["*/"]
optic w = W["??/\n"]
optic ux = A.u.X.x
""",
    # @range at the ends of the integer types: INT64_MIN has no literal.
    "range_extremes": """
root A
record A {
    a: i64 @range(-9223372036854775808, 9223372036854775807)
    b: i32 @range(-2147483648, 2147483647)
}
optic a = A.a
""",
    # The largest index the checker takes: the scanner's loop counter is an int.
    "largest_index": """
root A
record A { l: list<i64> }
optic last = A.l[2147483647]
""",
}


def compile_dir(d):
    """re2c, then gcc and clang over one generated folder: a list of failures."""
    fails = []
    for re_file in sorted(glob.glob(os.path.join(d, "*.re"))):
        r = subprocess.run([RE2C, *RE2C_FLAGS, re_file, "-o", re_file[:-3] + ".c"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            fails.append(f"re2c {os.path.basename(re_file)}:\n{r.stdout}")
    sources = sorted(glob.glob(os.path.join(d, "*.c")))

    def one(cc):
        # Each compiler once over every file (one start instead of one a
        # file). clang warns from its front end alone; gcc's unused-function
        # and flow warnings need the optimiser (-O2, as the Makefile builds),
        # not the assembler: -S, its output into a folder of its own.
        with tempfile.TemporaryDirectory() as out:
            args = ["-fsyntax-only"] if cc == "clang" else ["-S"]
            r = subprocess.run([cc, *CFLAGS, "-I" + d, *args, *sources], cwd=out,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return None if r.returncode == 0 else f"{cc}:\n{r.stdout[:3000]}"

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        fails += [f for f in ex.map(one, COMPILERS) if f]
    return fails


@unittest.skipUnless(HAVE_JINJA and RE2C and len(COMPILERS) == 2,
                     "needs jinja2, re2c, gcc and clang")
class Compiles(unittest.TestCase):
    maxDiff = None

    def check_schema_file(self, path, label):
        with tempfile.TemporaryDirectory() as d:
            r = run_trgen(path, d)
            self.assertEqual((r.returncode, r.stderr), (0, ""), label)
            self.assertEqual(compile_dir(d), [], label)

    def check_text(self, name, text):
        parse(text, name + ".schema")  # accepted by the checker
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, name + ".schema")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            self.check_schema_file(path, name)

    def test_edge_schemas(self):
        for name, text in SCHEMAS.items():
            with self.subTest(schema=name):
                self.check_text(name, text)

    def test_random_schemas(self):
        """Shapes nobody wrote down: random schemas (randschema.py), each
        checked, generated and compiled as the others (TR_RANDOM_SCHEMAS=N:
        the first N seeds instead of 6)."""
        n = int(os.environ.get("TR_RANDOM_SCHEMAS", "6"))
        for seed in range(n):
            with self.subTest(seed=seed):
                self.check_text(f"random{seed}", random_schema(seed))


if __name__ == "__main__":
    unittest.main()
