#!/usr/bin/env bash
# python.sh: runs the first python3 that has Jinja2 (the one on PATH, else
# Debian's /usr/bin/python3, where deps.sh installs python3-jinja2).
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import jinja2' >/dev/null 2>&1; then
        exec "$py" "$@"
    fi
done
exec python3 "$@"
