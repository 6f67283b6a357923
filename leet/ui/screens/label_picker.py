"""The label picker: the writers of a shared run, each shown or hidden with a key.

Every toggle applies at once (the screen behind redraws), so a person sees
the effect while picking; ``enter``, ``esc`` or ``l`` closes the picker.
"""

from __future__ import annotations

from typing import Callable, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen

from leet.common.text import clean
from leet.model.node_filter import LabelFilter
from leet.model.run import WriterStatus
from widgets.chartframe import Row, fit, trim_row
from widgets.lines import LIST_BINDINGS, StyledLines

HELP = "space show/hide · o only this · a all · enter close"


def picker_rows(writers: Sequence[WriterStatus], labels: Sequence[str], chosen: LabelFilter, cursor: int, width: int, focused: bool = True) -> list[Row]:
    """One row per node label: its mark, name, role, state and records."""
    by_label = {writer.label: writer for writer in writers}
    rows: list[Row] = []
    name_width = max([len(label) for label in labels] + [5])
    for index, label in enumerate(labels):
        writer = by_label.get(label)
        mark = "[x]" if chosen.matches(label) else "[ ]"
        style = "cursor" if index == cursor and focused else "value"
        role = "primary" if writer is not None and writer.primary else ""
        state = writer.state.value if writer is not None else ""
        if writer is not None and writer.exit_code not in (None, 0):
            state = f"failed ({writer.exit_code})"
        records = f"{writer.records:,} records" if writer is not None else ""
        row: Row = [(f"{mark} ", "key"), (fit(clean(label), name_width).ljust(name_width), style), (f" {role:<7} ", "muted"), (f"{state:<16} ", "value"), (records, "muted")]
        rows.append(trim_row(row, width))
    return rows


class LabelList(StyledLines, can_focus=True):
    DEFAULT_CSS = """
    LabelList {
        height: auto;
        max-height: 30;
    }
    """

    BINDINGS = [
        *LIST_BINDINGS,
        Binding("space,x", "toggle_label", "Show / hide", show=False),
        Binding("o", "only", "Only this", show=False),
        Binding("a", "all", "All", show=False),
    ]

    def __init__(self, writers: Sequence[WriterStatus], labels: Sequence[str], chosen: LabelFilter, on_change: Callable[[LabelFilter], None]) -> None:
        super().__init__(id="label-list")
        self.writers = list(writers)
        self.labels = list(labels)
        self.chosen = chosen
        self.cursor = 0
        self._on_change = on_change

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(self.labels))

    def build_rows(self, width: int, height: int) -> list[Row]:
        top = max(0, min(self.cursor - height + 1, len(self.labels) - height)) if self.cursor >= height else 0
        rows = picker_rows(self.writers, self.labels, self.chosen, self.cursor, width, self.has_focus)[top:top + height]
        return [trim_row(row, width) for row in rows] + [[(" " * width, "empty")] for _ in range(height - len(rows))]

    def _set(self, chosen: LabelFilter) -> None:
        self.chosen = chosen
        self._on_change(chosen)
        self.relayout()

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self.labels) - 1, self.cursor + delta))
        self.relayout()

    def action_page(self, delta: int) -> None:
        self.action_cursor(delta * max(1, self.size.height - 1))

    def action_jump(self, where: int) -> None:
        self.cursor = 0 if where == 0 else max(0, len(self.labels) - 1)
        self.relayout()

    def action_toggle_label(self) -> None:
        if self.labels:
            self._set(self.chosen.toggle(self.labels[self.cursor], self.labels))

    def action_only(self) -> None:
        if self.labels:
            self._set(self.chosen.only(self.labels[self.cursor]))

    def action_all(self) -> None:
        self._set(LabelFilter())


class LabelPicker(ModalScreen[LabelFilter]):
    """Pick which node labels show; ``on_change`` hears every toggle, the result is the last choice."""

    BINDINGS = [
        Binding("escape,enter,l,q", "close", "Close", show=False),
        Binding("f1", "help", "Help", show=False),
        Binding("f10,ctrl+c", "app.quit", "Quit", show=False),
    ]

    def __init__(self, writers: Sequence[WriterStatus], labels: Sequence[str], chosen: LabelFilter, on_change: Callable[[LabelFilter], None]) -> None:
        super().__init__()
        self._list = LabelList(writers, labels, chosen, on_change)

    def compose(self) -> ComposeResult:
        from textual.containers import Vertical
        from textual.widgets import Static

        with Vertical(id="label-box"):
            yield Static(f"Node labels ({len(self._list.labels)})", id="label-title")
            yield self._list
            yield Static(HELP, id="label-help")

    def on_mount(self) -> None:
        self._list.focus()

    def action_close(self) -> None:
        self.dismiss(self._list.chosen)

    def action_help(self) -> None:
        from leet.ui.bindings import RUN_KEYS
        from leet.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(RUN_KEYS, "run"))
