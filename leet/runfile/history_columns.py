"""History rows gathered into columns, ``{key: (steps, values)}``, the shape a store takes a batch in."""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, Mapping


class HistoryColumns:
    """History rows turned into ``{key: (steps, values)}`` for the store.

    Rows of a long run log the same keys, each row in its own order: a run of
    rows with the same keys is kept as tuples in one key order and turned into
    columns at once, a few C-level calls per row rather than per value.
    """

    def __init__(self) -> None:
        self.columns: dict[str, tuple[list[float], list[float]]] = {}
        self._keys: tuple[str, ...] = ()
        self._pick: Callable[[Any], Any] = tuple
        self._steps: list[float] = []
        self._tuples: list[tuple[float, ...]] = []

    def add(self, step: float, values: Mapping[str, float]) -> None:
        if len(values) == len(self._keys) > 1:
            try:
                self._tuples.append(self._pick(values))
                self._steps.append(step)
                return
            except KeyError:
                pass
        self._flush()
        if len(values) > 1:
            self._keys = tuple(values)
            self._pick = itemgetter(*self._keys)
            self._tuples.append(self._pick(values))
            self._steps.append(step)
        else:
            self._keys = ()
            for key, value in values.items():
                steps, column = self._column(key)
                steps.append(step)
                column.append(value)

    def finish(self) -> dict[str, tuple[list[float], list[float]]]:
        self._flush()
        return self.columns

    def _flush(self) -> None:
        if not self._tuples:
            return
        for key, values in zip(self._keys, zip(*self._tuples)):
            steps, column = self._column(key)
            steps.extend(self._steps)
            column.extend(values)
        self._tuples, self._steps = [], []

    def _column(self, key: str) -> tuple[list[float], list[float]]:
        column = self.columns.get(key)
        if column is None:
            column = self.columns[key] = ([], [])
        return column
