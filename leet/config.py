"""Settings: defaults < config file < LEET_* environment < command-line flags.

The file is TOML at ``$LEET_CONFIG`` or ``<user config dir>/leet/config.toml``:

    interval = 2.0          # seconds between samples
    theme = "textual-dark"
    history_minutes = 10    # width of the live time window
    disk_paths = ["/"]
    mouse = true
    gpu_ids = [0, 2]        # only these NVIDIA GPUs (default: all)
    crash_after = "10m"     # a run silent this long with no exit record is presumed crashed

    [grid]
    rows = 3
    cols = 3

Everything is validated into a frozen ``Config``; a bad value is a clear
``ConfigError`` naming the file and the key, never a traceback.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MIN_INTERVAL = 0.1


class ConfigError(ValueError):
    """A setting that cannot be used, with where it came from."""


@dataclass(frozen=True)
class Config:
    interval: float = 2.0
    theme: str = "textual-dark"
    grid_rows: int = 3
    grid_cols: int = 3
    history_minutes: float = 10.0
    disk_paths: tuple[str, ...] = ("/",)
    mouse: bool = True
    pid: int | None = None
    track_tree: bool = False
    label: str | None = None
    gpu_ids: tuple[int, ...] | None = None  # None: every GPU
    sidebar: bool = True
    crash_after: float = 600.0  # seconds; see leet.model.state
    source: str = field(default="defaults", compare=False)


def default_path() -> Path:
    from platformdirs import user_config_path

    return user_config_path("leet") / "config.toml"


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    explicit = environ.get("LEET_CONFIG")
    return Path(explicit).expanduser() if explicit else default_path()


def _check_interval(value: Any, where: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: interval must be a number of seconds, got {value!r}") from None
    if not seconds >= MIN_INTERVAL:
        raise ConfigError(f"{where}: interval must be at least {MIN_INTERVAL} s, got {value!r}")
    return seconds


def _check_grid(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 9:
        raise ConfigError(f"{where}: grid {name} must be a whole number from 1 to 9, got {value!r}")
    return value


def _check_gpu_ids(value: Any, where: str) -> tuple[int, ...]:
    """``[0, 2]`` or ``"0,2"`` → (0, 2), as ``x_stats_gpu_device_ids`` takes them."""
    if isinstance(value, str):
        parts = [part for part in value.replace(" ", "").split(",") if part]
        try:
            value = [int(part) for part in parts]
        except ValueError:
            raise ConfigError(f"{where}: gpu_ids must be GPU indices like 0,2, got {value!r}") from None
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value):
        raise ConfigError(f"{where}: gpu_ids must be a non-empty list of GPU indices, got {value!r}")
    return tuple(dict.fromkeys(value))


def _check_crash_after(value: Any, where: str) -> float:
    """Seconds, or a duration such as ``"10m"``, ``"90s"``, ``"1h"``."""
    from leet.model.state import parse_duration

    try:
        seconds = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else parse_duration(str(value))
    except ValueError:
        raise ConfigError(f"{where}: crash_after must be a duration such as 10m, 90s or 1h, got {value!r}") from None
    if not seconds > 0:
        raise ConfigError(f"{where}: crash_after must be positive, got {value!r}")
    return seconds


def _from_mapping(base: Config, data: Mapping[str, Any], where: str) -> Config:
    known = {f.name for f in fields(Config)} | {"grid"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s): {', '.join(unknown)}")
    changes: dict[str, Any] = {}
    if "interval" in data:
        changes["interval"] = _check_interval(data["interval"], where)
    if "theme" in data:
        if not isinstance(data["theme"], str) or not data["theme"]:
            raise ConfigError(f"{where}: theme must be a theme name, got {data['theme']!r}")
        changes["theme"] = data["theme"]
    grid = data.get("grid", {})
    if not isinstance(grid, Mapping):
        raise ConfigError(f"{where}: [grid] must be a table with rows and cols")
    for name in ("rows", "cols"):
        if name in grid:
            changes[f"grid_{name}"] = _check_grid(grid[name], where, name)
    for name in ("grid_rows", "grid_cols"):
        if name in data:
            changes[name] = _check_grid(data[name], where, name.split("_")[1])
    if "history_minutes" in data:
        try:
            minutes = float(data["history_minutes"])
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: history_minutes must be a number") from None
        if not minutes > 0:
            raise ConfigError(f"{where}: history_minutes must be positive")
        changes["history_minutes"] = minutes
    if "disk_paths" in data:
        paths = data["disk_paths"]
        if isinstance(paths, str):
            paths = [paths]
        if not isinstance(paths, (list, tuple)) or not all(isinstance(p, str) and p for p in paths):
            raise ConfigError(f"{where}: disk_paths must be a list of paths")
        changes["disk_paths"] = tuple(paths)
    for name in ("mouse", "track_tree", "sidebar"):
        if name in data:
            if not isinstance(data[name], bool):
                raise ConfigError(f"{where}: {name} must be true or false")
            changes[name] = data[name]
    if "label" in data:
        changes["label"] = str(data["label"]) or None
    if "gpu_ids" in data:
        changes["gpu_ids"] = _check_gpu_ids(data["gpu_ids"], where)
    if "crash_after" in data:
        changes["crash_after"] = _check_crash_after(data["crash_after"], where)
    if "pid" in data:
        if isinstance(data["pid"], bool) or not isinstance(data["pid"], int) or data["pid"] <= 0:
            raise ConfigError(f"{where}: pid must be a process id")
        changes["pid"] = data["pid"]
    return replace(base, **changes)


def read_file(path: Path) -> Mapping[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None


def _from_environ(base: Config, environ: Mapping[str, str]) -> Config:
    data: dict[str, Any] = {}
    if "LEET_INTERVAL" in environ:
        data["interval"] = environ["LEET_INTERVAL"]
    if "LEET_THEME" in environ:
        data["theme"] = environ["LEET_THEME"]
    if "LEET_GRID" in environ:
        data["grid"] = parse_grid(environ["LEET_GRID"], "LEET_GRID")
    if "LEET_HISTORY_MINUTES" in environ:
        data["history_minutes"] = environ["LEET_HISTORY_MINUTES"]
    if "LEET_DISK_PATHS" in environ:
        data["disk_paths"] = [p for p in environ["LEET_DISK_PATHS"].split(os.pathsep) if p]
    if "LEET_GPU_IDS" in environ:
        data["gpu_ids"] = environ["LEET_GPU_IDS"]
    if "LEET_CRASH_AFTER" in environ:
        data["crash_after"] = environ["LEET_CRASH_AFTER"]
    if "LEET_NO_MOUSE" in environ:
        data["mouse"] = environ["LEET_NO_MOUSE"] in ("", "0", "false")
    return _from_mapping(base, data, "environment") if data else base


def parse_grid(text: str, where: str) -> dict[str, int]:
    """``"3x2"`` → rows 3, cols 2."""
    try:
        rows, cols = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ConfigError(f"{where}: grid must look like ROWSxCOLS (e.g. 3x3), got {text!r}") from None
    return {"rows": rows, "cols": cols}


def load(overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None, path: Path | None = None) -> Config:
    """The effective configuration; ``overrides`` are command-line values (None = not given)."""
    environ = os.environ if environ is None else environ
    path = path or config_path(environ)
    config = _from_mapping(Config(), read_file(path), str(path))
    config = replace(config, source=str(path))
    config = _from_environ(config, environ)
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    return _from_mapping(config, given, "command line") if given else config
