"""Random schemas for the generator's tests: records, unions (tags that are
names and tags that are not), enums, lists, maps and optional fields nested
in one another, and optics along random paths into them (indexes, map keys,
union cases and tags, raw where the focus is a container). Types refer only
to types declared after them, so no schema is recursive; each is meant to
pass the checker, which stays the judge (a test keeps those it accepts).

    random_schema(seed) -> the schema's text, the same for the same seed
"""

import itertools
import random

SCALARS = ("i32", "i64", "f64", "bool", "string")
WORDS = ("id", "name", "type", "kind", "int", "value", "data", "list", "case", "x", "item", "at")


def random_schema(seed: int) -> str:
    r = random.Random(seed)
    serial = itertools.count()

    def name(prefix):
        # the prefix keeps type, field, case and optic names apart from the
        # schema language's words; a number keeps each one new
        word = r.choice(WORDS)
        return f"{prefix}{word.capitalize() if prefix.isupper() else word}{next(serial)}"

    enums = [(name("E"), [name("C") for _ in range(r.randint(1, 5))]) for _ in range(r.randint(0, 3))]
    types = [name("T") for _ in range(r.randint(1, 6))]
    is_union = {t: i > 0 and r.random() < 0.35 for i, t in enumerate(types)}

    def field_type(i, depth=0):
        c = r.random()
        if c < 0.12 and depth < 3:
            return f"list<{field_type(i, depth + 1)}>"
        if c < 0.2 and depth < 3:
            return f"map<{field_type(i, depth + 1)}>"
        if c < 0.45 and i + 1 < len(types):
            return r.choice(types[i + 1:])
        if c < 0.55 and enums:
            return r.choice(enums)[0]
        return r.choice(SCALARS)

    def fields(i, lo):
        out = []
        for _ in range(r.randint(lo, 5)):
            t = field_type(i)
            opt = not t.startswith(("list", "map")) and r.random() < 0.2
            out.append((name("f"), t, opt))
        return out

    decl = {}
    text = [f"root {types[0]}"]
    for i, t in enumerate(types):
        if is_union[t]:
            tag = r.choice(("type", "kind", "@type", "t y"))
            cases = [(name("K"), fields(i, 0)) for _ in range(r.randint(1, 4))]
            decl[t] = ("union", tag, cases)
            body = "\n".join(f"  {c} {{ {' '.join(f'{f}: {ty}' for f, ty, _ in fs)} }}"
                             for c, fs in cases)
            text.append(f'union {t} tag "{tag}" {{\n{body}\n}}')
        else:
            fs = fields(i, 1)
            decl[t] = ("record", fs)
            body = "\n".join(f"  {f}: {'optional ' if o else ''}{ty}" for f, ty, o in fs)
            text.append(f"record {t} {{\n{body}\n}}")
    for e, cases in enums:
        text.append(f"enum {e} {{ {' '.join(cases)} }}")

    def path(start):
        """Steps from start down to a focus, and whether it must be raw."""
        steps, t = [], start
        while True:
            d = decl[t]
            if d[0] == "record":
                f, ty, _ = r.choice(d[1])
                steps.append(f".{f}")
            else:
                _, tag, cases = d
                if r.random() < 0.3:
                    steps.append(f".{tag}" if tag.isidentifier() else f'["{tag}"]')
                    return steps, False
                c, fs = r.choice(cases)
                steps.append(f".{c}")
                if not fs or r.random() < 0.15:
                    return steps, True  # the case itself
                f, ty, _ = r.choice(fs)
                steps.append(f".{f}")
            raw = False
            while ty.startswith(("list<", "map<")):
                if r.random() < 0.2:
                    raw = True  # the container itself
                    break
                if ty.startswith("list<"):
                    steps.append(f"[{r.randint(0, 2)}]")
                    ty = ty[5:-1]
                else:
                    steps.append(f'["k{r.randint(0, 3)}"]')
                    ty = ty[4:-1]
            if raw:
                return steps, True
            if ty not in decl:
                return steps, False
            if r.random() < 0.25:
                return steps, True  # a record or a union, whole
            t = ty

    for _ in range(r.randint(0, 8)):
        # mostly from the root: optics a message is read through
        start = types[0] if r.random() < 0.6 else r.choice(types)
        steps, raw = path(start)
        text.append(f"optic {name('o')} = {start}{''.join(steps)}{' raw' if raw else ''}")
    return "\n".join(text) + "\n"
