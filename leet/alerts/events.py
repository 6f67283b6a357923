"""The one alert type: what happened, to what, when, and how loud.

Every detector makes ``Alert``s and every sink takes them. ``ident`` is the
alert's identity across restarts: the same happening read again (a file
re-read, ``leet watch`` started again) gives the same ``ident``, so the
ledger can tell it was sent already.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

FINISHED, FAILED, CRASHED, ALERT, NODE_LOST, THRESHOLD = "finished", "failed", "crashed", "alert", "node-lost", "threshold"
EVENT_KINDS = (FINISHED, FAILED, CRASHED, ALERT, NODE_LOST, THRESHOLD)  # the --on names, in this order

INFO, WARNING, ERROR = "info", "warning", "error"
LEVELS = (INFO, WARNING, ERROR)
# wandb.alert's AlertLevel names as the run file holds them, and the spellings people write.
_LEVEL_WORDS = {"info": INFO, "warn": WARNING, "warning": WARNING, "error": ERROR, "err": ERROR}
# Apprise's notify types, by level; a finished run is good news.
APPRISE_TYPES = {INFO: "info", WARNING: "warning", ERROR: "failure"}


def level_of(text: str) -> str:
    """``INFO``/``WARN``/``ERROR`` (wandb.AlertLevel) and friends → ``info``/``warning``/``error``; unknown → info."""
    return _LEVEL_WORDS.get(str(text).strip().lower(), INFO)


def default_level(kind: str) -> str:
    return {FINISHED: INFO, FAILED: ERROR, CRASHED: ERROR, NODE_LOST: WARNING, THRESHOLD: WARNING}.get(kind, INFO)


@dataclass(frozen=True)
class Alert:
    """One thing to tell someone: ``Alert("failed", "run abc failed", "exit code 1", ...)``."""

    kind: str  # one of EVENT_KINDS
    title: str
    text: str
    level: str = INFO  # one of LEVELS
    time: float = 0.0  # unix seconds it happened (or was seen, when the file does not say)
    source: str = ""  # what it is about: a run directory, "host", a Prometheus URL
    run_id: str = ""
    run_name: str = ""
    label: str = ""  # a shared run's writer, a cluster's node, a host's label
    key: str = ""  # threshold: the W&B key that crossed
    value: float | None = None  # threshold: the value that crossed it
    rule: str = ""  # threshold: the rule as written
    wait_s: float = 0.0  # wandb.alert's wait_duration: the same title for this run is quiet this long
    ident: str = ""  # the same happening read again has the same ident

    @property
    def apprise_type(self) -> str:
        if self.kind == FINISHED:
            return "success"
        return APPRISE_TYPES.get(self.level, "info")

    def as_json(self) -> dict[str, Any]:
        """Plain JSON values (a command's stdin, a webhook's body, the alerts pane's history)."""
        value = self.value if self.value is None or math.isfinite(self.value) else str(self.value)
        return {
            "kind": self.kind, "title": self.title, "text": self.text, "level": self.level, "time": self.time,
            "source": self.source, "run_id": self.run_id, "run_name": self.run_name, "label": self.label,
            "key": self.key, "value": value, "rule": self.rule, "wait_s": self.wait_s, "ident": self.ident,
        }
