"""The monitor on fake hardware, and the run view on a made-up run: the same apps, made deterministic.

Tests, snapshots and the screenshot script all build their app here, so they
show the same machine and the same run. Nothing starts a thread: history is
fed synchronously from the fake collectors on a fake clock (or from synthetic
run events) before the first frame. Time labels follow the local time zone;
callers that need identical output everywhere set ``TZ=UTC``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from collectors.base import Collector
from collectors.fake import DEFAULT_START, FakeClock, make_fake_collectors, replay
from leet.config import Config
from leet.model.keys import join_label, split_label, system_key
from leet.model.run import RunModel, RunSnapshot, RunState, WriterStatus
from leet.model.store import Store
from leet.runfile.events import (
    ConsoleOutput,
    Environment,
    HistoryRow,
    RunExit,
    RunInfo,
    StatsRow,
    SummaryUpdate,
)
from leet.sources.base import Listeners
from leet.sources.live import LiveSource
from leet.ui.app import LeetApp

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


# -- the monitor on accelerator boxes -----------------------------------------------

# Why each backend a box lacks is absent, as the real collectors word it.
ABSENT_BACKENDS = {
    "nvidia": "no NVIDIA driver: libnvidia-ml.so.1 not found",
    "amd": "no AMD GPU driver: the amdgpu kernel module is not loaded",
    "tpu": "no Google TPU on the PCI bus",
    "trainium": "neuron-monitor is not installed (not on PATH, not at /opt/aws/neuron/bin/neuron-monitor)",
    "ipu": "gcipuinfo is not installed (it comes with Graphcore's Poplar SDK)",
    "apple": "not macOS on Apple silicon",
}
# box → (the backends it has, made by a function of the clock); the rest are absent.
ACCELERATOR_BOXES = ("mi300x", "tpu-v6e-4", "trn1.32xlarge", "nvidia-openmetrics")


def accelerator_collectors(box: str, clock: FakeClock, cores: int = 8) -> list[Collector]:
    """The fake host and the backends of one of ``ACCELERATOR_BOXES``, absent ones included, in the hub's order."""
    from collectors.fake import FakeGPUCollector, FakeHostCollector, MissingCollector
    from collectors.fake_accel import (
        FakeAMDCollector,
        FakeOpenMetricsCollector,
        FakeTPUCollector,
        FakeTrainiumCollector,
        RefusedEndpointCollector,
    )

    present: dict[str, Collector]
    extra: list[Collector] = []
    if box == "mi300x":
        present = {"amd": FakeAMDCollector(clock)}
    elif box == "tpu-v6e-4":
        present = {"tpu": FakeTPUCollector(clock)}
    elif box == "trn1.32xlarge":
        present = {"trainium": FakeTrainiumCollector(clock)}
    elif box == "nvidia-openmetrics":
        gpus = FakeGPUCollector(clock, count=4, uuids=True, processes=True)
        gpus.name = "nvidia"  # the backend it stands in for, as the backends list names it
        present = {"nvidia": gpus}
        extra = [FakeOpenMetricsCollector(clock, "node"), RefusedEndpointCollector("vllm")]
    else:
        raise ValueError(f"unknown accelerator box {box!r}; expected one of {', '.join(ACCELERATOR_BOXES)}")
    backends = [present.get(name) or MissingCollector(name, reason) for name, reason in ABSENT_BACKENDS.items()]
    return [FakeHostCollector(clock, cores=cores), *backends, *extra]


def make_accelerator_demo(
    box: str,
    *,
    samples: int = 120,
    interval: float = 2.0,
    grid: tuple[int, int] = (3, 3),
    theme: str = DEMO_THEME,
    start: float = DEFAULT_START,
) -> Demo:
    """Like ``make_demo``, on one of ``ACCELERATOR_BOXES``."""
    clock = FakeClock(start - (samples - 1) * interval if samples else start)
    collectors = accelerator_collectors(box, clock)
    source = LiveSource(Store())
    config = Config(interval=interval, theme=theme, grid_rows=grid[0], grid_cols=grid[1])
    app = LeetApp(source, config, clock=clock, live=False)
    demo = Demo(app, source, clock, collectors, interval)
    if samples:
        demo.feed(samples)
    return demo


# -- the run view on a made-up run ---------------------------------------------

DEMO_RUN_ID = "k3v9x2q7"
DEMO_RUN_FILE_BYTES = 2_416_640  # what a run file of this size would hold; shown in the header


