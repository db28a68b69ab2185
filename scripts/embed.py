"""embed.py: a text file as a C string, for a program to carry its defaults.

    python3 scripts/embed.py SYMBOL FILE OUT.c

writes `const char SYMBOL[]` (the file's bytes, NUL-terminated), `const
size_t SYMBOL_len` and `const char SYMBOL_path[]` (FILE as given, for
messages). Output depends on the file alone: no dates, no absolute paths."""

import sys


def main(argv):
    if len(argv) != 4:
        print("usage: embed.py SYMBOL FILE OUT.c", file=sys.stderr)
        return 2
    sym, path, out = argv[1:]
    with open(path, "rb") as f:
        data = f.read()
    lines = [f"/* {out.rsplit('/', 1)[-1]}: {path} as a C string, made by scripts/embed.py. */",
             "#include <stddef.h>", "",
             f"extern const char {sym}[], {sym}_path[];",
             f"extern const size_t {sym}_len;", "",
             f"const char {sym}_path[] = \"{path}\";",
             f"const size_t {sym}_len = {len(data)};",
             f"const char {sym}[] ="]
    row = ""
    for b in data:
        c = chr(b)
        if c == "\\" or c == '"':
            row += "\\" + c
        elif 0x20 <= b < 0x7F:
            row += c
        elif c == "\n":
            row += "\\n"
            lines.append(f'    "{row}"')
            row = ""
        else:
            row += f"\\{b:03o}"
    if row or not data:
        lines.append(f'    "{row}"')
    lines[-1] += ";"
    text = "\n".join(lines) + "\n"
    with open(out + ".tmp", "w") as f:
        f.write(text)
    import os
    os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
