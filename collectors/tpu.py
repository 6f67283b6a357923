"""Google TPUs: W&B's ``tpu.*`` keys (wandb 0.26+ names) from libtpu's runtime metrics.

Detection reads sysfs only: a TPU is a PCI device of Google's vendor
``0x1ae0`` with a TPU device id. A machine without one costs nothing more;
above all, libtpu is never imported there (its initialisers crash on
machines without Google Cloud metadata).

On a TPU host the metrics come from two places, as in wandb 0.26+:

* ``libtpu.sdk``'s ``tpumonitoring``, when importable: the only source of
  TensorCore utilisation;
* the runtime metrics gRPC service a workload serves on ``localhost:8431``
  (needs grpcio, the ``[tpu]`` extra): whatever the SDK did not give. All
  requests of a sweep go out together, each with a short deadline.

Both exist only while a JAX or PyTorch/XLA process holds the TPU. Without one
the collector stays healthy, returns nothing and says why on each chip's
line; a service that accepts connections but never answers makes the sample
raise, and the hub marks the collector failing.

Where this differs from wandb, on purpose: ``dutyCycle`` is fanned out to both
devices of a two-device chip (v2, v3, 7x), the memory figures are not (the
service reports them per device); an unlabelled distribution read over gRPC
gets the same keys as from the SDK (wandb writes those under ``.item_0.``);
distribution percentiles follow Cloud Monitoring's bucket layout (underflow
bucket first).
"""

from __future__ import annotations

import glob
import importlib
import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from collectors.base import Collector, Probe
from collectors.gpu import AcceleratorInfo
from collectors.tpu_runtime import DOWN, HUNG, REFUSED, keys

GOOGLE_VENDOR = "0x1ae0"
DEFAULT_ADDRESS = "localhost:8431"
RETRY_UNSERVED = 60.0  # a metric a source does not serve is asked again this often
INSTALL_HINT = "install leet-monitor[tpu]"


@dataclass(frozen=True)
class TpuChip:
    """A TPU generation as its PCI ids tell it."""

    version: str  # "v6e", "7x"
    hbm_gib: int
    devices_per_chip: int = 1

    @property
    def name(self) -> str:
        return "TPU7x" if self.version == "7x" else f"TPU {self.version}"


# PCI device id → chip; v2 and v3 share device 0x0027 and differ by subsystem.
_BY_DEVICE = {
    "0x005e": TpuChip("v4", 32),
    "0x0063": TpuChip("v5e", 16),
    "0x0062": TpuChip("v5p", 95),
    "0x006f": TpuChip("v6e", 32),
    "0x0076": TpuChip("7x", 192, 2),
}
_BY_SUBSYSTEM = {"0x004e": TpuChip("v2", 8, 2), "0x004f": TpuChip("v3", 16, 2)}


def identify(device: str, subsystem: str = "") -> TpuChip | None:
    """The TPU a Google PCI device is, or None (a gVNIC, say, or an unknown model)."""
    if device == "0x0027":
        return _BY_SUBSYSTEM.get(subsystem)
    return _BY_DEVICE.get(device)


@dataclass(frozen=True)
class PciScan:
    chip: TpuChip | None  # the most common TPU model
    count: int  # how many chips of it
    others: tuple[str, ...] = ()  # device ids of Google devices that are not TPUs


def scan_pci(sys_root: str = "/") -> PciScan:
    """TPU chips on the PCI bus under ``sys_root``; reads sysfs and nothing else."""
    chips: dict[str, TpuChip] = {}
    others: set[str] = set()
    for path in sorted(glob.glob(os.path.join(sys_root, "sys/bus/pci/devices/*"))):
        if _read(path, "vendor") != GOOGLE_VENDOR:
            continue
        device = _read(path, "device")
        chip = identify(device, _read(path, "subsystem_device"))
        if chip is None:
            others.add(device or "?")
            continue
        # Functions of one chip share domain:bus:device; count the chip once.
        chips[os.path.basename(path).rsplit(".", 1)[0]] = chip
    if not chips:
        return PciScan(None, 0, tuple(sorted(others)))
    chip, count = Counter(chips.values()).most_common(1)[0]
    return PciScan(chip, count, tuple(sorted(others)))


