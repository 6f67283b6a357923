"""What the terminal can show, as its environment says: UTF-8 or only ASCII (the locale), colour or none.

The locale is the first of LC_ALL, LC_CTYPE and LANG that is set; C, POSIX
or a character set other than UTF-8 means ASCII. Colour is off when
``NO_COLOR`` is set to anything but the empty string (no-color.org) or
``TERM`` is ``dumb``. Nothing here imports Textual: ``leet --help`` reads it.
"""

from __future__ import annotations

import locale
import os
import sys
from typing import Mapping

from leet.runfile.files import read_regular

# Where the C library reads the character set from, the first one set winning.
LOCALE_VARIABLES = ("LC_ALL", "LC_CTYPE", "LANG")
MAX_ENVIRON_BYTES = 1 << 20


def terminal_has_color(environ: Mapping[str, str]) -> bool:
    """False when ``NO_COLOR`` holds anything (no-color.org: an empty value does not count) or ``TERM`` is ``dumb``."""
    return not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"


def locale_is_utf8(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the locale in ``environ`` (default: this process's, as it started) writes UTF-8.

    The locale is the first of LC_ALL, LC_CTYPE and LANG that is set and not
    empty, as the C library takes it. None, C and POSIX are ASCII. A name that
    carries its character set (``en_US.UTF-8``, ``C.utf8``, ``de_DE.ISO-8859-1``)
    is taken at its word, even where that locale is not installed: the
    terminal speaks it all the same. For one without (``en_US``) the C library
    says which character set it has, and one it does not know is ASCII.
    """
    environ = _startup_locale() if environ is None else environ
    name = next((value for value in (environ.get(variable) for variable in LOCALE_VARIABLES) if value), "")
    if name in ("", "C", "POSIX"):
        return False
    codeset = name.partition(".")[2].partition("@")[0]
    if not codeset:
        codeset = _c_library_codeset(name)
    return codeset.lower().replace("-", "").replace("_", "") == "utf8"


def _c_library_codeset(name: str) -> str:
    """The character set the C library gives locale ``name``; "" when it has no such locale."""
    if not hasattr(locale, "nl_langinfo"):  # pragma: no cover - not on Linux or macOS
        return ""
    before = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, name)
        return locale.nl_langinfo(locale.CODESET)
    except locale.Error:
        return ""
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def _startup_locale() -> dict[str, str]:
    """LC_ALL, LC_CTYPE and LANG as this process was started with.

    Python replaces a C or POSIX LC_CTYPE with C.UTF-8 in ``os.environ`` as it
    starts (PEP 538), so on Linux they are read from ``/proc/self/environ``,
    which keeps the environment the process was given. Elsewhere a C.UTF-8
    that Python set (UTF-8 mode on without PYTHONUTF8) is dropped: LANG then
    says what the C library was left with.
    """
    try:
        data = read_regular("/proc/self/environ", MAX_ENVIRON_BYTES + 1)
    except OSError:
        data = b""
    if data and len(data) <= MAX_ENVIRON_BYTES:
        found: dict[str, str] = {}
        for item in data.split(b"\0"):
            name, _, value = item.decode("utf-8", "replace").partition("=")
            if name in LOCALE_VARIABLES:
                found[name] = value
        return found
    found = {name: os.environ[name] for name in LOCALE_VARIABLES if name in os.environ}
    coerced = not found.get("LC_ALL") and found.get("LC_CTYPE") in ("C.UTF-8", "C.utf8", "UTF-8")
    if coerced and sys.flags.utf8_mode and not os.environ.get("PYTHONUTF8"):
        del found["LC_CTYPE"]
    return found
