"""Tests of gen/trgen/schema.py: the real schema's IR, every check's exact
diagnostic (file:line:col), the command line's behaviour on error, and that
generation is reproducible.

Run from the repo root: PYTHONPATH=gen python3 -m unittest discover -s gen/tests
"""

import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.dirname(HERE)
ROOT = os.path.dirname(GEN)
SCHEMA = "schema/issue.schema"  # relative to ROOT, as the Makefile passes it

sys.path.insert(0, GEN)

from trgen import names  # noqa: E402
from trgen.schema import Enum, Pos, Record, SchemaError, Union, parse  # noqa: E402
from trgen.version import VERSION  # noqa: E402

try:
    import jinja2  # noqa: F401
    HAVE_JINJA = True
except ImportError:
    HAVE_JINJA = False


def load_real():
    with open(os.path.join(ROOT, SCHEMA), encoding="utf-8") as f:
        return parse(f.read(), SCHEMA)


def lines(*ls):
    """A schema from its lines: line N of the text is ls[N-1]."""
    return "\n".join(ls) + "\n"


def run_trgen(*args, env=None):
    e = dict(os.environ)
    e["PYTHONPATH"] = GEN
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "trgen", *args], cwd=ROOT, env=e,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ---------------------------------------------------------------- the IR

# A model shaped like the demo's (a root with every kind of field, nested
# records, a tagged union, enums, optics of every kind of step), written
# here so that editing schema/issue.schema needs no test edit. Line numbers
# are in the comments: positions are part of what is checked.
SAMPLE_FILE = "sample.schema"
SAMPLE = lines(
    "# a comment",                                   # 1
    "root Issue",                                    # 2
    "",                                              # 3
    "record Issue {",                                # 4
    "    id: i64",                                   # 5
    "    title: string",                             # 6
    "    reporter: Person",                          # 7
    "    status: Status",                            # 8
    "    resolution: optional Resolution",           # 9
    "    labels: list<string>",                      # 10
    "    watchers: list<Person>",                    # 11
    "    dueAt: optional i64",                       # 12
    "    estimate: f64",                             # 13
    "    points: i32",                               # 14
    "    flaky: bool",                               # 15
    "    detail: Detail",                            # 16
    "    tags: map<string>",                         # 17
    "    checklist: list<CheckItem>",                # 18
    "}",                                             # 19
    "record Person { name: string  team: Team }",    # 20
    "record Team { name: string }",                  # 21
    "record CheckItem { text: string  done: bool }",  # 22
    'union Detail tag "type" {',                     # 23
    "    Bug { trace: Trace }",                      # 24
    "    Incident { severity: Severity  impact: Impact }",  # 25
    "    Request { votes: Votes }",                  # 26
    "}",                                             # 27
    "record Trace { frames: list<Frame> }",          # 28
    "record Frame { module: Module  line: i32 }",    # 29
    "record Impact { service: Service }",            # 30
    "record Service { tier: Tier }",                 # 31
    "record Votes { count: i32 @range(0, 200) }",    # 32
    "enum Status { Open InProgress Closed }",        # 33
    "enum Resolution { Fixed WontFix }",             # 34
    "enum Severity { Sev1 Sev2 }",                   # 35
    "enum Tier { Critical Minor }",                  # 36
    "enum Module { Auth Billing }",                  # 37
    "optic detail = Issue.detail raw",               # 38
    "optic kind = Detail.type",                      # 39
    "optic severity = Detail.Incident.severity",     # 40
    "optic tier = Detail.Incident.impact.service.tier",  # 41
    "optic module = Detail.Bug.trace.frames[0].module",  # 42
    "optic votes = Detail.Request.votes",            # 43
    "optic severityOf = detail . severity",          # 44
    'optic env = Issue.tags["env"]',                 # 45
)

ISSUE_FIELDS = """
id i64 | title string | reporter Person | status Status | resolution ?Resolution |
labels list<string> | watchers list<Person> | dueAt ?i64 | estimate f64 | points i32 |
flaky bool | detail Detail | tags map<string> | checklist list<CheckItem>
"""


def spell(f):
    return ("?" if f.optional else "") + f.type.spell()


