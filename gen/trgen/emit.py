"""Emitter: a checked Schema -> C source files, through Jinja2 templates.

The Python side computes everything the templates need (C names, type
orders, key-dispatch tables); the templates only lay it out. Output is a
function of the schema and the generator alone: no dates, no absolute paths.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import names
from .schema import Enum, Record, Schema, TypeRef, Union, decl_fields

TEMPLATES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "templates")

# Bump when the runtime's interface to generated code changes (with
# runtime/version.h's TR_RUNTIME_VERSION); the generated
# header refuses to compile against another runtime version.
RUNTIME_VERSION = 4

# runtime/rng.h's RG_INDEX_PLANT (tr_random.c checks they agree).
RG_INDEX_PLANT = 32

SCALAR_C = {"i32": "int32_t", "i64": "int64_t", "f64": "double", "bool": "bool", "string": "js_str"}


def int64_literal(v: int) -> str:
    """An integer as a C int64_t constant: INT64_MIN spelled so (its digits
    alone are past the largest long long, and the minus applies after)."""
    return "INT64_MIN" if v == -(1 << 63) else f"{v}LL"


def mangle(t: TypeRef) -> str:
    """A name for a type usable inside C identifiers: list<Person> -> list_Person."""
    if t.kind in ("scalar", "named"):
        return t.name
    return f"{t.kind}_{mangle(t.elem)}"


def ctype(t: TypeRef) -> str:
    if t.kind == "scalar":
        return SCALAR_C[t.name]
    if t.kind == "named":
        return names.c_type(t.name)
    return names.PREFIX + mangle(t)


def focus_ctype(t: TypeRef) -> str:
    """The C type an optic's getter produces."""
    if t.kind == "tag":
        return names.c_type(t.decl.name) + "_kind"
    if t.kind == "case":
        return names.c_case_type(t.decl.union.name, t.decl.name)
    return ctype(t)


def by_pointer(t: TypeRef) -> bool:
    """Aggregates are returned as pointers into the model, scalars by value."""
    return t.kind in ("list", "map", "case") or (t.kind == "named" and not isinstance(t.decl, Enum))


def is_enum(t: TypeRef) -> bool:
    return t.kind == "named" and isinstance(t.decl, Enum)


def is_union(t: TypeRef) -> bool:
    return t.kind == "named" and isinstance(t.decl, Union)


def is_record(t: TypeRef) -> bool:
    return t.kind == "named" and isinstance(t.decl, Record)


@dataclass
class Selection:
    """The types one output file holds, and which leaves they use."""

    records: List = field(default_factory=list)  # records and unions, value order
    enums: List = field(default_factory=list)
    lists: List = field(default_factory=list)
    maps: List = field(default_factory=list)
    unions: List = field(default_factory=list)
    scalars: set = field(default_factory=set)  # scalar names some field holds
    enum_values: bool = False  # some field holds an enum


def _inner_first(ts: List[TypeRef]) -> List[TypeRef]:
    """Containers, each after the containers it holds (a list<map<E>>
    typedef names tr_map_E), otherwise in the order given."""
    out: List[TypeRef] = []
    done = set()

    def visit(t: TypeRef):
        if t.kind not in ("list", "map") or mangle(t) in done:
            return
        visit(t.elem)
        done.add(mangle(t))
        out.append(t)

    for t in ts:
        visit(t)
    return out


@dataclass
class KeyTable:
    """Keys grouped for dispatch: by length, then by first byte."""

    by_len: List[tuple] = field(default_factory=list)  # (len, [(first, [(key, idx)])])


def key_table(keys: List[tuple]) -> KeyTable:
    """keys: [(name, index)] -> a switch on length, then on the first byte."""
    groups: Dict[int, Dict[str, list]] = {}
    for k, idx in keys:
        raw = k.encode("utf-8")
        groups.setdefault(len(raw), {}).setdefault(raw[:1].decode("latin-1"), []).append((k, idx))
    t = KeyTable()
    for n in sorted(groups):
        t.by_len.append((n, sorted(groups[n].items())))
    return t


