"""Every accelerator backend, ready for the hub.

Each one probes on its own, so a machine without that hardware simply shows
the backend as absent, with its reason.
"""

from __future__ import annotations

from typing import Sequence

from collectors.base import Collector
from collectors.nvidia import NvidiaCollector


def accelerator_collectors(
    gpu_ids: Sequence[int] | None = None,
    pid: int | None = None,
    track_tree: bool = False,
) -> list[Collector]:
    """The accelerator collectors; ``gpu_ids`` picks GPUs, ``pid`` is the process to attribute."""
    return [NvidiaCollector(gpu_ids=gpu_ids, pid=pid, track_tree=track_tree)]