class IR(unittest.TestCase):
    """What the front end makes of a schema: declarations resolved, fields in
    order with their types, optic paths as checked steps, and positions."""

    @classmethod
    def setUpClass(cls):
        cls.s = parse(SAMPLE, SAMPLE_FILE)

    def test_root(self):
        self.assertIsInstance(self.s.root, Record)
        self.assertEqual(self.s.root.name, "Issue")
        self.assertEqual(self.s.root_pos, Pos(SAMPLE_FILE, 2, 6))

    def test_issue_fields_in_model_order(self):
        want = [tuple(x.split()) for x in ISSUE_FIELDS.replace("\n", " ").split("|")]
        issue = self.s.decls["Issue"]
        self.assertEqual([(f.name, spell(f)) for f in issue.fields], want)
        self.assertEqual([f.index for f in issue.fields], list(range(len(want))))
        self.assertEqual(issue.fields[11].name, "detail")

    def test_resolved_types(self):
        by = {f.name: f for f in self.s.decls["Issue"].fields}
        self.assertIs(by["reporter"].type.decl, self.s.decls["Person"])
        self.assertIs(by["detail"].type.decl, self.s.decls["Detail"])
        self.assertIs(by["watchers"].type.elem.decl, self.s.decls["Person"])
        self.assertEqual(by["tags"].type.kind, "map")
        self.assertEqual(by["tags"].type.elem.name, "string")
        self.assertTrue(by["resolution"].optional)
        self.assertFalse(by["status"].optional)

    def test_records(self):
        want = {
            "Person": "name string, team Team",
            "Team": "name string",
            "CheckItem": "text string, done bool",
            "Trace": "frames list<Frame>",
            "Frame": "module Module, line i32",
            "Impact": "service Service",
            "Service": "tier Tier",
            "Votes": "count i32",
        }
        got = {r.name: ", ".join(f"{f.name} {spell(f)}" for f in r.fields)
               for r in self.s.records if r.name != "Issue"}
        self.assertEqual(got, want)
        self.assertEqual(self.s.decls["Votes"].fields[0].range, (0, 200))

    def test_enums(self):
        self.assertEqual([(e.name, " ".join(c.name for c in e.cases)) for e in self.s.enums], [
            ("Status", "Open InProgress Closed"), ("Resolution", "Fixed WontFix"),
            ("Severity", "Sev1 Sev2"), ("Tier", "Critical Minor"), ("Module", "Auth Billing")])

    def test_union_detail(self):
        self.assertEqual([u.name for u in self.s.unions], ["Detail"])
        d = self.s.decls["Detail"]
        self.assertIsInstance(d, Union)
        self.assertEqual(d.tag, "type")
        self.assertEqual([c.name for c in d.cases], ["Bug", "Incident", "Request"])
        self.assertEqual([c.case_index for c in d.cases], [0, 1, 2])
        for c in d.cases:
            self.assertIs(c.union, d)
            self.assertTrue(c.is_case)
        fields = {c.name: [(f.name, spell(f)) for f in c.fields] for c in d.cases}
        self.assertEqual(fields, {"Bug": [("trace", "Trace")],
                                  "Incident": [("severity", "Severity"), ("impact", "Impact")],
                                  "Request": [("votes", "Votes")]})

    def test_declaration_order(self):
        self.assertEqual([d.name for d in self.s.order], [
            "Issue", "Person", "Team", "CheckItem", "Detail", "Trace", "Frame", "Impact",
            "Service", "Votes", "Status", "Resolution", "Severity", "Tier", "Module"])

    def optic(self, name):
        return next(o for o in self.s.optics if o.name == name)

    def steps(self, name):
        return [(st.kind, st.index if st.kind == "index" else st.key if st.kind == "key"
                 else st.name, st.type.spell()) for st in self.optic(name).steps]

    def test_optic_names(self):
        self.assertEqual([o.name for o in self.s.optics],
                         ["detail", "kind", "severity", "tier", "module", "votes", "severityOf",
                          "env"])

    def test_optic_raw_field(self):
        o = self.optic("detail")
        self.assertTrue(o.raw)
        self.assertEqual(o.source.spell(), "Issue")
        self.assertEqual(self.steps("detail"), [("field", "detail", "Detail")])
        self.assertIs(o.focus.decl, self.s.decls["Detail"])
        self.assertIs(o.steps[0].field, self.s.decls["Issue"].fields[11])

    def test_root_views(self):
        # the raw optics on one field of the root: what tr_validate_Issue_views hands back
        from trgen.emit import root_views
        self.assertEqual([(v.optic, v.field, v.view) for v in root_views(self.s)],
                         [("detail", "detail", "tr_view_Detail")])

    def test_optic_tag(self):
        o = self.optic("kind")
        self.assertFalse(o.raw)
        self.assertEqual(o.source.spell(), "Detail")
        self.assertEqual(self.steps("kind"), [("tag", "type", "Detail.type")])
        self.assertEqual(o.focus.kind, "tag")

    def test_optic_case_then_field(self):
        o = self.optic("severity")
        self.assertEqual(self.steps("severity"),
                         [("case", "Incident", "Detail.Incident"), ("field", "severity", "Severity")])
        self.assertIs(o.steps[0].case, self.s.decls["Detail"].cases[1])
        self.assertIsInstance(o.focus.decl, Enum)

    def test_optic_nested_fields(self):
        self.assertEqual(self.steps("tier"), [
            ("case", "Incident", "Detail.Incident"), ("field", "impact", "Impact"),
            ("field", "service", "Service"), ("field", "tier", "Tier")])
        self.assertIs(self.optic("tier").focus.decl, self.s.decls["Tier"])

    def test_optic_index(self):
        self.assertEqual(self.steps("module"), [
            ("case", "Bug", "Detail.Bug"), ("field", "trace", "Trace"),
            ("field", "frames", "list<Frame>"), ("index", 0, "Frame"),
            ("field", "module", "Module")])

    def test_optic_record_focus(self):
        self.assertEqual(self.steps("votes"), [
            ("case", "Request", "Detail.Request"), ("field", "votes", "Votes")])
        self.assertIs(self.optic("votes").focus.decl, self.s.decls["Votes"])

    def test_optic_map_key(self):
        self.assertEqual(self.steps("env"), [("field", "tags", "map<string>"),
                                             ("key", "env", "string")])

    def test_composition(self):
        o = self.optic("severityOf")
        self.assertEqual(o.compose, [("detail", Pos(SAMPLE_FILE, 44, 20)),
                                     ("severity", Pos(SAMPLE_FILE, 44, 29))])
        self.assertEqual(o.source.spell(), "Issue")
        self.assertEqual(self.steps("severityOf"), [
            ("field", "detail", "Detail"), ("case", "Incident", "Detail.Incident"),
            ("field", "severity", "Severity")])
        self.assertIs(o.focus.decl, self.s.decls["Severity"])
        self.assertFalse(o.raw)  # raw only when the last part is
        # Flattening copies: the parts' own steps are left as they were.
        self.assertEqual(len(self.optic("detail").steps), 1)

    def test_positions(self):
        issue = self.s.decls["Issue"]
        self.assertEqual(issue.pos, Pos(SAMPLE_FILE, 4, 8))
        self.assertEqual(issue.fields[0].pos, Pos(SAMPLE_FILE, 5, 5))
        self.assertEqual(self.optic("tier").pos, Pos(SAMPLE_FILE, 41, 7))
        self.assertEqual(self.optic("env").steps[1].pos, Pos(SAMPLE_FILE, 45, 24))


class RealSchema(unittest.TestCase):
    """schema/issue.schema, whatever it declares: it checks, and each of its
    optics resolves to steps that end at its focus."""

    def test_checks_and_every_optic_resolves(self):
        s = load_real()
        self.assertIsInstance(s.root, Record)
        for o in s.optics:
            self.assertTrue(o.steps, o.name)
            self.assertIs(o.steps[-1].type, o.focus, o.name)
            self.assertEqual(o.source.kind, "named", o.name)

    def test_root_views_are_raw_optics_on_root_fields(self):
        from trgen.emit import root_views
        s = load_real()
        for v in root_views(s):
            o = next(o for o in s.optics if o.name == v.optic)
            self.assertTrue(o.raw)
            self.assertIs(o.source.decl, s.root)
            self.assertEqual([st.name for st in o.steps], [v.field])


    def test_level_sets(self):
        """One level matcher per type optics start in: every key their first
        steps look for there, once, a union's tag first."""
        from trgen.emit import level_sets, scanner_plan
        s = parse(lines("root A", "record A { d: D  n: i32  m: map<i32> }",
                        'union D tag "kind" { P { x: i32  y: i32 } Q { x: i32 } }',
                        "optic n = A.n", "optic mk = A.m[\"k\"]", "optic d = A.d raw",
                        "optic n2 = A.n", "optic py = D.P.y", "optic qx = D.Q.x",
                        "optic px = D.P.x", "optic kind = D.kind", "optic p = D.P raw",
                        "optic dk = d . kind"), F)
        sets = level_sets([scanner_plan(o, s.root) for o in s.optics])
        self.assertEqual([(ls.name, ls.keys, ls.union.name if ls.union else None)
                          for ls in sets],
                         [("A", ["n", "m", "d"], None), ("D", ["kind", "y", "x"], "D")])

    def test_steps_and_look_after_tag(self):
        """A scanner passes over the members declared before its field where
        they stand only when they are at most STEPS scalars (so the steps
        reach the field), none named like a key it wants; it looks at the
        member after a union's tag when the field is the case's first."""
        from trgen.emit import STEPS, scanner_plan
        s = parse(lines("root A",
                        "record A { s: string  e: E  r: R  n: i32  m: map<i32>  d: D }",
                        "record R { a: f64  b: bool  c: i64  x: i32 }",
                        "enum E { One Two }",
                        'union D tag "kind" { P { x: i32  y: i32 } Q { kind2: R  z: i32 } }',
                        "optic s = A.s", "optic e = A.e", "optic n = A.n",
                        "optic rx = A.r.x", "optic mk = A.m[\"k\"]",
                        "optic px = D.P.x", "optic py = D.P.y", "optic qz = D.Q.z"), F)
        plans = {o.name: scanner_plan(o, s.root) for o in s.optics}
        spelled = {n: [[sp for sp, _ in lv.steps] for lv in plans[n].levels] for n in plans}
        self.assertEqual(STEPS, 1)
        self.assertEqual(spelled["s"], [[]])                # the first field: the look
        self.assertEqual(spelled["e"], [['"\\"s\\":"']])   # one string before it
        self.assertEqual(spelled["n"], [[]])                # three fields in front
        self.assertEqual(spelled["rx"], [[], []])           # three scalars: more than STEPS
        self.assertEqual(spelled["mk"], [[], []])           # four in front; a map's key
        self.assertEqual(spelled["px"], [[]])               # the case's first: the look
        self.assertEqual(spelled["py"], [['"\\"x\\":"']])
        self.assertEqual(spelled["qz"], [[]])               # a record in front
        self.assertEqual([[lv.after_tag for lv in plans[n].levels] for n in ("px", "py", "qz")],
                         [[True], [False], [False]])
        self.assertEqual(plans["e"].levels[0].steps[0][1], len('"s":'))


