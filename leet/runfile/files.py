"""Opening only regular files, without ever blocking.

A FIFO named ``run-x.wandb`` would block ``open()`` until a writer came; a
character device may act on being opened. So a path is ``stat``-ed first and
opened only if it is a regular file, and then non-blocking (a FIFO swapped in
between costs nothing) and checked again on the open descriptor.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFile(OSError):
    """The path exists but is not a regular file, so it is never opened."""


def kind_of(mode: int) -> str:
    """What a non-regular ``st_mode`` is, in words."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def check_regular(path: str | os.PathLike[str]) -> os.stat_result:
    """``path``'s stat (symlinks followed); ``NotRegularFile`` if it is anything but a regular file."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(f"{os.fspath(path)} is {kind_of(info.st_mode)}, not a regular file")
    return info


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for binary reading if it is a regular file; never blocks, never opens anything else."""
    check_regular(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # replaced between the stat and the open
            raise NotRegularFile(f"{os.fspath(path)} is {kind_of(info.st_mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """Up to ``limit`` bytes (all if None) of a regular file, opened as ``open_regular`` does."""
    with open_regular(path) as handle:
        return handle.read() if limit is None else handle.read(limit)
