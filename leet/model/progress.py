"""How fast a run goes and when it will end: steps/s, samples/s or tokens/s, and an ETA.

Pure: ``ProgressTrail`` keeps a bounded ring of (time, step, tracked values)
from history rows; ``progress_of`` turns a frozen copy of it, the run's config
and summary into a ``Progress`` the run header, the workspace list and
``leet inspect --summary`` print. Rates come from the recent window and skip
pauses (a resumed run's gap is not time spent training); a finished run gets
its mean rate and no ETA.
"""

from __future__ import annotations

import argparse
import math
import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping

from leet.model.state import RunState

MARKS_KEPT = 256
WINDOW_SECONDS = 300.0  # the recent window: the last 5 minutes ...
WINDOW_MARKS = 50  # ... or the last 50 logged rows, whichever is shorter: the rate follows a change of speed
PAUSE_FLOOR_SECONDS = 60.0  # a gap shorter than this is never a pause
PAUSE_FACTOR = 10.0  # a gap this many times the usual one is a pause

STEP_TOTALS = ("max_steps", "total_steps", "num_steps", "train_steps", "num_train_steps", "total_training_steps", "max_iters", "max_iterations")
EPOCH_TOTALS = ("epochs", "num_train_epochs", "max_epochs", "num_epochs", "total_epochs", "n_epochs")
STEP_KEYS = ("global_step", "train/global_step", "trainer/global_step")
EPOCH_KEYS = ("epoch", "train/epoch", "trainer/epoch")
UNITS = ("samples", "tokens")
_RATE = re.compile(r"(per_?sec|per_?second|_ps$|/s$|throughput)")
_COUNT = re.compile(r"(seen|^num_|/num_|total|consumed|processed|count|^(samples|tokens)$|/(samples|tokens)$)")


def unit_of(key: str) -> str:
    """"samples" or "tokens" for a key that names one, else ""."""
    lower = key.lower()
    return "samples" if "sample" in lower else "tokens" if "token" in lower else ""


def is_rate_key(key: str) -> bool:
    """A logged throughput: ``samples_per_second``, ``train/samples_per_sec``, ``throughput/tokens``."""
    return bool(unit_of(key)) and bool(_RATE.search(key.lower()))


def is_count_key(key: str) -> bool:
    """A cumulative count a rate is computed from: ``tokens_seen``, ``num_tokens``."""
    return bool(unit_of(key)) and not is_rate_key(key) and bool(_COUNT.search(key.lower()))


@lru_cache(maxsize=4096)  # called for every key of every history row
def is_tracked(key: str) -> bool:
    return key in STEP_KEYS or key in EPOCH_KEYS or is_rate_key(key) or is_count_key(key)


@dataclass(frozen=True)
class Mark:
    """One history row with a time."""

    time: float
    step: float
    tracked: Mapping[str, float]
    resumed: bool = False  # a pause came before it: the gap back to the previous mark is not counted


@dataclass
class ProgressTrail:
    """A bounded ring of the newest marks, and the run's pause-free totals."""

    marks: deque[Mark] = field(default_factory=lambda: deque(maxlen=MARKS_KEPT))
    active_seconds: float = 0.0
    active_steps: float = 0.0
    usual_gap: float | None = None  # a running mean of the gaps that were not pauses

    def add(self, step: int, time: float | None, values: Mapping[str, float]) -> None:
        if time is None or not _finite(time) or not _finite(step):
            return
        tracked = {key: float(values[key]) for key in filter(is_tracked, values) if _finite(values[key])}
        resumed = False
        if self.marks:
            last = self.marks[-1]
            gap = time - last.time
            if gap < 0:
                return
            resumed = gap > PAUSE_FLOOR_SECONDS and self.usual_gap is not None and gap > PAUSE_FACTOR * self.usual_gap
            if not resumed and step >= last.step:
                self.active_seconds += gap
                self.active_steps += step - last.step
                self.usual_gap = gap if self.usual_gap is None else 0.9 * self.usual_gap + 0.1 * gap
        self.marks.append(Mark(time, float(step), tracked, resumed))

    def copy(self) -> "TrailCopy":
        return TrailCopy(tuple(self.marks), self.active_seconds, self.active_steps)