# ---------------------------------------------------------------- checks

F = "t.schema"


def schema_errors(test, text):
    """What parse reports for text, as one string; test fails if it parses."""
    with test.assertRaises(SchemaError) as cm:
        parse(text, F)
    return str(cm.exception)


class Checks(unittest.TestCase):
    maxDiff = None

    def errors(self, text):
        return schema_errors(self, text)

    def assertError(self, text, *want):
        self.assertEqual(self.errors(text), "\n".join(want))

    def test_root_views_only_raw_optics_on_root_fields(self):
        from trgen.emit import root_views
        s = parse("root A\nrecord A { b: B  n: i32 }\nrecord B { c: i32 }\n"
                  "optic b = A.b\noptic bc = A.b.c\noptic braw = A.b raw\noptic c = B.c\n", "t.schema")
        self.assertEqual([(v.optic, v.field) for v in root_views(s)], [("braw", "b")])
        s = parse("root A\nrecord A { n: i32 }\noptic n = A.n\n", "t.schema")
        self.assertEqual(root_views(s), [])

    def test_valid_minimal(self):
        s = parse(lines("root A", "record A { x: i32 }"), F)
        self.assertEqual(s.root.name, "A")

    def test_unknown_type(self):
        self.assertError(lines("root A", "record A { x: Foo }"),
                         "t.schema:2:15: error: unknown type 'Foo'")

    def test_unknown_type_in_list_and_map(self):
        self.assertError(lines("root A", "record A {", "  xs: list<Foo>", "  m: map<Bar>", "}"),
                         "t.schema:3:12: error: unknown type 'Foo'",
                         "t.schema:4:10: error: unknown type 'Bar'")

    def test_unknown_root(self):
        self.assertError(lines("root B", "record A { x: i32 }"),
                         "t.schema:1:6: error: unknown type 'B'")

    def test_root_not_a_record(self):
        self.assertError(lines("root E", "record A { e: E }", "enum E { X }"),
                         "t.schema:1:6: error: the root 'E' must be a record")

    def test_second_root(self):
        self.assertError(lines("root A", "record A { x: i32 }", "root A"),
                         "t.schema:3:1: error: a second root declaration",
                         "t.schema:1:6: note: the first is here")

    def test_no_root(self):
        self.assertError(lines("record A { x: i32 }"),
                         "t.schema:1:1: error: no 'root' declaration names the message type")

    def test_duplicate_field(self):
        self.assertError(lines("root A", "record A {", "  x: i32", "  x: i64", "}"),
                         "t.schema:4:3: error: duplicate field 'x' in 'A'",
                         "t.schema:3:3: note: the first is here")

    def test_duplicate_field_in_union_case(self):
        self.assertError(lines("root A", "record A { u: U }",
                               'union U tag "t" {', "  B { y: i32 y: bool }", "}"),
                         "t.schema:4:14: error: duplicate field 'y' in 'U.B'",
                         "t.schema:4:7: note: the first is here")

    def test_field_clashes_with_tag(self):
        self.assertError(lines("root A", "record A { u: U }",
                               'union U tag "type" {', "  B { type: string }", "}"),
                         "t.schema:4:7: error: field 'type' clashes with the union's tag field",
                         "t.schema:3:13: note: the tag is declared here")

    def test_duplicate_enum_case(self):
        self.assertError(lines("root A", "record A { x: E }", "enum E { One Two One }"),
                         "t.schema:3:18: error: duplicate case 'One' in enum 'E'",
                         "t.schema:3:10: note: the first is here")

    def test_empty_enum(self):
        self.assertError(lines("root A", "record A { x: E }", "enum E { }"),
                         "t.schema:3:6: error: enum 'E' has no cases")

    def test_duplicate_union_case(self):
        self.assertError(lines("root A", "record A { x: U }",
                               'union U tag "t" {', "  B { y: i32 }", "  B { z: i32 }", "}"),
                         "t.schema:5:3: error: duplicate case 'B' in union 'U'",
                         "t.schema:4:3: note: the first is here")

    def test_duplicate_declaration(self):
        self.assertError(lines("root A", "record A { x: i32 }", "enum A { X }"),
                         "t.schema:3:6: error: 'A' is declared twice",
                         "t.schema:2:8: note: the first declaration is here")

    def test_builtin_name_declared(self):
        self.assertError(lines("root A", "record A { x: i32 }", "record i64 { y: i32 }"),
                         "t.schema:3:8: error: 'i64' is a built-in type")

    def test_empty_record(self):
        self.assertError(lines("root A", "record A { }"),
                         "t.schema:2:8: error: record 'A' has no fields")

    def test_recursive_direct(self):
        self.assertError(lines("root A", "record A {", "  x: i32", "  next: A", "}"),
                         "t.schema:4:9: error: recursive type: A -> A",
                         "t.schema:2:8: note: 'A' is declared here")

    def test_recursive_through_list(self):
        self.assertError(lines("root A", "record A { bs: list<B> }", "record B { a: A }"),
                         "t.schema:3:15: error: recursive type: A -> B -> A",
                         "t.schema:2:8: note: 'A' is declared here")

    def test_recursive_list_of_itself(self):
        self.assertError(lines("root A", "record A { kids: list<A> }"),
                         "t.schema:2:23: error: recursive type: A -> A",
                         "t.schema:2:8: note: 'A' is declared here")

    def test_recursive_through_map_and_union(self):
        self.assertError(lines("root A", "record A { u: U }",
                               'union U tag "t" { B { m: map<A> } }'),
                         "t.schema:3:30: error: recursive type: A -> U -> A",
                         "t.schema:2:8: note: 'A' is declared here")

    def test_recursive_names_only_the_loop(self):
        self.assertError(lines("root A", "record A { b: B }", "record B { c: C }",
                               "record C { b: list<B> }"),
                         "t.schema:4:20: error: recursive type: B -> C -> B",
                         "t.schema:3:8: note: 'B' is declared here")

    def test_recursive_chain_longer_than_python_recursion(self):
        """The cycle check is a loop: a chain of 3000 types that closes on
        itself is a recursive type, not a RecursionError."""
        decls = [f"record R{i} {{ n: R{i + 1} }}" for i in range(3000)]
        self.assertError(lines("root R0", *decls, "record R3000 { back: R1 }"),
                         f"t.schema:3002:22: error: recursive type: "
                         f"{' -> '.join(f'R{i}' for i in range(1, 3001))} -> R1",
                         "t.schema:3:8: note: 'R1' is declared here")

    def test_depth_bound(self):
        """Values nest MAX_DEPTH deep at most (the root's object 1 deep), the
        readers' limit; deeper schemas are refused with the way down, and
        checking them takes no recursion however deep they are."""
        from trgen.schema import MAX_DEPTH
        with open(os.path.join(ROOT, "runtime", "json.h"), encoding="utf-8") as f:
            self.assertRegex(f.read(), rf"#define JS_MAX_DEPTH {MAX_DEPTH}\b")

        def chain(n):  # the root and n - 1 records below it: n deep
            return lines("root R0", *(f"record R{i} {{ n: R{i + 1} }}" for i in range(n - 1)),
                         f"record R{n - 1} {{ x: i32 }}")

        parse(chain(MAX_DEPTH), F)
        self.assertError(chain(MAX_DEPTH + 1),
                         f"t.schema:1:6: error: a message can nest {MAX_DEPTH + 1} deep "
                         f"(R0{'.n' * 30}....n{'.n' * 14}): readers accept values "
                         f"{MAX_DEPTH} deep at most")
        self.assertError(chain(5000),
                         f"t.schema:1:6: error: a message can nest 5000 deep "
                         f"(R0{'.n' * 30}....n{'.n' * 14}): readers accept values "
                         f"{MAX_DEPTH} deep at most")

        def lists(n):
            return lines("root R", f"record R {{ x: {'list<' * n}i32{'>' * n} }}")

        parse(lists(MAX_DEPTH - 1), F)
        self.assertError(lists(MAX_DEPTH),
                         f"t.schema:1:6: error: a message can nest {MAX_DEPTH + 1} deep "
                         f"(R.x{'[0]' * 19}...{'[0]' * 10}): readers accept values "
                         f"{MAX_DEPTH} deep at most")
        # steps longer than the shown ends: the first and the last, whole
        long = "q" * 80
        self.assertError(lines("root R0", *(f"record R{i} {{ {long}: R{i + 1} }}"
                                             for i in range(MAX_DEPTH)),
                               f"record R{MAX_DEPTH} {{ x: i32 }}"),
                         f"t.schema:1:6: error: a message can nest {MAX_DEPTH + 1} deep "
                         f"(R0.{long}....{long}): readers accept values {MAX_DEPTH} deep at most")
        # the parser stops at the list one past the bound, before the rest
        self.assertError(lists(100000),
                         f"t.schema:2:{15 + 5 * MAX_DEPTH}: error: lists and maps nest more "
                         f"than {MAX_DEPTH} deep: readers accept values {MAX_DEPTH} deep at most")

    def test_depth_way_names_union_cases_and_maps(self):
        """A union's object and a map are a level each; the way down the
        deepest value names the union's case and the map."""
        from trgen.schema import MAX_DEPTH

        def schema(n):  # A, U, the map, then n records: n + 3 deep
            decls = [f"record R{i} {{ n: R{i + 1} }}" for i in range(n - 1)]
            return lines("root A", "record A { u: U }",
                         'union U tag "t" { B { y: i32 } C { m: map<R0> } }', *decls,
                         f"record R{n - 1} {{ x: i32 }}")

        parse(schema(MAX_DEPTH - 3), F)
        self.assertError(schema(MAX_DEPTH - 2),
                         f"t.schema:1:6: error: a message can nest {MAX_DEPTH + 1} deep "
                         f"(A.u.C.m[\"k\"].n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n.n"
                         f"...{'.n' * 15}): readers accept values {MAX_DEPTH} deep at most")

    def test_enum_is_not_recursion(self):
        parse(lines("root A", "record A { e: E f: E }", "enum E { X }"), F)

    def test_union_without_tag(self):
        self.assertError(lines("root A", "record A { x: U }", "union U { B { y: i32 } }"),
                         "t.schema:3:7: error: union 'U' has no tag: write union U tag \"type\" { ... }")

    def test_union_without_cases(self):
        self.assertError(lines("root A", "record A { x: U }", 'union U tag "t" { }'),
                         "t.schema:3:7: error: union 'U' has no cases")

    def test_empty_tag(self):
        self.assertError(lines("root A", "record A { x: U }", 'union U tag "" { B { y: i32 } }'),
                         't.schema:3:13: error: a union\'s tag must not be empty: it is the key '
                         'of the member that names the case, as in tag "type"')

    def test_syntax_missing_closing_brace(self):
        self.assertError(lines("root A", "record A {", "  x: i32"),
                         "t.schema:4:1: error: expected a field name or '}', found end of file")

    def test_syntax_missing_opening_brace(self):
        self.assertError(lines("root A", "record A", "  x: i32", "}"),
                         "t.schema:3:3: error: expected '{', found 'x'")

    def test_syntax_missing_colon(self):
        self.assertError(lines("root A", "record A { x i32 }"),
                         "t.schema:2:14: error: expected ':', found 'i32'")

    def test_syntax_stray_character(self):
        self.assertError(lines("root A", "record A { x: i32; }"),
                         "t.schema:2:18: error: unexpected character ';'")

    def test_syntax_control_character(self):
        self.assertError("root A\nrecord A { x: i32 \x01 }\n",
                         "t.schema:2:19: error: unexpected character byte 0x01")

    def test_syntax_unterminated_string(self):
        self.assertError(lines("root A", 'union U tag "type {', "  B { y: i32 }", "}"),
                         "t.schema:2:13: error: unexpected character '\"'")

    def test_syntax_unterminated_list(self):
        self.assertError(lines("root A", "record A { x: list<i32 }"),
                         "t.schema:2:24: error: expected '>', found '}'")

    def test_syntax_unterminated_enum(self):
        self.assertError(lines("root A", "record A { x: E }", "enum E { X Y"),
                         "t.schema:4:1: error: expected a case name or '}', found end of file")

    def test_syntax_keyword_as_name(self):
        self.assertError(lines("root A", "record A { raw: i32 }"),
                         "t.schema:2:12: error: expected a field name or '}', found 'raw'")

    def test_syntax_unknown_top_level(self):
        self.assertError(lines("root A", "struct A { x: i32 }"),
                         "t.schema:2:1: error: expected 'record', 'union', 'enum', 'root' "
                         "or 'optic', found 'struct'")

    def test_syntax_error_keeps_earlier_errors(self):
        self.assertError(lines("root A", "record A { x: i32 }", "record A { y: i32 }",
                               "record B {"),
                         "t.schema:3:8: error: 'A' is declared twice",
                         "t.schema:2:8: note: the first declaration is here",
                         "t.schema:5:1: error: expected a field name or '}', found end of file")

    def test_optional_list(self):
        self.assertError(lines("root A", "record A { x: optional list<i32> }"),
                         "t.schema:2:12: error: a list cannot be optional: an absent one is empty")

    def test_optional_map(self):
        self.assertError(lines("root A", "record A { x: optional map<i32> }"),
                         "t.schema:2:12: error: a map cannot be optional: an absent one is empty")

    def test_range_on_non_integer(self):
        self.assertError(lines("root A", "record A { x: string @range(0, 1) }"),
                         "t.schema:2:23: error: @range applies to i32 and i64 fields only")

    def test_range_on_f64(self):
        self.assertError(lines("root A", "record A { x: f64 @range(0, 1) }"),
                         "t.schema:2:20: error: @range applies to i32 and i64 fields only")

    def test_range_empty(self):
        self.assertError(lines("root A", "record A { x: i32 @range(5, 1) }"),
                         "t.schema:2:20: error: @range(5, 1) is empty or outside i32")

    def test_range_outside_type(self):
        self.assertError(lines("root A", "record A { x: i32 @range(0, 2147483648) }"),
                         "t.schema:2:20: error: @range(0, 2147483648) is empty or outside i32")

    def test_range_fits_i64(self):
        s = parse(lines("root A", "record A { x: i64 @range(-1, 2147483648) }"), F)
        self.assertEqual(s.root.fields[0].range, (-1, 2147483648))

    def test_unknown_annotation(self):
        self.assertError(lines("root A", "record A { x: i32 @rnge(0, 3) }"),
                         "t.schema:2:20: error: unknown annotation '@rnge'")

    def test_range_not_integers(self):
        self.assertError(lines("root A", "record A { x: i32 @range(0, x) }"),
                         "t.schema:2:29: error: expected an integer, found 'x'")

    # optics
    BASE = ("root A",                               # 1
            "record A {",                           # 2
            "  b: B",                               # 3
            "  bs: list<B>",                        # 4
            "  u: U",                               # 5
            "}",                                    # 6
            "record B { x: i32 e: E }",             # 7
            "record C { y: i32 }",                  # 8
            'union U tag "k" { P { c: C } Q { b: B } }',  # 9
            "enum E { One Two }")                   # 10

    def optics(self, *ls):
        return lines(*self.BASE, *ls)

    def test_optics_valid(self):
        s = parse(self.optics("optic b = A.b raw", "optic x = B.x", "optic bx = b . x",
                              "optic e0 = A.bs[0].e", "optic k = U.k", "optic py = U.P.c.y"), F)
        self.assertEqual([o.focus.spell() for o in s.optics],
                         ["B", "i32", "i32", "E", "U.k", "i32"])

    def test_tag_by_key(self):
        """A union's tag is read by its key too: the only way for a tag that
        is no name; another key on a union says how the tag is read."""
        s = parse(lines("root A", "record A { u: U }",
                        'union U tag "@type" { P { x: i32 } Q { } }',
                        'optic t = U["@type"]', 'optic u = A.u raw', 'optic ut = u . t',
                        'optic px = U.P.x'), F)
        self.assertEqual([(o.focus.kind, o.steps[-1].kind) for o in s.optics[:1]],
                         [("tag", "tag")])
        self.assertEqual(s.optics[2].focus.spell(), 'U["@type"]')
        self.assertError(self.optics('optic o = U["kind"]'),
                         "t.schema:11:13: error: a key needs a map, and 'U' is not one "
                         "(a union's tag is read by its key, as in [\"k\"])")
        s = parse(self.optics('optic o = U["k"]', "optic p = U.k"), F)
        self.assertEqual([o.focus.spell() for o in s.optics], ["U.k", "U.k"])

    def test_optic_named_as_a_rule_literal(self):
        """Rules read true and false as literals: no optic takes those names
        (the rule language's other words, has, in, keep, drop, may)."""
        self.assertError(self.optics("optic true = A.b raw", "optic false = B.x",
                                     "optic has = B.x", "optic keep = A.b raw"),
                         "t.schema:11:7: error: an optic cannot be named 'true': rules read it "
                         "as a literal (choose another name)",
                         "t.schema:12:7: error: an optic cannot be named 'false': rules read it "
                         "as a literal (choose another name)")

    def test_optic_missing_field(self):
        self.assertError(self.optics("optic o = A.b.z"),
                         "t.schema:11:15: error: 'B' has no field 'z' (fields: x, e)")

    def test_optic_missing_field_in_case(self):
        self.assertError(self.optics("optic o = U.P.b"),
                         "t.schema:11:15: error: 'U.P' has no field 'b' (fields: c)")

    def test_optic_missing_case(self):
        self.assertError(self.optics("optic o = U.R.c"),
                         "t.schema:11:13: error: union 'U' has no case or tag 'R' (cases: P, Q; tag: k)")

    def test_optic_unknown_root(self):
        self.assertError(self.optics("optic o = Z.b"),
                         "t.schema:11:11: error: unknown type 'Z'")

    def test_optic_starts_at_enum(self):
        self.assertError(self.optics("optic o = E.x"),
                         "t.schema:11:11: error: an optic cannot start at the enum 'E'")

    def test_optic_index_on_non_list(self):
        self.assertError(self.optics("optic o = A.b[0].x"),
                         "t.schema:11:15: error: an index needs a list, and 'B' is not one")

    def test_optic_index_on_scalar(self):
        self.assertError(self.optics("optic o = B.x[1]"),
                         "t.schema:11:15: error: an index needs a list, and 'i32' is not one")

    def test_optic_negative_index(self):
        self.assertError(self.optics("optic o = A.bs[-1].x"),
                         "t.schema:11:16: error: a list index must be 0 or more")

    def test_optic_step_into_scalar(self):
        self.assertError(self.optics("optic o = B.x.y"),
                         "t.schema:11:15: error: cannot step into 'y': 'i32' has no fields")

    def test_optic_raw_on_scalar(self):
        self.assertError(self.optics("optic o = B.e raw"),
                         "t.schema:11:7: error: 'raw' applies to records, unions, lists and maps")

    def test_optic_declared_twice(self):
        self.assertError(self.optics("optic o = B.x", "optic o = B.e"),
                         "t.schema:12:7: error: optic 'o' is declared twice",
                         "t.schema:11:7: note: the first is here")

    def test_optic_composition_type_mismatch(self):
        self.assertError(self.optics("optic b = A.b", "optic y = C.y", "optic by = b . y"),
                         "t.schema:13:16: error: cannot compose: 'y' starts at 'C', "
                         "but the path so far arrives at 'B'")

    def test_optic_composition_unknown(self):
        self.assertError(self.optics("optic b = A.b", "optic bx = b . x2"),
                         "t.schema:12:16: error: unknown optic 'x2' "
                         "(optics are composed from those declared before)")

    def test_optic_composition_declared_later(self):
        self.assertError(self.optics("optic bx = b . x", "optic b = A.b", "optic x = B.x"),
                         "t.schema:11:12: error: unknown optic 'b' "
                         "(optics are composed from those declared before)")

    def test_multiple_errors_sorted(self):
        text = lines("record A {",              # 1
                     "  x: Foo",                 # 2
                     "  y: i32",                 # 3
                     "  y: i32",                 # 4
                     "  z: optional list<i32>",  # 5
                     "}",                        # 6
                     "enum E { P P }",           # 7
                     "record Z { q: Bar }",      # 8
                     "record A { w: i32 }",      # 9
                     "root A")                   # 10
        self.assertError(text,
                         "t.schema:2:6: error: unknown type 'Foo'",
                         "t.schema:4:3: error: duplicate field 'y' in 'A'",
                         "t.schema:3:3: note: the first is here",
                         "t.schema:5:3: error: a list cannot be optional: an absent one is empty",
                         "t.schema:7:12: error: duplicate case 'P' in enum 'E'",
                         "t.schema:7:10: note: the first is here",
                         "t.schema:8:15: error: unknown type 'Bar'",
                         "t.schema:9:8: error: 'A' is declared twice",
                         "t.schema:1:8: note: the first declaration is here")

    def test_multiple_errors_all_reported(self):
        with self.assertRaises(SchemaError) as cm:
            parse(lines("record B { a: Nope }", "record A { x: Nope2 x: i32 }", "root A"), F)
        d = cm.exception.diagnostics
        self.assertEqual([(x.pos.line, x.pos.col) for x in d], [(1, 15), (2, 15), (2, 21)])
        self.assertEqual([x.message for x in d],
                         ["unknown type 'Nope'", "unknown type 'Nope2'",
                          "duplicate field 'x' in 'A'"])


