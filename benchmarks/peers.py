"""The programs ``benchmarks/symon.py`` measures, and how each is started.

Every program gets the same refresh interval through its own option, a fresh
empty config directory (``XDG_CONFIG_HOME``), and nothing else changed from
its defaults. A program that is not installed is skipped with a note.

    leet     python -m leet symon --interval 2s            (this interpreter)
    wandb    python -m wandb leet symon --interval 2s      (this interpreter, when wandb imports)
    htop     htop -d 20                                    (on PATH: apt-get install htop)
    btop     btop, with update_ms = 2000 in its btop.conf  (on PATH: apt-get install btop)
    glances  PY -m glances -t 2 --disable-check-update     (PY: the interpreter of the glances script)
    nvitop   PY benchmarks/fake_gpus.py --gpus N -m nvitop -m full --interval 2
             (stand-in GPUs when asked, or when no NVIDIA driver is here; else PY -m nvitop ...)

glances and nvitop are looked for in the ``--peer-venv`` directories and
``$LEET_BENCH_PEERS`` (virtual environments or ``bin`` folders, ``:``-separated),
then on ``PATH``.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAKE_GPUS = HERE / "fake_gpus.py"
ALL_TOOLS = ("leet", "wandb", "htop", "btop", "glances", "nvitop")
PEER_ENV_VAR = "LEET_BENCH_PEERS"
DEFAULT_NVITOP_GPUS = 2  # stand-in GPUs for nvitop when the machine has no NVIDIA driver


@dataclass
class Tool:
    name: str
    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    waits_for_data: bool = False  # startup also waits for a chart with braille dots (leet, wandb)
    note: str = ""


def interval_text(seconds: float) -> str:
    return f"{seconds:g}"


def leet_command(interval: str, fake_gpus: int) -> list[str]:
    symon = ["-m", "leet", "symon", "--interval", interval]
    if fake_gpus:
        return [sys.executable, str(FAKE_GPUS), "--gpus", str(fake_gpus), *symon]
    return [sys.executable, *symon]


def peer_dirs(extra: list[str]) -> list[Path]:
    """The ``bin`` folders to look in before PATH: ``--peer-venv`` ones first, then ``$LEET_BENCH_PEERS``."""
    entries = list(extra) + [part for part in os.environ.get(PEER_ENV_VAR, "").split(os.pathsep) if part]
    dirs = []
    for entry in entries:
        path = Path(entry).expanduser()
        dirs.append(path / "bin" if (path / "bin").is_dir() else path)
    return dirs


def find_program(name: str, dirs: list[Path]) -> str | None:
    for directory in dirs:
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def script_python(script: str) -> str | None:
    """The interpreter named in a console script's ``#!`` line, if it is a Python one."""
    try:
        with open(script, "rb") as handle:
            first = handle.readline(400).decode(errors="replace")
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    if Path(words[0]).name == "env" and len(words) > 1:  # "#!/usr/bin/env python3"
        found = shutil.which(words[1])
        return found if found and "python" in Path(found).name else None
    return words[0] if "python" in Path(words[0]).name else None


def imports(python: str, *modules: str) -> bool:
    code = "import " + ", ".join(modules)
    try:
        return subprocess.run([python, "-c", code], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def has_nvidia_driver() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def build_tools(names: list[str], interval: float, fake_gpus: int, peer_venvs: list[str], config_root: Path) -> tuple[list[Tool], list[str]]:
    """The tools to measure, in the order asked, and a note for each one skipped."""
    every = interval_text(interval)
    dirs = peer_dirs(peer_venvs)
    tools: list[Tool] = []
    skipped: list[str] = []
    for name in names:
        tool, why = _make(name, every, interval, fake_gpus, dirs)
        if tool is None:
            skipped.append(f"{name}: {why}")
            continue
        config = config_root / name
        config.mkdir(parents=True, exist_ok=True)
        tool.env["XDG_CONFIG_HOME"] = str(config)
        if name == "btop":
            (config / "btop").mkdir(exist_ok=True)
            # btop 1.2 has no refresh option on its command line; it reads the rest of its settings from defaults.
            (config / "btop" / "btop.conf").write_text(f"update_ms = {round(interval * 1000)}\n")
        tools.append(tool)
    return tools, skipped


def _make(name: str, every: str, interval: float, fake_gpus: int, dirs: list[Path]) -> tuple[Tool | None, str]:
    if name == "leet":
        note = f"{fake_gpus} stand-in GPUs" if fake_gpus else ""
        return Tool("leet", leet_command(every + "s", fake_gpus), waits_for_data=True, note=note), ""
    if name == "wandb":
        if importlib.util.find_spec("wandb") is None:
            return None, "wandb is not importable by this interpreter (pip install wandb)"
        note = "reads the real host only: the GPU stand-in lives inside one Python process" if fake_gpus else ""
        return Tool("wandb", [sys.executable, "-m", "wandb", "leet", "symon", "--interval", every + "s"], waits_for_data=True, note=note), ""
    if name == "htop":
        program = find_program("htop", dirs)
        if program is None:
            return None, "not installed (apt-get install htop)"
        return Tool("htop", [program, "-d", str(max(1, round(interval * 10)))]), ""
    if name == "btop":
        program = find_program("btop", dirs)
        if program is None:
            return None, "not installed (apt-get install btop)"
        return Tool("btop", [program], note=f"update_ms = {round(interval * 1000)} in btop.conf"), ""
    if name == "glances":
        program = find_program("glances", dirs)
        if program is None:
            return None, f"not installed (pip install glances into a virtual environment, then --peer-venv DIR or ${PEER_ENV_VAR})"
        python = script_python(program)
        launch = [python, "-m", "glances"] if python else [program]
        return Tool("glances", [*launch, "-t", every, "--disable-check-update"]), ""
    if name == "nvitop":
        program = find_program("nvitop", dirs)
        if program is None:
            return None, f"not installed (pip install nvitop into a virtual environment, then --peer-venv DIR or ${PEER_ENV_VAR})"
        python = script_python(program)
        if python is None:
            return None, f"cannot tell which Python runs {program}"
        monitor = ["-m", "nvitop", "-m", "full", "--interval", every]
        gpus = fake_gpus or (0 if has_nvidia_driver() else DEFAULT_NVITOP_GPUS)
        if not gpus:
            return Tool("nvitop", [python, *monitor]), ""
        if not imports(python, "nvitop", "pynvml"):
            return None, f"{python} cannot import nvitop and pynvml together"
        why = "" if fake_gpus else ", no NVIDIA driver here"
        return Tool("nvitop", [python, str(FAKE_GPUS), "--gpus", str(gpus), *monitor], note=f"{gpus} stand-in GPUs{why}"), ""
    return None, f"unknown tool (choose from {', '.join(ALL_TOOLS)})"
