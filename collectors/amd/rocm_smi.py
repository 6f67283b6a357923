"""``rocm-smi -a --json``, the tool W&B runs: one run gives every card, and no process can be placed on a GPU."""

from __future__ import annotations

import re
from typing import Any, Mapping

from collectors.amd.fields import number, put, reported_name, reported_text
from collectors.amd.source import DEFAULT_NAME, AmdSourceError, Card, Listed
from collectors.amd.tool import Tool

# (key, rocm-smi field names, oldest ROCm first); the first that parses wins.
_ROCM_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpu", ("GPU use (%)",)),
    ("memoryAllocated", ("GPU memory use (%)", "GPU Memory Allocated (VRAM%)")),
    ("memoryReadWriteActivity", ("GPU Memory Read/Write Activity (%)",)),
    ("memoryOverDrive", ("GPU Memory OverDrive value (%)",)),
    ("temp", ("Temperature (Sensor memory) (C)",)),
    ("powerWatts", ("Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)")),
    ("memoryAllocatedBytes", ("VRAM Total Used Memory (B)",)),
    ("graphicsClock", ("sclk clock speed:",)),
    ("memoryClock", ("mclk clock speed:",)),
    ("fanSpeed", ("Fan speed (%)",)),
)
_ROCM_NAMES = ("Device Name", "Card Series", "Card series", "Card Model", "Card model")


class RocmSmi:
    """``rocm-smi -a --json``: one run gives every card."""

    label = "rocm-smi"

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def indices(self) -> set[int]:
        return {card.index for card in self.read()}

    def read(self) -> list[Card]:
        return parse_rocm_smi(self.tool.json("-a", "--json"))

    def processes(self) -> list[Listed]:
        return []  # --showpids names no GPU

    def notes(self) -> tuple[str, ...]:
        return ()

    def close(self) -> None:
        pass


def parse_rocm_smi(data: Any) -> list[Card]:
    """Cards from ``rocm-smi --json`` output: only ``card<N>`` entries are GPUs, N is the index."""
    if not isinstance(data, Mapping):
        raise AmdSourceError(f"rocm-smi printed a JSON {type(data).__name__}, expected an object")
    cards = []
    for key, fields in data.items():
        found = re.fullmatch(r"card(\d+)", str(key))
        if found and isinstance(fields, Mapping):
            cards.append(_rocm_card(int(found.group(1)), fields))
    return sorted(cards, key=lambda card: card.index)


def _rocm_card(index: int, fields: Mapping[str, Any]) -> Card:
    card = Card(index)
    for key, names in _ROCM_FIELDS:
        for name in names:
            value = number(fields.get(name))
            if value is not None:
                card.values[key] = value
                card.memory_is_activity = card.memory_is_activity or name == "GPU memory use (%)"
                break
    energy = number(fields.get("Accumulated Energy (uJ)"))
    put(card.values, "energyJoules", None if energy is None else energy / 1e6)
    total = number(fields.get("VRAM Total Memory (B)"))
    card.memory_total = int(total) if total else None
    card.power_limit = number(fields.get("Max Graphics Package Power (W)"))
    card.name = next((reported_name(fields.get(name)) for name in _ROCM_NAMES if reported_name(fields.get(name))), "")
    if not card.name:
        device = fields.get("Device ID") or fields.get("GPU ID")
        card.name = f"{DEFAULT_NAME} {device}" if isinstance(device, str) and device else DEFAULT_NAME
    card.uuid = reported_text(fields.get("Unique ID"))
    return card