def step_text(st) -> str:
    """One step of a path as a comment writes it: .name, [0] or ["key"] (a
    union's tag as .name when it is a name, else as ["tag"])."""
    if st.kind == "index":
        return f"[{st.index}]"
    if st.kind == "key" or (st.kind == "tag" and not names.is_plain_name(st.name)):
        return f"[{names.json_comment(st.key if st.kind == 'key' else st.name)}]"
    return "." + st.name


def path_text(o) -> str:
    """An optic's path, composition flattened: Issue.detail.Incident.severity."""
    return o.source.spell() + "".join(step_text(st) for st in o.steps)


def key_text(k: str) -> str:
    """A key in a comment: as it is when it is a plain name, else as JSON."""
    return k if names.is_plain_name(k) else names.json_comment(k)


def c_char(ch: str) -> str:
    """A one-byte C constant: a character constant for printable ASCII, else
    the byte's value (a char constant past 0x7f is negative where char is
    signed, and a switch on a uint8_t never meets it)."""
    b = ord(ch)
    if ch in "'\\":
        return "'\\" + ch + "'"
    if 0x20 <= b < 0x7F:
        return f"'{ch}'"
    return f"0x{b:02x}"


def key_groups(keys: List[str]):
    """The keys a matcher compares whole (those re2c can spell), grouped by
    the byte after the opening quote: [(byte, its C constant for a
    comment, [(index, key), ...]), ...] in the order each byte first comes
    ('"' for the empty key)."""
    groups: Dict[int, list] = {}
    for i, k in enumerate(keys):
        if names.re2c_string(k):
            b = (k.encode("utf-8") or b'"')[0]
            groups.setdefault(b, []).append((i, k))
    return [(b, c_char(chr(b)), g) for b, g in groups.items()]


class Model:
    """The schema seen from C: everything the templates iterate over."""

    def __init__(self, s: Schema, schema_path: str):
        self.s = s
        self.schema_path = schema_path
        self.root = s.root
        self.enums = s.enums
        self.unions = s.unions
        self.records = self._records_in_value_order()
        self.lists, self.maps = self._containers()
        self.containers = _inner_first(self.lists + self.maps)
        self.optics = s.optics
        # raw optics' foci that need an encoder of their own (tr_encode.c)
        self.raw_encoders = raw_encoder_types(s)
        # What each output holds: the decoder, encoder and random generators
        # serve every declared type (their entry points are public); the
        # validator has one entry point, the root, so it holds only what the
        # root reaches. Static helpers are emitted only where something calls
        # them, so a schema with no string, bool or enum still compiles
        # without unused-function warnings.
        self.all = self._selection(None)
        self.reached = self._selection(self._reachable())
        # The maps optics read by key: their lookup helpers (the getters), and
        # the keys the random generator plants so those optics can hit.
        self.key_maps: List[TypeRef] = []
        self.map_keys: Dict[str, List[str]] = {}
        # The lists optics read by index: the furthest item read in each
        # (below RG_INDEX_PLANT), which the random generator makes there.
        self.list_reach: Dict[str, int] = {}
        for o in self.optics:
            cur = o.source
            for st in o.steps:
                if st.kind == "index" and st.index < RG_INDEX_PLANT:
                    self.list_reach[mangle(cur)] = max(self.list_reach.get(mangle(cur), -1), st.index)
                if st.kind == "key":
                    if mangle(cur) not in self.map_keys:
                        self.key_maps.append(cur)
                        self.map_keys[mangle(cur)] = []
                    if st.key not in self.map_keys[mangle(cur)]:
                        self.map_keys[mangle(cur)].append(st.key)
                cur = st.type

    def _reachable(self) -> set:
        """ids of the declarations the root reaches, and mangled containers."""
        seen = set()

        def visit_type(t: TypeRef):
            if t.kind in ("list", "map"):
                seen.add(mangle(t))
                visit_type(t.elem)
            elif t.kind == "named":
                visit(t.decl)

        def visit(d):
            if id(d) in seen:
                return
            seen.add(id(d))
            for f in decl_fields(d):
                visit_type(f.type)

        visit(self.root)
        return seen

    def _selection(self, reach) -> "Selection":
        keep = (lambda d: True) if reach is None else (lambda d: id(d) in reach)
        keep_t = (lambda t: True) if reach is None else (lambda t: mangle(t) in reach)
        sel = Selection(
            records=[d for d in self.records if keep(d)],
            enums=[e for e in self.enums if keep(e)],
            lists=[t for t in self.lists if keep_t(t)],
            maps=[t for t in self.maps if keep_t(t)],
        )
        sel.unions = [d for d in sel.records if isinstance(d, Union)]

        def leaves(t: TypeRef):
            while t.kind in ("list", "map"):
                t = t.elem
            return t

        for d in sel.records:
            for f in decl_fields(d):
                t = leaves(f.type)
                if t.kind == "scalar":
                    sel.scalars.add(t.name)
                elif is_enum(t):
                    sel.enum_values = True
        return sel

    def _records_in_value_order(self) -> List[Record]:
        """Every record and union case, each after those it holds by value."""
        out: List = []
        done = set()

        def visit(d):
            if id(d) in done:
                return
            done.add(id(d))
            for f in decl_fields(d):
                if f.type.kind == "named" and not isinstance(f.type.decl, Enum):
                    visit(f.type.decl)
            out.append(d)

        for d in self.s.order:
            if not isinstance(d, Enum):
                visit(d)
        return out

    def _containers(self):
        lists: Dict[str, TypeRef] = {}
        maps: Dict[str, TypeRef] = {}

        def walk(t: TypeRef):
            if t.kind in ("list", "map"):
                walk(t.elem)  # inner first: its typedef comes first
                (lists if t.kind == "list" else maps).setdefault(mangle(t), t)

        for d in self.s.order:
            for f in decl_fields(d):
                walk(f.type)
        return list(lists.values()), list(maps.values())

    # helpers for templates
    def struct_name(self, d) -> str:
        if isinstance(d, Record) and d.is_case:
            return names.c_case_type(d.union.name, d.name)
        return names.c_type(d.name)

    def label(self, d) -> str:
        """How a comment names a schema element."""
        if isinstance(d, Record) and d.is_case:
            return f"{d.union.name}.{d.name}"
        return d.name


