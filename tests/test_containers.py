"""Container and pod names from cgroup paths and the runtimes' on-disk configs under a fake root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.containers import (
    ContainerNames,
    ContainerRef,
    container_of_cgroup,
    container_of_path,
    describe,
)

CID = "a" * 64
POD_UID = "1234abcd-0000-1111-2222-333344445555"


@pytest.mark.parametrize(
    ("path", "runtime", "pod_uid"),
    [
        (f"/docker/{CID}", "docker", None),
        (f"/system.slice/docker-{CID}.scope", "docker", None),
        (
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
            f"{POD_UID.replace('-', '_')}.slice/cri-containerd-{CID}.scope",
            "containerd",
            POD_UID,
        ),
        (f"/kubepods.slice/kubepods-pod{POD_UID.replace('-', '_')}.slice/crio-{CID}.scope", "cri-o", POD_UID),
        (f"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{CID}.scope/container", "podman", None),
        (f"/kubepods/besteffort/pod{POD_UID}/{CID}", "kubernetes", POD_UID),
    ],
)
def test_cgroup_paths_name_their_container(path: str, runtime: str, pod_uid: str | None) -> None:
    assert container_of_path(path) == ContainerRef(runtime, CID, pod_uid)


def test_paths_outside_containers_name_none() -> None:
    assert container_of_path("/user.slice/user-1000.slice/session-3.scope") is None
    assert container_of_path("/") is None


def test_v1_file_with_many_hierarchies() -> None:
    text = f"12:pids:/docker/{CID}\n11:cpu,cpuacct:/docker/{CID}\n0::/\n"
    assert container_of_cgroup(text) == ContainerRef("docker", CID)


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_docker_name_from_its_config(tmp_path: Path) -> None:
    _write_json(tmp_path / f"var/lib/docker/containers/{CID}/config.v2.json", {"Name": "/trainer"})
    assert describe(str(tmp_path), ContainerRef("docker", CID)).label == "docker trainer"


def test_pod_from_containerd_annotations(tmp_path: Path) -> None:
    _write_json(
        tmp_path / f"run/containerd/io.containerd.runtime.v2.task/k8s.io/{CID}/config.json",
        {"annotations": {
            "io.kubernetes.pod.name": "train-0",
            "io.kubernetes.pod.namespace": "ml",
            "io.kubernetes.container.name": "worker",
        }},
    )
    info = describe(str(tmp_path), ContainerRef("containerd", CID, POD_UID))
    assert (info.label, info.name) == ("pod ml/train-0", "worker")


def test_podman_name_from_containers_json(tmp_path: Path) -> None:
    _write_json(
        tmp_path / "var/lib/containers/storage/overlay-containers/containers.json",
        [{"id": CID, "names": ["notebook"]}],
    )
    assert describe(str(tmp_path), ContainerRef("podman", CID)).label == "podman notebook"


def test_unreadable_config_falls_back_to_short_id(tmp_path: Path) -> None:
    assert describe(str(tmp_path), ContainerRef("docker", CID)).label == "docker " + "a" * 12


def test_names_are_read_once_per_process_and_container(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    (proc / "42").mkdir(parents=True)
    (proc / "42" / "cgroup").write_text(f"0::/system.slice/docker-{CID}.scope\n")
    config = tmp_path / f"var/lib/docker/containers/{CID}/config.v2.json"
    _write_json(config, {"Name": "/first"})
    names = ContainerNames(str(tmp_path), str(proc))
    assert names.of_process(42, 7) is not None
    _write_json(config, {"Name": "/second"})
    (proc / "42" / "cgroup").write_text("0::/\n")
    info = names.of_process(42, 7)
    assert info is not None and info.name == "first"
    assert names.of_process(42, 8) is None
    names.forget_except({(42, 8)})
    assert names.of_process(42, 7) is None
