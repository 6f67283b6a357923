"""Series identities for tests that start from W&B keys as run files and collectors write them."""

from __future__ import annotations

from typing import Iterable

from leet.model.keys import split_label
from leet.model.store import SeriesKey


def stored(keys: Iterable[str], run: str = "run") -> list[SeriesKey]:
    """The series of ``keys`` (each ``/l:LABEL`` suffix split off) as a store holding them under ``run`` lists them."""
    return [SeriesKey(run, *split_label(key)) for key in keys]
