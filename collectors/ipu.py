"""Graphcore IPUs through Graphcore's ``gcipuinfo`` Python module: W&B's ``ipu.{id}.*`` keys.

Only W&B's old Python monitor ever collected these (until 0.21.0), and its
keys are kept as it wrote them: ``ipu.{id}.{field}``, where a value ending in
the unit of its kind of field (``temp`` C, ``clock`` MHz, ``power`` W,
``utilisation`` %, ``speed`` GT/s) loses the unit to the key:
``"120W"`` under ``ipu power`` becomes ``ipu.1.ipu power (W)`` = 120. Values
that are not numbers are left out. A device's first sample carries every
numeric field (its id, board index, process id …); later ones only the six
that change.

W&B reports only the IPUs attached to the watched process (``user process
id``); without a watched process leet reports every IPU on the machine.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from collectors.base import Collector, Probe
from collectors.gpu import AcceleratorInfo

# The fields W&B samples again after a device's first sample.
VARIABLE_FIELDS = frozenset(
    {
        "average board temp",
        "average die temp",
        "clock",
        "ipu power",
        "ipu utilisation",
        "ipu utilisation (session)",
    }
)
# (field name ending, unit its value ends with), in the order W&B tries them.
UNIT_SUFFIXES = (
    ("temp", "C"),
    ("clock", "MHz"),
    ("power", "W"),
    ("utilisation", "%"),
    ("utilisation (session)", "%"),
    ("speed", "GT/s"),
)


def parse_field(field: str, value: Any) -> tuple[str, float] | None:
    """``(key suffix, number)`` for one gcipuinfo field, W&B's way; None when it is not a number.

    Each (ending, unit) pair is tried in turn on the key and value as the
    previous pairs left them, as W&B does.
    """
    if not isinstance(value, str):
        return None
    for ending, unit in UNIT_SUFFIXES:
        if field.endswith(ending) and value.endswith(unit):
            value = value[: -len(unit)]
            field = f"{field} ({unit})"
    try:
        return field, float(value)
    except ValueError:
        return None


class IpuCollector(Collector):
    """W&B's ``ipu.{id}.*`` keys from ``gcipuinfo``, plus one line per IPU.

    ``pid`` is the watched process: only IPUs it holds are reported (None:
    every IPU).
    """

    name = "ipu"

    def __init__(self, pid: int | None = None) -> None:
        self.pid = pid if pid else None
        self._info: Any = None
        self._seen: set[Any] = set()  # device ids already sampled once
        self._keys: dict[str, set[str]] = {}  # per device id, the keys it has had
        self._extras: dict[str, Any] = {"accelerators.ipu": (), "notes.ipu": ()}

    def probe(self) -> Probe:
        if self._info is not None:
            return Probe.ok()
        try:
            module = importlib.import_module("gcipuinfo")
        except ImportError:
            return Probe.absent("gcipuinfo is not installed (it comes with Graphcore's Poplar SDK)")
        try:
            info = module.gcipuinfo()
            info.setUpdateMode(True)
            devices = list(info.getDevices())
        except Exception as exc:  # noqa: BLE001 - a vendor library may raise anything
            return Probe.absent(f"gcipuinfo failed: {exc}")
        if not devices:
            return Probe.absent("gcipuinfo found no IPU")
        self._info = info
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        if self._info is None:
            raise RuntimeError("gcipuinfo is not open")
        values: dict[str, float] = {}
        watched = []
        for device in self._info.getDevices():
            fields = dict(device)
            if not self._watched(fields):
                continue
            device_id = fields.get("id")
            watched.append(fields)
            values.update(self._device_values(device_id, fields))
        self._extras = {"accelerators.ipu": self._lines(watched), "notes.ipu": self._notes(watched)}
        return values

    def extras(self) -> Mapping[str, Any]:
        return self._extras

    def close(self) -> None:
        self._info = None

    # -- one device ----------------------------------------------------------------

    def _watched(self, fields: Mapping[str, Any]) -> bool:
        if self.pid is None:
            return True
        owner = fields.get("user process id")
        try:
            return owner is not None and int(owner) == self.pid
        except (TypeError, ValueError):
            return False

    def _device_values(self, device_id: Any, fields: Mapping[str, Any]) -> dict[str, float]:
        first = device_id not in self._seen
        if device_id is not None:
            self._seen.add(device_id)
        values = {}
        for field, raw in fields.items():
            if not (first or field in VARIABLE_FIELDS):
                continue
            parsed = parse_field(str(field), raw)
            if parsed is not None:
                suffix, number = parsed
                values[f"ipu.{device_id}.{suffix}"] = number
        self._keys.setdefault(str(device_id), set()).update(values)
        return values

    # -- extras ---------------------------------------------------------------------------

    def _lines(self, watched: list[dict[str, Any]]) -> tuple[AcceleratorInfo, ...]:
        lines = []
        for fields in watched:
            index = _index(fields.get("id"))
            if index is None:
                continue
            keys = self._keys.get(str(fields.get("id")), set())
            prefix = f"ipu.{fields.get('id')}."
            board = fields.get("board type")
            lines.append(
                AcceleratorInfo(
                    vendor="Graphcore",
                    index=index,
                    name=f"{board} IPU" if isinstance(board, str) and board else "IPU",
                    utilization_key=_named(keys, prefix + "ipu utilisation (%)"),
                    temp_key=_named(keys, prefix + "average die temp (C)") or _named(keys, prefix + "average board temp (C)"),
                    power_key=_named(keys, prefix + "ipu power (W)"),
                )
            )
        return tuple(sorted(lines, key=lambda line: line.index))

    def _notes(self, watched: list[dict[str, Any]]) -> tuple[str, ...]:
        if self.pid is not None and not watched:
            return (f"no IPU is attached to process {self.pid}",)
        return ()


def _named(keys: set[str], key: str) -> str:
    return key if key in keys else ""


def _index(device_id: Any) -> int | None:
    try:
        return int(device_id)
    except (TypeError, ValueError):
        return None
