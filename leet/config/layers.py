"""The effective configuration: defaults < config file < LEET_* environment < command-line flags."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from leet.config.checks import CHECKS, FLAGS, applied, parse_grid
from leet.config.files import config_path, config_text, parse_toml
from leet.config.settings import Config, ConfigError
from leet.config.terminal import locale_is_utf8, terminal_has_color

# Flags whose values join the file's mapping, name by name, instead of replacing it.
MERGED = frozenset({"open_metrics_endpoints", "open_metrics_http_headers"})
# How two names are the same: endpoint names are keys (exact), header names are not (HTTP).
_FOLDS: dict[str, Callable[[str], str]] = {"open_metrics_endpoints": str, "open_metrics_http_headers": str.lower}
_ENVIRON = (
    "LEET_INTERVAL", "LEET_THEME", "LEET_GRID", "LEET_HISTORY_MINUTES", "LEET_DISK_PATHS", "LEET_GPU_IDS", "LEET_CRASH_AFTER", "LEET_NO_MOUSE",
    "LEET_ASCII",
)


def load(
    overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None, path: Path | None = None, must_exist: bool = False
) -> Config:
    """The effective configuration; ``overrides`` are command-line values (None = not given).

    ``must_exist``: ``path`` was named (``--config``), so a missing file is an error, not the defaults.
    A path named by ``LEET_CONFIG`` must exist too; ``LEET_CONFIG`` set and empty means no file.
    """
    environ = os.environ if environ is None else environ
    if path is None:
        path = config_path(environ)
        must_exist = must_exist or bool(environ.get("LEET_CONFIG"))
    text = config_text(path, must_exist) if path is not None else None
    data = dict(parse_toml(text, path)) if text is not None and path is not None else {}
    alerts = data.pop("alerts", None)
    config = applied(Config(), data, f"config file {path}")
    if alerts is not None and path is not None:
        config = replace(config, alerts=_alert_settings(alerts, path, text or ""))
    origins = dict.fromkeys(_setting_names(data), "file")
    if alerts is not None:
        origins["alerts"] = "file"
    config = replace(config, source=str(path) if path is not None else "no config file (LEET_CONFIG is empty)")
    config = _from_environ(config, environ, origins)
    for name, value in (overrides or {}).items():
        if value is None:
            continue
        where = FLAGS.get(name, name)
        if name in MERGED:
            value = _merged(getattr(config, name), CHECKS[name](value, where), _FOLDS[name])
        config = applied(config, {name: value}, where)
        origins[name] = "flag"
    return replace(config, origins=tuple(origins.items()))


def _setting_names(data: Mapping[str, Any]) -> list[str]:
    """The ``Config`` fields a file's mapping sets (``[grid]`` sets two)."""
    grid = data.get("grid")
    return [name for name in data if name != "grid"] + [f"grid_{part}" for part in ("rows", "cols") if isinstance(grid, Mapping) and part in grid]


def resolve_ascii(config: Config, environ: Mapping[str, str] | None = None) -> Config:
    """``config`` with ``ascii`` decided: where no setting named it, ASCII unless the locale writes UTF-8."""
    if config.ascii is not None:
        return config
    return replace(config, ascii=not locale_is_utf8(environ))


def _alert_settings(table: Any, path: Path, text: str) -> Any:
    from leet.alerts.settings import AlertSettingsError, parse_alerts  # only a config with [alerts] pays for it

    try:
        return parse_alerts(table, f"config file {path}", text)
    except AlertSettingsError as error:
        raise ConfigError(str(error)) from None


def _from_environ(base: Config, environ: Mapping[str, str], origins: dict[str, str]) -> Config:
    for name in _ENVIRON:
        if name in environ:
            key, value = _environ_value(name, environ[name])
            base = applied(base, {key: value}, name)
            origins.update(dict.fromkeys(("grid_rows", "grid_cols") if key == "grid" else (key,), "env"))
    if not terminal_has_color(environ):
        base = replace(base, color=False)
        origins["color"] = "env"
    return base


def _environ_value(name: str, text: str) -> tuple[str, Any]:
    """The setting a ``LEET_*`` variable gives, as ``applied`` takes it."""
    if name == "LEET_GRID":
        return "grid", parse_grid(text, name)
    if name == "LEET_DISK_PATHS":
        return "disk_paths", [p for p in text.split(os.pathsep) if p]
    if name == "LEET_NO_MOUSE":
        return "mouse", text in ("", "0", "false")
    if name == "LEET_ASCII":
        return "ascii", text not in ("", "0", "false")
    return name[len("LEET_"):].lower(), text


def _merged(old: tuple[tuple[str, str], ...], new: tuple[tuple[str, str], ...], fold: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """``old`` with ``new`` laid over it: a name in both (as ``fold`` compares names) takes the new value, in the old place."""
    merged = {fold(name): (name, value) for name, value in old}
    merged.update({fold(name): (name, value) for name, value in new})
    return tuple(merged.values())
