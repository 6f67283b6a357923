"""The remembered layout: ``layout.json``, a file leet owns, read back with care and written atomically.

It lives in ``$LEET_STATE_DIR`` or ``<user state dir>/leet`` and holds, per
view, what the person arranged (``views``: a dict per view, to which a
screen adds its own keys), and the settings changed on the settings screen
(``settings``). The file is written whole to a temporary file beside it and
renamed over it, so a crash leaves the old file or the new one. Read back,
it is bounded (``MAX_FILE_BYTES``, ``MAX_DEPTH``, ``MAX_ENTRIES``) and checked
against its schema: a broken or hostile file costs one message and the
defaults, never a traceback. A folder that cannot be written costs one
message; leet then runs on without saving.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from leet.runfile.files import NotRegularFile, read_regular

FILE_NAME = "layout.json"
VERSION = 1
MAX_FILE_BYTES = 256 * 1024  # a layout is a few KB; a larger file is not one of ours
MAX_DEPTH = 5  # file > views > view > a value such as {"chart": [lo, hi]} > a number of it
MAX_ENTRIES = 1000  # in any one object or list
MAX_TEXT = 512  # characters in any key or string


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$LEET_STATE_DIR``, else the user state directory for leet."""
    environ = os.environ if environ is None else environ
    explicit = environ.get("LEET_STATE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    from platformdirs import user_state_path

    return user_state_path("leet")


@dataclass
class Layout:
    """What is remembered: a dict per view (``views``), and settings by name (``settings``)."""

    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def view(self, name: str) -> dict[str, Any]:
        """The remembered dict of view ``name``; empty when nothing is remembered."""
        return self.views.get(name, {})

    def as_json(self) -> str:
        return json.dumps({"version": VERSION, "views": self.views, "settings": self.settings}, indent=1, sort_keys=True, allow_nan=False)


class BadLayout(ValueError):
    """A layout file that is not one: why, in words."""


def parse_layout(text: str) -> Layout:
    """The layout in ``text``; ``BadLayout`` saying why when it is not valid JSON of our schema within bounds."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        raise BadLayout(f"not valid JSON ({str(error)[:80]})") from None
    _check_value(data, 0, "the file")
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise BadLayout(f"not a version {VERSION} layout")
    if set(data) - {"version", "views", "settings"}:
        raise BadLayout("unknown entries at the top")
    views, settings = data.get("views", {}), data.get("settings", {})
    if not isinstance(views, dict) or not all(isinstance(view, dict) for view in views.values()):
        raise BadLayout("views must be an object of objects")
    if not isinstance(settings, dict):
        raise BadLayout("settings must be an object")
    return Layout(views=views, settings=settings)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _check_value(value: Any, depth: int, where: str) -> None:
    if depth > MAX_DEPTH:
        raise BadLayout(f"{where} nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        if len(value) > MAX_ENTRIES:
            raise BadLayout(f"{where} has more than {MAX_ENTRIES} entries")
        for key, item in value.items():
            if len(key) > MAX_TEXT:
                raise BadLayout(f"a name in {where} is longer than {MAX_TEXT} characters")
            _check_value(item, depth + 1, repr(key[:40]))
    elif isinstance(value, list):
        if len(value) > MAX_ENTRIES:
            raise BadLayout(f"{where} has more than {MAX_ENTRIES} entries")
        for item in value:
            _check_value(item, depth + 1, where)
    elif isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise BadLayout(f"a text in {where} is longer than {MAX_TEXT} characters")
    elif isinstance(value, float) and not math.isfinite(value):
        raise BadLayout(f"{where} holds a number out of range")
    elif value is not None and not isinstance(value, (bool, int, float)):
        raise BadLayout(f"{where} holds a {type(value).__name__}")


def read_layout(path: Path) -> tuple[Layout, str]:
    """The layout in ``path`` and "" ; or the defaults and one message saying why the file was not used.

    A missing file is the defaults without a message: nothing was remembered yet.
    """
    try:
        data = read_regular(path, MAX_FILE_BYTES + 1)  # a FIFO is refused, never waited on
    except FileNotFoundError:
        return Layout(), ""
    except NotRegularFile as error:
        return Layout(), f"remembered layout not used: {error}"
    except OSError as error:
        return Layout(), f"remembered layout not used: cannot read {path}: {error.strerror or error}"
    if len(data) > MAX_FILE_BYTES:
        return Layout(), f"remembered layout not used: {path} is larger than {MAX_FILE_BYTES // 1024} KiB"
    try:
        return parse_layout(data.decode("utf-8")), ""
    except UnicodeDecodeError:
        return Layout(), f"remembered layout not used: {path} is not UTF-8 text"
    except BadLayout as error:
        return Layout(), f"remembered layout not used: {path}: {error}"


def write_atomically(path: Path, text: str) -> None:
    """``text`` as the whole of ``path``: written beside it, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            left = memoryview(text.encode("utf-8"))
            while left:
                left = left[os.write(handle, left):]
            os.fsync(handle)
        finally:
            os.close(handle)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class LayoutFile:
    """One ``layout.json``: read once, written when what it holds changed, silent after its first failure."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE_NAME
        self.layout, self.message = read_layout(self.path)
        self._written = self.layout.as_json()
        self.broken = False  # a write failed: no more tries, no more messages

    def save(self) -> str:
        """Write ``layout`` if it changed since it was read or last written; a message the first time a write fails, else ""."""
        text, message = self.changed_text()
        return self.write(text) if text is not None else message

    def changed_text(self) -> tuple[str | None, str]:
        """``layout`` as the file would hold it, or None when that is what it holds (or writing has failed); a message once."""
        if self.broken:
            return None, ""
        try:
            text = self.layout.as_json()
        except (TypeError, ValueError) as error:  # a screen put a value JSON cannot hold
            self.broken = True
            return None, f"layout not remembered: {error}"
        return (None, "") if text == self._written else (text, "")

    def write(self, text: str) -> str:
        """``text`` written as the file (on any thread: it touches only the file and what was written); a message the first time a write fails."""
        if self.broken:
            return ""
        try:
            write_atomically(self.path, text)
        except OSError as error:
            self.broken = True
            return f"layout not remembered: cannot write {self.path.parent}: {error.strerror or error}"
        self._written = text
        return ""


# -- reading one remembered value: what a screen restores, or None when it is not one ---------------
def remembered_grid(value: Any) -> tuple[int, int] | None:
    """``[rows, cols]``, each a whole number from 1 to 9."""
    if isinstance(value, list) and len(value) == 2 and all(type(n) is int and 1 <= n <= 9 for n in value):
        return value[0], value[1]
    return None


def remembered_switch(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def remembered_choice(value: Any, choices: Any) -> str | None:
    """``value`` when it is one of ``choices``."""
    return value if isinstance(value, str) and value in choices else None


def remembered_sort(value: Any, columns: Any) -> tuple[str, bool] | None:
    """``[column, descending]`` for a column of ``columns``."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], bool) and remembered_choice(value[0], columns):
        return value[0], value[1]
    return None


def remembered_modes(value: Any, modes: Any) -> dict[str, str]:
    """``{chart: mode}``, keeping the entries whose mode is one of ``modes``."""
    if not isinstance(value, dict):
        return {}
    return {chart: mode for chart, mode in value.items() if remembered_choice(mode, modes)}


def remembered_weight(value: Any, weights: Any) -> float | None:
    """``value`` when it is a number among ``weights`` (a smoothing weight)."""
    return float(value) if type(value) in (int, float) and value in weights else None


def remembered_weights(value: Any, weights: Any) -> dict[str, float]:
    """``{chart: weight}``, keeping the entries whose weight is one of ``weights``."""
    if not isinstance(value, dict):
        return {}
    kept = {chart: remembered_weight(weight, weights) for chart, weight in value.items()}
    return {chart: weight for chart, weight in kept.items() if weight is not None}


def remembered_window(value: Any) -> tuple[float, float] | None:
    """``[low, high]``: an x window, two numbers with low below high and a finite span."""
    if not (isinstance(value, list) and len(value) == 2 and all(type(n) in (int, float) for n in value)):
        return None
    low, high = float(value[0]), float(value[1])
    return (low, high) if low < high and math.isfinite(high - low) else None


def remembered_windows(value: Any) -> dict[str, tuple[float, float]]:
    """``{chart: [low, high]}``, keeping the entries that are windows."""
    if not isinstance(value, dict):
        return {}
    kept = {chart: remembered_window(window) for chart, window in value.items()}
    return {chart: window for chart, window in kept.items() if window is not None}
