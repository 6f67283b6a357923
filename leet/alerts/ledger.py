"""What ``leet watch`` has told, kept across restarts: ``Ledger``.

It holds, in one JSON file under the user's state directory:
- each alert's ``ident`` with the sinks it reached (``*``: all of them, for
  what was already in a file the first time it was seen, which nobody is
  told about);
- where each followed file was left (device, inode, offset), so a restart
  reads on instead of from the start;
- when each run's ``wandb.alert`` title last went out (its wait_duration).

Writes are atomic (a temporary file, then a rename). A ledger that cannot be
read is set aside as ``*.bad`` and started afresh, with a note saying so:
losing it costs repeats, never a crash. So is one larger than ``MAX_BYTES``,
nested deeper than ``MAX_DEPTH`` (checked before parsing, which would recurse
that deep) or holding a number that is not finite (``1e400``, ``NaN``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from itertools import accumulate
from pathlib import Path
from typing import Any, Iterable, Mapping

ALL = "*"
MAX_IDENTS = 50_000  # the oldest are forgotten past this: a year of alerts from a busy cluster
VERSION = 1
MAX_BYTES = 32 << 20  # MAX_IDENTS alerts on long paths weigh about 9 MB (benchmarks/hostile_config.py): a bigger file is no ledger of ours
MAX_DEPTH = 8  # a ledger nests three deep
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``LEET_STATE_DIR``, else the platform's user state directory for leet."""
    environ = os.environ if environ is None else environ
    if environ.get("LEET_STATE_DIR"):
        return Path(environ["LEET_STATE_DIR"])
    from platformdirs import user_state_dir

    return Path(user_state_dir("leet"))


def ledger_path(watched: Iterable[str], environ: Mapping[str, str] | None = None) -> Path:
    """One ledger per set of things watched, so two ``leet watch`` of different folders keep apart."""
    digest = hashlib.sha1("\0".join(sorted(watched)).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return state_dir(environ) / f"watch-{digest}.json"


class Ledger:
    """``Ledger(path)`` (None: kept in memory only); ``note`` says what loading it had to set aside."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.note = ""
        self._sent: dict[str, dict[str, Any]] = {}  # ident → {"t": first time, "sinks": [names]}
        self._files: dict[str, list[int]] = {}  # path → [device, inode, offset]
        self._titles: dict[str, float] = {}  # "source\0title" → when it last went out
        self._episodes: set[tuple[str, str, str]] = set()  # threshold episodes told and still holding at the last save
        self._dirty = False
        if path is not None:
            self._load(path)

    # -- alerts -----------------------------------------------------------------------
    def reached(self, ident: str) -> frozenset[str]:
        """The sinks ``ident`` already reached (``ALL`` among them: every sink)."""
        entry = self._sent.get(ident)
        return frozenset(entry["sinks"]) if entry else frozenset()

    def record(self, ident: str, sink: str, when: float | None = None) -> None:
        entry = self._sent.setdefault(ident, {"t": time.time() if when is None else when, "sinks": []})
        if sink not in entry["sinks"]:
            entry["sinks"].append(sink)
            self._dirty = True
        if len(self._sent) > MAX_IDENTS:
            for old in sorted(self._sent, key=lambda name: self._sent[name]["t"])[: len(self._sent) - MAX_IDENTS]:
                del self._sent[old]

    def settle(self, ident: str, when: float | None = None) -> None:
        """``ident`` needs telling nobody: it was in a file before anyone watched it."""
        self.record(ident, ALL, when)

    # -- wandb.alert's wait_duration --------------------------------------------------
    def title_sent(self, source: str, title: str) -> float | None:
        return self._titles.get(f"{source}\0{title}")

    def note_title(self, source: str, title: str, when: float) -> None:
        self._titles[f"{source}\0{title}"] = when
        self._dirty = True

    # -- threshold episodes still holding ------------------------------------------------
    @property
    def episodes(self) -> set[tuple[str, str, str]]:
        return set(self._episodes)

    def keep_episodes(self, episodes: set[tuple[str, str, str]]) -> None:
        if episodes != self._episodes:
            self._episodes = set(episodes)
            self._dirty = True

    # -- files ------------------------------------------------------------------------
    def place(self, path: str) -> tuple[int, int, int] | None:
        """(device, inode, offset) where ``path`` was left, or None."""
        found = self._files.get(path)
        return (found[0], found[1], found[2]) if found else None

    def leave(self, path: str, device: int, inode: int, offset: int) -> None:
        if self._files.get(path) != [device, inode, offset]:
            self._files[path] = [device, inode, offset]
            self._dirty = True

    # -- the file ---------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        return self._dirty

    def save(self) -> None:
        """Write it if anything changed; an error is left to the caller (``OSError``)."""
        if self.path is None or not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        part = self.path.with_name(self.path.name + f".{os.getpid()}.part")
        body = {"version": VERSION, "sent": self._sent, "files": self._files, "titles": self._titles, "episodes": sorted(self._episodes)}
        part.write_text(json.dumps(body, separators=(",", ":")), encoding="utf-8")
        os.replace(part, self.path)
        self._dirty = False

    def _load(self, path: Path) -> None:
        from leet.runfile.files import NotRegularFile, open_regular

        try:
            with open_regular(path) as handle:
                if os.fstat(handle.fileno()).st_size > MAX_BYTES:  # refused unread
                    raise ValueError(f"larger than {MAX_BYTES >> 20} MiB")
                data = handle.read(MAX_BYTES + 1)
            if len(data) > MAX_BYTES:
                raise ValueError(f"larger than {MAX_BYTES >> 20} MiB")
            text = data.decode("utf-8")
        except FileNotFoundError:
            return
        except (OSError, NotRegularFile, UnicodeDecodeError, ValueError) as error:
            self._set_aside(path, f"cannot read it: {getattr(error, 'strerror', None) or error}")
            return
        del data
        try:
            body = _parsed(text)
            if not isinstance(body, dict) or body.get("version") != VERSION:
                raise ValueError("not a ledger of this version")
            self._sent = {str(k): {"t": _finite(v["t"]), "sinks": [str(s) for s in v["sinks"]]} for k, v in body.get("sent", {}).items()}
            self._files = {str(k): [int(n) for n in v][:3] for k, v in body.get("files", {}).items() if len(v) >= 3}
            self._titles = {str(k): _finite(v) for k, v in body.get("titles", {}).items()}
            self._episodes = {(str(a), str(b), str(c)) for a, b, c in body.get("episodes", [])}
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
            self._sent, self._files, self._titles = {}, {}, {}
            self._set_aside(path, str(error))

    def _set_aside(self, path: Path, why: str) -> None:
        bad = path.with_name(path.name + ".bad")
        try:
            os.replace(path, bad)
            where = f"; kept as {bad}"
        except OSError:
            where = ""
        self.note = f"alert ledger {path} could not be used ({why}); starting afresh{where}: alerts sent before may be sent again"


def _parsed(text: str) -> Any:
    """The JSON in ``text``; ``ValueError`` if it nests past ``MAX_DEPTH`` or holds a number that is not finite."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if brackets and max(accumulate(map(_STEP.__getitem__, map(ord, brackets)))) > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    return json.loads(text, parse_float=_finite, parse_constant=_not_finite)


def _finite(number: Any) -> float:
    value = float(number)
    if not math.isfinite(value):
        raise ValueError(f"{number} is not a finite number")
    return value


def _not_finite(text: str) -> float:
    raise ValueError(f"{text} is not a finite number")
