"""C naming: identifiers for the schema's types, fields and enum cases.

Kept apart from the templates so that the rules (prefixes, C keywords,
UPPER_SNAKE for constants) are tested on their own (gen/tests).
"""

import re

from .version import VERSION

PREFIX = "tr_"

# What a generated file's banner names as its maker (gen/templates/base.j2).
GENERATOR = f"triage-gen {VERSION}"

C_KEYWORDS = frozenset("""
    auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed
    sizeof static struct switch typedef union unsigned void volatile while
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn
    _Static_assert _Thread_local bool true false NULL
""".split())


# Macros a member name must not be: code that includes tr_model.h may have
# included any C library header before it. Macro names are upper case by
# convention (EOF, NULL, INT32_MAX, the TR_ constants), so a name without a
# lower-case letter is taken for one; these are the others the C11 headers
# and the POSIX ones the demo uses define as objects (gen/tests checks the
# rule against what gcc and clang define).
LOWER_MACROS = frozenset("""
    and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq
    alignas alignof noreturn static_assert thread_local complex imaginary
    errno stdin stdout stderr math_errhandling
    st_atime st_ctime st_mtime sa_handler sa_sigaction h_addr h_errno sched_priority
    s6_addr s6_addr16 s6_addr32
    atomic_init atomic_load_explicit atomic_store_explicit atomic_exchange_explicit
    atomic_compare_exchange_strong_explicit atomic_compare_exchange_weak_explicit
    atomic_fetch_add_explicit atomic_fetch_sub_explicit atomic_fetch_or_explicit
    atomic_fetch_xor_explicit atomic_fetch_and_explicit
""".split())
_MACRO_LIKE = re.compile(r"[A-Z0-9_]+|(?:PRI|SCN)[diouxX]\w*|M_[A-Z0-9_]+[fl]\w*"
                         r"|[LP]_[a-z]\w*|[AP]F_DECnet|si_\w+|sigev_\w+")


def is_macro_like(name: str) -> bool:
    """Whether a header may define name as a macro (see LOWER_MACROS)."""
    return name in LOWER_MACROS or _MACRO_LIKE.fullmatch(name) is not None


# The runtime's error codes (runtime/error.h's TR_ERRORS): each is TR_E_<code>.
ERROR_CODES = """
    OK EOF SYNTAX TRAILING BOM DEPTH CTRL ESCAPE SURROGATE UTF8 NUMBER NOT_INTEGER RANGE TYPE
    NULL_REQUIRED MISSING DUPLICATE DUPLICATE_KEY ENUM TAG NO_TAG ARENA TOO_LONG COMPRESSED
    FRAME_SIZE FRAME_TRUNCATED FRAME_FLAG BUFFER IO GZIP_CORRUPT GZIP_TRUNCATED GZIP_CRC
    GZIP_SIZE ZLIB_CORRUPT ZLIB_TRUNCATED ZLIB_ADLER INFLATE_LIMIT
""".split()

# Names with the generated code's prefixes that the runtime's headers
# declare (name -> header): a generated name must be none of them. Include
# guards are TR_<HEADER>_H. gen/tests checks the list against runtime/*.h.
RUNTIME_NAMES = {
    **{n: "runtime/error.h" for n in """tr_code tr_errno_text tr_error tr_error_name
       tr_error_set tr_error_text tr_say TR_ERRORS TR_ERR_ENUM TR_E_COUNT_""".split()},
    **{"TR_E_" + c: "runtime/error.h" for c in ERROR_CODES},
    "tr_message": "runtime/view.h",
    "TR_RUNTIME_VERSION": "runtime/version.h",
    "TR_VERSION": "runtime/version.h",
    **{f"TR_{h.upper()}_H": f"runtime/{h}.h" for h in """arena blocks clock error forward frames gzip
       h2proxy json jsonvalid level net object optic policy ringbuf rng rules rules_compiled rules_impl
       skip tally version view""".split()},
}


def is_reserved(name: str) -> bool:
    """C reserves identifiers that start with '__' or '_' and a capital."""
    return name.startswith("__") or (name[:1] == "_" and name[1:2].isupper())


def c_field(name: str) -> str:
    """A member name for a schema name: its own, with '_' after it when it is
    a C keyword, could be a macro (is_macro_like), or is a name C reserves
    (__x, _X)."""
    if name in C_KEYWORDS or is_macro_like(name) or is_reserved(name):
        return name + "_"
    return name


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


def is_plain_name(s: str) -> bool:
    """Whether s is written as it is in a path: a name (ASCII letters,
    digits, '_', not starting with a digit)."""
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) is not None


def c_string_literal(s: str) -> str:
    """A C string literal for an ASCII-or-UTF-8 schema name."""
    return c_bytes_literal(s.encode("utf-8"))


def c_bytes_literal(bs: bytes) -> str:
    """A C string literal of these bytes (octal escapes beyond printable
    ASCII)."""
    out = []
    for b in bs:
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


def _needs_escape(ch: str) -> bool:
    """JSON writes ch only escaped: a '"', a '\\' or a control character."""
    return ch in '"\\' or ord(ch) < 0x20


def _re2c_bytes(s: str) -> list:
    """The bytes of s as a re2c "..." literal holds them: letters, digits and
    '_' as they are, any other byte \\xNN."""
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        out.append(ch if ch.isascii() and (ch.isalnum() or ch == "_") else f"\\x{b:02X}")
    return out


def re2c_prefixes(keys) -> list:
    """re2c literals for '"' followed by each prefix of each key (the empty
    one included) as the key is written with no escapes, up to the first
    character JSON must escape: a string that starts so and then has a
    backslash may be one of the keys, escaped (the scanners' slow path); a
    string that differs from every key before its first backslash is none
    of them. Distinct, shortest first."""
    out = []
    for k in keys:
        plain = next((k[:at] for at, ch in enumerate(k) if _needs_escape(ch)), k)
        pieces = _re2c_bytes(plain)
        for n in range(len(pieces) + 1):
            lit = '"\\"' + "".join(pieces[:n]) + '"'
            if lit not in out:
                out.append(lit)
    return sorted(out, key=len)


def re2c_string(s: str):
    """A re2c "..." literal matching the bytes of s written as a JSON string
    with no escapes, quotes included; None when JSON needs an escape in it
    (a '"', a '\\' or a control character: the message's spelling then holds
    a backslash, which the scanners read on their slow path). Bytes other
    than letters, digits and '_' are written \\xNN."""
    if any(_needs_escape(ch) for ch in s):
        return None
    return '"\\"' + "".join(_re2c_bytes(s)) + '\\""'
