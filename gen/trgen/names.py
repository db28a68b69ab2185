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


_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t"}


def json_quote(s: str) -> str:
    """s as a JSON string, escaped the way the encoder (js_put_string) escapes:
    '"', '\\' and control characters; UTF-8 as it is."""
    out = []
    for ch in s:
        if ch in _JSON_SHORT:
            out.append(_JSON_SHORT[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def json_comment(s: str) -> str:
    """s as a JSON string that is safe inside a C or re2c comment: ASCII only
    (\\uXXXX beyond), no '*/' or '/*' (a '*' next to a '/' is written \\u002a),
    no trigraph ('?' after '?' is written \\u003f). Still the same JSON value."""
    out = []
    prev = ""
    for i, ch in enumerate(s):
        nxt = s[i + 1] if i + 1 < len(s) else ""
        if ch in _JSON_SHORT:
            e = _JSON_SHORT[ch]
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            e = "".join(f"\\u{u:04x}" for u in _utf16(ch))
        elif ch == "*" and "/" in (prev, nxt):
            e = "\\u002a"
        elif ch == "?" and prev == "?":
            e = "\\u003f"
        else:
            e = ch
        out.append(e)
        prev = ch
    return '"' + "".join(out) + '"'


def _utf16(ch: str):
    b = ch.encode("utf-16-be")
    return [int.from_bytes(b[i:i + 2], "big") for i in range(0, len(b), 2)]


def comment_text(s: str) -> str:
    """Arbitrary text (a file name) made safe inside a C comment."""
    return s.replace("*/", "* /").replace("/*", "/ *").replace("??", "?\\?")


def re2c_string(s: str):
    """A re2c "..." literal matching the bytes of s written as a JSON string
    with no escapes, quotes included; None when JSON needs an escape in it
    (a '"', a '\\' or a control character: the message's spelling then holds
    a backslash, which the scanners read on their slow path). Bytes other
    than letters, digits and '_' are written \\xNN."""
    if any(ch in '"\\' or ord(ch) < 0x20 for ch in s):
        return None
    out = ['"\\"']
    for b in s.encode("utf-8"):
        ch = chr(b)
        out.append(ch if ch.isascii() and (ch.isalnum() or ch == "_") else f"\\x{b:02X}")
    out.append('\\""')
    return "".join(out)
