"""Running one AMD command-line tool, ``amd-smi`` or ``rocm-smi``, and finding the JSON in what it printed.

Every child runs with a timeout and is killed, with whatever it started,
when it outruns it; a failed, silent or garbled run raises
``AmdSourceError``, so the hub shows the collector as failing and retries.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from typing import Any

from collectors.amd.fields import excerpt
from collectors.amd.source import AmdSourceError


@dataclass(frozen=True)
class Tool:
    """One executable, run with a timeout; its child is killed when it outruns it."""

    path: str
    label: str
    timeout: float

    def json(self, *args: str) -> Any:
        command = " ".join((self.label, *args))
        return parse_json(self.run(*args), command)

    def run(self, *args: str) -> str:
        command = " ".join((self.label, *args))
        try:
            child = subprocess.Popen(
                [self.path, *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                start_new_session=True,  # so a timeout kills whatever the tool started, too
            )
        except OSError as exc:
            raise AmdSourceError(f"{command}: could not start: {exc}") from None
        try:
            out, err = child.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill(child)
            raise AmdSourceError(f"{command}: no answer in {self.timeout:g} s (killed)") from None
        if child.returncode != 0:
            raise AmdSourceError(f"{command}: exit status {child.returncode}{_said(err)}")
        return out


def _kill(child: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        child.communicate(timeout=1.0)


def _said(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f": {excerpt(lines[-1])}" if lines else ""


def parse_json(text: str, command: str) -> Any:
    """The first JSON object or list in a tool's output.

    The tools print warnings before or after the JSON, and rocm-smi may
    start with a blank line, so each line that opens a bracket is tried.
    """
    if not text.strip():
        raise AmdSourceError(f"{command}: printed nothing")
    decoder = json.JSONDecoder()
    for start in re.finditer(r"^[ \t]*[\[{]", text, re.MULTILINE):
        try:
            value, _ = decoder.raw_decode(text, start.end() - 1)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    raise AmdSourceError(f"{command}: printed no JSON: {excerpt(text, 60)!r}")