class MapSteps(unittest.TestCase):
    """Optic steps into a map by a key, written as a JSON string."""

    maxDiff = None
    BASE = ("root A",                                          # 1
            "record A { m: map<B>  l: list<B>  s: map<string>  b: B }",  # 2
            "record B { x: i32  mm: map<map<i32>> }")          # 3

    def parse(self, *optics):
        return parse(lines(*self.BASE, *optics), F)

    def errors(self, *optics):
        return schema_errors(self, lines(*self.BASE, *optics))

    def steps(self, o):
        return [(st.kind, st.key if st.kind == "key" else st.index if st.kind == "index"
                 else st.name, st.type.spell()) for st in o.steps]

    def test_key_then_fields_and_keys(self):
        s = self.parse('optic x = A.m["k"].x', 'optic y = A.m["k"].mm["a"]["b"]',
                       'optic r = A.m["k"] raw', 'optic z = A.l[0].mm["q"] raw')
        x, y, r, z = s.optics
        self.assertEqual(self.steps(x), [("field", "m", "map<B>"), ("key", "k", "B"),
                                         ("field", "x", "i32")])
        self.assertEqual(self.steps(y)[-2:], [("key", "a", "map<i32>"), ("key", "b", "i32")])
        self.assertEqual(r.focus.spell(), "B")
        self.assertEqual(z.focus.spell(), "map<i32>")
        self.assertEqual(x.steps[1].pos, Pos(F, 4, 15))

    def test_key_escapes_are_json(self):
        s = self.parse(r'optic a = A.s["a\"b\\c\/\b\f\n\r\t"]', r'optic e = A.s["\u00e9"]',
                       r'optic p = A.s["\ud83d\ude00"]', 'optic u = A.s["é"]',
                       'optic empty = A.s[""]')
        self.assertEqual([o.steps[1].key for o in s.optics],
                         ['a"b\\c/\b\f\n\r\t', "é", "\U0001F600", "é", ""])

    def test_key_composes(self):
        s = self.parse('optic b = A.m["k"] raw', "optic x = B.x", "optic bx = b . x")
        self.assertEqual(self.steps(s.optics[2]), [("field", "m", "map<B>"), ("key", "k", "B"),
                                                   ("field", "x", "i32")])

    def test_bad_escape(self):
        self.assertEqual(self.errors(r'optic a = A.s["ab\x"]'),
                         "t.schema:4:18: error: invalid escape '\\x' in a string "
                         "(JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")

    def test_short_unicode_escape(self):
        self.assertEqual(self.errors(r'optic a = A.s["\u12g4"]'),
                         "t.schema:4:16: error: \\u needs four hex digits")

    def test_lone_surrogates(self):
        self.assertEqual(self.errors(r'optic a = A.s["x\ud800"]', r'optic b = A.s["\udc00"]'),
                         "t.schema:4:17: error: \\ud800 starts a surrogate pair that no "
                         "\\uDC00-\\uDFFF completes\n"
                         "t.schema:5:16: error: \\udc00 is the second half of a surrogate pair, "
                         "without the first")

    def test_raw_control_character(self):
        self.assertEqual(self.errors('optic a = A.s["a\tb"]'),
                         "t.schema:4:17: error: a raw control character (byte 0x09) in a "
                         "string; write it as \\u0009")

    def test_key_on_a_record(self):
        self.assertEqual(self.errors('optic a = A.b["x"]'),
                         "t.schema:4:15: error: a key needs a map, and 'B' is not one")

    def test_key_on_a_list(self):
        self.assertEqual(self.errors('optic a = A.l["x"]'),
                         "t.schema:4:15: error: a key needs a map, and 'list<B>' is not one "
                         "(a list's items are read by index, as in [0])")

    def test_index_on_a_map(self):
        self.assertEqual(self.errors("optic a = A.m[0]"),
                         "t.schema:4:15: error: an index needs a list, and 'map<B>' is not one "
                         "(a map's values are read by key, as in [\"key\"])")

    def test_field_on_a_map(self):
        self.assertEqual(self.errors("optic a = A.m.x"),
                         "t.schema:4:15: error: cannot step into 'x': 'map<B>' has no fields "
                         "(a map's values are read by key, as in [\"x\"])")

    def test_map_focus_must_be_raw(self):
        self.assertEqual(self.errors('optic a = B.mm["k"]'),
                         "t.schema:4:7: error: an optic focused on a map must be raw "
                         "(write 'raw' after the path)")

    def test_neither_index_nor_key(self):
        self.assertEqual(self.errors("optic a = A.m[x]"),
                         "t.schema:4:15: error: expected a list index or a map key in quotes, "
                         "as in [0] or [\"key\"], found 'x'")

    def test_index_too_large(self):
        self.assertEqual(self.errors("optic a = A.l[2147483648].x"),
                         "t.schema:4:15: error: a list index must be at most 2147483647")

    def test_tag_is_json_too(self):
        s = parse(lines("root A", "record A { u: U }", r'union U tag "t\u00e9\"" { B { x: i32 } }'), F)
        self.assertEqual(s.decls["U"].tag, 't\u00e9"')
        self.assertEqual(
            schema_errors(self, lines("root A", "record A { u: U }",
                                      r'union U tag "t\q" { B { x: i32 } }')),
            "t.schema:3:15: error: invalid escape '\\q' in a "
            "string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")


