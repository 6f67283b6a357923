"""The clock and curves behind the fakes: a clock that moves only when told, sines with exact integrals, sawtooths.

A wave used as a rate never goes negative, so its integral, a counter,
only grows (see ``Wave``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

GIB = 2**30
MIB = 2**20
TAU = 2 * math.pi

DEFAULT_START = 1_700_000_000.0


class FakeClock:
    """A clock that stands still until told: ``clock()`` returns the set time."""

    def __init__(self, start: float = DEFAULT_START) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    @property
    def now(self) -> float:
        return self._now

    def set(self, seconds: float) -> None:
        self._now = float(seconds)

    def advance(self, seconds: float) -> float:
        self._now += float(seconds)
        return self._now


@dataclass(frozen=True)
class Wave:
    """``base + Σ amp·sin(2π·t/period + phase)``, with its exact integral.

    With ``base`` at least the sum of the amplitudes the wave never goes
    negative, so as a rate its integral is a counter that never decreases.
    """

    base: float
    terms: tuple[tuple[float, float, float], ...] = ()  # (amplitude, period s, phase rad)

    def at(self, t: float) -> float:
        return self.base + sum(a * math.sin(TAU * t / p + ph) for a, p, ph in self.terms)

    def integral(self, start: float, end: float) -> float:
        total = self.base * (end - start)
        for amplitude, period, phase in self.terms:
            scale = amplitude * period / TAU
            total += scale * (math.cos(TAU * start / period + phase) - math.cos(TAU * end / period + phase))
        return total


def sawtooth(t: float, period: float, phase: float = 0.0) -> float:
    """Rises linearly from 0 to 1 over ``period``, then drops back."""
    return (t / period + phase) % 1.0


def clamp(value: float, low: float = 0.0, high: float = 100.0) -> float:
    return min(max(value, low), high)


def counter_at(wave: Wave, origin: float, t: float) -> float:
    """What a counter fed at ``wave`` holds at ``t``, counting from ``origin``."""
    return wave.integral(origin, t) if t > origin else 0.0
