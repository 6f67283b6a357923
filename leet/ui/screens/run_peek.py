"""The workspace's peek panel (``]``): the run under the runs list's cursor, without opening it.

Beside the runs list it shows that run's overview, a few of its system
charts and the tail of its console, as the run view shows them. A
``RunPeeker`` opens and reads the run on a thread of its own; the panel
follows the cursor (it looks ten times a second while shown, so keys, clicks
and filters all count) and redraws when the reader says there is more.
Hiding the panel, or its leaving with the screen, stops the reader and
closes the runs it kept open.
"""

from __future__ import annotations

import time
from typing import Callable

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer

from leet.discovery.probe import RunEntry
from leet.model.catalog import ChartSpec, group
from leet.sources.peek import Opener, Peek, PeekSource, RunPeeker, open_peek_source
from leet.ui.views.charts import chart_view, default_mode
from leet.ui.views.run import Line, time_range
from leet.ui.views.run_peek import (
    CONSOLE_TAIL,
    SYSTEM_CHARTS,
    console_tail,
    no_run_lines,
    peek_charts,
    peek_overview,
    unreadable_lines,
    waiting_lines,
)
from widgets.grid import ChartGrid
from widgets.textpane import TextPane

CURSOR_LOOK = 0.1  # seconds between looks at the runs list's cursor


class RunPeek(Vertical):
    """The run under the cursor: overview, system charts, console; hidden until ``toggle()``."""

    # How the reader opens a run: a test's stand-in replaces it on the class.
    opener: Opener = staticmethod(open_peek_source)

    class Read(Message):
        """The reader has more to show."""

    def __init__(
        self,
        cursor: Callable[[], str | None],
        entry: Callable[[str], RunEntry | None],
        *,
        clock: Callable[[], float] = time.time,
        id: str | None = None,
    ) -> None:
        """``cursor`` gives the key under the runs list's cursor; ``entry`` a key's run entry."""
        super().__init__(id=id)
        self.display = False
        self._cursor = cursor
        self._entry_of = entry
        self._clock = clock
        self.reader: RunPeeker | None = None
        self._timer: Timer | None = None
        self._key: str | None = None
        self._entry: RunEntry | None = None
        self._told = False  # a Read message is on its way
        self._specs: dict[str, ChartSpec] = {}
        self._specs_for: tuple[str, int] | None = None  # (system key, roster version) the specs were made for
        self._system_key = ""

    def compose(self) -> ComposeResult:
        yield TextPane("Run", id="peek-overview")
        yield ChartGrid(SYSTEM_CHARTS, 1, id="peek-system", title="System")
        yield TextPane("Console", follow=True, id="peek-console")

    # -- shown or hidden ---------------------------------------------------------------
    @property
    def shown(self) -> bool:
        return bool(self.display)

    def toggle(self) -> bool:
        self.set_shown(not self.shown)
        return self.shown

    def set_shown(self, shown: bool) -> None:
        self.display = shown
        if shown and self.is_mounted:
            self._start()
        elif not shown:
            self._stop()

    def on_mount(self) -> None:
        if self.shown:
            self._start()

    def on_unmount(self) -> None:
        self._stop()

    def _start(self) -> None:
        if self.reader is not None:
            return
        self.reader = RunPeeker(opener=type(self).opener)
        self.reader.on_change(self._heard)
        self.reader.start()
        self._timer = self.set_interval(CURSOR_LOOK, self.look_at_cursor)
        self._key, self._entry = None, None
        self.look_at_cursor(force=True)

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.off_change(self._heard)
            reader.stop()

    # -- following the cursor ----------------------------------------------------------
    def look_at_cursor(self, force: bool = False) -> None:
        """Ask the reader for the run under the cursor, if it moved."""
        key = self._cursor()
        if self.reader is None or (key == self._key and not force):
            return
        self._key = key
        self._entry = self._entry_of(key) if key is not None else None
        entry = self._entry
        if entry is None or entry.error:
            self.reader.show(None)
        else:
            self.reader.show(entry.key, entry.files or (entry.file,))
        self.draw()

    def _heard(self) -> None:
        # On the reader's thread: post, never touch widgets here.
        if not self._told:
            self._told = True
            self.post_message(self.Read())

    def on_run_peek_read(self, message: Read) -> None:
        message.stop()
        self._told = False
        self.draw()

    # -- drawing ----------------------------------------------------------------------
    def draw(self) -> None:
        if self.reader is None:
            return
        entry, peek = self._entry, self.reader.peek()
        overview = self.query_one("#peek-overview", TextPane)
        console = self.query_one("#peek-console", TextPane)
        source = peek.source if entry is not None and not entry.error and peek.key == entry.key else None
        title = entry.title if entry is not None else ""
        if source is None:
            overview.set_lines(self._why(entry, peek), title)
            console.set_lines([])
            self._draw_system(None)
            return
        snapshot = source.snapshot(console_lines=CONSOLE_TAIL)
        overview.set_lines(peek_overview(snapshot, self._clock()), title)
        console.set_lines(console_tail(snapshot))
        self._draw_system(source)

    @staticmethod
    def _why(entry: RunEntry | None, peek: Peek) -> list[Line]:
        """What the overview says while no run is shown."""
        if entry is None:
            return no_run_lines()
        if entry.error:
            return unreadable_lines(entry.error)
        if peek.key == entry.key and peek.error:
            return unreadable_lines(peek.error)
        return waiting_lines()

    def _draw_system(self, source: PeekSource | None) -> None:
        grid = self.query_one("#peek-system", ChartGrid)
        if source is None or self.reader is None:
            self._specs, self._specs_for, self._system_key = {}, None, ""
            grid.set_charts([])
            return
        store = self.reader.store
        self._system_key = run = source.system_key
        wanted = (run, store.roster_version(run))
        if wanted != self._specs_for:
            self._specs_for = wanted
            self._specs = {spec.chart: spec for spec in peek_charts(group(store.series(run)))}
        grid.set_charts(list(self._specs))
        self._draw_charts()

    def _draw_charts(self) -> None:
        grid = self.query_one("#peek-system", ChartGrid)
        visible = [(chart_id, widget) for chart_id, widget in grid.visible_charts() if chart_id in self._specs]
        if not visible or self.reader is None:
            return
        store = self.reader.store
        span = store.time_span(self._system_key)
        x_range = time_range(*span) if span else (0.0, 1.0)
        data = store.snapshot([key for chart_id, _ in visible for key in self._specs[chart_id].keys])
        for chart_id, widget in visible:
            spec = self._specs[chart_id]
            widget.set_view(chart_view(spec, data, x_range, default_mode(spec)))

    def on_chart_grid_page_changed(self, event: ChartGrid.PageChanged) -> None:
        event.stop()  # the workspace's own grid is not the one that changed
        self._draw_charts()
