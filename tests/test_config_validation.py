"""Every setting is checked before use, wherever it came from, and a bad one is named with its source.

Sources: the config file (its path and the key), a ``LEET_*`` variable, a flag.
Nothing bad reaches the Hub, and the Hub, a library API, refuses what it
cannot sweep at rather than losing its thread to it.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_hub import PATIENCE, Collected, Counter, LongWaits

from collectors.hub import MAX_INTERVAL, Hub
from leet.config import THEMES, Config, ConfigError, load
from leet.config import files as config_files

ROOT = Path(__file__).resolve().parent.parent
QUICK = 30.0  # seconds: only bounds a hang
BAD_INTERVALS = [
    ("inf", "finite"),
    ("-inf", "finite"),
    ("nan", "finite"),
    ("-1", "at least 0.1"),
    ("0.01", "at least 0.1"),
    ("1e10", "at most 3600"),
    ("7200", "at most 3600"),
    ("'soon'", "number of seconds"),
    ("true", "number of seconds"),
]


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "config.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def leet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {"LEET_CONFIG": "", "PATH": "/usr/bin:/bin", **(env or {})}
    return subprocess.run([sys.executable, "-m", "leet", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=QUICK, env=environ, cwd=ROOT)


def error_of(**kwargs) -> str:
    with pytest.raises(ConfigError) as caught:
        load(**kwargs)
    return str(caught.value)


# -- the interval, from each source ------------------------------------------------------


@pytest.mark.parametrize("toml, words", BAD_INTERVALS)
def test_a_bad_interval_in_the_file_names_the_file_and_the_key(tmp_path, toml, words):
    path = write(tmp_path, f"interval = {toml}\n")
    message = error_of(environ={}, path=path)
    assert str(path) in message and "interval" in message and words in message


@pytest.mark.parametrize("text, words", [(toml.strip("'"), words) for toml, words in BAD_INTERVALS if toml != "true"])
def test_a_bad_interval_in_the_environment_names_the_variable(tmp_path, text, words):
    message = error_of(environ={"LEET_INTERVAL": text}, path=tmp_path / "missing.toml")
    assert message.startswith("LEET_INTERVAL: interval") and words in message


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, -1.0, 1e10, "soon", True])
def test_a_bad_interval_flag_names_the_flag(tmp_path, value):
    message = error_of(overrides={"interval": value}, environ={}, path=tmp_path / "missing.toml")
    assert message.startswith("--interval: interval")


@pytest.mark.parametrize("text", ["inf", "nan", "1e10", "-5", "0.01"])
def test_the_command_line_refuses_a_bad_interval_in_one_line(text):
    result = leet("symon", "--once", "--interval", text)
    assert result.returncode == 2
    assert "argument --interval" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("env, config", [({"LEET_INTERVAL": "inf"}, None), ({}, "interval = inf\n"), ({}, "interval = 1e10\n")])
def test_leet_symon_says_which_source_holds_a_bad_interval(tmp_path, env, config):
    if config is not None:
        env = {"LEET_CONFIG": str(write(tmp_path, config))}
    result = leet("symon", "--once", env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    where = "LEET_INTERVAL" if "LEET_INTERVAL" in env else str(tmp_path / "config.toml")
    assert result.stderr.startswith(f"leet: {where}") or result.stderr.startswith(f"leet: config file {where}")


def test_good_intervals_still_pass(tmp_path):
    assert load({"interval": 0.1}, environ={}, path=tmp_path / "none").interval == 0.1
    assert load(environ={"LEET_INTERVAL": "3600"}, path=tmp_path / "none").interval == 3600.0
    assert leet("symon", "--once", "--json", "--interval", "500ms").returncode == 0


# -- other values --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, words",
    [
        ("history_minutes = inf", "finite"),
        ("history_minutes = 0", "positive"),
        ("history_minutes = 1e9", "at most"),
        ("crash_after = inf", "at most 30 days"),
        ("crash_after = '9999999999999999999999999h'", "at most 30 days"),
        ("crash_after = -5", "positive"),
        ("theme = 'no-such-theme'", "unknown theme"),
        ("theme = 3", "unknown theme"),
        ("label = 7", "label must be text"),
        ("disk_paths = []", "list of paths"),
        ("source = 'x'", "unknown setting"),
    ],
)
def test_every_value_is_checked_and_named(tmp_path, text, words):
    path = write(tmp_path, text + "\n")
    message = error_of(environ={}, path=path)
    assert str(path) in message and text.split(" ")[0] in message and words in message


def test_an_unknown_theme_is_named_with_its_source_and_the_known_ones(tmp_path):
    none = tmp_path / "missing.toml"
    assert error_of(environ={"LEET_THEME": "neon"}, path=none).startswith("LEET_THEME: unknown theme 'neon'")
    message = error_of(overrides={"theme": "neon"}, environ={}, path=none)
    assert message.startswith("--theme: unknown theme 'neon'") and "textual-dark" in message and "nord" in message
    result = leet("symon", "--once", "--json", "--theme", "neon")
    assert result.returncode == 2 and "unknown theme 'neon'" in result.stderr and not result.stdout


def test_the_theme_list_is_textuals():
    from textual.theme import BUILTIN_THEMES

    assert THEMES == set(BUILTIN_THEMES)


def test_messages_are_made_inert(tmp_path):
    message = error_of(environ={"LEET_THEME": "x\x1b]0;pwned\x07"}, path=tmp_path / "none")
    assert "\x1b" not in message and "\x07" not in message and "\\x1b" in message


# -- the file itself -------------------------------------------------------------------


def test_a_config_file_that_is_not_utf8_is_named(tmp_path):
    path = write(tmp_path, b'theme = "\xff"\n')
    message = error_of(environ={}, path=path)
    assert message == f"config file {path}: not UTF-8 text (byte 0xff at offset 9)"
    result = leet("symon", "--once", env={"LEET_CONFIG": str(path)})
    assert result.returncode == 2 and "not UTF-8" in result.stderr and "Traceback" not in result.stderr


def test_a_config_file_that_is_a_directory_or_unreadable_is_named(tmp_path, monkeypatch):
    assert "is a directory, not a regular file" in error_of(environ={}, path=tmp_path)
    path = write(tmp_path, "interval = 3\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(config_files, "read_regular", refuse)
    assert error_of(environ={}, path=path) == f"config file {path}: cannot read: Permission denied"


@pytest.mark.parametrize("how", ["--config", "LEET_CONFIG"])
def test_a_config_fifo_is_refused_at_once(tmp_path, how):
    pipe = tmp_path / "config.toml"
    os.mkfifo(pipe)
    began = time.monotonic()
    args, env = (["--config", str(pipe)], {}) if how == "--config" else ([], {"LEET_CONFIG": str(pipe)})
    result = leet("symon", "--once", *args, env=env)
    assert time.monotonic() - began < QUICK
    assert result.returncode == 2
    assert result.stderr == f"leet: config file {pipe} is a FIFO (named pipe), not a regular file\n"


def test_a_huge_config_file_is_refused_unread(tmp_path):
    path = write(tmp_path, b"# " + b"x" * (2 << 20) + b"\n")
    assert "larger than 1 MiB" in error_of(environ={}, path=path)


def test_a_missing_config_file_is_no_error(tmp_path):
    assert load(environ={}, path=tmp_path / "missing.toml") == Config()


# -- symon --once --json ---------------------------------------------------------------


def test_once_json_says_what_went_wrong_on_stderr_and_keeps_stdout_json():
    result = leet("symon", "--once", "--json", "--disk-path", "/", "--disk-path", "/no/such/place")
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert "disk./.usagePercent" in values
    assert "leet: disk path /no/such/place does not exist" in result.stderr.splitlines()


# -- the Hub ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [1e10, math.inf, -math.inf, math.nan, MAX_INTERVAL * 2])
def test_the_hub_refuses_an_interval_it_cannot_keep(bad):
    with pytest.raises(ValueError, match="interval"):
        Hub([], interval=bad)
    hub = Hub([], interval=2.0)
    with pytest.raises(ValueError, match="interval"):
        hub.set_interval(bad)
    assert hub.interval == 2.0


def hub_thread(hub: Hub) -> threading.Thread:
    thread = hub._thread
    assert thread is not None
    return thread


def test_the_hub_thread_outlives_a_huge_wait():
    """Past the checks (a subclass, a later bug), a wait of 1e10 s must not end the thread."""
    got = Collected()
    hub = Hub([Counter()], interval=MAX_INTERVAL, warmup=0.0)
    hub._interval = 1e10  # past threading.TIMEOUT_MAX: Event.wait(1e10) raises OverflowError
    waits = LongWaits(got)
    hub._wake = waits
    hub.subscribe(got)
    hub.start()
    try:
        assert got.wait_count(1)
        assert waits.armed.wait(PATIENCE), "the thread never began its long wait"
        assert hub_thread(hub).is_alive()
        hub.set_interval(0.05)
        assert got.wait_count(3), "the thread sweeps again at the new interval"
    finally:
        hub.stop()


@pytest.mark.parametrize("budget", [math.inf, 1e12, math.nan])
def test_a_collector_budget_past_any_timeout_still_sweeps(budget):
    collector = Counter()
    collector.budget = budget
    hub = Hub([collector], warmup=0.0)
    try:
        sample = hub.sweep()
    finally:
        hub.stop()
    assert dict(sample.values) == {"x": 1.0} or math.isnan(budget)
