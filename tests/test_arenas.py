"""Worker threads share one malloc arena instead of one each, so resident memory does not creep."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

from leet.arenas import share_malloc_arenas

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc arenas are glibc's")

# Eight threads allocate at once; glibc's malloc_info then says how many arenas (heaps) there are.
COUNT_ARENAS = textwrap.dedent(
    """
    import ctypes, os, sys, tempfile, threading
    sys.path.insert(0, os.getcwd())
    if sys.argv[1] == "shared":
        from leet.arenas import share_malloc_arenas
        assert share_malloc_arenas()
    barrier = threading.Barrier(8)
    def work():
        barrier.wait()
        for _ in range(200):
            blocks = [bytearray(4096) for _ in range(64)]
            del blocks
    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads: thread.start()
    for thread in threads: thread.join()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
    libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
    libc.fclose.argtypes = (ctypes.c_void_p,)
    path = tempfile.mktemp()
    stream = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    print(open(path).read().count("<heap nr="))
    os.unlink(path)
    """
)


def arenas(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", COUNT_ARENAS, mode], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@glibc
def test_eight_busy_threads_share_two_arenas():
    assert arenas("shared") <= 2
    assert arenas("default") > 2  # what glibc does unasked on this machine


@glibc
def test_the_users_setting_wins(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert share_malloc_arenas() is False


def test_a_cap_is_a_no_op_where_there_is_no_glibc(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert share_malloc_arenas() is False
