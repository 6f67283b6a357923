"""Loading a long run in two processes: a child decodes the later part of the file.

Decoding records is nearly all the time a long run takes to load, and it
runs on one core. For a big file the run source (the loader) reads the
records before ``split`` itself, so charts appear at once, while a child
process on another core decodes the records from ``split`` to ``until``
(the file's size when loading began) with the same code. The child sends
what it decoded, a batch at a time, as frames: the history as store columns
(with the counts the run model keeps), everything else as the decoded
events, in file order. The loader takes each batch after its own part, in
order, then goes on reading from where the child stopped, exactly as if it
had read everything itself.

    python -m leet.sources.parallel RUN_FILE SPLIT UNTIL      # frames on stdout (see ``Frame``)

``split`` is a block boundary: the framing finds the first record that starts
at or after it from there, as the loader's framing does, and the child's part
is used only if both agree on that record. A child that fails, sends garbage
or stalls is dropped; the loader then reads on from the end of the last
batch it took, so nothing is lost. The child's frames wait in an unnamed
temporary file (not in memory) until the loader takes them. The child exits
when its parent does: it watches its stdin, which only the parent holds open.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

from leet.runfile import events as event_types
from leet.runfile import reader as framing
from leet.runfile.decode import Decoded, EventStream, RawJSON
from leet.runfile.events import HistoryRow
from leet.runfile.history_columns import HistoryColumns
from leet.runfile.reader import BLOCK_SIZE, HEADER_SIZE, Chunked, RecordReader

SPLIT_LOAD_BYTES = 16 << 20  # below this, a second process costs more than it saves
LOADER_SHARE = 0.35  # of the part left, read by the loader itself: it also stores everything and draws the screen
# The child reads in small batches and windows: its memory counts with the app's.
_BATCH = 1000  # records per frame
_WINDOW_BYTES = 16 * BLOCK_SIZE
# One child per spare core: more would only take turns with the loaders.
_SLOTS = threading.BoundedSemaphore(max(1, (os.cpu_count() or 2) - 1))

Columns = dict[str, tuple[Any, Any]]  # key -> (steps, values), as ``Store.extend_many`` takes them


def split_point(size: int, start: int = 0) -> int:
    """The block boundary where the child's part of the bytes from ``start`` to ``size`` begins:
    the loader keeps ``LOADER_SHARE`` of them (at least up to the next block)."""
    at = start + int((size - start) * LOADER_SHARE)
    return max(start // BLOCK_SIZE + 1, at // BLOCK_SIZE) * BLOCK_SIZE


# ---------------------------------------------------------------- frames


@dataclass
class Frame:
    """What one batch of the child's records adds to the run.

    On the wire: a kind byte (``B``, or ``E`` for the end, which has no body),
    the body's length, and the body: a JSON line (the fields below but
    ``columns`` and ``events``, with the columns' names and lengths and the
    events' size), then each column's steps and values as native doubles, then
    the events, pickled.
    """

    first: int | None  # where the batch's first record starts (None: it has none)
    resume_at: int  # where the next record starts: reading goes on from here
    last_num: int  # the Record.num last read
    rows: int = 0  # history rows in ``columns``
    last_step: int | None = None
    keys: list[str] = field(default_factory=list)  # history keys in ``columns``
    media: dict[str, str] = field(default_factory=dict)  # media in the batch's history rows: key → W&B type
    folded: int = 0  # summary records merged into others' events
    lost_bytes: int = 0  # damage found in the batch
    lost_records: int = 0
    columns: Columns = field(default_factory=dict)
    events: list[Decoded] = field(default_factory=list)  # everything but history rows, in file order


_HEAD = struct.Struct("<cQ")
_BATCH_FRAME, _END_FRAME = b"B", b"E"
_FIELDS = ("first", "resume_at", "last_num", "rows", "last_step", "keys", "media", "folded", "lost_bytes", "lost_records")


def encode_frame(frame: Frame) -> bytes:
    pickled = pickle.dumps(frame.events, protocol=pickle.HIGHEST_PROTOCOL)
    head = {name: getattr(frame, name) for name in _FIELDS}
    head["columns"] = [[key, len(steps)] for key, (steps, _) in frame.columns.items()]
    head["events"] = len(pickled)
    parts = [json.dumps(head).encode(), b"\n"]
    for steps, values in frame.columns.values():
        parts += [array("d", steps).tobytes(), array("d", values).tobytes()]
    parts.append(pickled)
    body = b"".join(parts)
    return _HEAD.pack(_BATCH_FRAME, len(body)) + body


def decode_frame(body: bytes) -> Frame:
    """A batch frame's body back as a ``Frame``; ValueError if it is not one."""
    try:
        return _decode_frame(body)
    except ValueError:
        raise
    except Exception as error:  # whatever a garbled body provokes in json, struct or pickle
        raise ValueError(f"{type(error).__name__}: {error}") from None


