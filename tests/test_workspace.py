"""A folder of real W&B runs: finding them, telling their state, loading the chosen ones.

One workspace is made per session (``workspace``): the real SDK writes a
finished run, a failed run, a killed run (copied in with an old file time,
so it reads as presumed crashed) and a shared run whose two writers got
``…-ID`` and ``…-ID-1`` directories, all in one ``wandb`` folder. Tests that
change a folder work on copies.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from wandb_runs import (
    BasicRun,
    KilledRun,
    MadeRun,
    SharedRun,
    make_basic_run,
    make_failed_run,
    make_killed_run,
    make_shared_run,
)

from leet.discovery.probe import probe
from leet.model.run import CRASH_AFTER, RunState
from leet.model.store import SeriesKey, Store
from leet.runfile.folders import is_workspace, run_files, workspace_root
from leet.sources.workspace import WorkspaceSource

WAIT = 20.0  # seconds a run may take to load on a loaded machine


@dataclass(frozen=True)
class Workspace:
    root: Path  # what a person passes to ``leet``: it holds ``wandb/``
    basic: BasicRun
    failed: MadeRun
    killed: KilledRun
    shared: SharedRun
    shared_dirs: tuple[Path, Path]  # ``…-ID`` and ``…-ID-1``
    made_after: float  # wall time before the first writer started

    @property
    def runs(self) -> Path:
        return self.root / "wandb"

    @property
    def secondary(self) -> Path:
        """The ``…-ID-1`` directory: its file is ``run-ID.wandb``, not ``run-ID-1.wandb``."""
        return self.shared_dirs[1]


_made: list[Workspace] = []


def make_workspace(root: Path, scratch: Path) -> Workspace:
    """The runs written side by side; the basic run starts last, so it is the newest."""
    made_after = time.time()
    with ThreadPoolExecutor(3) as pool:
        shared = pool.submit(make_shared_run, root, writers=2, steps=5)
        failed = pool.submit(make_failed_run, root)
        killed = pool.submit(make_killed_run, scratch)
        shared_run, failed_run, killed_run = shared.result(), failed.result(), killed.result()
    basic = make_basic_run(root)
    return Workspace(root, basic, failed_run, _crashed_copy(killed_run, root / "wandb"), shared_run, _same_second(shared_run), made_after)


def _crashed_copy(killed: KilledRun, runs: Path) -> KilledRun:
    """The killed run copied in, last written long ago.

    A copy, so that nothing the killed writer left behind can touch the file
    (or its time) after this.
    """
    run_dir = copy_run(killed.run_dir, runs)
    wandb_path = run_dir / killed.wandb_path.name
    old = time.time() - CRASH_AFTER - 3600
    os.utime(wandb_path, (old, old))
    return replace(killed, root=runs.parent, run_dir=run_dir, wandb_path=wandb_path)


def _same_second(shared: SharedRun) -> tuple[Path, Path]:
    """The writers' directories as writers starting in the same second name them (``…-ID``, ``…-ID-1``).

    Two writers usually start within one second; when they did not, the later
    directory gets the name it would have had.
    """
    first, second = sorted(writer.run_dir for writer in shared.writers)
    wanted = first.with_name(first.name + "-1")
    if second != wanted:
        second.rename(wanted)
    return first, wanted


def session_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The session's folder of runs, made on first use; the screen tests share it."""
    if not _made:
        _made.append(make_workspace(tmp_path_factory.mktemp("workspace"), tmp_path_factory.mktemp("killed-writer")))
    return _made[0]


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return session_workspace(tmp_path_factory)


def copy_run(run_dir: Path, runs: Path, *, name: str | None = None) -> Path:
    target = runs / (name or run_dir.name)
    shutil.copytree(run_dir, target, symlinks=True)
    return target


def wait_for(condition, what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what} after {timeout:.0f} s")
        time.sleep(0.02)


def entries_by_key(source: WorkspaceSource) -> dict:
    return {entry.key: entry for entry in source.entries()}


