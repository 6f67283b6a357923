"""AMD GPUs: W&B's ``gpu.{i}.*`` keys from the ``amdsmi`` library, ``amd-smi`` or ``rocm-smi``.

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

Every child runs with a timeout and is killed when it outruns it; a failed,
silent or garbled run raises, so the hub shows the collector as failing and
retries.

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

import contextlib
import importlib
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from collectors import pidns
from collectors.base import Collector, Probe
from collectors.gpu import AcceleratorInfo, GpuInfo, GpuProcess
from collectors.processes import command_line
from collectors.procfs import UserNames, read_bytes

TOOL_TIMEOUT = 5.0
STATIC_REFRESH = 30.0
CLI_CADENCE = 2.0  # each CLI run is a Python program starting up, so not faster than this
RETRY_FAILED_CALL = 60.0
PROCESS_REFRESH = 5.0  # amd-smi process --json is one more tool run: not every sweep
ROCM_BIN = "opt/rocm/bin"  # where ROCm installs its tools, often not on PATH
MIB = 1 << 20
DEFAULT_NAME = "AMD GPU"

# Sentinels some amdsmi releases return for a field the GPU does not report.
_UNREPORTED = {0xFFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF}
_BINARY_UNITS = {"B": 1, "KB": 1 << 10, "KIB": 1 << 10, "MB": MIB, "MIB": MIB, "GB": 1 << 30, "GIB": 1 << 30}
_ENERGY_UNITS = {"J": 1.0, "MJ": 1e-3, "UJ": 1e-6, "µJ": 1e-6}

OLD_MEMORY_USE_NOTE = "rocm-smi before ROCm 6.1 reports memory activity as 'GPU memory use (%)'; like W&B, it is shown as memory allocated"


class AmdSourceError(RuntimeError):
    """A source failed as a whole: the tool timed out, exited non-zero or printed no JSON."""


class _NotInstalled(Exception):
    """A source that is simply not on this machine (not worth a note)."""


@dataclass
class _Card:
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
class _Listed:
    """One process on one GPU, as a source lists it."""

    gpu: int
    pid: int
    name: str = ""
    used_memory: int | None = None  # bytes
    gfx_ns: float | None = None  # GFX engine busy time so far, a running total


class _Source(Protocol):
    """Where readings come from: the library or one of the tools."""

    label: str

    def indices(self) -> set[int]: ...

    def read(self) -> list[_Card]: ...

    def processes(self) -> list[_Listed] | None: ...  # None: no new listing this sweep

    def notes(self) -> tuple[str, ...]: ...

    def close(self) -> None: ...


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
        self._source: _Source | None = None
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
        self.cadence = 0.0 if isinstance(source, _Library) else CLI_CADENCE
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

    def _open_first(self) -> tuple[_Source | None, list[str], list[str]]:
        """The first source that lists a wanted GPU; why each one before it was passed over; which of those failed."""
        reasons: list[str] = []
        failures: list[str] = []
        for opener in (self._open_library, self._open_amd_smi, self._open_rocm_smi):
            try:
                source = opener()
            except _NotInstalled as exc:
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

    def _open_library(self) -> _Library:
        lib = _import_amdsmi()
        try:
            lib.amdsmi_init()
        except Exception as exc:  # noqa: BLE001 - the library raises its own and ctypes errors alike
            raise AmdSourceError(f"amdsmi could not start: {exc}") from None
        try:
            return _Library(lib, self._clock)
        except Exception as exc:  # noqa: BLE001
            _shut_down(lib)
            raise AmdSourceError(f"amdsmi could not list the GPUs: {exc}") from None

    def _open_amd_smi(self) -> _AmdSmi:
        return _AmdSmi(self._find("amd-smi"), self._clock)

    def _open_rocm_smi(self) -> _RocmSmi:
        return _RocmSmi(self._find("rocm-smi"))

    def _unusable(self, source: _Source) -> str:
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

    def _find(self, name: str) -> _Tool:
        path = shutil.which(name) or shutil.which(name, path=os.path.join(self.sys_root, ROCM_BIN))
        if path is None:
            raise _NotInstalled(f"{name} not found")
        return _Tool(path, name, self.timeout)

    # -- one sweep -------------------------------------------------------------

    def _wanted(self, index: int) -> bool:
        return self.gpu_ids is None or index in self.gpu_ids

    def _remember(self, card: _Card) -> None:
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

    def _quirk_notes(self, cards: Iterable[_Card]) -> tuple[str, ...]:
        return (OLD_MEMORY_USE_NOTE,) if any(card.memory_is_activity for card in cards) else ()

    # -- processes -------------------------------------------------------------

    def _process_rows(self, listed: list[_Listed], present: set[int]) -> tuple[GpuProcess, ...]:
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


# -- detection ---------------------------------------------------------------


def amdgpu_problem(sys_root: str = "/") -> str:
    """Why the amdgpu kernel driver is not there to ask; "" when it is live."""
    module = os.path.join(sys_root, "sys/module/amdgpu")
    state = _read_text(os.path.join(module, "initstate"))
    if state is not None:
        state = state.strip()
        return "" if state == "live" else f"the amdgpu kernel driver is not ready (initstate: {state or 'empty'})"
    # A driver built into the kernel has a module directory but no initstate.
    if os.path.isdir(module) or _drm_card_on_amdgpu(sys_root):
        return ""
    return "no AMD GPU driver: the amdgpu kernel module is not loaded"


def _drm_card_on_amdgpu(sys_root: str) -> bool:
    drm = os.path.join(sys_root, "sys/class/drm")
    try:
        entries = os.listdir(drm)
    except OSError:
        return False
    for entry in entries:
        if re.fullmatch(r"card\d+", entry):
            driver = os.path.join(drm, entry, "device/driver")
            if os.path.basename(os.path.realpath(driver)) == "amdgpu":
                return True
    return False


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None


# -- running a tool ----------------------------------------------------------


@dataclass(frozen=True)
class _Tool:
    """One executable, run with a timeout; its child is killed when it outruns it."""

    path: str
    label: str
    timeout: float

    def json(self, *args: str) -> Any:
        command = " ".join((self.label, *args))
        return parse_json(self.run(*args), command)

    def run(self, *args: str) -> str:
        command = " ".join((self.label, *args))
        try:
            child = subprocess.Popen(
                [self.path, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                start_new_session=True,  # so a timeout kills whatever the tool started, too
            )
        except OSError as exc:
            raise AmdSourceError(f"{command}: could not start: {exc}") from None
        try:
            out, err = child.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill(child)
            raise AmdSourceError(f"{command}: no answer in {self.timeout:g} s (killed)") from None
        if child.returncode != 0:
            raise AmdSourceError(f"{command}: exit status {child.returncode}{_said(err)}")
        return out


def _kill(child: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        child.communicate(timeout=1.0)


def _said(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f": {_excerpt(lines[-1])}" if lines else ""


def _excerpt(text: str, width: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def parse_json(text: str, command: str) -> Any:
    """The first JSON object or list in a tool's output.

    The tools print warnings before or after the JSON, and rocm-smi may
    start with a blank line, so each line that opens a bracket is tried.
    """
    if not text.strip():
        raise AmdSourceError(f"{command}: printed nothing")
    decoder = json.JSONDecoder()
    for start in re.finditer(r"^[ \t]*[\[{]", text, re.MULTILINE):
        try:
            value, _ = decoder.raw_decode(text, start.end() - 1)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    raise AmdSourceError(f"{command}: printed no JSON: {_excerpt(text, 60)!r}")


# -- numbers -----------------------------------------------------------------


def number(value: Any) -> float | None:
    """A finite reading from a tool or library value; None for "N/A", sentinels and junk."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Mapping):
        return number(value.get("value"))
    if isinstance(value, (int, float)):
        if value in _UNREPORTED:
            return None
        result = float(value)
    elif isinstance(value, str):
        found = re.match(r"\s*\(?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![xX\d])", value)
        if found is None:
            return None
        result = float(found.group(1))
    else:
        return None
    return result if math.isfinite(result) else None