def render(s: Schema, schema_path: str) -> Dict[str, str]:
    """Renders every output file: {file name: text}."""
    import jinja2  # needed to emit only: the checker uses this module's names

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["q"] = names.json_comment  # a JSON string safe in a comment
    env.filters["key_text"] = key_text
    env.globals.update(
        names=names,
        ctype=ctype,
        mangle=mangle,
        is_enum=is_enum,
        is_union=is_union,
        is_record=is_record,
        key_table=key_table,
        focus_ctype=focus_ctype,
        by_pointer=by_pointer,
        c_char=c_char,
        path_text=path_text,
        encoder_name=encoder_name,
        encode_thunk=encode_thunk,
        re2c_string=names.re2c_string,
        re2c_prefixes=names.re2c_prefixes,
        key_groups=key_groups,
        isinstance=isinstance,
        Record=Record,
        Union=Union,
        Enum=Enum,
        RUNTIME_VERSION=RUNTIME_VERSION,
        RG_INDEX_PLANT=RG_INDEX_PLANT,
        int64_literal=int64_literal,
    )
    m = Model(s, schema_path)
    m.scanners = [scanner_plan(o, s.root) for o in s.optics]
    m.views = view_types(m)
    m.root_views = root_views(s)
    m.table = table_plan(m)
    m.levels = level_sets(m.scanners)
    out = {}
    for tpl, name in (
        ("model.h.j2", "tr_model.h"),
        ("model.c.j2", "tr_model.c"),
        ("encode.c.j2", "tr_encode.c"),
        ("decode.c.j2", "tr_decode.c"),
        ("random.c.j2", "tr_random.c"),
        ("optics.h.j2", "tr_optics.h"),
        ("optics_thunks.h.j2", "tr_optics_thunks.h"),
        ("optics_model.c.j2", "tr_optics_model.c"),
        ("optics_table.c.j2", "tr_optics_table.c"),
    ):
        out[name] = env.get_template(tpl).render(m=m, output=name, mode="decode")
    out["tr_validate.c"] = env.get_template("decode.c.j2").render(m=m, output="tr_validate.c",
                                                                   mode="validate")
    for sc in m.scanners:
        name = f"tr_scan_{sc.optic.name}.re"
        out[name] = env.get_template("scan.re.j2").render(m=m, plan=sc, output=name)
    out["tr_levels.re"] = env.get_template("levels.re.j2").render(m=m, output="tr_levels.re")
    out["optics.mk"] = (
        "# generated by gen/trgen: the scanners to compile, and the C files besides\n"
        "# the fixed ones (tr_model, tr_encode, ...) and the scanners\n"
        "OPTICS := " + " ".join(sc.optic.name for sc in m.scanners) + "\n"
        "GEN_EXTRA := tr_optics_table\n")
    return out


