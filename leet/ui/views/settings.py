"""The settings screen's model: each setting's value, where it came from, and whether it may be changed here.

Pure: a ``Config`` goes in, rows of text come out. A value typed on the
screen is read as a config file's value would be (TOML: ``2.5``, ``true``,
``[0, 2]``), or as plain text when it is no TOML value (``nord``), and then
checked by the setting's own check.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, fields
from typing import Any

from leet.config.checks import CHECKS, FLAGS
from leet.config.remembered import FIXED_SETTINGS, LAYOUT_SETTINGS, LIVE_SETTINGS, remembered_wins
from leet.config.settings import Config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

# Config fields that are no setting a person gives.
NOT_SETTINGS = frozenset({"source", "origins"})
# The LEET_* variable for each setting that has one.
VARIABLES = {
    "interval": "LEET_INTERVAL", "theme": "LEET_THEME", "grid_rows": "LEET_GRID", "grid_cols": "LEET_GRID",
    "history_minutes": "LEET_HISTORY_MINUTES", "disk_paths": "LEET_DISK_PATHS", "gpu_ids": "LEET_GPU_IDS",
    "crash_after": "LEET_CRASH_AFTER", "mouse": "LEET_NO_MOUSE", "ascii": "LEET_ASCII", "color": "NO_COLOR",
}


@dataclass(frozen=True)
class SettingRow:
    name: str
    value: str  # as a config file would write it
    origin: str  # default, file, env, flag or remembered
    note: str  # "at start" for a setting the running screens do not follow
    fixed: str  # why it cannot be changed here; "" when it can


def setting_names(config: Config) -> list[str]:
    return [item.name for item in fields(config) if item.name not in NOT_SETTINGS]


def value_text(value: Any) -> str:
    """A value as a config file writes it; ``(none)`` for a setting left unset."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(value_text(item) for item in value) + "]"
    if isinstance(value, (int, str)):
        return json.dumps(value) if isinstance(value, str) else str(value)
    return type(value).__name__


def why_fixed(config: Config, name: str) -> str:
    """Why setting ``name`` cannot be changed here; "" when it can."""
    if name not in CHECKS or name in FIXED_SETTINGS:
        return "set in the config file or by a flag"
    origin = config.origin(name)
    if origin == "flag":
        return f"set by {FLAGS.get(name, 'a flag')}: a flag wins over what is remembered"
    if origin == "env":
        return f"set by {VARIABLES.get(name, 'a LEET_* variable')}: the environment wins over what is remembered"
    if not remembered_wins(config, name):
        return "set in the config file, which wins for this setting" + ("" if name in LAYOUT_SETTINGS else " (not a layout setting)")
    return ""


def setting_rows(config: Config) -> list[SettingRow]:
    return [
        SettingRow(
            name,
            value_text(getattr(config, name)),
            config.origin(name),
            "" if name in LIVE_SETTINGS else "at start",
            why_fixed(config, name),
        )
        for name in setting_names(config)
    ]


def typed_value(text: str) -> Any:
    """``text`` as a config file's value: TOML where it is one (a number, true, a list), else the text itself."""
    text = text.strip()
    try:
        value = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
    try:
        json.dumps(value)
    except TypeError:  # a TOML date or time: kept as the text typed
        return text
    return value
