"""Metric samples in, threshold alerts out.

``ThresholdWatch`` keeps, for each (scope, key) a rule matches, when the
condition began to hold and whether this episode has fired. Time is the data's
own (a history row's timestamp, a sweep's time), never the wall clock, so a
file read again gives the same alerts with the same idents. One thread calls
it; it holds no lock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable, Mapping

from leet.alerts.events import THRESHOLD, Alert
from leet.alerts.rules import Rule, format_duration
from leet.model.keys import split_label

MATCH_CACHE_LIMIT = 100_000  # keys whose matching rules are remembered; past it the cache starts again
_WORDS = {">": "above", ">=": "at or above", "<": "below", "<=": "at or below", "==": "at", "!=": "not"}


@dataclass(frozen=True)
class Scope:
    """What a sample's values belong to: a run directory, ``"host"`` or a Prometheus URL, and the run if any."""

    source: str
    run_id: str = ""
    run_name: str = ""

    @property
    def who(self) -> str:
        return self.run_name or self.run_id


class _Episode:
    """One rule on one key of one scope: since when it holds, whether it fired, and when it last did."""

    __slots__ = ("since", "fired", "last_fired")

    def __init__(self) -> None:
        self.since: float | None = None
        self.fired = False
        self.last_fired: float | None = None


class ThresholdWatch:
    """``observe`` samples, get ``Alert``s; ``forget`` a scope when its run has ended."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        self.rules = tuple(rules)
        self._matching: dict[str, tuple[int, ...]] = {}  # key → the indices of the rules that match it
        self._episodes: dict[Scope, dict[tuple[int, str], _Episode]] = {}
        # (source, rule text, key) of episodes that had fired and still held when the last watcher stopped:
        # their first firing here is the same episode going on, not news (leet watch restarted).
        self.carried: set[tuple[str, str, str]] = set()

    def observe(self, scope: Scope, t: float, values: Mapping[str, float], running: bool = True) -> list[Alert]:
        """One sample at data time ``t``; the alerts it fires, if any. Keys it lacks keep their state."""
        alerts: list[Alert] = []
        episodes = self._episodes.get(scope)
        for key, value in values.items():
            matching = self._matching.get(key)
            if matching is None:
                matching = self._rules_for(key)
            if not matching or not isinstance(value, (int, float)):
                continue
            if episodes is None:
                episodes = self._episodes.setdefault(scope, {})
            for index in matching:
                alert = self._step(episodes, scope, index, key, t, float(value), running)
                if alert is not None:
                    alerts.append(alert)
        return alerts

    def forget(self, scope: Scope) -> None:
        self._episodes.pop(scope, None)
        self.carried = {episode for episode in self.carried if episode[0] != scope.source}

    def open_episodes(self) -> set[tuple[str, str, str]]:
        """(source, rule text, key) of every episode that fired and still holds, to carry over a restart."""
        found = set(self.carried)
        for scope, episodes in self._episodes.items():
            found.update((scope.source, self.rules[index].text, key) for (index, key), episode in episodes.items() if episode.fired and episode.since is not None)
        return found

    def _rules_for(self, key: str) -> tuple[int, ...]:
        if len(self._matching) >= MATCH_CACHE_LIMIT:
            self._matching.clear()
        matching = tuple(index for index, rule in enumerate(self.rules) if rule.matches(key))
        self._matching[key] = matching
        return matching

    def _step(self, episodes: dict[tuple[int, str], _Episode], scope: Scope, index: int, key: str, t: float, value: float, running: bool) -> Alert | None:
        rule, slot = self.rules[index], (index, key)
        episode = episodes.get(slot)
        if not (rule.holds(value) and (running or not rule.while_running)):
            if episode is not None:
                episode.since, episode.fired = None, False
            if self.carried:
                self.carried.discard((scope.source, rule.text, key))
            return None
        if episode is None:
            episode = episodes[slot] = _Episode()
        if episode.since is None:
            episode.since = t
        if episode.fired or t - episode.since < rule.for_s:
            return None
        if rule.cooldown_s and episode.last_fired is not None and t - episode.last_fired < rule.cooldown_s:
            return None
        episode.fired, episode.last_fired = True, t
        if self.carried and (scope.source, rule.text, key) in self.carried:
            self.carried.discard((scope.source, rule.text, key))
            return None  # told before the restart, and it held all along as far as anyone can tell
        return threshold_alert(scope, rule, key, t, value, episode.since)


def threshold_alert(scope: Scope, rule: Rule, key: str, t: float, value: float, since: float) -> Alert:
    """The alert for ``rule`` firing on ``key`` at ``t``, in an episode that began at ``since``."""
    bare, label = split_label(key)
    title = rule.condition(bare) + (f" · {label}" if label else "")
    if scope.who:
        title = f"{scope.who}: {title}"
    shown = _value_text(value, rule)
    held = t - since
    if held > 0:
        rounded = round(held) if held >= 10 else round(held, 1)
        text = f"{bare} has been {shown} ({_WORDS[rule.op]} {rule.threshold_text}) for {format_duration(rounded, ' ')}"
    else:
        text = f"{bare} is {shown} ({_WORDS[rule.op]} {rule.threshold_text})"
    return Alert(
        kind=THRESHOLD, title=title, text=text, level=rule.level, time=t, source=scope.source, run_id=scope.run_id,
        run_name=scope.run_name, label=label or "", key=bare, value=value, rule=rule.text, ident=episode_ident(scope, rule, key, since),
    )


def episode_ident(scope: Scope, rule: Rule, key: str, since: float) -> str:
    """The same for an episode read again (same source, rule, key and start), different for any other."""
    parts = "\0".join((scope.source, rule.text, key, repr(float(since))))
    return "threshold:" + hashlib.sha256(parts.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _value_text(value: float, rule: Rule) -> str:
    """Four significant digits, more where four would print the threshold for a value that is not it."""
    threshold = rule.threshold_text.rstrip("%")
    for digits in range(4, 18):
        text = f"{value:.{digits}g}"
        if text != threshold or value == rule.threshold:
            break
    return text + ("%" if rule.percent else "")


__all__ = ["MATCH_CACHE_LIMIT", "Scope", "ThresholdWatch", "episode_ident", "threshold_alert"]