@dataclass(frozen=True)
class TrailCopy:
    """What a snapshot keeps of the trail."""

    marks: tuple[Mark, ...] = ()
    active_seconds: float = 0.0
    active_steps: float = 0.0

    def window(self) -> tuple[Mark, ...]:
        if not self.marks:
            return ()
        newest = self.marks[-1].time
        by_time = next((index for index, mark in enumerate(self.marks) if mark.time >= newest - WINDOW_SECONDS), 0)
        return self.marks[max(by_time, len(self.marks) - WINDOW_MARKS, 0):]

    def rate(self, key: str | None = None) -> float | None:
        """Per second of ``key`` (the step when None) over the recent window, pauses left out."""
        done = seconds = 0.0
        marks = self.window()
        for before, after in zip(marks, marks[1:]):
            start, end = _quantity(before, key), _quantity(after, key)
            if after.resumed or start is None or end is None or end < start:
                continue
            done += end - start
            seconds += after.time - before.time
        return done / seconds if seconds > 0 and done > 0 else None

    def mean_rate(self) -> float | None:
        return self.active_steps / self.active_seconds if self.active_seconds > 0 and self.active_steps > 0 else None


def _quantity(mark: Mark, key: str | None) -> float | None:
    return mark.step if key is None else mark.tracked.get(key)


@dataclass(frozen=True)
class Total:
    """What the run counts to: ``max_steps=10000`` or ``epochs=3``."""

    key: str
    value: float
    epochs: bool

    @property
    def text(self) -> str:
        return f"{self.key}={_number(self.value)}"


def parse_total(text: str) -> Total:
    """``KEY=N`` from the command line; a key that names epochs counts epochs."""
    key, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not sep or not key.strip() or not math.isfinite(number) or number <= 0:
        raise ValueError(f"--total takes KEY=N with N > 0, not {text!r}")
    key = key.strip()
    return Total(key, number, "epoch" in key.lower())


