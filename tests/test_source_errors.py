"""A source whose worker raises says so, on screen and to its listeners, and retries; the rest keeps working."""

from __future__ import annotations

import threading
import time
from contextlib import asynccontextmanager

from leet.config import Config
from leet.model.run import RunState
from leet.model.store import Store
from leet.sources.base import RunView, Source, WorkspaceView
from leet.sources.live import LiveSource
from leet.sources.run import RunSource
from leet.sources.shared import SharedRunSource, open_run
from leet.sources.workspace import WorkspaceSource
from leet.testing.demo import DemoRunSource
from leet.testing.workspace_demo import DemoWorkspace
from leet.ui.app import LeetApp
from leet.ui.screens.help import HelpScreen
from leet.ui.screens.run import RunScreen
from leet.ui.screens.workspace import WorkspaceScreen

SIZE = (160, 48)


class Boom(RuntimeError):
    pass


def _raise_on_second_step(source: RunSource) -> RunSource:
    """The first batch loads; the next one meets a bug."""
    step = source.step
    calls = []

    def broken_step() -> bool:
        calls.append(1)
        if len(calls) >= 2:
            raise Boom("the decoder met something new")
        return step()

    source.step = broken_step  # type: ignore[method-assign]
    return source


def _wait(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.01)


async def _until(pilot, condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        await pilot.pause(0.02)


def _row(app, name: str) -> str:
    return app.screen.query_one(f"#{name}").plain_rows()[0]


def test_every_source_keeps_the_contract(basic_run, tmp_path):
    store = Store()
    run = RunSource(basic_run.run_dir, store)
    shared = SharedRunSource([basic_run.wandb_path], store)
    live = LiveSource(store)
    workspace = WorkspaceSource(basic_run.run_dir.parent, store)
    for source in (run, shared, live, workspace):
        assert isinstance(source, Source), type(source).__name__
        assert source.error == ""
    assert isinstance(run, RunView) and isinstance(shared, RunView)
    assert isinstance(workspace, WorkspaceView)
    assert isinstance(DemoRunSource(Store(), clock=time.time), RunView)
    assert isinstance(DemoWorkspace((), Store(), clock=time.time), WorkspaceView)
    for source in (run, shared, workspace):
        source.close()


def test_a_reader_that_raises_reports_it_and_retries(basic_run):
    source = _raise_on_second_step(RunSource(basic_run.run_dir, Store(), poll_interval=0.01))
    heard = threading.Event()
    source.on_change(heard.set)
    source.start()
    _wait(lambda: source.error, "the error reported")
    assert source.running, "the worker retries"
    assert heard.is_set(), "listeners heard of it"
    assert source.error.startswith("reading failed, retrying in ")
    assert source.error.endswith(" s: Boom: the decoder met something new")
    snapshot = source.snapshot()
    assert not snapshot.stopped, "a reader that retries has not stopped: the screen says loading, not 'stopped at'"
    assert "Boom: the decoder met something new" in snapshot.error
    source.close()


def test_a_shared_run_reader_that_raises_reports_it(shared_run):
    source = open_run(shared_run.primary.run_dir, Store(), poll_interval=0.01)
    assert isinstance(source, SharedRunSource)
    writer = source.writers[1]
    writer.step = lambda: (_ for _ in ()).throw(Boom("secondary broke"))  # type: ignore[method-assign]
    source.start()
    _wait(lambda: writer.error, "the error reported")
    _wait(source.loaded, "the other writers read to the end")
    snapshot = source.snapshot()
    assert snapshot.stopped and "secondary broke" in snapshot.error
    assert source.running and source.error == "", "one writer's fault costs that writer, not the run"
    assert snapshot.state is not RunState.LOADING, "a stopped writer does not hold the run in loading"
    assert snapshot.records == sum(w.snapshot().records for w in source.writers) > 0
    source.close()


async def test_the_run_view_says_what_failed_and_keeps_answering_keys(basic_run, monkeypatch):
    monkeypatch.setattr("leet.sources.run.FIRST_BATCH", 100)  # part of the run, then the bug
    source = _raise_on_second_step(RunSource(basic_run.run_dir, Store(), poll_interval=0.01))
    source.hold_after_first_batch()
    app = LeetApp(source, Config(theme="textual-dark"), screen=lambda: RunScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "Boom" in _row(app, "header"), "the header names the failure")
        header = _row(app, "header")
        assert "⚠ reading failed, retrying in 1 s: Boom: the decoder met something new" in header
        assert "stopped at" not in header and "loading" in header, "a reader that retries may still read the rest"
        assert "reading failed, retrying in" in _row(app, "status"), "the status line says it too"
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen), "keys still work"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
    assert not source.running


async def test_the_workspace_says_when_a_scan_fails_and_recovers(basic_run):
    source = WorkspaceSource(basic_run.run_dir.parent, Store(), rescan=0.05)
    source.backoff_first = source.backoff_max = 0.05
    refresh = source.refresh
    failing = threading.Event()
    failing.set()

    def flaky_refresh() -> bool:
        if failing.is_set():
            raise PermissionError(13, "Permission denied", basic_run.run_dir.parent.name)  # short: the header has room for it
        return refresh()

    source.refresh()
    source.refresh = flaky_refresh  # type: ignore[method-assign]
    app = LeetApp(source, Config(theme="textual-dark"), screen=lambda: WorkspaceScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await _until(pilot, lambda: "scanning failed, retrying in 0.05 s: PermissionError" in _row(app, "header"), "the header names the failure")
        assert "Permission denied" in _row(app, "status")
        failing.clear()
        await _until(pilot, lambda: "scanning failed" not in _row(app, "header"), "the next good scan clears it")
        assert source.error == ""


@asynccontextmanager
async def _app_with(source, screen):
    app = LeetApp(source, Config(theme="textual-dark"), screen=screen)
    async with app.run_test(size=SIZE) as pilot:
        yield app, pilot


async def test_the_app_owns_what_it_attaches(basic_run):
    root = RunSource(basic_run.run_dir, Store(), poll_interval=0.01)
    other = RunSource(basic_run.run_dir, Store(), poll_interval=0.01)
    starts = []
    for source in (root, other):
        start = source.start
        source.start = lambda start=start, source=source: (starts.append(source), start())  # type: ignore[method-assign]
    async with _app_with(root, lambda: RunScreen(root)) as (app, pilot):
        await _until(pilot, lambda: root.running, "the root source started by the app")
        app.attach(other)
        app.attach(other)  # twice is once
        await _until(pilot, lambda: other.running, "an attached source started")
        app.detach(other)
        _wait(lambda: not other.running, "a detached source stopped")
    assert not root.running, "the app stopped the root source when it ended"
    assert starts.count(root) == 1 and starts.count(other) == 1


def test_a_read_error_clears_once_the_file_reads_again(basic_run, tmp_path):
    """An I/O error (a network filesystem hiccup) is said while it lasts; the reader goes on trying."""
    path = tmp_path / basic_run.wandb_path.name
    data = basic_run.wandb_path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    source = RunSource(path, Store())
    while not source.model.loaded:
        source.step()
    poll = source._reader.poll

    def flaky_poll(limit):
        raise OSError(5, "Input/output error")

    source._reader.poll = flaky_poll  # type: ignore[method-assign]
    assert source.step()
    assert "Input/output error" in source.snapshot().error
    assert not source.snapshot().stopped
    source._reader.poll = poll  # type: ignore[method-assign]
    with open(path, "ab") as handle:
        handle.write(data[len(data) // 2:])
    assert source.step()
    assert source.snapshot().error == ""
    assert source.snapshot().records > 0
    source.close()
