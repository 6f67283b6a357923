"""Settings: defaults < config file < LEET_* environment < command-line flags.

The file is TOML at ``$LEET_CONFIG`` or ``<user config dir>/leet/config.toml``:

    interval = 2.0          # seconds between samples
    theme = "textual-dark"
    history_minutes = 10    # width of the live time window
    disk_paths = ["/"]
    mouse = true
    gpu_ids = [0, 2]        # only these NVIDIA GPUs (default: all)
    crash_after = "10m"     # a run silent this long with no exit record is presumed crashed
    ascii = true            # draw in ASCII only (default: when the locale's character set is not UTF-8)
    color = false           # no colour (also NO_COLOR set to anything, or TERM=dumb)
    dcgm_exporter = "http://prometheus:9090/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP"
    open_metrics_filters = ["node_load1"]   # or {"metric regex" = {label = "value regex"}}

    [grid]
    rows = 3
    cols = 3

    [open_metrics_endpoints]          # name = URL: one collector each
    node = "http://localhost:9100/metrics"

    [open_metrics_http_headers]       # sent to every endpoint and to dcgm_exporter
    Authorization = "Bearer TOKEN"

The last four are W&B's ``x_stats_open_metrics_endpoints``, ``_filters``,
``_http_headers`` and ``x_stats_dcgm_exporter``. Their flags add to the file's
mappings (``--openmetrics NAME=URL``, ``--openmetrics-header 'K: V'``: a name
the file also has takes the flag's value) and replace its filters and DCGM URL.

Everything is validated into a frozen ``Config`` before anything uses it:
numbers are finite and in range, themes are known, the file is a readable
regular UTF-8 file (a FIFO is refused, never waited on). A bad value is a
clear ``ConfigError`` naming where it came from (the file and the key, the
``LEET_*`` variable, or the flag), never a traceback.

Two settings also follow the terminal. ``ascii`` left unset means "as the
locale says" (``resolve_ascii``: LC_ALL, then LC_CTYPE, then LANG; C, POSIX or
a character set other than UTF-8 is ASCII); ``LEET_ASCII``, the file or
``--ascii``/``--no-ascii`` decide otherwise. ``color`` is off when
``NO_COLOR`` is set to anything but the empty string (no-color.org) or
``TERM`` is ``dumb``, whatever the file says.
"""

from __future__ import annotations

import locale
import math
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from leet.common.text import escaped
from leet.runfile.files import NotRegularFile, read_regular

if TYPE_CHECKING:  # collectors.openmetrics loads only where a setting names an endpoint or a filter
    from collectors.openmetrics import MetricFilter

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MIN_INTERVAL = 0.1
MAX_INTERVAL = 3600.0  # an hour between samples is a census, not a monitor
MAX_HISTORY_MINUTES = 7 * 24 * 60.0
MAX_CRASH_AFTER = 30 * 24 * 3600.0
MAX_FILE_BYTES = 1 << 20  # a config file is a few lines; anything larger is the wrong file
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
}
# Flags whose values join the file's mapping, name by name, instead of replacing it.
MERGED = frozenset({"open_metrics_endpoints", "open_metrics_http_headers"})
# Where the C library reads the character set from, the first one set winning.
LOCALE_VARIABLES = ("LC_ALL", "LC_CTYPE", "LANG")
MAX_ENVIRON_BYTES = 1 << 20


class ConfigError(ValueError):
    """A setting that cannot be used, with where it came from."""

    def __init__(self, message: str) -> None:
        # Paths and values come from people and files: make them inert wherever this is printed.
        super().__init__(escaped(message))


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
    ascii: bool | None = None  # None: as the locale says (resolve_ascii)
    color: bool = True
    open_metrics_endpoints: tuple[tuple[str, str], ...] = ()  # (name, URL), in the order given
    open_metrics_filters: MetricFilter | None = None  # None: capture everything
    open_metrics_http_headers: tuple[tuple[str, str], ...] = ()
    dcgm_exporter: str | None = None
    alerts: Any = None  # leet.alerts.settings.AlertSettings from the [alerts] table; None: none given
    source: str = field(default="defaults", compare=False)


def default_path() -> Path:
    from platformdirs import user_config_path

    return user_config_path("leet") / "config.toml"


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    explicit = environ.get("LEET_CONFIG")
    return Path(explicit).expanduser() if explicit else default_path()


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


