"""Drive a full-screen program in a private tmux server and read its screen.

Shared by the real-terminal tests and ``benchmarks/symon.py``. Each
``Terminal`` owns its own tmux server (``-L <unique socket> -f /dev/null``),
so nothing from a user's tmux config or sessions leaks in, and closing it
ends every process it started.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import unicodedata
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

BRAILLE_DOTS = frozenset(chr(code) for code in range(0x2801, 0x2900))  # U+2800 is the blank cell
SESSION = "main"
# No user config, and a terminal that speaks colour and UTF-8 (leet draws ASCII in a C locale),
# so every machine sees the same screen.
LEET_ENV = {"LEET_CONFIG": "", "TERM": "xterm-256color", "LC_ALL": "C.UTF-8"}


class TmuxMissing(RuntimeError):
    """tmux is not on PATH."""


class Timeout(AssertionError):
    """A screen condition did not hold in time; carries the last screen."""

    def __init__(self, message: str, screen: str) -> None:
        super().__init__(f"{message}\n--- last screen ---\n{screen}")
        self.screen = screen


def require_tmux() -> str:
    path = shutil.which("tmux")
    if path is None:
        raise TmuxMissing("tmux is not installed (or not on PATH); the real-terminal checks need it: apt-get install tmux")
    return path


class Terminal:
    """One program in one tmux pane of a fixed size."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        width: int = 160,
        height: int = 48,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.tmux = require_tmux()
        self.command = list(command)
        self.width = width
        self.height = height
        self.env = dict(env or {})
        self.cwd = cwd
        self.socket = f"leet-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.started_at: float | None = None
        self._pid: int | None = None

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> float:
        """Start the program; return ``time.perf_counter()`` from just before tmux ran."""
        inner = ["exec", "env", *(f"{k}={v}" for k, v in self.env.items()), *self.command]
        self.started_at = time.perf_counter()
        # remain-on-exit keeps the pane (and its last screen and exit status) after the program ends.
        self._tmux(
            "new-session", "-d", "-s", SESSION, "-x", str(self.width), "-y", str(self.height),
            *(["-c", self.cwd] if self.cwd else []), shlex.join(inner),
            ";", "set-option", "-t", SESSION, "remain-on-exit", "on",
        )
        return self.started_at

    def close(self) -> None:
        """Stop the tmux server and make sure the program is gone."""
        pid = self._pid
        if pid is None and self.started_at is not None:
            try:
                pid = self.pid
            except RuntimeError:  # the server is already gone
                pass
        subprocess.run(self._argv("kill-server"), capture_output=True, timeout=10)
        if pid is not None:
            _wait_gone(pid, 3.0)

    def __enter__(self) -> "Terminal":
        if self.started_at is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------
    def screen(self) -> str:
        """The visible pane as text, one line per row."""
        return self._tmux("capture-pane", "-p", "-t", SESSION)

    def styled_screen(self) -> str:
        """The visible pane with each cell's colours and attributes (SGR escapes), one line per row."""
        return self._tmux("capture-pane", "-p", "-e", "-t", SESSION)

    def wait_for(self, condition: Callable[[str], bool] | str, timeout: float, poll: float = 0.05, what: str = "") -> str:
        """Poll the screen until ``condition`` holds (or the text appears); return that screen."""
        check = (lambda screen: condition in screen) if isinstance(condition, str) else condition
        label = what or (repr(condition) if isinstance(condition, str) else getattr(condition, "__name__", "condition"))
        deadline = time.perf_counter() + timeout
        next_exit_check = time.perf_counter() + 0.5  # an extra tmux call; not on every poll
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            now = time.perf_counter()
            if now >= deadline:
                raise Timeout(f"{label} not on screen after {timeout:g} s", screen)
            if now >= next_exit_check:
                if self.exited():
                    raise Timeout(f"program exited (status {self.exit_status()}) while waiting for {label}", screen)
                next_exit_check = now + 0.5
            time.sleep(poll)

    def wait_exit(self, timeout: float) -> int | None:
        """Wait for the program to end; its exit status, or minus the signal that killed it."""
        deadline = time.perf_counter() + timeout
        while (status := self.exit_status()) is None:
            if time.perf_counter() >= deadline:
                raise Timeout(f"program still running {timeout:g} s later", self.screen())
            time.sleep(0.05)
        return status

    @property
    def pid(self) -> int:
        """Process id of the program in the pane (``env`` execs, so it is the program itself)."""
        if self._pid is None:
            self._pid = int(self._format("#{pane_pid}"))
        return self._pid

    def exited(self) -> bool:
        return self._format("#{pane_dead}") == "1"

    def exit_status(self) -> int | None:
        """None while the program runs; then its exit status, or minus the signal that killed it."""
        dead, status, signal = self._format("#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}").split(":")
        if dead != "1":
            return None
        if status:
            return int(status)
        if signal.isdigit():
            return -int(signal)
        # tmux sometimes leaves the exited program unreaped for good; the zombie still knows its status.
        return _zombie_status(self.pid)

    # -- writing ---------------------------------------------------------------
    def press(self, *keys: str) -> None:
        """Send tmux key names: ``Enter``, ``Escape``, ``q``, ``C-c``."""
        self._tmux("send-keys", "-t", SESSION, *keys)

    def type(self, text: str) -> None:
        """Send text literally (``\\``, ``?`` and friends included)."""
        self._tmux("send-keys", "-t", SESSION, "-l", text)

    def resize(self, width: int, height: int) -> None:
        """Make the pane ``width``×``height``: the program is told (SIGWINCH), as by a real terminal."""
        self._tmux("resize-window", "-t", SESSION, "-x", str(width), "-y", str(height))
        self.width, self.height = width, height

    def record_output(self, path: str | None) -> None:
        """Append everything the program writes to the terminal to ``path``; ``None`` stops."""
        if path is None:
            self._tmux("pipe-pane", "-t", SESSION)
        else:
            self._tmux("pipe-pane", "-o", "-t", SESSION, f"cat >> {shlex.quote(path)}")

    # -- plumbing --------------------------------------------------------------
    def _argv(self, *args: str) -> list[str]:
        return [self.tmux, "-L", self.socket, "-f", "/dev/null", *args]

    def _tmux(self, *args: str) -> str:
        environ = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        done = subprocess.run(self._argv(*args), capture_output=True, text=True, env=environ, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args[:1])} failed: {done.stderr.strip() or done.returncode}")
        return done.stdout

    def _format(self, fmt: str) -> str:
        return self._tmux("display-message", "-p", "-t", SESSION, fmt).strip()


