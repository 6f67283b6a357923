"""Network traffic of the host's real interfaces, and TCP retransmissions.

Loopback interfaces and interfaces enslaved to a bond or bridge are left
out: the first is not network traffic, the second would count the same
bytes twice (once on the port, once on the master).
"""

from __future__ import annotations

import os
import time
from typing import Mapping

from collectors.base import Collector, Probe
from collectors.procfs import read_text, under_root

IFF_LOOPBACK = 0x8


def parse_net_dev(text: str) -> dict[str, tuple[int, int]]:
    """``/proc/net/dev`` as ``{interface: (received bytes, sent bytes)}``."""
    interfaces = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        if not sep:
            continue
        fields = rest.split()
        if len(fields) < 16:
            continue
        try:
            interfaces[name.strip()] = (int(fields[0]), int(fields[8]))
        except ValueError:
            continue
    return interfaces


def parse_retransmits(snmp_text: str) -> int | None:
    """``RetransSegs`` from the ``Tcp:`` header/value line pair of /proc/net/snmp."""
    tcp_lines = [line.split()[1:] for line in snmp_text.splitlines() if line.startswith("Tcp:")]
    if len(tcp_lines) < 2:
        return None
    header, values = tcp_lines[0], tcp_lines[1]
    if "RetransSegs" not in header:
        return None
    try:
        return int(values[header.index("RetransSegs")])
    except (IndexError, ValueError):
        return None


class NetworkCollector(Collector):
    """``network.sent/recv`` and ``network.tcpRetransmits`` since start; byte rates.

    Totals add up per-interface increases, so an interface that appears or
    vanishes never makes them jump or go back.
    """

    name = "network"

    def __init__(self, root: str = "/") -> None:
        self.root = root
        self._counted: dict[str, bool] = {}
        self._previous: dict[str, tuple[int, int]] = {}
        self._previous_at = 0.0
        self._recv_total = 0
        self._sent_total = 0
        self._retransmits_start: int | None = None

    def probe(self) -> Probe:
        interfaces = self._read_interfaces()
        if interfaces is None:
            return Probe.absent("/proc/net/dev is not readable")
        self._previous = interfaces
        self._previous_at = time.monotonic()
        self._retransmits_start = self._read_retransmits()
        return Probe.ok()

    def sample(self) -> Mapping[str, float]:
        interfaces = self._read_interfaces()
        if interfaces is None:
            raise RuntimeError("/proc/net/dev is not readable")
        now = time.monotonic()
        recv, sent = self._increase(interfaces)
        elapsed = now - self._previous_at
        self._previous, self._previous_at = interfaces, now
        self._recv_total += recv
        self._sent_total += sent
        values = {
            "network.recv": float(self._recv_total),
            "network.sent": float(self._sent_total),
        }
        if elapsed > 0:
            values["network.recvBps"] = recv / elapsed
            values["network.sentBps"] = sent / elapsed
        retransmits = self._read_retransmits()
        if retransmits is not None and self._retransmits_start is not None:
            values["network.tcpRetransmits"] = float(max(retransmits - self._retransmits_start, 0))
        return values

    def _increase(self, interfaces: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
        recv = sent = 0
        for name, (now_recv, now_sent) in interfaces.items():
            before = self._previous.get(name)
            if before is None:
                continue
            recv += max(now_recv - before[0], 0)
            sent += max(now_sent - before[1], 0)
        return recv, sent

    def _read_interfaces(self) -> dict[str, tuple[int, int]] | None:
        text = read_text(under_root(self.root, "/proc/net/dev"))
        if text is None:
            return None
        interfaces = parse_net_dev(text)
        if set(interfaces) != set(self._counted):
            self._counted = {name: self._is_counted(name) for name in interfaces}
        return {name: v for name, v in interfaces.items() if self._counted[name]}

    def _is_counted(self, interface: str) -> bool:
        if interface == "lo":
            return False
        sys_dir = under_root(self.root, f"/sys/class/net/{interface}")
        if os.path.exists(os.path.join(sys_dir, "master")):
            return False
        flags = read_text(os.path.join(sys_dir, "flags"))
        try:
            return not (flags and int(flags.strip(), 16) & IFF_LOOPBACK)
        except ValueError:
            return True

    def _read_retransmits(self) -> int | None:
        text = read_text(under_root(self.root, "/proc/net/snmp"))
        return parse_retransmits(text) if text else None
