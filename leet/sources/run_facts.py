"""Each run's whole config and latest summary, for the run filter: ``FactsBook``.

The runs list knows a run from the head and tail of its file; a filter on
``cfg.…`` or ``summary.…`` needs the config updates and summary records
anywhere in it. A ``FactsBook`` reads them per file, every other record
kind skipped unparsed, from where its last read stopped: a file is read
again only when it grew (a live run's summary changes) or was replaced.
It reads on whichever thread calls ``poll`` (never a screen's), and hands
out finished ``RunFacts`` under a lock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from leet.alerts.tail import all_but
from leet.runfile.decode import EventReader, RawJSON, json_value
from leet.runfile.events import ConfigUpdate, RunInfo, SummaryUpdate
from leet.runfile.reader import RunFileError

FACT_KINDS = ("run", "config", "summary")
RECORDS_PER_POLL = 50_000  # one huge file never holds up the others for long: the next poll reads on
MAX_KEYS = 10_000  # config or summary keys kept per run: a width bomb stays bounded


@dataclass(frozen=True)
class RunFacts:
    """A run's config (nested as logged) and summary (latest value by key), as far as its file was read."""

    config: Mapping[str, Any] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)


def merge(target: dict[str, Any], update: Mapping[str, Any], remove: Iterable[str]) -> None:
    """``update`` and ``remove`` applied to ``target``; a removed key takes its dotted children along; keys past ``MAX_KEYS`` dropped."""
    for key, value in update.items():
        if key in target or len(target) < MAX_KEYS:
            target[key] = value
    for key in remove:
        target.pop(key, None)
        prefix = key + "."
        for nested in [name for name in target if name.startswith(prefix)]:
            del target[nested]


class FactsReader:
    """One run file's config and summary; ``poll()`` reads what it gained."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.offset = 0
        self.more = False  # the last poll stopped short of the end
        self.seen: tuple[int, int, int, float] | None = None  # (device, inode, size, mtime) when last read
        self.config: dict[str, Any] = {}
        self.summary: dict[str, Any] = {}  # values still JSON text until the facts are taken

    def poll(self) -> bool:
        """Read on; True when something was read (the facts may have changed)."""
        try:
            stat = self.file.stat()
        except OSError:
            return False
        seen = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime)
        if (self.seen is not None and seen[:2] != self.seen[:2]) or stat.st_size < self.offset:
            self.offset, self.config, self.summary = 0, {}, {}  # replaced or cut short: read it anew
        elif seen == self.seen and not self.more:
            return False
        self.seen = seen
        try:
            reader = EventReader(self.file, start=self.offset, skip=all_but(*FACT_KINDS), history_values=False, fold_summary=True)
            try:
                batch = reader.poll(RECORDS_PER_POLL)
                self.offset = reader.offset
            finally:
                reader.close()
        except (OSError, RunFileError, ValueError):
            return False
        self.more = not batch.at_eof
        for event in batch.events:
            if isinstance(event, RunInfo):
                merge(self.config, event.config, ())
            elif isinstance(event, ConfigUpdate):
                merge(self.config, event.update, event.remove)
            elif isinstance(event, SummaryUpdate):
                merge(self.summary, event.update, event.remove)
        return True

    def facts(self) -> RunFacts:
        summary = {key: json_value(value) if isinstance(value, RawJSON) else value for key, value in self.summary.items()}
        return RunFacts(dict(self.config), summary)


class FactsBook:
    """The facts of many run files: ``poll(files)`` on a worker thread, ``facts(file)`` anywhere."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._readers: dict[Path, FactsReader] = {}  # touched only by the polling thread
        self._facts: dict[Path, RunFacts] = {}

    def poll(self, files: Iterable[Path], stop: Callable[[], bool] = lambda: False) -> bool:
        """Read what each of ``files`` gained; forget files not among them. True when any run's facts changed.

        ``stop`` is asked between files: True ends the poll there (the screen went away).
        """
        wanted = list(dict.fromkeys(files))
        changed = False
        for file in wanted:
            if stop():
                return changed
            reader = self._readers.get(file)
            if reader is None:
                reader = self._readers[file] = FactsReader(file)
            if reader.poll():
                facts = reader.facts()
                with self._lock:
                    changed = changed or self._facts.get(file) != facts
                    self._facts[file] = facts
        gone = set(self._readers) - set(wanted)
        for file in gone:
            del self._readers[file]
        with self._lock:
            for file in gone:
                self._facts.pop(file, None)
        return changed

    @property
    def unfinished(self) -> bool:
        """A file's last poll stopped short of its end: poll again, whether or not it changes."""
        return any(reader.more for reader in self._readers.values())

    def facts(self, file: Path) -> RunFacts | None:
        """What ``file`` says, once it was read; None before."""
        with self._lock:
            return self._facts.get(file)
