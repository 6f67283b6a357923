"""The command line as a script or a person meets it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from leet import __version__


def run(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "leet", *args], capture_output=True, text=True, timeout=timeout, env={"LEET_CONFIG": "", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["symon", "--help"]])
def test_help_and_version_import_no_textual(args):
    code = (
        "import sys; from leet.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('textual', 'psutil', 'pynvml') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
    assert "HEAVY []" in out


def test_version():
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"leet {__version__}"


def test_once_json_prints_wandb_keys():
    result = run("symon", "--once", "--json")
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert 0 <= values["memory_percent"] <= 100
    assert 0 <= values["disk./.usagePercent"] <= 100
    assert any(key.startswith("cpu.") and key.endswith(".cpu_percent") for key in values)
    assert "network.sent" in values and "network.recv" in values


def test_once_table_is_readable():
    result = run("symon", "--once", "--label", "node0")
    assert result.returncode == 0, result.stderr
    assert "System Memory (%)" in result.stdout
    assert "memory_percent/l:node0" in result.stdout


def test_bad_arguments_give_a_clear_message():
    result = run("symon", "--interval", "0.01")
    assert result.returncode == 2
    assert "at least 0.1" in result.stderr
    result = run("symon", "--grid", "three")
    assert result.returncode == 2
    assert "ROWSxCOLS" in result.stderr


def test_once_stays_light_and_reports_a_missing_disk_path():
    code = (
        "import sys; from leet.cli import main\n"
        "main(['symon', '--once', '--disk-path', '/', '--disk-path', '/no/such/place'])\n"
        "print('TEXTUAL', 'textual' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={"LEET_CONFIG": "", "PATH": "/usr/bin:/bin"})
    assert "TEXTUAL False" in result.stdout
    assert "! disk path /no/such/place does not exist" in result.stdout
    assert "disk./.usagePercent" in result.stdout


def test_a_path_that_is_not_a_run_says_so(tmp_path):
    (tmp_path / "run-x.wandb").write_bytes(b"not a run file at all")
    result = run(str(tmp_path / "run-x.wandb"))
    assert result.returncode == 2
    assert "not a W&B run file" in result.stderr
    result = run(str(tmp_path / "nothing-here"))
    assert result.returncode == 2 and "does not exist" in result.stderr