def total_argument(text: str) -> Total:
    """``--total KEY=N`` as an argparse type: a bad one is a usage error."""
    try:
        return parse_total(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def ended(state: RunState) -> bool:
    """A run that will log no more: it gets its mean rate and no ETA."""
    return state in (RunState.FINISHED, RunState.FAILED, RunState.CRASHED)


def config_total(config: Mapping[str, Any]) -> Total | None:
    """The total the config names: a step count first (a positive one overrides epochs), then epochs."""
    found = dict(_flat(config))
    for names, epochs in ((STEP_TOTALS, False), (EPOCH_TOTALS, True)):
        matches = [key for key in found if key.rsplit(".", 1)[-1] in names and _positive(found[key])]
        if matches:
            key = min(matches, key=lambda name: (name.count("."), names.index(name.rsplit(".", 1)[-1]), name))
            return Total(key, float(found[key]), epochs)
    return None


def _flat(values: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if set(value) == {"value"}:
                yield name, value["value"]
            else:
                yield from _flat(value, name + ".")
        else:
            yield name, value


def _finite(value: Any) -> bool:
    """A finite number a float holds: a row's value may be an int past a float's range."""
    try:
        return isinstance(value, (int, float)) and math.isfinite(float(value))
    except OverflowError:
        return False


def _positive(value: Any) -> bool:
    """A number above 0 that a float holds (an int past a float's range, as a damaged or odd file may give, is not one)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return _finite(value) and value > 0


@dataclass(frozen=True)
class Progress:
    """Rates and the ETA, ready to print."""

    steps_per_second: float | None = None
    throughput: tuple[tuple[str, float, str], ...] = ()  # (unit, per second, the key it came from)
    total: Total | None = None
    done: float | None = None  # the step or epoch reached
    eta_seconds: float | None = None
    finished: bool = False

    def parts(self) -> list[str]:
        """``["3.2 steps/s", "1.1k tokens/s", "ETA 1h12m to max_steps=10000"]``; empty when nothing is known."""
        parts = [f"{rate_text(self.steps_per_second)} steps/s"] if self.steps_per_second else []
        parts += [f"{rate_text(rate)} {unit}/s" for unit, rate, _ in self.throughput]
        if self.total is not None:
            if self.finished:
                if self.done is not None and self.done >= self.total.value:
                    parts.append(f"done ({self.total.text})")
            elif self.eta_seconds is not None:
                parts.append(f"ETA {duration_text(self.eta_seconds)} to {self.total.text}")
        return parts

    def as_dict(self) -> dict[str, Any]:
        return {
            "steps_per_second": self.steps_per_second,
            "throughput": {unit: {"per_second": rate, "key": key} for unit, rate, key in self.throughput},
            "total": {"key": self.total.key, "value": self.total.value, "epochs": self.total.epochs} if self.total else None,
            "done": self.done,
            "eta_seconds": self.eta_seconds,
            "finished": self.finished,
            "text": " · ".join(self.parts()),
        }


def progress_of(trail: TrailCopy, config: Mapping[str, Any], summary: Mapping[str, Any], *, last_step: int | None, finished: bool, total: Total | None = None) -> Progress:
    """The run's rates and ETA; ``total`` (from ``--total``) wins over the config's."""
    total = total or config_total(config)
    latest = _latest(trail, summary)
    steps = (trail.mean_rate() if finished else trail.rate()) or _runtime_rate(latest, "_step")
    done = _done(total, latest, last_step)
    eta = None
    if total is not None and done is not None and not finished:
        per_second = _progress_rate(trail, total, latest, steps)
        if per_second:
            eta = max(0.0, total.value - done) / per_second
    return Progress(steps, _throughput(trail, latest), total, done, eta, finished)


def summary_progress(config: Mapping[str, Any], summary: Mapping[str, Any], *, finished: bool) -> Progress:
    """From a run's config and summary alone (no per-row times): the mean rate over ``_runtime``."""
    step = summary.get("_step")
    last_step = int(step) if isinstance(step, (int, float)) and _positive(step) else None
    return progress_of(TrailCopy(), config, summary, last_step=last_step, finished=finished)


def _runtime_rate(latest: Mapping[str, float], key: str) -> float | None:
    """Without per-row times (a read that kept only steps): the mean since the start, over the summary's ``_runtime``."""
    runtime, value = latest.get("_runtime"), latest.get(key)
    return value / runtime if runtime and value else None


def _latest(trail: TrailCopy, summary: Mapping[str, Any]) -> dict[str, float]:
    latest = {key: float(value) for key, value in summary.items() if _positive(value) or value == 0}
    for mark in trail.marks:
        latest.update(mark.tracked)
    return latest


def _done(total: Total | None, latest: Mapping[str, float], last_step: int | None) -> float | None:
    if total is None:
        return None
    keys = EPOCH_KEYS if total.epochs else STEP_KEYS
    value = next((latest[key] for key in keys if key in latest), None)
    return value if value is not None or total.epochs else (None if last_step is None else float(last_step))


def _progress_rate(trail: TrailCopy, total: Total, latest: Mapping[str, float], steps: float | None) -> float | None:
    keys = EPOCH_KEYS if total.epochs else STEP_KEYS
    for key in keys:
        if key in latest and (rate := trail.rate(key)):
            return rate
    if not total.epochs:
        return steps
    # Epochs logged too seldom for a rate of their own: steps per epoch so far, times the step rate.
    epoch = next((latest[key] for key in EPOCH_KEYS if key in latest), None)
    step = trail.marks[-1].step if trail.marks else None
    return steps * epoch / step if steps and epoch and step else None


def _throughput(trail: TrailCopy, latest: Mapping[str, float]) -> tuple[tuple[str, float, str], ...]:
    found: list[tuple[str, float, str]] = []
    for unit in UNITS:
        logged = sorted(key for key in latest if unit_of(key) == unit and is_rate_key(key) and latest[key] > 0)
        if logged:
            found.append((unit, latest[logged[0]], logged[0]))
            continue
        for key in sorted(key for key in latest if unit_of(key) == unit and is_count_key(key)):
            if rate := trail.rate(key) or _runtime_rate(latest, key):
                found.append((unit, rate, key))
                break
    return tuple(found)


def rate_text(value: float) -> str:
    """Three figures: ``0.52``, ``12.5``, ``41``, ``1.23k``, ``3.4M``."""
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def duration_text(seconds: float) -> str:
    """``45s``, ``12m``, ``1h12m``, ``2d3h``."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours < 1:
        return f"{minutes}m"
    if days < 1:
        return f"{hours}h{minutes % 60:02d}m"
    return f"{days}d{hours % 24}h"


def _number(value: float) -> str:
    return f"{int(value)}" if value == int(value) else f"{value:g}"
