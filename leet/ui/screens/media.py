"""The media pane's wiring, shared by the run view and the workspace: mounted on first use, fed on each redraw.

``MediaPanel`` owns the pane, where it stands (``Scrub``), each run's
``MediaLog`` (read on as the pane redraws) and the tables lately read; the
screen calls ``draw_run`` or ``draw_side_by_side`` while the pane shows and
hands it the pane's ``Scrub``/``Pick`` messages.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Sequence

from textual.widget import Widget

from leet.model.media import TableRef
from leet.sources.media import MediaLog, TableData, read_table
from leet.ui.views.media import RunMedia, Scrub, empty_model, run_model, side_by_side
from widgets.graphics import choose
from widgets.media import MediaPane

TABLES_KEPT = 4  # tables read lately, kept while scrubbing back and forth


class MediaPanel:
    def __init__(self, setting: str = "auto") -> None:
        self.mode = choose(setting)
        self.scrub = Scrub()
        self.pane: MediaPane | None = None
        self._logs: dict[Path, MediaLog] = {}
        self._tables: OrderedDict[tuple[Path, str], TableData] = OrderedDict()
        self._keys: list[str] = []
        self._steps: list[int] = []

    @property
    def shown(self) -> bool:
        return self.pane is not None and self.pane.display

    def toggle(self, parent: Widget, after: Widget | None = None) -> bool:
        """Show the pane (mounting it the first time) or hide it; whether it now shows."""
        if self.pane is None:
            self.pane = MediaPane(self.mode, id="media")
            if after is not None:
                parent.mount(self.pane, after=after)
            else:
                parent.mount(self.pane)
            return True
        self.pane.display = not self.pane.display
        return self.pane.display

    def log(self, run_file: Path) -> MediaLog:
        log = self._logs.get(run_file)
        if log is None:
            log = self._logs[run_file] = MediaLog(run_file)
        log.refresh()
        return log

    def draw_run(self, run_file: Path | None) -> None:
        if self.pane is None:
            return
        if run_file is None:
            self.pane.set_model(empty_model("This run has no file to read media from."))
            return
        log = self.log(run_file)
        index = log.index
        note = log.error or ("reading …" if not log.loaded else "")
        key = self.scrub.choose_key(index.keys())
        self._keys, self._steps = index.keys(), index.steps(key) if key is not None else []
        table = None
        if key is not None:
            item = index.at(key, self.scrub.shown(self._steps) or 0)
            if item is not None and item.table is not None:
                table = self._table(log, item.table)
        self.pane.set_model(run_model(index, self.scrub, log.path, table, note))

    def draw_side_by_side(self, runs: Sequence[tuple[str, Path]]) -> None:
        if self.pane is None:
            return
        media = [RunMedia(title, log.index, log.path) for title, log in ((title, self.log(file)) for title, file in runs)]
        model = side_by_side(media, self.scrub)
        key = self.scrub.key
        self._keys = sorted({name for run in media for name in run.index.keys(("images",))})
        self._steps = sorted({step for run in media for step in run.index.steps(key)}) if key is not None else []
        self.pane.set_model(model)

    def _table(self, log: MediaLog, ref: TableRef) -> TableData:
        key = (log.run_file, ref.path)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = read_table(log, ref)
            while len(self._tables) > TABLES_KEPT:
                self._tables.popitem(last=False)
        self._tables.move_to_end(key)
        return table

    def scrub_to(self, move: str) -> None:
        self.scrub.move(self._steps, move)

    def pick(self, delta: int) -> None:
        self.scrub.pick(self._keys, delta)

    def close(self) -> None:
        for log in self._logs.values():
            log.close()
        self._logs.clear()