def _unit(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("unit") or "").strip()
    if isinstance(value, str):
        found = re.match(r"\s*[-+.\d]+\s*([A-Za-zµ%/]+)", value)
        return found.group(1) if found else ""
    return ""


def _bytes(value: Any, default_unit: str = "MB") -> float | None:
    amount = number(value)
    if amount is None:
        return None
    scale = _BINARY_UNITS.get((_unit(value) or default_unit).upper())
    return None if scale is None else amount * scale


def _joules(value: Any) -> float | None:
    amount = number(value)
    if amount is None:
        return None
    unit = _unit(value) or "J"
    scale = _ENERGY_UNITS.get(unit) or _ENERGY_UNITS.get(unit.upper())
    return None if scale is None else amount * scale


def _put(values: dict[str, float], key: str, value: float | None) -> None:
    if value is not None:
        values[key] = value


def _dig(data: Any, *path: str) -> Any:
    for step in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(step)
    return data


def _reported_text(value: Any) -> str:
    """A string the source reported, or "" for "N/A"."""
    if not isinstance(value, str) or value.strip().upper().startswith("N/A"):
        return ""
    return value.strip()


def _text(value: Any) -> str:
    """A name, or "" for "N/A" and for a bare PCI id standing in for a name (ROCm 4.3 does that)."""
    value = _reported_text(value)
    return "" if re.fullmatch(r"0x[0-9a-fA-F]+", value) else value


