"""The remembered layer of the settings: what the settings screen changed, kept in ``layout.json``.

A remembered setting lies over the defaults and, for the layout settings
(``LAYOUT_SETTINGS``), over the config file too; a ``LEET_*`` variable or a
flag always wins over it, and the config file wins for every other
setting. Each value is checked again by the setting's own check: a stale or
edited value costs a message, never the start.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from leet.config.checks import CHECKS
from leet.config.layout_state import LayoutFile, state_dir
from leet.config.settings import Config, ConfigError

LAYOUT_SETTINGS = frozenset({"grid_rows", "grid_cols", "sidebar", "theme"})
# Settings the running screens follow at once; every other one takes effect at the next start.
LIVE_SETTINGS = frozenset({"grid_rows", "grid_cols", "theme"})
# Settings the settings screen shows but does not change: where they are set is the file, or the flag.
FIXED_SETTINGS = frozenset({"remember"})


@dataclass
class Remembering:
    """The layout file in use, the settings as they were before the remembered layer, and a message from reading it."""

    file: LayoutFile
    below: Config
    message: str = ""


def remembered(config: Config, environ: Mapping[str, str] | None = None) -> tuple[Config, Remembering | None]:
    """``config`` with the remembered settings laid over it, and what the app keeps; unchanged when ``remember`` is off."""
    if not config.remember:
        return config, None
    layout_file = LayoutFile(state_dir(environ))
    effective, problems = with_remembered(config, layout_file.layout.settings)
    return effective, Remembering(layout_file, config, layout_file.message or "; ".join(problems))


def remembered_wins(config: Config, name: str) -> bool:
    """Whether a remembered value of setting ``name`` would lie over where ``config`` took it from."""
    origin = config.origin(name)
    return origin in ("default", "remembered") or (origin == "file" and name in LAYOUT_SETTINGS)


def with_remembered(config: Config, settings: Mapping[str, Any]) -> tuple[Config, list[str]]:
    """``config`` with each remembered setting that wins laid over it, and why any was refused."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for name, value in settings.items():
        if name not in CHECKS or name in FIXED_SETTINGS:
            problems.append(f"remembered setting {name[:40]!r} is not one leet has")
            continue
        if not remembered_wins(config, name):
            continue
        try:
            values[name] = CHECKS[name](value, "remembered setting")
        except ConfigError as error:
            problems.append(str(error))
    origins = {**dict(config.origins), **dict.fromkeys(values, "remembered")}
    return replace(config, **values, origins=tuple(origins.items())), problems
