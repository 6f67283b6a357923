"""Runs side by side: the compare table, built from what the workspace already holds.

Runs are columns. The rows are the config keys whose values differ among
the runs (nested config flattened with dots; a key a run lacks shows ``—``),
then two rows per metric: its last value, and its best value with the step
it was reached at. Which is best follows the metric's ``define_metric``
goal (a ``min``/``max`` summary), else the name: loss-like names (loss,
error, perplexity, WER, MSE …) are minimized, anything else maximized. The
run with the best value of a metric row is marked.

Pure: no files and no Textual. The caller hands each run's config, goals
and history series (as the store holds them, so a folded stretch keeps its
lowest and highest value).
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Mapping, Sequence

from leet.common.matching import compile_filter
from leet.model.keys import natural_key
from leet.model.store import SeriesData
from leet.model.values import describe_value
from leet.runfile.decode import INTERNAL_CONFIG_KEY, flatten

MISSING = "—"
CONFIG_KEYS = 5000  # flattened config leaves read per run at most: a config can hold a million
LOSS_WORDS = frozenset({
    "loss", "losses", "error", "errors", "err", "perplexity", "ppl", "wer", "cer", "mse", "mae", "rmse", "nll", "cost", "regret", "bpc", "bpb",
})
_WORDS = re.compile(r"[a-z0-9]+")

Goal = Literal["min", "max"]
RowKind = Literal["config", "last", "best"]


@dataclass(frozen=True)
class CompareRun:
    """One run as the table takes it."""

    key: str  # where the workspace keeps it
    name: str
    run_id: str
    state: str
    config: Mapping[str, Any] = field(default_factory=dict)
    goals: Mapping[str, str] = field(default_factory=dict)  # define_metric goal by metric name or glob: "minimize" / "maximize"
    hidden: frozenset[str] = frozenset()  # metrics define_metric hides
    series: Mapping[str, SeriesData] = field(default_factory=dict)  # metric -> its history by step

    @property
    def short_id(self) -> str:
        return self.run_id[:8]


@dataclass(frozen=True)
class Cell:
    text: str
    value: float | str | None = None  # what the column sorts by; None: missing
    best: bool = False


@dataclass(frozen=True)
class Row:
    name: str  # ``lr``, ``loss · last``, ``loss · best``
    kind: RowKind
    cells: tuple[Cell, ...]
    goal: Goal | None = None  # a metric row's


@dataclass(frozen=True)
class CompareTable:
    runs: tuple[CompareRun, ...]
    rows: tuple[Row, ...]

    def filtered(self, pattern: str) -> "CompareTable":
        """Only the rows whose name matches ``pattern`` (regex, or plain text)."""
        if not pattern:
            return self
        matches = compile_filter(pattern)
        return replace(self, rows=tuple(row for row in self.rows if matches(row.name)))

    def sorted_by(self, name: str, reverse: bool = False) -> "CompareTable":
        """The run columns ordered by row ``name``: best first for a metric, ascending for config; missing last either way."""
        row = next((row for row in self.rows if row.name == name), None)
        if row is None:
            return self
        order = sorted(range(len(self.runs)), key=lambda index: _sort_key(row, row.cells[index]))
        if reverse:
            present = [index for index in order if row.cells[index].value is not None]
            order = present[::-1] + [index for index in order if row.cells[index].value is None]
        return CompareTable(
            tuple(self.runs[index] for index in order),
            tuple(replace(one, cells=tuple(one.cells[index] for index in order)) for one in self.rows),
        )


def _sort_key(row: Row, cell: Cell) -> tuple[int, int, float, str]:
    value = cell.value
    if value is None:
        return (1, 0, 0.0, "")
    if isinstance(value, str):
        return (0, 1, 0.0, value)
    return (0, 0, -value if row.goal == "max" else value, "")


def loss_like(metric: str) -> bool:
    """Whether ``metric`` names something to minimize: a loss, an error, a perplexity …, by its words."""
    return any(word in LOSS_WORDS or word.endswith("loss") for word in _WORDS.findall(metric.lower()))


def goal_of(metric: str, runs: Sequence[CompareRun]) -> Goal:
    """The first declared goal for ``metric`` among ``runs`` (its name before globs), else by its name."""
    for run in runs:
        declared = run.goals.get(metric) or next((goal for pattern, goal in run.goals.items() if fnmatch.fnmatchcase(metric, pattern)), "")
        if declared:
            return "min" if declared == "minimize" else "max"
    return "min" if loss_like(metric) else "max"


def compare_table(runs: Sequence[CompareRun]) -> CompareTable:
    """The table for ``runs``, in their order: differing config first, then each metric's last and best."""
    runs = tuple(runs)
    rows = config_rows(runs)
    metrics = sorted({metric for run in runs for metric in run.series if metric not in run.hidden and not metric.startswith("_")}, key=natural_key)
    for metric in metrics:
        rows += metric_rows(metric, runs)
    return CompareTable(runs, tuple(rows))


