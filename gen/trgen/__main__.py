"""Command line: python3 -m trgen SCHEMA OUTDIR (run from gen/)."""

import argparse
import os
import sys

from .schema import SchemaError, parse


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="trgen",
        description="Compile a schema (records, enums, tagged unions, optic paths) "
        "into C: the model, an encoder, a full decoder, random generators and "
        "one scanner per optic. Writes nothing when the schema has an error.",
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
