"""Command line: python3 -m trgen SCHEMA OUTDIR (run from gen/)."""

import argparse
import os
import re
import sys

from .schema import SchemaError, parse


# What a run leaves in OUTDIR besides what it writes itself: the C that re2c
# makes of each scanner (the Makefile's rule), and a temporary file of an
# interrupted run.
_SCANNER = re.compile(r"(tr_scan_[A-Za-z_][A-Za-z0-9_]*)\.(?:re|c)")


def remove_stale(outdir: str, files) -> None:
    """Deletes the files of OUTDIR that an earlier run wrote (or re2c made of
    them) and this run no longer writes: the scanners of optics that are no
    longer declared, and temporaries. Only names the generator gives its own
    files are touched."""
    for name in sorted(os.listdir(outdir)):
        base = name[:-4] if name.endswith(".tmp") else None
        m = _SCANNER.fullmatch(name)
        if base is not None:
            stale = base in files or _SCANNER.fullmatch(base) is not None
        elif m is not None:
            stale = m.group(1) + ".re" not in files
        else:
            stale = False
        if stale:
            os.remove(os.path.join(outdir, name))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="trgen",
        description="Compile a schema (records, enums, tagged unions, optic paths) "
        "into C: the model, an encoder, a full decoder, random generators and "
        "one scanner per optic. Writes nothing when the schema has an error; removes "
        "the scanners (tr_scan_NAME.re and .c) of optics no longer declared.",
    )
    ap.add_argument("schema", help="the schema file, e.g. schema/issue.schema")
    ap.add_argument("outdir", nargs="?", help="where to write the C files (e.g. build/gen)")
    ap.add_argument("--check", action="store_true", help="only check the schema")
    args = ap.parse_args(argv)

    try:
        with open(args.schema, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"{args.schema}: error: cannot read: {e}", file=sys.stderr)
        return 1
    try:
        schema = parse(text, args.schema)
    except SchemaError as e:
        print(str(e), file=sys.stderr)
        n = len(e.diagnostics)
        print(f"{n} error{'s' if n != 1 else ''}; nothing written", file=sys.stderr)
        return 1
    if args.check:
        return 0
    if not args.outdir:
        ap.error("OUTDIR is required unless --check")

    from .emit import render  # jinja2 is needed only to emit

    files = render(schema, args.schema)
    os.makedirs(args.outdir, exist_ok=True)
    remove_stale(args.outdir, files)
    for name, text in sorted(files.items()):
        path = os.path.join(args.outdir, name)
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() == text:
                    continue  # unchanged: keep its timestamp, nothing recompiles
        except OSError:
            pass
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
