"""Making untrusted text safe to show: one rule, a rendering for each kind of output.

Names, commands, labels, paths and error messages come from processes,
files and endpoints that we do not control. What must never reach a terminal
is one set of characters, ``_UNSAFE``: C0/C1 controls, DEL, the Unicode line
and paragraph separators (a line break to many renderers), and the invisible
characters that reorder or hide text (bidi overrides and isolates, the Arabic
letter mark, zero-width spaces and joiners, BOM). Each rendering is built
from that set:

* ``clean`` for the TUI, where a cell grid has no room for ``\\x1b``: escape
  sequences go whole, the rest of the set is dropped, tabs and line breaks
  become spaces.
* ``escaped`` for line output (stderr, ``leet inspect``): each unsafe
  character is written out as ``\\xNN`` / ``\\uNNNN``, so the reader sees
  exactly what the name holds.
* ``escaped_lines`` for multi-line plain text (an alert's body): every line
  break becomes ``\\n`` and tabs stay, the rest is written out as ``escaped``
  writes it.
* ``replaced`` for names that keep their shape (chart titles, series names):
  each unsafe character becomes U+FFFD, so the reader sees that one was there.
"""

from __future__ import annotations

import re

_UNSAFE_CHARS = "\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff"
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


def escaped_lines(text: str) -> str:
    """``text`` as plain lines: each line break (``\\r\\n``, ``\\r``, ``\\f``, U+2028 …) one ``\\n``, tabs kept, every other unsafe character written out."""
    return "\n".join(_UNSAFE.sub(_visible_but_tab, line) for line in text.splitlines())


def replaced(text: str) -> str:
    """``text`` with each unsafe character replaced by U+FFFD (the replacement character)."""
    return _UNSAFE.sub("\ufffd", text)


def _visible_but_tab(match: re.Match[str]) -> str:
    return match.group() if match.group() == "\t" else _visible(match)


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