@dataclass
class RootView:
    """A raw optic on one field of the root: the validator hands back its bytes."""

    optic: str
    field: str
    view: str
    index: int  # the optic's, in s.optics (and the table's views[] and has[])


def root_views(s: Schema) -> List[RootView]:
    """The raw optics whose path is one field of the root, in schema order, one per field."""
    out: List[RootView] = []
    for i, o in enumerate(s.optics):
        if (o.raw and not o.compose and len(o.steps) == 1 and o.steps[0].kind == "field"
                and o.source.kind == "named" and o.source.decl is s.root
                and all(v.field != o.steps[0].name for v in out)):
            out.append(RootView(o.name, o.steps[0].name, view_type(o.focus, s.root), i))
    return out


def view_types(m: "Model") -> List[str]:
    """Every distinct view type the scanners take or give, besides tr_message."""
    seen: List[str] = []
    for sc in m.scanners:
        for t in (sc.source_view, sc.out_type if sc.raw else None):
            if t and t != "tr_message" and t not in seen:
                seen.append(t)
    return seen


# ---------------------------------------------------------------- scanners


# runtime/skip.h's bounds on the keys a walk is given (sk_firsts): how many,
# and the bytes of each compared (its quotes included).
SK_KEYS = 4
SK_KEY_BYTES = 15