class CNames(unittest.TestCase):
    """Schema names that would give one C identifier twice, or one the
    runtime declares, are refused (the generated C would not compile)."""

    maxDiff = None

    def errors(self, *ls):
        return schema_errors(self, lines(*ls))

    def test_root_field_constants(self):
        self.assertEqual(self.errors("root A", "record A { errorRate: f64  error_rate: f64 }"),
                         "t.schema:2:28: error: field 'error_rate' of the root 'A' gives the C "
                         "name TR_A_F_ERROR_RATE, which field 'errorRate' of the root 'A' gives "
                         "too\nt.schema:2:12: note: that one is here")

    def test_optional_flag(self):
        self.assertEqual(self.errors("root A", "record A { x: optional i32  has_x: bool }"),
                         "t.schema:2:29: error: field 'has_x' of 'A' gives the C member has_x, "
                         "which field 'x' of 'A' (optional: its flag has_x) gives too\n"
                         "t.schema:2:12: note: that one is here")

    def test_keyword_member(self):
        self.assertIn("field 'int_' of 'A' gives the C member int_, which field 'int' of 'A'",
                      self.errors("root A", "record A { int: i32  int_: i32 }"))

    def test_union_case_and_record(self):
        self.assertIn("case 'B' of union 'U' gives the C name tr_U_B, which record 'U_B'",
                      self.errors("root A", "record A { u: U  v: U_B }", "record U_B { x: i32 }",
                                  'union U tag "t" { B { x: i32 } }'))

    def test_runtime_names(self):
        self.assertEqual(self.errors("root A", "record A { e: E }", "enum E { OK }"),
                         "t.schema:3:10: error: case 'OK' of enum 'E' gives the C name TR_E_OK, "
                         "which runtime/error.h already declares")
        self.assertIn("record 'message' gives the C name tr_message, which runtime/view.h",
                      self.errors("root message", "record message { x: i32 }"))
        self.assertIn("TR_MODEL_H, which the generated tr_model.h (its include guard)",
                      self.errors("root A", "record A { e: Model }", "enum Model { H }"))

    def test_containers(self):
        self.assertIn("the type list<map<X>> gives the C name tr_list_map_X, which the type "
                      "list<map_X> gives too",
                      self.errors("root A", "record A { a: list<map_X>  b: list<map<X>> }",
                                  "record map_X { x: i32 }", "record X { x: i32 }"))

    def test_optic_functions(self):
        self.assertIn("optic 'x' gives the C name tr_get_x, which record 'get_x' gives too",
                      self.errors("root A", "record A { x: i32 }", "record get_x { y: i32 }",
                                  "optic x = A.x"))

    def test_level_matchers(self):
        # tr_level_key_A (the matcher of A, where optic x starts) is also
        # what a record named level_key_A gives
        self.assertIn("the level matcher of record 'A' gives the C name tr_level_key_A, which "
                      "record 'level_key_A' gives too",
                      self.errors("root A", "record A { x: i32  y: level_key_A }",
                                  "record level_key_A { z: i32 }", "optic x = A.x"))
        self.assertIn("gives the C name tr_level_case_U",
                      self.errors("root A", "record A { u: U  v: level_case_U }",
                                  "record level_case_U { z: i32 }",
                                  'union U tag "t" { B { x: i32 } }', "optic k = U.t"))

    def test_names_that_only_look_like_c_pass(self):
        s = parse(lines("root A", "record A { int: i32  EOF: i32  __t: string  s: switch }",
                        "record switch { case: i32 }", 'union U tag "t" { default { x: i32 } }',
                        "optic int = A.int"), F)
        self.assertEqual(s.root.name, "A")


