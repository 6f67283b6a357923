"""What every AMD source (the ``amdsmi`` library, ``amd-smi``, ``rocm-smi``) gives the collector, and how one fails."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

STATIC_REFRESH = 30.0  # seconds between re-reads of names, UUIDs and power caps
DEFAULT_NAME = "AMD GPU"


class AmdSourceError(RuntimeError):
    """A source failed as a whole: the tool timed out, exited non-zero or printed no JSON."""


class NotInstalled(Exception):
    """A source that is simply not on this machine (not worth a note)."""


@dataclass
class Card:
    """One GPU in one reading, as a source gives it."""

    index: int
    values: dict[str, float] = field(default_factory=dict)
    name: str = ""
    uuid: str = ""
    memory_total: int | None = None  # bytes
    power_limit: float | None = None  # watts
    problem: str = ""
    memory_is_activity: bool = False  # memoryAllocated came from old rocm-smi's "GPU memory use (%)"


@dataclass(frozen=True)
class Listed:
    """One process on one GPU, as a source lists it."""

    gpu: int
    pid: int
    name: str = ""
    used_memory: int | None = None  # bytes
    gfx_ns: float | None = None  # GFX engine busy time so far, a running total


class Source(Protocol):
    """Where readings come from: the library or one of the tools."""

    label: str

    def indices(self) -> set[int]: ...

    def read(self) -> list[Card]: ...

    def processes(self) -> list[Listed] | None: ...  # None: no new listing this sweep

    def notes(self) -> tuple[str, ...]: ...

    def close(self) -> None: ...
