"""Emitter: a checked Schema -> C source files, through Jinja2 templates.

The Python side computes everything the templates need (C names, type
orders, key-dispatch tables); the templates only lay it out. Output is a
function of the schema and the generator alone: no dates, no absolute paths.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List

import jinja2

from . import names
from .schema import Enum, Record, Schema, TypeRef, Union

TEMPLATES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "templates")

# Bump when the runtime's interface to generated code changes; the generated
# header refuses to compile against another runtime version.
RUNTIME_VERSION = 1

SCALAR_C = {"i32": "int32_t", "i64": "int64_t", "f64": "double", "bool": "bool", "string": "js_str"}


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


def c_char(ch: str) -> str:
    """A one-byte C character constant."""
    b = ord(ch)
    if ch in "'\\":
        return "'\\" + ch + "'"
    if 0x20 <= b < 0x7F:
        return f"'{ch}'"
    return f"'\\x{b:02x}'"


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
        self.optics = s.optics

    def _records_in_value_order(self) -> List[Record]:
        """Every record and union case, each after those it holds by value."""
        out: List = []
        done = set()

        def visit(d):
            if id(d) in done:
                return
            done.add(id(d))
            rows = d.cases if isinstance(d, Union) else [d]
            for r in rows:
                for f in r.fields:
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
            rows = d.cases if isinstance(d, Union) else [d] if isinstance(d, Record) else []
            for r in rows:
                for f in r.fields:
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
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
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
        isinstance=isinstance,
        Record=Record,
        Union=Union,
        Enum=Enum,
        RUNTIME_VERSION=RUNTIME_VERSION,
    )
    m = Model(s, schema_path)
    out = {}
    for tpl, name in (
        ("model.h.j2", "tr_model.h"),
        ("model.c.j2", "tr_model.c"),
        ("encode.c.j2", "tr_encode.c"),
        ("decode.c.j2", "tr_decode.c"),
        ("random.c.j2", "tr_random.c"),
        ("optics.h.j2", "tr_optics.h"),
        ("optics_model.c.j2", "tr_optics_model.c"),
    ):
        out[name] = env.get_template(tpl).render(m=m, output=name)
    return out