def _derive(card: _Card) -> None:
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


# -- rocm-smi ----------------------------------------------------------------

# (key, rocm-smi field names, oldest ROCm first); the first that parses wins.
_ROCM_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpu", ("GPU use (%)",)),
    ("memoryAllocated", ("GPU memory use (%)", "GPU Memory Allocated (VRAM%)")),
    ("memoryReadWriteActivity", ("GPU Memory Read/Write Activity (%)",)),
    ("memoryOverDrive", ("GPU Memory OverDrive value (%)",)),
    ("temp", ("Temperature (Sensor memory) (C)",)),
    ("powerWatts", ("Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)")),
    ("memoryAllocatedBytes", ("VRAM Total Used Memory (B)",)),
    ("graphicsClock", ("sclk clock speed:",)),
    ("memoryClock", ("mclk clock speed:",)),
    ("fanSpeed", ("Fan speed (%)",)),
)
_ROCM_NAMES = ("Device Name", "Card Series", "Card series", "Card Model", "Card model")


class _RocmSmi:
    """``rocm-smi -a --json``: one run gives every card."""

    label = "rocm-smi"

    def __init__(self, tool: _Tool) -> None:
        self.tool = tool

    def indices(self) -> set[int]:
        return {card.index for card in self.read()}

    def read(self) -> list[_Card]:
        return parse_rocm_smi(self.tool.json("-a", "--json"))

    def processes(self) -> list[_Listed]:
        return []  # --showpids names no GPU

    def notes(self) -> tuple[str, ...]:
        return ()

    def close(self) -> None:
        pass


def parse_rocm_smi(data: Any) -> list[_Card]:
    """Cards from ``rocm-smi --json`` output: only ``card<N>`` entries are GPUs, N is the index."""
    if not isinstance(data, Mapping):
        raise AmdSourceError(f"rocm-smi printed a JSON {type(data).__name__}, expected an object")
    cards = []
    for key, fields in data.items():
        found = re.fullmatch(r"card(\d+)", str(key))
        if found and isinstance(fields, Mapping):
            cards.append(_rocm_card(int(found.group(1)), fields))
    return sorted(cards, key=lambda card: card.index)


def _rocm_card(index: int, fields: Mapping[str, Any]) -> _Card:
    card = _Card(index)
    for key, names in _ROCM_FIELDS:
        for name in names:
            value = number(fields.get(name))
            if value is not None:
                card.values[key] = value
                card.memory_is_activity = card.memory_is_activity or name == "GPU memory use (%)"
                break
    energy = number(fields.get("Accumulated Energy (uJ)"))
    _put(card.values, "energyJoules", None if energy is None else energy / 1e6)
    total = number(fields.get("VRAM Total Memory (B)"))
    card.memory_total = int(total) if total else None
    card.power_limit = number(fields.get("Max Graphics Package Power (W)"))
    card.name = next((_text(fields.get(name)) for name in _ROCM_NAMES if _text(fields.get(name))), "")
    if not card.name:
        device = fields.get("Device ID") or fields.get("GPU ID")
        card.name = f"{DEFAULT_NAME} {device}" if isinstance(device, str) and device else DEFAULT_NAME
    card.uuid = _reported_text(fields.get("Unique ID"))
    return card


