"""The ``amdsmi`` Python library as an AMD source: in process, no child, one call per figure.

``amdsmi`` is imported only when ``open_library`` is called, never when this
module is.
"""

from __future__ import annotations

import contextlib
import importlib
import io
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from collectors.amd.fields import dig, excerpt, first_field, in_bytes, listed_process, number, put, reported_name, reported_text
from collectors.amd.source import STATIC_REFRESH, AmdSourceError, Card, Listed, NotInstalled

RETRY_FAILED_CALL = 60.0


def open_library(clock: Callable[[], float]) -> Library:
    """The library, started, with its GPUs listed."""
    lib = _import_amdsmi()
    try:
        lib.amdsmi_init()
    except Exception as exc:  # noqa: BLE001 - the library raises its own and ctypes errors alike
        raise AmdSourceError(f"amdsmi could not start: {exc}") from None
    try:
        return Library(lib, clock)
    except Exception as exc:  # noqa: BLE001
        _shut_down(lib)
        raise AmdSourceError(f"amdsmi could not list the GPUs: {exc}") from None


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
        raise NotInstalled("the amdsmi Python package is not installed") from None
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


class Library:
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

    def read(self) -> list[Card]:
        now = self.clock()
        before = self.answers
        cards = [self._read_gpu(gpu, now) for gpu in self.gpus]
        if self.gpus and self.answers == before:
            raise AmdSourceError(f"amdsmi answered nothing: {self.last_error or 'every query is failing'}")
        return cards

    def processes(self) -> list[Listed]:
        now = self.clock()
        listed: list[Listed] = []
        for gpu in self.gpus:
            listed.extend(self._gpu_processes(gpu, now))
        return listed

    def notes(self) -> tuple[str, ...]:
        problems = [gpu.process_problem for gpu in self.gpus if gpu.process_problem]
        return tuple(dict.fromkeys(problems))

    def close(self) -> None:
        _shut_down(self.lib)

    def _gpu_processes(self, gpu: _LibGpu, now: float) -> list[Listed]:
        """One GPU's processes: dictionaries from newer releases, handles for ``amdsmi_get_gpu_process_info`` from older."""
        query = "amdsmi_get_gpu_process_list"
        if gpu.retry_at.get(query, 0.0) > now:
            return []
        try:
            entries = list(getattr(self.lib, query)(gpu.handle) or ())
        except Exception as exc:  # noqa: BLE001 - the library raises its own and ctypes errors alike
            gpu.retry_at[query] = now + RETRY_FAILED_CALL
            gpu.process_problem = f"{query}: {excerpt(str(exc))}; GPU processes are not listed"
            return []
        gpu.process_problem = ""
        listed = []
        for entry in entries:
            info = entry if isinstance(entry, Mapping) else self._process_info(gpu, entry)
            found = None if info is None else listed_process(gpu.index, info)
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

    def _read_gpu(self, gpu: _LibGpu, now: float) -> Card:
        if now >= gpu.static_due:
            self._refresh_static(gpu, now)
        before = self.answers
        card = Card(gpu.index, name=gpu.name, uuid=gpu.uuid, power_limit=gpu.power_limit)
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
        gpu.name = reported_name(dig(asic, "market_name")) or gpu.name
        gpu.uuid = reported_text(self._ask(gpu, now, "amdsmi_get_gpu_device_uuid")) or gpu.uuid
        cap = number(dig(self._ask(gpu, now, "amdsmi_get_power_cap_info"), "power_cap"))
        gpu.power_limit = _watts(cap) if cap else gpu.power_limit

    def _activity(self, gpu: _LibGpu, now: float, card: Card) -> None:
        activity = self._ask(gpu, now, "amdsmi_get_gpu_activity")
        put(card.values, "gpu", number(dig(activity, "gfx_activity")))
        put(card.values, "memoryReadWriteActivity", number(dig(activity, "umc_activity")))

    def _memory(self, gpu: _LibGpu, now: float, card: Card) -> None:
        vram = self._ask(gpu, now, "amdsmi_get_gpu_vram_usage")  # MiB
        put(card.values, "memoryAllocatedBytes", in_bytes(dig(vram, "vram_used")))
        total = in_bytes(dig(vram, "vram_total"))
        card.memory_total = int(total) if total else None

    def _power(self, gpu: _LibGpu, now: float, card: Card) -> None:
        power = self._ask(gpu, now, "amdsmi_get_power_info")
        # Newer releases add socket_power; MI300 reports current, older GPUs average.
        watts = number(_first_reported(power, "socket_power", "current_socket_power", "average_socket_power"))
        put(card.values, "powerWatts", watts)
        if card.power_limit is None:
            limit = number(dig(power, "power_limit"))
            card.power_limit = _watts(limit) if limit else None
        energy = self._ask(gpu, now, "amdsmi_get_energy_count")
        ticks = number(first_field(energy, "energy_accumulator", "power"))
        resolution = number(dig(energy, "counter_resolution"))  # µJ per tick
        if ticks is not None and resolution is not None:
            card.values["energyJoules"] = ticks * resolution / 1e6

    def _sensors(self, gpu: _LibGpu, now: float, card: Card) -> None:
        vram_sensor = self._enum("AmdSmiTemperatureType", "VRAM")
        current = self._enum("AmdSmiTemperatureMetric", "CURRENT")
        if vram_sensor is not None and current is not None:
            put(card.values, "temp", number(self._ask(gpu, now, "amdsmi_get_temp_metric", vram_sensor, current)))
        for key, domain in (("graphicsClock", "GFX"), ("memoryClock", "MEM")):
            kind = self._enum("AmdSmiClkType", domain)
            if kind is not None:
                put(card.values, key, number(first_field(self._ask(gpu, now, "amdsmi_get_clock_info", kind), "clk", "cur_clk")))
        ecc = self._ask(gpu, now, "amdsmi_get_gpu_total_ecc_count")
        put(card.values, "correctedMemoryErrors", number(dig(ecc, "correctable_count")))
        put(card.values, "uncorrectedMemoryErrors", number(dig(ecc, "uncorrectable_count")))


def _first_reported(data: Any, *names: str) -> Any:
    if not isinstance(data, Mapping):
        return None
    return next((data[name] for name in names if number(data.get(name)) is not None), None)


def _watts(value: float) -> float:
    """Watts from a power cap: amdsmi gives µW, though some releases gave W in ``power_limit``."""
    return value / 1e6 if value > 100_000 else value
