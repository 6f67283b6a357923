"""Shared test settings: the same output on every machine.

Time labels are local time, so the whole session runs in UTC. ``NO_COLOR``
(read when an App is made) would strip colour from snapshots. Textual reads
``TEXTUAL_THEME`` and ``TEXTUAL_ANIMATIONS`` once, at import, which the
snapshot plugin does before this file runs: the demo app sets its theme
explicitly, and CI should still start pytest with both unset.
"""

from __future__ import annotations

import os
import time

import pytest

pytest_plugins = ["wandb_fixtures"]

# A worker process started by pytest-xdist is given COLUMNS=80 and LINES=24.
# Every program a test starts (leet in tmux, `symon --once`) would take them
# for its terminal's size, so they go: a program sizes itself by its terminal.
for _size in ("COLUMNS", "LINES"):
    os.environ.pop(_size, None)

# What `pytest -m "not slow"` leaves out (README, "Run the tests"): the files
# that drive leet in a real terminal, start real servers and daemons, fuzz
# for a while or start a process per case. The full run has them all.
SLOW_FILES = frozenset({
    "test_backends_isolation.py",
    "test_cli_edges.py",
    "test_cluster_e2e.py",
    "test_fuzz.py",
    "test_hostile_terminal.py",
    "test_redraw_terminal.py",
    "test_remembered_terminal.py",
    "test_run_terminal.py",
    "test_shared_terminal.py",
    "test_terminal.py",
    "test_terminal_modes.py",
    "test_terminal_output.py",
    "test_vintage_terminal.py",
    "test_watch_cli.py",
})


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def utc_time_zone():
    before = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    for name in ("NO_COLOR", "TEXTUAL_THEME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def private_state_dir(monkeypatch, tmp_path_factory):
    """Each test remembers its layout in a folder of its own: never the machine's layout.json, never another test's."""
    monkeypatch.setenv("LEET_STATE_DIR", str(tmp_path_factory.mktemp("leet-state")))


@pytest.fixture
def leet_terminal():
    """Start ``python -m leet ARGS…`` in tmux at 160×48: ``start(*args)``; each is quit and closed after the test."""
    import sys

    from terminal import LEET_ENV, Terminal, TmuxMissing, require_tmux

    try:
        require_tmux()
    except TmuxMissing as error:
        pytest.fail(str(error), pytrace=False)
    started: list[Terminal] = []

    def start(*args: str) -> Terminal:
        terminal = Terminal([sys.executable, "-m", "leet", *args], width=160, height=48, env=LEET_ENV)
        started.append(terminal)
        terminal.start()
        return terminal

    yield start
    for terminal in started:
        try:
            # Leave with q where that works: quicker than tmux hanging up on the app.
            if not terminal.exited():
                terminal.press("q")
                terminal.wait_exit(2.0)
        except (AssertionError, RuntimeError):
            pass  # close() still ends it
        terminal.close()


@pytest.fixture
def children(monkeypatch):
    """Every child the run sources start, to look at afterwards. Their batches are
    small, so that even the small runs here come in several."""
    from leet.sources import parallel as splitload
    from leet.sources.parallel import ChildLoad

    started: list[ChildLoad] = []
    original = ChildLoad.start
    real = splitload.child_command
    monkeypatch.setattr(splitload, "child_command", lambda *args: [*real(*args), "40"])

    def start(path, split_at, until):
        child = original(path, split_at, until)
        if child is not None:
            started.append(child)
        return child

    monkeypatch.setattr(ChildLoad, "start", staticmethod(start))
    yield started
    for child in started:
        child.stop()
