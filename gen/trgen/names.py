"""C naming: identifiers for the schema's types, fields and enum cases.

Kept apart from the templates so that the rules (prefixes, C keywords,
UPPER_SNAKE for constants) are tested on their own (gen/tests).
"""

import re

PREFIX = "tr_"

C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed
    sizeof static struct switch typedef union unsigned void volatile while
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn
    _Static_assert _Thread_local bool true false NULL
""".split())


def c_field(name: str) -> str:
    """A field's member name: the schema's own, with '_' after a C keyword."""
    return name + "_" if name in C_KEYWORDS else name


def upper_snake(name: str) -> str:
    """InProgress -> IN_PROGRESS, P0 -> P0, Sev1 -> SEV1, errorRate -> ERROR_RATE."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s)
    return s.upper()


def c_type(name: str) -> str:
    """A declared type's C name: Issue -> tr_Issue."""
    return PREFIX + name


def c_case_type(union: str, case: str) -> str:
    """A union case's record: Detail, Bug -> tr_Detail_Bug."""
    return f"{PREFIX}{union}_{case}"


def c_enum_const(enum: str, case: str) -> str:
    """Status, InProgress -> TR_STATUS_IN_PROGRESS."""
    return f"{PREFIX.upper()}{upper_snake(enum)}_{upper_snake(case)}"


def c_field_const(record: str, fld: str) -> str:
    """Issue, detail -> TR_ISSUE_F_DETAIL: a field's index, for the encoder."""
    return f"{PREFIX.upper()}{upper_snake(record)}_F_{upper_snake(fld)}"


def c_string_literal(s: str) -> str:
    """A C string literal for an ASCII-or-UTF-8 schema name."""
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\?':  # '?' too: "??=" would be a trigraph under -std=c11
            out.append("\\" + ch)
        elif 0x20 <= b < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'
