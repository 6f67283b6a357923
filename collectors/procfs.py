"""Reading procfs and sysfs files cheaply, under an injectable root.

Every host collector reads through these helpers so that tests can point
them at a fake tree, and so the per-sweep cost of reading many small files
stays low.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def read_text(path: str) -> str | None:
    """The file's text, or None when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def read_bytes(path: str) -> bytes | None:
    """The file's bytes (up to 64 KiB), or None when it cannot be read.

    Plain ``os`` calls: about twice as fast as ``open()`` on procfs, which
    matters when every process's files are read each sweep.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 65536)
    except OSError:
        return None
    finally:
        os.close(fd)


class UserNames:
    """uid → login name, looked up once per uid (the password database can be slow: LDAP, NSS)."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}

    def name(self, uid: int) -> str:
        found = self._names.get(uid)
        if found is None:
            import pwd

            try:
                found = pwd.getpwuid(uid).pw_name
            except KeyError:
                found = str(uid)  # a uid with no name (a container's user) still says who
            self._names[uid] = found
        return found


def under_root(root: str, path: str) -> str:
    """``path`` (absolute on the target system) inside the tree at ``root``."""
    return os.path.join(root, path.lstrip("/"))


@dataclass(frozen=True)
class Mount:
    """One line of mountinfo, reduced to what the collectors need."""

    major_minor: str
    root: str  # the part of the source file system seen at the mount point
    mount_point: str
    fs_type: str
    source: str


def unescape_mountinfo(field: str) -> str:
    """Decode the octal escapes (``\\040`` = space) mountinfo uses."""
    if "\\" not in field:
        return field
    out = []
    i = 0
    while i < len(field):
        chunk = field[i : i + 4]
        if len(chunk) == 4 and chunk[0] == "\\" and chunk[1:].isdigit():
            out.append(chr(int(chunk[1:], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[Mount]:
    """Parse ``/proc/<pid>/mountinfo``; malformed lines are skipped."""
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields = left.split()
        tail = right.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        mounts.append(
            Mount(
                major_minor=fields[2],
                root=unescape_mountinfo(fields[3]),
                mount_point=unescape_mountinfo(fields[4]),
                fs_type=tail[0],
                source=unescape_mountinfo(tail[1]),
            )
        )
    return mounts
