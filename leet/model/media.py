"""The media a run logged, by key and step: images, image lists, histograms and tables.

A history value with a ``_type`` becomes a ``MediaItem``; ``MediaIndex``
remembers which steps logged which keys. Files a value names (PNGs, table
JSON) are found only inside the run's ``files/`` folder (``resolve_media``):
a path that climbs out with ``..``, is absolute, or is a symlink leading
elsewhere is refused with why.
"""

from __future__ import annotations

import math
import os
from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from leet.common.text import clean

IMAGE_KINDS = frozenset({"image-file", "images/separated", "images"})
HISTOGRAM_KIND = "histogram"
TABLE_KINDS = frozenset({"table-file", "table", "partitioned-table", "joined-table"})
MAX_BINS = 512  # a histogram wider than this keeps its first bins only: no terminal is wider
MAX_IMAGES = 256  # images kept of one logged list


@dataclass(frozen=True)
class ImageRef:
    path: str  # as logged: relative to the run's ``files/`` folder
    caption: str = ""


@dataclass(frozen=True)
class Histogram:
    counts: tuple[float, ...]
    edges: tuple[float, ...]  # len(counts) + 1, rising


@dataclass(frozen=True)
class TableRef:
    path: str
    rows: int | None = None
    cols: int | None = None


@dataclass(frozen=True)
class MediaItem:
    """One key's value at one step; ``kind`` is ``images``, ``histogram``, ``table`` or ``other``."""

    kind: str
    images: tuple[ImageRef, ...] = ()
    histogram: Histogram | None = None
    table: TableRef | None = None
    media_type: str = ""  # the W&B ``_type``


def _text(value: Any) -> str:
    return clean(value) if isinstance(value, str) else ""


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _images(value: Mapping[str, Any]) -> tuple[ImageRef, ...]:
    if value.get("_type") == "image-file":
        path = value.get("path")
        return (ImageRef(path, _text(value.get("caption"))),) if isinstance(path, str) else ()
    names = value.get("filenames")
    captions = value.get("captions")
    if not isinstance(names, list):
        return ()
    captions = captions if isinstance(captions, list) else []
    refs = []
    for index, name in enumerate(names[:MAX_IMAGES]):
        if isinstance(name, str):
            refs.append(ImageRef(name, _text(captions[index]) if index < len(captions) else ""))
    return tuple(refs)


def _histogram(value: Mapping[str, Any]) -> Histogram | None:
    raw = value.get("values")
    if not isinstance(raw, list) or not raw:
        return None
    counts = tuple(_number(count) or 0.0 for count in raw[:MAX_BINS])
    bins = value.get("bins")
    packed = value.get("packedBins")
    if isinstance(bins, list) and len(bins) >= len(counts) + 1:
        numbers = [_number(edge) for edge in bins[: len(counts) + 1]]
        if any(number is None for number in numbers):
            return None
        edges = tuple(float(number) for number in numbers if number is not None)
    elif isinstance(packed, Mapping):
        low, size = _number(packed.get("min")), _number(packed.get("size"))
        if low is None or size is None or size <= 0:
            return None
        edges = tuple(low + size * index for index in range(len(counts) + 1))
    else:
        return None
    if any(later < earlier for earlier, later in zip(edges, edges[1:])):
        return None
    return Histogram(counts, edges)


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def media_item(value: Any) -> MediaItem | None:
    """The ``MediaItem`` of a logged value; None when it is no media object."""
    if not isinstance(value, Mapping) or not isinstance(value.get("_type"), str):
        return None
    kind = value["_type"]
    if kind in IMAGE_KINDS:
        images = _images(value)
        return MediaItem("images", images=images, media_type=kind) if images else MediaItem("other", media_type=kind)
    if kind == HISTOGRAM_KIND:
        histogram = _histogram(value)
        return MediaItem("histogram", histogram=histogram, media_type=kind) if histogram else MediaItem("other", media_type=kind)
    if kind in TABLE_KINDS and isinstance(value.get("path"), str):
        table = TableRef(value["path"], _whole(value.get("nrows")), _whole(value.get("ncols")))
        return MediaItem("table", table=table, media_type=kind)
    return MediaItem("other", media_type=kind)


