"""Collector trouble as short lines a person can act on."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

# Collectors of GPUs: their notes go to the GPU process table, and when
# none finds a GPU the GPU section says why, calmly.
# ``fake-gpu`` stands in for ``nvidia`` in demos and tests.
GPU_BACKENDS = frozenset({"nvidia", "amd", "fake-gpu"})
# Collectors whose absence is the normal state of most machines: a laptop has
# no TPU, NeuronCore or IPU, and saying so in a warning on every start is
# noise. The backends list (``b``) still says why each one is absent.
# (DCGM's notes stay warnings: its GPUs on several nodes have no process table.)
ACCELERATOR_BACKENDS = GPU_BACKENDS | {"dcgm", "tpu", "trainium", "ipu", "apple"}


def _health(status: Any) -> str:
    return getattr(status.health, "value", str(status.health))


def extra_notes(extras: Mapping[str, Any], skip: Iterable[str] = ()) -> list[str]:
    """Warnings collectors attach as ``notes.<name>`` extras (e.g. a missing disk path).

    Collectors named in ``skip`` keep their notes for a panel of their own.
    """
    skipped = {f"notes.{name}" for name in skip}
    return [
        str(note)
        for key, notes in sorted(extras.items())
        if key.startswith("notes.") and key not in skipped
        for note in notes
    ]


def gpu_notes(extras: Mapping[str, Any]) -> list[str]:
    """What GPU collectors say about their process list (e.g. PIDs they cannot match)."""
    return [str(note) for name in sorted(GPU_BACKENDS) for note in extras.get(f"notes.{name}", ())]


def health_notes(statuses: Iterable[Any], quiet: Iterable[str] = (), calm_when_absent: Iterable[str] = ()) -> list[str]:
    """One line per collector that is not healthy, naming it and why.

    Collectors in ``quiet`` are never mentioned; those in ``calm_when_absent``
    only when they fail or hang, not when their hardware is simply not there.
    """
    quiet = set(quiet)
    calm = set(calm_when_absent)
    notes = []
    for status in statuses:
        health = _health(status)
        if health == "ok" or status.name in quiet or (health == "absent" and status.name in calm):
            continue
        reason = status.reason or health
        notes.append(f"{status.name}: {reason}")
    return notes


def absent_gpu_reasons(statuses: Iterable[Any]) -> list[str]:
    """Why each GPU backend found nothing, e.g. "no NVIDIA driver: libnvidia-ml.so.1 not found"."""
    return [status.reason or "not found" for status in statuses if status.name in GPU_BACKENDS and _health(status) == "absent"]


def health_word(status: Any) -> str:
    """How the backends list names a collector's state: present, absent, failing or hung."""
    health = _health(status)
    return "present" if health == "ok" else health


def call_cost(last_ms: float | None, missing: str) -> str:
    """What a collector's last call took: "3.2 ms", "152 ms", "1.40 s"; ``missing`` when there is no figure."""
    if last_ms is None or not math.isfinite(last_ms) or last_ms <= 0:
        return missing
    if last_ms >= 1000:
        return f"{last_ms / 1000:.2f} s"
    return f"{last_ms:.1f} ms" if last_ms < 100 else f"{last_ms:.0f} ms"
