"""The workspace view on a made-up folder of runs: the same on every machine.

Snapshots and screenshots build it here. ``DemoWorkspace`` reads like a
``WorkspaceSource``: a fixed list of runs in every state, in W&B groups
and job types, one of them a shared run with four writers, and a selection
that folds each run's synthetic history into the store at once; no files,
no threads, a fixed clock. Start times are shown in local time; callers
that need identical output everywhere set ``TZ=UTC``.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Callable, Iterator, Sequence

from collectors.fake import DEFAULT_START, FakeClock
from leet.alerts.alert_tail import RunAlerts
from leet.config import Config
from leet.discovery.probe import RunEntry
from leet.model.run import CRASH_AFTER, RunModel, RunSnapshot, RunState
from leet.model.store import Store
from leet.runfile.events import HistoryRow, RunExit, RunInfo, SummaryUpdate
from leet.sources.base import Listeners
from leet.ui.app import LeetApp

DEMO_THEME = "textual-dark"
DEMO_PROJECT = "cifar10-resnet"
SECONDS_PER_STEP = 12.0
PLANNED_STEPS = 300
EVAL_EVERY = 25


DEMO_ROOT = PurePosixPath("/home/ada/cifar10/wandb")  # shown only: it exists nowhere


@dataclass(frozen=True)
class DemoRunSpec:
    """One made-up run: who it is, how far it got, and how it ended."""

    run_id: str
    name: str
    group: str
    lr: float
    steps: int  # steps logged
    hours_ago: float  # when it started, before the demo's now
    state: RunState
    exit_code: int | None = None
    job_type: str = "train"
    labels: tuple[str, ...] = ()  # node labels of a shared-mode run's writers, the primary's first


RANKS = ("rank0", "rank1", "rank2", "rank3")

# Newest first. The workspace also selects its newest run at start: a run newer than the first would join the overlay.
DEMO_RUNS: tuple[DemoRunSpec, ...] = (
    DemoRunSpec("q7m2x9ka", "resnet50-adamw-lr5e-4", "sweep", 5e-4, 180, 0.65, RunState.RUNNING),
    DemoRunSpec("d4x8m2wr", "ddp-r50-4gpu", "ddp", 3e-4, 120, 1.2, RunState.RUNNING, labels=RANKS),
    DemoRunSpec("e5v1c3qa", "eval-lr3e-4", "sweep", 3e-4, 50, 2.1, RunState.FINISHED, 0, job_type="eval"),
    DemoRunSpec("k3v9x2q7", "resnet50-adamw-lr3e-4", "sweep", 3e-4, 300, 2.5, RunState.FINISHED, 0),
    DemoRunSpec("p4d8w1zn", "vit-s16-adamw-lr3e-4", "vit", 3e-4, 95, 4.0, RunState.CRASHED),
    DemoRunSpec("b6t3r8yc", "resnet50-adamw-lr1e-2", "sweep", 1e-2, 60, 6.0, RunState.FAILED, 1),
    DemoRunSpec("s8g2k6pt", "smoke-test", "", 1e-3, 10, 7.0, RunState.FINISHED, 0, job_type=""),
    DemoRunSpec("h2n5c7ve", "resnet50-adamw-lr1e-3", "sweep", 1e-3, 300, 8.5, RunState.FINISHED, 0),
    DemoRunSpec("f9j4s6ud", "resnet50-adamw-lr1e-4", "sweep", 1e-4, 300, 11.0, RunState.FINISHED, 0),
)
DEMO_SELECTED = ("q7m2x9ka", "k3v9x2q7")  # the running run and the best finished one


class DemoRun:
    """One run's events folded into a ``RunModel``: what the workspace overlays of a selected run."""

    def __init__(self, key: str, spec: DemoRunSpec, start: float, now: float, *, clock: Callable[[], float]) -> None:
        self.key = key
        self.spec = spec
        self._clock = clock
        self.history: dict[str, tuple[list[float], list[float]]] = {}
        self.model = RunModel(loaded=True)
        for event in run_events(spec, start):
            if isinstance(event, HistoryRow):
                for name, value in event.values.items():
                    steps, values = self.history.setdefault(name, ([], []))
                    steps.append(float(event.step))
                    values.append(value)
            self.model.apply(event)
        self.end = start + spec.steps * SECONDS_PER_STEP
        # A running run wrote a moment ago; a crashed one went quiet at its last step.
        self.model.last_growth = now - 5.0 if spec.state is RunState.RUNNING else self.end
        self.file_size = 4096 + 310 * spec.steps

    def snapshot(self, console_lines: int = 2000) -> RunSnapshot:
        model = self.model
        return RunSnapshot.of(
            model,
            run_key=self.key,
            state=model.state(self._clock(), CRASH_AFTER),
            file_size=self.file_size,
            run_id=self.spec.run_id,
            console_lines=0,
        )


