"""Whether the ``amdgpu`` kernel driver is live: the first thing the AMD collector checks."""

from __future__ import annotations

import os
import re


def amdgpu_problem(sys_root: str = "/") -> str:
    """Why the amdgpu kernel driver is not there to ask; "" when it is live."""
    module = os.path.join(sys_root, "sys/module/amdgpu")
    state = _read_text(os.path.join(module, "initstate"))
    if state is not None:
        state = state.strip()
        return "" if state == "live" else f"the amdgpu kernel driver is not ready (initstate: {state or 'empty'})"
    # A driver built into the kernel has a module directory but no initstate.
    if os.path.isdir(module) or _drm_card_on_amdgpu(sys_root):
        return ""
    return "no AMD GPU driver: the amdgpu kernel module is not loaded"


def _drm_card_on_amdgpu(sys_root: str) -> bool:
    drm = os.path.join(sys_root, "sys/class/drm")
    try:
        entries = os.listdir(drm)
    except OSError:
        return False
    for entry in entries:
        if re.fullmatch(r"card\d+", entry):
            driver = os.path.join(drm, entry, "device/driver")
            if os.path.basename(os.path.realpath(driver)) == "amdgpu":
                return True
    return False


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None
