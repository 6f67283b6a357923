"""One-line bars (header, status): styled runs on the left and on the right."""

from __future__ import annotations

from leet.common.text import clean
from widgets.chartframe import Row, fit
from widgets.lines import StyledLines


def join_line(left: Row, right: Row, width: int) -> Row:
    """``left`` then ``right`` flush right, in exactly ``width`` cells.

    When space runs out the right side stays whole (it goes only when it alone
    is wider than the bar) and the left gives way by whole runs from its end:
    a caller puts each part of its text in a run of its own, the one that
    matters least last. Only the first run may be cut, and then at a space
    (``…`` marks the cut), so no number is ever cut in half; a first word too
    long for the bar is cut with ``…``. At least one space parts the two sides
    (the right's own leading one, if it has one).
    """
    right_width = sum(len(text) for text, _ in right)
    if right_width > width:
        right, right_width = [], 0
    room = width - right_width
    gap = 1 if right and not right[0][0].startswith(" ") else 0
    if sum(len(text) for text, _ in left) > room - gap:
        left = _give_way(left, room - gap)
    used = sum(len(text) for text, _ in left)
    return [*left, (" " * (room - used), "bar"), *right]


def _give_way(left: Row, room: int) -> Row:
    """The whole runs of ``left`` that fit ``room`` cells; the first one cut at a space if it alone does not."""
    out: Row = []
    used = 0
    for text, style in left:
        if used + len(text) > room:
            if not out:
                cut = cut_at_space(text, room)
                if cut:
                    out.append((cut, style))
            break
        out.append((text, style))
        used += len(text)
    return out


_SEPARATORS = frozenset("•·|/-—:,")


def cut_at_space(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: cut at a space and ended with ``…``, no separator left dangling.

    A first word longer than ``width`` is cut inside, also with ``…``.
    """
    if len(text) <= width:
        return text
    if width <= 0:
        return ""
    for space in range(min(len(text) - 1, width - 1), 0, -1):
        if text[space] != " ":
            continue
        head = text[:space].rstrip()
        while head and head[-1] in _SEPARATORS and (len(head) == 1 or head[-2] == " "):
            head = head[:-1].rstrip()  # a lone separator: what it introduced is gone
        if head.strip():
            return head + "…"
    return fit(text, width)


class TextLine(StyledLines):
    """A bar whose content its owner sets as left and right runs."""

    DEFAULT_CSS = """
    TextLine {
        height: 1;
        width: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._left: Row = []
        self._right: Row = []

    def set_content(self, left: Row, right: Row | None = None) -> None:
        # Bars show run names and collector reasons: text from outside.
        left = [(clean(text), style) for text, style in left]
        right = [(clean(text), style) for text, style in right or []]
        if left == self._left and right == self._right:
            return
        self._left, self._right = left, right
        self.relayout()

    def build_rows(self, width: int, height: int) -> list[Row]:
        return [join_line(self._left, self._right, width)] + [[(" " * width, "bar")] for _ in range(height - 1)]
