"""Collector trouble as short lines a person can act on."""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def extra_notes(extras: Mapping[str, Any]) -> list[str]:
    """Warnings collectors attach as ``notes.<name>`` extras (e.g. a missing disk path)."""
    return [str(note) for key, notes in sorted(extras.items()) if key.startswith("notes.") for note in notes]


def health_notes(statuses: Iterable[Any], quiet: Iterable[str] = ()) -> list[str]:
    """One line per collector that is not healthy, naming it and why."""
    quiet = set(quiet)
    notes = []
    for status in statuses:
        health = getattr(status.health, "value", str(status.health))
        if health == "ok" or status.name in quiet:
            continue
        reason = status.reason or health
        notes.append(f"{status.name}: {reason}")
    return notes
