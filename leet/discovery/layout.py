"""Which files make a run: a path goes in, a ``RunLayout`` comes out.

A path names a workspace (a folder of run directories), a run file, or a run
directory holding one. ``wandb/latest-run``, the link W&B makes, is resolved
to its target first: the directory it names is never a second run.

Sibling run directories whose files have the same name (``run-ID.wandb``)
hold one run id, and are one of two things:

* the **writers of one shared-mode run**, when the writers say so: their
  system keys carry a node label (``cpu/l:rank1``), or their telemetry says
  that ``x_label`` was set or shared mode was on (a writer that also asked
  to resume, as ranks started with one fixed id often do, is still a writer);
* otherwise **segments** of one id written one after another (a run resumed
  with ``resume="allow"``, or an id used again): the file named is the run,
  and the others are its earlier and later segments, by start time.

The decision is made here and nowhere else, and each file's head is read
once for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Sequence

from leet.model.keys import label_of_keys
from leet.runfile.decode import decode
from leet.runfile.decode.bulk import peek
from leet.runfile.events import Environment, OtherRecord, RunInfo, StatsRow
from leet.runfile.folders import awaits_runs, is_workspace, sibling_files, workspace_root
from leet.runfile.locate import check_listable, find_run_file
from leet.runfile.reader import RunFileError, read_records

HEAD_BYTES = 16 * 1024  # the run, telemetry and first stats records come first: a few KiB in
_NOT_IN_HEAD = frozenset({"history", "summary"})  # the bulk of a head, and nothing it is read for
_SHARED_FEATURES = ("user_provided_label", "shared_mode")


@dataclass(frozen=True)
class WriterHead:
    """What the first records of one run file say."""

    file: Path
    info: RunInfo | None = None
    primary: bool = False  # it wrote an environment record: a shared run's secondaries write none
    label: str | None = None  # from its first labelled system key, if the head holds one
    shared: bool = False  # it says it is one writer of a shared-mode run

    @property
    def start_time(self) -> float:
        return self.info.start_time if self.info is not None and self.info.start_time else float("inf")

    @property
    def resumed(self) -> bool:
        return self.info is not None and self.info.resumed


def read_head(file: Path, max_bytes: int = HEAD_BYTES) -> WriterHead:
    """Identity, primary-ness, label and shared mode from the head of ``file`` (damage there costs only what it hides)."""
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
    shared = False
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
        elif isinstance(event, OtherRecord) and event.kind == "telemetry" and not shared:
            features = event.fields.get("feature") or {}
            shared = any(features.get(name) for name in _SHARED_FEATURES)
        if info is not None and primary and label is not None:
            break
    return WriterHead(file, info, primary, label, shared or label is not None)


def order_writers(heads: Sequence[WriterHead]) -> list[WriterHead]:
    """A shared run's writers: the primary first, then by start time and directory."""
    by_start = order_segments(heads)
    primary = next((head for head in by_start if head.primary), by_start[0])
    return [primary] + [head for head in by_start if head is not primary]


def order_segments(heads: Sequence[WriterHead]) -> list[WriterHead]:
    """Files of one id, oldest first: by start time, then directory name."""
    return sorted(heads, key=lambda head: (head.start_time, str(head.file)))


def writers_of(named: WriterHead, heads: Sequence[WriterHead]) -> list[WriterHead]:
    """The writers of ``named``'s shared run among ``heads`` (files of its id), primary first."""
    return order_writers([named] + [head for head in heads if head.file != named.file and head.shared])


@dataclass(frozen=True)
class RunLayout:
    """What a path names, decided once."""

    kind: Literal["workspace", "run", "shared"]
    path: Path  # the path named, links resolved
    root: Path | None = None  # a workspace: the folder holding its run directories
    file: Path | None = None  # a run: the file named (for a shared run, the writer opened)
    writers: tuple[WriterHead, ...] = ()  # a run's writers, the primary first (one for an ordinary run)
    segments: tuple[WriterHead, ...] = ()  # every segment of an ordinary run's id, oldest first; () if just one

    @property
    def files(self) -> tuple[Path, ...]:
        """The files to read: every writer's, the primary's first."""
        return tuple(head.file for head in self.writers)

    @property
    def segment_index(self) -> int | None:
        """Where the named file stands among its id's segments (None when it is the only one)."""
        for index, head in enumerate(self.segments):
            if head.file == self.file:
                return index
        return None


def layout_of(file: Path, heads: Sequence[WriterHead]) -> RunLayout:
    """The run that ``file`` belongs to, given the heads of every file of its id (``file``'s among them)."""
    named = next((head for head in heads if head.file == file), None) or WriterHead(file)
    if named.shared:
        writers = writers_of(named, heads)
        return RunLayout("shared" if len(writers) > 1 else "run", file, file=file, writers=tuple(writers))
    segments = order_segments([head for head in heads if head.file == file or not head.shared])
    return RunLayout("run", file, file=file, writers=(named,), segments=tuple(segments) if len(segments) > 1 else ())


def resolve(path: str | os.PathLike[str]) -> RunLayout:
    """What ``path`` names: a workspace, an ordinary run (with its segments) or a shared run (with its writers).

    A folder with no runs yet is a workspace too (``awaits_runs``): it is
    watched until runs appear. Raises ``RunNotFound`` when ``path`` names no
    run file and no such folder, and an ``OSError`` naming the directory
    when it (or the folder of runs inside it) cannot be read.
    """
    check_listable(path)
    if is_workspace(path) or awaits_runs(path):
        root = workspace_root(path)
        check_listable(root)
        return RunLayout("workspace", Path(path).resolve(), root=root.resolve())
    file = find_run_file(path).resolve()
    return layout_of(file, [read_head(sibling) for sibling in sibling_files(file)])
