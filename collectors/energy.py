"""Energy since leet started, per device: from the device's own energy counter where it has one, else its power integrated.

Collectors that know a device's energy put it in their extras as
``"energy.<collector>"``: a tuple of ``DeviceEnergy``, plain frozen data
that crosses to the UI thread as it is. Nothing here is a W&B key: W&B
records a GPU's counter (``gpu.N.energyJoules``, since its driver loaded),
not energy since a monitor started.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ENERGY_PREFIX = "energy."


@dataclass(frozen=True)
class DeviceEnergy:
    """One device's energy since leet started."""

    kind: str  # "gpu", or "cpu" for a CPU package
    index: int  # the GPU's index, or the package's number
    joules: float
    integrated: bool = False  # worked out from power samples: the device has no energy counter
    label: str = ""  # how the device is known where its index is not its name, e.g. "0-die-1" for a package's second die


@dataclass
class _Track:
    joules: float = 0.0
    counted: bool = False  # the device's counter has answered: power samples are not integrated
    counter: float | None = None  # the counter's last reading
    power: tuple[float, float] | None = None  # (seconds, watts) of the last power sample


class EnergyMeter:
    """Energy since the first reading of each device of one kind, read once per sweep with ``observe``."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._tracks: dict[int, _Track] = {}

    def observe(self, index: int, now: float, counter_joules: float | None, watts: float | None) -> None:
        """A sweep's counter reading (joules since any fixed moment) and power; either may be None.

        A counter that goes back (the driver reloaded, or the counter
        wrapped) counts on from its new value. Without a counter, power is
        integrated by the trapezoid rule between sweeps (``now`` in seconds
        on a clock that only goes forward).
        """
        track = self._tracks.setdefault(index, _Track())
        if counter_joules is not None and math.isfinite(counter_joules):
            last, track.counter, track.counted = track.counter, counter_joules, True
            if last is not None:
                track.joules += counter_joules - last if counter_joules >= last else counter_joules
            return
        if track.counted or watts is None or not math.isfinite(watts):
            return
        last_power, track.power = track.power, (now, watts)
        if last_power is not None and now > last_power[0]:
            track.joules += (watts + last_power[1]) / 2 * (now - last_power[0])

    def readings(self) -> tuple[DeviceEnergy, ...]:
        """Every device read so far, by index."""
        return tuple(
            DeviceEnergy(self.kind, index, track.joules, integrated=not track.counted)
            for index, track in sorted(self._tracks.items())
            if track.counted or track.power is not None
        )
