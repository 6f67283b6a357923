"""``amd-smi``: ``metric --json`` each sweep, ``static --json`` for names and power caps, ``process --json`` for GPU processes."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from collectors.amd.fields import dig, first_field, in_bytes, in_joules, listed_process, number, put, reported_name
from collectors.amd.source import STATIC_REFRESH, AmdSourceError, Card, Listed
from collectors.amd.tool import Tool

PROCESS_REFRESH = 5.0  # amd-smi process --json is one more tool run: not every sweep


class AmdSmi:
    """``amd-smi metric --json`` each sweep; ``amd-smi static --json`` now and then."""

    label = "amd-smi"

    def __init__(self, tool: Tool, clock: Callable[[], float]) -> None:
        self.tool = tool
        self.clock = clock
        self.static: dict[int, Card] = {}
        self.static_due = 0.0
        self.static_problem = ""
        self.processes_due = 0.0
        self.processes_problem = ""

    def indices(self) -> set[int]:
        return {card.index for card in parse_amd_smi_metric(self.tool.json("metric", "--json"))}

    def read(self) -> list[Card]:
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

    def processes(self) -> list[Listed] | None:
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


def parse_amd_smi_metric(data: Any) -> list[Card]:
    return [_amd_smi_card(index, entry) for index, entry in _amd_smi_entries(data, "amd-smi metric")]


def _amd_smi_card(index: int, entry: Mapping[str, Any]) -> Card:
    card = Card(index)
    values = card.values
    put(values, "gpu", number(dig(entry, "usage", "gfx_activity")))
    put(values, "memoryReadWriteActivity", number(dig(entry, "usage", "umc_activity")))
    put(values, "temp", number(dig(entry, "temperature", "mem")))
    put(values, "powerWatts", number(dig(entry, "power", "socket_power")))
    put(values, "memoryAllocatedBytes", in_bytes(dig(entry, "mem_usage", "used_vram")))
    total = in_bytes(dig(entry, "mem_usage", "total_vram"))
    card.memory_total = int(total) if total else None
    clock = entry.get("clock")
    put(values, "graphicsClock", _clock(clock, "gfx_0", "gfx"))
    put(values, "memoryClock", _clock(clock, "mem_0", "mem"))
    put(values, "energyJoules", in_joules(dig(entry, "energy", "total_energy_consumption")))
    ecc = entry.get("ecc")
    put(values, "correctedMemoryErrors", number(first_field(ecc, "total_correctable_count", "correctable_count")))
    put(values, "uncorrectedMemoryErrors", number(first_field(ecc, "total_uncorrectable_count", "uncorrectable_count")))
    put(values, "fanSpeed", number(dig(entry, "fan", "usage")))
    return card


def _clock(clock: Any, *domains: str) -> float | None:
    """MHz of the first clock domain given: newer releases say ``gfx_0``/``clk``, older ``gfx``/``cur_clk``."""
    domain = first_field(clock, *domains)
    return number(first_field(domain, "clk", "cur_clk"))


def parse_amd_smi_static(data: Any) -> list[Card]:
    cards = []
    for index, entry in _amd_smi_entries(data, "amd-smi static"):
        card = Card(index)
        card.name = reported_name(dig(entry, "asic", "market_name")) or reported_name(dig(entry, "board", "product_name"))
        card.power_limit = number(dig(entry, "limit", "socket_power"))
        if card.power_limit is None:
            card.power_limit = number(dig(entry, "limit", "ppt0", "socket_power_limit"))
        total = in_bytes(dig(entry, "vram", "size"))
        card.memory_total = int(total) if total else None
        cards.append(card)
    return cards


def parse_amd_smi_process(data: Any) -> list[Listed]:
    """Processes from ``amd-smi process --json``, every layout seen so far.

    ROCm 6.2 on: ``[{"gpu": 0, "process_list": [{"process_info": {...}}, ...]}]``
    with ``{"value", "unit"}`` figures, and ``"process_info": "No running
    processes detected"`` when there are none. Before: one ``{"process_info":
    {...}}`` merged into the GPU's object, or a list of them under ``values``,
    with bare numbers.
    """
    listed = []
    for index, entry in _amd_smi_entries(data, "amd-smi process"):
        items = first_field(entry, "process_list", "values")
        if items is None and "process_info" in entry:
            items = [entry]
        if isinstance(items, Mapping):
            items = [items]
        if not isinstance(items, list):
            continue
        for item in items:
            info = item.get("process_info", item) if isinstance(item, Mapping) else None
            if isinstance(info, Mapping):
                found = listed_process(index, info)
                if found is not None:
                    listed.append(found)
    return listed