class OpticShapes(unittest.TestCase):
    """What an optic's path may look like, and what its errors name."""

    maxDiff = None

    def errors(self, *ls):
        return schema_errors(self, lines(*ls))

    def test_lower_case_type_starts_a_path(self):
        s = parse(lines("root issue", "record issue { labels: list<string> }",
                        "optic first = issue.labels[0]", "optic again = first"), F)
        self.assertEqual([o.source.spell() for o in s.optics], ["issue", "issue"])
        self.assertEqual(s.optics[1].compose, [("first", Pos(F, 4, 15))])

    def test_no_steps(self):
        self.assertEqual(self.errors("root A", "record A { x: i32 }", "optic a = A raw"),
                         "t.schema:3:11: error: an optic needs a step after 'A' (as in A.field): "
                         "it reads a part of a value")

    def test_composition_takes_no_index(self):
        self.assertEqual(self.errors("root A", "record A { l: list<i32> }", "optic l = A.l raw",
                                     "optic l0 = l[0]"),
                         "t.schema:4:14: error: 'l' is an optic: a composition joins optics by "
                         "name (l . other), with no index or key")

    def test_an_optic_cannot_name_itself(self):
        self.assertEqual(self.errors("root A", "record A { x: i32 }", "optic x = x . x"),
                         "t.schema:3:11: error: unknown optic 'x' (optics are composed from those "
                         "declared before)")

    def test_did_you_mean(self):
        self.assertEqual(self.errors("root A", "record A { count: Cuont }", "record Count { n: i32 }"),
                         "t.schema:2:19: error: unknown type 'Cuont': did you mean 'Count'?")
        self.assertEqual(self.errors("root A", "record A { count: i32 }", "optic c = A.cuont"),
                         "t.schema:3:13: error: 'A' has no field 'cuont': did you mean 'count'? "
                         "(fields: count)")
        self.assertEqual(self.errors("root A", "record A { count: i32 }", "optic count = A.count",
                                     "optic d = cuont . count"),
                         "t.schema:4:11: error: unknown optic 'cuont' (optics are composed from "
                         "those declared before): did you mean 'count'?")


