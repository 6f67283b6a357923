"""The media pane's wiring, shared by the run view and the workspace: mounted on first use, fed on each redraw.

``MediaPanel`` owns the pane, where it stands (``Scrub``), each run's
``MediaLog`` and the tables lately read; the screen calls ``draw_run`` or
``draw_side_by_side`` while the pane shows and hands it the pane's
``Scrub``/``Pick`` messages. Run files and tables are read on one thread of
the panel's own, never on the screen's: each redraw asks it to read on and
draws what has been read so far.
"""

from __future__ import annotations

from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
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
        self._tables: OrderedDict[tuple[Path, str], TableData | Future[TableData]] = OrderedDict()
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="leet-media")
        self._reading: dict[Path, Future[None]] = {}  # each run file's read in flight
        self._keys: list[str] = []
        self._steps: list[int] = []

    @property
    def busy(self) -> bool:
        """Whether a run file, a table or a shown tile's image is being read for the pane."""
        if self.pane is not None and self.pane.drawing:
            return True
        return any(not read.done() for read in self._reading.values()) or any(
            isinstance(table, Future) and not table.done() for table in self._tables.values()
        )

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
        """The run file's media log, asked to read on (on the panel's thread) unless it is already reading."""
        log = self._logs.get(run_file)
        if log is None:
            log = self._logs[run_file] = MediaLog(run_file)
        running = self._reading.get(run_file)
        if running is None or running.done():
            self._reading[run_file] = self._reader.submit(self._read_on, log)
        return log

    def _read_on(self, log: MediaLog) -> None:
        """On the panel's thread: read the run to its end, the pane told after each part that changed what it shows."""
        before = log.progress()
        try:
            while log.refresh() and not log.loaded:
                self._tell()
        except Exception as error:  # noqa: BLE001 - said in the pane; the next redraw reads again
            log.failed(f"reading media failed: {type(error).__name__}: {error}")
        if log.progress() != before:
            self._tell()

    def _read_table(self, log: MediaLog, ref: TableRef) -> TableData:
        table = read_table(log, ref)
        self._tell()
        return table

    def _tell(self) -> None:
        pane = self.pane
        if pane is not None:
            pane.post_message(MediaPane.Read())  # thread-safe: it reaches the screen on its own thread

    def draw_run(self, run_file: Path | None) -> None:
        if self.pane is None:
            return
        if run_file is None:
            self.pane.set_model(empty_model("This run has no file to read media from."))
            return
        log = self.log(run_file)
        with log.lock:
            index = log.index
            note = log.error or ("reading …" if not log.loaded else "")
            key = self.scrub.choose_key(index.keys())
            self._keys, self._steps = index.keys(), list(index.steps(key)) if key is not None else []
            table = None
            if key is not None:
                item = index.at(key, self.scrub.shown(self._steps) or 0)
                if item is not None and item.table is not None:
                    table = self._table(log, item.table)
            model = run_model(index, self.scrub, log.path, table, note)
        self.pane.set_model(model)

    def draw_side_by_side(self, runs: Sequence[tuple[str, Path]]) -> None:
        if self.pane is None:
            return
        logs = [(title, self.log(file)) for title, file in runs]
        with ExitStack() as held:
            for _, log in logs:
                held.enter_context(log.lock)
            media = [RunMedia(title, log.index, log.path) for title, log in logs]
            model = side_by_side(media, self.scrub)
            key = self.scrub.key
            self._keys = sorted({name for run in media for name in run.index.keys(("images",))})
            self._steps = sorted({step for run in media for step in run.index.steps(key)}) if key is not None else []
        self.pane.set_model(model)

    def _table(self, log: MediaLog, ref: TableRef) -> TableData | None:
        """The table, once the panel's thread has read it; None while it reads."""
        key = (log.run_file, ref.path)
        held = self._tables.get(key)
        if held is None:
            held = self._tables[key] = self._reader.submit(self._read_table, log, ref)
            while len(self._tables) > TABLES_KEPT:
                self._tables.popitem(last=False)
        self._tables.move_to_end(key)
        if isinstance(held, Future):
            if not held.done():
                return None
            failure = held.exception()
            held = self._tables[key] = held.result() if failure is None else TableData((), (), 0, f"{ref.path}: {type(failure).__name__}: {failure}")
        return held

    def scrub_to(self, move: str) -> None:
        self.scrub.move(self._steps, move)

    def pick(self, delta: int) -> None:
        self.scrub.pick(self._keys, delta)

    def close(self) -> None:
        """Close the run files after the reads in flight, on the panel's thread; the screen does not wait."""
        logs = list(self._logs.values())
        self._logs.clear()
        self._reader.submit(_close_all, logs)
        self._reader.shutdown(wait=False)


def _close_all(logs: list[MediaLog]) -> None:
    for log in logs:
        log.close()

