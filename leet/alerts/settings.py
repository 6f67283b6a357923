"""The ``[alerts]`` table of the config file, checked: ``parse_alerts(table, path, text)``.

    [alerts]
    on = ["finished", "failed", "crashed", "alert", "node-lost", "threshold"]
    rules = ["gpu.*.temp > 85 for 2m", "disk./.usagePercent > 95"]
    rules_file = "~/.config/leet/rules.txt"
    node_lost_after = "2m"
    max_age = "24h"               # a sink that does not acknowledge an alert this long gives it up
    toast = true                  # or a list of events
    bell = ["failed", "crashed"]  # or true / false

    [[alerts.sinks]]
    notify = "slack://${SLACK_TOKEN_A}/${SLACK_TOKEN_B}"   # Apprise URL(s), or "@FILE" of URLs
    on = ["failed", "crashed", "alert"]

    [[alerts.sinks]]
    webhook = "https://hooks.example.com/leet"
    shape = "slack"

    [[alerts.sinks]]
    exec = ["/usr/local/bin/page-me", "--team", "ml"]

A mistake is one line naming the file, the key and its line:
``config.toml: alerts.sinks[2].on (line 14): unknown event 'finsihed' (known: finished, failed, …)``.
URLs and commands are kept as written: ``${NAME}`` and ``@FILE`` are read
when the sinks are made, so no secret sits in the settings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from leet.alerts.events import EVENT_KINDS
from leet.alerts.rules import Rule, RuleError, parse_rule, parse_rules

MAX_RULES_FILE_BYTES = 1 << 20  # thousands of rules: past it, the wrong file was named
MAX_RULE_CHARS = 4096  # a rule is one line of a few words

DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
SHAPES = ("json", "slack")
SINK_KINDS = ("notify", "webhook", "exec")


class AlertSettingsError(ValueError):
    """A setting of ``[alerts]`` that cannot be used: one line naming where."""


@dataclass(frozen=True)
class SinkSpec:
    """One sink as configured: ``kind`` notify (Apprise URLs), webhook or exec."""

    kind: str
    targets: tuple[str, ...]  # notify: URLs or "@FILE"; webhook: one URL; exec: the argv (one string: split with shlex)
    on: frozenset[str] = frozenset(EVENT_KINDS)
    shape: str = "json"
    timeout: float = 10.0
    where: str = ""  # "alerts.sinks[1]" or "--notify", for messages


@dataclass(frozen=True)
class AlertSettings:
    on: frozenset[str] = frozenset(EVENT_KINDS)
    rules: tuple[Rule, ...] = ()
    sinks: tuple[SinkSpec, ...] = ()
    node_lost_after: float = 120.0
    max_age: float = 86400.0
    toast: frozenset[str] = frozenset(EVENT_KINDS)
    bell: frozenset[str] = frozenset()


def parse_duration(value: Any) -> float:
    """``30s``, ``2m``, ``1h30m`` or a number of seconds; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30s, 2m or 1h")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        text = str(value).strip().lower()
        parts = DURATION.findall(text)
        if not parts or "".join(number + unit for number, unit in parts) != text.replace(" ", ""):
            raise ValueError(f"expected a duration such as 30s, 2m or 1h, not {value!r}")
        seconds = sum(float(number) * UNITS[unit] for number, unit in parts)
    if not 0 <= seconds < 1e9:
        raise ValueError(f"a duration from 0 s up, not {value!r}")
    return seconds


def parse_events(value: Any) -> frozenset[str]:
    """``["finished", "failed"]``, ``"finished,failed"``, ``"all"``, ``true``/``false``."""
    if value is True:
        return frozenset(EVENT_KINDS)
    if value is False:
        return frozenset()
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
        raise ValueError("expected a list of events, such as [\"failed\", \"crashed\"]")
    wanted = {name.strip().lower() for name in names if name.strip()}
    if "all" in wanted:
        return frozenset(EVENT_KINDS)
    unknown = sorted(wanted - set(EVENT_KINDS))
    if unknown:
        raise ValueError(f"unknown event {unknown[0]!r} (known: {', '.join(EVENT_KINDS)}, all)")
    return frozenset(wanted)


# -- the table --------------------------------------------------------------------------


