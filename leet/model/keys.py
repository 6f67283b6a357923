"""Everything about W&B key strings, in one place.

A system-metric key may carry a node label after ``/l:`` (``gpu.0.gpu/l:rank3``,
as shared-mode runs and ``x_label`` write it); a run's system series live in
the store under ``<run key>#system``, apart from the run's own history, and
its metrics charted against a ``define_metric`` axis under ``<run key>#x=<axis>``; and
names with numbers in them sort by value (``rank2`` before ``rank10``).
"""

from __future__ import annotations

import re
from typing import Iterable

LABEL_SEPARATOR = "/l:"
SYSTEM_SUFFIX = "#system"
AXIS_SEPARATOR = "#x="

# A series within one store namespace: the W&B key without its ``/l:`` suffix, and the node label (None: none).
KeyLabel = tuple[str, str | None]

_DIGITS = re.compile(r"(\d+)")


def split_label(key: str) -> KeyLabel:
    """``"gpu.0.gpu/l:rank3"`` → ``("gpu.0.gpu", "rank3")``.

    The key ends at the first ``/l:``. With both ``x_label`` and a DCGM-exporter
    node (``gpu.0.temp/l:node1/l:rank0``) the label keeps both parts,
    ``"node1/l:rank0"``: each part tells a different source apart, and the key
    stays a plain W&B key. An empty label counts as no label.
    """
    cut = key.find(LABEL_SEPARATOR)
    if cut < 0:
        return key, None
    return key[:cut], key[cut + len(LABEL_SEPARATOR):] or None


def join_label(key: str, label: str | None) -> str:
    """Inverse of :func:`split_label`."""
    return key if label is None else f"{key}{LABEL_SEPARATOR}{label}"


def label_of_keys(keys: Iterable[str]) -> str | None:
    """The node label of the first labelled key, or None when none has one."""
    for key in keys:
        label = split_label(key)[1]
        if label is not None:
            return label
    return None


def system_key(run_key: str) -> str:
    """Where a run's system metrics are in the store."""
    return run_key + SYSTEM_SUFFIX


def axis_key(run_key: str, axis: str) -> str:
    """Where a run's metrics charted against ``axis`` (a ``define_metric`` step metric) are in the store."""
    return f"{run_key}{AXIS_SEPARATOR}{axis}"


def natural_key(text: str) -> tuple:
    """Sort key that orders digit runs by value, case aside: "Core 2" before "core 10"."""
    parts = _DIGITS.split(text.casefold())
    return tuple(int(part) if i % 2 else part for i, part in enumerate(parts))


__all__ = ["AXIS_SEPARATOR", "KeyLabel", "LABEL_SEPARATOR", "axis_key", "SYSTEM_SUFFIX", "join_label", "label_of_keys", "natural_key", "split_label", "system_key"]
