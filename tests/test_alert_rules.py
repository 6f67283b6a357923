"""Threshold rules as people write them: what they mean, and where a mistake is."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from leet.alerts.events import ERROR, INFO, WARNING
from leet.alerts.rules import Rule, RuleError, format_duration, parse_rule, parse_rules


def fields(rule: Rule) -> dict:
    """Everything that makes the rule what it is, the text it was written as aside."""
    return {f.name: getattr(rule, f.name) for f in dataclasses.fields(rule) if f.compare and f.name != "text"}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("gpu.*.temp > 85 for 2m", dict(key_glob="gpu.*.temp", label_glob=None, op=">", threshold=85.0, for_s=120.0)),
        ("gpu.*.gpu < 5 for 10m while running", dict(key_glob="gpu.*.gpu", op="<", threshold=5.0, for_s=600.0, while_running=True)),
        ("disk./.usagePercent > 95", dict(key_glob="disk./.usagePercent", op=">", threshold=95.0, for_s=0.0, cooldown_s=0.0)),
        ("memory_percent > 95 for 30s", dict(key_glob="memory_percent", threshold=95.0, for_s=30.0, while_running=False)),
        ("gpu.*.temp/l:node-* >= 90", dict(key_glob="gpu.*.temp", label_glob="node-*", op=">=", threshold=90.0)),
        ('"val loss" > 3', dict(key_glob="val loss", label_glob=None, op=">", threshold=3.0)),
        ("'a <= b' <= -1.5e3", dict(key_glob="a <= b", op="<=", threshold=-1500.0)),
        ("loss != 0 cooldown 10m level error", dict(key_glob="loss", op="!=", threshold=0.0, cooldown_s=600.0, level=ERROR)),
        ("gpu.0.temp>85", dict(key_glob="gpu.0.temp", op=">", threshold=85.0)),
        ("loss<-1", dict(key_glob="loss", op="<", threshold=-1.0)),
        ("loss==.5", dict(op="==", threshold=0.5)),
        ("disk./.usagePercent > 95% for 1h30m", dict(threshold=95.0, percent=True, for_s=5400.0)),
        ("x > 1 FOR 0.5s While RUNNING Level WARN Cooldown 1d", dict(for_s=0.5, while_running=True, level=WARNING, cooldown_s=86400.0)),
        ("x > 1 level info for 250ms", dict(level=INFO, for_s=0.25)),
        ("gpu.[!0].temp > 1", dict(key_glob="gpu.[!0].temp", op=">")),
    ],
)
def test_rules_people_write_mean_what_they_say(text, expected):
    rule = parse_rule(text)
    assert {name: getattr(rule, name) for name in expected} == expected
    assert rule.text == text
    assert parse_rule(f"  {text}  ").text == text


def test_defaults_are_no_wait_no_cooldown_and_warning():
    rule = parse_rule("loss > 3")
    assert (rule.for_s, rule.cooldown_s, rule.while_running, rule.level, rule.label_glob) == (0.0, 0.0, False, WARNING, None)


def test_a_trailing_comment_is_not_part_of_the_rule():
    rule = parse_rule("gpu.*.temp > 85 for 2m   # the fans are loud")
    assert rule.text == "gpu.*.temp > 85 for 2m"
    assert rule.for_s == 120.0


@pytest.mark.parametrize(
    "text, described",
    [
        ("gpu.*.temp > 85 for 2m", "gpu.*.temp > 85 for 2m"),
        ("gpu.*.temp>85.0  for   120s", "gpu.*.temp > 85 for 2m"),
        ("gpu.*.gpu < 5 for 10m while running", "gpu.*.gpu < 5 for 10m while running"),
        ("memory_percent > 95 FOR 90s", "memory_percent > 95 for 1m30s"),
        ("gpu.*.temp/l:node-* >= 90", "gpu.*.temp/l:node-* >= 90"),
        ("'val loss' > 3", '"val loss" > 3'),
        ("'say \"hi\"' > 3", "'say \"hi\"' > 3"),
        ('"a>b" > 1e-5', '"a>b" > 1e-05'),
        ("loss != 0 cooldown 600s LEVEL Error", "loss != 0 cooldown 10m level error"),
        ("x >= 1.5% for 0.5s level warn", "x >= 1.5% for 0.5s"),
        ("gpu.[!0].temp < -2 for 1h30m while running cooldown 1d level info", "gpu.[!0].temp < -2 for 1h30m while running cooldown 1d level info"),
    ],
)
def test_describe_is_normal_form_and_reads_back_to_the_same_rule(text, described):
    rule = parse_rule(text)
    assert rule.describe() == described
    again = parse_rule(rule.describe())
    assert fields(again) == fields(rule)
    assert again.describe() == described


@pytest.mark.parametrize(
    "seconds, text",
    [(120, "2m"), (5400, "1h30m"), (45, "45s"), (0.5, "0.5s"), (0, "0s"), (130, "2m10s"), (86400 + 61, "1d1m1s"), (0.25, "0.25s"), (3600, "1h")],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_format_duration_spaced_for_messages():
    assert format_duration(130, " ") == "2m 10s"


@pytest.mark.parametrize(
    "text, column, words",
    [
        ("", 1, "empty rule"),
        ("   ", 4, "empty rule"),
        ("> 85", 1, "expected a metric key before '>'"),
        ("gpu.0.temp 85", 12, "expected an operator (>, >=, <, <=, ==, !=) after the key, found '85'"),
        ("gpu.0.temp => 85", 12, "unknown operator '=>': use one of >, >=, <, <=, ==, != (did you mean '>='?)"),
        ("gpu.0.temp = 85", 12, "did you mean '=='?"),
        ("gpu.0.temp", 11, "expected an operator (>, >=, <, <=, ==, !=) after the key, found the end of the rule"),
        ("gpu.0.temp >", 13, "expected a number after '>', found the end of the rule"),
        ("gpu.0.temp > hot", 14, "expected a number after '>', found 'hot'"),
        ("gpu.0.temp > 85x", 14, "expected a number after '>', found '85x'"),
        ("gpu.0.temp > nan", 14, "the threshold must be a finite number, found 'nan'"),
        ("gpu.0.temp > -inf", 14, "the threshold must be a finite number, found '-inf'"),
        ("gpu.0.temp > 1e999", 14, "the threshold must be a finite number, found '1e999'"),
        ("gpu.0.temp > 85 for", 20, "expected a duration such as 30s, 2m or 1h after 'for', found the end of the rule"),
        ("loss > 3 for two", 14, "expected a duration such as 30s, 2m or 1h after 'for', found 'two'"),
        ("gpu.0.temp > 85 for 5y", 22, "unknown unit 'y' in '5y': use ms, s, m, h or d"),
        ("gpu.0.temp > 85 for 1h30", 25, "'30' in '1h30' needs a unit"),
        ("gpu.0.temp > 85 cooldown soon", 26, "expected a duration such as 30s, 2m or 1h after 'cooldown', found 'soon'"),
        ("gpu.0.temp > 85 during 2m", 17, "unknown clause 'during': expected for, while running, cooldown or level"),
        ("gpu.0.temp > 85 for 1m for 2m", 24, "'for' is given twice (first at column 17)"),
        ("x > 1 while running while running", 21, "'while' is given twice (first at column 7)"),
        ("x > 1 while idle", 13, "expected 'running' after 'while', found 'idle'"),
        ("x > 1 level loud", 13, "unknown level 'loud': use info, warning or error"),
        ('"val loss > 3', 1, 'unclosed quote: the key opened with " has no closing "'),
        ("x > 1 and 'y", 7, "unknown clause 'and'"),
        ("gpu.[0-3.temp > 85", 5, "unclosed '[' in the key"),
        ("gpu.*.temp/l:node-[12 > 85", 19, "unclosed '[' in the key"),
        ("gpu.*.temp/l: > 85", 14, "expected a node label glob after '/l:'"),
        ("val loss > 3", 5, "found 'loss' (a key with spaces goes in quotes: \"val loss\")"),
        ('"" > 3', 1, "expected a metric key between the quotes"),
    ],
)
def test_each_mistake_names_its_column_in_one_readable_line(text, column, words):
    with pytest.raises(RuleError) as caught:
        parse_rule(text)
    error = caught.value
    assert error.column == column
    assert error.rule_text == text
    assert error.line is None
    assert words in str(error)
    assert str(error).startswith(f"column {column}: ")
    assert "\n" not in str(error)
    assert isinstance(error, ValueError)


def test_the_message_reads_as_documented():
    with pytest.raises(RuleError) as caught:
        parse_rule("loss > 3 for two")
    assert str(caught.value) == "column 14: expected a duration such as 30s, 2m or 1h after 'for', found 'two'"


def test_caret_points_at_the_offending_character():
    with pytest.raises(RuleError) as caught:
        parse_rule("gpu.0.temp => 85")
    assert caught.value.caret() == "gpu.0.temp => 85\n           ^"
    with pytest.raises(RuleError) as caught:
        parse_rule("gpu.0.temp > 85 for 5y")
    rule, marker = caught.value.caret().split("\n")
    assert rule[marker.index("^")] == "y"


def test_caret_after_the_last_character_when_the_rule_ends_too_soon():
    with pytest.raises(RuleError) as caught:
        parse_rule("gpu.0.temp >")
    assert caught.value.caret().split("\n")[1] == " " * 12 + "^"


def test_caret_keeps_tabs_so_it_lines_up():
    with pytest.raises(RuleError) as caught:
        parse_rule("\tloss\t>\tthree")
    assert caught.value.column == 9
    assert caught.value.caret() == "\tloss\t>\tthree\n\t    \t \t^"


def test_parse_rules_skips_blanks_and_comments():
    text = "# hot boxes\n\ngpu.*.temp > 85 for 2m\n   # idle\ngpu.*.gpu < 5 for 10m while running\n\n"
    rules = parse_rules(text.splitlines(keepends=True))
    assert [rule.text for rule in rules] == ["gpu.*.temp > 85 for 2m", "gpu.*.gpu < 5 for 10m while running"]


def test_parse_rules_names_the_line_of_a_mistake():
    lines = ["# rules", "gpu.*.temp > 85 for 2m", "", "memory_percent > 95 for two\n"]
    with pytest.raises(RuleError) as caught:
        parse_rules(lines)
    error = caught.value
    assert (error.line, error.column) == (4, 25)
    assert str(error) == "line 4, column 25: expected a duration such as 30s, 2m or 1h after 'for', found 'two'"
    assert error.caret() == "memory_percent > 95 for two\n" + " " * 24 + "^"


def test_matches_globs_keys_and_labels_case_sensitively():
    rule = parse_rule("gpu.*.temp > 85")
    assert rule.matches("gpu.0.temp")
    assert rule.matches("gpu.12.temp/l:node-3")
    assert not rule.matches("gpu.0.Temp")
    assert not rule.matches("gpu.0.temperature")
    labelled = parse_rule("gpu.*.temp/l:node-* >= 90")
    assert labelled.matches("gpu.3.temp/l:node-12")
    assert not labelled.matches("gpu.3.temp")
    assert not labelled.matches("gpu.3.temp/l:rank0")
    assert parse_rule("disk./.usagePercent > 95").matches("disk./.usagePercent")
    assert not parse_rule("disk./.usagePercent > 95").matches("disk./home.usagePercent")
    assert parse_rule("* > 1").matches("disk./home.usagePercent/l:a")
    assert parse_rule("gpu.?.temp > 1").matches("gpu.7.temp")
    assert not parse_rule("gpu.[!0].temp > 1").matches("gpu.0.temp")
    assert parse_rule("gpu.[!0].temp > 1").matches("gpu.1.temp")


@pytest.mark.parametrize(
    "op, below, at, above",
    [(">", False, False, True), (">=", False, True, True), ("<", True, False, False), ("<=", True, True, False), ("==", False, True, False), ("!=", True, False, True)],
)
def test_holds_per_operator_and_never_for_nan(op, below, at, above):
    rule = parse_rule(f"x {op} 10")
    assert (rule.holds(9.5), rule.holds(10.0), rule.holds(10.5)) == (below, at, above)
    assert rule.holds(float("nan")) is False


def test_a_rule_made_by_hand_is_checked():
    with pytest.raises(ValueError):
        Rule(text="x ~ 1", key_glob="x", label_glob=None, op="~", threshold=1.0)
    with pytest.raises(ValueError):
        Rule(text="x > 1", key_glob="x", label_glob=None, op=">", threshold=1.0, level="loud")


def test_an_error_survives_a_trip_between_processes():
    with pytest.raises(RuleError) as caught:
        parse_rules(["x > 1", "x > 1 for 5y"])
    again = pickle.loads(pickle.dumps(caught.value))
    assert (str(again), again.column, again.line, again.rule_text) == (str(caught.value), 12, 2, "x > 1 for 5y")