def _decode_frame(body: bytes) -> Frame:
    line, _, data = body.partition(b"\n")
    head = json.loads(line)
    sizes = [int(count) for _, count in head["columns"]]
    pickled_size = int(head["events"])
    if 16 * sum(sizes) + pickled_size != len(data) or min(sizes, default=0) < 0:
        raise ValueError("a frame whose sizes do not add up")
    frame = Frame(**{name: head[name] for name in _FIELDS})
    frame.media = {str(key): str(kind) for key, kind in dict(frame.media).items()}
    at = 0
    for (key, _), count in zip(head["columns"], sizes):
        steps, values = array("d"), array("d")
        steps.frombytes(data[at : at + 8 * count])
        values.frombytes(data[at + 8 * count : at + 16 * count])
        at += 16 * count
        frame.columns[str(key)] = (steps, values)
    frame.events = _EventUnpickler(io.BytesIO(data[at:])).load()
    if not isinstance(frame.events, list) or not all(isinstance(item, Decoded) for item in frame.events):
        raise ValueError("a frame whose events are not events")
    return frame


_FRAME_CLASSES = {(kind.__module__, kind.__name__): kind for kind in (Decoded, RawJSON)}


class _EventUnpickler(pickle.Unpickler):
    """Only what a frame holds: events, ``Decoded``, ``RawJSON`` and plain containers."""

    def find_class(self, module: str, name: str) -> Any:
        if module == event_types.__name__ and isinstance(getattr(event_types, name, None), type):
            return getattr(event_types, name)
        known = _FRAME_CLASSES.get((module, name))
        if known is not None:
            return known
        raise pickle.UnpicklingError(f"a frame may not hold {module}.{name}")


# ---------------------------------------------------------------- the child's side


def read_part(path: str | os.PathLike[str], split: int, until: int, send: Callable[[Frame], None], batch_records: int = _BATCH) -> None:
    """Decode the records of ``path`` that start in ``[split, until)`` and ``send`` them a batch at a time.

    ``split`` is a block boundary; the chunks before the first record that starts
    there are the tail of a record the loader reads, and not a loss.
    """
    stream = EventStream(fold_summary=True)
    stream.stop_at = until
    seen_a_record = False
    with RecordReader(path, split) as reader:
        while True:
            batch = reader.poll(batch_records)
            if not seen_a_record:
                # Damage before the first record that starts here is the loader's to report.
                first = batch.records[0][0] if batch.records else None
                losses = [region for region in batch.lost_regions if first is not None and region.start >= first]
                damaged = batch.lost_damaged if losses else 0
                batch = Chunked(batch.records, batch.resume_at, losses, batch.torn, batch.at_eof, damaged)
                seen_a_record = first is not None
            before = (stream.folded, stream.lost_bytes, stream.lost_records)
            frame = _frame_of(stream.feed(batch), stream)
            frame.first = batch.records[0][0] if batch.records else None
            frame.resume_at = stream.stopped_at if stream.stopped_at is not None else reader.offset
            frame.folded = stream.folded - before[0]
            frame.lost_bytes = stream.lost_bytes - before[1]
            frame.lost_records = stream.lost_records - before[2]
            send(frame)
            if stream.stopped_at is not None or batch.at_eof:
                return


def _frame_of(items: list[Decoded], stream: EventStream) -> Frame:
    frame = Frame(first=None, resume_at=0, last_num=stream.last_num)
    columns = HistoryColumns()
    keys: set[str] = set()
    for item in items:
        event = item.event
        if type(event) is HistoryRow:
            columns.add(float(event.step), event.values)
            keys.update(event.values)
            if event.media:
                frame.media.update(event.media)
            frame.rows += 1
            frame.last_step = event.step if frame.last_step is None else max(frame.last_step, event.step)
        else:
            frame.events.append(item)
    frame.columns = columns.finish()
    frame.keys = sorted(keys)
    return frame


def _exit_with_parent() -> None:
    """Leave as soon as stdin closes: the parent holds it open until it dies or gives up on us."""

    def watch() -> None:
        try:
            while os.read(0, 4096):  # not sys.stdin: its lock would be held at interpreter exit
                pass
        finally:
            os._exit(3)

    try:
        piped = stat.S_ISFIFO(os.fstat(0).st_mode)
    except OSError:
        piped = False
    if not piped:  # run by hand: no parent to watch
        return
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    numbers = [int(arg) if arg.isdigit() else -1 for arg in args[1:]]
    if len(args) not in (3, 4) or numbers[0] < HEADER_SIZE or min(numbers) < 1:
        print("usage: python -m leet.sources.parallel RUN_FILE SPLIT_OFFSET UNTIL_OFFSET [RECORDS_PER_BATCH]", file=sys.stderr)
        return 2
    _exit_with_parent()
    framing.WINDOW_BYTES = _WINDOW_BYTES  # this process reads nothing else
    out = sys.stdout.buffer

    def send(frame: Frame) -> None:
        out.write(encode_frame(frame))
        out.flush()  # whole, now: the parent takes batches as they come

    try:
        read_part(args[0], numbers[0], numbers[1], send, *numbers[2:])
    except Exception as error:  # the parent reads on itself from the last whole batch
        out.flush()
        print(f"{args[0]}: {error}", file=sys.stderr)
        return 1
    out.write(_HEAD.pack(_END_FRAME, 0))
    out.flush()
    return 0


