"""The workspace's run filter and pins: the query typed at ``f``, the run facts it needs, and ``P`` / ``A`` / ``X``.

The query language is ``leet.model.run_query``. A query that is not valid
is not applied: the list keeps the last valid one, and the footer says
where the new one went wrong. Bare words, tags, notes and state come from
the listing (each run file's head and tail); ``cfg.`` terms start from the
config in the run record, and ``cfg.`` or ``summary.`` terms have every
listed run file read for its config updates and summary records, on a
thread worker (``sources.run_facts.FactsBook``, which reads a file again
only when it grew), never on the screen's thread.

A pinned run stays selected: ``X`` deselects every run but the pinned,
``space`` leaves a pinned run selected, and pins are remembered per
workspace folder with the layout.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Mapping, Sequence, cast

from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from leet.common.text import clean
from leet.discovery.probe import RunEntry
from leet.model.run_query import Query, QueryError, RunFields, parse
from leet.sources.base import WorkspaceView
from leet.sources.run_facts import FactsBook, RunFacts
from widgets.chartframe import Row
from widgets.runlist import RunList

FILTER_PROMPT = "Run filter (words tag: note: state: cfg.k>v summary.k<v):"
MAX_TEXT = 512  # the remembered layout's longest key or text (config.layout_state.MAX_TEXT)
MAX_PINS = 200  # pins remembered per folder
MAX_FOLDERS = 50  # folders whose pins are remembered: the most recently pinned in


def shown_state(entry: RunEntry) -> str:
    """The run's state as a query names it, following the list's state column: a non-zero exit is ``failed``."""
    if entry.error:
        return "unreadable"
    if entry.exit_code not in (None, 0):
        return "failed"
    return entry.state.code


def entry_words(entry: RunEntry) -> tuple[str, ...]:
    """What a bare word searches: the run's directory, name, id, project, group, job type, state and node labels."""
    words = (entry.key, entry.name, entry.run_id, entry.project, entry.group, entry.job_type, entry.state.value, *entry.labels)
    return tuple(word for word in words if word)


def run_fields(entry: RunEntry, facts: RunFacts | None = None) -> RunFields:
    """``entry`` as a query reads it; ``facts``: its file read whole, when it was (else the run record's config, no summary)."""
    return RunFields(
        words=entry_words(entry), state=shown_state(entry), tags=entry.tags, notes=entry.notes,
        config=facts.config if facts is not None else entry.config, summary=facts.summary if facts is not None else {},
    )


def matching(entries: Sequence[RunEntry], query: Query, facts: Mapping[str, RunFacts] | None = None) -> list[RunEntry]:
    """The entries ``query`` matches, in order; ``facts`` by run key."""
    facts = facts or {}
    return [entry for entry in entries if query.matches(run_fields(entry, facts.get(entry.key)))]


def valid_pins(value: Any) -> dict[str, list[str]]:
    """``{folder: [run keys]}`` as remembered, each part checked; what is not valid is left out."""
    if not isinstance(value, dict):
        return {}
    pins = {}
    for folder, keys in value.items():
        if isinstance(folder, str) and isinstance(keys, list):
            kept = [key for key in keys if isinstance(key, str) and 0 < len(key) <= MAX_TEXT]
            if kept:
                pins[folder] = list(dict.fromkeys(kept))[:MAX_PINS]
    return dict(list(pins.items())[-MAX_FOLDERS:])


class RunFactsRead(Message):
    """The facts worker read something new: the list may change."""