def _zombie_status(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    if fields[0] != "Z" or len(fields) < 50:
        return None
    code = int(fields[-1])  # field 52, in waitpid(2) form
    return -(code & 0x7F) if code & 0x7F else code >> 8


def _wait_gone(pid: int, timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while os.path.exists(f"/proc/{pid}"):
        if time.perf_counter() >= deadline:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            return
        time.sleep(0.02)


# -- reading chart panels off the screen ---------------------------------------
@dataclass(frozen=True)
class Panel:
    """A rounded box on screen: its title and whether braille dots are plotted inside."""

    title: str
    has_data: bool
    top: int
    left: int


def cells(line: str) -> list[str]:
    """One entry per terminal column; wide characters take two (the second is empty)."""
    out: list[str] = []
    for char in line:
        out.append(char)
        if unicodedata.east_asian_width(char) in ("W", "F"):
            out.append("")
    return out


def chart_panels(screen: str) -> list[Panel]:
    """Every ``╭…╮`` box on screen, titled from its top border (or its first row)."""
    grid = [cells(line) for line in screen.splitlines()]
    panels = []
    for row, line in enumerate(grid):
        col = 0
        while col < len(line):
            if line[col] != "╭":
                col += 1
                continue
            right = _index(line, "╮", col + 1)
            if right is None:
                break
            panels.append(_panel(grid, row, col, right))
            col = right + 1
    return panels


def _index(line: list[str], char: str, start: int) -> int | None:
    try:
        return line.index(char, start)
    except ValueError:
        return None


def _panel(grid: list[list[str]], top: int, left: int, right: int) -> Panel:
    body: list[str] = []
    for line in grid[top + 1 :]:
        if len(line) > left and line[left] == "╰":
            break
        body.append("".join(line[left + 1 : right]))
    border = [part.strip() for part in "".join(grid[top][left + 1 : right]).split("─")]
    title = next((part for part in border if part), "")  # later parts are the headline value
    if not title and body:
        title = body[0].strip("│ ")  # boxes that put the title on the first inside row
    has_data = any(char in BRAILLE_DOTS for text in body for char in text)
    return Panel(" ".join(title.split()), has_data, top, left)