class _Place:
    """Says where a key is: ``file: alerts.sinks[2].on (line 14)``."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = text.splitlines() if text else []

    def error(self, key: str, message: str, sink: int | None = None) -> AlertSettingsError:
        name = f"alerts.sinks[{sink + 1}].{key}" if sink is not None else f"alerts.{key}"
        line = self.line_of(key, sink)
        at = f" (line {line})" if line else ""
        return AlertSettingsError(f"{self.path}: {name}{at}: {message}")

    def line_of(self, key: str, sink: int | None) -> int | None:
        """The line ``key =`` is on, inside ``[alerts]`` or the ``sink``-th ``[[alerts.sinks]]``."""
        section, sinks_seen = "", -1
        pattern = re.compile(rf"\s*(?:\"{re.escape(key)}\"|'{re.escape(key)}'|{re.escape(key)})\s*=")
        for number, line in enumerate(self.lines, 1):
            header = re.match(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", line)
            if header:
                section = header.group(2).replace(" ", "")
                if header.group(1) == "[[" and section == "alerts.sinks":
                    sinks_seen += 1
                continue
            wanted = section == "alerts" if sink is None else section == "alerts.sinks" and sinks_seen == sink
            if wanted and pattern.match(line):
                return number
        return None


def parse_alerts(table: Any, path: str = "config", text: str = "") -> AlertSettings:
    """The checked settings of an ``[alerts]`` table; AlertSettingsError naming file, key and line."""
    place = _Place(path, text)
    if not isinstance(table, Mapping):
        raise AlertSettingsError(f"{path}: alerts must be a table ([alerts])")
    known = {"on", "rules", "rules_file", "node_lost_after", "max_age", "toast", "bell", "sinks"}
    for key in table:
        if key not in known:
            raise place.error(str(key), f"unknown setting (known: {', '.join(sorted(known))})")
    settings: dict[str, Any] = {}
    for key in ("on", "toast", "bell"):
        if key in table:
            try:
                settings[key] = parse_events(table[key])
            except ValueError as error:
                raise place.error(key, str(error)) from None
    for key in ("node_lost_after", "max_age"):
        if key in table:
            try:
                settings[key] = parse_duration(table[key])
            except ValueError as error:
                raise place.error(key, str(error)) from None
    rules = list(_rules(table.get("rules", []), place))
    if "rules_file" in table:
        rules += rules_from_file(table["rules_file"], lambda message: place.error("rules_file", message))
    sinks = table.get("sinks", [])
    if not isinstance(sinks, list):
        raise place.error("sinks", "expected [[alerts.sinks]] tables")
    specs = tuple(_sink(entry, index, place) for index, entry in enumerate(sinks))
    return AlertSettings(rules=tuple(rules), sinks=specs, **settings)


def _rules(value: Any, place: _Place) -> list[Rule]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(rule, str) for rule in value):
        raise place.error("rules", 'expected a list of rules, such as ["gpu.*.temp > 85 for 2m"]')
    out = []
    for index, text in enumerate(value):
        try:
            out.append(parse_rule(text))
        except RuleError as error:
            raise place.error("rules", f"rule {index + 1}: {error}") from None
    return out


def rules_from_file(value: Any, fail) -> list[Rule]:
    """The rules in a file (one a line, ``#`` comments); ``fail(message)`` makes the error to raise."""
    if not isinstance(value, str) or not value.strip():
        raise fail("expected the path of a rules file")
    file = Path(value).expanduser()
    from leet.runfile.files import NotRegularFile, read_regular

    try:
        data = read_regular(file, MAX_RULES_FILE_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, NotRegularFile, UnicodeDecodeError) as error:
        raise fail(f"cannot read rules file {file}: {getattr(error, 'strerror', None) or error}") from None
    if len(data) > MAX_RULES_FILE_BYTES:
        raise fail(f"rules file {file}: larger than {MAX_RULES_FILE_BYTES >> 20} MiB, so not a rules file")
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_RULE_CHARS:
            raise fail(f"rules file {file} line {number}: longer than {MAX_RULE_CHARS:,} characters, so not a rule")
    try:
        return parse_rules(lines)
    except RuleError as error:
        raise fail(f"{file}: {error}") from None


def _sink(entry: Any, index: int, place: _Place) -> SinkSpec:
    if not isinstance(entry, Mapping):
        raise AlertSettingsError(f"{place.path}: alerts.sinks[{index + 1}]: expected a table ([[alerts.sinks]])")
    allowed = {*SINK_KINDS, "on", "shape", "timeout"}
    for key in entry:
        if key not in allowed:
            raise place.error(str(key), f"unknown setting (known: {', '.join(sorted(allowed))})", index)
    kinds = [kind for kind in SINK_KINDS if kind in entry]
    if len(kinds) != 1:
        raise AlertSettingsError(f"{place.path}: alerts.sinks[{index + 1}]: give one of notify, webhook or exec")
    kind = kinds[0]
    targets = _targets(entry[kind], kind, index, place)
    spec: dict[str, Any] = {"kind": kind, "targets": targets, "where": f"alerts.sinks[{index + 1}]"}
    try:
        if "on" in entry:
            spec["on"] = parse_events(entry["on"])
        if "timeout" in entry:
            spec["timeout"] = max(0.1, parse_duration(entry["timeout"]))
    except ValueError as error:
        raise place.error("on" if "on" in entry and "timeout" not in str(error) else "timeout", str(error), index) from None
    if "shape" in entry:
        if kind != "webhook" or entry["shape"] not in SHAPES:
            raise place.error("shape", f"shape goes with webhook and is one of {', '.join(SHAPES)}", index)
        spec["shape"] = entry["shape"]
    return SinkSpec(**spec)


def _targets(value: Any, kind: str, index: int, place: _Place) -> tuple[str, ...]:
    if kind == "exec" and isinstance(value, list) and value and all(isinstance(part, str) for part in value):
        return tuple(value)
    if kind == "notify" and isinstance(value, list) and value and all(isinstance(url, str) and url.strip() for url in value):
        return tuple(url.strip() for url in value)
    if isinstance(value, str) and value.strip():
        return (value.strip(),)
    what = {"notify": "an Apprise URL, a list of them, or \"@FILE\"", "webhook": "an http(s) URL", "exec": "a command: a list of arguments or one string"}[kind]
    raise place.error(kind, f"expected {what}", index)


def merged(
    settings: AlertSettings, *, rules: Sequence[Rule] = (), sinks: Sequence[SinkSpec] = (), on: frozenset[str] | None = None, node_lost_after: float | None = None,
    max_age: float | None = None,
) -> AlertSettings:
    """Settings with the command line's rules and sinks added, and its ``--on``, ``--node-lost-after`` and ``--max-age`` in place of the file's."""
    return replace(
        settings, rules=(*settings.rules, *rules), sinks=(*settings.sinks, *sinks), on=settings.on if on is None else on,
        node_lost_after=settings.node_lost_after if node_lost_after is None else node_lost_after,
        max_age=settings.max_age if max_age is None else max_age,
    )