class RunFilter:
    """Mixed into the workspace screen: the run query, the facts it reads, and the pins.

    The screen holds ``source``, ``job_type`` and ``filters`` (``filters["runs"]``:
    the query text in force, always valid) and draws in ``update_view``.
    """

    source: WorkspaceView
    filters: dict[str, str]
    job_type: str

    def update_view(self, force: bool = False) -> None:
        raise NotImplementedError

    def init_run_filter(self) -> None:
        self.query_error = ""  # why the query last typed is not in force; "" when it is
        self.pins: list[str] = []  # run keys, in the order pinned
        self._other_pins: dict[str, list[str]] = {}  # other folders' pins, kept in the layout
        self._facts = FactsBook()
        self._facts_lock = threading.Lock()
        self._facts_wanted: list[Path] | None = None
        self._facts_reading = False

    # -- the query ---------------------------------------------------------------------------------
    @property
    def run_query(self) -> Query:
        return parse(self.filters["runs"])

    def take_query(self, text: str) -> bool:
        """Put ``text`` in force if it is a valid query (True); else say why in ``query_error`` and keep the one in force."""
        try:
            parse(text)
        except QueryError as error:
            self.query_error = str(error)
            return False
        self.query_error = ""
        return True

    def query_note(self) -> Row:
        """The footer's word on a query not taken."""
        return [(f" ⚠ run filter, {clean(self.query_error)} ", "error")] if self.query_error else []

    def listed_entries(self, entries: Sequence[RunEntry] | None = None) -> list[RunEntry]:
        """The runs the list shows: of the job type shown, matching the query in force."""
        entries = self.source.entries() if entries is None else entries
        kept = [entry for entry in entries if not self.job_type or entry.job_type == self.job_type]
        return matching(kept, self.run_query, self.run_facts(kept))

    # -- the facts a query reads -------------------------------------------------------------------
    def run_facts(self, entries: Sequence[RunEntry]) -> dict[str, RunFacts]:
        """By run key, the facts read so far of the runs the query in force needs them for; asks for a read of what changed."""
        if not self.run_query.reads:
            return {}
        self._want_facts([entry.file for entry in entries if not entry.error])
        found = {entry.key: self._facts.facts(entry.file) for entry in entries}
        return {key: facts for key, facts in found.items() if facts is not None}

    def _want_facts(self, files: list[Path]) -> None:
        with self._facts_lock:
            self._facts_wanted = files
            if self._facts_reading:
                return  # the worker takes these when it is done with the last
            self._facts_reading = True
        cast(Screen, self).run_worker(self._read_facts, thread=True, group="run-facts", exit_on_error=False)

    def _read_facts(self) -> None:
        """On the worker: read what is wanted, again while more is asked for; a changed fact redraws."""
        worker = get_current_worker()
        done = False
        try:
            while True:
                with self._facts_lock:
                    files, self._facts_wanted = self._facts_wanted, None
                    if files is None or worker.is_cancelled:
                        self._facts_reading, done = False, True
                        return
                if self._facts.poll(files, stop=lambda: worker.is_cancelled):
                    cast(Screen, self).post_message(RunFactsRead())
                if self._facts.unfinished:
                    with self._facts_lock:
                        self._facts_wanted = self._facts_wanted or files  # read on: a large file is read in parts
        except Exception as error:  # noqa: BLE001 - the reading stops, but never without saying so on screen
            screen = cast(Screen, self)
            screen.app.call_from_thread(
                screen.notify, f"Reading the runs' config and summary failed: {type(error).__name__}: {error}",
                severity="error", timeout=8, markup=False,
            )
        finally:
            if not done:  # it raised: the next want starts a worker again
                with self._facts_lock:
                    self._facts_reading = False

    def on_run_facts_read(self, _event: RunFactsRead) -> None:
        self.update_view()

    # -- pins and selection ------------------------------------------------------------------------
    def keep_pins_selected(self, entries: Sequence[RunEntry]) -> None:
        """Select every pinned run that can be read and is not selected (pins remembered from before, a run back)."""
        selected = set(self.source.selected())
        for entry in entries:
            if entry.key in self.pins and entry.key not in selected and not entry.error:
                self.source.select(entry.key)

    def action_pin_run(self) -> None:
        """Pin the run under the cursor (selecting it), or unpin it (it stays selected until deselected)."""
        screen = cast(Screen, self)
        key = screen.query_one(RunList).cursor_key
        if key is None:
            screen.notify("Put the cursor on a run first", timeout=2)
            return
        if key in self.pins:
            self.pins.remove(key)
        else:
            entry = next((e for e in self.source.entries() if e.key == key), None)
            if entry is None or entry.error or self.source.select(key) is None:
                screen.notify("This run cannot be read: nothing to pin", severity="warning", timeout=3)
                return
            self.pins.append(key)
        self.update_view(force=True)

    def keeps_pinned(self, key: str) -> bool:
        """``space`` on ``key``: True (and a word why) when it is pinned and stays selected."""
        if key not in self.pins:
            return False
        cast(Screen, self).notify("Pinned runs stay selected: P unpins", timeout=2)
        return True

    def action_select_matching(self) -> None:
        chosen = [entry.key for entry in self.listed_entries() if not entry.error]
        for key in chosen:
            self.source.select(key)
        cast(Screen, self).notify(f"Selected the {len(chosen)} run{'' if len(chosen) == 1 else 's'} listed", timeout=2, markup=False)
        self.update_view(force=True)

    def action_deselect_unpinned(self) -> None:
        for key in self.source.selected():
            if key not in self.pins:
                self.source.deselect(key)
        self.update_view(force=True)

    # -- remembered ----------------------------------------------------------------------------------
    def remembered_pins(self) -> dict[str, Any]:
        folder = str(self.source.root)
        pins = {name: keys for name, keys in self._other_pins.items() if name != folder}
        if self.pins and len(folder) <= MAX_TEXT:
            pins[folder] = self.pins[-MAX_PINS:]
        return {"pins": dict(list(pins.items())[-MAX_FOLDERS:])} if pins else {}

    def restore_pins(self, saved: Mapping[str, Any]) -> None:
        """This folder's pins from the remembered layout; the runs are selected as they are listed."""
        self._other_pins = valid_pins(saved.get("pins"))
        self.pins = list(self._other_pins.get(str(self.source.root), []))