# -- amd-smi -----------------------------------------------------------------


class _AmdSmi:
    """``amd-smi metric --json`` each sweep; ``amd-smi static --json`` now and then."""

    label = "amd-smi"

    def __init__(self, tool: _Tool, clock: Callable[[], float]) -> None:
        self.tool = tool
        self.clock = clock
        self.static: dict[int, _Card] = {}
        self.static_due = 0.0
        self.static_problem = ""
        self.processes_due = 0.0
        self.processes_problem = ""

    def indices(self) -> set[int]:
        return {card.index for card in parse_amd_smi_metric(self.tool.json("metric", "--json"))}

    def read(self) -> list[_Card]:
        now = self.clock()
        if now >= self.static_due:
            self._refresh_static(now)
        cards = parse_amd_smi_metric(self.tool.json("metric", "--json"))
        for card in cards:
            facts = self.static.get(card.index)
            if facts is not None:
                card.name = facts.name
                card.power_limit = facts.power_limit
                card.memory_total = card.memory_total or facts.memory_total
        return cards

    def _refresh_static(self, now: float) -> None:
        self.static_due = now + STATIC_REFRESH
        try:
            self.static = {card.index: card for card in parse_amd_smi_static(self.tool.json("static", "--json"))}
        except AmdSourceError as exc:
            self.static_problem = f"{exc}; GPU names and power caps may be missing"
        else:
            self.static_problem = ""

    def processes(self) -> list[_Listed] | None:
        """``amd-smi process --json``, run at most every ``PROCESS_REFRESH`` s (None in between)."""
        now = self.clock()
        if now < self.processes_due:
            return None
        self.processes_due = now + PROCESS_REFRESH
        try:
            listed = parse_amd_smi_process(self.tool.json("process", "--json"))
        except AmdSourceError as exc:
            self.processes_problem = f"{exc}; GPU processes are not listed"
            return []
        self.processes_problem = ""
        return listed

    def notes(self) -> tuple[str, ...]:
        return tuple(problem for problem in (self.static_problem, self.processes_problem) if problem)

    def close(self) -> None:
        pass


def _amd_smi_entries(data: Any, command: str) -> list[tuple[int, Mapping[str, Any]]]:
    """(index, per-GPU object) from either layout: a list, or ``{"gpu_data": [...]}``."""
    if isinstance(data, Mapping) and "gpu_data" in data:
        data = data["gpu_data"]
    if not isinstance(data, list):
        raise AmdSourceError(f"{command} printed JSON without a list of GPUs")
    entries = []
    for position, entry in enumerate(data):
        if isinstance(entry, Mapping):
            index = entry.get("gpu")
            entries.append((index if isinstance(index, int) and not isinstance(index, bool) else position, entry))
    return entries


def parse_amd_smi_metric(data: Any) -> list[_Card]:
    return [_amd_smi_card(index, entry) for index, entry in _amd_smi_entries(data, "amd-smi metric")]


def _amd_smi_card(index: int, entry: Mapping[str, Any]) -> _Card:
    card = _Card(index)
    values = card.values
    _put(values, "gpu", number(_dig(entry, "usage", "gfx_activity")))
    _put(values, "memoryReadWriteActivity", number(_dig(entry, "usage", "umc_activity")))
    _put(values, "temp", number(_dig(entry, "temperature", "mem")))
    _put(values, "powerWatts", number(_dig(entry, "power", "socket_power")))
    _put(values, "memoryAllocatedBytes", _bytes(_dig(entry, "mem_usage", "used_vram")))
    total = _bytes(_dig(entry, "mem_usage", "total_vram"))
    card.memory_total = int(total) if total else None
    clock = entry.get("clock")
    _put(values, "graphicsClock", _clock(clock, "gfx_0", "gfx"))
    _put(values, "memoryClock", _clock(clock, "mem_0", "mem"))
    _put(values, "energyJoules", _joules(_dig(entry, "energy", "total_energy_consumption")))
    ecc = entry.get("ecc")
    _put(values, "correctedMemoryErrors", number(_first(ecc, "total_correctable_count", "correctable_count")))
    _put(values, "uncorrectedMemoryErrors", number(_first(ecc, "total_uncorrectable_count", "uncorrectable_count")))
    _put(values, "fanSpeed", number(_dig(entry, "fan", "usage")))
    return card


