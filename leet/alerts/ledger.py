"""What ``leet watch`` has told, kept across restarts: ``Ledger``.

It holds, in one JSON file under the user's state directory:
- each alert's ``ident`` with the sinks it reached (``*``: all of them, for
  what was already in a file the first time it was seen, which nobody is
  told about);
- where each followed file was left (device, inode, offset), so a restart
  reads on instead of from the start;
- the folders of runs already listed, written with the places of the runs
  found there: after a restart, a run the ledger has no place for joined
  while nobody watched (it is news), not before anyone did;
- when each run's ``wandb.alert`` title last went out (its wait_duration);
- the threshold episodes told and still holding, with the alert each was
  told by (a sink added later is told of them once);
- the outbox: each alert some sink still owes an acknowledgement for (the
  alert's JSON, when it was first owed, and which sinks), and for each alert
  the sinks that gave it up past its maximum age.

An alert joins the outbox in the same write that moves a file's offset past
it, so a process killed at any moment either reads it again or finds it
owed: a restart sends every owed alert again (at least once, never lost).

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
from dataclasses import fields
from itertools import accumulate
from pathlib import Path
from typing import Any, Iterable, Mapping

from leet.alerts.events import Alert
from leet.model.keys import split_label

ALL = "*"
MAX_IDENTS = 50_000  # the oldest are forgotten past this: a year of alerts from a busy cluster
VERSION = 1
MAX_BYTES = 32 << 20  # MAX_IDENTS alerts on long paths weigh about 9 MB (benchmarks/hostile_config.py): a bigger file is no ledger of ours
MAX_DEPTH = 8  # a ledger nests four deep
MAX_OWED = 10_000  # alerts owed at once: past it the oldest are given up (a sink down for weeks under a storm)
ALERT_FIELDS = {field.name: field.type for field in fields(Alert)}
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
        self._folders: set[str] = set()  # folders of runs listed, their runs then there settled
        self._titles: dict[str, float] = {}  # "source\0title" → when it last went out
        self._episodes: set[tuple[str, str, str]] = set()  # threshold episodes told and still holding at the last save
        self._episode_alerts: dict[str, dict[str, Any]] = {}  # ident → the JSON of the alert an open episode was told by
        self._owed: dict[str, dict[str, Any]] = {}  # ident → {"t": first owed, "alert": its JSON, "sinks": [names]}, oldest first
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

    def given_up(self, ident: str) -> frozenset[str]:
        """The sinks that gave ``ident`` up past its maximum age."""
        entry = self._sent.get(ident)
        return frozenset(entry.get("given_up", ())) if entry else frozenset()

    def settle(self, ident: str, when: float | None = None) -> None:
        """``ident`` needs telling nobody: it was in a file before anyone watched it."""
        self.record(ident, ALL, when)

    # -- the outbox -------------------------------------------------------------------
    def owe(self, alert: Alert, sinks: Iterable[str], when: float) -> list[str]:
        """``alert`` is owed to ``sinks`` until each acknowledges it (``delivered``) or gives it up; the alerts given up to stay in bounds."""
        sinks = list(sinks)
        if not sinks:
            return []
        entry = self._owed.setdefault(alert.ident, {"t": when, "alert": alert.as_json(), "sinks": []})
        entry["sinks"] += [sink for sink in sinks if sink not in entry["sinks"]]
        self._dirty = True
        dropped = []
        while len(self._owed) > MAX_OWED:
            oldest = next(iter(self._owed))
            for sink in list(self._owed[oldest]["sinks"]):
                self.give_up(oldest, sink)
                dropped.append(f"{oldest} to {sink}")
        return dropped

    def owed(self) -> list[tuple[str, float, dict[str, Any], tuple[str, ...]]]:
        """(ident, first owed, alert JSON, sinks that owe it), oldest first."""
        return [(ident, entry["t"], entry["alert"], tuple(entry["sinks"])) for ident, entry in self._owed.items()]

    def pending(self) -> list[str]:
        return list(self._owed)

    def delivered(self, ident: str, sink: str, when: float | None = None) -> None:
        self.record(ident, sink, when)
        self._release(ident, sink)

    def give_up(self, ident: str, sink: str) -> None:
        entry = self._sent.setdefault(ident, {"t": time.time(), "sinks": []})
        entry.setdefault("given_up", [])
        if sink not in entry["given_up"]:
            entry["given_up"].append(sink)
        self._release(ident, sink)
        self._dirty = True

    def _release(self, ident: str, sink: str) -> None:
        entry = self._owed.get(ident)
        if entry is not None and sink in entry["sinks"]:
            entry["sinks"].remove(sink)
            if not entry["sinks"]:
                del self._owed[ident]
            self._dirty = True

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
        holding = {_episode_key(*episode) for episode in episodes}
        for ident, body in list(self._episode_alerts.items()):
            if _episode_of(body) not in holding:
                del self._episode_alerts[ident]
                self._dirty = True

    def note_episode_alert(self, alert: Alert) -> None:
        """``alert`` told that an episode began; it replaces the alert of an earlier episode of the same rule and key."""
        body = alert.as_json()
        for ident, earlier in list(self._episode_alerts.items()):
            if _episode_of(earlier) == _episode_of(body):
                del self._episode_alerts[ident]
        self._episode_alerts[alert.ident] = body
        self._dirty = True

    def episode_alerts(self) -> list[dict[str, Any]]:
        """The JSON of the alerts that told of the episodes open at the last save."""
        return list(self._episode_alerts.values())

    # -- files ------------------------------------------------------------------------
    def place(self, path: str) -> tuple[int, int, int] | None:
        """(device, inode, offset) where ``path`` was left, or None."""
        found = self._files.get(path)
        return (found[0], found[1], found[2]) if found else None

    def leave(self, path: str, device: int, inode: int, offset: int) -> None:
        if self._files.get(path) != [device, inode, offset]:
            self._files[path] = [device, inode, offset]
            self._dirty = True

    def listed(self, folder: str) -> bool:
        """Whether ``folder`` was listed before: a run in it the ledger has no place for came since."""
        return folder in self._folders

    def list_folder(self, folder: str) -> None:
        if folder not in self._folders:
            self._folders.add(folder)
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
        body = {"version": VERSION, "sent": self._sent, "files": self._files, "folders": sorted(self._folders), "titles": self._titles, "episodes": sorted(self._episodes), "owed": self._owed, "episode_alerts": self._episode_alerts}
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
            self._sent = {str(k): _sent_entry(v) for k, v in body.get("sent", {}).items()}
            self._files = {str(k): [int(n) for n in v][:3] for k, v in body.get("files", {}).items() if len(v) >= 3}
            self._folders = {folder for folder in body.get("folders", []) if isinstance(folder, str)}
            self._titles = {str(k): _finite(v) for k, v in body.get("titles", {}).items()}
            self._episodes = {(str(a), str(b), str(c)) for a, b, c in body.get("episodes", [])}
            self._owed = {str(k): _owed_entry(v) for k, v in body.get("owed", {}).items()}
            self._episode_alerts = {str(k): alert_from_json(v).as_json() for k, v in body.get("episode_alerts", {}).items()}
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
            self._sent, self._files, self._titles, self._owed, self._episode_alerts = {}, {}, {}, {}, {}
            self._folders = set()
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


def _sent_entry(value: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"t": _finite(value["t"]), "sinks": [str(sink) for sink in value["sinks"]]}
    if value.get("given_up"):
        entry["given_up"] = [str(sink) for sink in value["given_up"]]
    return entry


def _owed_entry(value: Any) -> dict[str, Any]:
    alert = alert_from_json(value["alert"])
    return {"t": _finite(value["t"]), "alert": alert.as_json(), "sinks": [str(sink) for sink in value["sinks"]]}


def _episode_key(source: str, rule: str, key: str) -> tuple[str, str, str, str]:
    """An open episode as its alert names it: (source, rule, key without its label, label)."""
    bare, label = split_label(key)
    return (source, rule, bare, label or "")


def _episode_of(body: dict[str, Any]) -> tuple[str, str, str, str]:
    return (body.get("source", ""), body.get("rule", ""), body.get("key", ""), body.get("label", ""))


def alert_from_json(body: Any) -> Alert:
    """The ``Alert`` that ``Alert.as_json`` wrote; ``ValueError`` for anything else."""
    if not isinstance(body, dict) or not isinstance(body.get("ident"), str) or not body["ident"]:
        raise ValueError("an owed alert without its ident")
    values: dict[str, Any] = {}
    for name, value in body.items():
        if name not in ALERT_FIELDS:
            continue
        if name in ("time", "wait_s"):
            values[name] = _finite(value)
        elif name == "value":
            values[name] = None if value is None else float(value)  # "inf" as as_json writes it
        elif isinstance(value, str):
            values[name] = value
        else:
            raise ValueError(f"an owed alert's {name} is not text")
    return Alert(**values)
