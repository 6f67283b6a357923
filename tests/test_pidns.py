"""PID namespaces: reading who a driver-reported PID is, and whether we can tell at all."""

from __future__ import annotations

from pathlib import Path

from nvml_standin import CONTAINER_NAMESPACE, add_process, set_pid_namespace

from collectors.pidns import (
    ROOT_PID_NAMESPACE,
    ProcStatus,
    is_visible,
    own_depth,
    parse_status,
    pid_namespace,
    read_status,
    shows_host_pids,
)

STATUS = """\
Name:\tpython3
Umask:\t0022
State:\tR (running)
Tgid:\t48213
Pid:\t48213
PPid:\t48100
Uid:\t1000\t1000\t1000\t1000
Gid:\t1000\t1000\t1000\t1000
NStgid:\t48213\t57
NSpid:\t48213\t57
NSpgid:\t48100\t1
"""


def test_status_gives_name_real_uid_and_every_namespace_pid():
    status = parse_status(STATUS)
    assert status == ProcStatus(name="python3", uid=1000, nspids=(48213, 57))
    assert status.local_pid == 57


def test_the_pid_one_namespace_level_down():
    status = ProcStatus(nspids=(48213, 57, 3))
    assert [status.pid_at(depth) for depth in range(4)] == [48213, 57, 3, None]


def test_status_of_an_old_kernel_without_nspid_still_gives_name_and_uid():
    status = parse_status("Name:\tbash\nUid:\t0\t0\t0\t0\n")
    assert status == ProcStatus(name="bash", uid=0, nspids=())
    assert status.local_pid is None


def test_garbled_status_lines_are_ignored():
    status = parse_status("Name:\tx\nUid:\tnobody\nNSpid:\t12 x\n")
    assert status == ProcStatus(name="x", uid=None, nspids=())


def test_read_status_of_a_process_that_is_gone_is_none(tmp_path: Path):
    add_process(tmp_path, 10, nspids=(10, 3))
    assert read_status(str(tmp_path), 10).nspids == (10, 3)
    assert read_status(str(tmp_path), 11) is None
    assert is_visible(str(tmp_path), 10)
    assert not is_visible(str(tmp_path), 11)


def test_on_the_host_the_procfs_shows_host_pids(tmp_path: Path):
    add_process(tmp_path, "self", nspids=(4242,))
    set_pid_namespace(tmp_path, "self", ROOT_PID_NAMESPACE)
    assert pid_namespace(str(tmp_path)) == ROOT_PID_NAMESPACE
    assert shows_host_pids(str(tmp_path)) is True
    assert own_depth(str(tmp_path)) == 0


def test_in_a_container_with_its_own_procfs_host_pids_are_not_visible(tmp_path: Path):
    add_process(tmp_path, "self", nspids=(7,))
    set_pid_namespace(tmp_path, "self", CONTAINER_NAMESPACE)
    assert shows_host_pids(str(tmp_path)) is False


def test_a_host_procfs_mounted_into_a_container_shows_host_pids(tmp_path: Path):
    # We live in a child namespace, but this procfs was mounted from the host:
    # our own entry lists two PIDs, and its pid 1 is the host's init.
    add_process(tmp_path, "self", nspids=(9000, 7))
    set_pid_namespace(tmp_path, "self", CONTAINER_NAMESPACE)
    set_pid_namespace(tmp_path, 1, ROOT_PID_NAMESPACE)
    assert shows_host_pids(str(tmp_path)) is True
    assert own_depth(str(tmp_path)) == 1


def test_an_outer_procfs_whose_init_cannot_be_read_is_undecided(tmp_path: Path):
    add_process(tmp_path, "self", nspids=(9000, 7))
    set_pid_namespace(tmp_path, "self", CONTAINER_NAMESPACE)
    assert shows_host_pids(str(tmp_path)) is None


def test_without_namespace_links_nothing_is_claimed(tmp_path: Path):
    add_process(tmp_path, "self", nspids=(4242,))
    assert pid_namespace(str(tmp_path)) is None
    assert shows_host_pids(str(tmp_path)) is None