@dataclass
class Level:
    """One object or array a scanner passes through on its way to the focus.

    kind "object": find the member `key`, a field's name or a map's key
    (and, when `case` is set, check the
    union's tag names that case, wherever the tag stands); "tag": read only
    the union's tag; "index": take element `index` of an array."""

    kind: str
    label: str
    key: Optional[str] = None  # "" is a key too (a map's)
    union: object = None
    case: object = None
    index: int = 0
    # The record (or union case) whose field `key` is; None for a map's key.
    record: object = None

    @property
    def wide(self) -> bool:
        """The object has many members (a record of more than WIDE fields, a
        union's case counting its tag, or a map): its walk is given the keys
        (want)."""
        if self.record is None:
            return self.key is not None  # a map's key
        return len(self.record.fields) + (self.case is not None) > WIDE

    def _before(self):
        """The fields declared before `key` in its record, or None when
        `key` is none of its fields (a map's key, a tag)."""
        if self.record is None or self.key is None:
            return None
        names_before = []
        for f in self.record.fields:
            if f.name == self.key:
                return names_before
            names_before.append(f)
        return None

    @property
    def after_tag(self) -> bool:
        """The key is its case's first field: written in declared order (as
        our encoder and most write records), it comes right after the tag,
        so the scanner looks there before walking on (sk_resume_after).
        Only there: a look that finds another key costs a little before the
        walk."""
        return self.case is not None and self._before() == []

    @property
    def steps(self) -> List[tuple]:
        """The members declared before `key` that the scanner passes over
        one by one where they stand (skip.h: sk_step) before any walk, when
        they are all scalars and at most STEPS: then, written in declared
        order, the wanted key is the next one the scanner looks at. Each as
        (C literal, length) of its key spelled from the quote to the ':'.
        Empty when the steps could not reach the key (a list, map, record
        or union in front, or more than STEPS): steps that end in a walk
        anyway only add their cost to it. Few: each step waits for the one
        before, where the walk's blocks run side by side."""
        before = self._before()
        if before is None or len(before) > STEPS:
            return []
        out = []
        for f in before:
            t = f.type
            scalar = t.kind == "scalar" or (t.kind == "named" and isinstance(t.decl, Enum))
            quoted = names.json_quote(f.name)
            if not scalar or quoted[1:-1] != f.name or f.name in self.keys:
                return []
            spelled = (quoted + ":").encode("utf-8")
            out.append((names.c_bytes_literal(spelled), len(spelled)))
        return out

    @property
    def keys(self) -> List[str]:
        """Keys matched at this level, the tag first when there is one."""
        out = []
        if self.union is not None:
            out.append(self.union.tag)
        if self.key is not None:
            out.append(self.key)
        return out

    def _distinct_firsts(self) -> List[str]:
        fs = []
        for k in self.keys:
            b = k.encode("utf-8")[:1].decode("latin-1") or '"'
            if b not in fs:
                fs.append(b)
        return fs

    @property
    def firsts(self) -> List[str]:
        """The wanted keys' first bytes, padded to four for sk_firsts."""
        fs = self._distinct_firsts()
        return (fs + [fs[-1]] * 4)[:4]

    @property
    def nfirsts(self) -> int:
        return min(4, len(self._distinct_firsts()))

    @property
    def want(self) -> str:
        """The level's sk_firsts initialiser: its first bytes, and its keys
        for the walk to compare in line (skip.h) when it may and it pays: at
        most SK_KEYS of them, each spelled as it is (no byte JSON escapes),
        in an object of many members. Passing over a string that is no key
        saves a stop, comparing costs each wanted key's stop a little: it
        pays where many members stand in front of the key, not in small
        objects."""
        firsts = ", ".join(c_char(b) for b in self.firsts)
        keys = self.keys
        if (not self.wide or len(keys) > SK_KEYS
                or any(names.json_quote(k)[1:-1] != k for k in keys)):
            return f"{{{{{firsts}}}, {self.nfirsts}, 0, {{0}}, {{{{0}}}}}}"
        spelled = [(b'"' + k.encode("utf-8") + b'"')[:SK_KEY_BYTES] for k in keys]
        lens = ", ".join(str(len(b)) for b in spelled)
        pats = ", ".join(names.c_bytes_literal(b) for b in spelled)
        return f"{{{{{firsts}}}, {self.nfirsts}, {len(keys)}, {{{lens}}}, {{{pats}}}}}"


@dataclass
class Scanner:
    optic: object
    levels: List[Level]
    source_view: str  # C type of the bytes the scanner reads
    focus: TypeRef
    raw: bool
    out_type: str  # what *out receives
    needs_arena: bool
    enums: List[object]  # enums and unions whose case names are matched
    # A raw list or map focus read by a field step: its view when the object
    # closes without the field ("[]" or "{}": absent is empty); else "".
    empty_if_absent: str = ""
    # The level matcher of the object its first step is a member of
    # (level_sets), or None.
    level: object = None


def view_type(t: TypeRef, root) -> str:
    """The distinct view type of a type's bytes: tr_message for the root."""
    if t.kind == "named" and t.decl is root:
        return "tr_message"
    if t.kind == "case":
        return names.PREFIX + "view_" + t.decl.union.name + "_" + t.decl.name
    return names.PREFIX + "view_" + mangle(t)


# A record of more fields than this (or a map) is an object of many members
# (Level.wide).
WIDE = 16

# The most members a scanner passes over one by one before a wanted field
# (Level.steps: more wait on each other longer than the walk takes).
STEPS = 1


