"""From a path a person typed to the run file it names."""

from __future__ import annotations

import os
from pathlib import Path

from leet.runfile.reader import RunFileError


class RunNotFound(RunFileError, FileNotFoundError):
    """The path names no run file."""


def find_run_file(path: str | os.PathLike[str]) -> Path:
    """``path`` itself if it is a regular file; the one ``run-*.wandb`` inside it if it is a directory."""
    path = Path(path)
    if not path.exists():
        raise RunNotFound(f"{path} does not exist")
    if path.is_file():
        return path
    if not path.is_dir():  # a FIFO, a socket, a device: opening one could wait forever
        raise RunNotFound(f"{path} is not a regular file")
    found = sorted(path.glob("run-*.wandb"))
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(item.name for item in found)
        raise RunNotFound(f"{path} holds several run files ({names}); name one of them")
    hint = ""
    for candidate in (path / "latest-run", path / "wandb" / "latest-run"):
        if candidate.is_dir():
            hint = f" (the newest run is {candidate})"
            break
    raise RunNotFound(f"{path}: no run-*.wandb file in this directory{hint}")
