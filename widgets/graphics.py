"""How images reach the terminal: half-blocks, Sixel or the Kitty graphics protocol, chosen without asking it.

``choose`` decides from the setting and the environment only: no escape
sequence is written and nothing is read from the terminal, so it never
blocks, and a test or a headless run gets half-blocks. ``graphics_widget``
loads the Sixel or Kitty widget on first use, with the terminal queries its
library makes on import turned off (Textual owns the terminal by then).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping

MODES = ("auto", "blocks", "sixel", "kitty", "off")
SIXEL_TERMINALS = ("foot", "mlterm", "contour", "yaft", "sixel")
SIXEL_PROGRAMS = ("WezTerm", "iTerm.app", "mintty", "konsole")
DEFAULT_CELL = (10, 20)  # pixels of a cell when the terminal does not say


def choose(setting: str, environ: Mapping[str, str] | None = None, tty: bool | None = None) -> str:
    """``blocks``, ``sixel``, ``kitty`` or ``off`` for a setting; ``auto`` looks at ``TERM`` and ``TERM_PROGRAM``."""
    if setting != "auto":
        return setting
    environ = os.environ if environ is None else environ
    if tty is None:
        stream = sys.__stdout__
        tty = bool(stream and stream.isatty())
    if not tty:
        return "blocks"
    term = environ.get("TERM", "")
    program = environ.get("TERM_PROGRAM", "")
    if term == "xterm-kitty" or environ.get("KITTY_WINDOW_ID") or program == "ghostty":
        return "kitty"
    if any(name in term for name in SIXEL_TERMINALS) or program in SIXEL_PROGRAMS:
        return "sixel"
    return "blocks"


def cell_pixels() -> tuple[int, int]:
    """A cell's size in pixels from the terminal's window size (an ioctl, no escape sequence); a default if it is not told."""
    stream = sys.__stdout__
    if stream is None or not stream.isatty():
        return DEFAULT_CELL
    try:
        import fcntl
        import struct
        import termios

        rows, columns, width, height = struct.unpack("HHHH", fcntl.ioctl(stream.fileno(), termios.TIOCGWINSZ, bytes(8)))
    except (ImportError, OSError):
        return DEFAULT_CELL
    if not (rows and columns and width and height):
        return DEFAULT_CELL
    return width // columns, height // rows


def graphics_widget(mode: str) -> Any:
    """The Textual widget class drawing a PIL image as ``sixel`` or ``kitty`` graphics."""
    from textual_image import _terminal

    # Seeded, so the library never writes a size query to a terminal Textual is reading.
    cell = cell_pixels()
    _terminal.get_cell_size._result = _terminal.CellSize(*cell)  # type: ignore[attr-defined]
    real = sys.__stdout__
    sys.__stdout__ = None  # type: ignore[misc]  # its renderables' import-time probe then asks nothing
    try:
        import textual_image.renderable  # noqa: F401
    finally:
        sys.__stdout__ = real  # type: ignore[misc]
    from textual_image.widget import SixelImage, TGPImage

    return SixelImage if mode == "sixel" else TGPImage
