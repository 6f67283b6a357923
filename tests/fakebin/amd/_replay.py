"""What the stand-in AMD tools have in common: replay a file, or misbehave on request.

A behaviour is a path to print, or one of:
``hang`` (sleep far past any timeout), ``hang-with-child`` (start a child that
holds stdout open and write its PID to ``FAKE_AMD_CHILD_PID``, then sleep), ``die`` (exit 1 with a message on stderr),
``garbage`` (print text that is not JSON), ``empty`` (print nothing, exit 0).
With ``FAKE_AMD_WARN`` set, a replayed file is wrapped in warning lines, as
the real tools sometimes print. With ``FAKE_AMD_LOG`` set, every run
appends its command line to that file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def log_run(tool: str) -> None:
    path = os.environ.get("FAKE_AMD_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(" ".join([tool, *sys.argv[1:]]) + "\n")


def _tell_child_pid(pid: int) -> None:
    path = os.environ.get("FAKE_AMD_CHILD_PID")
    if path:
        with open(path, "w", encoding="utf-8") as file:
            file.write(str(pid))


def behave(behaviour: str, tool: str) -> int:
    if behaviour == "hang":
        time.sleep(60)
        return 0
    if behaviour == "hang-with-child":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        _tell_child_pid(child.pid)
        time.sleep(60)
        return 0
    if behaviour == "die":
        print(f"{tool}: ERROR: the device is busy", file=sys.stderr)
        return 1
    if behaviour == "garbage":
        print("Traceback (most recent call last):\n  something went { wrong")
        return 0
    if behaviour == "empty":
        return 0
    if not behaviour:
        print(f"{tool}: no behaviour set for this run", file=sys.stderr)
        return 3
    with open(behaviour, encoding="utf-8") as file:
        text = file.read()
    if os.environ.get("FAKE_AMD_WARN"):
        text = f"WARNING: AMD GPU device(s) is/are in a low-power state.\n{text}\n[WARNING] unsupported field skipped\n"
    sys.stdout.write(text)
    return 0