def config_rows(runs: Sequence[CompareRun]) -> list[Row]:
    """A row per flattened config key whose value is not the same in every run (a missing key counts as a value)."""
    flat = [_flat_config(run.config) for run in runs]
    keys = sorted({key for config in flat for key in config}, key=natural_key)
    rows = []
    for key in keys:
        present = [config.get(key, _ABSENT) for config in flat]
        if len({_identity(value) for value in present}) < 2:
            continue
        cells = tuple(Cell(MISSING) if value is _ABSENT else Cell(describe_value(value, key), _sortable(value)) for value in present)
        rows.append(Row(key, "config", cells))
    return rows


def metric_rows(metric: str, runs: Sequence[CompareRun]) -> list[Row]:
    """``metric · last`` and ``metric · best`` (with its step), the best run of each marked."""
    goal = goal_of(metric, runs)
    last: list[tuple[float, float] | None] = []
    best: list[tuple[float, float] | None] = []
    for run in runs:
        data = None if metric in run.hidden else run.series.get(metric)
        last.append(_last(data))
        best.append(_best(data, goal))
    return [
        Row(f"{metric} · last", "last", _marked([None if found is None else (found[1], number_text(found[1])) for found in last], goal), goal),
        Row(f"{metric} · best", "best", _marked([None if found is None else (found[1], f"{number_text(found[1])} @ {found[0]:,.0f}") for found in best], goal), goal),
    ]


def _marked(values: Sequence[tuple[float, str] | None], goal: Goal) -> tuple[Cell, ...]:
    present = [found[0] for found in values if found is not None]
    winner = (min(present) if goal == "min" else max(present)) if present else None
    return tuple(Cell(MISSING) if found is None else Cell(found[1], found[0], found[0] == winner and len(present) > 1) for found in values)


def _last(data: SeriesData | None) -> tuple[float, float] | None:
    """(step, value) of the newest finite point."""
    if data is None:
        return None
    for index in range(len(data.t) - 1, -1, -1):
        if math.isfinite(data.mean[index]):
            return data.t[index], data.mean[index]
    return None


def _best(data: SeriesData | None, goal: Goal) -> tuple[float, float] | None:
    """(step, value) of the lowest (``min``) or highest point; a folded stretch holds its extremes in lo/hi."""
    if data is None:
        return None
    column = data.lo if goal == "min" else data.hi
    found: tuple[float, float] | None = None
    for step, value in zip(data.t, column):
        if math.isfinite(value) and (found is None or (value < found[1] if goal == "min" else value > found[1])):
            found = (step, value)
    return found


def number_text(value: float) -> str:
    """A metric value in a cell: four significant digits."""
    return f"{value:.4g}"


class _Absent:
    pass


_ABSENT = _Absent()


def _flat_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Config leaves by dotted key; W&B's own bookkeeping left out, and ``{"value": …}`` wrappers unwrapped."""
    plain = {key: _unwrapped(value) for key, value in config.items() if key != INTERNAL_CONFIG_KEY and not key.startswith("_wandb")}
    return flatten(plain, limit=CONFIG_KEYS)


def _unwrapped(value: Any) -> Any:
    return value["value"] if isinstance(value, dict) and set(value) == {"value"} else value


def _identity(value: Any) -> str:
    if value is _ABSENT:
        return "\0absent"
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _sortable(value: Any) -> float | str:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return describe_value(value, "")
