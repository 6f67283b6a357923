"""Run a Python program against made-up NVIDIA GPUs (the NVML stand-in of tests/nvml_standin.py).

    python benchmarks/fake_gpus.py --gpus 2 -m nvitop -m full --interval 2
    python benchmarks/fake_gpus.py --gpus 2 -m leet symon --interval 2s

The stand-in replaces what ``pynvml`` loads from ``libnvidia-ml.so.1``, inside
this one interpreter, so the program after ``-m`` must run here: this script
installs the stand-in, then runs that module as ``__main__`` with the rest of
the command line as its arguments. Everything above the C boundary is the real
``pynvml`` of this interpreter, so the module and ``pynvml`` (nvidia-ml-py)
must both be importable by the Python that runs this script.

The GPUs report values that move every ``--step`` seconds (utilization, memory,
power, temperature, clocks, PCIe traffic), each GPU on its own phase, so charts
and numbers change the way they do on a busy box. No GPU processes.
"""

from __future__ import annotations

import argparse
import math
import runpy
import sys
import threading
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"


def more_functions(box):  # -> an nvml_standin._Functions with more entry points
    """The stand-in's C functions plus the few more that a full monitor asks for.

    Without them a monitor gets FUNCTION_NOT_FOUND for fields such as the PCI bus
    id or the persistence mode, and may log that on its screen.
    """
    import pynvml
    from nvml_standin import _Functions, _put, _target

    ok = pynvml.NVML_SUCCESS

    class More(_Functions):
        def nvmlSystemGetCudaDriverVersion(self, version):
            self._ready()
            _put(version, 12040)
            return ok

        def nvmlSystemGetCudaDriverVersion_v2(self, version):
            return self.nvmlSystemGetCudaDriverVersion(version)

        def nvmlDeviceGetPciInfo_v3(self, handle, pci):
            gpu, _ = self._device(handle, "nvmlDeviceGetPciInfo_v3")
            index = self.box.gpus.index(gpu)
            out = _target(pci)
            out.domain, out.bus, out.device, out.pciDeviceId = 0, 0x18 + index, 0, 0x233010DE
            out.busId = out.busIdLegacy = f"00000000:{0x18 + index:02X}:00.0".encode()
            return ok

        def nvmlDeviceGetPersistenceMode(self, handle, mode):
            self._device(handle, "nvmlDeviceGetPersistenceMode")
            _put(mode, pynvml.NVML_FEATURE_ENABLED)
            return ok

        def nvmlDeviceGetDisplayActive(self, handle, active):
            self._device(handle, "nvmlDeviceGetDisplayActive")
            _put(active, pynvml.NVML_FEATURE_DISABLED)
            return ok

        def nvmlDeviceGetDisplayMode(self, handle, mode):
            return self.nvmlDeviceGetDisplayActive(handle, mode)

        def nvmlDeviceGetPerformanceState(self, handle, state):
            self._device(handle, "nvmlDeviceGetPerformanceState")
            _put(state, 0)
            return ok

        def nvmlDeviceGetPowerManagementLimit(self, handle, limit):
            return self._scalar(handle, "nvmlDeviceGetPowerManagementLimit", limit, "power_limit_mw")

        def nvmlDeviceGetComputeMode(self, handle, mode):
            self._device(handle, "nvmlDeviceGetComputeMode")
            _put(mode, pynvml.NVML_COMPUTEMODE_DEFAULT)
            return ok

        def nvmlDeviceGetTotalEccErrors(self, handle, kind, counter, count):
            gpu, _ = self._device(handle, "nvmlDeviceGetTotalEccErrors")
            uncorrected = int(getattr(kind, "value", kind)) == pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
            _put(count, gpu.uncorrected_errors if uncorrected else gpu.corrected_errors)
            return ok

        def nvmlDeviceGetDecoderUtilization(self, handle, utilization, period):
            self._device(handle, "nvmlDeviceGetDecoderUtilization")
            _put(utilization, 0)
            _put(period, 167_000)
            return ok

        def nvmlDeviceGetDriverModel(self, handle, current, pending):
            self._device(handle, "nvmlDeviceGetDriverModel")
            return pynvml.NVML_ERROR_NOT_SUPPORTED  # a Windows-only notion

    return More(box)


def make_box(count: int):  # -> nvml_standin.FakeNvml
    from nvml_standin import FakeGpu, FakeNvml

    return FakeNvml([FakeGpu(uuid=f"GPU-00000000-0000-0000-0000-{index:012d}") for index in range(count)])


def move(box, at: float) -> None:
    """Set every GPU's readings for time ``at`` (seconds): smooth waves, a different phase per GPU."""
    gib = 2**30
    for index, gpu in enumerate(box.gpus):
        phase = at / 20.0 + index * 1.3
        wave = 0.5 + 0.5 * math.sin(phase)
        gpu.utilization = round(60 + 35 * wave)
        gpu.memory_utilization = round(20 + 30 * wave)
        gpu.memory_used = int((40 + 30 * (0.5 + 0.5 * math.sin(phase / 3))) * gib)
        gpu.power_mw = int(250_000 + 400_000 * wave)
        gpu.temperature = round(45 + 25 * wave)
        gpu.sm_clock = gpu.graphics_clock = round(1500 + 480 * wave)
        gpu.fan = round(30 + 40 * wave)
        gpu.pcie_tx_kb = int(1_000 + 500_000 * wave)
        gpu.pcie_rx_kb = int(2_000 + 900_000 * (1 - wave))
        gpu.energy_mj += int(gpu.power_mw * 0.5)  # mW × 0.5 s ≈ mJ over one step


def _keep_moving(box, step: float) -> None:
    start = time.monotonic()
    while True:
        time.sleep(step)
        move(box, time.monotonic() - start)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    # Everything after "-m MODULE" belongs to the program, its own "-m" included.
    split = argv.index("-m") if "-m" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], usage="%(prog)s [--gpus N] [--step S] -m MODULE [ARGS ...]")
    parser.add_argument("--gpus", type=int, default=2, help="how many GPUs (default 2)")
    parser.add_argument("--step", type=float, default=0.5, help="seconds between value changes (default 0.5)")
    args = parser.parse_args(argv[:split])
    if split + 1 >= len(argv):
        parser.error("-m MODULE is required")
    module, rest = argv[split + 1], argv[split + 2 :]

    sys.path.append(str(TESTS))  # after site-packages: nothing under tests/ may shadow the program's modules
    from nvml_standin import installed

    box = make_box(args.gpus)
    move(box, 0.0)
    threading.Thread(target=_keep_moving, args=(box, args.step), name="fake-gpus", daemon=True).start()
    with installed(box) as nvml:
        nvml.nvmlLib._functions = more_functions(box)
        sys.argv = [module, *rest]
        runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
