"""Per-core CPU utilisation from ``/proc/stat`` and CPU temperature from hwmon.

The monitor's own start-up is kept out of the figures. The monitor starts
sampling while its UI is still importing and drawing its first frames, so
that the first reading is on screen with the first frame; that work keeps
one core busy for a fraction of a second, and counted in it the first
sample of an idle host reads 84 % on that core. A reading that leaves it
out is what the host was doing. Two ways were open:

* wait for start-up to end before taking the first baseline. The first
  reading then comes late, and whatever the UI does after "start-up"
  ends still lands in it;
* take this process's own CPU time over the interval (``/proc/self/stat``,
  the same clock ticks as ``/proc/stat``) out of the busy time. That is
  exact for the machine as a whole, at once, and needs no word from the UI.

So the second: for every sample whose interval began in the first
``startup`` seconds after ``probe()``, this process's ticks are taken out
of the busy ticks. Per core they come off the core each thread last ran on
(``/proc/self/task/*/stat`` field 39); ticks that cannot be placed there
(a thread that moved, or one that ended) come off the other cores in
proportion to what they have left, so the sum over cores is exact and no
core drops below idle. After start-up the monitor counts like any other
process, as top and htop count themselves.
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from collectors.base import Collector, Probe
from collectors.energy import DeviceEnergy
from collectors.procfs import read_bytes, read_text, under_root
from collectors.rapl import RaplReader

# Seconds after probe() during which this process's own CPU time is taken
# out of the figures: leet's imports, its first frames and first sweeps.
STARTUP_SECONDS = 5.0

# hwmon drivers whose temperatures are the CPU's (package, cores, dies).
CPU_SENSOR_DRIVERS = frozenset({"coretemp", "k10temp", "zenpower", "cpu_thermal", "cpu-thermal"})

# Below this a sensor reading is a missing or broken sensor, not a CPU.
MIN_PLAUSIBLE_CELSIUS = 1.0


def parse_per_core_times(text: str) -> dict[int, tuple[int, int]]:
    """``{core: (busy_ticks, total_ticks)}`` from the ``cpuN`` lines of /proc/stat.

    Total leaves out guest time (already inside user/nice); idle time
    includes iowait, as top and psutil count it.
    """
    cores = {}
    for line in text.splitlines():
        if not line.startswith("cpu") or line.startswith("cpu "):
            continue
        parts = line.split()
        try:
            core = int(parts[0][3:])
            ticks = [int(v) for v in parts[1:9]]
        except ValueError:
            continue
        ticks += [0] * (8 - len(ticks))
        total = sum(ticks)
        idle = ticks[3] + ticks[4]
        cores[core] = (total - idle, total)
    return cores


def busy_percent(before: tuple[int, int], after: tuple[int, int], own: float = 0.0) -> float:
    """Busy share of the core between two readings, ``own`` busy ticks left out."""
    busy = after[0] - before[0] - own
    total = after[1] - before[1]
    if total <= 0:
        return 0.0
    return min(max(busy / total * 100, 0.0), 100.0)


@dataclass(frozen=True)
class OwnTicks:
    """This process's CPU ticks (user + system): all of it, and per live thread with the core it last ran on."""

    total: int
    threads: Mapping[int, tuple[int, int]]  # tid → (ticks, core)


def parse_task_stat(text: str) -> tuple[int, int] | None:
    """(utime + stime, core last run on) from one ``/proc/<pid>[/task/<tid>]/stat`` line."""
    fields = text[text.rfind(")") + 2 :].split()
    if len(fields) < 37:
        return None
    try:
        return int(fields[11]) + int(fields[12]), int(fields[36])
    except ValueError:
        return None


def read_own_ticks(root: str = "/") -> OwnTicks | None:
    """This process's ticks from ``/proc/self``; None when they cannot be read."""
    whole = read_bytes(under_root(root, "/proc/self/stat"))
    parsed = parse_task_stat(whole.decode("utf-8", "replace")) if whole else None
    if parsed is None:
        return None
    tasks = under_root(root, "/proc/self/task")
    threads = {}
    try:
        names = os.listdir(tasks)
    except OSError:
        names = []
    for name in names:
        if not name.isdigit():
            continue
        data = read_bytes(os.path.join(tasks, name, "stat"))
        found = parse_task_stat(data.decode("utf-8", "replace")) if data else None
        if found is not None:
            threads[int(name)] = found
    return OwnTicks(parsed[0], threads)


