"""Every accelerator backend, ready for the hub, and the collectors that scrape exporters.

Each backend probes on its own, so a machine without that hardware simply
shows the backend as absent, with its reason; an absent backend is never
sampled, so having them all registered costs a sweep nothing.

``LEET_SYS_ROOT`` names another filesystem root where the AMD and TPU
backends read ``/sys`` (and AMD looks for ``/opt/rocm/bin``): a container
that mounts the host's ``/sys`` under ``/host/sys`` sets it to ``/host``, and
tests point it at a made-up tree. Unset or empty, it is ``/``.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Sequence

from collectors.amd import AmdCollector
from collectors.apple import AppleCollector
from collectors.base import Collector
from collectors.ipu import IpuCollector
from collectors.nvidia import NvidiaCollector
from collectors.tpu import TpuCollector
from collectors.trainium import TrainiumCollector

SYS_ROOT_VARIABLE = "LEET_SYS_ROOT"


def sys_root(environ: Mapping[str, str] | None = None) -> str:
    """The filesystem root the sysfs-reading backends use: ``$LEET_SYS_ROOT``, else ``/``."""
    environ = os.environ if environ is None else environ
    return environ.get(SYS_ROOT_VARIABLE) or "/"


def accelerator_collectors(
    gpu_ids: Sequence[int] | None = None,
    pid: int | None = None,
    track_tree: bool = False,
    root: str | None = None,
) -> list[Collector]:
    """NVIDIA, AMD, TPU, Trainium, IPU and Apple collectors, in that order.

    ``gpu_ids`` picks NVIDIA and AMD GPUs by index, ``pid`` is the process to
    attribute (NVIDIA, Trainium and IPU report what it uses), ``root`` the
    filesystem root (None: ``sys_root()``).
    """
    root = sys_root() if root is None else root
    return [
        NvidiaCollector(gpu_ids=gpu_ids, pid=pid, track_tree=track_tree),
        AmdCollector(gpu_ids=gpu_ids, sys_root=root),
        TpuCollector(sys_root=root),
        TrainiumCollector(pid=pid),
        IpuCollector(pid=pid),
        AppleCollector(),
    ]


def exporter_collectors(
    open_metrics_endpoints: Iterable[tuple[str, str]] = (),
    open_metrics_filters: Any = None,
    open_metrics_http_headers: Iterable[tuple[str, str]] = (),
    dcgm_exporter: str | None = None,
) -> list[Collector]:
    """One collector per OpenMetrics endpoint, then the DCGM-exporter one, from W&B-style settings.

    The headers go with every request, DCGM's included, as W&B sends them.
    Raises ValueError for a bad name, URL, filter or header; settings that
    went through ``leet.config`` were checked already. Nothing is imported
    when nothing is asked for.
    """
    endpoints = list(open_metrics_endpoints)
    headers = list(open_metrics_http_headers)
    collectors: list[Collector] = []
    if endpoints:
        from collectors.openmetrics import endpoints_from_settings, openmetrics_collectors

        collectors += openmetrics_collectors(endpoints_from_settings(endpoints, open_metrics_filters, headers))
    if dcgm_exporter:
        from collectors.dcgm import DcgmPrometheusCollector

        collectors.append(DcgmPrometheusCollector(dcgm_exporter, headers=headers))
    return collectors
