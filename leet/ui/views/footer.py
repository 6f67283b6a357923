"""The status line: key hints from a key table, fitted to the width beside what the screen says on the right.

Hints drop whole from the end when the line is narrow, never cut in a word;
help and quit go last. The right side is cut (with an ellipsis) before they go.
"""

from __future__ import annotations

from typing import Collection, Sequence

from widgets.chartframe import Row, fit

KEEP = ("help", "quit")


def hint_width(key: str, hint: str) -> int:
    return len(key) + len(hint) + 2  # " key hint"


def hint_runs(hints: Sequence[tuple[str, str]]) -> Row:
    """`` key hint`` for each hint: the key in the key style, the word muted."""
    return [run for key, hint in hints for run in ((f" {key}", "key"), (f" {hint}", "muted"))]


def fit_hints(hints: Sequence[tuple[str, str]], width: int, keep: Collection[str] = KEEP) -> list[tuple[str, str]]:
    """The hints that fit ``width`` cells: the last ones give way first, those in ``keep`` only when nothing else is left."""
    shown = list(hints)
    used = sum(hint_width(*pair) for pair in shown)
    for pair in reversed(hints):
        if used <= width:
            break
        if pair[1] not in keep:
            shown.remove(pair)
            used -= hint_width(*pair)
    while shown and used > width:
        used -= hint_width(*shown.pop())
    return shown


def cut_row(row: Row, width: int) -> Row:
    """``row`` in at most ``width`` cells, an ellipsis marking a cut."""
    out: Row = []
    used = 0
    for text, style in row:
        if used + len(text) > width:
            text = fit(text, width - used)
            if text:
                out.append((text, style))
            break
        out.append((text, style))
        used += len(text)
    return out


def status_line(hints: Sequence[tuple[str, str]], right: Row, width: int, keep: Collection[str] = KEEP) -> tuple[Row, Row]:
    """(left, right) runs for a status line ``width`` cells wide: the hints that fit beside ``right``.

    ``right`` (a warning, an error) keeps its room, less what the ``keep`` hints need.
    """
    kept = sum(hint_width(*pair) for pair in hints if pair[1] in keep)
    right = cut_row(right, max(0, width - kept))
    room = width - sum(len(text) for text, _ in right)
    return hint_runs(fit_hints(hints, room, keep)), right
