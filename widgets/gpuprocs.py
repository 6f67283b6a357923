"""The GPU process table: which process holds which GPU, with how much memory.

Rows are any objects with ``gpu``, ``pid``, ``user``, ``command``,
``used_memory`` (bytes, or None when hidden), ``sm_percent`` (or None),
``in_tree`` and ``mig`` attributes. What is unknown reads "N/A", never 0:
a hidden memory figure is not an idle process.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Sequence

from widgets.chartframe import Row, fit
from widgets.matching import compile_filter
from widgets.processes import ProcessTable, short_command
from widgets.text import clean
from widgets.units import format_value

GPU_SORTS = ("memory", "sm", "gpu")
UNKNOWN = "N/A"
WATCHED = "●"
USER_MIN_WIDTH = 40  # narrower than this, the USER column gives its room to the command
NOTE_LINES = 2  # a longer note is cut; the table matters more

_PROFILE = re.compile(r"\b\d+g\.\d+gb\b")


def _memory_key(row: Any) -> tuple:
    memory = row.used_memory
    return (memory is None, -(memory or 0))


def _sm_key(row: Any) -> tuple:
    sm = row.sm_percent
    return (sm is None, -(sm or 0.0))


def arrange_gpu_processes(rows: Sequence[Any], sort: str = "memory", pattern: str = "") -> list[Any]:
    """Filtered (command, user or PID) and sorted rows; unknown values sort last."""
    if pattern:
        matches = compile_filter(pattern)
        rows = [r for r in rows if matches(str(r.pid)) or matches(r.command or "") or matches(r.user or "")]
    if sort == "sm":
        return sorted(rows, key=lambda r: (*_sm_key(r), *_memory_key(r), r.gpu, r.pid))
    if sort == "gpu":
        return sorted(rows, key=lambda r: (r.gpu, r.mig or "", *_memory_key(r), r.pid))
    return sorted(rows, key=lambda r: (*_memory_key(r), r.gpu, r.pid))


def _columns(width: int) -> bool:
    """Whether the USER column fits."""
    return width >= USER_MIN_WIDTH


def gpu_header_row(width: int, sort: str) -> Row:
    gpu = "GPU▼" if sort == "gpu" else " GPU"
    memory = "GPUMEM▼" if sort == "memory" else "GPU MEM"
    sm = "SM%▼" if sort == "sm" else " SM%"
    user = f" {'USER':<6}" if _columns(width) else ""
    text = f"{gpu} {'PID':>7}{user} {memory:>7} {sm:>4} COMMAND"
    return [(fit(text, width).ljust(width), "heading")]


def memory_text(used: int | None) -> str:
    return UNKNOWN if used is None else format_value(float(used), "B", width=7)


def sm_text(percent: float | None) -> str:
    return UNKNOWN if percent is None else f"{percent:.0f}"


def slice_name(mig: str) -> str:
    """The MIG profile when the slice's name has one ("1g.10gb GI 3 CI 0" → "1g.10gb"): room is short."""
    found = _PROFILE.search(mig)
    return found.group(0) if found else mig


def command_text(row: Any) -> str:
    command = clean(short_command(row.command or "", "")) or UNKNOWN
    return f"[{clean(slice_name(row.mig))}] {command}" if row.mig else command


def gpu_process_row(row: Any, width: int, style: str) -> Row:
    """One process: a ● when it is in the watched tree, then GPU, PID, USER, GPU MEM, SM% and command."""
    user = f" {fit(clean(row.user or '') or UNKNOWN, 6):<6}" if _columns(width) else ""
    text = f"{row.gpu:>3} {row.pid:>7}{user} {memory_text(row.used_memory):>7} {sm_text(row.sm_percent):>4} {command_text(row)}"
    marker = (WATCHED, "ok") if row.in_tree else (" ", style)
    return [marker, (fit(text, width - 1).ljust(width - 1), style)]


def note_rows(notes: Sequence[str], width: int) -> list[Row]:
    """Each note wrapped under a ``!``, at most ``NOTE_LINES`` lines."""
    rows: list[Row] = []
    room = max(1, width - 2)
    for note in notes:
        lines = textwrap.wrap(clean(note), room) or [""]
        if len(lines) > NOTE_LINES:
            lines = lines[: NOTE_LINES - 1] + [fit(" ".join(lines[NOTE_LINES - 1 :]), room)]
        for n, line in enumerate(lines):
            rows.append([("! " if n == 0 else "  ", "warn"), (line.ljust(room), "muted")])
    return rows


class GpuProcessTable(ProcessTable):
    """Processes on the GPUs, sorted by GPU memory; ``t`` cycles memory → SM% → GPU."""

    DEFAULT_CSS = """
    GpuProcessTable {
        height: auto;
        max-height: 50%;
        width: 1fr;
    }
    GpuProcessTable.-alone {
        height: 1fr;
        max-height: 100%;
    }
    """

    SORTS = GPU_SORTS
    PANE_TITLE = "GPU processes"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.notes: tuple[str, ...] = ()
        self._height_for: tuple[int, int] = (-1, -1)

    def set_notes(self, notes: Sequence[str]) -> None:
        notes = tuple(notes)
        if notes != self.notes:
            self.notes = notes
            self._rearrange()

    # -- ProcessTable hooks ----------------------------------------------------
    def arrange_rows(self, rows: Sequence[Any]) -> list[Any]:
        return arrange_gpu_processes(rows, self.sort, self.pattern)

    def row_key(self, row: Any) -> Any:
        # One process may hold several GPUs: a row is a (GPU, PID) pair.
        return (row.gpu, row.mig, row.pid)

    def header_row(self, width: int) -> Row:
        return gpu_header_row(width, self.sort)

    def item_row(self, row: Any, width: int, style: str) -> Row:
        return gpu_process_row(row, width, style)

    def preamble_rows(self, width: int) -> list[Row]:
        return note_rows(self.notes, width)

    def title_suffix(self) -> str:
        return f" {WATCHED} watched" if any(row.in_tree for row in self._shown) else ""

    # -- size follows content ----------------------------------------------------
    def _rearrange(self) -> None:
        super()._rearrange()
        lines = (len(self._shown), len(self.notes))
        if lines != self._height_for:
            self._height_for = lines
            self.refresh(layout=True)

    def get_content_height(self, container, viewport, width: int) -> int:
        return 2 + len(note_rows(self.notes, width)) + max(1, len(self._shown))

    def build_rows(self, width: int, height: int) -> list[Row]:
        rows = super().build_rows(width, height)
        if not self._shown:
            empty = 2 + len(self.preamble_rows(width))
            if empty < len(rows):
                what = "  no GPU process matches" if self.pattern else "  no processes on the GPUs"
                rows[empty] = [(fit(what, width).ljust(width), "muted")]
        return rows
