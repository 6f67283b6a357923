"""Runs of the workspace side by side: the config that differs, each metric's last and best value.

The table comes from ``model.compare``, fed with what the workspace already
holds: each run's snapshot (config, define_metric goals) and its history
series in the store, both read by the runs' own loaders, never from files
here. It is rebuilt only when a run read more.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color
from textual.screen import Screen
from textual.widgets import DataTable

from leet.common.text import clean
from leet.discovery.probe import RunEntry
from leet.model.compare import Cell, CompareRun, CompareTable, compare_table
from leet.model.run import RunSnapshot, RunState
from leet.model.store import SeriesData, SeriesKey
from leet.sources.base import WorkspaceView
from leet.ui.bindings import COMPARE_KEYS, footer_hints, screen_keys
from leet.ui.views.footer import status_line
from widgets.filterbar import FilterBar
from widgets.textline import TextLine

HINTS = footer_hints(COMPARE_KEYS)
ROW_NAMES = 28  # cells of the row-name column at most


def state_text(entry: RunEntry | None, snapshot: RunSnapshot) -> str:
    if entry is not None and entry.exit_code not in (None, 0):
        return f"failed ({entry.exit_code})"
    if snapshot.state is RunState.LOADING or entry is None:
        return snapshot.state.value
    return entry.state.value


def compare_run(key: str, title: str, entry: RunEntry | None, snapshot: RunSnapshot, series: Mapping[SeriesKey, SeriesData]) -> CompareRun:
    """One run for the table: who it is from the scan, config and goals from its loader, history from the store."""
    by_metric = {found.key: data for found, data in series.items() if found.run == key}
    return CompareRun(
        key=key,
        name=title,
        run_id=snapshot.run_id or (entry.run_id if entry is not None else ""),
        state=state_text(entry, snapshot),
        config=snapshot.config,
        goals=snapshot.goals,
        hidden=snapshot.hidden,
        series=by_metric,
    )


class CompareScreen(Screen[None]):
    """The compare table over the workspace; escape goes back."""

    BINDINGS = [Binding(k.keys, k.action, k.description, show=False) for k in screen_keys(COMPARE_KEYS)]
    AUTO_FOCUS = "#compare-table"

    def __init__(self, source: WorkspaceView, keys: Sequence[str], titles: Mapping[str, str]) -> None:
        super().__init__()
        self.source = source
        self.keys = tuple(keys)
        self.titles = dict(titles)
        self.pattern = ""
        self.sort_row = ""  # the row the columns are sorted by, "" for the workspace's order
        self.reverse = False
        self.table: CompareTable | None = None
        self._built_for: tuple | None = None

    def compose(self) -> ComposeResult:
        yield TextLine(id="header")
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=False, header_height=3)
        yield FilterBar(id="filterbar")
        yield TextLine(id="status")

    def on_mount(self) -> None:
        self.update_view()

    # -- drawing --------------------------------------------------------------------------
    def update_view(self) -> None:
        runs = [(key, found) for key in self.keys if (found := self.source.source(key)) is not None]
        snapshots = [(key, found.snapshot(console_lines=0)) for key, found in runs]
        wanted = tuple((key, snapshot.records, snapshot.state, snapshot.history_keys) for key, snapshot in snapshots)
        if wanted == self._built_for:
            return  # nothing read since: the table stands, and so do its cursor and scroll
        self._built_for = wanted
        entries = {entry.key: entry for entry in self.source.entries()}
        series = self.source.store.snapshot([SeriesKey(key, metric, None) for key, snapshot in snapshots for metric, _ in snapshot.history_keys])
        self.table = compare_table([compare_run(key, self.titles.get(key, key), entries.get(key), snapshot, series) for key, snapshot in snapshots])
        self._draw()

    def shown(self) -> CompareTable:
        """The table as drawn: filtered, then sorted."""
        table = self.table or CompareTable((), ())
        table = table.filtered(self.pattern)
        return table.sorted_by(self.sort_row, self.reverse) if self.sort_row else table

    def _draw(self) -> None:
        widget = self.query_one(DataTable)
        shown = self.shown()
        at = self._cursor_row_name()
        widget.clear(columns=True)
        widget.add_column(Text("run\nid\nstate", style="bold"), key="name", width=ROW_NAMES)
        for index, run in enumerate(shown.runs):
            label = Text(f"{clean(run.name)}\n{clean(run.short_id)}\n{run.state}", style="bold", no_wrap=True, overflow="ellipsis")
            widget.add_column(label, key=f"run{index}", width=max(12, min(24, len(run.name))))
        best = self._best_style()
        for row in shown.rows:
            name = Text(clean(row.name), style="bold" if row.name == self.sort_row else "", no_wrap=True, overflow="ellipsis")
            widget.add_row(name, *(self._cell(cell, best) for cell in row.cells), key=row.name)
        if at is not None:
            names = [row.name for row in shown.rows]
            if at in names:
                widget.move_cursor(row=names.index(at))
        self._draw_bars(shown)

    def _cell(self, cell: Cell, best: Style) -> Text:
        return Text(clean(cell.text), style=best if cell.best else "", no_wrap=True, overflow="ellipsis")

    def _best_style(self) -> Style:
        colour = Color.parse(self.app.theme_variables.get("success", "green"))
        return Style(color=colour.rich_color, bold=True)

    def _cursor_row_name(self) -> str | None:
        widget = self.query_one(DataTable)
        if not widget.row_count:
            return None
        row = widget.coordinate_to_cell_key(widget.cursor_coordinate).row_key
        return str(row.value) if row.value is not None else None

    def _draw_bars(self, shown: CompareTable) -> None:
        left = [(f" compare · {len(shown.runs)} runs", "heading"), (f" · {len(shown.rows)} rows", "muted")]
        if self.sort_row:
            order = "reversed" if self.reverse else "best first"
            left.append((f" · sorted by {clean(self.sort_row)} ({order})", "value"))
        if self.pattern:
            left.append((f" · filter: {clean(self.pattern)}", "warn"))
        self.query_one("#header", TextLine).set_content(left, [("best run per metric row in bold ", "muted")])
        self.query_one("#status", TextLine).set_content(*status_line(HINTS, [], self.size.width or self.app.size.width))

    def on_resize(self) -> None:
        if self.is_mounted:  # the footer's hints fit the width
            self.call_after_refresh(lambda: self._draw_bars(self.shown()))

    # -- actions ----------------------------------------------------------------------------
    def action_sort(self, reverse: bool) -> None:
        name = self._cursor_row_name()
        if name is None:
            return
        self.sort_row, self.reverse = name, reverse
        self._draw()

    def action_filter(self) -> None:
        self.query_one(FilterBar).open("rows", "Row filter (regex or text):", self.pattern)

    def action_clear_filter(self) -> None:
        self._apply_filter("")

    def on_filter_bar_changed(self, event: FilterBar.Changed) -> None:
        self._apply_filter(event.pattern)

    def on_filter_bar_done(self, event: FilterBar.Done) -> None:
        self._apply_filter(event.pattern)
        self.query_one(DataTable).focus()

    def _apply_filter(self, pattern: str) -> None:
        self.pattern = pattern
        self._draw()

    def action_close(self) -> None:
        self.dismiss()

    def action_help(self) -> None:
        from leet.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(COMPARE_KEYS, "compare"))

    def action_quit(self) -> None:
        self.app.exit()