def _merged(old: tuple[tuple[str, str], ...], new: tuple[tuple[str, str], ...], fold: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """``old`` with ``new`` laid over it: a name in both (as ``fold`` compares names) takes the new value, in the old place."""
    merged = {fold(name): (name, value) for name, value in old}
    merged.update({fold(name): (name, value) for name, value in new})
    return tuple(merged.values())


def _switch(name: str) -> Callable[[Any, str], bool]:
    def check(value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {name} must be true or false, got {value!r}")
        return value

    return check


_CHECKS: dict[str, Callable[[Any, str], Any]] = {
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
}
# How two names are the same: endpoint names are keys (exact), header names are not (HTTP).
_FOLDS: dict[str, Callable[[str], str]] = {"open_metrics_endpoints": str, "open_metrics_http_headers": str.lower}


def _from_mapping(base: Config, data: Mapping[str, Any], where: str) -> Config:
    unknown = sorted(set(data) - set(_CHECKS) - {"grid"}, key=str)
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s): {', '.join(map(str, unknown))}")
    flat = {name: value for name, value in data.items() if name != "grid"}
    grid = data.get("grid", {})
    if not isinstance(grid, Mapping):
        raise ConfigError(f"{where}: [grid] must be a table with rows and cols")
    flat.update({f"grid_{name}": grid[name] for name in ("rows", "cols") if name in grid})
    return replace(base, **{name: _CHECKS[name](value, where) for name, value in flat.items()})


def read_file(path: Path, must_exist: bool = False) -> Mapping[str, Any]:
    """The settings in ``path``, {} when there is no such file (unless ``must_exist``: a file named
    on the command line); one that cannot be used is a ConfigError."""
    text = _read_text(path, must_exist)
    return {} if text is None else _parse_toml(text, path)


def _read_text(path: Path, must_exist: bool) -> str | None:
    try:
        data = read_regular(path, MAX_FILE_BYTES + 1)  # a FIFO or a device is refused, never waited on
    except FileNotFoundError:
        if must_exist:
            raise ConfigError(f"config file {path} does not exist") from None
        return None
    except NotRegularFile as error:
        raise ConfigError(f"config file {error}") from None
    except OSError as error:
        raise ConfigError(f"config file {path}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"config file {path}: larger than {MAX_FILE_BYTES >> 20} MiB, so not a config file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"config file {path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})") from None


def _parse_toml(text: str, path: Path) -> Mapping[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {path}: not valid TOML: {error}") from None


def _alert_settings(table: Any, path: Path, text: str) -> Any:
    from leet.alerts.settings import AlertSettingsError, parse_alerts  # only a config with [alerts] pays for it

    try:
        return parse_alerts(table, f"config file {path}", text)
    except AlertSettingsError as error:
        raise ConfigError(str(error)) from None


def _environ_value(name: str, text: str) -> tuple[str, Any]:
    """The setting a ``LEET_*`` variable gives, as ``_from_mapping`` takes it."""
    if name == "LEET_GRID":
        return "grid", parse_grid(text, name)
    if name == "LEET_DISK_PATHS":
        return "disk_paths", [p for p in text.split(os.pathsep) if p]
    if name == "LEET_NO_MOUSE":
        return "mouse", text in ("", "0", "false")
    if name == "LEET_ASCII":
        return "ascii", text not in ("", "0", "false")
    return name[len("LEET_"):].lower(), text


_ENVIRON = (
    "LEET_INTERVAL", "LEET_THEME", "LEET_GRID", "LEET_HISTORY_MINUTES", "LEET_DISK_PATHS", "LEET_GPU_IDS", "LEET_CRASH_AFTER", "LEET_NO_MOUSE",
    "LEET_ASCII",
)


def _from_environ(base: Config, environ: Mapping[str, str]) -> Config:
    for name in _ENVIRON:
        if name in environ:
            key, value = _environ_value(name, environ[name])
            base = _from_mapping(base, {key: value}, name)
    if not terminal_has_color(environ):
        base = replace(base, color=False)
    return base


def terminal_has_color(environ: Mapping[str, str]) -> bool:
    """False when ``NO_COLOR`` holds anything (no-color.org: an empty value does not count) or ``TERM`` is ``dumb``."""
    return not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"


def locale_is_utf8(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the locale in ``environ`` (default: this process's, as it started) writes UTF-8.

    The locale is the first of LC_ALL, LC_CTYPE and LANG that is set and not
    empty, as the C library takes it. None, C and POSIX are ASCII. A name that
    carries its character set (``en_US.UTF-8``, ``C.utf8``, ``de_DE.ISO-8859-1``)
    is taken at its word, even where that locale is not installed: the
    terminal speaks it all the same. For one without (``en_US``) the C library
    says which character set it has, and one it does not know is ASCII.
    """
    environ = _startup_locale() if environ is None else environ
    name = next((value for value in (environ.get(variable) for variable in LOCALE_VARIABLES) if value), "")
    if name in ("", "C", "POSIX"):
        return False
    codeset = name.partition(".")[2].partition("@")[0]
    if not codeset:
        codeset = _c_library_codeset(name)
    return codeset.lower().replace("-", "").replace("_", "") == "utf8"


def _c_library_codeset(name: str) -> str:
    """The character set the C library gives locale ``name``; "" when it has no such locale."""
    if not hasattr(locale, "nl_langinfo"):  # pragma: no cover - not on Linux or macOS
        return ""
    before = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, name)
        return locale.nl_langinfo(locale.CODESET)
    except locale.Error:
        return ""
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def _startup_locale() -> dict[str, str]:
    """LC_ALL, LC_CTYPE and LANG as this process was started with.

    Python replaces a C or POSIX LC_CTYPE with C.UTF-8 in ``os.environ`` as it
    starts (PEP 538), so on Linux they are read from ``/proc/self/environ``,
    which keeps the environment the process was given. Elsewhere a C.UTF-8
    that Python set (UTF-8 mode on without PYTHONUTF8) is dropped: LANG then
    says what the C library was left with.
    """
    try:
        data = read_regular("/proc/self/environ", MAX_ENVIRON_BYTES + 1)
    except OSError:
        data = b""
    if data and len(data) <= MAX_ENVIRON_BYTES:
        found: dict[str, str] = {}
        for item in data.split(b"\0"):
            name, _, value = item.decode("utf-8", "replace").partition("=")
            if name in LOCALE_VARIABLES:
                found[name] = value
        return found
    found = {name: os.environ[name] for name in LOCALE_VARIABLES if name in os.environ}
    coerced = not found.get("LC_ALL") and found.get("LC_CTYPE") in ("C.UTF-8", "C.utf8", "UTF-8")
    if coerced and sys.flags.utf8_mode and not os.environ.get("PYTHONUTF8"):
        del found["LC_CTYPE"]
    return found


def resolve_ascii(config: Config, environ: Mapping[str, str] | None = None) -> Config:
    """``config`` with ``ascii`` decided: where no setting named it, ASCII unless the locale writes UTF-8."""
    if config.ascii is not None:
        return config
    return replace(config, ascii=not locale_is_utf8(environ))


def parse_grid(text: str, where: str) -> dict[str, int]:
    """``"3x2"`` → rows 3, cols 2."""
    try:
        rows, cols = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ConfigError(f"{where}: grid must look like ROWSxCOLS (e.g. 3x3), got {text!r}") from None
    return {"rows": rows, "cols": cols}


def load(
    overrides: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None, path: Path | None = None, must_exist: bool = False
) -> Config:
    """The effective configuration; ``overrides`` are command-line values (None = not given).

    ``must_exist``: ``path`` was named (``--config``), so a missing file is an error, not the defaults.
    """
    environ = os.environ if environ is None else environ
    path = path or config_path(environ)
    text = _read_text(path, must_exist)
    data = dict(_parse_toml(text, path)) if text is not None else {}
    alerts = data.pop("alerts", None)
    config = _from_mapping(Config(), data, f"config file {path}")
    if alerts is not None:
        config = replace(config, alerts=_alert_settings(alerts, path, text or ""))
    config = replace(config, source=str(path))
    config = _from_environ(config, environ)
    for name, value in (overrides or {}).items():
        if value is None:
            continue
        where = FLAGS.get(name, name)
        if name in MERGED:
            value = _merged(getattr(config, name), _CHECKS[name](value, where), _FOLDS[name])
        config = _from_mapping(config, {name: value}, where)
    return config
