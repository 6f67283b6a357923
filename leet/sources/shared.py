"""A shared-mode run: every writer's file of one run id, tailed at once and merged.

In W&B shared mode each process (node, rank) writes its own run directory
with the same run id; the file inside is named ``run-<id>.wandb`` in every one
of them. History and summary come from the primary writer (the one that
wrote an environment record); system metrics and console output come from
every writer, tagged with its node label (the ``/l:LABEL`` suffix its system
keys carry).
"""

from __future__ import annotations

import heapq
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

from leet.model.keys import label_of_keys, natural_key
from leet.model.run import CRASH_AFTER, ConsoleLine, RunSnapshot, RunState, WriterStatus
from leet.model.store import Store
from leet.runfile.bulk import peek
from leet.runfile.events import Environment, RunInfo, StatsRow
from leet.runfile.locate import find_run_file
from leet.runfile.reader import RunFileError, read_records
from leet.runfile.records import decode
from leet.sources.run import RunSource
from leet.sources.tailer import Tailer

HEAD_BYTES = 16 * 1024  # the run and environment records come first: a few KiB in
RESCAN_SECONDS = 2.0
_NOT_IN_HEAD = frozenset({"history", "summary"})  # the bulk of a head, and nothing it is read for  # how often to look for writers that started after we opened the run


@dataclass(frozen=True)
class WriterHead:
    """What the first records of one writer's file say."""

    file: Path
    info: RunInfo | None = None
    primary: bool = False  # it wrote an environment record: only the primary does
    label: str | None = None  # from its first labelled system key, if the head holds one

    @property
    def start_time(self) -> float:
        return self.info.start_time if self.info is not None and self.info.start_time else float("inf")


def read_head(file: Path, max_bytes: int = HEAD_BYTES) -> WriterHead:
    """Identity, primary-ness and label from the head of ``file`` (damage there costs only what it hides)."""
    try:
        records = read_records(file, 0, max_bytes).records
    except (OSError, RunFileError):
        return WriterHead(file)
    return head_of(file, records)


def head_of(file: Path, records: Iterable[tuple[int, bytes]]) -> WriterHead:
    """What these first records of ``file`` say; history and summary records are passed over unparsed."""
    info = None
    primary = False
    label = None
    for _offset, payload in records:
        peeked = peek(payload)
        if peeked is not None and peeked[1] in _NOT_IN_HEAD:
            continue
        event = decode(payload)
        if isinstance(event, RunInfo) and info is None:
            info = event
        elif isinstance(event, Environment):
            primary = True
        elif isinstance(event, StatsRow) and label is None:
            label = label_of_keys(event.values)
        if info is not None and primary and label is not None:
            break
    return WriterHead(file, info, primary, label)


def sibling_files(file: Path) -> list[Path]:
    """Every writer's file of the run that ``file`` belongs to: same file name, sibling run directories."""
    run_dir = file.parent
    root = run_dir.parent
    found = {file}
    try:
        children = list(os.scandir(root))
    except OSError:
        return [file]
    for child in children:
        if child.name == "latest-run" or child.path == str(run_dir) or not child.is_dir(follow_symlinks=False):
            continue
        candidate = Path(child.path) / file.name
        if candidate.is_file():
            found.add(candidate)
    return sorted(found)


def order_writers(heads: Sequence[WriterHead]) -> list[WriterHead]:
    """The primary first, then by start time and directory; resumed segments of the run are left out."""
    writers = [head for head in heads if head.info is None or not head.info.resumed] or list(heads)
    by_start = sorted(writers, key=lambda head: (head.start_time, str(head.file)))
    primary = next((head for head in by_start if head.primary), by_start[0])
    return [primary] + [head for head in by_start if head is not primary]


def writer_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files to open for ``path``: all writers of its run, primary first (one file for an ordinary run).

    ``wandb/latest-run`` (the link W&B makes, the path people type most) is
    its target: the run directory it names is not a second writer.
    """
    file = find_run_file(path).resolve()
    siblings = sibling_files(file)
    if len(siblings) == 1:
        return siblings
    return [head.file for head in order_writers([read_head(f) for f in siblings])]


def open_run(path_or_files: str | os.PathLike[str] | Sequence[Path], store: Store, **options) -> "RunSource | SharedRunSource":
    """A ``RunSource`` for an ordinary run, a ``SharedRunSource`` when the run has several writers."""
    files = writer_files(path_or_files) if isinstance(path_or_files, (str, os.PathLike)) else list(path_or_files)
    if len(files) == 1:
        return RunSource(files[0], store, **options)
    return SharedRunSource(files, store, **options)


def merge_console(parts: Sequence[Sequence[ConsoleLine]], count: int, labels: Sequence[str | None] = ()) -> tuple[ConsoleLine, ...]:
    """Writers' console lines in time order (each part is already), the newest ``count``;
    with ``labels``, each kept line is tagged with its writer's (only those: this runs per redraw)."""
    if count <= 0:
        return ()
    newest = deque(heapq.merge(*(_tagged(index, part) for index, part in enumerate(parts))), maxlen=count)
    return tuple(
        replace(line, label=labels[index]) if index < len(labels) and labels[index] and line.label is None else line
        for _time, index, line in newest
    )


def _tagged(index: int, part: Sequence[ConsoleLine]):
    return (((line.time if line.time is not None else 0.0), index, line) for line in part)