class EnumCollision(unittest.TestCase):
    """Distinct cases whose C constants collide are a schema error."""

    maxDiff = None

    def errors(self, text):
        return schema_errors(self, text)

    def test_enum_cases_collide(self):
        self.assertEqual(
            names.c_enum_const("Status", "In_Progress"), "TR_STATUS_IN_PROGRESS")
        self.assertEqual(
            self.errors(lines("root A", "record A { s: Status }",
                              "enum Status { Open In_Progress InProgress }")),
            "t.schema:3:32: error: case 'InProgress' of enum 'Status' gives the same "
            "C constant TR_STATUS_IN_PROGRESS as 'In_Progress'\n"
            "t.schema:3:20: note: 'In_Progress' is here")

    def test_enum_case_collides_with_count(self):
        self.assertEqual(
            self.errors(lines("root A", "record A { s: E }", "enum E { A COUNT }")),
            "t.schema:3:12: error: case 'COUNT' of enum 'E' gives the C constant TR_E_COUNT, "
            "which is reserved for the number of cases")

    def test_union_cases_collide(self):
        self.assertEqual(
            self.errors(lines("root A", "record A { u: U }",
                              'union U tag "t" {', "  HTTPError { x: i32 }",
                              "  HttpError { y: i32 }", "  Http_Error { z: i32 }", "}")),
            "t.schema:5:3: error: case 'HttpError' of union 'U' gives the same "
            "C constant TR_U_HTTP_ERROR as 'HTTPError'\n"
            "t.schema:4:3: note: 'HTTPError' is here\n"
            "t.schema:6:3: error: case 'Http_Error' of union 'U' gives the same "
            "C constant TR_U_HTTP_ERROR as 'HTTPError'\n"
            "t.schema:4:3: note: 'HTTPError' is here")

    def test_same_name_reported_once(self):
        # A duplicate is a duplicate, not also a collision.
        self.assertEqual(
            self.errors(lines("root A", "record A { s: E }", "enum E { X X }")),
            "t.schema:3:12: error: duplicate case 'X' in enum 'E'\n"
            "t.schema:3:10: note: the first is here")

    def test_distinct_constants_pass(self):
        parse(lines("root A", "record A { s: E }", "enum E { InProgress In_Progress2 Counter }"), F)

    def test_real_schema_has_distinct_constants(self):
        s = load_real()
        for d in s.enums + s.unions:
            consts = [names.c_enum_const(d.name, c.name) for c in d.cases]
            consts.append(names.c_enum_const(d.name, "Count"))
            self.assertEqual(len(set(consts)), len(consts), d.name)


# ---------------------------------------------------------------- command line