# -- finding runs ----------------------------------------------------------------


def test_every_run_directory_is_found_by_the_run_file_inside(workspace):
    found = dict(run_files(workspace.runs))
    expected = {
        workspace.basic.run_dir.name: workspace.basic.wandb_path.name,
        workspace.failed.run_dir.name: workspace.failed.wandb_path.name,
        workspace.killed.run_dir.name: workspace.killed.wandb_path.name,
        workspace.shared_dirs[0].name: f"run-{workspace.shared.run_id}.wandb",
        workspace.secondary.name: f"run-{workspace.shared.run_id}.wandb",
    }
    assert {name: file.name for name, file in found.items()} == expected, "latest-run and the debug logs are not runs"
    assert found[workspace.secondary.name] == workspace.secondary / f"run-{workspace.shared.run_id}.wandb"
    assert all(file.parent == workspace.runs / name for name, file in found.items())


def test_the_folder_and_its_parent_are_workspaces_but_a_run_is_not(workspace, tmp_path):
    assert is_workspace(workspace.runs)
    assert is_workspace(workspace.root), "a folder with a wandb/ child of runs"
    assert workspace_root(workspace.root) == workspace.runs
    assert not is_workspace(workspace.basic.run_dir)
    assert not is_workspace(workspace.basic.wandb_path)
    assert not is_workspace(tmp_path)
    assert not is_workspace(tmp_path / "missing")


# -- what the list says about each run ---------------------------------------------


def test_probe_tells_finished_failed_and_presumed_crashed(workspace):
    source = WorkspaceSource(workspace.root)
    assert source.refresh()
    entries = entries_by_key(source)
    assert len(entries) == 4, "the shared run's two writers are one run"
    basic = entries[workspace.basic.run_dir.name]
    assert (basic.state, basic.exit_code) == (RunState.FINISHED, 0)
    failed = entries[workspace.failed.run_dir.name]
    assert (failed.state, failed.exit_code) == (RunState.FAILED, 3)
    killed = entries[workspace.killed.run_dir.name]
    assert (killed.state, killed.exit_code) == (RunState.CRASHED, None)
    assert killed.state.value == "presumed crashed"
    shared = entries[workspace.shared_dirs[0].name]
    assert shared.state is RunState.FINISHED
    assert shared.writers == 2 and set(shared.files) == {d / f"run-{workspace.shared.run_id}.wandb" for d in workspace.shared_dirs}
    assert shared.labels == ("rank0", "rank1")
    primary = workspace.shared.primary.run_dir / f"run-{workspace.shared.run_id}.wandb"
    assert shared.files[0] == primary, "the primary writer comes first"
    assert not any(entry.error for entry in entries.values())


def test_probe_reads_who_the_run_is_and_when_it_started(workspace):
    entry = probe(workspace.basic.run_dir.name, workspace.basic.wandb_path, time.time())
    basic = workspace.basic
    assert (entry.run_id, entry.name, entry.project, entry.group, entry.job_type) == (basic.run_id, basic.name, "leet-tests", basic.group, basic.job_type)
    assert entry.title == basic.name
    assert entry.directory == basic.run_dir and entry.file == basic.wandb_path
    assert workspace.made_after - 1 <= entry.start_time <= entry.mtime
    assert entry.size == basic.wandb_path.stat().st_size


def test_the_secondary_writer_directory_is_the_shared_run(workspace):
    entry = probe(workspace.secondary.name, workspace.secondary / f"run-{workspace.shared.run_id}.wandb", time.time())
    assert entry.run_id == workspace.shared.run_id
    assert entry.title == workspace.shared.run_id, "no display name offline: the list shows the id"
    assert entry.state is RunState.FINISHED and not entry.error


