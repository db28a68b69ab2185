#!/usr/bin/env bash
# python.sh: runs the first python3 that has Jinja2: Debian's /usr/bin/python3
# (deps.sh installs python3-jinja2 for it), else the one on PATH. Debian's
# comes first: it is the one the dependencies name, and it starts without a
# version manager's shims in front of it (pyenv's cost a third of a second
# a run).
for py in /usr/bin/python3 python3; do
    # find_spec looks for the package without importing it (an import of
    # jinja2 alone takes a third of a second)
    if command -v "$py" >/dev/null 2>&1 &&
        "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("jinja2") is None)' \
            >/dev/null 2>&1; then
        exec "$py" "$@"
    fi
done
exec python3 "$@"
