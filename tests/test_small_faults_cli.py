"""The command line's small faults: a W&B URL for a path, and ``symon --once``'s rates."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from leet.runfile.locate import RunNotFound, find_run_file

ENV = {"LEET_CONFIG": "", "PATH": "/usr/bin:/bin"}


def test_a_run_url_is_answered_with_where_local_run_files_are():
    with pytest.raises(RunNotFound) as caught:
        find_run_file("https://wandb.ai/ent/proj/runs/abc")
    message = str(caught.value)
    assert "https://wandb.ai/ent/proj/runs/abc" in message
    assert "wandb/run-*/" in message and "does not exist" not in message


def test_leet_with_a_run_url_says_so_and_fails():
    result = subprocess.run([sys.executable, "-m", "leet", "https://wandb.ai/ent/proj/runs/abc"], capture_output=True, text=True, timeout=60, env=ENV, stdin=subprocess.DEVNULL)
    assert result.returncode != 0
    assert "https://wandb.ai/ent/proj/runs/abc" in result.stderr and "wandb/run-*/" in result.stderr, result.stderr


def test_symon_once_leaves_out_the_rates_one_sweep_cannot_measure():
    result = subprocess.run([sys.executable, "-m", "leet", "symon", "--once", "--json"], capture_output=True, text=True, timeout=120, env=ENV)
    assert result.returncode == 0, result.stderr
    keys = set(json.loads(result.stdout))
    assert "cpu" in keys or any(key.startswith("cpu.") for key in keys)
    assert "network.sent" in keys and "network.recv" in keys
    rates = sorted(key for key in keys if key.endswith("Bps"))
    assert rates == [], rates
