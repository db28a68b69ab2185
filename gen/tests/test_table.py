"""Tests of the optic table (tr_optics_table.c, runtime/optic.h's op_schema):
what the generator puts in it, on small inline schemas. That it compiles for
every shape of schema is test_compile's; that its thunks agree with each
other at run time is tests/unit/test_model.c's.

Run from the repo root: PYTHONPATH=gen python3 -m unittest discover -s gen/tests
"""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from trgen.schema import parse  # noqa: E402

try:
    from trgen.emit import Model, render, table_plan
    HAVE_JINJA = True
except ImportError:  # jinja2 missing
    HAVE_JINJA = False

SCHEMA = """
root Msg
record Msg { id: i64  body: Body  items: list<Item>  env: map<string>  when: optional When }
record Item { name: string  n: i32  when: When  tags: list<string> }
record When { at: i64  zone: Zone  ok: bool }
enum Zone { Utc Local }
union Body tag "kind" { Text { text: string  item: Item } Ping { } }
record Spare { x: f64 }
optic body = Msg.body raw
optic kind = Body.kind
optic items = Msg.items raw
optic item0 = Msg.items[0]
optic text = Body.Text raw
optic textItem = Body.Text.item
optic spare = Spare.x
optic env = Msg.env["e"]
optic msgKind = Msg.body.kind
"""


