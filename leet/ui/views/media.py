"""What the media pane shows, built from media indexes: the head, the scrubber, and the tiles, bars or table.

``run_model`` is one run at one step; ``side_by_side`` is several runs'
images at one step, each at its latest logged step at or before it. Files
are only named here (a tile opens its own when drawn), except a table,
which the caller reads and hands in.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

from leet.model.media import MediaIndex, MediaItem, MediaPathError, neighbour_step
from leet.model.values import media_noun
from leet.runfile.files import open_regular
from leet.sources.media import TableData
from widgets.chartframe import Row
from widgets.media import MediaModel, TileModel

KEY_HINT = "↑↓ key"
STEP_HINT = "←→ step · home end"
IMAGE_NOUNS = {"images": "images", "histogram": "histogram", "table": "table"}


@dataclass
class Scrub:
    """Where the pane stands: the media key, and the step (None: the newest, followed as the run grows)."""

    key: str | None = None
    step: int | None = None

    def choose_key(self, keys: Sequence[str]) -> str | None:
        if self.key not in keys:
            self.key = keys[0] if keys else None
        return self.key

    def pick(self, keys: Sequence[str], delta: int) -> None:
        if keys:
            at = keys.index(self.key) if self.key in keys else 0
            self.key = keys[(at + delta) % len(keys)]

    def move(self, steps: list[int], move: str) -> None:
        """Scrub to the previous, next, first or last logged step; the last one follows the newest."""
        target = neighbour_step(steps, self.shown(steps), move)
        self.step = None if target is None or (move in ("last", "next") and target == steps[-1]) else target

    def shown(self, steps: list[int]) -> int | None:
        """The step shown: the chosen one, or the latest logged at or before it; the newest when following."""
        if not steps:
            return None
        if self.step is None:
            return steps[-1]
        at = bisect_right(steps, self.step)
        return steps[at - 1] if at else steps[0]


def key_head(keys: Sequence[str], key: str, noun: str) -> Row:
    return [
        (" Media ", "heading"),
        (key, "key"),
        (f" · {noun}", "muted"),
        (f" · key {keys.index(key) + 1} of {len(keys)} ({KEY_HINT})" if len(keys) > 1 else "", "muted"),
    ]


def scrubber(steps: list[int], step: int, following: bool) -> Row:
    position = steps.index(step) + 1 if step in steps else 0
    arrows = ("◀ " if position > 1 else "  ", " ▶" if position < len(steps) else "  ")
    return [
        (f" {arrows[0]}", "muted"),
        (f"step {step:,}", "value"),
        (arrows[1], "muted"),
        (f" · {position:,} of {len(steps):,} logged steps", "muted"),
        (" · newest, following" if following else "", "muted"),
        (f" · {STEP_HINT}", "muted"),
    ]


def image_tile(resolve: Callable[[str], Path], logged: str, caption: str) -> TileModel:
    name = os.path.basename(logged)
    try:
        path = resolve(logged)
    except MediaPathError as error:
        return TileModel(caption, error=f"{name}: {error}")
    return TileModel(caption, name=str(path), opener=partial(open_regular, path))


def empty_model(text: str) -> MediaModel:
    return MediaModel([(" Media", "heading")], [], text=text)


def run_model(index: MediaIndex, scrub: Scrub, resolve: Callable[[str], Path], table: TableData | None = None, note: str = "") -> MediaModel:
    """One run's media at the scrubbed step; ``table``: the shown table, read by the caller."""
    keys = index.keys()
    key = scrub.choose_key(keys)
    if key is None:
        return empty_model(note or "This run logged no media.")
    steps = index.steps(key)
    step = scrub.shown(steps)
    assert step is not None
    item = index.at(key, step)
    assert item is not None
    head = key_head(keys, key, IMAGE_NOUNS.get(item.kind, media_noun(item.media_type)))
    if note:
        head.append((f" · {note}", "warn"))
    bar = scrubber(steps, step, scrub.step is None)
    return item_model(item, head, bar, resolve, table)


def item_model(item: MediaItem, head: Row, bar: Row, resolve: Callable[[str], Path], table: TableData | None) -> MediaModel:
    if item.kind == "images":
        tiles = tuple(image_tile(resolve, ref.path, ref.caption) for ref in item.images)
        if len(tiles) > 1:
            head = [*head, (f" · {len(tiles)} images", "muted")]
        return MediaModel(head, bar, "images", tiles=tiles)
    if item.kind == "histogram" and item.histogram is not None:
        return MediaModel(head, bar, "histogram", counts=item.histogram.counts, edges=item.histogram.edges)
    if item.kind == "table" and item.table is not None:
        if table is None or table.error:
            return MediaModel(head, bar, text=table.error if table is not None else "reading the table …")
        rows = tuple(tuple(_cell(cell) for cell in row) for row in table.rows)
        if table.total_rows > len(rows):
            head = [*head, (f" · first {len(rows):,} of {table.total_rows:,} rows", "warn")]
        return MediaModel(head, bar, "table", columns=table.columns, rows=rows)
    return MediaModel(head, bar, text=f"{media_noun(item.media_type)}: not drawn in a terminal")


def _cell(value: object) -> str:
    if isinstance(value, dict) and isinstance(value.get("_type"), str):
        return f"[{media_noun(value['_type'])}]"
    text = str(value) if not isinstance(value, float) else f"{value:.6g}"
    return text if len(text) <= 200 else text[:199] + "…"


@dataclass(frozen=True)
class RunMedia:
    """One run of a side-by-side view: its title, its index, and how its logged paths resolve."""

    title: str
    index: MediaIndex
    resolve: Callable[[str], Path]


def side_by_side(runs: Sequence[RunMedia], scrub: Scrub) -> MediaModel:
    """Each run's first image of the key at the shared step (its latest logged at or before it), one column per run."""
    if not runs:
        return empty_model("Select runs (space in the runs list) to see their images side by side.")
    keys = sorted({key for run in runs for key in run.index.keys(("images",))})
    key = scrub.choose_key(keys)
    if key is None:
        return empty_model("The selected runs logged no images.")
    steps = sorted({step for run in runs for step in run.index.steps(key)})
    step = scrub.shown(steps)
    assert step is not None
    tiles = []
    for run in runs:
        found = run.index.at_or_before(key, step)
        if found is None or not found[1].images:
            tiles.append(TileModel(run.title, error=f"no {key} at or before step {step:,}"))
            continue
        at, item = found
        ref = item.images[0]
        caption = " · ".join(part for part in (run.title, f"step {at:,}", ref.caption) if part)
        tiles.append(image_tile(run.resolve, ref.path, caption))
    head = key_head(keys, key, f"images of {len(runs)} runs side by side")
    return MediaModel(head, scrubber(steps, step, scrub.step is None), "images", tiles=tuple(tiles))