# ---------------------------------------------------------------- the parent's side


class ChildLoad:
    """A child process decoding the records of ``path`` in ``[split, until)``; ``next_frame()`` as they come.

    The child writes its frames straight into an unnamed temporary file, never
    waiting on this process; frames are read back from it by position, once whole.
    ``start()`` gives None when no child can be had (one per spare core, no
    interpreter to start, or a system without positioned reads); the caller then
    reads everything itself.
    """

    def __init__(self, path: Path, split: int, until: int, process: subprocess.Popen[bytes], spool: IO[bytes], errors: IO[bytes]) -> None:
        self.path = path
        self.split = split
        self.until = until
        self.error = ""
        self.finished = False  # the child's end frame was read
        self._process = process
        self._spool = spool
        self._errors = errors
        self._lock = threading.Lock()
        self._done = threading.Event()  # the child has exited
        self._read_at = 0  # where the next frame starts in the spool
        self._taken = 0
        self._exhausted = False
        threading.Thread(target=self._reap, name="leet-split-load", daemon=True).start()

    @classmethod
    def start(cls, path: str | os.PathLike[str], split: int, until: int) -> ChildLoad | None:
        if not hasattr(os, "pread") or not _SLOTS.acquire(blocking=False):
            return None
        files: list[IO[bytes]] = []
        try:
            spool = tempfile.TemporaryFile(prefix="leet-split-")
            files.append(spool)
            errors = tempfile.TemporaryFile(prefix="leet-split-")
            files.append(errors)
            process = subprocess.Popen(
                child_command(path, split, until), stdin=subprocess.PIPE, stdout=spool, stderr=errors, env=_child_env()
            )
        except (OSError, ValueError):  # no room for the spool, no interpreter: the loader reads alone
            for file in files:
                file.close()
            _SLOTS.release()
            return None
        return cls(Path(path), split, until, process, spool, errors)

    def _reap(self) -> None:
        try:
            self._process.wait()
        finally:
            if self._process.stdin is not None:
                self._process.stdin.close()  # not before: a closed stdin tells the child to leave
            _SLOTS.release()
            self._done.set()

    def next_frame(self, timeout: float) -> Frame | None:
        """The next batch, waiting up to ``timeout`` for it; None if none came (see ``exhausted``).

        Raises ValueError for a frame that does not decode.
        """
        deadline = time.monotonic() + timeout
        while True:
            done = self._done.is_set()  # before reading: what a finished child wrote is all there
            frame = self._read_frame()
            if frame is not None:
                return frame
            if self.finished or done:
                self._exhausted = True
                if not self.finished and not self.error:
                    self.error = self._said() or f"exit status {self._process.returncode}"
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._done.wait(min(left, 0.01))

    def _read_frame(self) -> Frame | None:
        with self._lock:
            if self._spool.closed:
                return None
            fd = self._spool.fileno()
            head = os.pread(fd, _HEAD.size, self._read_at)
            if len(head) < _HEAD.size:
                return None
            kind, size = _HEAD.unpack(head)
            if kind == _END_FRAME:
                self.finished = True
                return None
            if kind != _BATCH_FRAME:
                raise ValueError(f"unexpected frame {kind!r}")
            body = os.pread(fd, size, self._read_at + _HEAD.size)
            if len(body) < size:
                return None  # still being written
            self._read_at += _HEAD.size + size
            self._taken += 1
        return decode_frame(body)

    def _said(self) -> str:
        try:
            said = os.pread(self._errors.fileno(), 1 << 16, 0).decode("utf-8", "replace").strip().splitlines()
        except (OSError, ValueError):
            return ""
        return said[-1] if said else ""

    @property
    def taken(self) -> int:
        """Batches handed out so far."""
        with self._lock:
            return self._taken

    @property
    def exhausted(self) -> bool:
        """``next_frame`` found nothing more: the child sent its end, or ended without it."""
        return self._exhausted

    @property
    def pid(self) -> int:
        return self._process.pid

    def stop(self) -> None:
        """End the child now if it still runs, reap it, and drop what it wrote."""
        if self._process.poll() is None:
            self._process.kill()
        self._done.wait(5.0)
        with self._lock:
            self._spool.close()
            self._errors.close()


def child_command(path: str | os.PathLike[str], split: int, until: int) -> list[str]:
    return [sys.executable, "-m", "leet.sources.parallel", os.fspath(path), str(split), str(until)]


def _child_env() -> dict[str, str]:
    """This environment, with the directory that holds the ``leet`` package first on the path."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(part for part in (root, env.get("PYTHONPATH", "")) if part)
    return env


if __name__ == "__main__":
    sys.exit(main())
