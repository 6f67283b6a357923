"""A run's logged media, read when a media pane asks: the index of what each step logged, and its tables.

Nothing is read until the pane opens; then each ``refresh`` reads on from
where the last stopped, a bounded number of records at a time, so a long run
fills the index over a few calls and a growing one keeps it current. The
media panel calls ``refresh`` and ``read_table`` on a worker thread of its
own; the screen reads the index under ``lock``.
Image files are not read here: only the tiles on screen open theirs.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from leet.model.media import MediaIndex, MediaPathError, TableRef, resolve_media
from leet.runfile.files import read_regular
from leet.runfile.media_rows import MediaRows
from leet.runfile.reader import RunFileError

RECORDS_PER_REFRESH = 20_000
TABLE_BYTES = 8 << 20  # a logged table file past this is named, not read
TABLE_ROWS = 10_000  # rows of one table shown


class MediaLog:
    """One run file's media index, filled as ``refresh`` reads on."""

    def __init__(self, run_file: str | os.PathLike[str]) -> None:
        self.run_file = Path(run_file)
        self.run_dir = self.run_file.parent
        self.index = MediaIndex()
        self.lock = threading.Lock()  # the index and the fields below: written by the reading thread, read by the screen
        self.error = ""
        self._rows: MediaRows | None = None
        self.loaded = False
        self.rows_read = 0

    def refresh(self, max_records: int = RECORDS_PER_REFRESH) -> bool:
        """Read on; True when the index gained anything."""
        try:
            if self._rows is None:
                self._rows = MediaRows(self.run_file)
            rows = self._rows.read(max_records)
        except (RunFileError, OSError) as error:
            self.failed(str(error))
            return False
        with self.lock:
            self.error = ""
            self.loaded = self._rows.at_eof
            self.rows_read += len(rows)
            for step, media in rows:
                self.index.add_row(step, media)
        return bool(rows)

    def progress(self) -> tuple[str, bool, int]:
        """What a redraw would show differently when it changes: the error, whether all is read, the rows read."""
        with self.lock:
            return self.error, self.loaded, self.rows_read

    def failed(self, why: str) -> None:
        with self.lock:
            self.error = why

    def path(self, logged: str) -> Path:
        """A logged file's path inside the run (``MediaPathError`` when it leads out)."""
        return resolve_media(self.run_dir, logged)

    def close(self) -> None:
        if self._rows is not None:
            self._rows.close()


@dataclass(frozen=True)
class TableData:
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    total_rows: int
    error: str = ""


def read_table(log: MediaLog, ref: TableRef) -> TableData:
    """A logged ``wandb.Table`` from its JSON file (``columns``, ``data``); what went wrong in ``error``."""
    try:
        path = log.path(ref.path)
        raw = read_regular(path, TABLE_BYTES + 1)
    except MediaPathError as error:
        return TableData((), (), 0, f"{Path(ref.path).name}: {error}")
    except OSError as error:
        return TableData((), (), 0, f"{Path(ref.path).name}: {error.strerror or error}")
    if len(raw) > TABLE_BYTES:
        return TableData((), (), 0, f"{path.name}: over {TABLE_BYTES >> 20} MiB, not read")
    try:
        table = json.loads(raw)
    except (ValueError, RecursionError) as error:
        return TableData((), (), 0, f"{path.name}: not a table ({type(error).__name__})")
    columns = table.get("columns") if isinstance(table, dict) else None
    data = table.get("data") if isinstance(table, dict) else None
    if not isinstance(columns, list) or not isinstance(data, list):
        return TableData((), (), 0, f"{path.name}: not a table (no columns and data)")
    rows = tuple(tuple(row) if isinstance(row, list) else (row,) for row in data[:TABLE_ROWS])
    return TableData(tuple(str(column) for column in columns), rows, len(data))
