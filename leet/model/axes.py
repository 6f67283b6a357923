"""``define_metric`` rules: which x axis each history metric is charted against, and its goal.

A run's ``metric`` records say, for a metric name or a glob (``train/*``),
which other metric is its x axis (``step_metric``; a Hugging Face Trainer
run charts ``train/*`` against ``train/global_step``), whether it is hidden,
and what summary it keeps (``min``, ``max`` …: the goal). As in the SDK, a
metric defined by name follows its own definition; only a metric never
defined by name falls to the first glob that matches it; and a later
definition of the same name adds to the earlier one.

``route`` turns a batch of history columns (x = ``_step``) into points on
the custom axes: each value is paired with the step metric's value in the
same row, or (``step_sync``, the SDK's default) with its latest value
before that row.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

Columns = Mapping[str, tuple[Sequence[float], Sequence[float]]]

_GOALS = {"min": "minimize", "max": "maximize"}


@dataclass(frozen=True)
class MetricRule:
    """What ``define_metric`` said of one name or glob."""

    step_metric: str = ""
    hidden: bool = False
    summary: tuple[str, ...] = ()  # "min", "max", "mean", "last", "best", "first", "none"
    goal: str = ""  # "minimize" / "maximize", said outright (older SDKs) or by a min/max summary

    def merged(self, later: "MetricRule") -> "MetricRule":
        return MetricRule(
            step_metric=later.step_metric or self.step_metric,
            hidden=later.hidden or self.hidden,
            summary=tuple(dict.fromkeys(self.summary + later.summary)),
            goal=later.goal or self.goal,
        )


def rule_of(definition: Any) -> MetricRule:
    """A ``MetricDefinition`` event as a rule."""
    summary = tuple(getattr(definition, "summary", ()) or ())
    goal = definition.goal or next((_GOALS[name] for name in summary if name in _GOALS), "")
    return MetricRule(definition.step_metric, bool(definition.hidden), summary, goal)


class MetricAxes:
    """The run's metric definitions, folded; single-threaded like the run model that holds it."""

    def __init__(self) -> None:
        self.exact: dict[str, MetricRule] = {}
        self.globs: dict[str, MetricRule] = {}
        self._rules: dict[str, MetricRule | None] = {}
        self._last: dict[str, tuple[float, float]] = {}  # step metric -> (step, value) of its latest point
        self.version = 0

    def define(self, definition: Any) -> None:
        rule = rule_of(definition)
        if definition.name:
            known = self.exact.get(definition.name)
            self.exact[definition.name] = known.merged(rule) if known else rule
        elif definition.glob_name:
            known = self.globs.get(definition.glob_name)
            self.globs[definition.glob_name] = known.merged(rule) if known else rule
        else:
            return
        self._rules.clear()
        self.version += 1

    def rule(self, key: str) -> MetricRule | None:
        if key in self._rules:
            return self._rules[key]
        found = self.exact.get(key)
        if found is None:
            found = next((rule for pattern, rule in self.globs.items() if fnmatch.fnmatchcase(key, pattern)), None)
        if found is not None and found.step_metric == key:
            found = replace(found, step_metric="")  # a metric is never its own x axis
        self._rules[key] = found
        return found

    def axis(self, key: str) -> str:
        """The metric ``key`` is charted against; "" for the step."""
        rule = self.rule(key)
        return rule.step_metric if rule is not None else ""

    def hidden(self, key: str) -> bool:
        rule = self.rule(key)
        return rule is not None and rule.hidden

    def goal(self, key: str) -> str:
        rule = self.rule(key)
        return rule.goal if rule is not None else ""

    @property
    def any_axis(self) -> bool:
        return any(rule.step_metric for rule in self.exact.values()) or any(rule.step_metric for rule in self.globs.values())

    def route(self, columns: Columns) -> dict[str, dict[str, tuple[list[float], list[float]]]]:
        """History columns (x = step) as points on their custom axes: ``{axis: {key: (xs, ys)}}``.

        Call once per batch, in file order: the step metrics' latest values
        carry over to the next batch.
        """
        if not self.any_axis:
            return {}
        routed: dict[str, dict[str, tuple[list[float], list[float]]]] = {}
        for key, (steps, values) in columns.items():
            axis = self.axis(key)
            if axis:
                points = _paired(steps, values, columns.get(axis), self._last.get(axis))
                if points[0]:
                    routed.setdefault(axis, {})[key] = points
        for axis in routed:
            column = columns.get(axis)
            if column is not None and len(column[0]):
                self._last[axis] = (float(column[0][-1]), float(column[1][-1]))
        return routed


def _paired(
    steps: Sequence[float], values: Sequence[float], axis: tuple[Sequence[float], Sequence[float]] | None, before: tuple[float, float] | None
) -> tuple[list[float], list[float]]:
    """Each (step, value) paired with the axis value at that step, or the latest one before it."""
    xs: list[float] = []
    ys: list[float] = []
    axis_steps, axis_values = axis if axis is not None else ((), ())
    current = before[1] if before is not None else None
    at = 0
    count = len(axis_steps)
    for step, value in zip(steps, values):
        while at < count and axis_steps[at] <= step:
            current = axis_values[at]
            at += 1
        if current is not None:
            xs.append(float(current))
            ys.append(value)
    return xs, ys
