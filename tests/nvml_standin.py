"""A made-up NVIDIA box at the NVML C-library boundary, for tests and benchmarks.

``pynvml`` loads ``libnvidia-ml.so.1`` into ``pynvml.nvmlLib`` and looks every
C function up with ``getattr(nvmlLib, name)`` (caching the result). The
stand-in puts a Python object there whose attributes behave like the C
functions: they take the same ctypes arguments, write results into the
structures passed by reference and return NVML return codes. So everything
above the C boundary is the real ``pynvml``: structure building, return-code
checks, the two-call "how many processes?" dance, versioned entry points.

    box = FakeNvml([FakeGpu(name="NVIDIA H100 80GB HBM3")])
    with installed(box) as nvml:     # nvml is the pynvml module
        nvml.nvmlInit()
        ...

or use the ``fake_nvml`` fixture (bring it into the test module) and fill
``fake_nvml.gpus``. Change a ``FakeGpu`` between sweeps to change what the
driver says (``lost = True`` makes it fall off the bus); ``FakeNvml`` holds
what concerns the driver as a whole (library missing, init refused, older
driver without some entry points). ``add_process``, ``host_proc`` and
``container_proc`` build the ``/proc`` that goes with it.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pynvml

try:
    import pytest
except ImportError:  # benchmarks use the stand-in without pytest
    pytest = None

GIB = 2**30
MIB = 2**20

HOST_NAMESPACE = "pid:[4026531836]"
CONTAINER_NAMESPACE = "pid:[4026532517]"

HANDLE_BASE = 0x10000  # fake device handles are addresses that are never dereferenced
HANDLE_STRIDE = 0x100
NOT_AVAILABLE = 0xFFFFFFFF  # what the driver writes for "no GPU/compute instance"


@dataclass
class FakeProcess:
    pid: int
    used_memory: int | None = 1 * GIB  # None: the driver's "not available" sentinel
    gpu_instance_id: int = NOT_AVAILABLE
    compute_instance_id: int = NOT_AVAILABLE


@dataclass
class FakeUtilizationSample:
    pid: int
    timestamp_us: int
    sm: int
    memory: int = 0


@dataclass
class FakeMig:
    profile: str = "1g.10gb"
    gpu_instance_id: int = 1
    compute_instance_id: int = 0
    memory_total: int = 10 * GIB
    memory_used: int = 12 * MIB
    uuid: str = ""


@dataclass
class FakeGpu:
    """One GPU. Change attributes between sweeps to change what the driver says."""

    name: str = "NVIDIA H100 80GB HBM3"
    uuid: str = ""
    memory_total: int = 80 * GIB
    memory_used: int = 20 * GIB
    utilization: int = 50
    memory_utilization: int = 20
    temperature: int = 40
    power_mw: int = 300_000
    power_limit_mw: int = 700_000
    sm_clock: int = 1980
    memory_clock: int = 2619
    graphics_clock: int = 1980
    corrected_errors: int = 0
    uncorrected_errors: int = 0
    encoder: int = 0
    fan: int = 30
    pcie_gen: int = 5
    pcie_width: int = 16
    max_pcie_gen: int = 5
    max_pcie_width: int = 16
    pcie_tx_kb: int = 1000
    pcie_rx_kb: int = 2000
    energy_mj: int = 123_456_789
    compute: list[FakeProcess] = field(default_factory=list)
    graphics: list[FakeProcess] = field(default_factory=list)
    samples: list[FakeUtilizationSample] = field(default_factory=list)
    mig_enabled: bool = False
    mig: list[FakeMig] = field(default_factory=list)
    max_mig_devices: int = 7
    mig_capable: bool = True
    mig_processes_need_root: bool = False  # the whole-GPU process list refuses non-root callers
    unsupported: set[str] = field(default_factory=set)  # C function names answering NOT_SUPPORTED
    errors: dict[str, int] = field(default_factory=dict)  # C function name -> return code
    lost: bool = False  # every call answers GPU_IS_LOST


class FakeNvml:
    """The whole box: its GPUs, and how the driver as a whole behaves."""

    def __init__(self, gpus: list[FakeGpu] | None = None) -> None:
        self.gpus: list[FakeGpu] = list(gpus) if gpus is not None else [FakeGpu()]
        self.library_missing = False  # libnvidia-ml.so.1 cannot be loaded
        self.init_error: int | None = None  # e.g. NVML_ERROR_DRIVER_NOT_LOADED
        self.device_error: int | None = None  # every device call answers this (driver gone)
        self.missing_functions: set[str] = set()  # symbols an older driver lacks
        self.driver_version = "550.54.15"
        self.calls: Counter[str] = Counter()
        self.initialized = 0

    # -- handles ------------------------------------------------------------

    def handle_address(self, gpu: int, mig: int | None = None) -> int:
        return HANDLE_BASE + gpu * HANDLE_STRIDE + (0 if mig is None else 1 + mig)

    def resolve(self, handle: Any) -> tuple[FakeGpu, FakeMig | None]:
        address = ctypes.cast(handle, ctypes.c_void_p).value or 0
        offset = address - HANDLE_BASE
        index, slot = divmod(offset, HANDLE_STRIDE)
        if offset < 0 or index >= len(self.gpus):
            raise _Return(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        gpu = self.gpus[index]
        if slot == 0:
            return gpu, None
        if slot - 1 >= len(gpu.mig) or not gpu.mig_enabled:
            raise _Return(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        return gpu, gpu.mig[slot - 1]


class _Return(Exception):
    """Ends an emulated C call early with an NVML return code."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _CFunction:
    """Callable like a ctypes function pointer, attributes (restype) included."""

    def __init__(self, name: str, body: Callable[..., int]) -> None:
        self.__name__ = name
        self._body = body
        self.restype: Any = ctypes.c_int
        self.argtypes: Any = None

    def __call__(self, *args: Any) -> Any:
        try:
            return self._body(*args)
        except _Return as early:
            return early.code