class DemoRunSource(Listeners):
    """A run made of synthetic events, with the reading side of ``RunSource``.

    ``feed`` folds events in as the run source does (points to the store,
    the rest to a ``RunModel``); there is no file and no thread.
    """

    def __init__(self, store: Store, *, clock: Callable[[], float], file_size: int = 0, writers: tuple[WriterStatus, ...] = ()) -> None:
        super().__init__()
        self.store = store
        self.model = RunModel(loaded=True)
        self._clock = clock
        self._file_size = file_size
        self._writers = writers  # a shared run's writers, as the real source lists them

    @property
    def run_key(self) -> str:
        info = self.model.info
        return info.run_id if info is not None else DEMO_RUN_ID

    @property
    def system_key(self) -> str:
        return system_key(self.run_key)


    def start(self) -> None:
        pass

    def stop(self, timeout: float = 1.0) -> None:
        pass

    def feed(self, events: Iterable[Any]) -> None:
        """Fold ``events`` in, then tell listeners (a running app redraws)."""
        history: dict[str, tuple[list[float], list[float]]] = {}
        system: dict[str, tuple[list[float], list[float]]] = {}
        for event in events:
            label = None
            if isinstance(event, tuple):  # (node label, console output) of a shared run
                label, event = event
            elif self._writers and isinstance(event, ConsoleOutput):
                label = self._writers[0].label  # the primary's own lines
            if isinstance(event, HistoryRow):
                _add_points(history, float(event.step), event.values)
            elif isinstance(event, StatsRow):
                _add_points(system, event.timestamp, event.values)
            self.model.apply(event, label)
        self.store.extend_many(self.run_key, {(key, None): column for key, column in history.items()})
        self.store.extend_many(self.system_key, {split_label(key): column for key, column in system.items()})
        self._notify()

    def snapshot(self, console_lines: int = 2000) -> RunSnapshot:
        model = self.model
        snapshot = RunSnapshot.of(
            model,
            run_key=self.run_key,
            state=model.state(self._clock(), crash_after=600.0),
            file_size=self._file_size,
            run_id=self.run_key,
            console_lines=console_lines,
        )
        if not self._writers:
            return snapshot
        return replace(snapshot, labels=tuple(w.label for w in self._writers), writers=self._writers)


def _add_points(columns: dict[str, tuple[list[float], list[float]]], x: float, values: Any) -> None:
    for key, value in values.items():
        xs, ys = columns.setdefault(key, ([], []))
        xs.append(x)
        ys.append(value)


@dataclass
class RunDemo:
    """The run view on a made-up run, and its source (to feed it more)."""

    app: LeetApp
    source: DemoRunSource


def make_run_demo(
    *,
    steps: int = 300,
    seconds_per_step: float = 12.0,
    theme: str = DEMO_THEME,
    start: float = DEFAULT_START,
    nodes: int = 0,
    slow_node: int | None = None,
    labels: str | None = None,
) -> RunDemo:
    """A finished run of ``steps`` training steps from ``start``: metrics, two GPUs, console, exit 0.

    With ``nodes``, a shared run instead: that many nodes (``rank0``…) each
    write the system metrics and console lines under their label, and
    ``slow_node`` lags; ``labels`` is the node filter the view opens with.
    """
    from leet.ui.screens.run import RunScreen

    end = start + steps * seconds_per_step
    clock = FakeClock(end + 60.0)
    source = DemoRunSource(Store(), clock=clock, file_size=DEMO_RUN_FILE_BYTES, writers=demo_writers(nodes))
    source.feed(demo_run_events(steps, seconds_per_step, start, nodes=nodes, slow_node=slow_node))
    app = LeetApp(source, Config(theme=theme), clock=clock, live=False, screen=lambda: RunScreen(source, clock=clock, labels=labels))
    return RunDemo(app, source)


