"""What starting ``neuron-monitor`` takes: the executable, a Neuron device, and W&B's config in a temp file."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from typing import Any, Mapping

NEURON_MONITOR = "neuron-monitor"
# Where the Neuron SDK installs it; W&B looks here when it is not on PATH.
DEFAULT_NEURON_MONITOR = "/opt/aws/neuron/bin/neuron-monitor"
DEV_ROOT = "/dev"


def neuron_monitor_config(period: float = 1.0) -> dict[str, Any]:
    """The config W&B gives ``neuron-monitor -c``, reporting every ``period`` seconds.

    The period is whole seconds. Where W&B would write ``"0s"`` (an interval
    under one second), one second is the least here.
    """
    return {
        "period": f"{whole_seconds(period)}s",
        "neuron_runtimes": [
            {
                "tag_filter": ".*",
                "metrics": [
                    {"type": "neuroncore_counters"},
                    {"type": "memory_used"},
                    {"type": "neuron_runtime_vcpu_usage"},
                ],
            }
        ],
        "system_metrics": [
            {"type": "vcpu_usage"},
            {"type": "memory_info"},
            {"type": "neuron_hw_counters"},
        ],
    }


def whole_seconds(period: float) -> int:
    """A period as neuron-monitor takes it: whole seconds, at least one."""
    try:
        return max(1, int(period))
    except (ValueError, OverflowError, TypeError):
        return 1


def find_neuron_monitor() -> str | None:
    """``neuron-monitor`` on PATH, else where the Neuron SDK installs it."""
    found = shutil.which(NEURON_MONITOR)
    if found:
        return found
    if os.access(DEFAULT_NEURON_MONITOR, os.X_OK):
        return DEFAULT_NEURON_MONITOR
    return None


def neuron_devices(dev_root: str = DEV_ROOT) -> list[str]:
    """The Neuron device nodes (``neuron0``, ``neuron1`` …) under ``dev_root``."""
    try:
        names = os.listdir(dev_root)
    except OSError:
        return []
    return sorted((name for name in names if re.fullmatch(r"neuron[0-9]+", name)), key=lambda n: int(n[6:]))


def write_config(config: Mapping[str, Any]) -> str:
    """W&B's config in a private temp file: a fixed shared name could be raced or pre-planted."""
    handle, path = tempfile.mkstemp(prefix="leet-neuron-monitor-", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(config, out, indent=2)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    return path
