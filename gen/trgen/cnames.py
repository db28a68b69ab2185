"""The C names a schema gives: every identifier the generated code declares
from a schema name, checked for clashes before anything is written.

Two different things of the schema must not give one C name (a record
A_B and the case B of a union A both give the struct tr_A_B; the fields
errorRate and error_rate of the root both give TR_ISSUE_F_ERROR_RATE), and
no generated name may be one the runtime's headers declare (an enum E with
a case OK gives TR_E_OK, the runtime's "no error"). Within one struct, two
fields must not give one member (an optional x has the flag has_x).

Names are derived with the emitter's own functions, so what is checked is
what is written. Static helpers of one .c file are derived from the same
schema names with fixed prefixes (val_A, obj_A_B, ...), so they are distinct
whenever the tr_ names are.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from . import names
from .schema import Diagnostic, Enum, Pos, Record, Schema, TypeRef, Union, decl_fields  # noqa: F401


class _Names:
    def __init__(self, what: str = "C name"):
        self.seen: Dict[str, Tuple[str, str, Pos]] = {}  # C name -> (key, what, pos)
        self.diags: List[Diagnostic] = []
        self.what = what  # "C name" or, within a struct, "C member"

    def add(self, c: str, key: str, what: str, pos: Pos):
        """c: the C name; key: what it names (one key may be added twice);
        what: how the error names the schema element; pos: where it is."""
        prev = self.seen.get(c)
        if prev is None:
            self.seen[c] = (key, what, pos)
        elif prev[0] != key and prev[2] is None:
            self.diags.append(Diagnostic(pos, f"{what} gives the {self.what} {c}, "
                                              f"which {prev[1]} already declares"))
        elif prev[0] != key:
            self.diags.append(Diagnostic(pos, f"{what} gives the {self.what} {c}, "
                                              f"which {prev[1]} gives too",
                                         [(prev[2], "that one is here")]))


def check(s: Schema) -> List[Diagnostic]:
    """Every clash of C names in a checked schema, as diagnostics."""
    from .emit import (encoder_name, level_sets, mangle, raw_encoder_types, root_views,
                       scanner_plan, view_type)

    g = _Names()
    P = names.PREFIX
    for n, header in sorted(names.RUNTIME_NAMES.items()):
        g.seen[n] = ("runtime:" + n, header, None)
    for n in ("TR_MODEL_H", "TR_OPTICS_H", "TR_OPTICS_THUNKS_H"):
        g.seen[n] = ("guard:" + n, f"the generated tr_{n[3:-2].lower()}.h (its include guard)",
                     None)
    g.seen[P + "schema"] = ("table", "the generated tr_optics.h (the optic table)", None)
    for n in ("default_rules", "default_rules_len", "default_rules_path", "default_compiled"):
        g.seen[P + n] = ("build:" + n, "the build (the default rules it builds in)", None)

    def decl_what(d) -> str:
        kind = "record" if isinstance(d, Record) else "union" if isinstance(d, Union) else "enum"
        return f"{kind} '{d.name}'"

    for d in s.order:
        what = decl_what(d)
        g.add(names.c_type(d.name), "type:" + d.name, what, d.pos)
        if isinstance(d, Enum) or isinstance(d, Union):
            g.add(f"{P}{d.name}_names", "names:" + d.name, what, d.pos)
            g.add(f"{P}{d.name}_from", "from:" + d.name, what, d.pos)
            g.add(names.c_enum_const(d.name, "Count"), "count:" + d.name, what, d.pos)
            for c in d.cases:
                g.add(names.c_enum_const(d.name, c.name), f"case:{d.name}.{c.name}",
                      f"case '{c.name}' of {what}", c.pos)
        g.add(f"{P}dec_{d.name}", "dec:" + d.name, what, d.pos)
        if isinstance(d, Union):
            g.add(f"{P}{d.name}_kind", "kind:" + d.name, what, d.pos)
            for c in d.cases:
                g.add(names.c_case_type(d.name, c.name), f"case:{d.name}.{c.name}",
                      f"case '{c.name}' of {what}", c.pos)
        if not isinstance(d, Enum):
            g.add(f"{P}encode_{d.name}", "encode:" + d.name, what, d.pos)
            g.add(f"{P}random_{d.name}", "random:" + d.name, what, d.pos)
    root = s.root
    rwhat = f"the root '{root.name}'"
    g.add(f"{P}encode_{root.name}_first", "first", rwhat, root.pos)
    g.add(f"{P}decode_{root.name}", "decode", rwhat, root.pos)
    g.add(f"{P}validate_{root.name}", "validate", rwhat, root.pos)
    rv = root_views(s)
    if rv:
        g.add(f"{P}validate_{root.name}_views", "validate_views", rwhat, root.pos)
        g.add(f"{P}{root.name}_views", "views", rwhat, root.pos)
    for f in root.fields:
        g.add(names.c_field_const(root.name, f.name), f"rootfield:{f.name}",
              f"field '{f.name}' of the root '{root.name}'", f.pos)

    # lists and maps, where first used
    def container(t: TypeRef):
        if t.kind in ("list", "map"):
            container(t.elem)
            what = f"the type {t.spell()}"
            g.add(P + mangle(t), "container:" + t.spell(), what, t.pos)
            if t.kind == "map":
                g.add(f"{P}entry_{mangle(t.elem)}", "entry:" + t.elem.spell(), what, t.pos)

    for d in s.order:
        for f in decl_fields(d):
            container(f.type)

    for o in s.optics:
        what = f"optic '{o.name}'"
        g.add(f"{P}get_{o.name}", "get:" + o.name, what, o.pos)
        g.add(f"{P}scan_{o.name}", "scan:" + o.name, what, o.pos)
        g.add(f"{P}thunk_scan_{o.name}", "thunk_scan:" + o.name, what, o.pos)
        # its scanner from its first member on (level.h), when it has one
        g.add(f"{P}thunk_from_{o.name}", "thunk_from:" + o.name, what, o.pos)
        if o.raw:
            g.add(f"{P}seek_{o.name}", "seek:" + o.name, what, o.pos)
            g.add(f"{P}thunk_seek_{o.name}", "thunk_seek:" + o.name, what, o.pos)
            g.add(f"{P}seekfrom_{o.name}", "seekfrom:" + o.name, what, o.pos)
            g.add(f"{P}thunk_seekfrom_{o.name}", "thunk_seekfrom:" + o.name, what, o.pos)
        else:
            g.add(f"{P}from_{o.name}", "from:" + o.name, what, o.pos)
        for t in (o.source, o.focus if o.raw else None):
            if t is not None:
                v = view_type(t, root)
                if v != "tr_message":
                    g.add(v, "view:" + t.spell(), f"the view of {t.spell()} ({what})", o.pos)
    # the level matchers (tr_levels.c), one per type optics start in
    for ls in level_sets([scanner_plan(o, root) for o in s.optics]):
        what = f"the level matcher of {decl_what(ls.decl)}"
        g.add(f"{P}level_key_{ls.name}", "level_key:" + ls.name, what, ls.decl.pos)
        g.add(f"{P}level_keys_{ls.name}", "level_keys:" + ls.name, what, ls.decl.pos)
        if ls.union is not None:
            g.add(f"{P}level_case_{ls.union.name}", "level_case:" + ls.union.name, what,
                  ls.decl.pos)
    for t in raw_encoder_types(s):
        o = next(o for o in s.optics if o.raw and o.focus is t)
        g.add(encoder_name(t), "rawenc:" + t.spell(),
              f"the encoder of {t.spell()} (optic '{o.name}')", o.pos)

    diags = g.diags
    # members, struct by struct
    for d in s.order:
        if isinstance(d, Record):
            diags += _members(d.name, d.fields)
        elif isinstance(d, Union):
            for c in d.cases:
                diags += _members(f"{d.name}.{c.name}", c.fields)
            m = _Names("C member")
            for c in d.cases:
                m.add(names.c_field(c.name), c.name, f"case '{c.name}' of union '{d.name}'", c.pos)
            diags += m.diags
    if rv:
        m = _Names("C member")
        for v in rv:
            o = s.optics[v.index]
            m.add(names.c_field(o.name), o.name, f"optic '{o.name}' (a view the validator "
                                                 f"hands back)", o.pos)
            m.add(f"has_{o.name}", o.name, f"optic '{o.name}' (a view the validator "
                                           f"hands back)", o.pos)
        diags += m.diags
    return diags


def _members(owner: str, fields) -> List[Diagnostic]:
    m = _Names("C member")
    for f in fields:
        what = f"field '{f.name}' of '{owner}'"
        m.add(names.c_field(f.name), f.name, what, f.pos)
        if f.optional:
            m.add(f"has_{f.name}", f.name, f"{what} (optional: its flag has_{f.name})", f.pos)
    return m.diags
