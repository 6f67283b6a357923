"""Where run files lie on disk: a folder of runs, its run directories, and a run file's siblings.

Only names and directory listings are looked at here, never a file's
records: which of these files make one run is for whoever reads them.
``wandb/latest-run``, the link W&B makes, is never a run directory of its own.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path


def workspace_root(path: str | os.PathLike[str]) -> Path:
    """The folder holding run directories: ``path`` itself, or its ``wandb``/``.wandb`` child."""
    path = Path(path)
    for child in ("wandb", ".wandb"):
        if _is_directory(path / child) and not _has_run_file(path):
            return path / child
    return path


# How W&B names a run's directory: (offline-)run-YYYYMMDD_HHMMSS-<id>.
_RUN_DIR_NAME = re.compile(r"(offline-)?run-\d{8}_\d{6}-.+")


def awaits_runs(path: str | os.PathLike[str]) -> bool:
    """A folder that holds no run yet, to be watched for runs (as ``wandb leet`` does).

    That is any directory without a run file of its own, except one named
    like a W&B run directory or a run file: runs never appear inside a run's
    own folder, so one without its run file is an error to report, not a wait.
    """
    path = Path(path)
    if not _is_directory(path) or _has_run_file(path):
        return False
    name = path.resolve().name
    return not (_RUN_DIR_NAME.fullmatch(name) or fnmatch.fnmatchcase(name, "run-*.wandb"))


def _is_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


def _has_run_file(path: Path) -> bool:
    """Whether ``path`` holds a ``run-*.wandb`` of its own (False when it cannot be listed)."""
    try:
        with os.scandir(path) as listing:
            return any(fnmatch.fnmatchcase(entry.name, "run-*.wandb") for entry in listing)
    except OSError:
        return False


@dataclass(frozen=True)
class RunDir:
    """One directory of a workspace: its run file, or why it could not be looked into."""

    name: str
    path: Path
    file: Path | None = None  # None: ``error`` says why
    error: str = ""


def scan_runs(root: Path) -> list[RunDir]:
    """Every run directory directly under ``root``, by name; those that cannot be read are kept, with why.

    Raises ``OSError`` when ``root`` itself cannot be listed.
    """
    with os.scandir(root) as listing:
        children = sorted(listing, key=lambda entry: entry.name)
    found = (_run_dir(child) for child in children if child.name != "latest-run" and _is_dir(child))
    return [run_dir for run_dir in found if run_dir is not None]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _run_dir(child: os.DirEntry[str]) -> RunDir | None:
    """``child`` as a run directory; None when it holds no run file.

    A directory that cannot be listed may well be a run: it is kept with the
    reason, rather than left out of the list without a word. Whatever is
    named like a run file is taken, even a FIFO or a directory: the probe
    says what it is.
    """
    path = Path(child.path)
    try:
        with os.scandir(path) as listing:
            names = sorted(entry.name for entry in listing if fnmatch.fnmatchcase(entry.name, "run-*.wandb"))
    except OSError as error:
        return RunDir(child.name, path, error=f"cannot read this directory: {error.strerror or error}")
    return RunDir(child.name, path, path / names[0]) if names else None


def run_files(root: Path) -> list[tuple[str, Path]]:
    """(directory name, run file) for every readable run directory directly under ``root``."""
    try:
        return [(run_dir.name, run_dir.file) for run_dir in scan_runs(root) if run_dir.file is not None]
    except OSError:
        return []


def is_workspace(path: str | os.PathLike[str]) -> bool:
    root = workspace_root(path)
    return root.is_dir() and bool(run_files(root))


def sibling_files(file: Path) -> list[Path]:
    """The files of the same name in ``file``'s sibling run directories, ``file`` among them."""
    run_dir = file.parent
    root = run_dir.parent
    found = {file}
    try:
        children = list(os.scandir(root))
    except OSError:
        return [file]
    for child in children:
        if child.name == "latest-run" or child.path == str(run_dir) or not child.is_dir(follow_symlinks=False):
            continue
        candidate = Path(child.path) / file.name
        if candidate.is_file():
            found.add(candidate)
    return sorted(found)
