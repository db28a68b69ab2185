#!/usr/bin/env bash
# python.sh: runs the first python3 that has Jinja2 (the one on PATH, else
# Debian's /usr/bin/python3, where deps.sh installs python3-jinja2).
for py in python3 /usr/bin/python3; do
    # find_spec looks for the package without importing it (an import of
    # jinja2 alone takes a third of a second)
    if command -v "$py" >/dev/null 2>&1 &&
        "$py" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("jinja2") is None)' \
            >/dev/null 2>&1; then
        exec "$py" "$@"
    fi
done
exec python3 "$@"