def _first(data: Any, *names: str) -> Any:
    if not isinstance(data, Mapping):
        return None
    return next((data[name] for name in names if name in data), None)


def _clock(clock: Any, *domains: str) -> float | None:
    """MHz of the first clock domain given: newer releases say ``gfx_0``/``clk``, older ``gfx``/``cur_clk``."""
    domain = _first(clock, *domains)
    return number(_first(domain, "clk", "cur_clk"))


def parse_amd_smi_static(data: Any) -> list[_Card]:
    cards = []
    for index, entry in _amd_smi_entries(data, "amd-smi static"):
        card = _Card(index)
        card.name = _text(_dig(entry, "asic", "market_name")) or _text(_dig(entry, "board", "product_name"))
        card.power_limit = number(_dig(entry, "limit", "socket_power"))
        if card.power_limit is None:
            card.power_limit = number(_dig(entry, "limit", "ppt0", "socket_power_limit"))
        total = _bytes(_dig(entry, "vram", "size"))
        card.memory_total = int(total) if total else None
        cards.append(card)
    return cards


def parse_amd_smi_process(data: Any) -> list[_Listed]:
    """Processes from ``amd-smi process --json``, every layout seen so far.

    ROCm 6.2 on: ``[{"gpu": 0, "process_list": [{"process_info": {...}}, ...]}]``
    with ``{"value", "unit"}`` figures, and ``"process_info": "No running
    processes detected"`` when there are none. Before: one ``{"process_info":
    {...}}`` merged into the GPU's object, or a list of them under ``values``,
    with bare numbers.
    """
    listed = []
    for index, entry in _amd_smi_entries(data, "amd-smi process"):
        items = _first(entry, "process_list", "values")
        if items is None and "process_info" in entry:
            items = [entry]
        if isinstance(items, Mapping):
            items = [items]
        if not isinstance(items, list):
            continue
        for item in items:
            info = item.get("process_info", item) if isinstance(item, Mapping) else None
            if isinstance(info, Mapping):
                found = _process_entry(index, info)
                if found is not None:
                    listed.append(found)
    return listed


def _process_entry(gpu: int, info: Mapping[str, Any]) -> _Listed | None:
    """One process from a library dictionary or an amd-smi ``process_info``; None without a PID."""
    pid = number(info.get("pid"))
    if pid is None or pid <= 0:
        return None
    memory = _bytes(_dig(info, "memory_usage", "vram_mem"), "B")
    if memory is None:
        memory = _bytes(_first(info, "mem", "mem_usage"), "B")
    gfx = number(_dig(_first(info, "engine_usage", "usage"), "gfx"))  # ns, though some docs say %
    return _Listed(gpu, int(pid), _reported_text(info.get("name")), None if memory is None else int(memory), gfx)


def _busy_percent(before: tuple[float, float] | None, gfx_ns: float, now: float) -> float | None:
    """GFX busy % from two readings of the running busy-time total; None without an earlier one."""
    if before is None:
        return None
    busy_ns, then = before
    if now <= then or gfx_ns < busy_ns:
        return None
    return min(100.0, (gfx_ns - busy_ns) / ((now - then) * 1e9) * 100)


# -- the amdsmi library -----------------------------------------------------------


def _import_amdsmi() -> Any:
    """The ``amdsmi`` module.

    Some releases print to stdout when their shared library is missing,
    which would land on the terminal, and raise other errors than
    ImportError when it does not match the driver.
    """
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return importlib.import_module("amdsmi")
    except ImportError:
        raise _NotInstalled("the amdsmi Python package is not installed") from None
    except Exception as exc:  # noqa: BLE001
        raise AmdSourceError(f"the amdsmi Python package could not load: {exc}") from None


