"""Which container (docker, containerd, CRI-O, podman) and Kubernetes pod a process runs in.

The container id comes from the process's cgroup path; its name from the
runtime's on-disk config under a filesystem root (``LEET_SYS_ROOT``), else the
short id.  Names are read once per container id.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from collectors.procfs import read_text

SHORT_ID_LENGTH = 12

_SCOPED_ID = re.compile(r"(docker|cri-containerd|crio|libpod)-([0-9a-f]{64})\.scope")
_BARE_ID = re.compile(r"/(docker|kubepods[^/]*/(?:[^/]+/)*?pod[^/]+|libpod)/([0-9a-f]{64})(?:/|$)")
_POD_UID = re.compile(r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})")

_RUNTIME_NAMES = {"cri-containerd": "containerd", "crio": "cri-o", "libpod": "podman", "docker": "docker"}

POD_NAME = "io.kubernetes.pod.name"
POD_NAMESPACE = "io.kubernetes.pod.namespace"
CONTAINER_NAME = "io.kubernetes.container.name"


@dataclass(frozen=True)
class ContainerRef:
    """A container named by a cgroup path: its runtime, id and pod uid (Kubernetes only)."""

    runtime: str
    container_id: str
    pod_uid: str | None = None

    @property
    def short_id(self) -> str:
        return self.container_id[:SHORT_ID_LENGTH]


@dataclass(frozen=True)
class ContainerInfo:
    """What a row shows: the runtime, a name, and the pod's namespace/name when in Kubernetes."""

    runtime: str
    name: str
    pod: str | None = None
    namespace: str | None = None

    @property
    def label(self) -> str:
        if self.pod is not None:
            return f"pod {self.namespace or '?'}/{self.pod}"
        return f"{self.runtime} {self.name}"


def cgroup_paths(text: str) -> list[str]:
    """The paths of a ``/proc/PID/cgroup`` file, v1 and v2 lines alike."""
    paths = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and parts[2]:
            paths.append(parts[2])
    return paths


def container_of_path(path: str) -> ContainerRef | None:
    """The container a cgroup path names, or None when it names none."""
    pod = _POD_UID.search(path)
    pod_uid = pod.group(1).replace("_", "-") if pod else None
    scoped = _SCOPED_ID.search(path)
    if scoped is not None:
        runtime = _RUNTIME_NAMES[scoped.group(1)]
        return ContainerRef(runtime, scoped.group(2), pod_uid)
    bare = _BARE_ID.search(path)
    if bare is None:
        return None
    kind = bare.group(1)
    runtime = "docker" if kind == "docker" else "podman" if kind == "libpod" else "kubernetes"
    return ContainerRef(runtime, bare.group(2), pod_uid)


def container_of_cgroup(text: str) -> ContainerRef | None:
    """The container a ``/proc/PID/cgroup`` file names, or None."""
    for path in cgroup_paths(text):
        ref = container_of_path(path)
        if ref is not None:
            return ref
    return None


def _read_json(path: str) -> dict | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _from_annotations(runtime: str, annotations: object) -> ContainerInfo | None:
    if not isinstance(annotations, dict):
        return None
    pod = annotations.get(POD_NAME)
    if not isinstance(pod, str):
        return None
    namespace = annotations.get(POD_NAMESPACE)
    container = annotations.get(CONTAINER_NAME)
    return ContainerInfo(
        runtime,
        container if isinstance(container, str) else pod,
        pod,
        namespace if isinstance(namespace, str) else None,
    )


def _docker_name(root: str, container_id: str) -> ContainerInfo | None:
    config = _read_json(f"{root}/var/lib/docker/containers/{container_id}/config.v2.json")
    if config is None:
        return None
    labels = (config.get("Config") or {}).get("Labels") if isinstance(config.get("Config"), dict) else None
    in_pod = _from_annotations("docker", labels)
    if in_pod is not None:
        return in_pod
    name = config.get("Name")
    return ContainerInfo("docker", name.lstrip("/")) if isinstance(name, str) and name.strip("/") else None


def _oci_config_paths(root: str, container_id: str) -> list[str]:
    return [
        f"{root}/run/containerd/io.containerd.runtime.v2.task/k8s.io/{container_id}/config.json",
        f"{root}/run/containerd/io.containerd.runtime.v2.task/moby/{container_id}/config.json",
        f"{root}/var/lib/containers/storage/overlay-containers/{container_id}/userdata/config.json",
        f"{root}/run/containers/storage/overlay-containers/{container_id}/userdata/config.json",
    ]


def _oci_name(root: str, ref: ContainerRef) -> ContainerInfo | None:
    for path in _oci_config_paths(root, ref.container_id):
        config = _read_json(path)
        if config is None:
            continue
        annotations = config.get("annotations")
        in_pod = _from_annotations(ref.runtime, annotations)
        if in_pod is not None:
            return in_pod
        if isinstance(annotations, dict):
            name = annotations.get("io.podman.annotations.name") or annotations.get("io.container.manager.name")
            if isinstance(name, str) and name:
                return ContainerInfo(ref.runtime, name)
    return None


def _podman_name(root: str, container_id: str) -> ContainerInfo | None:
    for path in (
        f"{root}/var/lib/containers/storage/overlay-containers/containers.json",
        f"{root}/run/containers/storage/overlay-containers/containers.json",
    ):
        text = read_text(path)
        if text is None:
            continue
        try:
            entries = json.loads(text)
        except ValueError:
            continue
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("id") == container_id:
                names = entry.get("names")
                if isinstance(names, list) and names and isinstance(names[0], str):
                    return ContainerInfo("podman", names[0])
    return None


def describe(root: str, ref: ContainerRef) -> ContainerInfo:
    """The container's name from its runtime's config under ``root``; its short id when unreadable."""
    root = "" if root == "/" else root.rstrip("/")
    found = _docker_name(root, ref.container_id) if ref.runtime == "docker" else None
    found = found or _oci_name(root, ref)
    if found is None and ref.runtime == "podman":
        found = _podman_name(root, ref.container_id)
    return found or ContainerInfo(ref.runtime, ref.short_id)


class ContainerNames:
    """Names each container once: a process's container by its ``/proc/PID/cgroup``."""

    def __init__(self, sys_root: str = "/", proc_root: str = "/proc") -> None:
        self._sys_root = sys_root
        self._proc_root = proc_root
        self._by_id: dict[str, ContainerInfo] = {}
        self._by_process: dict[tuple[int, int], ContainerInfo | None] = {}

    def of_process(self, pid: int, start_time: int = 0) -> ContainerInfo | None:
        """The container of ``pid`` (keyed with its start time, so a reused pid is read afresh)."""
        key = (pid, start_time)
        if key in self._by_process:
            return self._by_process[key]
        text = read_text(f"{self._proc_root}/{pid}/cgroup")
        ref = container_of_cgroup(text) if text is not None else None
        info = self.of_ref(ref) if ref is not None else None
        self._by_process[key] = info
        return info

    def of_ref(self, ref: ContainerRef) -> ContainerInfo:
        info = self._by_id.get(ref.container_id)
        if info is None:
            info = describe(self._sys_root, ref)
            self._by_id[ref.container_id] = info
        return info

    def forget_except(self, live: set[tuple[int, int]]) -> None:
        """Drops processes no longer alive, so the cache stays the size of the process table."""
        for key in [key for key in self._by_process if key not in live]:
            del self._by_process[key]
