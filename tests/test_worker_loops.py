"""Every worker loop goes on after a step raises: the failure is said, retried with backoff, and cleared once a step works."""

from __future__ import annotations

import threading
import time

from leet.alerts.follow import Follower
from leet.alerts.ledger import Ledger
from leet.alerts.settings import AlertSettings
from leet.commands.watch import Watch
from leet.common.retry import backoff
from leet.model.store import Store
from leet.sources.cluster import ClusterSource
from leet.sources.prometheus_api import PrometheusClient, endpoint
from leet.sources.run import RunSource
from leet.sources.workspace import WorkspaceSource

SMALL = 0.01  # seconds before the first retry, in tests


class Boom(RuntimeError):
    pass


def _wait(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.01)


def _raising_once(step, result=None):
    """``step`` that raises Boom on its second call, then works again; ``calls`` counts the calls."""
    calls: list[int] = []

    def flaky(*args):
        calls.append(1)
        if len(calls) == 2:
            raise Boom("met something new")
        return step(*args) if result is None else result

    flaky.calls = calls  # type: ignore[attr-defined]
    return flaky


def _errors_heard(source) -> list[str]:
    heard: list[str] = []
    source.on_change(lambda: heard.append(source.error))
    return heard


def _goes_on(source, flaky, activity: str) -> None:
    heard = _errors_heard(source)
    source.backoff_first = SMALL
    source.start()
    try:
        _wait(lambda: any(heard), "the failure told to the listeners")
        assert next(e for e in heard if e) == f"{activity} failed, retrying in {SMALL:g} s: Boom: met something new"
        _wait(lambda: len(flaky.calls) >= 4 and source.error == "", "later steps ran and cleared the error")
        assert heard[-1] == "", "the listeners heard the error clear"
        assert source.running, "the worker goes on"
    finally:
        source.close()


def test_the_backoff_doubles_up_to_its_most():
    assert [backoff(n) for n in (1, 2, 3, 4, 5, 6, 7, 1000)] == [1, 2, 4, 8, 16, 30, 30, 30]
    assert backoff(3, first=0.5, most=1.5) == 1.5


def test_a_tailer_goes_on_after_a_step_raises(basic_run):
    source = RunSource(basic_run.run_dir, Store(), poll_interval=0.01)
    flaky = _raising_once(source.step)
    source.step = flaky  # type: ignore[method-assign]
    _goes_on(source, flaky, "reading")


def test_the_workspace_scan_goes_on_after_a_scan_raises(basic_run):
    source = WorkspaceSource(basic_run.run_dir.parent, Store(), rescan=0.01)
    flaky = _raising_once(source.refresh)
    source.refresh = flaky  # type: ignore[method-assign]
    _goes_on(source, flaky, "scanning")


def test_the_cluster_poller_goes_on_after_a_round_raises():
    source = ClusterSource(Store(), PrometheusClient(endpoint("http://127.0.0.1:9")), interval=1.0, load_history=False)
    flaky = _raising_once(source.step, result=SMALL)
    source.step = flaky  # type: ignore[method-assign]
    _goes_on(source, flaky, "watching Prometheus")


def test_the_retries_back_off_while_the_failure_lasts(basic_run):
    source = RunSource(basic_run.run_dir, Store(), poll_interval=0.01)
    source.step = lambda: (_ for _ in ()).throw(Boom("always"))  # type: ignore[method-assign]
    heard = _errors_heard(source)
    source.backoff_first, source.backoff_max = SMALL, 4 * SMALL
    source.start()
    try:
        _wait(lambda: len(heard) >= 4, "four failures told")
    finally:
        source.close()
    assert [e.split(":")[0] for e in heard[:4]] == [f"reading failed, retrying in {d:g} s" for d in (SMALL, 2 * SMALL, 4 * SMALL, 4 * SMALL)]


def test_leet_watch_says_a_failed_step_on_stderr_and_goes_on(tmp_path, capsys):
    folder = tmp_path / "wandb"
    folder.mkdir()
    ledger = Ledger(tmp_path / "ledger.json")
    watch = Watch(AlertSettings(), Follower([folder], ledger=ledger), ledger, [])
    watch.backoff_first = SMALL
    flaky = _raising_once(watch.step, result=[])
    watch.step = flaky  # type: ignore[method-assign]
    stop = threading.Event()
    runner = threading.Thread(target=watch.run, args=(stop,), daemon=True)
    runner.start()
    try:
        _wait(lambda: len(flaky.calls) >= 4, "later steps ran")
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()
    err = capsys.readouterr().err.splitlines()
    assert f"leet watch: following failed, retrying in {SMALL:g} s: Boom: met something new" in err
    assert "leet watch: following works again" in err

