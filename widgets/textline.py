"""One-line bars (header, status): styled runs on the left and on the right."""

from __future__ import annotations

from widgets.chartframe import Row
from widgets.lines import StyledLines
from widgets.text import clean


def join_line(left: Row, right: Row, width: int) -> Row:
    """``left`` then ``right`` flush right; the left side gives way when space runs out."""
    right_width = sum(len(text) for text, _ in right)
    if right_width > width:
        right, right_width = [], 0
    room = width - right_width
    out: Row = []
    used = 0
    for text, style in left:
        if used >= room:
            break
        text = text[: room - used]
        out.append((text, style))
        used += len(text)
    out.append((" " * (room - used), "bar"))
    out.extend(right)
    return out


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
