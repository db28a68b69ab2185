"""Schema front end: text -> tokens -> a checked intermediate representation.

Every node keeps its source position, and every check runs here, on the IR,
so the templates only ever render a model already known to be valid. Errors
are collected (all of them, not just the first) as Diagnostics and raised
together as SchemaError.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union as TUnion

from .names import c_enum_const, is_plain_name, json_comment

SCALARS = ("i32", "i64", "f64", "bool", "string")
KEYWORDS = ("record", "union", "enum", "root", "optic", "tag", "optional", "list", "map", "raw")
# The rule language's literals (runtime/rules.c): no optic may be named so.
RULE_LITERALS = ("true", "false")
# The most optics a schema may declare: what rules read (runtime/rules.h
# RU_MAX_OPTICS; a gen test checks the two agree).
MAX_OPTICS = 256
# How deep a message's values may nest, the root's object being 1 deep: what
# every reader accepts (runtime/json.h JS_MAX_DEPTH; a gen test checks the
# two agree). A schema whose values may nest deeper is refused: such values
# could never be read. The checker's own passes over the types are loops, so
# a schema deeper than this is told so, never met with a Python recursion.
MAX_DEPTH = 256

INT_RANGE = {"i32": (-(2**31), 2**31 - 1), "i64": (-(2**63), 2**63 - 1)}


@dataclass(frozen=True)
class Pos:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass
class Diagnostic:
    pos: Pos
    message: str
    notes: List[tuple] = field(default_factory=list)  # (Pos, text)

    def render(self) -> str:
        out = [f"{self.pos}: error: {self.message}"]
        out += [f"{p}: note: {t}" for p, t in self.notes]
        return "\n".join(out)


class SchemaError(Exception):
    def __init__(self, diagnostics: List[Diagnostic]):
        super().__init__("\n".join(d.render() for d in diagnostics))
        self.diagnostics = diagnostics


# ---------------------------------------------------------------- the IR


@dataclass
class TypeRef:
    """A use of a type: a scalar, a declared name, list<T> or map<T>."""

    kind: str  # "scalar" | "named" | "list" | "map"
    pos: Pos
    name: str = ""  # scalar or declared name
    elem: Optional["TypeRef"] = None  # list element / map value
    decl: Optional["Decl"] = None  # resolved declaration for "named"

    def spell(self) -> str:
        if self.kind in ("list", "map"):
            return f"{self.kind}<{self.elem.spell()}>"
        if self.kind == "case":
            return f"{self.decl.union.name}.{self.name}"
        if self.kind == "tag":
            # as an optic names it: U.type, or U["@type"] (safe in a C comment)
            tag = self.decl.tag
            return f"{self.name}.{tag}" if is_plain_name(tag) else f"{self.name}[{json_comment(tag)}]"
        return self.name


@dataclass
class Field:
    name: str
    type: TypeRef
    pos: Pos
    optional: bool = False
    range: Optional[tuple] = None  # (lo, hi) for the random generator
    index: int = 0  # position in its record


@dataclass
class Record:
    name: str
    pos: Pos
    fields: List[Field] = field(default_factory=list)
    union: Optional["Union"] = None  # set for a union's case
    case_index: int = 0

    @property
    def is_case(self) -> bool:
        return self.union is not None


@dataclass
class Case:
    name: str
    pos: Pos


@dataclass
class Enum:
    name: str
    pos: Pos
    cases: List[Case] = field(default_factory=list)


@dataclass
class Union:
    name: str
    pos: Pos
    tag: Optional[str] = None
    tag_pos: Optional[Pos] = None
    cases: List[Record] = field(default_factory=list)


Decl = TUnion[Record, Enum, Union]


def decl_fields(d):
    """The fields a declaration holds: a record's, every case's of a union,
    none for an enum."""
    for r in d.cases if isinstance(d, Union) else [d] if isinstance(d, Record) else []:
        yield from r.fields


def held_refs(d):
    """The references to records and unions that d's fields hold, through
    lists and maps (an enum holds nothing)."""
    for f in decl_fields(d):
        t = f.type
        while t.kind in ("list", "map"):
            t = t.elem
        if t.kind == "named" and not isinstance(t.decl, Enum):
            yield t


@dataclass
class Step:
    """One step of an optic path: a field, a union case, an index, the tag."""

    kind: str  # "field" | "case" | "index" | "key" | "tag"
    pos: Pos
    name: str = ""
    index: int = 0
    key: str = ""  # for "key": the map key, unescaped
    field: Optional[Field] = None  # for "field"
    case: Optional[Record] = None  # for "case"
    optic: Optional["Optic"] = None  # for "optic" (composition)
    type: Optional[TypeRef] = None  # the type this step arrives at


@dataclass
class Optic:
    name: str
    pos: Pos
    root: str = ""  # the type the path starts from, as written
    root_pos: Optional[Pos] = None
    chain: List[tuple] = field(default_factory=list)  # as parsed: (kind, name/index/key, pos)
    parts: List[tuple] = field(default_factory=list)  # a path's steps after its root
    raw: bool = False
    compose: List[tuple] = field(default_factory=list)  # (name, pos) when composed
    source: Optional[TypeRef] = None  # resolved: where the path starts
    steps: List[Step] = field(default_factory=list)  # resolved, composition flattened
    focus: Optional[TypeRef] = None  # resolved: the type of the value read


@dataclass
class Schema:
    file: str
    decls: Dict[str, Decl] = field(default_factory=dict)
    order: List[Decl] = field(default_factory=list)  # as declared
    root: Optional[Record] = None
    root_pos: Optional[Pos] = None
    optics: List[Optic] = field(default_factory=list)

    @property
    def records(self) -> List[Record]:
        return [d for d in self.order if isinstance(d, Record)]

    @property
    def enums(self) -> List[Enum]:
        return [d for d in self.order if isinstance(d, Enum)]

    @property
    def unions(self) -> List[Union]:
        return [d for d in self.order if isinstance(d, Union)]


# ---------------------------------------------------------------- lexer

_TOKEN = re.compile(
    r"(?P<ws>[ \t\r]+)|(?P<nl>\n)|(?P<comment>#[^\n]*)"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<int>-?[0-9]+)"
    r"|(?P<str>\"(?:[^\"\\\n]|\\[^\n])*\")|(?P<punct>[{}<>()\[\]:=.,@])"
)


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t"}


def json_string(text: str):
    """A string literal as written in the schema (quotes included), read as
    JSON reads it. Returns (value, None), or (None, (offset, message)) for
    the first thing JSON does not allow, offset counted from the opening
    quote."""
    out = []
    i, n = 1, len(text) - 1
    while i < n:
        ch = text[i]
        if ord(ch) < 0x20:
            return None, (i, f"a raw control character (byte 0x{ord(ch):02x}) in a string; "
                             f"write it as \\u{ord(ch):04x}")
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        e = text[i + 1]
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
            continue
        if e != "u":
            shown = f"'\\{e}'" if e.isprintable() else f"a backslash before byte 0x{ord(e):02x}"
            return None, (i, f"invalid escape {shown} in a string "
                             "(JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
        u = _hex4(text, i + 2)
        if u is None:
            return None, (i, "\\u needs four hex digits")
        if 0xDC00 <= u <= 0xDFFF:
            return None, (i, f"\\u{text[i + 2:i + 6]} is the second half of a surrogate pair, "
                             "without the first")
        if 0xD800 <= u <= 0xDBFF:
            lo = _hex4(text, i + 8) if text[i + 6:i + 8] == "\\u" else None
            if lo is None or not 0xDC00 <= lo <= 0xDFFF:
                return None, (i, f"\\u{text[i + 2:i + 6]} starts a surrogate pair that "
                                 "no \\uDC00-\\uDFFF completes")
            out.append(chr(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)))
            i += 12
            continue
        out.append(chr(u))
        i += 6
    return "".join(out), None


def _hex4(text: str, i: int):
    h = text[i:i + 4]
    if len(h) == 4 and all(c in "0123456789abcdefABCDEF" for c in h):
        return int(h, 16)
    return None


@dataclass
class Tok:
    kind: str
    text: str
    pos: Pos


def lex(text: str, file: str) -> List[Tok]:
    toks: List[Tok] = []
    line, line_start, i = 1, 0, 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        pos = Pos(file, line, i - line_start + 1)
        if not m:
            ch = text[i]
            what = repr(ch) if ch.isprintable() else f"byte 0x{ord(ch):02x}"
            raise SchemaError([Diagnostic(pos, f"unexpected character {what}")])
        kind = m.lastgroup
        if kind == "nl":
            line, line_start = line + 1, m.end()
        elif kind not in ("ws", "comment"):
            toks.append(Tok(kind, m.group(), pos))
        i = m.end()
    toks.append(Tok("eof", "", Pos(file, line, i - line_start + 1)))
    return toks


# ---------------------------------------------------------------- parser


class _Parser:
    def __init__(self, toks: List[Tok], file: str):
        self.toks, self.i, self.file = toks, 0, file
        self.schema = Schema(file)
        self.diags: List[Diagnostic] = []

    # helpers
    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Tok:
        t = self.peek()
        self.i += 1
        return t

    def fail(self, tok: Tok, what: str):
        found = "end of file" if tok.kind == "eof" else f"'{tok.text}'"
        raise SchemaError(self.diags + [Diagnostic(tok.pos, f"expected {what}, found {found}")])

    def expect(self, text: str) -> Tok:
        t = self.peek()
        if t.text != text or t.kind == "str":
            self.fail(t, f"'{text}'")
        return self.next()

    def ident(self, what: str) -> Tok:
        t = self.peek()
        if t.kind != "ident" or t.text in KEYWORDS:
            self.fail(t, what)
        return self.next()

    # grammar
    def parse(self) -> Schema:
        while self.peek().kind != "eof":
            t = self.peek()
            if t.text == "record":
                self.next()
                name = self.ident("a record name")
                self.declare(Record(name.text, name.pos, self.fields()))
            elif t.text == "union":
                self.union()
            elif t.text == "enum":
                self.enum()
            elif t.text == "root":
                self.next()
                name = self.ident("the root type's name")
                if self.schema.root_pos is not None:
                    self.diags.append(
                        Diagnostic(t.pos, "a second root declaration",
                                   [(self.schema.root_pos, "the first is here")]))
                else:
                    self.schema.root_pos = name.pos
                    self.schema.root = name.text  # resolved in check()
            elif t.text == "optic":
                self.optic()
            else:
                self.fail(t, "'record', 'union', 'enum', 'root' or 'optic'")
        return self.schema

    def declare(self, decl: Decl):
        prev = self.schema.decls.get(decl.name)
        if prev is not None:
            self.diags.append(Diagnostic(decl.pos, f"'{decl.name}' is declared twice",
                                         [(prev.pos, "the first declaration is here")]))
            return
        if decl.name in SCALARS:
            self.diags.append(Diagnostic(decl.pos, f"'{decl.name}' is a built-in type"))
            return
        self.schema.decls[decl.name] = decl
        self.schema.order.append(decl)

    def fields(self) -> List[Field]:
        self.expect("{")
        out: List[Field] = []
        while self.peek().text != "}" or self.peek().kind == "str":
            name = self.ident("a field name or '}'")
            self.expect(":")
            optional = False
            if self.peek().text == "optional":
                self.next()
                optional = True
            f = Field(name.text, self.typeref(), name.pos, optional)
            if self.peek().text == "@":
                self.annotation(f)
            out.append(f)
        self.next()
        return out

    def annotation(self, f: Field):
        self.next()
        name = self.ident("an annotation name")
        if name.text != "range":
            self.diags.append(Diagnostic(name.pos, f"unknown annotation '@{name.text}'"))
        self.expect("(")
        lo = self.integer()
        self.expect(",")
        hi = self.integer()
        self.expect(")")
        f.range = (lo, hi, name.pos)

    def string(self, tok: Tok) -> Optional[str]:
        """A string token's value, read as JSON; a bad one is reported at the
        character that is wrong, and None comes back."""
        value, bad = json_string(tok.text)
        if bad is not None:
            off, msg = bad
            self.diags.append(Diagnostic(Pos(tok.pos.file, tok.pos.line, tok.pos.col + off), msg))
        return value

    def integer(self) -> int:
        t = self.peek()
        if t.kind != "int":
            self.fail(t, "an integer")
        self.next()
        return int(t.text)

    def typeref(self) -> TypeRef:
        # list<...> and map<...> around a name, read with a loop: at most
        # MAX_DEPTH of them (each is one level of a message's nesting)
        outer: List[Tok] = []
        while self.peek().text in ("list", "map") and self.peek().kind == "ident":
            t = self.next()
            if len(outer) == MAX_DEPTH:
                raise SchemaError(self.diags + [Diagnostic(
                    t.pos, f"lists and maps nest more than {MAX_DEPTH} deep: readers accept "
                           f"values {MAX_DEPTH} deep at most")])
            self.expect("<")
            outer.append(t)
        name = self.ident("a type")
        ref = TypeRef("scalar" if name.text in SCALARS else "named", name.pos, name.text)
        for t in reversed(outer):
            self.expect(">")
            ref = TypeRef(t.text, t.pos, elem=ref)
        return ref

    def union(self):
        self.next()
        name = self.ident("a union name")
        u = Union(name.text, name.pos)
        if self.peek().text == "tag":
            self.next()
            tag = self.peek()
            if tag.kind == "str" and tag.text == '""':
                raise SchemaError(self.diags + [Diagnostic(
                    tag.pos, "a union's tag must not be empty: it is the key of the member "
                             "that names the case, as in tag \"type\"")])
            if tag.kind != "str" or len(tag.text) < 3:
                self.fail(tag, 'the tag field\'s name in quotes, as in tag "type"')
            self.next()
            value = self.string(tag)
            u.tag, u.tag_pos = (value if value is not None else tag.text[1:-1]), tag.pos
        self.expect("{")
        while self.peek().text != "}":
            case = self.ident("a case name or '}'")
            r = Record(case.text, case.pos, self.fields(), union=u, case_index=len(u.cases))
            u.cases.append(r)
        self.next()
        self.declare(u)

    def enum(self):
        self.next()
        name = self.ident("an enum name")
        e = Enum(name.text, name.pos)
        self.expect("{")
        while self.peek().text != "}":
            case = self.ident("a case name or '}'")
            e.cases.append(Case(case.text, case.pos))
            if self.peek().text == ",":
                self.next()
        self.next()
        self.declare(e)

    def optic(self):
        self.next()
        name = self.ident("an optic name")
        o = Optic(name.text, name.pos)
        self.expect("=")
        first = self.ident("a type or optic name")
        # A path (Type.field[0]["key"]...) or a composition (optic . optic):
        # which one is known only once the names are (the checker decides).
        o.chain.append(("name", first.text, first.pos))
        while self.peek().text in (".", "[") and self.peek().kind == "punct":
            t = self.next()
            if t.text == ".":
                step = self.peek()
                if step.kind != "ident":
                    self.fail(step, "a field, case or optic name")
                self.next()
                o.chain.append(("name", step.text, step.pos))
            elif self.peek().kind == "str":
                key = self.next()
                value = self.string(key)
                self.expect("]")
                o.chain.append(("key", value if value is not None else "", key.pos))
            else:
                idx = self.peek()
                if idx.kind != "int":
                    self.fail(idx, 'a list index or a map key in quotes, as in [0] or ["key"]')
                n = self.integer()
                if n < 0:
                    self.diags.append(Diagnostic(idx.pos, "a list index must be 0 or more"))
                elif n > INT_RANGE["i32"][1]:
                    self.diags.append(Diagnostic(idx.pos, f"a list index must be at most "
                                                          f"{INT_RANGE['i32'][1]}"))
                self.expect("]")
                o.chain.append(("index", n, idx.pos))
        if self.peek().text == "raw":
            self.next()
            o.raw = True
        self.schema.optics.append(o)


# ---------------------------------------------------------------- checks


def _read_hint(t: TypeRef, key: str = "key") -> str:
    """For a path step that does not fit t: how a list's or a map's items
    are read ("" for any other type)."""
    if t.kind == "list":
        return " (a list's items are read by index, as in [0])"
    if t.kind == "map":
        return f" (a map's values are read by key, as in [\"{key}\"])"
    return ""


class _Checker:
    def __init__(self, s: Schema):
        self.s = s
        self.diags: List[Diagnostic] = []

    def err(self, pos: Pos, msg: str, notes=()):
        self.diags.append(Diagnostic(pos, msg, list(notes)))

    @staticmethod
    def guess(name: str, known) -> str:
        """ ": did you mean 'x'?" for the known name closest to a mistyped one."""
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        return f": did you mean '{close[0]}'?" if close else ""

    def run(self):
        s = self.s
        for d in s.order:
            if isinstance(d, Record):
                self.record(d)
            elif isinstance(d, Union):
                self.union(d)
            else:
                self.enum(d)
        if s.root is None:
            self.err(Pos(s.file, 1, 1), "no 'root' declaration names the message type")
        else:
            r = s.decls.get(s.root)
            if r is None:
                self.err(s.root_pos, f"unknown type '{s.root}'{self.guess(s.root, self.s.decls)}")
            elif not isinstance(r, Record):
                self.err(s.root_pos, f"the root '{s.root}' must be a record")
            s.root = r if isinstance(r, Record) else None
        if not self.diags:
            self.cycles()
        if not self.diags:
            self.depth()
        if not self.diags:
            self.optics()
        if len(s.optics) > MAX_OPTICS:
            o = s.optics[MAX_OPTICS]
            self.err(o.pos, f"more than {MAX_OPTICS} optics ({len(s.optics)}): rules read at most "
                            f"{MAX_OPTICS}")
        if not self.diags:
            from .cnames import check  # the C names, once every name resolves

            self.diags += check(s)

    def fields(self, owner: str, fields: List[Field], reserved: Optional[tuple] = None):
        seen: Dict[str, Field] = {}
        for i, f in enumerate(fields):
            f.index = i
            if f.name in seen:
                self.err(f.pos, f"duplicate field '{f.name}' in '{owner}'",
                         [(seen[f.name].pos, "the first is here")])
            seen[f.name] = f
            if reserved and f.name == reserved[0]:
                self.err(f.pos, f"field '{f.name}' clashes with the union's tag field",
                         [(reserved[1], "the tag is declared here")])
            self.resolve(f.type)
            if f.optional and f.type.kind in ("list", "map"):
                self.err(f.pos, f"a {f.type.kind} cannot be optional: an absent one is empty")
            if f.range is not None:
                lo, hi, rpos = f.range
                if f.type.kind != "scalar" or f.type.name not in INT_RANGE:
                    self.err(rpos, "@range applies to i32 and i64 fields only")
                else:
                    tlo, thi = INT_RANGE[f.type.name]
                    if not (tlo <= lo <= hi <= thi):
                        self.err(rpos, f"@range({lo}, {hi}) is empty or outside {f.type.name}")
                f.range = (lo, hi)

    def resolve(self, t: TypeRef):
        if t.kind in ("list", "map"):
            self.resolve(t.elem)
        elif t.kind == "named":
            d = self.s.decls.get(t.name)
            if d is None:
                self.err(t.pos, f"unknown type '{t.name}'"
                                f"{self.guess(t.name, list(self.s.decls) + list(SCALARS))}")
            t.decl = d

    def record(self, r: Record):
        if not r.fields:
            self.err(r.pos, f"record '{r.name}' has no fields")
        self.fields(r.name, r.fields)

    def union(self, u: Union):
        if u.tag is None:
            self.err(u.pos, f"union '{u.name}' has no tag: write union {u.name} tag \"type\" {{ ... }}")
        if not u.cases:
            self.err(u.pos, f"union '{u.name}' has no cases")
        seen: Dict[str, Record] = {}
        for c in u.cases:
            if c.name in seen:
                self.err(c.pos, f"duplicate case '{c.name}' in union '{u.name}'",
                         [(seen[c.name].pos, "the first is here")])
            seen[c.name] = c
            self.fields(f"{u.name}.{c.name}", c.fields,
                        (u.tag, u.tag_pos) if u.tag is not None else None)
        self.c_consts("union", u.name, u.cases)

    def enum(self, e: Enum):
        if not e.cases:
            self.err(e.pos, f"enum '{e.name}' has no cases")
        seen: Dict[str, Case] = {}
        for c in e.cases:
            if c.name in seen:
                self.err(c.pos, f"duplicate case '{c.name}' in enum '{e.name}'",
                         [(seen[c.name].pos, "the first is here")])
            seen[c.name] = c
        self.c_consts("enum", e.name, e.cases)

    def c_consts(self, what: str, name: str, cases):
        """Distinct cases must give distinct C constants (In_Progress and
        InProgress both give TR_STATUS_IN_PROGRESS), none of them the count's."""
        count = c_enum_const(name, "Count")
        seen: Dict[str, object] = {}
        for c in cases:
            k = c_enum_const(name, c.name)
            first = seen.get(k)
            if k == count:
                self.err(c.pos, f"case '{c.name}' of {what} '{name}' gives the C constant {k}, "
                                f"which is reserved for the number of cases")
            elif first is not None and first.name != c.name:
                self.err(c.pos, f"case '{c.name}' of {what} '{name}' gives the same C constant "
                                f"{k} as '{first.name}'",
                         [(first.pos, f"'{first.name}' is here")])
            seen.setdefault(k, c)

    def cycles(self):
        """A record that contains itself (through any path) cannot be decoded
        without recursion on the input; the model has none, so refuse it."""
        state: Dict[str, int] = {}

        def visit(start):
            # depth first, with a stack of (declaration, its held refs to
            # go): a chain of types as long as the schema is takes no recursion
            state[start.name] = 1
            stack = [(start, held_refs(start))]
            while stack:
                d, kids = stack[-1]
                t = next(kids, None)
                if t is None:
                    state[d.name] = 2
                    stack.pop()
                    continue
                st = state.get(t.decl.name, 0)
                if st == 1:
                    trail = [e.name for e, _ in stack]
                    cyc = trail[trail.index(t.decl.name):]  # the loop, not the way in
                    loop = " -> ".join(cyc + [t.decl.name])
                    self.err(t.pos, f"recursive type: {loop}",
                             [(t.decl.pos, f"'{t.decl.name}' is declared here")])
                elif st == 0:
                    state[t.decl.name] = 1
                    stack.append((t.decl, held_refs(t.decl)))

        for d in self.s.order:
            if state.get(d.name, 0) == 0:
                visit(d)

    def depth(self):
        """How deep the root's values may nest (its object 1 deep; a record,
        a union's object, a list or a map one level each): refused past
        MAX_DEPTH, with the way down. Run once cycles found none, over each
        declaration after the ones it holds (a loop, no recursion)."""
        # name: (depth, the steps to its deepest value's holder, that holder's name)
        deep: Dict[str, tuple] = {}

        def of_type(t: TypeRef):
            steps = []
            while t.kind in ("list", "map"):
                steps.append("[0]" if t.kind == "list" else '["k"]')
                t = t.elem
            if t.kind == "named" and not isinstance(t.decl, Enum):
                return len(steps) + deep[t.decl.name][0], steps, t.decl.name
            return len(steps), steps, None

        pending = [self.s.root]
        while pending:
            d = pending[-1]
            if d.name in deep:
                pending.pop()
                continue
            todo = [t.decl for t in held_refs(d) if t.decl.name not in deep]
            if todo:
                pending += todo
                continue
            best = (0, [], None)
            for case in d.cases if isinstance(d, Union) else [d]:
                for f in case.fields:
                    n, steps, below = of_type(f.type)
                    if n > best[0]:
                        head = [f".{case.name}"] if isinstance(d, Union) else []
                        best = (n, head + [f".{f.name}"] + steps, below)
            deep[d.name] = (1 + best[0], best[1], best[2])
            pending.pop()
        n = deep[self.s.root.name][0]
        if n > MAX_DEPTH:
            way, at = [], self.s.root.name
            while at is not None:
                _, steps, at = deep[at]
                way += steps
            text = "".join(way)
            if len(text) > 100:  # its ends, whole steps (one at least each)
                head, tail = way.pop(0), way.pop()
                while way and len(head) + len(way[0]) <= 60:
                    head += way.pop(0)
                while way and len(tail) + len(way[-1]) <= 30:
                    tail = way.pop() + tail
                text = f"{head}...{tail}"
            self.err(self.s.root_pos,
                     f"a message can nest {n} deep ({self.s.root.name}{text}): readers accept "
                     f"values {MAX_DEPTH} deep at most")

    # ---- optics
    def optics(self):
        by_name: Dict[str, Optic] = {}
        for o in self.s.optics:
            if o.name in by_name:
                self.err(o.pos, f"optic '{o.name}' is declared twice",
                         [(by_name[o.name].pos, "the first is here")])
                continue
            if o.name in RULE_LITERALS:
                # rules read `true` and `false` as literals, never as a name
                self.err(o.pos, f"an optic cannot be named '{o.name}': rules read it as a "
                                f"literal (choose another name)")
            if self.classify(o, by_name):
                if o.compose:
                    self.compose(o, by_name)
                else:
                    self.path(o)
            by_name[o.name] = o

    def classify(self, o: Optic, by_name: Dict[str, Optic]) -> bool:
        """Reads the parsed chain as a path from a type (Type.field...) or as
        a composition of optics declared before (a . b); False when it is
        neither (reported)."""
        _, first, fpos = o.chain[0]
        rest = o.chain[1:]
        names_only = all(k == "name" for k, _, _ in rest)
        is_type, is_optic = first in self.s.decls, first in by_name
        if is_type and is_optic:  # both: the case of the first letter decides
            is_type = not first[:1].islower()
        if not is_type and not is_optic:
            if first[:1].islower() and names_only:
                self.err(fpos, f"unknown optic '{first}' (optics are composed from those "
                               f"declared before){self.guess(first, by_name)}")
            else:
                self.err(fpos, f"unknown type '{first}'{self.guess(first, self.s.decls)}")
            return False
        if is_type:
            o.root, o.root_pos, o.parts = first, fpos, rest
            return True
        for kind, _, pos in rest:
            if kind != "name":
                self.err(pos, f"'{first}' is an optic: a composition joins optics by name "
                              f"({first} . other), with no index or key")
                return False
        o.compose = [(v, p) for _, v, p in o.chain]
        return True

    def path(self, o: Optic):
        d = self.s.decls.get(o.root)
        if isinstance(d, Enum):
            self.err(o.root_pos, f"an optic cannot start at the enum '{o.root}'")
            return
        if not o.parts:
            self.err(o.root_pos, f"an optic needs a step after '{o.root}' (as in {o.root}.field): "
                                 f"it reads a part of a value")
            return
        cur = TypeRef("named", o.root_pos, o.root, decl=d)
        o.source = cur
        for kind, val, pos in o.parts:
            step = self.step(cur, kind, val, pos)
            if step is None:
                return
            o.steps.append(step)
            cur = step.type
        o.focus = cur
        self.focus(o)

    def focus(self, o: Optic):
        cur = o.focus
        if o.raw and cur.kind in ("scalar", "tag") or o.raw and isinstance(cur.decl, Enum):
            self.err(o.pos, "'raw' applies to records, unions, lists and maps")
        if not o.raw and cur.kind in ("list", "map", "case"):
            what = "a union case" if cur.kind == "case" else f"a {cur.kind}"
            self.err(o.pos, f"an optic focused on {what} must be raw (write 'raw' after the path)")

    def step(self, cur: TypeRef, kind: str, val, pos: Pos) -> Optional[Step]:
        if kind == "index":
            if cur.kind != "list":
                self.err(pos, f"an index needs a list, and '{cur.spell()}' is not one"
                              f"{_read_hint(cur)}")
                return None
            return Step("index", pos, index=val, type=cur.elem)
        if kind == "key":
            u = cur.decl if cur.kind == "named" else None
            if isinstance(u, Union) and val == u.tag:
                # the tag by its key: for a tag that is no name ("@type")
                return Step("tag", pos, name=val, type=TypeRef("tag", pos, u.name, decl=u))
            if cur.kind != "map":
                hint = (f" (a union's tag is read by its key, as in [\"{u.tag}\"])"
                        if isinstance(u, Union) else _read_hint(cur))
                self.err(pos, f"a key needs a map, and '{cur.spell()}' is not one{hint}")
                return None
            return Step("key", pos, key=val, type=cur.elem)
        d = cur.decl if cur.kind in ("named", "case") else None
        if isinstance(d, Union):
            if val == d.tag:
                return Step("tag", pos, name=val, type=TypeRef("tag", pos, d.name, decl=d))
            for c in d.cases:
                if c.name == val:
                    return Step("case", pos, name=val, case=c,
                                type=TypeRef("case", pos, c.name, decl=c))
            cases = ", ".join(c.name for c in d.cases)
            self.err(pos, f"union '{d.name}' has no case or tag '{val}' (cases: {cases}; "
                          f"tag: {d.tag}){self.guess(val, [c.name for c in d.cases] + [d.tag])}")
            return None
        if isinstance(d, Record):
            for f in d.fields:
                if f.name == val:
                    return Step("field", pos, name=val, field=f, type=f.type)
            owner = f"{d.union.name}.{d.name}" if d.is_case else d.name
            fields = [f.name for f in d.fields]
            listed = f" (fields: {', '.join(fields)})" if len(fields) <= 8 else ""
            self.err(pos, f"'{owner}' has no field '{val}'{self.guess(val, fields)}{listed}")
            return None
        self.err(pos, f"cannot step into '{val}': '{cur.spell()}' has no fields"
                      f"{_read_hint(cur, val)}")
        return None

    def compose(self, o: Optic, by_name: Dict[str, Optic]):
        parts = []
        for name, pos in o.compose:
            p = by_name.get(name)
            if p is None:
                self.err(pos, f"unknown optic '{name}' (optics are composed from those declared "
                              f"before){self.guess(name, by_name)}")
                return
            if p.focus is None:
                return  # already reported
            parts.append((p, pos))
        first = parts[0][0]
        o.source, o.steps, o.focus = first.source, list(first.steps), first.focus
        for p, pos in parts[1:]:
            if not _same_type(o.focus, p.source):
                self.err(pos, f"cannot compose: '{p.name}' starts at '{p.source.spell()}', "
                              f"but the path so far arrives at '{o.focus.spell()}'")
                return
            o.steps += p.steps
            o.focus = p.focus
        o.raw = o.raw or parts[-1][0].raw
        self.focus(o)


def _same_type(a: TypeRef, b: TypeRef) -> bool:
    if a.kind != b.kind:
        return False
    if a.kind in ("list", "map"):
        return _same_type(a.elem, b.elem)
    return a.name == b.name


def parse(text: str, file: str) -> Schema:
    """Parses and checks a schema; raises SchemaError with every problem."""
    p = _Parser(lex(text, file), file)
    s = p.parse()
    c = _Checker(s)
    c.diags = list(p.diags)
    c.run()
    if c.diags:
        c.diags.sort(key=lambda d: (d.pos.line, d.pos.col))
        raise SchemaError(c.diags)
    return s
