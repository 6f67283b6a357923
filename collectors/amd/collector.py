"""The AMD collector: W&B's ``gpu.{i}.*`` keys from the ``amdsmi`` library, ``amd-smi`` or ``rocm-smi``.

Detection: the ``amdgpu`` kernel driver must be live (``/sys/module/amdgpu``),
then the first source that works and lists at least one GPU is kept for the
collector's life: the ``amdsmi`` Python library (in process, no child), else
``amd-smi metric --json`` (with ``amd-smi static --json`` every
``STATIC_REFRESH`` seconds for names and power caps), else
``rocm-smi -a --json``, the tool W&B runs. A source that is installed but
fails is named in ``notes.amd``.

Keys follow W&B's AMD collector, quirks included: ``temp`` is the memory
(VRAM/HBM) sensor, not edge or junction; from ``rocm-smi`` before ROCm 6.1,
``memoryAllocated`` is the tool's "GPU memory use (%)", which is memory
*activity*, not capacity (the note says so). Unlike W&B, a field the source
does not give ("N/A", or missing) is left out, never written as 0. Names for
what W&B's AMD collector lacks are the NVIDIA collector's.

GPU processes (the ``gpu_processes`` extra) come from the library's
``amdsmi_get_gpu_process_list`` each sweep, or from ``amd-smi process --json``
at most every ``PROCESS_REFRESH`` seconds; a failing listing costs only the
listing (a note), never the metrics. Both give per process its PID, name,
memory in bytes and the GFX engine's busy time in ns, a running total, so the
busy % is the growth of that total between two listings. ``rocm-smi -a``
counts a process's GPUs without naming them, so from it no process is listed.
User and command come from ``/proc``.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from collectors import pidns
from collectors.amd.amd_smi import AmdSmi
from collectors.amd.driver import amdgpu_problem
from collectors.amd.library import Library, open_library
from collectors.amd.rocm_smi import RocmSmi
from collectors.amd.source import DEFAULT_NAME, AmdSourceError, Card, Listed, NotInstalled, Source
from collectors.amd.tool import Tool
from collectors.base import Collector, Probe
from collectors.gpu import AcceleratorInfo, GpuInfo, GpuProcess
from collectors.processes import command_line
from collectors.procfs import UserNames, read_bytes

TOOL_TIMEOUT = 5.0
CLI_CADENCE = 2.0  # each CLI run is a Python program starting up, so not faster than this
ROCM_BIN = "opt/rocm/bin"  # where ROCm installs its tools, often not on PATH

OLD_MEMORY_USE_NOTE = "rocm-smi before ROCm 6.1 reports memory activity as 'GPU memory use (%)'; like W&B, it is shown as memory allocated"


@dataclass
class _Known:
    """What the collector remembers about one GPU between sweeps."""

    name: str = DEFAULT_NAME
    uuid: str = ""
    memory_total: int | None = None
    power_limit: float | None = None
    keys: set[str] = field(default_factory=set)  # every key this GPU has ever given
    problem: str = ""
    lost: str = ""


class AmdCollector(Collector):
    """W&B's ``gpu.{i}.*`` keys for AMD GPUs, plus GPU facts.

    ``gpu_ids`` picks GPUs by the source's index (None: all). ``sys_root`` is
    the filesystem root for ``/sys`` and ``/opt/rocm/bin`` (tests point it at
    a made-up tree); the tools are looked up on ``PATH`` first. ``timeout`` is
    the longest one tool run may take; the hub's ``budget`` covers two runs.
    """

    name = "amd"

    def __init__(
        self,
        gpu_ids: Sequence[int] | None = None,
        sys_root: str = "/",
        timeout: float = TOOL_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.gpu_ids = None if gpu_ids is None else tuple(dict.fromkeys(int(i) for i in gpu_ids))
        self.sys_root = sys_root
        self.timeout = timeout
        self.budget = 2 * timeout + 1.0
        self._clock = clock
        self._source: Source | None = None
        self._listed: set[int] = set()
        self._known: dict[int, _Known] = {}
        self._setup_notes: tuple[str, ...] = ()
        self._sweep_notes: tuple[str, ...] = ()
        self.proc_root = os.path.join(sys_root, "proc")
        self._users = UserNames()
        self._gfx_seen: dict[tuple[int, int], tuple[float, float]] = {}  # (gpu, pid) -> (gfx ns, when)
        self._rows: tuple[GpuProcess, ...] = ()
        self._extras: dict[str, Any] = {"gpus": (), "gpu_processes": (), "accelerators.amd": (), "notes.amd": ()}

    # -- the contract --------------------------------------------------------

    def probe(self) -> Probe:
        if self._source is not None:
            return Probe.ok()
        problem = amdgpu_problem(self.sys_root)
        if problem:
            return Probe.absent(problem)
        source, reasons, failures = self._open_first()
        if source is None:
            return Probe.absent("amdgpu is loaded, but " + "; ".join(reasons))
        self._source = source
        self.cadence = 0.0 if isinstance(source, Library) else CLI_CADENCE
        notes = [f"{failure}; using {source.label}" for failure in failures]
        missing = [i for i in self.gpu_ids or () if i not in self._listed]
        if missing:
            notes.append(f"{_gpus_named(missing)} not found: {source.label} lists {_gpus_named(sorted(self._listed))}")
        self._setup_notes = tuple(notes)
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        if self._source is None:
            raise RuntimeError("the AMD collector was sampled before a successful probe")
        cards = [card for card in self._source.read() if self._wanted(card.index)]
        values: dict[str, float] = {}
        for card in cards:
            _derive(card)
            self._remember(card)
            values.update((f"gpu.{card.index}.{key}", value) for key, value in card.values.items())
        self._mark_lost({card.index for card in cards})
        listed = self._source.processes()
        if listed is not None:
            self._rows = self._process_rows(listed, {card.index for card in cards})
        self._sweep_notes = self._source.notes() + self._quirk_notes(cards)
        self._extras = self._make_extras()
        return values

    def extras(self) -> Mapping[str, Any]:
        return self._extras

    def close(self) -> None:
        source, self._source = self._source, None
        if source is not None:
            source.close()

    # -- opening -------------------------------------------------------------

    def _open_first(self) -> tuple[Source | None, list[str], list[str]]:
        """The first source that lists a wanted GPU; why each one before it was passed over; which of those failed."""
        reasons: list[str] = []
        failures: list[str] = []
        for opener in (self._open_library, self._open_amd_smi, self._open_rocm_smi):
            try:
                source = opener()
            except NotInstalled as exc:
                reasons.append(str(exc))
                continue
            except AmdSourceError as exc:
                reasons.append(str(exc))
                failures.append(str(exc))
                continue
            problem = self._unusable(source)
            if not problem:
                return source, reasons, failures
            source.close()
            reasons.append(problem)
            failures.append(problem)
        return None, reasons, failures

    def _open_library(self) -> Library:
        return open_library(self._clock)

    def _open_amd_smi(self) -> AmdSmi:
        return AmdSmi(self._find("amd-smi"), self._clock)

    def _open_rocm_smi(self) -> RocmSmi:
        return RocmSmi(self._find("rocm-smi"))

    def _unusable(self, source: Source) -> str:
        """Why this source cannot be used: it fails, or lists no (wanted) GPU; "" when it can."""
        try:
            self._listed = source.indices()
        except AmdSourceError as exc:
            return f"{source.label} failed: {exc}"
        if not self._listed:
            return f"{source.label} lists no AMD GPU"
        if self.gpu_ids is not None and not any(i in self._listed for i in self.gpu_ids):
            return f"{_gpus_named(self.gpu_ids)} not found: {source.label} lists {_gpus_named(sorted(self._listed))}"
        return ""

    def _find(self, name: str) -> Tool:
        path = shutil.which(name) or shutil.which(name, path=os.path.join(self.sys_root, ROCM_BIN))
        if path is None:
            raise NotInstalled(f"{name} not found")
        return Tool(path, name, self.timeout)

    # -- one sweep -------------------------------------------------------------

    def _wanted(self, index: int) -> bool:
        return self.gpu_ids is None or index in self.gpu_ids

    def _remember(self, card: Card) -> None:
        known = self._known.setdefault(card.index, _Known())
        known.name = card.name or known.name
        known.uuid = card.uuid or known.uuid
        if card.memory_total:
            known.memory_total = card.memory_total
        if card.power_limit is not None:
            known.power_limit = card.power_limit
        known.keys.update(card.values)
        known.problem = card.problem
        known.lost = ""

    def _mark_lost(self, present: set[int]) -> None:
        label = self._source.label if self._source is not None else "the source"
        for index, known in self._known.items():
            if index not in present:
                known.lost = f"no longer listed by {label}"

    def _quirk_notes(self, cards: Iterable[Card]) -> tuple[str, ...]:
        return (OLD_MEMORY_USE_NOTE,) if any(card.memory_is_activity for card in cards) else ()

    # -- processes -------------------------------------------------------------

    def _process_rows(self, listed: list[Listed], present: set[int]) -> tuple[GpuProcess, ...]:
        now = self._clock()
        rows: dict[tuple[int, int], GpuProcess] = {}
        gfx_seen: dict[tuple[int, int], tuple[float, float]] = {}
        for entry in listed:
            key = (entry.gpu, entry.pid)
            if entry.gpu not in present or key in rows:
                continue
            busy = None
            if entry.gfx_ns is not None:
                busy = _busy_percent(self._gfx_seen.get(key), entry.gfx_ns, now)
                gfx_seen[key] = (entry.gfx_ns, now)
            user, command = self._identity(entry.pid, entry.name)
            rows[key] = GpuProcess(
                gpu=entry.gpu,
                pid=entry.pid,
                host_pid=entry.pid,
                user=user,
                command=command,
                used_memory=entry.used_memory,
                sm_percent=busy,
                kind="compute",
            )
        self._gfx_seen = gfx_seen
        return tuple(rows[key] for key in sorted(rows))

    def _identity(self, pid: int, name: str) -> tuple[str, str]:
        """(user, command line) from /proc; the source's name alone when the PID is gone or not ours to see."""
        status = pidns.read_status(self.proc_root, pid)
        if status is None:
            return "", name
        if name and status.name and not (name.startswith(status.name) or status.name.startswith(name)):
            return "", name  # another process under that number: a PID namespace of our own
        argv = command_line(read_bytes(f"{self.proc_root}/{pid}/cmdline") or b"")
        user = "" if status.uid is None else self._users.name(status.uid)
        return user, " ".join(argv) or status.name or name

    # -- extras ----------------------------------------------------------------

    def _make_extras(self) -> dict[str, Any]:
        gpus = []
        accelerators = []
        for index in sorted(self._known):
            known = self._known[index]
            reason = known.lost or _limits(known)
            gpus.append(
                GpuInfo(
                    index=index,
                    name=known.name,
                    memory_total=known.memory_total or 0,
                    power_limit_watts=known.power_limit,
                    uuid=known.uuid,
                    lost=bool(known.lost),
                    reason=reason,
                )
            )
            accelerators.append(
                AcceleratorInfo(
                    vendor="AMD",
                    index=index,
                    name=known.name,
                    utilization_key=_key_if(known, index, "gpu"),
                    memory_key=_key_if(known, index, "memoryAllocated"),
                    temp_key=_key_if(known, index, "temp"),
                    power_key=_key_if(known, index, "powerWatts"),
                    memory_total=known.memory_total,
                    power_limit_watts=known.power_limit,
                    reason=reason,
                )
            )
        return {
            "gpus": tuple(gpus),
            "gpu_processes": self._rows,
            "accelerators.amd": tuple(accelerators),
            "notes.amd": self._setup_notes + self._sweep_notes,
        }


