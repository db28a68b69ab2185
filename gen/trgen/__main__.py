"""Command line: triage-gen [--out DIR] SCHEMA, or --check SCHEMA (bin/triage-gen,
or python3 -m trgen with gen/ on PYTHONPATH). The older form SCHEMA OUTDIR
(the Makefile's, which runs re2c itself) still works, as --out OUTDIR --no-re2c."""

import argparse
import os
import re
import shlex
import subprocess
import sys

from .schema import SchemaError, parse
from .version import VERSION


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
        prog="triage-gen",
        usage="%(prog)s [--out DIR] [--no-re2c] [--check] [--version] [--help] SCHEMA",
        description="Compile a schema (records, enums, tagged unions, optic paths) "
        "into C: the model, an encoder, a full decoder, a validator, random generators, "
        "the optics' table, one re2c scanner (tr_scan_NAME.re) per optic and the level "
        "matchers (tr_levels.re) their shared walks use. Writes "
        "nothing when the schema has an error (every error is reported, exit 1); "
        "rewrites only the files whose text changed; removes the scanners "
        "(tr_scan_NAME.re and .c) of optics no longer declared.",
        epilog="The older form 'triage-gen SCHEMA DIR', which the repository's Makefile "
        "uses (it runs re2c itself), means --out DIR --no-re2c.",
    )
    ap.add_argument("schema", metavar="SCHEMA", help="the schema file, e.g. schema/issue.schema")
    ap.add_argument("outdir", nargs="?", help=argparse.SUPPRESS)  # the older form
    ap.add_argument("-o", "--out", metavar="DIR",
                    help="where to write the C files (default: the current directory)")
    ap.add_argument("--check", action="store_true",
                    help="only check the schema: report its errors, write nothing")
    ap.add_argument("--no-re2c", action="store_true",
                    help="write the scanners and level matchers as re2c input (tr_scan_NAME.re, "
                    "tr_levels.re) only; by default re2c also makes their C (tr_scan_NAME.c, "
                    "tr_levels.c), with the command on each one's first line")
    ap.add_argument("--version", action="version", version=f"%(prog)s {VERSION}",
                    help="print the version and exit")
    args = ap.parse_args(argv)
    if args.out is not None and args.outdir is not None:
        ap.error("give the output folder once: --out DIR or a second argument, not both")
    if args.check and (args.out is not None or args.outdir is not None):
        ap.error("--check writes nothing: give no output folder")
    outdir = args.out if args.out is not None else args.outdir
    if args.outdir is not None:
        args.no_re2c = True
    if outdir is None:
        outdir = "."

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

    from .emit import render  # jinja2 is needed only to emit

    files = render(schema, args.schema)
    os.makedirs(outdir, exist_ok=True)
    remove_stale(outdir, files)
    for name, text in sorted(files.items()):
        write_changed(os.path.join(outdir, name), text)
    if args.no_re2c:
        return 0
    for name in sorted(n for n in files if n.endswith(".re")):
        err = run_re2c(outdir, name, files[name])
        if err:
            print(f"triage-gen: {err}", file=sys.stderr)
            return 1
    return 0


def write_changed(path: str, text: str) -> None:
    """Writes text to path unless the file holds it already (then its
    timestamp stays, and nothing that depends on it recompiles)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


# A scanner's first line records the re2c command that makes its C.
_RE2C_LINE = re.compile(r"/\* (re2c .* -o (\S+)) \*/")


def run_re2c(outdir: str, name: str, text: str):
    """Runs the re2c command recorded on the first line of scanner name (in
    outdir), into a temporary file that replaces the .c only when its text
    changed. Returns None, or what went wrong."""
    m = _RE2C_LINE.fullmatch(text.split("\n", 1)[0])
    if m is None:
        return f"{name}: no re2c command on its first line"
    argv = shlex.split(m.group(1))
    out = m.group(2)
    argv[argv.index("-o") + 1] = out + ".tmp"
    try:
        r = subprocess.run(argv, cwd=outdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    except OSError as e:
        return (f"cannot run re2c ({e.strerror}): install it, or give --no-re2c and run "
                "the command on the first line of each .re file")
    tmp = os.path.join(outdir, out + ".tmp")
    if r.returncode != 0:
        if os.path.exists(tmp):
            os.remove(tmp)
        return f"{name}: re2c failed:\n{r.stdout}"
    with open(tmp, encoding="utf-8") as f:
        c_text = f.read()
    os.remove(tmp)
    write_changed(os.path.join(outdir, out), c_text)
    return None


if __name__ == "__main__":
    sys.exit(main())
