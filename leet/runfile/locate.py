"""From a path a person typed to the run file it names."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from leet.runfile.files import kind_of
from leet.runfile.reader import RunFileError


class RunNotFound(RunFileError, FileNotFoundError):
    """The path names no run file."""


_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR})
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")  # a path never starts so; Path() would fold the "//"


def find_run_file(path: str | os.PathLike[str]) -> Path:
    """``path`` itself if it is a regular file; the one ``run-*.wandb`` inside it if it is a directory.

    Raises ``RunNotFound`` when it names no run file (saying what it is, if it
    exists), and an ``OSError`` naming ``path`` when it cannot be looked at.
    """
    typed = os.fspath(path)
    if _URL.match(typed):
        raise RunNotFound(
            f"{typed} is an address: runs on a W&B server are not read, only run files on this machine "
            "(wandb/run-*/run-*.wandb, where the run's script ran)"
        )
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno in _MISSING:
            raise RunNotFound(f"{path} does not exist") from None
        raise
    if stat.S_ISREG(mode):
        return path
    if not stat.S_ISDIR(mode):  # a FIFO, a socket, a device: opening one could wait forever
        raise RunNotFound(f"{path} is {kind_of(mode)}, not a regular file or a directory")
    if path.suffix == ".wandb":
        raise RunNotFound(f"{path} is a directory, not a run file")
    check_listable(path)
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


def check_listable(path: str | os.PathLike[str]) -> None:
    """Raises an ``OSError`` naming ``path`` when it is a directory that cannot be listed or entered.

    Anything else (no such path, not a directory) passes: what the caller
    does next says so in its own words.
    """
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode):
            return
    except OSError:  # what it is cannot be told here: the caller's next look says why
        return
    try:
        with os.scandir(path):  # read permission
            pass
        os.stat(os.path.join(path, os.curdir))  # search permission: what is inside can be looked at
    except OSError as error:
        if error.errno in _MISSING:  # gone meanwhile
            return
        raise OSError(error.errno, f"cannot read this directory: {error.strerror or error}", os.fspath(path)) from None
