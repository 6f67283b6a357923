"""What each setting may be: one check per key, each naming where a bad value came from.

``CHECKS`` maps every key of ``Config`` that a file, a ``LEET_*`` variable or
a flag can set to the function that turns the value given into the value
kept: numbers finite and in range, themes known, endpoints, filters, headers
and the DCGM URL as their collectors will read them. ``applied`` lays a
mapping of such values over a ``Config``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Mapping

from leet.config.settings import Config, ConfigError

if TYPE_CHECKING:  # collectors.openmetrics loads only where a setting names an endpoint or a filter
    from collectors.openmetrics import MetricFilter

MIN_INTERVAL = 0.1
MAX_INTERVAL = 3600.0  # an hour between samples is a census, not a monitor
MAX_HISTORY_MINUTES = 7 * 24 * 60.0
MAX_CRASH_AFTER = 30 * 24 * 3600.0
# Textual's built-in themes. Listed here so that checking one imports no
# Textual; tests/test_config_validation.py keeps the list in step with Textual.
THEMES = frozenset({
    "ansi-dark", "ansi-light", "atom-one-dark", "atom-one-light", "catppuccin-frappe", "catppuccin-latte",
    "catppuccin-macchiato", "catppuccin-mocha", "dracula", "flexoki", "gruvbox", "monokai", "nord", "rose-pine",
    "rose-pine-dawn", "rose-pine-moon", "solarized-dark", "solarized-light", "textual-dark", "textual-light", "tokyo-night",
})
# Where a command-line value came from, as the person typed it.
FLAGS = {
    "interval": "--interval", "theme": "--theme", "grid_rows": "--grid", "grid_cols": "--grid",
    "disk_paths": "--disk-path", "gpu_ids": "--gpu-ids", "pid": "--pid", "track_tree": "--tree",
    "label": "--label", "mouse": "--no-mouse", "crash_after": "--crash-after", "ascii": "--ascii",
    "open_metrics_endpoints": "--openmetrics", "open_metrics_filters": "--openmetrics-filter",
    "open_metrics_http_headers": "--openmetrics-header", "dcgm_exporter": "--dcgm-exporter",
    "max_connections": "--max-connections", "tls_cert": "--tls-cert", "tls_key": "--tls-key",
    "images": "--images", "remember": "--no-remember",
}
MAX_CONNECTIONS = 10_000  # leet serve's cap: each connection is a thread


def _finite(value: Any, where: str, name: str, what: str) -> float:
    """``value`` as a finite float; bools, text that is no number, NaN and infinities are refused."""
    try:
        if isinstance(value, bool):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{where}: {name} must be {what}, got {value!r}") from None
    if not math.isfinite(number):
        raise ConfigError(f"{where}: {name} must be a finite number, got {value!r}")
    return number


def check_interval(value: Any, where: str) -> float:
    """Seconds between samples, from ``MIN_INTERVAL`` to ``MAX_INTERVAL``."""
    seconds = _finite(value, where, "interval", "a number of seconds")
    if not MIN_INTERVAL <= seconds <= MAX_INTERVAL:
        raise ConfigError(f"{where}: interval must be at least {MIN_INTERVAL} s and at most {MAX_INTERVAL:g} s (an hour), got {value!r}")
    return seconds


def interval_flag(text: str) -> float:
    """``--interval`` as argparse takes it: seconds, with an optional ``s``, or ``500ms``; the config's rule."""
    import argparse

    try:
        value = float(text[:-2]) / 1000 if text.endswith("ms") else float(text.rstrip("s"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    try:
        return check_interval(value, "--interval")
    except ConfigError as error:  # so the flag and the file agree
        raise argparse.ArgumentTypeError(str(error).removeprefix("--interval: ")) from None


def _check_theme(value: Any, where: str) -> str:
    if not isinstance(value, str) or value not in THEMES:
        raise ConfigError(f"{where}: unknown theme {value!r}; known themes: {', '.join(sorted(THEMES))}")
    return value


def _check_grid(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 9:
        raise ConfigError(f"{where}: grid {name} must be a whole number from 1 to 9, got {value!r}")
    return value


def _check_history(value: Any, where: str) -> float:
    minutes = _finite(value, where, "history_minutes", "a number of minutes")
    if not 0 < minutes <= MAX_HISTORY_MINUTES:
        raise ConfigError(f"{where}: history_minutes must be positive and at most {MAX_HISTORY_MINUTES:g} (a week), got {value!r}")
    return minutes


def _check_disk_paths(value: Any, where: str) -> tuple[str, ...]:
    paths = [value] if isinstance(value, str) else value
    if not isinstance(paths, (list, tuple)) or not paths or not all(isinstance(p, str) and p and "\0" not in p for p in paths):
        raise ConfigError(f"{where}: disk_paths must be a list of paths, got {value!r}")
    return tuple(paths)


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
    except (ValueError, OverflowError):
        raise ConfigError(f"{where}: crash_after must be a duration such as 10m, 90s or 1h, got {value!r}") from None
    if not 0 < seconds <= MAX_CRASH_AFTER:
        raise ConfigError(f"{where}: crash_after must be positive and at most 30 days, got {value!r}")
    return seconds


def _check_pid(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}: pid must be a process id, got {value!r}")
    return value


def _check_label(value: Any, where: str) -> str | None:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: label must be text, got {value!r}")
    return value or None


def _setting(where: str, name: str) -> str:
    """How a message names the setting: a flag names itself; in a file or the environment, the key follows."""
    return where if where.startswith("--") else f"{where}: {name}"


def _pairs(value: Any, where: str, name: str, what: str) -> list[tuple[Any, Any]]:
    """A TOML table, or the (name, value) pairs a flag gives, as pairs."""
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, (list, tuple)) and all(isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in value):
        return [tuple(pair) for pair in value]
    raise ConfigError(f"{where}: {name} must be a table of {what}, got {value!r}")


def _check_endpoints(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """``{name: URL}``: names fit in keys, URLs are http(s) with a host."""
    from collectors.openmetrics import checked_endpoint_name, checked_url

    checked: dict[str, str] = {}
    for name, url in _pairs(value, where, "open_metrics_endpoints", "endpoint names and URLs"):
        try:
            name = checked_endpoint_name(name)
            url = checked_url(url, f"endpoint {name!r}")
        except ValueError as error:
            raise ConfigError(f"{_setting(where, 'open_metrics_endpoints')}: {error}") from None
        if name in checked:  # only flags can repeat one; keeping either would hide the other
            raise ConfigError(f"{_setting(where, 'open_metrics_endpoints')}: endpoint {name!r} is given twice")
        checked[name] = url
    return tuple(checked.items())


def _check_filters(value: Any, where: str) -> MetricFilter:
    """W&B's two forms: a list of regexes, or ``{metric regex: {label: value regex}}``."""
    from collectors.openmetrics import parse_filters

    try:
        return parse_filters(value, _setting(where, "open_metrics_filters"))
    except ValueError as error:
        raise ConfigError(str(error)) from None


def _check_headers(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    from collectors.openmetrics import checked_headers

    pairs = _pairs(value, where, "open_metrics_http_headers", "header names and values")
    try:
        return tuple(checked_headers(pairs).items())
    except ValueError as error:
        raise ConfigError(f"{_setting(where, 'open_metrics_http_headers')}: {error}") from None


def _check_dcgm_exporter(value: Any, where: str) -> str | None:
    """A Prometheus query URL (checked as ``DcgmPrometheusCollector`` will read it); empty means none."""
    from collectors.dcgm import parse_dcgm_url

    if not isinstance(value, str):
        raise ConfigError(f"{where}: dcgm_exporter must be a URL as text, got {value!r}")
    if not value.strip():
        return None
    try:
        parse_dcgm_url(value)
    except ValueError as error:
        # The parser names the flag; a file's key is named in its place.
        text, flag = str(error), FLAGS["dcgm_exporter"]
        named = _setting(where, "dcgm_exporter")
        raise ConfigError(named + text[len(flag):] if text.startswith(flag) else f"{named}: {text}") from None
    return value.strip()


def _check_max_connections(value: Any, where: str) -> int:
    """``leet serve``'s cap on connections served at once: a whole number from 1 to ``MAX_CONNECTIONS``."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(f"{where}: max_connections must be a whole number, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{where}: max_connections must be a whole number, got {value!r}") from None
    if not 1 <= number <= MAX_CONNECTIONS:
        raise ConfigError(f"{where}: max_connections must be from 1 to {MAX_CONNECTIONS}, got {value!r}")
    return number


IMAGE_MODES = ("auto", "blocks", "sixel", "kitty", "off")


def _check_images(value: Any, where: str) -> str:
    """How the media pane draws images: one of ``IMAGE_MODES``."""
    if value not in IMAGE_MODES:
        raise ConfigError(f"{where}: images must be one of {', '.join(IMAGE_MODES)}, got {value!r}")
    return str(value)


MAX_CURRENCY_CHARS = 4  # "$", "€", "CHF", "kr"


def _check_energy_price(value: Any, where: str) -> float:
    """A price per kWh, zero or more."""
    price = _finite(value, where, "energy_price", "a price per kWh")
    if price < 0:
        raise ConfigError(f"{where}: energy_price must not be negative, got {value!r}")
    return price


def _check_energy_currency(value: Any, where: str) -> str:
    """What is written before a cost: a few printable characters."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_CURRENCY_CHARS or not value.isprintable() or value.isspace():
        raise ConfigError(f"{where}: energy_currency must be 1 to {MAX_CURRENCY_CHARS} printable characters, got {value!r}")
    return value


def _check_path(name: str) -> Callable[[Any, str], str]:
    def check(value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: {name} must be a file path, got {value!r}")
        return value

    return check


def _switch(name: str) -> Callable[[Any, str], bool]:
    def check(value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {name} must be true or false, got {value!r}")
        return value

    return check


CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "interval": check_interval,
    "theme": _check_theme,
    "grid_rows": lambda value, where: _check_grid(value, where, "rows"),
    "grid_cols": lambda value, where: _check_grid(value, where, "cols"),
    "history_minutes": _check_history,
    "disk_paths": _check_disk_paths,
    "mouse": _switch("mouse"),
    "track_tree": _switch("track_tree"),
    "sidebar": _switch("sidebar"),
    "label": _check_label,
    "gpu_ids": _check_gpu_ids,
    "crash_after": _check_crash_after,
    "pid": _check_pid,
    "ascii": _switch("ascii"),
    "color": _switch("color"),
    "open_metrics_endpoints": _check_endpoints,
    "open_metrics_filters": _check_filters,
    "open_metrics_http_headers": _check_headers,
    "dcgm_exporter": _check_dcgm_exporter,
    "max_connections": _check_max_connections,
    "tls_cert": _check_path("tls_cert"),
    "tls_key": _check_path("tls_key"),
    "images": _check_images,
    "remember": _switch("remember"),
    "energy_price": _check_energy_price,
    "energy_currency": _check_energy_currency,
}


def applied(base: Config, data: Mapping[str, Any], where: str) -> Config:
    """``base`` with the settings in ``data`` checked and laid over it; ``[grid]`` is a table of ``rows`` and ``cols``."""
    unknown = sorted(set(data) - set(CHECKS) - {"grid"}, key=str)
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s): {', '.join(map(str, unknown))}")
    flat = {name: value for name, value in data.items() if name != "grid"}
    grid = data.get("grid", {})
    if not isinstance(grid, Mapping):
        raise ConfigError(f"{where}: [grid] must be a table with rows and cols")
    flat.update({f"grid_{name}": grid[name] for name in ("rows", "cols") if name in grid})
    return replace(base, **{name: CHECKS[name](value, where) for name, value in flat.items()})


def parse_grid(text: str, where: str) -> dict[str, int]:
    """``"3x2"`` → rows 3, cols 2."""
    try:
        rows, cols = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ConfigError(f"{where}: grid must look like ROWSxCOLS (e.g. 3x3), got {text!r}") from None
    return {"rows": rows, "cols": cols}
