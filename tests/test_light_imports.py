"""Headless commands load none of the threaded sources: ``leet watch`` follows run files with alerts alone.

Each check runs in a fresh interpreter, so what an earlier test imported
cannot hide what a command pulls in.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

THREADED = ("leet.sources.run", "leet.sources.shared", "leet.sources.workspace", "leet.sources.tailer", "leet.sources.parallel")
REPORT = "import json, sys; print(json.dumps(sorted(m for m in sys.modules if m.startswith('leet.sources'))))\n"


def sources_loaded(code: str) -> list[str]:
    """The ``leet.sources`` modules loaded once ``code`` has run in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", code + REPORT],
        capture_output=True,
        text=True,
        timeout=60,
        env={"LEET_CONFIG": "", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_the_watch_commands_follower_loads_no_source():
    assert sources_loaded("import leet.alerts.follow\n") == []


def test_following_a_folder_of_runs_loads_no_threaded_source(tmp_path):
    (tmp_path / "offline-run-20240101_000000-abc").mkdir()
    code = (
        "from leet.alerts.follow import Follower\n"
        "from leet.alerts.ledger import Ledger\n"
        f"follower = Follower([{str(tmp_path)!r}], ledger=Ledger(None))\n"
        "assert not follower.problems, follower.problems\n"
        "follower.poll()\n"
    )
    assert not set(sources_loaded(code)) & set(THREADED)


@pytest.mark.parametrize("command", ["watch", "serve"])
def test_help_of_a_headless_command_loads_no_source(command):
    code = f"from leet.cli import main\ntry:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
    assert sources_loaded(code) == []
