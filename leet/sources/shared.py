"""A shared-mode run: every writer's file of one run id, tailed at once and merged.

In W&B shared mode each process (node, rank) writes its own run directory
with the same run id; the file inside is named ``run-<id>.wandb`` in every one
of them. Which directories are writers of one run is decided in
``layout.py``. History, system metrics and console output come from every
writer, tagged with its node label (the ``/l:LABEL`` suffix its system keys
carry); the summary is every writer's, the primary's (the one that wrote an
environment record) winning where two set one key.
"""

from __future__ import annotations

import heapq
import os
import threading
import time
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from leet.discovery.layout import RunLayout, read_head, resolve
from leet.model.energy import merged_nodes
from leet.model.keys import KeyLabel, natural_key
from leet.model.run import ALERTS_KEPT, CRASH_AFTER, AlertRecord, ConsoleLine, RunSnapshot, RunState, WriterStatus
from leet.model.store import Store
from leet.runfile.folders import is_workspace, sibling_files
from leet.runfile.locate import RunNotFound, find_run_file
from leet.sources.run import RunSource
from leet.sources.tailer import Tailer

RESCAN_SECONDS = 2.0  # how often to look for writers that started after we opened the run


def writer_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files to open for ``path``: all writers of its run, primary first (one file for an ordinary run)."""
    return list(_run_layout(path).files)


def _run_layout(path: str | os.PathLike[str]) -> RunLayout:
    layout = resolve(path)
    if layout.kind == "workspace":
        if not is_workspace(path):
            find_run_file(path)  # a folder with no runs yet: this says what it lacks
        raise RunNotFound(f"{path} is a folder of runs, not one run")
    return layout


def open_run(path_or_files: str | os.PathLike[str] | Sequence[Path], store: Store, **options) -> "RunSource | SharedRunSource":
    """A ``RunSource`` for an ordinary run, a ``SharedRunSource`` when the run has several writers.

    Given a path, the run is what ``layout.resolve`` says it is: the file
    named, with its segments, or every writer of its shared run.
    """
    if isinstance(path_or_files, (str, os.PathLike)):
        return open_layout(_run_layout(path_or_files), store, **options)
    files = list(path_or_files)
    if len(files) == 1:
        return RunSource(files[0], store, **options)
    return SharedRunSource(files, store, **options)


def open_layout(layout: RunLayout, store: Store, **options) -> "RunSource | SharedRunSource":
    """The source for a run ``layout.resolve`` described (not a workspace)."""
    if layout.kind == "workspace":
        raise RunNotFound(f"{layout.path} is a folder of runs, not one run")
    if layout.kind == "shared":
        return SharedRunSource(layout.files, store, opened=layout.file, labels=[head.label for head in layout.writers], **options)
    source = RunSource(layout.files[0], store, **options)
    source.segments = layout.segments
    return source


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


def _merged_caps(snaps: Sequence[RunSnapshot], metrics_shown: int) -> dict[str, tuple[int, int, bool]]:
    """Each writer caps its own keys: the run leaves out what any writer left out."""
    merged: dict[str, tuple[int, int, bool]] = {}
    for snap in snaps:
        for name, (kept, left_out, exact) in snap.capped.items():
            was = merged.get(name, (0, 0, True))
            merged[name] = (was[0] + kept, was[1] + left_out, was[2] and exact)
    if "metrics" in merged:  # the metrics shown are every writer's, capped or not
        merged["metrics"] = (metrics_shown, *merged["metrics"][1:])
    return merged


class SharedRunSource(Tailer):
    """All writers of one run into one store; the same surface as ``RunSource``.

    ``files`` lists the writers' run files, the primary's first (see
    ``layout.resolve``). One worker thread reads every writer in turn. History
    lands under ``run_key``: the primary's as it is, each other writer's under
    its node label (``loss`` of ``rank1``), so a key logged by several writers keeps
    a series per writer, merged by step as W&B merges them. Every writer's
    system metrics land under ``system_key``.
    """

    thread_name = "leet-shared-run"

    def __init__(
        self,
        files: Sequence[str | os.PathLike[str]],
        store: Store,
        *,
        key: str | None = None,
        opened: str | os.PathLike[str] | None = None,
        labels: Sequence[str | None] = (),
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
        self.opened = Path(opened) if opened is not None else primary  # the writer the user named
        self._key = key or _run_id_of(primary)
        self._lock = threading.Lock()
        self.writers: list[RunSource] = []
        for index, file in enumerate(files):
            self._add_writer(Path(file), labels[index] if index < len(labels) else None)
        self._scanned_at = monotonic()

    def _add_writer(self, file: Path, label: str | None = None) -> None:
        index = len(self.writers)
        default = None if index == 0 else f"writer{index}"
        writer = RunSource(
            file,
            self.store,
            key=self._key,
            poll_interval=self.poll_interval,
            crash_after=self.crash_after,
            monotonic=self._monotonic,
            wall=self._wall,
            default_label=default,
            history_label=None if index == 0 else (label or default),
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
        new = [read_head(file) for file in sibling_files(self.path) if file not in known]
        added = False
        for head in new:
            if head.shared:
                self._add_writer(head.file, head.label)
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
            WriterStatus(
                label=label or "", state=snap.state, primary=i == 0, file=writer.path, exit_code=snap.exit_code,
                records=snap.records, last_step=snap.last_step, opened=writer.path == self.opened,
            )
            for i, (writer, snap, label) in enumerate(zip(writers, snaps, labels))
        )
        summary: dict = {}
        for snap in snaps[1:]:
            summary.update(snap.summary)
        summary.update(primary.summary)  # the primary's word wins where two writers set one key
        steps = [snap.last_step for snap in snaps if snap.last_step is not None]
        history_keys = _history_keys(snaps, [writer.history_label for writer in writers])
        alerts, dropped = merge_alerts(snaps, labels)
        return replace(
            primary,
            axes={key: axis for snap in reversed(snaps) for key, axis in snap.axes.items()},
            hidden=frozenset().union(*(snap.hidden for snap in snaps)),
            goals={name: goal for snap in reversed(snaps) for name, goal in snap.goals.items()},
            state=RunState.LOADING if loading else primary.state,
            summary=summary,
            history_keys=history_keys,
            last_step=max(steps) if steps else None,
            console=merge_console([snap.console for snap in snaps], console_lines, labels),
            records=sum(snap.records for snap in snaps),
            bytes_read=sum(snap.bytes_read for snap in snaps),
            file_size=sum(snap.file_size for snap in snaps),
            lost_bytes=sum(snap.lost_bytes for snap in snaps),
            lost_records=sum(snap.lost_records for snap in snaps),
            lost_uncounted=sum(snap.lost_uncounted for snap in snaps),
            capped=_merged_caps(snaps, len(history_keys)),
            alerts=alerts,
            alerts_dropped=dropped,
            error="; ".join(([self.error] if self.error else []) + [f"{label or 'primary'}: {snap.error}" for snap, label in zip(snaps, labels) if snap.error]),
            stopped=self.stopped or any(snap.stopped for snap in snaps),
            labels=tuple(sorted({label for label in labels if label}, key=natural_key)),
            writers=statuses,
            energy=merged_nodes(zip((snap.energy for snap in snaps), labels)),
        )

    def close(self) -> None:
        self.stop()
        for writer in self._writers():
            writer.close()


def merge_alerts(snaps: Sequence[RunSnapshot], labels: Sequence[str | None]) -> tuple[tuple[AlertRecord, ...], int]:
    """Every writer's alert records, each with its writer's label, in time order; the newest ``ALERTS_KEPT``, and how many more."""
    dropped = sum(snap.alerts_dropped for snap in snaps)
    if not any(snap.alerts for snap in snaps):
        return (), dropped
    merged = [
        replace(alert, label=label) if label and not alert.label else alert
        for snap, label in zip(snaps, labels)
        for alert in snap.alerts
    ]
    merged.sort(key=lambda alert: alert.time if alert.time is not None else float("-inf"))  # stable: each writer keeps its order
    extra = max(0, len(merged) - ALERTS_KEPT)
    return tuple(merged[extra:]), dropped + extra


def _history_keys(snaps: Sequence[RunSnapshot], labels: Sequence[str | None]) -> tuple[KeyLabel, ...]:
    """Every writer's history series, as the store holds them: the primary's unlabelled, each other's under its label."""
    series = set(snaps[0].history_keys)
    for snap, label in zip(snaps[1:], labels[1:]):
        series.update((key, label) for key, _ in snap.history_keys)
    return tuple(sorted(series, key=lambda name: (name[0], name[1] or "")))


def _run_id_of(file: Path) -> str:
    name = file.name
    return name[len("run-"):-len(".wandb")] if name.startswith("run-") and name.endswith(".wandb") else file.stem
