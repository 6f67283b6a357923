"""The monitor on fake hardware: the same app, made deterministic.

Tests, snapshots and the screenshot script all build their app here, so they
show the same machine. Nothing starts a thread: history is fed synchronously
from the fake collectors on a fake clock, before the first frame. Time labels
follow the local time zone; callers that need identical output everywhere set
``TZ=UTC``.
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.base import Collector
from collectors.fake import DEFAULT_START, FakeClock, make_fake_collectors, replay
from leet.app import LeetApp
from leet.config import Config
from leet.sources import LiveSource
from leet.store import Store

DEMO_THEME = "textual-dark"


@dataclass
class Demo:
    """An app wired to fake collectors, and the handles to feed it more."""

    app: LeetApp
    source: LiveSource
    clock: FakeClock
    collectors: list[Collector]
    interval: float

    def feed(self, count: int) -> None:
        """Ingest ``count`` more samples, one interval apart, after the last one.

        A running app hears of them as it would from the hub and redraws.
        """
        span = self.source.time_span
        start = self.clock() if span is None else span[1] + self.interval
        for sample in replay(self.collectors, self.clock, start, self.interval, count):
            self.source.ingest(sample)


def make_demo(
    *,
    gpus: int = 0,
    cores: int = 8,
    samples: int = 120,
    interval: float = 2.0,
    grid: tuple[int, int] = (3, 3),
    sidebar: bool = True,
    theme: str = DEMO_THEME,
    start: float = DEFAULT_START,
) -> Demo:
    """A ``Demo`` whose store already holds ``samples`` sweeps ending at ``start``."""
    history_start = start - (samples - 1) * interval if samples else start
    clock = FakeClock(history_start)
    collectors = make_fake_collectors(clock, gpus=gpus, cores=cores)
    source = LiveSource(Store())
    config = Config(interval=interval, theme=theme, grid_rows=grid[0], grid_cols=grid[1], sidebar=sidebar)
    app = LeetApp(source, config, clock=clock, live=False)
    demo = Demo(app, source, clock, collectors, interval)
    if samples:
        demo.feed(samples)
    return demo
