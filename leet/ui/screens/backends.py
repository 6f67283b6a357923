"""The backends list (``b`` in the system monitor): every collector, whether it found its hardware, and what it costs.

Absent backends are the normal state of most machines (no TPU on a laptop),
so they come last and dim; failing and hung ones come first, in the colours
of trouble, each with its reason. The formatting is pure
(:func:`backend_lines`), so it is tested without a terminal.
"""

from __future__ import annotations

import textwrap
from typing import Any, Callable, Iterable, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from leet.common.text import clean
from leet.common.units import MISSING
from leet.ui.screens.process_dialogs import DIALOG_CSS
from leet.ui.views.health import call_cost, health_word
from widgets.chartframe import Row, fit, trim_row
from widgets.lines import StyledLines

# Trouble first: that is what a person opens the list for.
STATE_ORDER = ("failing", "hung", "present", "absent")
STATE_STYLES = {"present": "ok", "absent": "muted", "failing": "error", "hung": "warn"}
HEADINGS = ("backend", "state", "sweep", "why")
MAX_NAME = 28  # an OpenMetrics endpoint's name can be long; its reason matters more
MIN_REASON = 16  # below this the reason goes on lines of its own, under the row
REFRESH_SECONDS = 1.0

Statuses = Callable[[], Sequence[Any]]


def sweep_cost(last_ms: float) -> str:
    """What the last sample call took: "3.2 ms", "1.40 s"; a dash before the first one."""
    return call_cost(last_ms, MISSING)


def backend_fields(status: Any) -> tuple[str, str, str, str]:
    """(name, state, sweep cost, reason) of one collector, as plain text."""
    state = health_word(status)
    # A hung collector's last figure is from a call before the one that hangs: it would mislead.
    cost = sweep_cost(status.last_ms) if state in ("present", "failing") else MISSING
    return clean(str(status.name)), state, cost, clean(str(status.reason or ""))


def ordered(statuses: Iterable[Any]) -> list[Any]:
    """Failing, hung, present, absent; in the hub's order within each."""
    rank = {state: n for n, state in enumerate(STATE_ORDER)}
    return sorted(statuses, key=lambda status: rank.get(health_word(status), len(rank)))


def summary_line(statuses: Sequence[Any]) -> str:
    """ "7 backends: 3 present · 4 absent"."""
    counts = {state: 0 for state in STATE_ORDER}
    for status in statuses:
        state = health_word(status)
        counts[state] = counts.get(state, 0) + 1
    parts = [f"{count} {state}" for state, count in counts.items() if count]
    noun = "backend" if len(statuses) == 1 else "backends"
    return f"{len(statuses)} {noun}: " + " · ".join(parts) if parts else "no backends yet"


def backend_lines(statuses: Sequence[Any], width: int) -> list[Row]:
    """The list as rows of ``width`` cells: a heading, then one row per collector, reasons wrapped under it."""
    fields = [backend_fields(status) for status in ordered(statuses)]
    name_width = min(MAX_NAME, max([len(HEADINGS[0])] + [len(name) for name, *_ in fields]))
    cost_width = max([len(HEADINGS[2])] + [len(cost) for *_, cost, _ in fields])
    columns = (name_width, max(len(state) for state in STATE_ORDER), cost_width)
    indent = sum(columns) + 2 * len(columns)
    room = width - indent
    rows: list[Row] = [_cells(HEADINGS[:3], columns, "label") + [(HEADINGS[3], "label")]]
    for name, state, cost, reason in fields:
        style = STATE_STYLES.get(state, "value")
        row = _cells((name, state, cost), columns, "value")
        row[0] = (row[0][0], "muted" if state == "absent" else "heading")
        row[2] = (row[2][0], style)
        wrapped = _wrap(reason, room if room >= MIN_REASON else width - 2)
        reason_style = "muted" if state in ("absent", "present") else style
        if room >= MIN_REASON and wrapped:
            rows.append(row + [(wrapped[0], reason_style)])
            rows += [[(" " * indent, "empty"), (line, reason_style)] for line in wrapped[1:]]
        else:
            rows.append(row)
            rows += [[("  ", "empty"), (line, reason_style)] for line in wrapped]
    return [trim_row(row, width) for row in rows]


