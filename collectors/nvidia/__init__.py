"""NVIDIA GPUs through NVML (``nvidia-ml-py``, imported only when a probe needs it).

``device`` holds the NVML side (return codes, the field table, calls that
remember what a GPU does not answer), ``processes`` the process attribution,
and ``collector`` the collector that builds on both.
"""

from collectors.nvidia.collector import NvidiaCollector
from collectors.nvidia.processes import CONTAINER_NOTE, mig_label, mig_profile

__all__ = ["CONTAINER_NOTE", "NvidiaCollector", "mig_label", "mig_profile"]