def scanner_plan(o, root) -> Scanner:
    levels: List[Level] = []
    pending_case = None
    cur = o.source
    for st in o.steps:
        if st.kind == "field":
            label = f"{cur.spell()}.{st.name}"
            if pending_case is not None:
                levels.append(Level("object", label, key=st.name, union=pending_case.union,
                                    case=pending_case, record=pending_case))
                pending_case = None
            else:
                assert isinstance(cur.decl, Record), cur.spell()  # the checker's: a field of a record
                levels.append(Level("object", label, key=st.name, record=cur.decl))
        elif st.kind == "case":
            pending_case = st.case
        elif st.kind == "tag":
            levels.append(Level("tag", f"{cur.spell()}{step_text(st)}", union=cur.decl))
        elif st.kind == "index":
            levels.append(Level("index", f"{cur.spell()}[{st.index}]", index=st.index))
        elif st.kind == "key":  # a map is an object: its key is found like a field's
            levels.append(Level("object", f"{cur.spell()}{step_text(st)}", key=st.key))
        cur = st.type
    if pending_case is not None:  # the focus is the case itself: check the tag only
        levels.append(Level("case", f"{pending_case.union.name}.{pending_case.name}",
                            union=pending_case.union, case=pending_case))
    focus = o.focus
    enums = []
    if focus.kind == "tag":
        out_type = names.c_type(focus.decl.name) + "_kind"
    elif o.raw:
        out_type = view_type(focus, root)
    else:
        out_type = ctype(focus)
    if focus.kind == "named" and isinstance(focus.decl, Enum):
        enums.append(focus.decl)
    for lv in levels:
        if lv.union is not None and lv.union not in enums:
            enums.append(lv.union)
    needs_arena = not o.raw and (
        (focus.kind == "scalar" and focus.name == "string")
        or (focus.kind == "named" and not isinstance(focus.decl, Enum)))
    empty = ""
    if o.raw and o.steps and o.steps[-1].kind == "field" and focus.kind in ("list", "map"):
        empty = "[]" if focus.kind == "list" else "{}"
    return Scanner(o, levels, view_type(o.source, root), focus, o.raw, out_type, needs_arena, enums,
                   empty)


@dataclass
class LevelSet:
    """The object optics start in, as a level matcher sees it (level.h):
    every key an optic's first step looks for there, the union's tag first
    when the object is a union's, in the order the optics name them."""

    name: str  # the source type's name (a record or union)
    decl: object
    keys: List[str]
    union: object = None  # the union, when the object is one


def level_sets(scanners: List[Scanner]) -> List[LevelSet]:
    """One LevelSet per type some optic's first step is a member of, in the
    order of the optics first starting there; each such scanner's level is
    set to its own."""
    sets: Dict[str, LevelSet] = {}
    for sc in scanners:
        L0 = sc.levels[0] if sc.levels else None
        if L0 is None or L0.kind not in ("object", "tag", "case"):
            continue
        src = sc.optic.source
        ls = sets.setdefault(src.decl.name, LevelSet(src.decl.name, src.decl, []))
        sc.level = ls
        if L0.union is not None:
            ls.union = L0.union
        for k in L0.keys:
            if k not in ls.keys:
                ls.keys.append(k)
    for ls in sets.values():  # the tag first, as a scanner has it
        if ls.union is not None:
            ls.keys.remove(ls.union.tag)
            ls.keys.insert(0, ls.union.tag)
    return list(sets.values())


# ---------------------------------------------------------------- the optic table

OP_SCALAR = {"bool": ("OP_BOOL", "b"), "i32": ("OP_I32", "i"), "i64": ("OP_I64", "i"),
             "f64": ("OP_F64", "f"), "string": ("OP_STRING", "s")}


@dataclass
class TableField:
    """One field of a record in an op_field table (runtime/optic.h)."""

    field: object
    record: object  # the Record holding it
    kind: str  # OP_*
    member: str  # op_value member the getter sets
    num: int = 0  # its getter is fg_<num>
    nested: object = None  # OP_RECORD: the Record whose table it points to


@dataclass
class TableOptic:
    optic: object
    kind: str  # OP_*
    member: str  # op_value member: b i f s e ptr bytes
    source: int  # index into the types
    base: int
    encoder: str = ""  # OP_RECORD, OP_RAW: the encode thunk's name
    cases: object = None  # OP_ENUM, OP_TAG: the Enum or Union


@dataclass
class Table:
    types: List[object]  # records and unions, in declaration order
    root: int
    optics: List[TableOptic]
    kind: int
    first_field: int
    field_records: List[object]  # records with an op_field table, nested first
    fields: Dict[str, List[TableField]]  # record name -> its table rows
    # record name -> its fields rules cannot read, as (name, "list" | "map" | "union")
    unread: Dict[str, List[tuple]]