def test_a_run_without_an_exit_record_is_running_until_its_file_goes_quiet(workspace, tmp_path):
    copy = copy_run(workspace.killed.run_dir, tmp_path)
    file = copy / workspace.killed.wandb_path.name
    os.utime(file)  # written just now
    written = file.stat().st_mtime
    fresh = probe(copy.name, file, written + 5)
    assert (fresh.state, fresh.exit_code) == (RunState.RUNNING, None)
    assert fresh.live and fresh.run_id == workspace.killed.run_id
    assert probe(copy.name, file, written + CRASH_AFTER + 1).state is RunState.CRASHED


def test_an_unreadable_run_file_is_listed_with_its_error(tmp_path):
    run_dir = tmp_path / "offline-run-20240101_000000-broken"
    run_dir.mkdir()
    (run_dir / "run-broken.wandb").write_bytes(b"not a run file at all" * 10)
    entry = probe(run_dir.name, run_dir / "run-broken.wandb", time.time())
    assert entry.state is RunState.UNKNOWN and entry.error
    assert entry.title == run_dir.name


# -- rescanning ----------------------------------------------------------------------


def test_refresh_lists_new_run_directories_and_drops_removed_ones(workspace, tmp_path):
    runs = tmp_path / "wandb"
    copy_run(workspace.basic.run_dir, runs)
    failed = copy_run(workspace.failed.run_dir, runs)
    source = WorkspaceSource(tmp_path)
    assert source.refresh()
    assert set(entries_by_key(source)) == {workspace.basic.run_dir.name, failed.name}
    assert not source.refresh(), "nothing changed"

    copy_run(workspace.killed.run_dir, runs)
    assert source.refresh()
    assert workspace.killed.run_dir.name in entries_by_key(source)

    shutil.rmtree(failed)
    assert source.refresh()
    assert set(entries_by_key(source)) == {workspace.basic.run_dir.name, workspace.killed.run_dir.name}


def test_runs_are_listed_newest_first(workspace):
    source = WorkspaceSource(workspace.runs)
    source.refresh()
    entries = source.entries()
    assert entries[0].key == workspace.basic.run_dir.name, "the basic run started last"
    starts = [entry.start_time for entry in entries]
    assert starts == sorted(starts, reverse=True)


def test_the_worker_rescans_and_tells_listeners(workspace, tmp_path):
    runs = tmp_path / "wandb"
    copy_run(workspace.failed.run_dir, runs)
    source = WorkspaceSource(tmp_path, rescan=0.05)
    heard = threading.Event()
    source.on_change(heard.set)
    source.start()
    try:
        wait_for(heard.is_set, "the first scan")
        heard.clear()
        copy_run(workspace.basic.run_dir, runs)
        wait_for(heard.is_set, "the rescan that finds the new run")
        assert workspace.basic.run_dir.name in entries_by_key(source)
    finally:
        source.stop()


# -- selecting ------------------------------------------------------------------------


def test_select_loads_the_run_into_the_store_and_deselect_drops_it(workspace):
    source = WorkspaceSource(workspace.root, Store())
    source.refresh()
    key = workspace.basic.run_dir.name
    heard = threading.Event()
    source.on_change(heard.set)
    run = source.select(key)
    try:
        assert run is not None and source.select(key) is run, "selecting twice loads once"
        assert source.selected() == [key] and source.source(key) is run
        wait_for(lambda: run.snapshot().state is RunState.FINISHED, "the run to load")
        assert heard.is_set(), "listeners hear the run load"
        series = source.store.series(key)
        assert {SeriesKey(key, name, None) for name in ("loss", "acc", "lr", "eval.loss")} <= set(series)
        assert source.store.series(key + "#system"), "its system metrics too"
        data = source.store.snapshot([SeriesKey(key, "acc", None)])[SeriesKey(key, "acc", None)]
        assert len(data.t) == workspace.basic.steps
    finally:
        source.deselect(key)
    assert source.selected() == [] and source.source(key) is None
    assert source.store.series(key) == [] and source.store.series(key + "#system") == []