def _shut_down(lib: Any) -> None:
    with contextlib.suppress(Exception):
        lib.amdsmi_shut_down()


@dataclass
class _LibGpu:
    index: int
    handle: Any
    name: str = ""
    uuid: str = ""
    power_limit: float | None = None
    static_due: float = 0.0
    retry_at: dict[str, float] = field(default_factory=dict)  # query -> when to ask again after it failed
    process_problem: str = ""


class _Library:
    """The ``amdsmi`` Python library: no child process, one call per figure."""

    label = "amdsmi"

    def __init__(self, lib: Any, clock: Callable[[], float]) -> None:
        self.lib = lib
        self.clock = clock
        self.gpus = [_LibGpu(index, handle) for index, handle in enumerate(lib.amdsmi_get_processor_handles())]
        self.answers = 0
        self.last_error = ""

    def indices(self) -> set[int]:
        return {gpu.index for gpu in self.gpus}

    def read(self) -> list[_Card]:
        now = self.clock()
        before = self.answers
        cards = [self._read_gpu(gpu, now) for gpu in self.gpus]
        if self.gpus and self.answers == before:
            raise AmdSourceError(f"amdsmi answered nothing: {self.last_error or 'every query is failing'}")
        return cards

    def processes(self) -> list[_Listed]:
        now = self.clock()
        listed: list[_Listed] = []
        for gpu in self.gpus:
            listed.extend(self._gpu_processes(gpu, now))
        return listed

    def notes(self) -> tuple[str, ...]:
        problems = [gpu.process_problem for gpu in self.gpus if gpu.process_problem]
        return tuple(dict.fromkeys(problems))

    def close(self) -> None:
        _shut_down(self.lib)

    def _gpu_processes(self, gpu: _LibGpu, now: float) -> list[_Listed]:
        """One GPU's processes: dictionaries from newer releases, handles for ``amdsmi_get_gpu_process_info`` from older."""
        query = "amdsmi_get_gpu_process_list"
        if gpu.retry_at.get(query, 0.0) > now:
            return []
        try:
            entries = list(getattr(self.lib, query)(gpu.handle) or ())
        except Exception as exc:  # noqa: BLE001 - the library raises its own and ctypes errors alike
            gpu.retry_at[query] = now + RETRY_FAILED_CALL
            gpu.process_problem = f"{query}: {_excerpt(str(exc))}; GPU processes are not listed"
            return []
        gpu.process_problem = ""
        listed = []
        for entry in entries:
            info = entry if isinstance(entry, Mapping) else self._process_info(gpu, entry)
            found = None if info is None else _process_entry(gpu.index, info)
            if found is not None:
                listed.append(found)
        return listed

    def _process_info(self, gpu: _LibGpu, handle: Any) -> Mapping[str, Any] | None:
        """An older release's process handle, looked up; None when the process is gone or the call is missing."""
        info_of = getattr(self.lib, "amdsmi_get_gpu_process_info", None)
        if info_of is None:
            return None
        try:
            info = info_of(gpu.handle, handle)
        except Exception:  # noqa: BLE001 - a process that ended between the two calls
            return None
        return info if isinstance(info, Mapping) else None

    def _ask(self, gpu: _LibGpu, now: float, query: str, *args: Any) -> Any:
        """One library call; None when it failed (then not asked again for a while)."""
        if gpu.retry_at.get(query, 0.0) > now:
            return None
        try:
            result = getattr(self.lib, query)(gpu.handle, *args)
        except Exception as exc:  # noqa: BLE001 - the library raises its own and ctypes errors alike
            gpu.retry_at[query] = now + RETRY_FAILED_CALL
            self.last_error = f"{query}: {exc}"
            return None
        self.answers += 1
        return result

    def _enum(self, kind: str, member: str) -> Any:
        return getattr(getattr(self.lib, kind, None), member, None)

    def _read_gpu(self, gpu: _LibGpu, now: float) -> _Card:
        if now >= gpu.static_due:
            self._refresh_static(gpu, now)
        before = self.answers
        card = _Card(gpu.index, name=gpu.name, uuid=gpu.uuid, power_limit=gpu.power_limit)
        self._activity(gpu, now, card)
        self._memory(gpu, now, card)
        self._power(gpu, now, card)
        self._sensors(gpu, now, card)
        if self.answers == before:
            card.problem = f"amdsmi answered nothing for this GPU ({self.last_error})"
        return card

    def _refresh_static(self, gpu: _LibGpu, now: float) -> None:
        gpu.static_due = now + STATIC_REFRESH
        asic = self._ask(gpu, now, "amdsmi_get_gpu_asic_info")
        gpu.name = _text(_dig(asic, "market_name")) or gpu.name
        gpu.uuid = _reported_text(self._ask(gpu, now, "amdsmi_get_gpu_device_uuid")) or gpu.uuid
        cap = number(_dig(self._ask(gpu, now, "amdsmi_get_power_cap_info"), "power_cap"))
        gpu.power_limit = _watts(cap) if cap else gpu.power_limit

    def _activity(self, gpu: _LibGpu, now: float, card: _Card) -> None:
        activity = self._ask(gpu, now, "amdsmi_get_gpu_activity")
        _put(card.values, "gpu", number(_dig(activity, "gfx_activity")))
        _put(card.values, "memoryReadWriteActivity", number(_dig(activity, "umc_activity")))

    def _memory(self, gpu: _LibGpu, now: float, card: _Card) -> None:
        vram = self._ask(gpu, now, "amdsmi_get_gpu_vram_usage")  # MiB
        _put(card.values, "memoryAllocatedBytes", _bytes(_dig(vram, "vram_used")))
        total = _bytes(_dig(vram, "vram_total"))
        card.memory_total = int(total) if total else None

    def _power(self, gpu: _LibGpu, now: float, card: _Card) -> None:
        power = self._ask(gpu, now, "amdsmi_get_power_info")
        # Newer releases add socket_power; MI300 reports current, older GPUs average.
        watts = number(_first_reported(power, "socket_power", "current_socket_power", "average_socket_power"))
        _put(card.values, "powerWatts", watts)
        if card.power_limit is None:
            limit = number(_dig(power, "power_limit"))
            card.power_limit = _watts(limit) if limit else None
        energy = self._ask(gpu, now, "amdsmi_get_energy_count")
        ticks = number(_first(energy, "energy_accumulator", "power"))
        resolution = number(_dig(energy, "counter_resolution"))  # µJ per tick
        if ticks is not None and resolution is not None:
            card.values["energyJoules"] = ticks * resolution / 1e6

    def _sensors(self, gpu: _LibGpu, now: float, card: _Card) -> None:
        vram_sensor = self._enum("AmdSmiTemperatureType", "VRAM")
        current = self._enum("AmdSmiTemperatureMetric", "CURRENT")
        if vram_sensor is not None and current is not None:
            _put(card.values, "temp", number(self._ask(gpu, now, "amdsmi_get_temp_metric", vram_sensor, current)))
        for key, domain in (("graphicsClock", "GFX"), ("memoryClock", "MEM")):
            kind = self._enum("AmdSmiClkType", domain)
            if kind is not None:
                _put(card.values, key, number(_first(self._ask(gpu, now, "amdsmi_get_clock_info", kind), "clk", "cur_clk")))
        ecc = self._ask(gpu, now, "amdsmi_get_gpu_total_ecc_count")
        _put(card.values, "correctedMemoryErrors", number(_dig(ecc, "correctable_count")))
        _put(card.values, "uncorrectedMemoryErrors", number(_dig(ecc, "uncorrectable_count")))


def _first_reported(data: Any, *names: str) -> Any:
    if not isinstance(data, Mapping):
        return None
    return next((data[name] for name in names if number(data.get(name)) is not None), None)


def _watts(value: float) -> float:
    """Watts from a power cap: amdsmi gives µW, though some releases gave W in ``power_limit``."""
    return value / 1e6 if value > 100_000 else value


# -- words -------------------------------------------------------------------


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