def demo_run_events(
    steps: int, seconds_per_step: float, start: float, *, nodes: int = 0, slow_node: int | None = None
) -> Iterator[Any]:
    """The events a W&B run file of a small image-classification run would hold, in file order.

    With ``nodes``, system metrics come from that many labelled nodes (see ``make_run_demo``).
    """
    config = {
        "model": {"arch": "resnet50", "depth": 50, "dropout": 0.1},
        "optimizer": "adamw",
        "lr": 3e-4,
        "batch_size": 256,
        "epochs": 30,
        "dataset": "cifar10",
    }
    yield RunInfo(
        run_id=DEMO_RUN_ID, entity="leet", project="cifar10-resnet", display_name="resnet50-adamw-lr3e-4",
        group="sweep-lr", job_type="train", host="gpu-node-07", tags=("baseline", "bf16"),
        notes="cosine schedule, warmup 20 steps", start_time=start, config=config,
    )
    yield Environment({
        "host": "gpu-node-07", "os": "Linux-6.8.0-49-generic-x86_64-with-glibc2.39", "python": "CPython 3.11.9",
        "program": "train.py", "cpu_count": 32, "cpu_count_logical": 64, "gpu_type": "NVIDIA H100 80GB HBM3",
        "gpu_count": 2, "cuda_version": "12.4",
    })
    yield ConsoleOutput("stdout", "loading cifar10 from /data/cifar10 (50,000 train, 10,000 test)\n", start)
    for node in range(1, nodes):
        yield (f"rank{node}", ConsoleOutput("stdout", f"NCCL INFO rank {node}/{nodes} ready on gpu-node-{7 + node:02d}\n", start + 0.1 * node))
        if node == slow_node:
            yield (f"rank{node}", ConsoleOutput("stderr", "warning: GPU 0 clocks throttled (power cap)\n", start + 0.5))
    yield ConsoleOutput("stderr", "UserWarning: TF32 matmul is enabled; results may differ slightly\n", start)
    stats_every = max(1, int(30 / seconds_per_step))
    epoch_steps = max(1, steps // 6)
    for step in range(steps):
        now = start + step * seconds_per_step
        yield HistoryRow(step, _demo_metrics(step, steps), now, now - start)
        if step % stats_every == 0:
            yield from _demo_stats(now, now - start, nodes, slow_node)
        if step % epoch_steps == epoch_steps - 1 or step == steps - 1:
            epoch = step // epoch_steps
            yield from _demo_progress(epoch, now)
            loss = _demo_metrics(step, steps)["loss"]
            yield ConsoleOutput("stdout", f"epoch {epoch} step {step} loss {loss:.4f}\n", now)
    end = start + steps * seconds_per_step
    yield ConsoleOutput("stdout", "saved checkpoint to checkpoints/last.pt\n", end)
    final = _demo_metrics(steps - 1, steps)
    yield SummaryUpdate({**final, "best_acc": 0.9412, "_step": steps - 1, "_runtime": end - start, "_timestamp": end})
    yield RunExit(exit_code=0, runtime=end - start)


def demo_writers(nodes: int) -> tuple[WriterStatus, ...]:
    """The writers of the made-up shared run: one directory each, as the SDK names them."""
    root = Path("/data/wandb")
    return tuple(
        WriterStatus(
            label=f"rank{node}", state=RunState.FINISHED, primary=node == 0,
            file=root / f"offline-run-20261114_194300-{DEMO_RUN_ID}{'-' + str(node) if node else ''}" / f"run-{DEMO_RUN_ID}.wandb",
            exit_code=0, records=1200 if node else 9800,
        )
        for node in range(nodes)
    )


def _demo_metrics(step: int, steps: int) -> dict[str, float]:
    progress = step / max(1, steps - 1)
    warmup = min(1.0, (step + 1) / 20)
    wobble = 0.04 * math.sin(step * 0.9) + 0.02 * math.sin(step * 2.3)
    loss = 2.3 * math.exp(-4.0 * progress) + 0.18 + wobble
    values = {
        "loss": loss,
        "acc": 0.94 - 0.84 * math.exp(-5.0 * progress) + wobble / 4,
        "lr": 3e-4 * warmup * 0.5 * (1 + math.cos(math.pi * progress)),
        "grad_norm": 4.0 * math.exp(-3.0 * progress) + 0.6 + 0.3 * abs(math.sin(step * 0.7)),
        "samples_per_sec": 5200 + 180 * math.sin(step * 0.31) - (900 if step % 50 == 49 else 0),
        "epoch": step / max(1, steps // 6),
    }
    if step % 25 == 24:
        values["eval/loss"] = loss * 1.08 + 0.05
        values["eval/acc"] = values["acc"] - 0.02
    return values


def _demo_stats(now: float, elapsed: float, nodes: int, slow_node: int | None) -> Iterator[StatsRow]:
    if not nodes:
        yield StatsRow(now, _demo_system(elapsed))
        return
    for node in range(nodes):
        # Each node samples on its own clock, a little after the one before.
        at = now + 1.3 * node
        values = _demo_system(elapsed + 1.3 * node, phase=0.9 * node, slow=node == slow_node)
        yield StatsRow(at, {join_label(key, f"rank{node}"): value for key, value in values.items()})


def _demo_system(elapsed: float, phase: float = 0.0, slow: bool = False) -> dict[str, float]:
    values = {
        "cpu": 310 + 40 * math.sin(elapsed / 170),
        "memory_percent": 38 + 6 * (1 - math.exp(-elapsed / 600)),
        "proc.memory.rssMB": 11800 + 900 * (1 - math.exp(-elapsed / 400)),
        "network.sent": 2.1e6 * elapsed,
        "network.recv": 9.5e6 * elapsed,
        "disk./.usagePercent": 61 + elapsed / 3600,
    }
    for gpu in (0, 1):
        gpu_phase = phase + gpu * 1.7
        values[f"gpu.{gpu}.gpu"] = (41 if slow else 91) + 6 * math.sin(elapsed / 90 + gpu_phase)
        values[f"gpu.{gpu}.memoryAllocated"] = 71 + 3 * gpu + 2 * math.sin(elapsed / 400 + gpu_phase)
        values[f"gpu.{gpu}.temp"] = 58 + 12 * (1 - math.exp(-elapsed / 500)) + 1.5 * math.sin(elapsed / 60 + gpu_phase)
        values[f"gpu.{gpu}.powerWatts"] = (330 if slow else 560) + 60 * math.sin(elapsed / 75 + gpu_phase)
    return values


def _demo_progress(epoch: int, now: float) -> Iterator[ConsoleOutput]:
    """A tqdm-style bar that redraws itself with carriage returns."""
    for done in range(0, 101, 10):
        bar = "█" * (done // 5)
        yield ConsoleOutput("stdout", f"\rEpoch {epoch}: {done:3d}%|{bar:<20}| {done * 196 // 100}/196", now)
    yield ConsoleOutput("stdout", "\n", now)