class CommandLine(unittest.TestCase):
    def test_check_real_schema(self):
        r = run_trgen("--check", SCHEMA)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def test_error_writes_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.schema")
            with open(bad, "w") as f:
                f.write(lines("root A", "record A {", "  x: Foo", "  x: i32", "}"))
            out = os.path.join(d, "out")
            os.mkdir(out)
            r = run_trgen(bad, out)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(os.listdir(out), [])
            self.assertEqual(r.stdout, "")
            self.assertEqual(r.stderr,
                             f"{bad}:3:6: error: unknown type 'Foo'\n"
                             f"{bad}:4:3: error: duplicate field 'x' in 'A'\n"
                             f"{bad}:3:3: note: the first is here\n"
                             "2 errors; nothing written\n")
            # Not even the output directory is created.
            r = run_trgen(bad, os.path.join(d, "new"))
            self.assertEqual(r.returncode, 1)
            self.assertEqual(sorted(os.listdir(d)), ["bad.schema", "out"])

    def test_syntax_error_writes_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.schema")
            with open(bad, "w") as f:
                f.write(lines("root A", "record A { x: i32 ;"))
            out = os.path.join(d, "out")
            os.mkdir(out)
            r = run_trgen(bad, out)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(os.listdir(out), [])
            self.assertEqual(r.stderr, f"{bad}:2:19: error: unexpected character ';'\n"
                                       "1 error; nothing written\n")

    @unittest.skipUnless(HAVE_JINJA, "jinja2 is not installed")
    def test_removes_scanners_of_removed_optics(self):
        with tempfile.TemporaryDirectory() as d:
            sch = os.path.join(d, "s.schema")
            out = os.path.join(d, "out")
            base = ("root A", "record A { x: i32  y: string }")
            with open(sch, "w") as f:
                f.write(lines(*base, "optic x = A.x", "optic y = A.y"))
            self.assertEqual(run_trgen(sch, out).returncode, 0)
            # what re2c makes of each scanner, a temporary of an interrupted
            # run, and files that are not the generator's
            others = ["tr_scan_y.re.orig", "tr_scan_y.o", "notes.txt", ".stamp", "tr_scan_.c"]
            for n in ["tr_scan_x.c", "tr_scan_y.c", "tr_scan_y.re.tmp", "tr_model.h.tmp"] + others:
                open(os.path.join(out, n), "w").close()
            with open(sch, "w") as f:
                f.write(lines(*base, "optic x = A.x"))
            self.assertEqual(run_trgen(sch, out).returncode, 0)
            left = set(os.listdir(out))
            self.assertIn("tr_scan_x.re", left)
            self.assertIn("tr_scan_x.c", left)
            self.assertEqual(left & {"tr_scan_y.re", "tr_scan_y.c", "tr_scan_y.re.tmp",
                                     "tr_model.h.tmp"}, set())
            self.assertTrue(set(others) <= left)
            with open(os.path.join(out, "optics.mk")) as f:
                self.assertIn("OPTICS := x\n", f.read())
            # a schema error removes nothing
            with open(sch, "w") as f:
                f.write(lines(*base, "optic z = A.z"))
            self.assertEqual(run_trgen(sch, out).returncode, 1)
            self.assertEqual(set(os.listdir(out)), left)

    def test_optics_bound(self):
        """At most MAX_OPTICS optics, the bound the rules engine has."""
        from trgen.schema import MAX_OPTICS
        with open(os.path.join(ROOT, "runtime", "rules.h"), encoding="utf-8") as f:
            self.assertRegex(f.read(), rf"#define RU_MAX_OPTICS {MAX_OPTICS}\b")
        fields = [f"    f{i}: i32" for i in range(MAX_OPTICS + 1)]
        optics = [f"optic o{i} = R.f{i}" for i in range(MAX_OPTICS + 1)]
        parse(lines("root R", "record R {", *fields, "}", *optics[:MAX_OPTICS]), F)
        with self.assertRaises(SchemaError) as cm:
            parse(lines("root R", "record R {", *fields, "}", *optics), F)
        self.assertEqual(str(cm.exception),
                         f"t.schema:{MAX_OPTICS + 5 + MAX_OPTICS}:7: error: more than "
                         f"{MAX_OPTICS} optics ({MAX_OPTICS + 1}): rules read at most {MAX_OPTICS}")

    def test_version(self):
        r = run_trgen("--version")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, f"triage-gen {VERSION}\n", ""))
        with open(os.path.join(ROOT, "runtime", "version.h"), encoding="utf-8") as f:
            self.assertIn(f'#define TR_VERSION "{VERSION}"\n', f.read())

    def test_usage_errors(self):
        with tempfile.TemporaryDirectory() as d:
            for args in (["--check", SCHEMA, d], ["--check", "--out", d, SCHEMA],
                         ["--out", d, SCHEMA, d], []):
                r = run_trgen(*args)
                self.assertEqual(r.returncode, 2, args)
                self.assertTrue(r.stderr.startswith("usage: triage-gen "), args)
            self.assertEqual(os.listdir(d), [])

    @unittest.skipUnless(HAVE_JINJA and shutil.which("re2c"), "needs jinja2 and re2c")
    def test_out_writes_c(self):
        """--out DIR writes the C, scanners included (re2c run as each .re's
        first line says); --no-re2c and the older form write the .re only."""
        with tempfile.TemporaryDirectory() as d:
            a, b, c = (os.path.join(d, x) for x in "abc")
            self.assertEqual(run_trgen("--out", a, SCHEMA).returncode, 0)
            scanners = [n[:-3] + ".c" for n in OUTPUTS if n.endswith(".re")]
            self.assertEqual(sorted(os.listdir(a)), sorted(OUTPUTS + scanners))
            self.assertEqual(run_trgen("--no-re2c", "-o", b, SCHEMA).returncode, 0)
            self.assertEqual(run_trgen(SCHEMA, c).returncode, 0)
            self.assertEqual(sorted(os.listdir(b)), OUTPUTS)
            self.assertEqual(sorted(os.listdir(c)), OUTPUTS)
            before = {n: os.stat(os.path.join(a, n)).st_mtime_ns for n in os.listdir(a)}
            self.assertEqual(run_trgen("--out", a, SCHEMA).returncode, 0)
            after = {n: os.stat(os.path.join(a, n)).st_mtime_ns for n in os.listdir(a)}
            self.assertEqual(before, after)  # nothing rewritten, no .tmp left
            # the current directory by default
            r = subprocess.run([sys.executable, "-m", "trgen", os.path.join(ROOT, SCHEMA)],
                               cwd=b, env=dict(os.environ, PYTHONPATH=GEN),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual((r.returncode, r.stderr), (0, ""))
            self.assertEqual(sorted(os.listdir(b)), sorted(os.listdir(a)))

    def test_missing_file(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_trgen(os.path.join(d, "none.schema"), os.path.join(d, "out"))
            self.assertEqual(r.returncode, 1)
            self.assertEqual(os.listdir(d), [])
            self.assertIn("error: cannot read", r.stderr)


# Every file one run writes: the fixed ones, plus one re2c scanner per optic
# the schema declares.
FIXED_OUTPUTS = ["optics.mk", "tr_decode.c", "tr_encode.c", "tr_levels.re", "tr_model.c", "tr_model.h",
                 "tr_optics.h", "tr_optics_model.c", "tr_optics_table.c", "tr_optics_thunks.h",
                 "tr_random.c", "tr_validate.c"]


def outputs(s):
    return sorted(FIXED_OUTPUTS + [f"tr_scan_{o.name}.re" for o in s.optics])


OUTPUTS = outputs(load_real())


@unittest.skipUnless(HAVE_JINJA, "jinja2 is not installed")
class Reproducible(unittest.TestCase):
    def test_byte_for_byte(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a"), os.path.join(d, "b")
            # Different hash seeds: no output may depend on set or dict-of-str order.
            ra = run_trgen(SCHEMA, a, env={"PYTHONHASHSEED": "1"})
            rb = run_trgen(SCHEMA, b, env={"PYTHONHASHSEED": "2"})
            self.assertEqual((ra.returncode, ra.stderr), (0, ""))
            self.assertEqual((rb.returncode, rb.stderr), (0, ""))
            self.assertEqual(sorted(os.listdir(a)), OUTPUTS)
            self.assertEqual(sorted(os.listdir(b)), OUTPUTS)
            match, mismatch, errors = filecmp.cmpfiles(a, b, OUTPUTS, shallow=False)
            self.assertEqual((mismatch, errors), ([], []))

    def test_render_in_process_matches(self):
        from trgen.emit import render
        one = render(load_real(), SCHEMA)
        two = render(load_real(), SCHEMA)
        self.assertEqual(one, two)
        self.assertEqual(sorted(one), OUTPUTS)

    def test_rerun_keeps_unchanged_files(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(run_trgen(SCHEMA, d).returncode, 0)
            before = {n: os.stat(os.path.join(d, n)).st_mtime_ns for n in OUTPUTS}
            self.assertEqual(run_trgen(SCHEMA, d).returncode, 0)
            after = {n: os.stat(os.path.join(d, n)).st_mtime_ns for n in OUTPUTS}
            self.assertEqual(before, after)
            self.assertEqual(sorted(os.listdir(d)), OUTPUTS)  # no .tmp left

    def test_no_absolute_paths_or_dates(self):
        from trgen.emit import render
        files = render(load_real(), SCHEMA)
        abs_path = re.compile(r"(?<![\w.*])/(?:home|root|tmp|usr|var|opt|work|etc|Users)/")
        dates = [
            re.compile(r"\b(?:19|20)\d\d[-/.](?:0[1-9]|1[0-2])[-/.](?:0[1-9]|[12]\d|3[01])\b"),
            re.compile(r"\b\d\d:\d\d:\d\d\b"),
            re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? +"
                       r"\d{1,2},? +(?:19|20)\d\d\b"),
            re.compile(r"\b\d{1,2} +(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* +"
                       r"(?:19|20)\d\d\b"),
        ]
        for name, text in files.items():
            for needle in (ROOT, GEN, HERE, os.getcwd(), tempfile.gettempdir(),
                           os.path.expanduser("~")):
                if len(needle) > 1:
                    self.assertNotIn(needle, text, name)
            self.assertIsNone(abs_path.search(text), name)
            for rx in dates:
                m = rx.search(text)
                self.assertIsNone(m, f"{name}: {m and m.group()}")
            if name == "optics.mk":
                self.assertIn("generated by gen/trgen", text.splitlines()[0])
                continue
            # an re2c template's first line records its re2c command; the banner follows
            head = text.splitlines()[1 if name.endswith(".re") else 0]
            self.assertIn(f"generated by triage-gen {VERSION} from {SCHEMA}", head)


if __name__ == "__main__":
    unittest.main()