class FakeLibrary:
    """Stands where ``pynvml.nvmlLib`` holds the loaded shared library."""

    def __init__(self, box: FakeNvml) -> None:
        self._box = box
        self._functions = _Functions(box)

    def __getattr__(self, name: str) -> _CFunction:
        box = self.__dict__["_box"]
        body = getattr(self.__dict__["_functions"], name, None) if name.startswith("nvml") else None
        if body is None or name in box.missing_functions:
            raise AttributeError(name)  # pynvml turns this into FUNCTION_NOT_FOUND

        def counted(*args: Any) -> int:
            box.calls[name] += 1
            return body(*args)

        return _CFunction(name, counted)


def _value(argument: Any) -> int:
    """A ctypes scalar passed by value, or a plain int."""
    return argument.value if hasattr(argument, "value") else int(argument)


def _target(reference: Any) -> Any:
    """The ctypes object behind ``byref(obj)``."""
    return getattr(reference, "_obj", reference)


def _put(reference: Any, value: int) -> None:
    _target(reference).value = value


def _put_text(buffer: Any, text: str) -> None:
    buffer.value = text.encode()


class _Functions:
    """The emulated C entry points, by their exported names."""

    def __init__(self, box: FakeNvml) -> None:
        self.box = box

    # -- the library --------------------------------------------------------

    def nvmlInitWithFlags(self, flags: Any) -> int:
        if self.box.init_error is not None:
            return self.box.init_error
        self.box.initialized += 1
        return pynvml.NVML_SUCCESS

    def nvmlShutdown(self) -> int:
        if not self.box.initialized:
            return pynvml.NVML_ERROR_UNINITIALIZED
        self.box.initialized -= 1
        return pynvml.NVML_SUCCESS

    def nvmlErrorString(self, code: Any) -> bytes:
        return f"NVML error {_value(code)}".encode()

    def nvmlSystemGetDriverVersion(self, buffer: Any, length: Any) -> int:
        self._ready()
        _put_text(buffer, self.box.driver_version)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetCount_v2(self, count: Any) -> int:
        self._ready()
        _put(count, len(self.box.gpus))
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetHandleByIndex_v2(self, index: Any, handle: Any) -> int:
        self._ready()
        index = _value(index)
        if index >= len(self.box.gpus):
            return pynvml.NVML_ERROR_INVALID_ARGUMENT
        self._check(self.box.gpus[index], "nvmlDeviceGetHandleByIndex_v2")
        _write_handle(handle, self.box.handle_address(index))
        return pynvml.NVML_SUCCESS

    # -- identity -----------------------------------------------------------

    def nvmlDeviceGetName(self, handle: Any, buffer: Any, length: Any) -> int:
        gpu, mig = self._device(handle, "nvmlDeviceGetName", mig_ok=True)
        _put_text(buffer, f"{gpu.name} MIG {mig.profile}" if mig else gpu.name)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetUUID(self, handle: Any, buffer: Any, length: Any) -> int:
        gpu, mig = self._device(handle, "nvmlDeviceGetUUID", mig_ok=True)
        index = self.box.gpus.index(gpu)
        if mig is not None:
            uuid = mig.uuid or f"MIG-00000000-0000-0000-{index:04x}-{gpu.mig.index(mig):012x}"
        else:
            uuid = gpu.uuid or f"GPU-00000000-0000-0000-0000-{index:012x}"
        _put_text(buffer, uuid)
        return pynvml.NVML_SUCCESS

    # -- gauges -------------------------------------------------------------

    def nvmlDeviceGetMemoryInfo(self, handle: Any, memory: Any) -> int:
        gpu, mig = self._device(handle, "nvmlDeviceGetMemoryInfo", mig_ok=True)
        total, used = (mig.memory_total, mig.memory_used) if mig else (gpu.memory_total, gpu.memory_used)
        out = _target(memory)
        out.total, out.used, out.free = total, used, total - used
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetMemoryInfo_v2(self, handle: Any, memory: Any) -> int:
        out = _target(memory)
        if out.version != pynvml.nvmlMemory_v2:
            return pynvml.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        gpu, mig = self._device(handle, "nvmlDeviceGetMemoryInfo_v2", mig_ok=True)
        total, used = (mig.memory_total, mig.memory_used) if mig else (gpu.memory_total, gpu.memory_used)
        out.total, out.reserved, out.used, out.free = total, 0, used, total - used
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetUtilizationRates(self, handle: Any, utilization: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetUtilizationRates")
        if gpu.mig_enabled:
            return pynvml.NVML_ERROR_NOT_SUPPORTED
        out = _target(utilization)
        out.gpu, out.memory = gpu.utilization, gpu.memory_utilization
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: Any, temperature: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetTemperature")
        if _value(sensor) != pynvml.NVML_TEMPERATURE_GPU:
            return pynvml.NVML_ERROR_NOT_SUPPORTED
        _put(temperature, gpu.temperature)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetTemperatureV(self, handle: Any, reading: Any) -> int:
        out = _target(reading)
        if out.version != pynvml.nvmlTemperature_v1:
            return pynvml.NVML_ERROR_ARGUMENT_VERSION_MISMATCH
        gpu, _ = self._device(handle, "nvmlDeviceGetTemperatureV")
        if out.sensorType != pynvml.NVML_TEMPERATURE_GPU:
            return pynvml.NVML_ERROR_NOT_SUPPORTED
        out.temperature = gpu.temperature
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetPowerUsage(self, handle: Any, power: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetPowerUsage", power, "power_mw")

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Any, limit: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetEnforcedPowerLimit", limit, "power_limit_mw")

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any, energy: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetTotalEnergyConsumption", energy, "energy_mj")

    def nvmlDeviceGetClockInfo(self, handle: Any, clock: Any, value: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetClockInfo")
        which = {
            pynvml.NVML_CLOCK_SM: gpu.sm_clock,
            pynvml.NVML_CLOCK_MEM: gpu.memory_clock,
            pynvml.NVML_CLOCK_GRAPHICS: gpu.graphics_clock,
        }
        if _value(clock) not in which:
            return pynvml.NVML_ERROR_INVALID_ARGUMENT
        _put(value, which[_value(clock)])
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetMemoryErrorCounter(self, handle: Any, kind: Any, counter: Any, location: Any, count: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetMemoryErrorCounter")
        if _value(location) != pynvml.NVML_MEMORY_LOCATION_DEVICE_MEMORY or _value(counter) != pynvml.NVML_VOLATILE_ECC:
            return pynvml.NVML_ERROR_NOT_SUPPORTED
        corrected = _value(kind) == pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED
        _put(count, gpu.corrected_errors if corrected else gpu.uncorrected_errors)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetEncoderUtilization(self, handle: Any, utilization: Any, period: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetEncoderUtilization")
        _put(utilization, gpu.encoder)
        _put(period, 167_000)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetFanSpeed(self, handle: Any, speed: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetFanSpeed", speed, "fan")

    def nvmlDeviceGetFanSpeed_v2(self, handle: Any, fan: Any, speed: Any) -> int:
        if _value(fan) != 0:
            return pynvml.NVML_ERROR_INVALID_ARGUMENT
        return self._scalar(handle, "nvmlDeviceGetFanSpeed_v2", speed, "fan")

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle: Any, value: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetCurrPcieLinkGeneration", value, "pcie_gen")

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle: Any, value: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetCurrPcieLinkWidth", value, "pcie_width")

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle: Any, value: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetMaxPcieLinkGeneration", value, "max_pcie_gen")

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle: Any, value: Any) -> int:
        return self._scalar(handle, "nvmlDeviceGetMaxPcieLinkWidth", value, "max_pcie_width")

    def nvmlDeviceGetPcieThroughput(self, handle: Any, counter: Any, value: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetPcieThroughput")
        tx = _value(counter) == pynvml.NVML_PCIE_UTIL_TX_BYTES
        _put(value, gpu.pcie_tx_kb if tx else gpu.pcie_rx_kb)
        return pynvml.NVML_SUCCESS

    # -- processes ----------------------------------------------------------

    def nvmlDeviceGetComputeRunningProcesses_v3(self, handle: Any, count: Any, infos: Any) -> int:
        return self._processes(handle, "nvmlDeviceGetComputeRunningProcesses_v3", count, infos, "compute")

    def nvmlDeviceGetComputeRunningProcesses_v2(self, handle: Any, count: Any, infos: Any) -> int:
        return self._processes(handle, "nvmlDeviceGetComputeRunningProcesses_v2", count, infos, "compute")

    def nvmlDeviceGetGraphicsRunningProcesses_v3(self, handle: Any, count: Any, infos: Any) -> int:
        return self._processes(handle, "nvmlDeviceGetGraphicsRunningProcesses_v3", count, infos, "graphics")

    def nvmlDeviceGetGraphicsRunningProcesses_v2(self, handle: Any, count: Any, infos: Any) -> int:
        return self._processes(handle, "nvmlDeviceGetGraphicsRunningProcesses_v2", count, infos, "graphics")

    def nvmlDeviceGetProcessUtilization(self, handle: Any, samples: Any, count: Any, since: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetProcessUtilization")
        if gpu.mig_enabled:
            return pynvml.NVML_ERROR_NOT_SUPPORTED
        fresh = [s for s in gpu.samples if s.timestamp_us > _value(since)]
        if not fresh:
            return pynvml.NVML_ERROR_NOT_FOUND
        wanted = _target(count)
        if samples is None or wanted.value < len(fresh):
            wanted.value = len(fresh)
            return pynvml.NVML_ERROR_INSUFFICIENT_SIZE
        for slot, sample in zip(samples, fresh):
            slot.pid, slot.timeStamp, slot.smUtil, slot.memUtil = (
                sample.pid, sample.timestamp_us, sample.sm, sample.memory
            )
            slot.encUtil = slot.decUtil = 0
        wanted.value = len(fresh)
        return pynvml.NVML_SUCCESS

    # -- MIG ----------------------------------------------------------------

    def nvmlDeviceGetMigMode(self, handle: Any, current: Any, pending: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetMigMode")
        if not gpu.mig_capable:
            return pynvml.NVML_ERROR_NOT_SUPPORTED
        mode = pynvml.NVML_DEVICE_MIG_ENABLE if gpu.mig_enabled else pynvml.NVML_DEVICE_MIG_DISABLE
        _put(current, mode)
        _put(pending, mode)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetMaxMigDeviceCount(self, handle: Any, count: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetMaxMigDeviceCount")
        _put(count, gpu.max_mig_devices if gpu.mig_capable else 0)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle: Any, index: Any, mig_handle: Any) -> int:
        gpu, _ = self._device(handle, "nvmlDeviceGetMigDeviceHandleByIndex")
        index = _value(index)
        if not gpu.mig_enabled:
            return pynvml.NVML_ERROR_INVALID_ARGUMENT
        if index >= gpu.max_mig_devices:
            return pynvml.NVML_ERROR_INVALID_ARGUMENT
        if index >= len(gpu.mig):
            return pynvml.NVML_ERROR_NOT_FOUND
        _write_handle(mig_handle, self.box.handle_address(self.box.gpus.index(gpu), index))
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetGpuInstanceId(self, handle: Any, value: Any) -> int:
        _, mig = self._device(handle, "nvmlDeviceGetGpuInstanceId", mig_ok=True)
        if mig is None:
            return pynvml.NVML_ERROR_INVALID_ARGUMENT
        _put(value, mig.gpu_instance_id)
        return pynvml.NVML_SUCCESS

    def nvmlDeviceGetComputeInstanceId(self, handle: Any, value: Any) -> int:
        _, mig = self._device(handle, "nvmlDeviceGetComputeInstanceId", mig_ok=True)
        if mig is None:
            return pynvml.NVML_ERROR_INVALID_ARGUMENT
        _put(value, mig.compute_instance_id)
        return pynvml.NVML_SUCCESS

    # -- helpers ------------------------------------------------------------

    def _ready(self) -> None:
        if not self.box.initialized:
            raise _Return(pynvml.NVML_ERROR_UNINITIALIZED)

    def _check(self, gpu: FakeGpu, name: str) -> None:
        if gpu.lost:
            raise _Return(pynvml.NVML_ERROR_GPU_IS_LOST)
        if name in gpu.unsupported:
            raise _Return(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if name in gpu.errors:
            raise _Return(gpu.errors[name])

    def _device(self, handle: Any, name: str, mig_ok: bool = False) -> tuple[FakeGpu, FakeMig | None]:
        self._ready()
        if self.box.device_error is not None:
            raise _Return(self.box.device_error)
        gpu, mig = self.box.resolve(handle)
        self._check(gpu, name)
        if mig is not None and not mig_ok:
            raise _Return(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu, mig

    def _scalar(self, handle: Any, name: str, out: Any, attribute: str) -> int:
        gpu, _ = self._device(handle, name)
        _put(out, getattr(gpu, attribute))
        return pynvml.NVML_SUCCESS

    def _processes(self, handle: Any, name: str, count: Any, infos: Any, kind: str) -> int:
        gpu, mig = self._device(handle, name, mig_ok=True)
        processes = gpu.compute if kind == "compute" else gpu.graphics
        if mig is not None:
            processes = [p for p in processes if p.gpu_instance_id == mig.gpu_instance_id]
        elif gpu.mig_enabled and gpu.mig_processes_need_root:
            return pynvml.NVML_ERROR_NO_PERMISSION
        room = _target(count)
        if infos is None:
            room.value = len(processes)
            return pynvml.NVML_ERROR_INSUFFICIENT_SIZE if processes else pynvml.NVML_SUCCESS
        if room.value < len(processes):
            room.value = len(processes)
            return pynvml.NVML_ERROR_INSUFFICIENT_SIZE
        for slot, process in zip(infos, processes):
            slot.pid = process.pid
            slot.usedGpuMemory = (
                pynvml.NVML_VALUE_NOT_AVAILABLE_ulonglong.value
                if process.used_memory is None
                else process.used_memory
            )
            slot.gpuInstanceId = process.gpu_instance_id
            slot.computeInstanceId = process.compute_instance_id
        room.value = len(processes)
        return pynvml.NVML_SUCCESS


# -- the /proc side of the box -----------------------------------------------------


def add_process(
    proc_root: Path,
    pid: int | str,
    *,
    name: str = "python",
    uid: int = 0,
    nspids: tuple[int, ...] | None = None,
    argv: tuple[str, ...] = ("python", "train.py"),
    children: tuple[int, ...] = (),
) -> None:
    """One process under a fake ``/proc``: status, cmdline and its children file."""
    directory = proc_root / str(pid)
    (directory / "task" / str(pid)).mkdir(parents=True, exist_ok=True)
    ids = " ".join(str(i) for i in (nspids or (pid,)))
    (directory / "status").write_text(
        f"Name:\t{name}\nState:\tS (sleeping)\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nNSpid:\t{ids}\n"
    )
    (directory / "cmdline").write_bytes(b"\0".join(arg.encode() for arg in argv) + b"\0")
    (directory / "task" / str(pid) / "children").write_text(" ".join(str(c) for c in children) + " ")


def set_pid_namespace(proc_root: Path, who: int | str, namespace: str) -> None:
    """Make ``/proc/<who>/ns/pid`` name ``namespace`` (e.g. ``"pid:[4026531836]"``)."""
    link = proc_root / str(who) / "ns" / "pid"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(namespace)


def host_proc(proc_root: Path) -> Path:
    """A fake ``/proc`` as seen from the host PID namespace."""
    add_process(proc_root, "self", name="leet", nspids=(4242,))
    set_pid_namespace(proc_root, "self", HOST_NAMESPACE)
    return proc_root


def container_proc(proc_root: Path) -> Path:
    """A fake ``/proc`` of a container with its own PID namespace."""
    add_process(proc_root, "self", name="leet", nspids=(7,))
    set_pid_namespace(proc_root, "self", CONTAINER_NAMESPACE)
    return proc_root


def _write_handle(reference: Any, address: int) -> None:
    """Store ``address`` in the ``nvmlDevice_t`` that ``reference`` points at."""
    pointer = _target(reference)
    ctypes.c_void_p.from_address(ctypes.addressof(pointer)).value = address


def _missing_library(*args: Any, **kwargs: Any) -> Any:
    raise OSError("libnvidia-ml.so.1: cannot open shared object file: No such file or directory")


@contextlib.contextmanager
def installed(box: FakeNvml) -> Iterator[Any]:
    """Make ``pynvml`` talk to ``box``; put everything back afterwards."""
    saved = (
        pynvml.nvmlLib,
        pynvml._nvmlLib_refcount,
        dict(pynvml._nvmlGetFunctionPointer_cache),
        pynvml.CDLL,
    )
    pynvml._nvmlGetFunctionPointer_cache.clear()
    pynvml._nvmlLib_refcount = 0
    if box.library_missing:
        pynvml.nvmlLib = None
        pynvml.CDLL = _missing_library
    else:
        pynvml.nvmlLib = FakeLibrary(box)
    try:
        yield pynvml
    finally:
        pynvml._nvmlGetFunctionPointer_cache.clear()
        pynvml._nvmlGetFunctionPointer_cache.update(saved[2])
        pynvml.nvmlLib, pynvml._nvmlLib_refcount, _, pynvml.CDLL = saved


def _fake_nvml() -> Iterator[FakeNvml]:
    """A one-GPU box, installed for the test; add or change GPUs before probing."""
    box = FakeNvml()
    with installed(box):
        yield box


fake_nvml = pytest.fixture(_fake_nvml, name="fake_nvml") if pytest is not None else None