def _derive(card: Card) -> None:
    """What follows from a card's own figures: allocated %, the power cap, power %."""
    values = card.values
    used = values.get("memoryAllocatedBytes")
    if "memoryAllocated" not in values and used is not None and card.memory_total:
        values["memoryAllocated"] = used / card.memory_total * 100
    limit = card.power_limit
    if limit is not None and limit > 0:
        values["enforcedPowerLimitWatts"] = limit
        power = values.get("powerWatts")
        if power is not None:
            values["powerPercent"] = power / limit * 100


def _busy_percent(before: tuple[float, float] | None, gfx_ns: float, now: float) -> float | None:
    """GFX busy % from two readings of the running busy-time total; None without an earlier one."""
    if before is None:
        return None
    busy_ns, then = before
    if now <= then or gfx_ns < busy_ns:
        return None
    return min(100.0, (gfx_ns - busy_ns) / ((now - then) * 1e9) * 100)


def _key_if(known: _Known, index: int, key: str) -> str:
    return f"gpu.{index}.{key}" if key in known.keys else ""


def _limits(known: _Known) -> str:
    """What a GPU does not report, in words."""
    missing = [word for key, word in (("temp", "temperature"), ("powerWatts", "power")) if key not in known.keys]
    problems = [known.problem] if known.problem else []
    if missing:
        problems.append("reports no " + " and no ".join(missing))
    return "; ".join(problems)


def _gpus_named(indices: Sequence[int]) -> str:
    if len(indices) == 1:
        return f"GPU {indices[0]}"
    return "GPUs " + ", ".join(str(i) for i in indices)
