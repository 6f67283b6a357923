"""Making untrusted text safe to show.

Names, commands and labels come from processes, files and endpoints that we
do not control. Widgets draw them as plain Segments (never markup), and this
removes what would still reach the terminal as a command: control characters
and escape sequences.
"""

from __future__ import annotations

import re

_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
# C0/C1 controls, and the invisible characters that reorder or hide text
# (bidi overrides and isolates, zero-width spaces and joiners, BOM).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def clean(text: str) -> str:
    """``text`` without terminal escape sequences or control characters; tabs and newlines become spaces."""
    text = _ESCAPES.sub("", text)
    text = text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    return _CONTROLS.sub("", text)
