"""Making untrusted text safe to show: one rule, two renderings.

Names, commands, labels, paths and error messages come from processes,
files and endpoints that we do not control. What must never reach a terminal
is one set of characters, ``_UNSAFE``: C0/C1 controls, DEL, and the invisible
characters that reorder or hide text (bidi overrides and isolates, the Arabic
letter mark, zero-width spaces and joiners, BOM). Each rendering is built
from that set:

* ``clean`` for the TUI, where a cell grid has no room for ``\\x1b``: escape
  sequences go whole, the rest of the set is dropped, tabs and line breaks
  become spaces.
* ``escaped`` for line output (stderr, ``leet inspect``): each unsafe
  character is written out as ``\\xNN`` / ``\\uNNNN``, so the reader sees
  exactly what the name holds.
"""

from __future__ import annotations

import re

_UNSAFE_CHARS = "\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff"
_UNSAFE = re.compile(f"[{_UNSAFE_CHARS}]")
# Whole sequences, so that clean leaves no "[2J" behind: CSI, OSC (to BEL or
# ST) and the two-byte escapes.
_SEQUENCES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
_SPACES = str.maketrans("\t\n\r", "   ")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def clean(text: str) -> str:
    """``text`` without terminal escape sequences or unsafe characters; tabs and newlines become spaces."""
    text = _SEQUENCES.sub("", text).translate(_SPACES)
    return _UNSAFE.sub("", text)


def escaped(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every unsafe character written out visibly (``\\x1b``, ``\\u202e``, ``\\n``).

    ``keep_newlines`` leaves line breaks as they are, for multi-line messages
    written to a stream that is already line by line.
    """
    if keep_newlines:
        return "\n".join(_UNSAFE.sub(_visible, line) for line in text.split("\n"))
    return _UNSAFE.sub(_visible, text)


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