def _read(directory: str, name: str) -> str:
    try:
        with open(os.path.join(directory, name), encoding="ascii", errors="replace") as handle:
            return handle.read().strip().lower()
    except OSError:
        return ""


class TpuCollector(Collector):
    """W&B's ``tpu.{i}.*`` and ``tpu.<distribution>.*`` keys, plus one ``AcceleratorInfo`` per TPU device.

    ``sys_root`` is where ``sys/bus/pci`` is read; ``address`` is the runtime
    metrics service; ``timeout`` the deadline of each request; ``use_libtpu``
    lets the collector import ``libtpu.sdk`` (on a TPU host only).
    """

    name = "tpu"
    budget = 2.0

    def __init__(
        self,
        sys_root: str = "/",
        address: str = DEFAULT_ADDRESS,
        timeout: float = 0.5,
        use_libtpu: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sys_root = sys_root
        self.address = address
        self.timeout = timeout
        self.use_libtpu = use_libtpu
        self._clock = clock
        self._chip = TpuChip("", 0)
        self._chips = 0
        self._sdk: Any = None  # libtpu.sdk's tpumonitoring module
        self._client: Any = None  # collectors.tpu_runtime.client.RuntimeMetricClient
        self._aliases: dict[str, str] = {}  # Wanted.key → the SDK name that answered
        self._unserved: dict[str, float] = {}  # "sdk:<key>" / "grpc:<name>" → when to ask again
        self._totals: dict[int, int] = {}  # device → HBM bytes, as the runtime last said
        self._devices: set[int] = set()
        self._notes: tuple[str, ...] = ()
        self._reason = ""
        self._extras: dict[str, Any] = {"accelerators.tpu": (), "notes.tpu": ()}

    # -- the contract --------------------------------------------------------

    def probe(self) -> Probe:
        self.close()
        scan = scan_pci(self.sys_root)
        if scan.chip is None:
            return Probe.absent(_no_tpu(scan.others))
        self._chip, self._chips = scan.chip, scan.count
        notes = []
        if self.use_libtpu:
            self._sdk, note = _open_sdk()
            notes.append(note)
        self._client = self._open_client()
        if self._client is None:
            if self._sdk is None:
                return Probe.absent(f"grpcio is not installed: {INSTALL_HINT}")
            notes.append(f"grpcio is not installed ({INSTALL_HINT}): only libtpu's SDK is read")
        self._notes = tuple(note for note in notes if note)
        self._extras = self._make_extras()
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        now = self._clock()
        values, gaps = self._read_sdk(now)
        outcomes = self._read_grpc(gaps, now, values)
        if not values and HUNG in outcomes:
            raise TimeoutError(f"the TPU runtime metrics service at {self.address} gave no answer in {self.timeout:g} s")
        self._reason = "" if values else self._idle_reason(outcomes)
        values.update(keys.hbm_percentages(values))
        self._remember_devices(values)
        self._extras = self._make_extras()
        return values

    def extras(self) -> Mapping[str, Any]:
        return self._extras

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001 - close must not raise
                pass

    # -- sources ---------------------------------------------------------------

    def _open_client(self) -> Any:
        try:
            from collectors.tpu_runtime.client import RuntimeMetricClient
        except ImportError:
            return None
        return RuntimeMetricClient(self.address, self.timeout)

    def _read_sdk(self, now: float) -> tuple[dict[str, float], list[keys.Wanted]]:
        """What the SDK gives, and the metrics left for the gRPC service."""
        values: dict[str, float] = {}
        gaps: list[keys.Wanted] = []
        missing: list[keys.Wanted] = []
        for wanted in keys.WANTED:
            got = self._sdk_metric(wanted, now) if self._sdk is not None and wanted.sdk_names else {}
            if got:
                values.update(got)
                continue
            gaps.append(wanted)
            if got is None:
                missing.append(wanted)
        # Without a workload every SDK call fails; only when others answered does
        # a failing name mean "not in this libtpu", worth asking less often.
        if values:
            for wanted in missing:
                self._unserved[f"sdk:{wanted.key}"] = now + RETRY_UNSERVED
        return values, gaps

    def _sdk_metric(self, wanted: keys.Wanted, now: float) -> dict[str, float] | None:
        """Keys from the SDK for one metric; {} when it answered with nothing usable, None when it failed."""
        if self._unserved.get(f"sdk:{wanted.key}", 0.0) > now:
            return {}
        known = self._aliases.get(wanted.key)
        for alias in (known,) if known else wanted.sdk_names:
            try:
                metric = self._sdk.get_metric(alias)
                rows = metric.data()
                description = metric.description() if callable(getattr(metric, "description", None)) else ""
            except Exception:  # noqa: BLE001 - libtpu raises various errors for metrics it lacks
                continue
            self._aliases[wanted.key] = alias
            return keys.from_sdk(wanted, str(description or ""), list(rows or ()), self._chip.devices_per_chip)
        return None

    def _read_grpc(self, gaps: list[keys.Wanted], now: float, values: dict[str, float]) -> set[str]:
        """Fill ``values`` from the gRPC service; how its requests ended."""
        if self._client is None:
            return set()
        asked = {w.grpc_name: w for w in gaps if w.grpc_name and self._unserved.get(f"grpc:{w.grpc_name}", 0.0) <= now}
        if not asked:
            return set()
        outcomes = set()
        for name, answer in self._client.ask(asked).items():
            outcomes.add(answer.outcome)
            if answer.metric is not None:
                values.update(keys.from_grpc(asked[name], answer.metric, self._chip.devices_per_chip))
            elif answer.outcome == REFUSED:
                self._unserved[f"grpc:{name}"] = now + RETRY_UNSERVED
        return outcomes

    def _idle_reason(self, outcomes: set[str]) -> str:
        if DOWN in outcomes:
            return f"no TPU workload is running: nothing answers at {self.address}"
        if self._client is None:
            return "no TPU workload is running: libtpu's SDK reports nothing"
        if outcomes <= {REFUSED}:
            return f"the runtime metrics service at {self.address} serves none of the metrics asked for"
        return "the TPU runtime reports no values yet"

    # -- extras ------------------------------------------------------------------

    def _remember_devices(self, values: Mapping[str, float]) -> None:
        for key, value in values.items():
            match = _DEVICE_KEY.match(key)
            if match is None:
                continue
            device = int(match.group(1))
            self._devices.add(device)
            if match.group(2) == "hbmCapacityTotal" and value > 0:
                self._totals[device] = int(value)

    def _make_extras(self) -> dict[str, Any]:
        chip = self._chip
        count = max(self._chips * chip.devices_per_chip, max(self._devices, default=-1) + 1)
        per_device = chip.hbm_gib * 2**30 // chip.devices_per_chip or None
        infos = tuple(
            AcceleratorInfo(
                vendor="Google",
                index=index,
                name=chip.name,
                utilization_key=f"tpu.{index}.dutyCycle",
                memory_key=f"tpu.{index}.hbmMemoryUsage",
                memory_total=self._totals.get(index, per_device),
                reason=self._reason,
            )
            for index in range(count)
        )
        return {"accelerators.tpu": infos, "notes.tpu": self._notes}


_DEVICE_KEY = re.compile(r"^tpu\.(\d+)\.(\w+)$")


def _no_tpu(others: tuple[str, ...]) -> str:
    if not others:
        return "no Google TPU on the PCI bus"
    return f"no Google TPU on the PCI bus (Google devices {', '.join(others)} are not TPUs)"


def _open_sdk() -> tuple[Any, str]:
    """libtpu.sdk's monitoring module, or None with a note when it is there but unusable."""
    try:
        sdk = importlib.import_module("libtpu.sdk")
    except ModuleNotFoundError as error:
        if error.name in ("libtpu", "libtpu.sdk"):
            return None, ""
        return None, f"libtpu's SDK could not be loaded: {error}"
    except Exception as error:  # noqa: BLE001 - a broken libtpu must not cost the gRPC path
        return None, f"libtpu's SDK could not be loaded: {error}"
    monitoring = getattr(sdk, "tpumonitoring", None) or getattr(sdk, "monitoring", None)
    if monitoring is None or not callable(getattr(monitoring, "get_metric", None)):
        return None, "this libtpu's SDK has no tpumonitoring module: only the gRPC service is read"
    return monitoring, ""