def raw_encoder_types(s: Schema) -> List[TypeRef]:
    """The raw optics' foci that have no encoder of their own (lists, maps,
    union cases): tr_encode.c gives each one (tr_encode_<mangled>)."""
    out: List[TypeRef] = []
    for o in s.optics:
        f = o.focus
        if o.raw and f.kind in ("list", "map", "case") and all(
                encoder_name(f) != encoder_name(t) for t in out):
            out.append(f)
    return out


def encoder_name(t: TypeRef) -> str:
    """The public encoder of a type: tr_encode_Person, tr_encode_list_Frame,
    tr_encode_Detail_Bug (a union case, tag included)."""
    if t.kind == "case":
        return f"{names.PREFIX}encode_{t.decl.union.name}_{t.decl.name}"
    return f"{names.PREFIX}encode_{mangle(t)}"


def encode_thunk(t: TypeRef) -> str:
    """The table's thunk (const void *) for the encoder of a record or raw
    optic's focus: ty_encode_Person for a declared type, fe_list_Frame or
    fe_Detail_Bug for the foci of m.raw_encoders."""
    if t.kind == "named":
        return "ty_encode_" + t.name
    return "fe_" + encoder_name(t)[len(names.PREFIX + "encode_"):]


def table_plan(m: "Model") -> Table:
    s = m.s
    types = [d for d in s.order if not isinstance(d, Enum)]
    index = {id(d): i for i, d in enumerate(types)}
    root = index[id(s.root)]

    def base_of(o) -> int:
        if o.source.decl is s.root:
            return -1
        for i, b in enumerate(s.optics):
            if (b.raw and b.source.decl is s.root and b.focus.kind == "named"
                    and b.focus.decl is o.source.decl):
                return i
        return -1

    optics: List[TableOptic] = []
    for o in s.optics:
        f = o.focus
        t = TableOptic(o, "", "", index[id(o.source.decl)], base_of(o))
        if f.kind == "tag":
            t.kind, t.member, t.cases = "OP_TAG", "e", f.decl
        elif o.raw:
            t.kind, t.member = "OP_RAW", "bytes"
        elif f.kind == "scalar":
            t.kind, t.member = OP_SCALAR[f.name]
        elif is_enum(f):
            t.kind, t.member, t.cases = "OP_ENUM", "e", f.decl
        else:
            t.kind, t.member = "OP_RECORD", "ptr"
        if t.kind in ("OP_RECORD", "OP_RAW"):
            t.encoder = encode_thunk(f)
        optics.append(t)

    kind, first_field = -1, -1
    for i, t in enumerate(optics):
        if t.kind == "OP_TAG" and (t.optic.source.decl is s.root or t.base >= 0):
            kind = i
            path = optics[t.base].optic if t.base >= 0 else t.optic
            if path.steps and path.steps[0].kind == "field":
                first_field = path.steps[0].field.index
            break

    # op_field tables: the records record-focused optics reach through fields
    want = set()

    def visit(r):
        if id(r) in want:
            return
        want.add(id(r))
        for fl in r.fields:
            if is_record(fl.type):
                visit(fl.type.decl)

    for t in optics:
        if t.kind == "OP_RECORD" and is_record(t.optic.focus):
            visit(t.optic.focus.decl)
    field_records = [d for d in m.records if id(d) in want]
    fields: Dict[str, List[TableField]] = {}
    unread: Dict[str, List[tuple]] = {}
    n = 0
    for r in field_records:
        rows = []
        unread[r.name] = []
        for fl in r.fields:
            ft = fl.type
            if ft.kind == "scalar":
                kind_, member = OP_SCALAR[ft.name]
            elif is_enum(ft):
                kind_, member = "OP_ENUM", "e"
            elif is_record(ft):
                kind_, member = "OP_RECORD", "ptr"
            else:  # lists, maps and unions: named only, for the loader's errors
                unread[r.name].append((fl.name, ft.kind if ft.kind in ("list", "map") else "union"))
                continue
            rows.append(TableField(fl, r, kind_, member, n,
                                   ft.decl if kind_ == "OP_RECORD" else None))
            n += 1
        fields[r.name] = rows
    return Table(types, root, optics, kind, first_field, field_records, fields, unread)
