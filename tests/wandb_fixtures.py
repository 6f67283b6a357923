"""Fixtures with real W&B offline runs (see ``wandb_runs``).

The finished runs are session-scoped and made on first use, each under its
own ``WANDB_DIR`` in one shared temporary folder. ``live_run`` starts a
writer that is still logging, and stops it after the test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from wandb_runs import (
    BasicRun,
    CorruptedRun,
    HostileRun,
    ImageRun,
    KilledRun,
    LiveRun,
    MadeRun,
    SharedRun,
    make_alert_run,
    make_basic_run,
    make_console_run,
    make_corrupted_copy,
    make_failed_run,
    make_hostile_run,
    make_image_run,
    make_killed_run,
    make_shared_run,
)


@pytest.fixture(scope="session")
def wandb_runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("wandb-runs")


@pytest.fixture(scope="session")
def basic_run(wandb_runs_root: Path) -> BasicRun:
    return make_basic_run(wandb_runs_root / "basic")


@pytest.fixture(scope="session")
def image_run(wandb_runs_root: Path) -> ImageRun:
    return make_image_run(wandb_runs_root / "images")


@pytest.fixture(scope="session")
def console_run(wandb_runs_root: Path) -> MadeRun:
    return make_console_run(wandb_runs_root / "console")


@pytest.fixture(scope="session")
def failed_run(wandb_runs_root: Path) -> MadeRun:
    return make_failed_run(wandb_runs_root / "failed")


@pytest.fixture(scope="session")
def alert_run(wandb_runs_root: Path) -> MadeRun:
    return make_alert_run(wandb_runs_root / "alerts")


@pytest.fixture(scope="session")
def killed_run(wandb_runs_root: Path) -> KilledRun:
    return make_killed_run(wandb_runs_root / "killed")


@pytest.fixture(scope="session")
def corrupted_run(basic_run: BasicRun, wandb_runs_root: Path) -> CorruptedRun:
    return make_corrupted_copy(basic_run.wandb_path, wandb_runs_root / "corrupted")


@pytest.fixture(scope="session")
def hostile_run(wandb_runs_root: Path) -> HostileRun:
    return make_hostile_run(wandb_runs_root / "hostile")


@pytest.fixture(scope="session")
def shared_run(wandb_runs_root: Path) -> SharedRun:
    return make_shared_run(wandb_runs_root / "shared")


@pytest.fixture
def live_run(tmp_path: Path) -> Iterator[Callable[..., LiveRun]]:
    """Factory: ``live_run(**LiveRun options)`` starts a writer and returns it
    once its file exists; writers still running at teardown are killed."""
    started: list[LiveRun] = []

    def start(**options: Any) -> LiveRun:
        live = LiveRun(tmp_path / f"live{len(started)}", **options)
        started.append(live)
        live.start()
        return live

    yield start
    for live in started:
        live.close()
