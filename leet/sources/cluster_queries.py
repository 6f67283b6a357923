"""The PromQL ``leet cluster`` sends, and how its answers become W&B keys on nodes.

Pure: text in, text and records out; no I/O.

Three kinds of scrape target are read (``leet.model.cluster``):

* ``leet serve`` (``LEET_SERVE``): every series named ``leet_…`` with a
  ``wandb_key`` label, under that key (``gpu.0.gpu``, ``memory_percent``,
  ``network.recvBps``…); the metric names are never looked at. Values go
  back to W&B's units (leet serve exports MiB as bytes, MHz as hertz;
  ``leet.export.names.wandb_value`` undoes it). A key keeps the meaning the
  catalog gives it: a cumulative series (``network.recv``, bytes so far)
  stays cumulative, and leet serve's own rate keys (``network.recvBps``)
  are the rates. Besides, the mean of its per-core ``cpu.N.cpu_percent`` is
  ``cpu.percent`` (host CPU, one line per node). ``leet_host_info{hostname,
  node}`` names its host.
* node_exporter (``NODE_EXPORTER``), through ``rate()`` over
  ``RATE_WINDOW_MIN`` (60 s) or four intervals, whichever is longer:
  ``cpu.percent`` (host CPU busy, iowait counted idle as top does, mean over
  CPUs), ``memory_percent`` (1 − MemAvailable/MemTotal, W&B's formula),
  ``memory.used`` (bytes), ``disk./.usagePercent`` (used/(used+avail), the
  ``df`` figure W&B uses) and ``disk./.usageGB`` of the root file system,
  ``disk.DEV.readBps``/``writeBps`` per disk, and
  ``network.recvBps``/``sentBps`` summed over the real interfaces (loopback,
  container and bridge interfaces left out). ``node_uname_info{nodename}``
  names its host.
* DCGM-exporter (``DCGM_EXPORTER``): ``collectors.dcgm``'s field table and
  GPU-index rule (``gpu`` label, else ``device`` less ``nvidia``), keys
  ``gpu.{i}.{name}``, plus ``gpu.{i}.memoryAllocated`` = used/(used+free)
  framebuffer in percent. Unlike W&B's own DCGM path, values are put in the
  units the catalog charts those keys in: ``DCGM_FI_PROF_*`` activity ratios
  (0-1) become percent, PCIe/NVLink bytes per second become MiB/s. The
  ``Hostname`` (or ``hostname``) label names its host.

Every series is also tagged with its target, ``(job, instance)``; Prometheus's
``up`` per target (and the time of its last good scrape) tells which targets
answer. A target counts once a series of one of the three kinds came from it,
or, though no series proves its kind, when it is down in a job with such
targets, or in a job whose every target is down (``Naming.adopt``).

Node names, by ``--node-label`` (``Naming``):

* ``instance`` (default): the target's ``instance`` label less its port, for
  every kind, so node_exporter ``:9100``, DCGM-exporter ``:9400`` and
  leet serve ``:9464`` on one host are one node. One leet serve per instance:
  a page holding several ``node`` values would put them on one node.
* ``hostname``: the host's own name: ``node_uname_info``'s ``nodename``
  (node_exporter), ``leet_host_info``'s ``hostname`` (leet serve), the
  series' ``Hostname``/``hostname`` label (DCGM-exporter), joined to every
  series of the same target; a target whose host name was never seen falls
  back to its instance less the port.
* ``node``: the series' ``node`` label (leet serve always has one; other
  exporters have one where the scrape config adds it), else the ``node``
  label seen on another series of the same target, else the instance less
  the port.

One live batch is ONE instant query: every expression below, each tagged
with a ``leet_part`` label by ``label_replace``, joined with ``or`` (the tag
keeps ``or`` from dropping a series whose other labels match one already
taken). The history is the same expressions over a range, the parts of a
series per GPU each in a range query of its own (``ranged_batches``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

from collectors.dcgm import DCGM_FIELDS, gpu_index
from leet.export.names import wandb_value
from leet.model.cluster import DCGM_EXPORTER, LEET_SERVE, NODE_EXPORTER
from leet.model.keys import LABEL_SEPARATOR

NODE_LABELS = ("instance", "hostname", "node")
PART_LABEL = "leet_part"
DCGM_FIELD_LABEL = "dcgm_field"  # the field's name, kept where a function drops __name__
RATE_WINDOW_MIN = 60.0  # seconds; a rate needs two scrapes in its window
MARKER_WINDOW_MIN = 300.0
LATEST_EVALUATIONS = 240  # at most, per part, when --once looks back for a down target's last values
MARKER_WINDOW_MAX = 3600.0
MAX_POINTS = 11_000  # Prometheus refuses a range query of more points per series
HOST_CPU_KEY = "cpu.percent"
ALONE_IN_RANGE = ("dcgm", "dcgm_mem")  # parts of a series per GPU: the history asks each in a range query of its own
MIB = float(1 << 20)

# What a part's answers are.
VALUE = "value"  # a W&B key's value on a node
UP = "up"  # Prometheus's up for a target
SCRAPED = "scraped"  # the time of a target's last good scrape
DOWN_SINCE = "down_since"  # a target down now: its last good scrape in the window, else its first scrape there
MARKER = "marker"  # a target of a known kind, and its host's name

# Interfaces that carry no traffic of the host's own (loopback, containers, bridges, tunnels).
VIRTUAL_INTERFACES = "lo|veth.*|docker.*|br-.*|virbr.*|cali.*|flannel.*|cni.*|vxlan.*|tun.*|tap.*|kube-.*|cilium.*|lxc.*|genev_sys.*|ovs-system"
# Disks whose traffic is another disk's (device mapper, RAID) or no disk's.
VIRTUAL_DISKS = "dm-.*|md.*|loop.*|ram.*|zram.*|sr.*|fd.*"

# DCGM-exporter's units to the catalog's: activity ratios to percent, bytes/s to MiB/s.
DCGM_SCALE: Mapping[str, float] = {
    **{name: 100.0 for name in DCGM_FIELDS if name.startswith("DCGM_FI_PROF_") and name.endswith("_ACTIVE")},
    "DCGM_FI_PROF_SM_OCCUPANCY": 100.0,
    **{name: 1 / MIB for name in DCGM_FIELDS if name.endswith("_BYTES")},
}

Target = tuple[str, str]  # (job, instance)
KeyRule = Callable[[Mapping[str, str]], "tuple[str, float] | None"]


# -- the user's selector -----------------------------------------------------------

_MATCHER = re.compile(
    r"""\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`)\s*(?:,|$)"""
)


def parse_selector(text: str | None) -> str:
    """``{job="gpu", cluster=~"a.*"}`` (braces optional) as matchers to add to every selector: ``job="gpu",cluster=~"a.*"``.

    "" for none. ValueError, one line, for anything else: a metric name in
    front, a matcher that does not parse, a ``__name__`` matcher (each
    expression names its own metrics), or a regular expression that does
    not compile.
    """
    body = (text or "").strip()
    if not body:
        return ""
    if body.startswith("{"):
        if not body.endswith("}"):
            raise ValueError(f"--selector {text!r}: the closing '}}' is missing")
        body = body[1:-1].strip()
    elif "{" in body:
        raise ValueError(f"--selector {text!r}: give only label matchers, like {{job=\"gpu\"}}, without a metric name")
    matchers: list[str] = []
    position = 0
    while position < len(body):
        found = _MATCHER.match(body, position)
        if found is None:
            raise ValueError(
                f"--selector {text!r}: cannot read the matcher at {body[position:position + 30]!r}; "
                "expected label=\"value\" (also !=, =~, !~), separated by commas"
            )
        name, op, quoted = found.groups()
        if name == "__name__":
            raise ValueError(f"--selector {text!r}: a metric name matcher cannot be added to leet's queries; select targets by label, like {{job=\"gpu\"}}")
        if op in ("=~", "!~"):
            _check_regex(quoted, text)
        matchers.append(f"{name}{op}{quoted}")
        position = found.end()
    return ",".join(matchers)


def _check_regex(quoted: str, text: str | None) -> None:
    if quoted.startswith('"'):
        try:
            pattern = json.loads(quoted)
        except ValueError:
            return  # an escape JSON lacks (Go's \x…): Prometheus judges it
    else:
        pattern = quoted[1:-1]
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"--selector {text!r}: {quoted} is not a valid regular expression ({exc})") from None


# -- the expressions -----------------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One tagged expression of the batch, and how its answers read."""

    name: str  # its leet_part tag
    kind: str  # the target kind its series prove ("" for up and scrape times)
    role: str  # VALUE, UP, SCRAPED or MARKER
    expr: str
    key: KeyRule | None = None  # VALUE parts: labels -> (W&B key, scale), None to skip


def _fixed(key: str) -> KeyRule:
    return lambda labels: (key, 1.0)


def _labelled(template: str, label: str) -> KeyRule:
    def key(labels: Mapping[str, str]) -> tuple[str, float] | None:
        value = labels.get(label, "")
        return (template.format(value), 1.0) if value else None

    return key


def _leet_key(labels: Mapping[str, str]) -> tuple[str, float] | None:
    key = labels.get("wandb_key", "")
    # The label holds a bare W&B key; one that carries a node label of its own is not one.
    if not key or LABEL_SEPARATOR in key:
        return None
    # leet serve exports in base units (MiB as bytes, MHz as hertz); the store keeps W&B's.
    return key, wandb_value(key, 1.0)


def _dcgm_key(labels: Mapping[str, str]) -> tuple[str, float] | None:
    field_name = labels.get("__name__") or labels.get(DCGM_FIELD_LABEL, "")
    name = DCGM_FIELDS.get(field_name)
    index = gpu_index(labels)
    if name is None or not index:
        return None
    return f"gpu.{index}.{name}", DCGM_SCALE.get(field_name, 1.0)


def _dcgm_memory_key(labels: Mapping[str, str]) -> tuple[str, float] | None:
    index = gpu_index(labels)
    return (f"gpu.{index}.memoryAllocated", 1.0) if index else None


def seconds(value: float) -> str:
    """A PromQL duration in whole seconds."""
    return f"{max(1, int(math.ceil(value)))}s"


@dataclass(frozen=True)
class QueryPlan:
    """The batch for one selector and naming rule."""

    selector: str = ""  # parse_selector's output
    node_label: str = "instance"

    def __post_init__(self) -> None:
        if self.node_label not in NODE_LABELS:
            raise ValueError(f"--node-label must be one of {', '.join(NODE_LABELS)}, got {self.node_label!r}")

    def only_instances(self, instances: Iterable[str]) -> QueryPlan:
        """This plan with every selector narrowed to these ``instance`` values (``--once``'s look back at the targets down)."""
        matcher = f'instance=~"{promql_string(instances_regex(instances))}"'
        return replace(self, selector=f"{self.selector},{matcher}" if self.selector else matcher)

    def v(self, name: str, *own: str) -> str:
        """A vector selector: ``name{own matchers, the user's matchers}``."""
        matchers = [*own, self.selector] if self.selector else list(own)
        return f"{name}{{{','.join(matchers)}}}"

    def parts(self, rate_window: float, marker_window: float | None, last: tuple[float, float] | None = None) -> tuple[Part, ...]:
        """Every expression; ``marker_window`` None (a range query) reads the info series as they are.

        With ``last`` (window, resolution), a value a target no longer gives
        (it is down) is its newest within the window: straight from the
        samples for leet serve's series, through a subquery evaluated every
        ``resolution`` seconds for computed ones. The others are as they are
        now (``or`` matches label sets without the metric name).
        """
        v, w = self.v, seconds(rate_window)
        by = "job, instance, node"

        def newest(selector: str) -> str:
            return selector if last is None else f"last_over_time({selector}[{seconds(last[0])}])"

        def computed(expr: str) -> str:
            if last is None:
                return expr
            return f"({expr}) or last_over_time(({expr})[{seconds(last[0])}:{seconds(last[1])}])"

        def marker(expr: str) -> str:
            return expr if marker_window is None else f"last_over_time({expr}[{seconds(marker_window)}])"

        def rate(name: str, *own: str) -> str:
            return f"rate({v(name, *own)}[{w}])"

        leet = v("", '__name__=~"leet_.+"', 'wandb_key!=""')
        good_scrape = f"timestamp({v('up')}) and on (job, instance) ({v('up')} == 1)"
        leet_cores = v("", '__name__=~"leet_.+"', r'wandb_key=~"cpu\\.[0-9]+\\.cpu_percent"')
        dcgm = v("", '__name__=~"' + "|".join(DCGM_FIELDS) + '"')
        fb_used, fb_free = v("DCGM_FI_DEV_FB_USED"), v("DCGM_FI_DEV_FB_FREE")
        root = 'mountpoint="/"'
        size, free, avail = (v(f"node_filesystem_{x}_bytes", root) for x in ("size", "free", "avail"))
        mem_avail, mem_total = v("node_memory_MemAvailable_bytes"), v("node_memory_MemTotal_bytes")
        real_if = f'device!~"{VIRTUAL_INTERFACES}"'
        real_disk = f'device!~"{VIRTUAL_DISKS}"'
        cpu_idle = rate("node_cpu_seconds_total", 'mode=~"idle|iowait"')
        parts: tuple[Part, ...] = (
            Part("leet", LEET_SERVE, VALUE, newest(leet), _leet_key),
            Part("leet_cpu", LEET_SERVE, VALUE, f"avg by ({by}) ({newest(leet_cores)})", _fixed(HOST_CPU_KEY)),
            Part("leet_host", LEET_SERVE, MARKER, marker(v("leet_host_info"))),
            Part(
                "node_cpu", NODE_EXPORTER, VALUE,
                f"100 * (1 - avg by ({by}) (sum by ({by}, cpu) ({cpu_idle})))",
                _fixed(HOST_CPU_KEY),
            ),
            Part("node_mem", NODE_EXPORTER, VALUE, f"100 * (1 - {mem_avail} / {mem_total})", _fixed("memory_percent")),
            Part("node_mem_used", NODE_EXPORTER, VALUE, f"{mem_total} - {mem_avail}", _fixed("memory.used")),
            Part(
                "node_disk_pct", NODE_EXPORTER, VALUE,
                f"max by ({by}, mountpoint) (100 * ({size} - {free}) / ({size} - {free} + {avail}))",
                _labelled("disk.{}.usagePercent", "mountpoint"),
            ),
            Part(
                "node_disk_gb", NODE_EXPORTER, VALUE,
                f"max by ({by}, mountpoint) (({size} - {free}) / {1 << 30})",
                _labelled("disk.{}.usageGB", "mountpoint"),
            ),
            Part("node_read", NODE_EXPORTER, VALUE, f"sum by ({by}, device) ({rate('node_disk_read_bytes_total', real_disk)})",
                 _labelled("disk.{}.readBps", "device")),
            Part("node_write", NODE_EXPORTER, VALUE, f"sum by ({by}, device) ({rate('node_disk_written_bytes_total', real_disk)})",
                 _labelled("disk.{}.writeBps", "device")),
            Part("node_rx", NODE_EXPORTER, VALUE, f"sum by ({by}) ({rate('node_network_receive_bytes_total', real_if)})",
                 _fixed("network.recvBps")),
            Part("node_tx", NODE_EXPORTER, VALUE, f"sum by ({by}) ({rate('node_network_transmit_bytes_total', real_if)})",
                 _fixed("network.sentBps")),
            Part("node_host", NODE_EXPORTER, MARKER, marker(v("node_uname_info"))),
            Part(
                "dcgm_host", DCGM_EXPORTER, MARKER,
                f"count by ({by}, Hostname, hostname) ({marker(v('DCGM_FI_DEV_GPU_TEMP'))})",
            ),
            Part("up", "", UP, v("up")),
            Part("scraped", "", SCRAPED, good_scrape),
            # The biggest parts (a series per GPU and field) last: each ``or`` goes over every series to its
            # left, so a big part early is gone over again by every ``or`` after it. Each part has its own
            # leet_part label, so the order changes the cost, never the answer. The metric name stays on the
            # series (label_replace keeps it); only --once's look back (last_over_time) drops it, so there
            # the field's name is copied to a label of its own first.
            Part("dcgm", DCGM_EXPORTER, VALUE, dcgm if last is None else f'label_replace({dcgm}, "{DCGM_FIELD_LABEL}", "$1", "__name__", "(.+)")',
                 _dcgm_key),
            Part("dcgm_mem", DCGM_EXPORTER, VALUE, f"100 * {fb_used} / ({fb_used} + {fb_free})", _dcgm_memory_key),
        )
        if last is not None:  # one answer and no history: the up series' own past says since when a target is down
            window = f"[{seconds(last[0])}:{seconds(last[1])}]"
            since = f"(max_over_time(({good_scrape}){window}) or min_over_time(timestamp({v('up')}){window}))"
            parts += (Part("down_since", "", DOWN_SINCE, f"{since} and on (job, instance) ({v('up')} == 0)"),)
        return tuple(
            replace(part, expr=computed(part.expr)) if part.role == VALUE and part.kind != LEET_SERVE else part for part in parts
        )

    def batch(self, rate_window: float, marker_window: float | None, last: tuple[float, float] | None = None) -> str:
        return join_parts(self.parts(rate_window, marker_window, last))

    def latest_parts(self, interval: float, range_s: float) -> tuple[Part, ...]:
        """The parts of ``latest``."""
        window = marker_window(range_s)
        return self.parts(rate_window(interval), window, last=(window, max(interval, window / LATEST_EVALUATIONS)))

    def latest(self, interval: float, range_s: float) -> str:
        """One instant query in which a target that is down still gives its last values, and since when it is down (``leet cluster --once``)."""
        return join_parts(self.latest_parts(interval, range_s))

    def instant(self, interval: float, range_s: float) -> str:
        """The live batch: one instant query."""
        return self.batch(rate_window(interval), marker_window(range_s))

    def ranged(self, interval: float, step: float) -> str:
        """Every part as one range query at ``step``."""
        return self.batch(rate_window(interval, step), None)

    def ranged_batches(self, interval: float, step: float) -> tuple[tuple[str, tuple[Part, ...]], ...]:
        """The history as range queries at ``step``, each with its parts: the small parts joined, each of the biggest alone.

        Over a range, ``or`` between two big parts costs Prometheus several
        times what the two cost apart (256 nodes of 8 GPUs: 8 s joined, 2.4 s
        apart), so they are asked apart.
        """
        parts = self.parts(rate_window(interval, step), None)
        small = tuple(part for part in parts if part.name not in ALONE_IN_RANGE)
        groups = (small, *((part,) for part in parts if part.name in ALONE_IN_RANGE))
        return tuple((join_parts(group), group) for group in groups if group)


def instances_regex(instances: Iterable[str]) -> str:
    """A regular expression matching exactly these names: ASCII punctuation escaped, control characters as ``\\x{..}``."""
    return "|".join(sorted({"".join(_regex_char(ch) for ch in name) for name in instances}))


def _regex_char(ch: str) -> str:
    if ch.isalnum() or ch == "_" or ord(ch) > 127:
        return ch
    if ch.isprintable() and ch != " ":
        return "\\" + ch
    return f"\\x{{{ord(ch):x}}}"


def promql_string(text: str) -> str:
    """``text`` as the inside of a double-quoted PromQL string."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def join_parts(parts: Iterable[Part]) -> str:
    return " or ".join(f'label_replace({part.expr}, "{PART_LABEL}", "{part.name}", "__name__", ".*")' for part in parts)


def rate_window(interval: float, step: float = 0.0) -> float:
    """Seconds a rate looks back: two scrapes at least, and no gap between history steps."""
    return float(math.ceil(max(RATE_WINDOW_MIN, 4 * interval, 2 * step)))


def marker_window(range_s: float) -> float:
    """How far back a target's kind and host name are looked for: the range, from 5 minutes to an hour."""
    return min(max(range_s, MARKER_WINDOW_MIN), MARKER_WINDOW_MAX)


def history_step(range_s: float, width: int, interval: float) -> float:
    """Whole seconds between history points: one a chart cell, never closer than the interval.

    One a cell, not one a braille dot column (two a cell): the line drawn between
    points fills the other column, and Prometheus answers the history in half
    the time with half the JSON (the first full screen waits for it). Live
    points come at the interval.
    """
    step = max(interval, range_s / max(int(width), 1), range_s / MAX_POINTS, 1.0)
    return float(math.ceil(step))


# -- the answers -----------------------------------------------------------------------


class Reading(NamedTuple):
    """One series of an answer: whose it is, what it means, its points (a tuple: tens of thousands are made a round)."""

    role: str
    kind: str
    target: Target
    key: str  # VALUE: the W&B key; "" otherwise
    node: str  # the series' own node label
    hostname: str  # the host name the series carries
    times: tuple[float, ...]
    values: tuple[float, ...]


@dataclass
class Decoded:
    readings: list[Reading] = field(default_factory=list)
    skipped: int = 0  # series that could not be placed: no instance, no key


def decode(result: Sequence[Any], parts: Sequence[Part]) -> Decoded:
    """An answer's ``result`` (a vector or a matrix) as readings; what cannot be read is counted, never raised."""
    by_name = {part.name: part for part in parts}
    decoded = Decoded()
    for entry in result:
        reading = _reading(entry, by_name)
        if reading is None:
            decoded.skipped += 1
        else:
            decoded.readings.append(reading)
    return decoded


def _reading(entry: Any, parts: Mapping[str, Part]) -> Reading | None:
    # Answers are parsed JSON: plain dicts, read as they are (tens of thousands a round).
    labels = entry.get("metric") if type(entry) is dict else None
    if type(labels) is not dict:
        return None
    try:
        part = parts.get(labels.get(PART_LABEL, ""))
        instance = labels.get("instance", "")
        if part is None or not instance:
            return None
        key, scale = "", 1.0
        if part.role == VALUE:
            found = part.key(labels) if part.key is not None else None
            if found is None:
                return None
            key, scale = found
        points = _points(entry, scale)
        if points is None:
            return None
        hostname = labels.get("nodename") or labels.get("Hostname") or labels.get("hostname") or ""
        target = (str(labels.get("job", "")), str(instance))
        return Reading(part.role, part.kind, target, str(key), str(labels.get("node", "")), str(hostname), *points)
    except (TypeError, ValueError):  # a label that is no text: not Prometheus's answer
        return None


def _points(entry: Mapping[str, Any], scale: float) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    if "values" not in entry:  # an instant answer's one point
        point = entry.get("value")
        try:
            t, v = float(point[0]), float(point[1]) * scale  # type: ignore[index]
        except (TypeError, ValueError, IndexError, KeyError):
            return None
        return ((t,), (v,)) if math.isfinite(t) else None
    raw = entry.get("values")
    if not isinstance(raw, list):
        return None
    times: list[float] = []
    values: list[float] = []
    for point in raw:
        try:
            t, v = float(point[0]), float(point[1]) * scale
        except (TypeError, ValueError, IndexError, KeyError):
            continue
        if math.isfinite(t):
            times.append(t)
            values.append(v)
    return (tuple(times), tuple(values)) if times else None


# -- node names --------------------------------------------------------------------------


@lru_cache(maxsize=1 << 16)
def strip_port(instance: str) -> str:
    """``host:9100`` → ``host``, ``[::1]:9100`` → ``::1``; anything else as it is."""
    host, colon, port = instance.rpartition(":")
    if colon and port.isdigit() and host:
        return host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return instance


class Naming:
    """What leet has learnt of each target (its kinds, host name, node label) and the node names that follow."""

    def __init__(self, mode: str = "instance") -> None:
        if mode not in NODE_LABELS:
            raise ValueError(f"--node-label must be one of {', '.join(NODE_LABELS)}, got {mode!r}")
        self.mode = mode
        self.kinds: dict[Target, set[str]] = {}
        self.hostnames: dict[Target, str] = {}
        self.node_labels: dict[Target, str] = {}

    def learn(self, readings: Iterable[Reading]) -> None:
        for reading in readings:
            target = reading.target
            if reading.kind:
                self.kinds.setdefault(target, set()).add(reading.kind)
            if reading.hostname:
                self.hostnames[target] = reading.hostname
            if reading.node:
                self.node_labels[target] = reading.node

    def adopt(self, ups: Mapping[Target, bool]) -> None:
        """Of the targets with an ``up`` (``ups``: each one's latest), those that are nodes though no series proves their kind.

        A target down all along never answered with a series that proves its
        kind (the kind is left unknown), yet its node is one to list, as down:
        one in a job with targets of a known kind, and every target of a job
        whose targets are all down (a dead job may be the fleet's; leet cannot
        tell). Such a target of an unknown job that comes up and still proves
        no kind is not a node after all, and is dropped.
        """
        known_jobs = {job for (job, _), kinds in self.kinds.items() if kinds}
        dead_jobs = {job for job, _ in ups} - {job for (job, _), up in ups.items() if up}
        for target, up in ups.items():
            job = target[0]
            if job in known_jobs or job in dead_jobs:
                self.kinds.setdefault(target, set())
            elif up and not self.kinds.get(target, True):
                del self.kinds[target]

    def known(self, target: Target) -> bool:
        return target in self.kinds

    def targets(self) -> list[Target]:
        return list(self.kinds)

    def node_of(self, reading: Reading) -> str:
        if self.mode == "hostname" and reading.hostname:
            return reading.hostname
        if self.mode == "node" and reading.node:
            return reading.node
        return self.node_of_target(reading.target)

    def node_of_target(self, target: Target) -> str:
        if self.mode == "hostname" and self.hostnames.get(target):
            return self.hostnames[target]
        if self.mode == "node" and self.node_labels.get(target):
            return self.node_labels[target]
        return strip_port(target[1])
