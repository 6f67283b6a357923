"""What GPU collectors tell the screen besides metric values.

Metric values travel as W&B keys (``gpu.{i}.*``); these records travel as
collector extras: ``"gpus"`` (a tuple of ``GpuInfo``), ``"gpu_processes"``
(a tuple of ``GpuProcess``) and ``"notes.<collector>"`` (short warnings).
Plain frozen data, so they cross to the UI thread as they are.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MigInstance:
    """One MIG slice of a physical GPU."""

    gpu: int  # the parent's index
    index: int  # the slice's index on its parent
    uuid: str = ""
    profile: str = ""  # e.g. "1g.10gb" when known
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    memory_used: int | None = None  # bytes
    memory_total: int | None = None  # bytes


@dataclass(frozen=True)
class GpuInfo:
    """One physical GPU: what rarely changes, and whether it still answers."""

    index: int
    name: str
    memory_total: int  # bytes
    power_limit_watts: float | None
    uuid: str = ""
    lost: bool = False  # fell off the bus; its last values are stale
    reason: str = ""  # why it is lost, or what it cannot report
    mig: tuple[MigInstance, ...] = ()
    utilization_supported: bool = True  # False on MIG-enabled GPUs: NVML gives no busy %


@dataclass(frozen=True)
class GpuProcess:
    """One process holding a GPU context."""

    gpu: int  # physical GPU index
    pid: int  # as this PID namespace sees it (the host PID when unmapped)
    host_pid: int  # as the driver reports it
    user: str = ""
    command: str = ""
    used_memory: int | None = None  # bytes; None when the driver hides it
    sm_percent: float | None = None  # None when unknown
    kind: str = "compute"  # "compute" or "graphics"
    in_tree: bool = False  # part of the watched process tree (--pid)
    mig: str = ""  # the MIG slice it runs on, if any
    container_pid: int | None = None  # its PID inside its own, nested PID namespace (a container), if any


@dataclass(frozen=True)
class AcceleratorInfo:
    """One accelerator that is not an NVIDIA GPU (AMD GPU, TPU chip, NeuronCore, IPU, Apple GPU).

    Travels as the extra ``"accelerators.<collector>"`` (a tuple of these).
    The ``*_key`` fields name the W&B keys (without a node label) that the
    sidebar reads for this device's line; an empty string means the source
    has no such figure.
    """

    vendor: str  # "AMD", "Google", "AWS", "Apple", "Graphcore"
    index: int
    name: str  # the model as the source names it, e.g. "AMD Instinct MI300X", "TPU v6e"
    utilization_key: str = ""  # percent busy
    memory_key: str = ""  # percent of device memory in use
    temp_key: str = ""  # °C
    power_key: str = ""  # watts
    memory_total: int | None = None  # bytes
    power_limit_watts: float | None = None
    reason: str = ""  # what it cannot report, or why it is lost