def test_two_writers_of_one_run_load_as_one_merged_run(workspace):
    source = WorkspaceSource(workspace.runs, Store())
    source.refresh()
    key = workspace.shared_dirs[0].name
    run = source.select(key)
    try:
        wait_for(lambda: run.snapshot().state is RunState.FINISHED, "both writers' files to load")
        snapshot = run.snapshot()
        assert source.selected() == [key] and snapshot.run_id == workspace.shared.run_id
        assert snapshot.labels == ("rank0", "rank1") and len(snapshot.writers) == 2
        assert [writer.primary for writer in snapshot.writers] == [True, False]
        assert {s.key for s in source.store.series(key)} == {"loss"}, "history comes from the primary only"
        labels = {s.label for s in source.store.series(key + "#system")}
        assert labels == {"rank0", "rank1"}, "system metrics from every writer, each under its label"
        console = [(line.label, line.text) for line in snapshot.console]
        assert ("rank0", "hello from rank0") in console and ("rank1", "hello from rank1") in console
    finally:
        source.stop()
        source.deselect(key)
    assert source.store.series(key + "#system") == []


def test_selecting_a_run_deleted_since_the_scan_does_nothing(workspace, tmp_path):
    copy = copy_run(workspace.failed.run_dir, tmp_path / "wandb")
    source = WorkspaceSource(tmp_path)
    source.refresh()
    shutil.rmtree(copy)
    assert source.select(copy.name) is None
    assert source.selected() == []


def test_a_selected_run_whose_directory_is_removed_is_deselected(workspace, tmp_path):
    runs = tmp_path / "wandb"
    copy_run(workspace.basic.run_dir, runs)
    failed = copy_run(workspace.failed.run_dir, runs)
    source = WorkspaceSource(tmp_path, Store())
    source.refresh()
    run = source.select(failed.name)
    wait_for(lambda: run.snapshot().state is RunState.FAILED, "the run to load")
    shutil.rmtree(failed)
    assert source.refresh()
    assert source.selected() == [], "a run no longer listed cannot stay selected (its row is gone)"
    assert source.store.series(failed.name) == []


# -- the command line -------------------------------------------------------------------


@pytest.fixture
def opened(monkeypatch):
    """What ``leet.cli.main`` would show: the app's source and screen, without a terminal."""
    from leet.ui.app import LeetApp

    shown: list[tuple[object, object]] = []

    def run(app, **_options):
        shown.append((app.source, app._make_screen()))

    monkeypatch.setattr(LeetApp, "run", run)
    monkeypatch.setenv("LEET_CONFIG", "")
    return shown


def test_leet_dir_opens_the_workspace_or_the_run_view(workspace, opened, monkeypatch):
    from leet import cli
    from leet.sources.run import RunSource
    from leet.sources.shared import SharedRunSource
    from leet.ui.screens.run import RunScreen
    from leet.ui.screens.workspace import WorkspaceScreen

    for path in (workspace.root, workspace.runs):
        assert cli.main([str(path)]) == 0
        source, screen = opened.pop()
        assert isinstance(source, WorkspaceSource) and isinstance(screen, WorkspaceScreen)
        assert source.root == workspace.runs
        assert len(source.entries()) == 4, "listed before the first frame"
    for path in (workspace.basic.run_dir, workspace.basic.wandb_path):
        assert cli.main([str(path)]) == 0
        source, screen = opened.pop()
        assert isinstance(source, RunSource) and isinstance(screen, RunScreen)
    assert cli.main([str(workspace.secondary), "--label", "rank1"]) == 0
    source, screen = opened.pop()
    assert isinstance(source, SharedRunSource) and isinstance(screen, RunScreen), "any writer's directory opens the whole run"
    assert source.path.parent == workspace.shared.primary.run_dir and screen.labels.patterns == ("rank1",)
    monkeypatch.chdir(workspace.root)
    assert cli.main([]) == 0, "leet alone, where ./wandb holds runs"
    source, screen = opened.pop()
    assert isinstance(screen, WorkspaceScreen) and source.root.resolve() == workspace.runs.resolve()
