"""Alerts to a local program: one JSON object on its stdin, no shell, its whole process group killed at the timeout."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from leet.alerts.events import Alert
from leet.alerts.sinks.redact import Redactor, expand
from leet.alerts.sinks.sink import SinkError
from leet.common.text import escaped

_STDERR_TAIL = 4096


class CommandSink:
    """A local program that gets each alert as one JSON object on stdin: ``CommandSink(["page-me", "--team", "ml"])``.

    No shell. It runs in a session of its own, and after ``timeout`` its whole
    process group is killed. A non-zero exit is a failure carrying the last
    line of its stderr. The sink is named by its program's base name.
    """

    def __init__(self, argv: Sequence[str], *, shown_as: Mapping[str, str] | None = None, timeout: float | None = None) -> None:
        argv = [str(arg) for arg in argv]
        if not argv or not argv[0]:
            raise ValueError("a command sink needs a program to run")
        self._redact = Redactor(dict(shown_as or {}))
        self.argv = argv
        self.name = self._redact(escaped(os.path.basename(argv[0].rstrip("/")) or argv[0]))
        self.timeout = timeout
        if shutil.which(argv[0]) is None:
            raise ValueError(f"{self.name}: program not found, or not executable")

    def __repr__(self) -> str:
        return f"CommandSink({self.name})"

    def send(self, alert: Alert, timeout: float) -> None:
        payload = json.dumps(alert.as_json(), ensure_ascii=False).encode("utf-8") + b"\n"
        with tempfile.TemporaryFile() as stderr:
            try:
                process = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True, close_fds=True
                )
            except OSError as exc:
                raise SinkError(self._redact.line(f"cannot run {self.name}: {exc.strerror or exc}")) from None
            try:
                process.communicate(payload, timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                raise SinkError(f"{self.name} did not finish within {timeout:g} s and was killed") from None
            except BaseException:
                _kill_group(process)
                raise
            if process.returncode != 0:
                raise SinkError(self._redact.line(self._exit_text(process.returncode, _last_line(stderr))))

    def _exit_text(self, code: int, last: str) -> str:
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with status {code}"
        return f"{self.name} {how}" + (f": {last}" if last else "")


def command_sink(command: str | Sequence[str], environ: Mapping[str, str], *, timeout: float | None = None) -> CommandSink:
    """A ``CommandSink`` from a list of arguments or one string split as a shell would (``shlex``), ``${NAME}`` read from ``environ``."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"cannot split the command into arguments: {exc}") from None
    else:
        argv = list(command)
    shown_as: dict[str, str] = {}
    expanded = []
    for arg in argv:
        value, found = expand(arg, environ)
        expanded.append(value)
        shown_as.update(found)
    return CommandSink(expanded, shown_as=shown_as, timeout=timeout)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the command's process group (its own session), then reap it; never waits long on grandchildren."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    try:
        process.wait(2)
    except subprocess.TimeoutExpired:
        pass


def _last_line(stream: Any) -> str:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(max(0, size - _STDERR_TAIL))
    lines = [line.strip() for line in stream.read().decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""