@unittest.skipUnless(HAVE_JINJA, "jinja2 is not installed")
class Table(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.s = parse(SCHEMA, "t.schema")
        cls.t = table_plan(Model(cls.s, "t.schema"))
        cls.files = render(cls.s, "t.schema")
        cls.c = cls.files["tr_optics_table.c"]

    def optic(self, name):
        return next(t for t in self.t.optics if t.optic.name == name)

    def test_types_are_records_and_unions_in_declaration_order(self):
        self.assertEqual([d.name for d in self.t.types],
                         ["Msg", "Item", "When", "Body", "Spare"])
        self.assertEqual(self.t.root, 0)
        self.assertIn('{"Spare", sizeof(tr_Spare), ty_random_Spare, ty_encode_Spare, '
                      'ty_decode_Spare}', self.c)
        # the root decodes through the message decoder, the others through tr_dec_T
        self.assertIn("return tr_decode_Msg(p, n, a, out);", self.c)
        self.assertIn("q = tr_dec_Body(&c, q, p + n, out);", self.c)

    def test_kinds_and_members(self):
        want = {"body": "OP_RAW", "kind": "OP_TAG", "items": "OP_RAW", "item0": "OP_RECORD",
                "text": "OP_RAW", "textItem": "OP_RECORD", "spare": "OP_F64",
                "env": "OP_STRING", "msgKind": "OP_TAG"}
        self.assertEqual({t.optic.name: t.kind for t in self.t.optics}, want)
        self.assertIn(".cases = tr_Body_names,\n        .ncases = 2,", self.c)

    def test_base_is_a_raw_optic_from_the_root_onto_the_source(self):
        self.assertEqual(self.optic("kind").base, 0)       # through body
        self.assertEqual(self.optic("textItem").base, 0)
        self.assertEqual(self.optic("items").base, -1)     # starts at the root
        self.assertEqual(self.optic("spare").base, -1)     # no raw optic onto Spare

    def test_kind_and_first_field(self):
        # the first tag optic a message reaches; the root field its base reads
        self.assertEqual(self.t.kind, 1)
        self.assertEqual(self.t.first_field, 1)  # Msg.body
        self.assertIn(".kind = 1, /* optic kind */", self.c)
        self.assertIn(".first_field = 1, /* Msg.body */", self.c)

    def test_encoders_of_record_and_raw_foci(self):
        self.assertEqual(self.optic("body").encoder, "ty_encode_Body")
        self.assertEqual(self.optic("item0").encoder, "ty_encode_Item")
        self.assertEqual(self.optic("items").encoder, "fe_list_Item")
        self.assertEqual(self.optic("text").encoder, "fe_Body_Text")
        self.assertEqual(self.optic("spare").encoder, "")
        h = self.files["tr_model.h"]
        self.assertIn("uint8_t *tr_encode_list_Item(uint8_t *w, uint8_t *wend, "
                      "const tr_list_Item *v);", h)
        self.assertIn("uint8_t *tr_encode_Body_Text(uint8_t *w, uint8_t *wend, "
                      "const tr_Body_Text *v);", h)
        enc = self.files["tr_encode.c"]
        # a case is written with its tag first, as its union's encoder does
        case = enc[enc.index("uint8_t *tr_encode_Body_Text("):]
        self.assertIn('"{\\"kind\\":"', case[:400])
        self.assertIn("TR_BODY_TEXT", case[:400])

    def test_field_tables_for_record_foci(self):
        self.assertEqual([r.name for r in self.t.field_records], ["When", "Item"])
        self.assertEqual([row.field.name for row in self.t.fields["Item"]],
                         ["name", "n", "when"])  # the list is left out
        # and named, so that the rules loader says what it is
        self.assertEqual(self.t.unread["Item"], [("tags", "list")])
        self.assertEqual(self.t.unread["When"], [])
        self.assertIn('{"when", OP_RECORD, "When", NULL, 0, fg_5, fields_When, 3, NULL, 0},',
                      self.c)
        self.assertIn('{"zone", OP_ENUM, "Zone", tr_Zone_names, 2, fg_1, NULL, 0, NULL, 0},',
                      self.c)
        self.assertIn('static const op_unread unread_Item[1] = {\n    {"tags", "list"},\n};', self.c)
        self.assertIn(".fields = fields_Item,\n        .nfields = 3,\n"
                      "        .unread = unread_Item,\n        .nunread = 1,", self.c)

    def test_every_thunk_has_a_comment_naming_what_it_serves(self):
        h = self.files["tr_optics_thunks.h"]
        thunks = re.findall(r"\n([^\n]*)\nstatic [^\n]*\b((?:og|ty_random|ty_encode|ty_decode"
                            r"|fe|fg|tr_thunk_scan|tr_thunk_seek)_\w+)\(", self.c + h)
        self.assertGreater(len(thunks), 20)
        for comment, name in thunks:
            self.assertTrue(comment.startswith("/*") and comment.endswith("*/"), name)
        for t in self.t.optics:
            o = t.optic.name
            self.assertIn(f"/* optic {o}: {t.optic.source.spell()}", h)
            self.assertIn(f"(tr_scan_{o}) */\nstatic inline bool tr_thunk_scan_{o}(", h)
            self.assertIn(f".scan = tr_thunk_scan_{o},", self.c)
            self.assertIn(f"(tr_get_{o}) */\nstatic bool og_{o}(", self.c)

    def test_optics_mk_lists_the_table(self):
        self.assertIn("\nGEN_EXTRA := tr_optics_table\n", self.files["optics.mk"])

    def test_header_declares_the_table(self):
        h = self.files["tr_optics.h"]
        self.assertIn('#include "optic.h"', h)
        self.assertIn("extern const op_schema tr_schema;", h)


@unittest.skipUnless(HAVE_JINJA, "jinja2 is not installed")
class NoOptics(unittest.TestCase):
    def test_no_optics_no_union(self):
        s = parse("root A\nrecord A { x: i32 }\n", "t.schema")
        c = render(s, "t.schema")["tr_optics_table.c"]
        self.assertIn(".optics = NULL,\n    .noptics = 0,", c)
        self.assertIn(".kind = -1,", c)
        self.assertIn(".first_field = -1,", c)
        self.assertNotIn("whole_begin", c)  # only the root: no helper for the others
        self.assertNotIn("[0]", c)          # no zero-length array

    def test_tag_optic_without_a_way_from_the_root(self):
        s = parse('root A\nrecord A { u: U }\nunion U tag "t" { B { x: i32 } }\n'
                  "optic t = U.t\n", "t.schema")
        t = table_plan(Model(s, "t.schema"))
        self.assertEqual((t.optics[0].base, t.kind, t.first_field), (-1, -1, -1))

    def test_tag_optic_from_the_root(self):
        s = parse('root A\nrecord A { n: i32  u: U }\nunion U tag "t" { B { x: i32 } }\n'
                  "optic t = A.u.t\n", "t.schema")
        t = table_plan(Model(s, "t.schema"))
        self.assertEqual((t.optics[0].base, t.kind, t.first_field), (-1, 0, 1))


if __name__ == "__main__":
    unittest.main()