def own_busy_ticks(before: OwnTicks, after: OwnTicks, busy: Mapping[int, int]) -> dict[int, float]:
    """How many of each core's ``busy`` ticks over the interval were this process's.

    A thread's ticks go to the core it last ran on, up to that core's busy
    ticks; the rest (threads that moved or ended) is shared among the cores
    in proportion to the busy ticks they have left. The sum is this
    process's ticks, or every busy tick when that is less.
    """
    own = {core: 0.0 for core in busy}
    placed = 0.0
    for tid, (ticks, core) in after.threads.items():
        spent = max(ticks - before.threads.get(tid, (0, 0))[0], 0)
        if core in own:
            take = min(spent, busy[core] - own[core])
            own[core] += take
            placed += take
    rest = max(after.total - before.total, 0) - placed
    left = {core: busy[core] - own[core] for core in busy}
    room = sum(left.values())
    if rest > 0 and room > 0:
        share = min(rest, room) / room
        for core, free in left.items():
            own[core] += free * share
    return own


def cpu_temperature_files(root: str = "/") -> list[str]:
    """The ``temp*_input`` files of CPU hwmon drivers (package and cores)."""
    files = []
    for hwmon in sorted(glob.glob(under_root(root, "/sys/class/hwmon/hwmon*"))):
        driver = (read_text(os.path.join(hwmon, "name")) or "").strip()
        if driver not in CPU_SENSOR_DRIVERS:
            continue
        inputs = glob.glob(os.path.join(hwmon, "temp*_input"))
        inputs = inputs or glob.glob(os.path.join(hwmon, "device", "temp*_input"))
        files.extend(sorted(inputs))
    return files


def mean_celsius(files: list[str]) -> float | None:
    """Mean of the readable sensors in °C (hwmon reports millidegrees)."""
    readings = []
    for path in files:
        text = read_text(path)
        try:
            celsius = int(text) / 1000 if text else None
        except ValueError:
            celsius = None
        if celsius is not None and celsius >= MIN_PLAUSIBLE_CELSIUS:
            readings.append(celsius)
    return sum(readings) / len(readings) if readings else None


class CpuCollector(Collector):
    """``cpu.{i}.cpu_percent`` for each logical core, and ``cpu.avg_temp``; the packages' energy as the extra ``energy.rapl``.

    Sensors are found once in ``probe`` (the costly directory scan);
    afterwards each sample reads only their few small files.
    """

    name = "cpu"

    def __init__(self, root: str = "/", startup: float = STARTUP_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.root = root
        self.startup = startup
        self._clock = clock
        self._previous: dict[int, tuple[int, int]] = {}
        self._sensor_files: list[str] = []
        self._own: OwnTicks | None = None  # this process's ticks at the last reading, while starting up
        self._startup_until = 0.0
        self._rapl = RaplReader(None if root == "/" else root)  # "/": wherever LEET_SYS_ROOT puts /sys
        self._energy: tuple[DeviceEnergy, ...] = ()

    def _read_times(self) -> dict[int, tuple[int, int]]:
        text = read_text(under_root(self.root, "/proc/stat"))
        return parse_per_core_times(text) if text else {}

    def probe(self) -> Probe:
        self._previous = self._read_times()
        if not self._previous:
            return Probe.absent("/proc/stat has no per-core CPU lines")
        self._own = read_own_ticks(self.root) if self.startup > 0 else None
        self._startup_until = self._clock() + self.startup
        self._sensor_files = cpu_temperature_files(self.root)
        self._rapl.probe()
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        current = self._read_times()
        if not current:
            raise RuntimeError("/proc/stat has no per-core CPU lines")
        own = self._own_ticks(current)
        values: dict[str, float] = {}
        for core, times in current.items():
            before = self._previous.get(core)
            if before is not None:
                values[f"cpu.{core}.cpu_percent"] = busy_percent(before, times, own.get(core, 0.0))
        self._previous = current
        temperature = mean_celsius(self._sensor_files) if self._sensor_files else None
        if temperature is not None:
            values["cpu.avg_temp"] = temperature
        self._energy = self._rapl.read()
        return values

    def extras(self) -> Mapping[str, Any]:
        return {"energy.rapl": self._energy} if self._energy else {}

    def _own_ticks(self, current: Mapping[int, tuple[int, int]]) -> dict[int, float]:
        """This process's busy ticks per core since the last reading, while it is starting up; else none.

        Read just after ``/proc/stat``, as at ``probe()``, so both readings
        cover the same interval.
        """
        if self._own is None:
            return {}
        after = read_own_ticks(self.root)
        before, self._own = self._own, after if self._clock() < self._startup_until else None
        if after is None:
            return {}
        busy = {core: max(times[0] - self._previous[core][0], 0) for core, times in current.items() if core in self._previous}
        return own_busy_ticks(before, after, busy)