class MediaIndex:
    """Which steps logged which media keys, and what each logged."""

    def __init__(self) -> None:
        self._items: dict[str, dict[int, MediaItem]] = {}
        self._steps: dict[str, list[int]] = {}
        self._all_steps: list[int] = []

    def add(self, step: int, key: str, value: Any) -> bool:
        """Take one logged value; False when it is no media."""
        item = media_item(value)
        if item is None:
            return False
        items = self._items.setdefault(key, {})
        if step not in items:
            steps = self._steps.setdefault(key, [])
            if not steps or step > steps[-1]:
                steps.append(step)
            else:
                insort(steps, step)
            at = bisect_left(self._all_steps, step)
            if at == len(self._all_steps) or self._all_steps[at] != step:
                self._all_steps.insert(at, step)
        items[step] = item
        return True

    def add_row(self, step: int, values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            self.add(step, key, value)

    def keys(self, kinds: Iterable[str] | None = None) -> list[str]:
        """Media keys in name order; with ``kinds``, only those whose latest item is of one of them."""
        wanted = None if kinds is None else set(kinds)
        return sorted(key for key in self._items if wanted is None or self.latest(key).kind in wanted)

    def latest(self, key: str) -> MediaItem:
        return self._items[key][self._steps[key][-1]]

    def steps(self, key: str | None = None) -> list[int]:
        """The steps that logged ``key`` (any media key when None), rising."""
        return list(self._all_steps if key is None else self._steps.get(key, ()))

    def at(self, key: str, step: int) -> MediaItem | None:
        return self._items.get(key, {}).get(step)

    def at_or_before(self, key: str, step: int) -> tuple[int, MediaItem] | None:
        """The latest step ≤ ``step`` that logged ``key``, with its item."""
        steps = self._steps.get(key)
        if not steps:
            return None
        index = bisect_right(steps, step) - 1
        if index < 0:
            return None
        found = steps[index]
        return found, self._items[key][found]

    def __len__(self) -> int:
        return len(self._items)


def neighbour_step(steps: list[int], step: int | None, move: str) -> int | None:
    """The step ``move`` (``prev``, ``next``, ``first``, ``last``) leads to from ``step`` among ``steps``."""
    if not steps:
        return None
    if move == "first":
        return steps[0]
    if move == "last" or step is None:
        return steps[-1]
    if move == "next":
        index = bisect_right(steps, step)
        return steps[index] if index < len(steps) else steps[-1]
    if move == "prev":
        index = bisect_left(steps, step) - 1
        return steps[index] if index >= 0 else steps[0]
    return step


class MediaPathError(ValueError):
    """A logged path that is not read: it leads out of the run's files, or is no path."""


def resolve_media(run_dir: str | os.PathLike[str], logged: str) -> Path:
    """``logged`` (relative to ``run_dir/files``) as a real path inside that folder; ``MediaPathError`` if not."""
    if not logged or "\0" in logged:
        raise MediaPathError("no file named")
    if os.path.isabs(logged):
        raise MediaPathError("an absolute path, outside the run")
    base = os.path.realpath(os.path.join(run_dir, "files"))
    target = os.path.realpath(os.path.join(base, logged))
    if os.path.commonpath([base, target]) != base:
        raise MediaPathError("leads outside the run's files")
    return Path(target)


__all__ = [
    "HISTOGRAM_KIND",
    "IMAGE_KINDS",
    "TABLE_KINDS",
    "Histogram",
    "ImageRef",
    "MediaIndex",
    "MediaItem",
    "MediaPathError",
    "TableRef",
    "media_item",
    "neighbour_step",
    "resolve_media",
]
