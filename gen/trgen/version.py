"""The generator's version: the project's, read from runtime/version.h's
TR_VERSION (the one place it is written), in the repository or where
`make install` puts a copy (PREFIX/share/triage/version.h, beside trgen/)."""

import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
_PLACES = (
    os.path.join(_HERE, "..", "version.h"),                   # installed: share/triage/trgen/
    os.path.join(_HERE, "..", "..", "runtime", "version.h"),  # the repository: gen/trgen/
)


def _read() -> str:
    for path in _PLACES:
        try:
            with open(path, encoding="utf-8") as f:
                m = re.search(r'^#define TR_VERSION "([^"\\]+)"$', f.read(), re.M)
        except OSError:
            continue
        if m:
            return m.group(1)
    raise RuntimeError("trgen: no TR_VERSION in " + " or ".join(map(os.path.normpath, _PLACES)))


VERSION = _read()