class SharedRunSource(Tailer):
    """All writers of one run into one store; the same surface as ``RunSource``.

    ``files`` lists the writers' run files, the primary's first (see
    ``writer_files``). One worker thread reads every writer in turn; history
    lands under ``run_key``, every writer's system metrics under ``system_key``.
    """

    thread_name = "leet-shared-run"

    def __init__(
        self,
        files: Sequence[str | os.PathLike[str]],
        store: Store,
        *,
        key: str | None = None,
        poll_interval: float = 0.1,
        crash_after: float = CRASH_AFTER,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        rescan: float = RESCAN_SECONDS,
    ) -> None:
        if not files:
            raise ValueError("a shared run needs at least one writer file")
        super().__init__()
        self.store = store
        self.poll_interval = poll_interval
        self.crash_after = crash_after
        self.rescan = rescan
        self._monotonic = monotonic
        self._wall = wall
        primary = find_run_file(files[0])
        self.path = primary
        self._key = key or _run_id_of(primary)
        self._lock = threading.Lock()
        self.writers: list[RunSource] = []
        for file in files:
            self._add_writer(Path(file))
        self._scanned_at = monotonic()

    def _add_writer(self, file: Path) -> None:
        index = len(self.writers)
        writer = RunSource(
            file,
            self.store,
            key=self._key,
            poll_interval=self.poll_interval,
            crash_after=self.crash_after,
            monotonic=self._monotonic,
            wall=self._wall,
            history=index == 0,
            default_label=None if index == 0 else f"writer{index}",
        )
        with self._lock:
            self.writers.append(writer)

    # -- identity -------------------------------------------------------------
    @property
    def run_key(self) -> str:
        return self._key

    @property
    def system_key(self) -> str:
        return self.writers[0].system_key

    @property
    def model(self):
        return self.writers[0].model

    def labels(self) -> tuple[str, ...]:
        return tuple(label for label in (self._label(i, w) for i, w in enumerate(self._writers())) if label)

    def _writers(self) -> list[RunSource]:
        with self._lock:
            return list(self.writers)

    @staticmethod
    def _label(index: int, writer: RunSource) -> str | None:
        return writer.label or (None if index == 0 else writer.default_label)

    # -- reading ---------------------------------------------------------------
    def step(self) -> bool:
        """One batch from every writer; True if anything changed."""
        changed = False
        for writer in self._writers():
            if writer.error:
                continue
            try:
                changed = writer.step() or changed
            except Exception as error:  # noqa: BLE001 - a writer that breaks costs that writer, not the run
                writer.fail(error)
                changed = True
        if self.rescan and self._monotonic() - self._scanned_at >= self.rescan:
            self._scanned_at = self._monotonic()
            changed = self.find_new_writers() or changed
        return changed

    def find_new_writers(self) -> bool:
        """Writers that started after the run was opened (a node joining late)."""
        known = {writer.path for writer in self._writers()}
        new = [file for file in sibling_files(self.path) if file not in known]
        heads = [read_head(file) for file in new]
        added = False
        for head in heads:
            if head.info is not None and head.info.resumed:
                continue
            self._add_writer(head.file)
            added = True
        return added

    def loaded(self) -> bool:
        return all(writer.model.loaded or writer.error for writer in self._writers())  # a stopped writer loads no more

    def finished(self) -> bool:
        return self.loaded() and all(writer.model.exit is not None or writer.error for writer in self._writers())

    def stop(self, timeout: float = 1.0) -> None:
        for writer in self._writers():
            writer.stop(0)  # only its split-load child: its reading happens on our thread
        super().stop(timeout)

    # -- reading the model ---------------------------------------------------
    def snapshot(self, console_lines: int = 2000) -> RunSnapshot:
        writers = self._writers()
        snaps = [writer.snapshot(console_lines) for writer in writers]
        labels = [self._label(i, writer) for i, writer in enumerate(writers)]
        primary = snaps[0]
        loading = any(snap.state is RunState.LOADING and not snap.stopped for snap in snaps)
        statuses = tuple(
            WriterStatus(label=label or "", state=snap.state, primary=i == 0, file=writer.path, exit_code=snap.exit_code, records=snap.records)
            for i, (writer, snap, label) in enumerate(zip(writers, snaps, labels))
        )
        return replace(
            primary,
            state=RunState.LOADING if loading else primary.state,
            console=merge_console([snap.console for snap in snaps], console_lines, labels),
            records=sum(snap.records for snap in snaps),
            bytes_read=sum(snap.bytes_read for snap in snaps),
            file_size=sum(snap.file_size for snap in snaps),
            lost_bytes=sum(snap.lost_bytes for snap in snaps),
            lost_records=sum(snap.lost_records for snap in snaps),
            error="; ".join(([self.error] if self.error else []) + [f"{label or 'primary'}: {snap.error}" for snap, label in zip(snaps, labels) if snap.error]),
            stopped=bool(self.error) or any(snap.stopped for snap in snaps),
            labels=tuple(sorted({label for label in labels if label}, key=natural_key)),
            writers=statuses,
        )

    def close(self) -> None:
        self.stop()
        for writer in self._writers():
            writer.close()


def _run_id_of(file: Path) -> str:
    name = file.name
    return name[len("run-"):-len(".wandb")] if name.startswith("run-") and name.endswith(".wandb") else file.stem