class DemoWorkspace(Listeners):
    """A folder of made-up runs with the reading side of ``WorkspaceSource``."""

    def __init__(self, specs: Sequence[DemoRunSpec], store: Store, *, clock: Callable[[], float], root: PurePosixPath = DEMO_ROOT) -> None:
        super().__init__()
        self.root = root
        self.store = store
        self._runs: dict[str, DemoRun] = {}
        self._entries: list[RunEntry] = []
        self._selected: list[str] = []
        now = clock()
        for spec in specs:
            start = now - spec.hours_ago * 3600
            key = f"offline-run-{dt.datetime.fromtimestamp(start, dt.timezone.utc):%Y%m%d_%H%M%S}-{spec.run_id}"
            run = DemoRun(key, spec, start, now, clock=clock)
            self._runs[key] = run
            self._entries.append(_entry(run, root / key, start))
        self._entries.sort(key=lambda entry: (entry.start_time, entry.key), reverse=True)

    def key_of(self, run_id: str) -> str:
        return next(key for key, run in self._runs.items() if run.spec.run_id == run_id)

    def refresh(self) -> bool:
        return False

    def entries(self) -> list[RunEntry]:
        return list(self._entries)

    def alerts(self) -> dict[str, RunAlerts]:
        return {}  # made-up runs write no alert records

    def selected(self) -> list[str]:
        return list(self._selected)

    def source(self, key: str) -> DemoRun | None:
        return self._runs[key] if key in self._selected else None

    def select(self, key: str) -> DemoRun | None:
        run = self._runs.get(key)
        if run is None or key in self._selected:
            return self.source(key)
        self.store.extend_many(key, {(metric, None): column for metric, column in run.history.items()})
        self._selected.append(key)
        self._notify()
        return run

    def deselect(self, key: str) -> None:
        if key in self._selected:
            self._selected.remove(key)
            self.store.drop_run(key)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


def _entry(run: DemoRun, directory: PurePosixPath, start: float) -> RunEntry:
    spec = run.spec
    # A shared-mode run's secondary writers get the primary's directory name with -1, -2, … appended.
    directories = [directory] + [directory.with_name(f"{directory.name}-{n}") for n in range(1, len(spec.labels))]
    files = tuple(folder / f"run-{spec.run_id}.wandb" for folder in directories)
    return RunEntry(
        key=run.key,
        directory=directory,  # type: ignore[arg-type]  # shown, never opened
        file=files[0],  # type: ignore[arg-type]
        files=files,  # type: ignore[arg-type]
        labels=spec.labels,
        run_id=spec.run_id,
        name=spec.name,
        project=DEMO_PROJECT,
        group=spec.group,
        job_type=spec.job_type,
        start_time=start,
        state=spec.state,
        exit_code=spec.exit_code,
        size=run.file_size,
        mtime=run.model.last_growth,
    )


@dataclass
class WorkspaceDemo:
    app: LeetApp
    source: DemoWorkspace


def make_workspace_demo(
    *,
    specs: Sequence[DemoRunSpec] = DEMO_RUNS,
    selected: Sequence[str] = DEMO_SELECTED,
    theme: str = DEMO_THEME,
    now: float = DEFAULT_START,
) -> WorkspaceDemo:
    """The workspace view over ``specs`` at ``now``, with the runs ``selected`` (run ids) overlaid in that order."""
    from leet.ui.screens.workspace import WorkspaceScreen

    clock = FakeClock(now)
    source = DemoWorkspace(specs, Store(), clock=clock)
    for run_id in selected:
        source.select(source.key_of(run_id))
    app = LeetApp(source, Config(theme=theme), clock=clock, live=False, screen=lambda: WorkspaceScreen(source, clock=clock))
    return WorkspaceDemo(app, source)


# -- the made-up history --------------------------------------------------------


def run_events(spec: DemoRunSpec, start: float) -> Iterator[Any]:
    """What the run's file would hold: identity, one history row a step, the summary, the exit."""
    config = {"model": {"arch": spec.name.split("-")[0]}, "optimizer": "adamw", "lr": spec.lr, "batch_size": 256}
    yield RunInfo(
        run_id=spec.run_id, entity="leet", project=DEMO_PROJECT, display_name=spec.name, group=spec.group,
        job_type=spec.job_type, host="gpu-node-07", start_time=start, config=config,
    )
    values: dict[str, float] = {}
    for step in range(spec.steps):
        values = metrics(spec, step)
        yield HistoryRow(step, values, start + step * SECONDS_PER_STEP, step * SECONDS_PER_STEP)
    runtime = spec.steps * SECONDS_PER_STEP
    yield SummaryUpdate({**values, "_step": spec.steps - 1, "_runtime": runtime})
    if spec.exit_code is not None:
        yield RunExit(exit_code=spec.exit_code, runtime=runtime)


def metrics(spec: DemoRunSpec, step: int) -> dict[str, float]:
    """Smooth curves whose speed and floor depend on the learning rate; a failed run diverges."""
    progress = step / (PLANNED_STEPS - 1)
    distance = abs(math.log10(spec.lr / 3e-4))  # best near 3e-4: slower below it, noisier above it
    speed = 4.5 - 1.6 * distance
    seed = sum(map(ord, spec.run_id)) % 17
    wobble = (0.03 + 0.03 * distance) * math.sin(step * 0.9 + seed) + 0.015 * math.sin(step * 2.3 + seed)
    diverged = 0.04 * math.exp((step - 35) / 6.0) if spec.state is RunState.FAILED and step > 35 else 0.0
    loss = 2.3 * math.exp(-speed * progress) + 0.18 + 0.12 * distance + wobble + diverged
    acc = 0.96 - 0.1 * distance - 0.86 * math.exp(-1.2 * speed * progress) + wobble / 4 - diverged / 5
    warmup = min(1.0, (step + 1) / 20)
    values = {
        "loss": loss,
        "acc": max(0.1, min(0.99, acc)),
        "lr": spec.lr * warmup * 0.5 * (1 + math.cos(math.pi * progress)),
        "grad_norm": 3.5 * math.exp(-3.0 * progress) + 0.5 + 0.25 * abs(math.sin(step * 0.7 + seed)) + 2 * diverged,
    }
    if step % EVAL_EVERY == EVAL_EVERY - 1:
        values["val/loss"] = loss * 1.08 + 0.05
        values["val/acc"] = values["acc"] - 0.02
    return values
