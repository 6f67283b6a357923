"""Crafted run files a buggy or hostile writer could leave: valid framing, bad values.

Each maker writes one file under a directory it is given and returns its path.
``CASES`` names them for table tests; the width bomb is sized by the caller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from framer import RunWriter

from leet.runfile import wandb_records_pb2 as pb

DEEP = 990
# Depths around every limit a reader may have: the decoding cap (32), Python's recursion limit
# (about 1000, less on a deep stack), and far past it.
DEPTHS = (30, 100, 989, 990, 1000, 5000, 100_000)
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)


def deep_list(depth: int = DEEP) -> str:
    return "[" * depth + "1" + "]" * depth


def deep_dict(depth: int = DEEP) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


def deep_mixed(depth: int) -> str:
    """Lists and objects in turn, a string with brackets at the bottom."""
    opens = "".join('{"k": ' if level % 2 else "[" for level in range(depth))
    closes = "".join("}" if level % 2 else "]" for level in reversed(range(depth)))
    return opens + '"[[{{"' + closes


def _deep_items() -> dict[str, str]:
    items = {}
    for depth in DEPTHS:
        items[f"list{depth}"] = deep_list(depth)
        items[f"dict{depth}"] = deep_dict(depth)
    items["mixed1000"] = deep_mixed(1000)
    items["unclosed"] = "[" * 5000  # not JSON at all
    items["brackets_in_text"] = '{"s": "' + "[{" * 2000 + '", "n": 1}'  # shallow: the brackets are text
    return items


def _normal(writer: RunWriter, steps: int = 5) -> RunWriter:
    for step in range(steps):
        writer.history(step, {"loss": 1.0 / (step + 1)})
    writer.stats(1_700_000_010.0, {"cpu": 12.5, "memory_percent": 40.0})
    return writer


def deep_summary(root: Path) -> Path:
    return _normal(RunWriter("deepsum")).summary(nest=deep_list(), obj=deep_dict()).exit().write(root / "run-deepsum.wandb")


def deep_config(root: Path) -> Path:
    return _normal(RunWriter("deepcfg")).config(nest=deep_dict(), arr=deep_list()).exit().write(root / "run-deepcfg.wandb")


def deep_history(root: Path) -> Path:
    writer = _normal(RunWriter("deephist"))
    writer.history(5, {"nest": deep_dict(), "arr": deep_list(), "loss": 0.1})
    return writer.exit().write(root / "run-deephist.wandb")


def deep_everywhere(root: Path) -> Path:
    """Every depth in config, summary and history at once."""
    items = _deep_items()
    writer = _normal(RunWriter("deepall")).config(**items).summary(**items)
    writer.history(5, {**{key: text for key, text in items.items() if key.startswith("dict")}, "loss": 0.1})
    return writer.exit().write(root / "run-deepall.wandb")


def far_future_start(root: Path) -> Path:
    return _normal(RunWriter("future", start_time=1e12)).exit().write(root / "run-future.wandb")


def far_past_start(root: Path) -> Path:
    return _normal(RunWriter("past", start_time=-1e12)).exit().write(root / "run-past.wandb")


def edge_start(root: Path) -> Path:
    """A start time of 2**62 seconds, summary times no calendar holds, a runtime past any float."""
    writer = _normal(RunWriter("edgestart", start_time=2.0**62))
    writer.summary(_runtime=10**400, _timestamp="NaN", start_time=1e12, end_time=-1e12, eval_timestamp="Infinity")
    return writer.exit().write(root / "run-edgestart.wandb")


def _stats_at(writer: RunWriter, seconds: int, nanos: int, values: dict[str, float]) -> None:
    """A stats record at a raw protobuf timestamp (a float cannot hold the int64 ends exactly)."""
    stats = pb.StatsRecord(item=[pb.StatsItem(key=key, value_json=repr(value)) for key, value in values.items()])
    stats.timestamp.seconds = seconds
    stats.timestamp.nanos = nanos
    writer.record(stats=stats)


def limit_stats_times(root: Path) -> Path:
    """Stats timestamps at the ends of int64 seconds, out of order."""
    writer = _normal(RunWriter("limitstats"))
    for index, seconds in enumerate((INT64_MAX, INT64_MIN, INT64_MAX - 1, 0, -1)):
        _stats_at(writer, seconds, 999_999_999, {"cpu": 10.0 + index, "memory_percent": 50.0})
    return writer.exit().write(root / "run-limitstats.wandb")


def huge_stats_times(root: Path) -> Path:
    writer = _normal(RunWriter("hugestats"))
    for index in range(3):
        writer.stats(2.0**62 + index, {"cpu": 10.0 + index, "gpu.0.gpu": 50.0})
    return writer.exit().write(root / "run-hugestats.wandb")


def negative_stats_times(root: Path) -> Path:
    writer = _normal(RunWriter("negstats"))
    for index in range(3):
        writer.stats(-1e9 - index, {"cpu": 10.0 + index})
    return writer.exit().write(root / "run-negstats.wandb")


def extreme_values(root: Path) -> Path:
    writer = RunWriter("extreme")
    rows = [
        {"huge": 1e308, "huger": 1.7e308, "tiny": 5e-324, "mixed": 0.0, "wild": "Infinity"},
        {"huge": 1e308, "huger": -1.7e308, "tiny": 5e-324, "mixed": 1.7e308, "wild": "-Infinity"},
        {"huge": -1e308, "huger": 1.7e308, "tiny": 5e-324, "mixed": -5e-324, "wild": "NaN"},
        {"huge": 1e308, "huger": 1.0, "tiny": 5e-324, "mixed": 1.0, "wild": 1.0},
    ]
    for step, row in enumerate(rows):
        writer.history(step, row)
    writer.stats(1_700_000_001.0, {"cpu": 1.7e308, "memory_percent": 5e-324, "gpu.0.gpu": -1.7e308})
    writer.stats(1_700_000_002.0, {"cpu": -1.7e308, "memory_percent": 5e-324, "gpu.0.gpu": 1.7e308})
    writer.summary(huge=1e308, tiny=5e-324, big_int=10**400, neg=-1.7e308)
    return writer.exit().write(root / "run-extreme.wandb")


def constant_extremes(root: Path) -> Path:
    """Series that hold one extreme value throughout: flat lines at the edges of what a float holds."""
    writer = RunWriter("constant")
    for step in range(6):
        writer.history(step, {"tiny": 5e-324, "huge": 1e308, "most": 1.7e308, "least": -1.7e308, "nan": "NaN", "inf": "Infinity", "beyond": 10**400})
    writer.stats(1_700_000_001.0, {"cpu": 5e-324, "memory_percent": 1.7e308})
    writer.stats(1_700_000_002.0, {"cpu": 5e-324, "memory_percent": 1.7e308})
    writer.config(big=10**400, huge=1e308, tiny=5e-324, wild="Infinity", nan="NaN")
    writer.summary(beyond=10**400, below=-(10**400), tiny=5e-324, most=1.7e308, _runtime=1e300)
    return writer.exit().write(root / "run-constant.wandb")


def huge_steps(root: Path) -> Path:
    writer = RunWriter("hugesteps", starting_step=2**62)
    for step in (2**62, 2**63 - 1):
        writer.history(step, {"loss": 1.0})
    writer.summary(_runtime=1e300, _timestamp=1e300, _step=2**63 - 1)
    return writer.exit(runtime=2**31 - 1).write(root / "run-hugesteps.wandb")


def width_bomb(root: Path, keys: int = 100_000) -> Path:
    writer = RunWriter(f"wide{keys}")
    writer.history(0, {f"k{index:07d}": float(index) for index in range(keys)})
    writer.history(1, {f"k{index:07d}": float(index) + 1 for index in range(keys)})
    return writer.exit().write(root / f"run-wide{keys}.wandb")


def escapes(root: Path) -> Path:
    title = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07"
    writer = RunWriter("esc", name=f"name{title}")
    writer.config(**{f"key{title}": f"value{title}"})
    writer.summary(**{f"sum{title}": f"text{title}"})
    writer.history(0, {f"loss{title}": 1.0})
    writer.console(f"line{title}")
    return writer.exit().write(root / "run-esc.wandb")


CASES: dict[str, Callable[[Path], Path]] = {
    maker.__name__: maker
    for maker in (
        deep_summary,
        deep_config,
        deep_history,
        deep_everywhere,
        far_future_start,
        far_past_start,
        edge_start,
        huge_stats_times,
        negative_stats_times,
        limit_stats_times,
        extreme_values,
        constant_extremes,
        huge_steps,
        escapes,
    )
}
