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

from leet.common.matching import compile_filter
from leet.common.text import clean
from leet.common.units import format_value
from widgets.chartframe import Row, fit
from widgets.process_rows import short_command
from widgets.processes import ProcessTable

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


GPU_DESCENDING = {"memory": True, "sm": True, "gpu": False, "pid": False, "user": False, "command": False}
GPU_CHOICES = (
    ("gpu", "GPU", "GPU index, then MIG slice"),
    ("pid", "PID", "process id"),
    ("user", "USER", "owner"),
    ("memory", "GPU MEM", "GPU memory used"),
    ("sm", "SM%", "streaming multiprocessor use"),
    ("command", "COMMAND", "command line"),
)


def _known(row: Any, sort: str) -> bool:
    if sort == "memory":
        return row.used_memory is not None
    if sort == "sm":
        return row.sm_percent is not None
    if sort in ("user", "command"):
        return bool(getattr(row, sort))
    return True


def arrange_gpu_processes(rows: Sequence[Any], sort: str = "memory", pattern: str = "", descending: bool | None = None) -> list[Any]:
    """Filtered (command, user or PID) and sorted rows; unknown values sort last, either way round."""
    if pattern:
        matches = compile_filter(pattern)
        rows = [r for r in rows if matches(str(r.pid)) or matches(r.command or "") or matches(r.user or "")]
    if sort == "sm":
        ordered = sorted(rows, key=lambda r: (*_sm_key(r), *_memory_key(r), r.gpu, r.pid))
    elif sort == "gpu":
        ordered = sorted(rows, key=lambda r: (r.gpu, r.mig or "", *_memory_key(r), r.pid))
    elif sort == "pid":
        ordered = sorted(rows, key=lambda r: (r.pid, r.gpu))
    elif sort in ("user", "command"):
        ordered = sorted(rows, key=lambda r: (not getattr(r, sort), (getattr(r, sort) or "").casefold(), r.gpu, r.pid))
    else:
        ordered = sorted(rows, key=lambda r: (*_memory_key(r), r.gpu, r.pid))
    if descending is None or descending == GPU_DESCENDING.get(sort, True):
        return ordered
    known = [r for r in ordered if _known(r, sort)]
    return known[::-1] + [r for r in ordered if not _known(r, sort)]


def _columns(width: int) -> bool:
    """Whether the USER column fits."""
    return width >= USER_MIN_WIDTH


def _arrow(column: str, sort: str, descending: bool | None) -> str:
    if column != sort:
        return ""
    if descending is None:
        descending = GPU_DESCENDING.get(sort, True)
    return "▼" if descending else "▲"


def gpu_header_row(width: int, sort: str, descending: bool | None = None) -> Row:
    def title(column: str, text: str) -> str:
        return text + _arrow(column, sort, descending)

    gpu = title("gpu", "GPU") if sort == "gpu" else " GPU"
    memory = title("memory", "GPUMEM") if sort == "memory" else "GPU MEM"
    sm = title("sm", "SM%") if sort == "sm" else " SM%"
    user = f" {title('user', 'USER'):<6}" if _columns(width) else ""
    text = f"{gpu} {title('pid', 'PID'):>7}{user} {memory:>7} {sm:>4} {title('command', 'COMMAND')}"
    return [(fit(text, width).ljust(width), "heading")]


def gpu_header_spans(width: int) -> list[tuple[int, int, str]]:
    """``(first, end, sort key)`` of each heading, as ``gpu_header_row`` lays them out."""
    spans = [(0, 4, "gpu"), (4, 12, "pid")]
    x = 12
    if _columns(width):
        spans.append((x, x + 7, "user"))
        x += 7
    spans += [(x, x + 8, "memory"), (x + 8, x + 13, "sm"), (x + 13, max(width, x + 14), "command")]
    return spans


def memory_text(used: int | None) -> str:
    return UNKNOWN if used is None else format_value(float(used), "B", width=7)


def sm_text(percent: float | None) -> str:
    return UNKNOWN if percent is None else f"{percent:.0f}"


def slice_name(mig: str) -> str:
    """The MIG profile when the slice's name has one ("1g.10gb GI 3 CI 0" → "1g.10gb"): room is short."""
    found = _PROFILE.search(mig)
    return found.group(0) if found else mig


def command_text(row: Any, mode: str = "command") -> str:
    command = clean(short_command(row.command or "", "")) or UNKNOWN
    if mode == "name" and row.command:
        command = command.partition(" ")[0]
    return f"[{clean(slice_name(row.mig))}] {command}" if row.mig else command


def gpu_process_row(row: Any, width: int, style: str, command_mode: str = "command") -> Row:
    """One process: a ● when it is in the watched tree, then GPU, PID, USER, GPU MEM, SM% and command."""
    user = f" {fit(clean(row.user or '') or UNKNOWN, 6):<6}" if _columns(width) else ""
    command = command_text(row, command_mode)
    text = f"{row.gpu:>3} {row.pid:>7}{user} {memory_text(row.used_memory):>7} {sm_text(row.sm_percent):>4} {command}"
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
        return arrange_gpu_processes(rows, self.sort, self.pattern, self.descending)

    def row_key(self, row: Any) -> Any:
        # One process may hold several GPUs: a row is a (GPU, PID) pair.
        return (row.gpu, row.mig, row.pid)

    def header_row(self, width: int) -> Row:
        return gpu_header_row(width, self.sort, self.descending)

    def item_row(self, row: Any, width: int, style: str) -> Row:
        return gpu_process_row(row, width, style, self.command_mode)

    def header_spans(self, width: int) -> list[tuple[int, int, str]]:
        return gpu_header_spans(width)

    def sort_choices(self) -> list[tuple[str, str, str]]:
        return list(GPU_CHOICES)

    def default_descending(self, sort: str) -> bool:
        return GPU_DESCENDING.get(sort, True)

    def set_watched(self, pid: int | None, tree: bool = False) -> None:
        """The collector marks the watched tree itself (``in_tree``)."""

    def set_tree(self, tree: bool) -> None:
        """GPU rows are flat: one per process and GPU."""

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
