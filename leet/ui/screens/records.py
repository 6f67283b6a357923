"""The record viewer (``i``): a run file's records one per line, a kind filter, search, and the selected record as JSON.

The file is indexed on a thread of the screen's own (``RecordIndex.follow``),
which reads on as the file grows and tells the screen (``Indexed``) after each
part; the list draws only the lines on screen, each record parsed when its line
is drawn or selected. Search runs on a thread too, one record at a time, and
moves the cursor to what it found.
"""

from __future__ import annotations

import os
import threading

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from leet.common.matching import compile_filter
from leet.common.text import clean
from leet.runfile.record_index import RecordIndex
from leet.ui.bindings import RECORDS_KEYS, footer_hints, screen_keys
from leet.ui.views.footer import status_line
from leet.ui.views.records import find_match, kinds_row, next_kind, record_json, record_row
from widgets.chartframe import Row
from widgets.filterbar import FilterBar
from widgets.linelist import LineList
from widgets.textline import TextLine
from widgets.textpane import TextPane

HINTS = footer_hints(RECORDS_KEYS)
ROWS_KEPT = 2_000  # lines drawn kept for redrawing; a cursor move redraws every line on screen


class RecordsScreen(Screen[None]):
    """One run file's records; escape goes back."""

    BINDINGS = [Binding(k.keys, k.action, k.description, show=False) for k in screen_keys(RECORDS_KEYS)]
    AUTO_FOCUS = "#record-lines"

    class Indexed(Message):
        """The index read more of the file (or stopped reading it)."""

    class Searched(Message):
        """A search among the records of ``kind`` ended (``place`` None: nothing matched) or got ``count`` records further."""

        def __init__(self, pattern: str, kind: str | None, place: int | None = None, count: int = 0, done: bool = True) -> None:
            super().__init__()
            self.pattern = pattern
            self.kind = kind
            self.place = place
            self.count = count
            self.done = done

    def __init__(self, path: str | os.PathLike[str], title: str = "") -> None:
        super().__init__()
        self.index = RecordIndex(path)
        self.run_title = title or os.path.basename(path)
        self.kind: str | None = None  # the one kind listed; None: every entry
        self.pattern = ""
        self.search_note = ""
        self._stop = threading.Event()
        self.shown_entry = -1  # the entry whose JSON the pane shows
        self._rows: dict[tuple[int, int], Row] = {}  # lines drawn, by entry and width: a record never changes

    def compose(self) -> ComposeResult:
        yield TextLine(id="header")
        with Horizontal(id="records-body"):
            yield LineList(self._line, title="records", id="record-lines")
            yield TextPane("record", id="record-json")
        yield FilterBar(id="filterbar")
        yield TextLine(id="status")

    def on_mount(self) -> None:
        self._draw_bars()
        # A thread of its own, not a worker of the app's pool: it follows the file until the screen goes.
        threading.Thread(target=self._read_file, name="leet-records", daemon=True).start()

    def on_unmount(self) -> None:
        self._stop.set()

    def _read_file(self) -> None:
        """On the index thread: index the file and follow it, telling the screen after each part."""
        try:
            self.index.follow(self._stop, lambda: self.post_message(self.Indexed()))
        except Exception as error:  # noqa: BLE001 - the thread ends, but never without saying so on screen
            self.index.error = f"reading stopped: {type(error).__name__}: {error}"
            self.post_message(self.Indexed())
        finally:
            self.index.close()

    # -- drawing ----------------------------------------------------------------------
    @property
    def lines(self) -> LineList:
        return self.query_one(LineList)

    def _line(self, place: int, width: int) -> Row:
        number = self.index.positions(self.kind)[place]
        row = self._rows.get((number, width))
        if row is None:
            if len(self._rows) >= ROWS_KEPT:
                self._rows.clear()
            row = self._rows[number, width] = record_row(self.index.entry(number), self.index.record(number), width)
        return row

    def on_records_screen_indexed(self, _message: Indexed) -> None:
        self._draw_list()
        self._draw_bars()
        self._show_selected()

    def _draw_list(self) -> None:
        self.lines.set_count(len(self.index.positions(self.kind)), self._progress())

    def _progress(self) -> str:
        count = len(self.index)
        if self.index.error:
            return f"stopped: {self.index.error}"
        if not self.index.reached_end:
            share = f" ({100 * self.index.read_bytes // self.index.size}%)" if self.index.size else ""
            return f"indexing … {count:,} records{share}"
        return f"{count:,} entries, following the file"

    def _show_selected(self) -> None:
        positions = self.index.positions(self.kind)
        pane = self.query_one(TextPane)
        if not positions:
            self.shown_entry = -1
            pane.title = "record"
            why = self.index.error or ("no records" if self.index.reached_end else "reading …")
            pane.set_lines([(why, "error" if self.index.error else "muted")])
            return
        number = positions[min(self.lines.cursor, len(positions) - 1)]
        if number == self.shown_entry:
            return
        self.shown_entry = number
        entry = self.index.entry(number)
        pane.title = f"#{number + 1:,} {entry.kind} @ {entry.offset:,}"
        pane.set_lines([(line, "error" if entry.kind == "lost" else "value") for line in record_json(entry, self.index.record(number))])
        pane.action_jump(0)

    def _draw_bars(self) -> None:
        left: Row = [(f" records · {clean(self.run_title)}", "heading")]
        if self.pattern:
            left.append((f" · search: {clean(self.pattern)}", "warn"))
        if self.search_note:
            left.append((f" · {clean(self.search_note)}", "muted"))
        self.query_one("#header", TextLine).set_content(left + kinds_row(self.index.kinds(), self.kind))
        self.query_one("#status", TextLine).set_content(*status_line(HINTS, [], self.size.width or self.app.size.width))

    def on_resize(self) -> None:
        if self.is_mounted:  # the footer's hints fit the width
            self.call_after_refresh(self._draw_bars)

    def on_line_list_moved(self, _event: LineList.Moved) -> None:
        self._show_selected()

    # -- kinds --------------------------------------------------------------------------
    def action_cycle_kind(self, step: int) -> None:
        """List one kind (then the next), or every entry again; the cursor stays on the record it was on when it can."""
        positions = self.index.positions(self.kind)
        at = positions[self.lines.cursor] if positions else 0
        self.kind = next_kind(list(self.index.kinds()), self.kind, step)
        self._stop_search()
        shown = self.index.positions(self.kind)
        self._draw_list()
        self.lines.move_to(_place_of(shown, at))
        self._show_selected()
        self._draw_bars()

    # -- search -------------------------------------------------------------------------
    def action_search(self) -> None:
        self.query_one(FilterBar).open("search", "Search records' JSON (regex or text):", self.pattern)

    def on_filter_bar_changed(self, event: FilterBar.Changed) -> None:
        event.stop()  # a search starts when the pattern is entered, not at each key

    def on_filter_bar_done(self, event: FilterBar.Done) -> None:
        self.lines.focus()
        if event.accepted and event.pattern:
            self.pattern = event.pattern
            self._search(1, from_here=True)
        self._draw_bars()

    def action_search_next(self, step: int) -> None:
        if not self.pattern:
            self.notify("Search first: /", timeout=2)
            return
        self._search(step)

    def action_clear_search(self) -> None:
        self.pattern = ""
        self._stop_search()
        self._draw_bars()

    def _stop_search(self) -> None:
        self.search_note = ""
        self.workers.cancel_group(self, "records-search")

    def _search(self, step: int, from_here: bool = False) -> None:
        positions = self.index.positions(self.kind)
        if not positions:
            return
        pattern, kind, matches = self.pattern, self.kind, compile_filter(self.pattern)
        # A new search looks at the cursor's record first; n and N go past it.
        start = self.lines.cursor - step if from_here else self.lines.cursor
        self.search_note = "searching …"
        self._draw_bars()

        def search() -> None:
            worker = get_current_worker()
            place = find_match(
                self.index,
                positions,
                start,
                step,
                matches,
                cancelled=lambda: worker.is_cancelled or self._stop.is_set(),
                searched=lambda count: self.post_message(self.Searched(pattern, kind, count=count, done=False)),
            )
            if not worker.is_cancelled:
                self.post_message(self.Searched(pattern, kind, place))

        self.run_worker(search, thread=True, exclusive=True, name="records-search", group="records-search")

    def on_records_screen_searched(self, message: Searched) -> None:
        if (message.pattern, message.kind) != (self.pattern, self.kind):
            return  # a search since, or another kind listed: the place is not in this list
        if not message.done:
            self.search_note = f"searching … {message.count:,} records"
        elif message.place is None:
            self.search_note = "no match"
        else:
            self.search_note = ""
            self.lines.move_to(message.place)
            self._show_selected()
        self._draw_bars()

    # -- the rest -----------------------------------------------------------------------
    def action_cycle_focus(self) -> None:
        pane = self.query_one(TextPane)
        self.set_focus(self.lines if self.focused is pane else pane)

    def action_close(self) -> None:
        self.dismiss()

    def action_help(self) -> None:
        from leet.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(RECORDS_KEYS, "records"))

    def action_quit(self) -> None:
        self.app.exit()


def _place_of(positions, number: int) -> int:
    """Where entry ``number`` is in ``positions`` (sorted), or the place of the next entry after it."""
    low, high = 0, len(positions)
    while low < high:
        middle = (low + high) // 2
        if positions[middle] < number:
            low = middle + 1
        else:
            high = middle
    return min(low, max(0, len(positions) - 1))
