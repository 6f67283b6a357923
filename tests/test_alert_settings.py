"""The ``[alerts]`` table of the config file: what it sets, and mistakes named by file, key and line."""

from __future__ import annotations

import textwrap

import pytest

from leet.alerts.events import EVENT_KINDS, FAILED, FINISHED
from leet.alerts.settings import parse_duration, parse_events
from leet.config import ConfigError, load

GOOD = """
    interval = 1

    [alerts]
    on = ["finished", "failed", "crashed", "alert", "threshold"]
    rules = ["gpu.*.temp > 85 for 2m", "memory_percent > 95 for 30s"]
    node_lost_after = "3m"
    bell = ["failed", "crashed"]

    [[alerts.sinks]]
    notify = "slack://${SLACK_A}/${SLACK_B}/${SLACK_C}"
    on = ["failed", "crashed", "alert"]

    [[alerts.sinks]]
    webhook = "https://hooks.example.com/leet"
    shape = "slack"
    timeout = "5s"

    [[alerts.sinks]]
    exec = ["/usr/local/bin/page-me", "--team", "ml"]
"""


def config_from(tmp_path, text: str):
    path = tmp_path / "config.toml"
    path.write_text(textwrap.dedent(text))
    return load(path=path, environ={}), path


def test_a_full_table_reads_as_written(tmp_path):
    config, _ = config_from(tmp_path, GOOD)
    alerts = config.alerts
    assert config.interval == 1.0
    assert alerts.on == frozenset(EVENT_KINDS) - {"node-lost"}
    assert [rule.text for rule in alerts.rules] == ["gpu.*.temp > 85 for 2m", "memory_percent > 95 for 30s"]
    assert alerts.rules[0].for_s == 120.0
    assert alerts.node_lost_after == 180.0
    assert alerts.bell == {"failed", "crashed"} and alerts.toast == frozenset(EVENT_KINDS)
    notify, hook, command = alerts.sinks
    assert notify.kind == "notify" and notify.targets == ("slack://${SLACK_A}/${SLACK_B}/${SLACK_C}",)  # secrets read when sinks are made
    assert notify.on == {"failed", "crashed", "alert"}
    assert (hook.kind, hook.shape, hook.timeout, hook.on) == ("webhook", "slack", 5.0, frozenset(EVENT_KINDS))
    assert command.targets == ("/usr/local/bin/page-me", "--team", "ml")


def test_no_alerts_table_means_none(tmp_path):
    config, _ = config_from(tmp_path, "interval = 2\n")
    assert config.alerts is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[alerts]\non = ["finished", "finsihed"]\n', "alerts.on (line 2): unknown event 'finsihed'"),
        ('[alerts]\nrules = ["gpu.*.temp >> 85"]\n', "alerts.rules (line 2): rule 1: column"),
        ('[alerts]\nnode_lost_after = "two minutes"\n', "alerts.node_lost_after (line 2): expected a duration"),
        ('[alerts]\ncolour = "red"\n', "alerts.colour (line 2): unknown setting"),
        ('[alerts]\n\n[[alerts.sinks]]\nnotify = "json://a"\n\n[[alerts.sinks]]\nwebhook = "http://b"\non = ["nope"]\n', "alerts.sinks[2].on (line 8): unknown event 'nope'"),
        ('[alerts]\n[[alerts.sinks]]\nwebhook = "http://b"\nshape = "xml"\n', "alerts.sinks[1].shape (line 4): shape goes with webhook"),
        ('[alerts]\n[[alerts.sinks]]\non = ["failed"]\n', "alerts.sinks[1]: give one of notify, webhook or exec"),
        ('[alerts]\n[[alerts.sinks]]\nexec = []\n', "alerts.sinks[1].exec (line 3): expected a command"),
        ('[alerts]\nrules_file = "/nonexistent/rules.txt"\n', "alerts.rules_file (line 2): cannot read rules file /nonexistent/rules.txt"),
        ("alerts = 3\n", "alerts must be a table"),
    ],
)
def test_a_mistake_names_file_key_and_line(tmp_path, text, expected):
    with pytest.raises(ConfigError) as raised:
        config_from(tmp_path, text)
    message = str(raised.value)
    assert str(tmp_path / "config.toml") in message and expected in message, message
    assert "\n" not in message


def test_a_rules_file_is_read_and_its_mistakes_name_its_line(tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_text("# GPUs\ngpu.*.temp > 85 for 2m\n\ndisk./.usagePercent > 95\n")
    config, _ = config_from(tmp_path, f'[alerts]\nrules_file = "{rules}"\n')
    assert [rule.text for rule in config.alerts.rules] == ["gpu.*.temp > 85 for 2m", "disk./.usagePercent > 95"]
    rules.write_text("gpu.*.temp > 85\nmemory_percent > ninety\n")
    with pytest.raises(ConfigError, match=r"line 2, column \d+"):
        config_from(tmp_path, f'[alerts]\nrules_file = "{rules}"\n')


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30.0), ("2m", 120.0), ("1h30m", 5400.0), ("500ms", 0.5), (45, 45.0)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_events_lists():
    assert parse_events("finished,failed") == {FINISHED, FAILED}
    assert parse_events("all") == frozenset(EVENT_KINDS)
    assert parse_events(False) == frozenset()
    with pytest.raises(ValueError, match="unknown event 'done'"):
        parse_events(["done"])