def _cells(texts: Sequence[str], widths: Sequence[int], style: str) -> Row:
    row: Row = []
    for text, cell in zip(texts, widths):
        row += [(fit(text, cell).ljust(cell), style), ("  ", "empty")]
    return row


def _wrap(text: str, width: int) -> list[str]:
    if not text:
        return []
    return textwrap.wrap(text, max(1, width), break_long_words=True, break_on_hyphens=False) or [text[:width]]


class BackendList(StyledLines, can_focus=True):
    """The rows of :func:`backend_lines`, scrolled by arrows, page keys, home and end."""

    DEFAULT_CSS = """
    BackendList {
        height: auto;
    }
    """

    BINDINGS = [
        Binding("up,w", "scroll_by(-1)", "Up", show=False),
        Binding("down,s", "scroll_by(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "Top", show=False),
        Binding("end", "jump(-1)", "Bottom", show=False),
    ]

    def __init__(self, statuses: Sequence[Any], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.statuses = tuple(statuses)
        self.top = 0
        self._total = 0

    def set_statuses(self, statuses: Sequence[Any]) -> None:
        statuses = tuple(statuses)
        if statuses != self.statuses:
            grew = len(statuses) != len(self.statuses)
            self.statuses = statuses
            if grew:
                self.refresh(layout=True)
            self.relayout()

    def get_content_height(self, container, viewport, width: int) -> int:
        return max(1, len(backend_lines(self.statuses, width)))

    def build_rows(self, width: int, height: int) -> list[Row]:
        lines = backend_lines(self.statuses, width)
        self._total = len(lines)
        # The heading stays put; the collectors scroll under it.
        body = lines[1:]
        room = max(0, height - 1)
        self.top = max(0, min(self.top, len(body) - room))
        shown = [lines[0], *body[self.top:self.top + room]]
        return shown + [[(" " * width, "empty")] for _ in range(height - len(shown))]

    @property
    def more(self) -> str:
        """Where more of the list lies, for the dialog's border."""
        room = max(0, self.size.height - 1)
        below = self.top + room < self._total - 1
        above = self.top > 0
        if below and above:
            return "↑↓ more"
        return "↓ more" if below else ("↑ more" if above else "")

    def _scroll(self, top: int) -> None:
        self.top = max(0, top)
        self.relayout()
        self.post_message(self.Scrolled())

    def action_scroll_by(self, delta: int) -> None:
        self._scroll(self.top + delta)

    def action_page(self, delta: int) -> None:
        self._scroll(self.top + delta * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        self._scroll(0 if where == 0 else self._total)

    class Scrolled(Message):
        """The list moved: the dialog updates its border."""


class BackendsScreen(ModalScreen[None]):
    """Every collector the hub runs, as :func:`backend_lines` draws them; refreshed while open."""

    DEFAULT_CSS = DIALOG_CSS.format(name="BackendsScreen", border="$accent") + """
    BackendsScreen > Vertical {
        width: 110;
    }
    """
    BINDINGS = [Binding("escape,q,b", "close", "Close", show=False)]

    def __init__(self, statuses: Statuses) -> None:
        super().__init__()
        self._statuses = statuses
        self.list = BackendList(statuses(), id="backend-list")

    def compose(self) -> ComposeResult:
        with Vertical(id="backends-box"):
            yield Static(summary_line(self.list.statuses), classes="dialog-title", id="backends-title", markup=False)
            yield self.list
            yield Static("↑↓ pgup pgdn scroll · esc close", classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one("#backends-box").border_title = "backends"
        self.list.focus()
        self._fit()
        self.set_interval(REFRESH_SECONDS, self.refresh_statuses)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        # 90% of the screen, less the border, title and help lines.
        self.list.styles.max_height = max(3, int(self.app.size.height * 0.9) - 4)
        self.call_after_refresh(self._show_more)

    def refresh_statuses(self) -> None:
        statuses = tuple(self._statuses())
        self.list.set_statuses(statuses)
        self.query_one("#backends-title", Static).update(summary_line(statuses))
        self.call_after_refresh(self._show_more)

    def on_backend_list_scrolled(self, _event: BackendList.Scrolled) -> None:
        self._show_more()

    def _show_more(self) -> None:
        self.query_one("#backends-box").border_subtitle = self.list.more

    def action_close(self) -> None:
        self.dismiss(None)
