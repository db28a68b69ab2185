"""Tests of gen/trgen/names.py: the C naming rules, one function at a time.

Run from the repo root: PYTHONPATH=gen python3 -m unittest discover -s gen/tests
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from trgen import names  # noqa: E402

C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class UpperSnake(unittest.TestCase):
    def check(self, name, want):
        self.assertEqual(names.upper_snake(name), want, name)

    def test_camel_case(self):
        self.check("InProgress", "IN_PROGRESS")
        self.check("CannotReproduce", "CANNOT_REPRODUCE")
        self.check("WontFix", "WONT_FIX")

    def test_lower_camel(self):
        self.check("errorRate", "ERROR_RATE")
        self.check("createdAt", "CREATED_AT")
        self.check("customerVisible", "CUSTOMER_VISIBLE")

    def test_digits(self):
        self.check("P0", "P0")
        self.check("P4", "P4")
        self.check("Sev1", "SEV1")
        self.check("a1B", "A1_B")
        self.check("Sev1A", "SEV1_A")

    def test_acronyms(self):
        self.check("HTTPServer", "HTTP_SERVER")
        self.check("getHTTPResponse", "GET_HTTP_RESPONSE")
        self.check("ABC", "ABC")
        self.check("Ui", "UI")
        self.check("Api", "API")

    def test_single_words(self):
        self.check("Open", "OPEN")
        self.check("x", "X")
        self.check("Count", "COUNT")

    def test_already_snake(self):
        self.check("in_progress", "IN_PROGRESS")
        self.check("IN_PROGRESS", "IN_PROGRESS")
        self.check("In_Progress", "IN_PROGRESS")

    def test_collisions_are_possible(self):
        # Why the schema checks C constants (test_schema.EnumCollision).
        self.assertEqual(names.upper_snake("In_Progress"), names.upper_snake("InProgress"))

    def test_idempotent(self):
        for n in ("InProgress", "HTTPServer", "errorRate", "Sev1", "P0", "a1B"):
            once = names.upper_snake(n)
            self.assertEqual(names.upper_snake(once), once)


class CField(unittest.TestCase):
    def test_plain_names_unchanged(self):
        for n in ("id", "key", "errorRate", "module", "function", "file", "line", "type_"):
            self.assertEqual(names.c_field(n), n)

    def test_c_keywords_get_underscore(self):
        for kw in ("int", "char", "default", "switch", "struct", "union", "enum",
                   "return", "static", "const", "register", "restrict", "inline",
                   "sizeof", "typedef", "volatile", "while", "for", "case", "auto"):
            self.assertEqual(names.c_field(kw), kw + "_", kw)

    def test_c11_keywords_and_macros(self):
        for kw in ("_Bool", "_Atomic", "_Generic", "_Noreturn", "_Static_assert",
                   "_Thread_local", "_Alignas", "_Alignof", "bool", "true", "false", "NULL"):
            self.assertEqual(names.c_field(kw), kw + "_", kw)

    def test_case_sensitive(self):
        self.assertEqual(names.c_field("Int"), "Int")
        self.assertEqual(names.c_field("null"), "null")
        self.assertEqual(names.c_field("INT"), "INT_")  # upper case: could be a macro

    def test_every_keyword_is_an_identifier(self):
        for kw in names.C_KEYWORDS:
            self.assertRegex(names.c_field(kw), C_IDENT)
            self.assertNotIn(names.c_field(kw), names.C_KEYWORDS)

    def test_keyword_set(self):
        # The C11 keywords (6.4.1), all of them.
        c11 = set("""auto break case char const continue default do double else enum
            extern float for goto if inline int long register restrict return short
            signed sizeof static struct switch typedef union unsigned void volatile
            while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary
            _Noreturn _Static_assert _Thread_local""".split())
        self.assertTrue(c11 <= names.C_KEYWORDS, c11 - names.C_KEYWORDS)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The C library headers code that includes tr_model.h may have included first.
STD_HEADERS = """assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h
    locale.h math.h setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h
    stdint.h stdio.h stdlib.h stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h
    wctype.h unistd.h pthread.h sys/types.h sys/socket.h sys/uio.h sys/mman.h sys/stat.h
    fcntl.h poll.h netinet/in.h netdb.h arpa/inet.h""".split()
RUNTIME_INCLUDED = ["arena.h", "error.h", "json.h", "rng.h", "version.h", "object.h", "skip.h",
                    "optic.h", "view.h"]


class MemberNames(unittest.TestCase):
    """c_field keeps a member from being a keyword, a macro or reserved."""

    def test_macro_like_names_get_underscore(self):
        for n in ("EOF", "NULL", "ID", "P0", "INT32_MAX", "TR_MODEL_H", "errno", "stdin",
                  "PRId64", "M_PIf", "st_atime", "si_pid", "and"):
            self.assertEqual(names.c_field(n), n + "_", n)

    def test_reserved_names_get_underscore(self):
        for n in ("__typename", "__x", "_Id", "_X"):
            self.assertEqual(names.c_field(n), n + "_", n)
        for n in ("_id", "_x", "id_", "count", "errorRate", "Bug", "Incident"):
            self.assertEqual(names.c_field(n), n, n)

    @unittest.skipUnless(shutil.which("gcc") or shutil.which("clang"), "no C compiler")
    def test_every_object_like_macro_is_avoided(self):
        """Each macro (not starting with '_') that gcc or clang defines after the
        C library's headers and the runtime's that generated code includes."""
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "t.c")
            with open(src, "w") as f:
                for h in STD_HEADERS:
                    if subprocess.run(["sh", "-c", f"printf '#include <{h}>\n' | "
                                       f"{shutil.which('gcc') or 'clang'} -std=c11 -D_GNU_SOURCE "
                                       "-E -x c - >/dev/null 2>&1"]).returncode == 0:
                        f.write(f"#include <{h}>\n")
                for h in RUNTIME_INCLUDED:
                    f.write(f'#include "{h}"\n')
            seen = set()
            for cc in ("gcc", "clang"):
                if not shutil.which(cc):
                    continue
                out = subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE",
                                      "-I" + os.path.join(ROOT, "runtime"), "-dM", "-E", src],
                                     check=True, stdout=subprocess.PIPE, text=True).stdout
                for line in out.splitlines():
                    m = re.match(r"#define ([A-Za-z][A-Za-z0-9_]*)(?=\s|$)", line)
                    if m:
                        seen.add(m.group(1))
        self.assertTrue(seen)
        self.assertEqual(sorted(n for n in seen if names.c_field(n) == n), [])

    def test_runtime_names_are_the_headers(self):
        """RUNTIME_NAMES holds every tr_/TR_ name runtime/*.h declares."""
        declared = set()
        rt = os.path.join(ROOT, "runtime")
        for h in sorted(os.listdir(rt)):
            if not h.endswith(".h"):
                continue
            with open(os.path.join(rt, h), encoding="utf-8") as f:
                text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)  # comments out
            declared |= set(re.findall(r"#\s*define\s+(TR_\w+)", text))
            declared |= set(re.findall(r"\b(tr_\w+)\s*\(", text))       # functions
            declared |= set(re.findall(r"}\s*(tr_\w+)\s*;", text))       # typedefs
            declared |= {"TR_E_" + c for c in re.findall(r"\bX\((\w+),", text)}
        declared.discard("TR_E_")  # TR_E_##name, the X-macro's paste
        self.assertEqual(sorted(declared - set(names.RUNTIME_NAMES)), [])


    def test_programs_define_no_generated_like_names(self):
        """The code beside the runtime that is compiled with the generated
        headers (the demo, the filter layer, the bench, the tools, the
        tests) defines no macro a generated name could be (TR_..., tr_...):
        an enum Pipe with a case H is TR_PIPE_H, which was filter/pipe.h's
        include guard. Nor does the Makefile pass one with -D."""
        found = []
        for top in ("demo", "filter", "bench", "tools", "tests", "examples"):
            for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
                for fn in files:
                    if not fn.endswith((".h", ".c", ".cpp")):
                        continue
                    path = os.path.join(dirpath, fn)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        for m in re.finditer(r"#\s*define\s+((?:TR|tr)_\w+)", f.read()):
                            found.append(f"{os.path.relpath(path, ROOT)}: {m.group(1)}")
        for mk in ["Makefile"] + [os.path.join("mk", x) for x in os.listdir(os.path.join(ROOT, "mk"))]:
            with open(os.path.join(ROOT, mk), encoding="utf-8") as f:
                found += [f"{mk}: {m}" for m in re.findall(r"-D((?:TR|tr)_\w+)", f.read())]
        self.assertEqual(found, [])


class CTypes(unittest.TestCase):
    def test_c_type(self):
        self.assertEqual(names.c_type("Issue"), "tr_Issue")
        self.assertEqual(names.c_type("Detail"), "tr_Detail")
        self.assertEqual(names.c_type("CheckItem"), "tr_CheckItem")

    def test_c_case_type(self):
        self.assertEqual(names.c_case_type("Detail", "Bug"), "tr_Detail_Bug")
        self.assertEqual(names.c_case_type("Detail", "Incident"), "tr_Detail_Incident")

    def test_prefix(self):
        self.assertEqual(names.PREFIX, "tr_")
        self.assertTrue(names.c_type("X").startswith(names.PREFIX))
        self.assertTrue(names.c_case_type("X", "Y").startswith(names.PREFIX))


class Constants(unittest.TestCase):
    def test_c_enum_const(self):
        self.assertEqual(names.c_enum_const("Status", "InProgress"), "TR_STATUS_IN_PROGRESS")
        self.assertEqual(names.c_enum_const("Priority", "P0"), "TR_PRIORITY_P0")
        self.assertEqual(names.c_enum_const("Severity", "Sev1"), "TR_SEVERITY_SEV1")
        self.assertEqual(names.c_enum_const("Resolution", "CannotReproduce"),
                         "TR_RESOLUTION_CANNOT_REPRODUCE")
        self.assertEqual(names.c_enum_const("Module", "Ui"), "TR_MODULE_UI")
        self.assertEqual(names.c_enum_const("Detail", "Incident"), "TR_DETAIL_INCIDENT")
        self.assertEqual(names.c_enum_const("HTTPStatus", "NotFound"), "TR_HTTP_STATUS_NOT_FOUND")

    def test_c_enum_const_collision(self):
        self.assertEqual(names.c_enum_const("Status", "In_Progress"),
                         names.c_enum_const("Status", "InProgress"))

    def test_c_field_const(self):
        self.assertEqual(names.c_field_const("Issue", "detail"), "TR_ISSUE_F_DETAIL")
        self.assertEqual(names.c_field_const("Issue", "createdAt"), "TR_ISSUE_F_CREATED_AT")
        self.assertEqual(names.c_field_const("Impact", "errorRate"), "TR_IMPACT_F_ERROR_RATE")
        self.assertEqual(names.c_field_const("CheckItem", "done"), "TR_CHECK_ITEM_F_DONE")

    def test_constants_are_identifiers(self):
        for c in (names.c_enum_const("Status", "InProgress"),
                  names.c_field_const("Issue", "slaBreached")):
            self.assertRegex(c, C_IDENT)
            self.assertEqual(c, c.upper())


class CStringLiteral(unittest.TestCase):
    def check(self, s, want):
        self.assertEqual(names.c_string_literal(s), want, repr(s))

    def test_plain(self):
        self.check("type", '"type"')
        self.check("", '""')
        self.check("Sev1", '"Sev1"')
        self.check("a b", '"a b"')

    def test_quote_and_backslash(self):
        self.check('"detail":', '"\\"detail\\":"')
        self.check("a\\b", '"a\\\\b"')
        self.check('{"type":', '"{\\"type\\":"')

    def test_question_mark_no_trigraph(self):
        # gcc -std=c11 replaces trigraphs: "??=" would become "#".
        self.check("??=", '"\\?\\?="')
        self.assertNotIn("??", names.c_string_literal("a??/b"))

    def test_control_characters_octal(self):
        self.check("\n", '"\\012"')
        self.check("\t", '"\\011"')
        self.check("\x00", '"\\000"')
        self.check("\x7f", '"\\177"')
        self.check("\x1f", '"\\037"')

    def test_octal_is_three_digits(self):
        # An octal escape stops after three digits, so a digit after it is safe.
        self.check("\n1", '"\\0121"')

    def test_utf8_bytes(self):
        self.check("é", '"\\303\\251"')
        self.check("€", '"\\342\\202\\254"')
        self.check("aé1", '"a\\303\\2511"')

    def test_only_printable_ascii_out(self):
        s = names.c_string_literal("".join(chr(i) for i in range(0, 0x100)))
        self.assertTrue(all(0x20 <= ord(ch) < 0x7F for ch in s))

    @unittest.skipUnless(shutil.which("cc") or shutil.which("gcc"), "no C compiler")
    def test_round_trip_through_c(self):
        """The literal, compiled as C11, holds exactly the UTF-8 bytes."""
        samples = ["type", '"detail":', "a\\b", "??=", "??/", "\n1", "é", "\x01\x7f", "tab\there"]
        cc = shutil.which("cc") or shutil.which("gcc")
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "t.c")
            with open(src, "w") as f:
                f.write("#include <stdio.h>\nint main(void) {\n")
                for s in samples:
                    lit = names.c_string_literal(s)
                    f.write(f"    fwrite({lit}, 1, sizeof {lit} - 1, stdout); putchar(0);\n")
                f.write("    return 0;\n}\n")
            exe = os.path.join(d, "t")
            subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-Wno-trigraphs", src, "-o", exe],
                           check=True)
            out = subprocess.run([exe], check=True, stdout=subprocess.PIPE).stdout
        self.assertEqual(out.split(b"\0")[:-1], [s.encode("utf-8") for s in samples])


class JsonStrings(unittest.TestCase):
    """Map keys and union tags are JSON strings: how the generator writes them."""

    def test_json_quote_escapes_like_the_encoder(self):
        self.assertEqual(names.json_quote("type"), '"type"')
        self.assertEqual(names.json_quote('a"b\\c'), '"a\\"b\\\\c"')
        self.assertEqual(names.json_quote("\n\t\x01/é"), '"\\n\\t\\u0001/é"')

    def test_json_comment_is_safe_in_a_comment(self):
        for s in ("*/", "/*", "a*/b", "x??/", "???=", "é€😀", "\x00\n", 'q"'):
            c = names.json_comment(s)
            self.assertTrue(c.isascii() and c.isprintable(), c)
            self.assertNotIn("*/", c)
            self.assertNotIn("/*", c)
            self.assertNotIn("??", c)
            self.assertEqual(json.loads(c), s)
        self.assertEqual(names.json_comment("type"), '"type"')

    def test_comment_text(self):
        self.assertEqual(names.comment_text("a/*b*/c??/"), "a/ *b* /c?\\?/")

    def test_re2c_string(self):
        self.assertEqual(names.re2c_string("type"), '"\\"type\\""')
        self.assertEqual(names.re2c_string("a b"), '"\\"a\\x20b\\""')
        self.assertEqual(names.re2c_string("é"), '"\\"\\xC3\\xA9\\""')
        self.assertEqual(names.re2c_string(""), '"\\"\\""')
        # a key JSON must escape has no unescaped spelling: the slow path reads it
        for s in ('a"b', "a\\b", "\n", "\x00"):
            self.assertIsNone(names.re2c_string(s))


if __name__ == "__main__":
    unittest.main()
