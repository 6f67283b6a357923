"""Which characters a panel draws, and their ASCII stand-ins.

Two jobs, both pure (no Textual):

* The shade ramps of the heatmap and its scale: ``HEAT_RAMP`` (``░▒▓█``) and
  ``ASCII_HEAT_RAMP`` (``.:-=+*#%@``); ``heat_glyph`` picks one for a level.
* ``to_ascii``: any text as ASCII that takes the same cells on screen, for a
  terminal whose locale is not UTF-8. Box drawing becomes ``+ - |``, braille
  becomes ``. ' :``, block elements ``#`` or a space, arrows ``^ v < >``,
  accented letters lose their accents, and anything else becomes ``?`` (two
  for a wide character; a zero-width one goes).
"""

from __future__ import annotations

import unicodedata

from rich.cells import cell_len

HEAT_RAMP = "░▒▓█"  # light to dense
ASCII_HEAT_RAMP = ".:-=+*#%@"
ASCII_BAR_FULL = "#"
ASCII_BAR_EMPTY = "."

# Stand-ins chosen by hand, one cell each; the rules below cover the rest.
ASCII_TABLE: dict[str, str] = {
    "…": "~", "·": ".", "•": "*", "●": "*", "○": "o", "◦": "o", "◆": "*", "◇": "o", "■": "#", "□": "o",
    "⚠": "!", "✓": "v", "✔": "v", "✗": "x", "✘": "x", "×": "x", "÷": "/", "±": "+", "°": "o", "µ": "u",
    "–": "-", "—": "-", "―": "-", "‐": "-", "‑": "-", "−": "-", "‘": "'", "’": "'", "‚": ",", "“": '"',
    "”": '"', "„": '"', "′": "'", "″": '"', "«": "<", "»": ">", "‹": "<", "›": ">", "≤": "<", "≥": ">",
    "≠": "#", "≈": "~", "∞": "~", "∅": "0", "√": "v", "∑": "E", "⌊": "[", "⌈": "[", "⌋": "]", "⌉": "]",
    "↑": "^", "↓": "v", "←": "<", "→": ">", "↔": "-", "↕": "|", "⇧": "^", "⇩": "v", "⇦": "<", "⇨": ">",
    "⏎": "J", "↵": "J", "⌫": "<", "⎋": "E",
    "▲": "^", "△": "^", "▴": "^", "▵": "^", "▼": "v", "▽": "v", "▾": "v", "▿": "v",
    "▶": ">", "▷": ">", "▸": ">", "▹": ">", "◀": "<", "◁": "<", "◂": "<", "◃": "<",
    "░": ":", "▒": "%", "▓": "#", "█": "#", "▀": '"', "▄": "_", "▌": "#", "▐": "#",
    # Eighth blocks: scrollbar thumbs and meters. Up to half a cell reads as empty.
    "▁": " ", "▂": " ", "▃": " ", "▅": "#", "▆": "#", "▇": "#", "▔": " ", "▕": " ",
    "▏": " ", "▎": " ", "▍": " ", "▋": "#", "▊": "#", "▉": "#",
    "\u00a0": " ", "\u2007": " ", "\u202f": " ", "\u3000": "  ",
}

_BRAILLE_BASE = 0x2800
_BRAILLE_TOP = 0x01 | 0x08 | 0x02 | 0x10  # the upper two dot rows
_BRAILLE_BOTTOM = 0x04 | 0x20 | 0x40 | 0x80
_HORIZONTAL_WORDS = ("HORIZONTAL", "LEFT", "RIGHT")
_VERTICAL_WORDS = ("VERTICAL", "UP", "DOWN")


def _braille(code: int) -> str:
    bits = code - _BRAILLE_BASE
    top, bottom = bits & _BRAILLE_TOP, bits & _BRAILLE_BOTTOM
    return ":" if top and bottom else "'" if top else "." if bottom else " "


def _box(name: str) -> str:
    words = name.split()
    if "DIAGONAL" in words:
        return "X" if "CROSS" in words else "/" if "UPPER RIGHT TO LOWER LEFT" in name else "\\"
    across = any(word in words for word in _HORIZONTAL_WORDS)
    down = any(word in words for word in _VERTICAL_WORDS)
    if across and down:
        return "+"
    return "|" if down else "-"


def ascii_char(char: str) -> str:
    """One character as ASCII filling the cells it fills (none, one or two)."""
    if char.isascii():
        return char
    found = ASCII_TABLE.get(char)
    if found is not None:
        return found
    code = ord(char)
    if 0x2800 <= code <= 0x28FF:
        return _braille(code)
    width = cell_len(char)
    if width == 0:
        return ""
    name = unicodedata.name(char, "")
    if name.startswith("BOX DRAWINGS"):
        return _box(name)
    if unicodedata.category(char) == "Zs":
        return " " * width
    plain = "".join(c for c in unicodedata.normalize("NFKD", char) if c.isascii() and c.isprintable())
    if len(plain) == width:
        return plain
    return "?" * width


class _AsciiTable(dict[int, str]):
    """A ``str.translate`` table that works each character out once."""

    def __missing__(self, code: int) -> str:
        value = ascii_char(chr(code))
        self[code] = value
        return value


_TABLE = _AsciiTable()


def to_ascii(text: str) -> str:
    """``text`` in ASCII, cell for cell (see the module's docstring).

    The result is exactly as wide as Rich measures ``text``, even where Rich
    joins characters into one cluster (a zero-width joiner between two).
    """
    if text.isascii():
        return text
    plain = text.translate(_TABLE)
    width = cell_len(text)
    return plain if len(plain) == width else plain[:width].ljust(width)


def heat_glyph(level: int, levels: int, ascii: bool = False) -> str:
    """The shade of heat level ``level`` of ``levels`` (0 the lowest): denser as it rises."""
    ramp = ASCII_HEAT_RAMP if ascii else HEAT_RAMP
    if levels <= 1:
        return ramp[-1]
    level = min(max(level, 0), levels - 1)
    return ramp[round(level * (len(ramp) - 1) / (levels - 1))]
