"""``leet serve`` on three nodes, read back by ``leet cluster`` through a real Prometheus.

Everything is real and on loopback (``cluster_fleet``): Debian's
``prometheus`` scraping every second, a ``prometheus-node-exporter``, the
DCGM-exporter fixture page, and three ``leet serve`` processes (nodeA, nodeB,
nodeC, each with its own ``--label`` and made-up NVIDIA GPUs). ``leet
cluster --node-label node`` must list each node with the values its own page
served, see a stopped node go down and a new one join, and its screen (tmux,
160×48) must answer the keys people press. The tests share one fleet and run
in file order: the last one stops nodeC and adds nodeD. A missing server
binary skips, unless ``LEET_REQUIRE_SERVERS`` is set.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from typing import Iterator

import pytest
from cluster_fleet import DGX, NO_CONFIG, ROOT, STORAGE, Fleet, Page, Serve
from terminal import Terminal, chart_panels
from test_serve import promtool_check

from leet.export.names import series

SLOW = 30.0  # seconds; bounds a wait on a loaded machine, which ends as soon as its condition holds
GPUS = {"nodeA": 2, "nodeB": 4, "nodeC": 1}
NEWCOMER = ("nodeD", 2)
NODE_EXPORTER_KEYS = r"cpu\.percent|memory_percent|memory\.used|disk\./\.usage(Percent|GB)|disk\.[^/]+\.(readBps|writeBps)|network\.(recvBps|sentBps)"
SHADES = "░▒▓█×?"  # the heatmap's cells: four shades, down, no reading
TABLE_WIDTH = 46  # the node table's share of a 160-column screen, its border included


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    made = Fleet(tmp_path_factory.mktemp("fleet")).start(GPUS)  # closes what it started if it fails
    try:
        yield made
    finally:
        made.close()


def leet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leet", *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env={**os.environ, **NO_CONFIG},
    )


def once_json(fleet: Fleet) -> dict:
    done = leet("cluster", fleet.prometheus_url, "--node-label", "node", "--once", "--json")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout)


# -- leet cluster --once --json ----------------------------------------------------------------


def wandb_units(page: Page, node: str) -> dict[str, float]:
    """A page's values in W&B's units, the units leet cluster gives them back in."""
    return {key: value / series(key, node).scale for key, value in page.values.items()}


def mismatches(keys: dict[str, float | None], expected: dict[str, float]) -> list[str]:
    def same(got: float | None, want: float) -> bool:
        return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)

    return [f"{key}: {keys.get(key)!r} != {want!r}" for key, want in expected.items() if not same(keys.get(key), want)]


def scraped_page(serve: Serve, keys: dict[str, float | None]) -> tuple[Page | None, list[str]]:
    """The page of ``serve`` whose every value ``keys`` holds (one sweep, as Prometheus scraped it), or the nearest miss."""
    serve.look()  # the page of this sweep too
    nearest: tuple[Page | None, list[str]] = (None, ["no page seen"])
    for page in reversed(serve.pages[:]):  # a copy: the fleet's watcher appends
        wrong = mismatches(keys, wandb_units(page, serve.label))
        if not wrong:
            return page, []
        if nearest[0] is None or len(wrong) < len(nearest[1]):
            nearest = (page, wrong)
    return nearest


def gpu_indices(keys: dict[str, float | None]) -> set[int]:
    return {int(key.split(".")[1]) for key in keys if re.fullmatch(r"gpu\.\d+\.gpu", key)}


def test_once_json_lists_every_node_with_what_its_page_served(fleet):
    # The pages are watched a few times a sweep; one scraped in a stall of this machine may be missed, so ask again.
    for _attempt in range(3):
        printed = once_json(fleet)
        found = {label: scraped_page(fleet.serves[label], printed["nodes"].get(label, {}).get("keys", {})) for label in GPUS}
        if all(page is not None and not wrong for page, wrong in found.values()):
            break
    nodes = printed["nodes"]
    assert printed["prometheus"] == fleet.prometheus_url and printed["node_label"] == "node" and printed["notes"] == []
    assert set(nodes) == {"nodeA", "nodeB", "nodeC", STORAGE, DGX}
    assert {name: (node["up"], node["targets"]) for name, node in nodes.items()} == {
        "nodeA": (True, ["leet", "node"]),  # its node_exporter's instance, nodeA:9100, less the port
        "nodeB": (True, ["leet"]),
        "nodeC": (True, ["leet"]),
        STORAGE: (True, ["node"]),
        DGX: (True, ["dcgm"]),
    }
    assert all(node["last_scrape"] > printed["time"] - 10 for node in nodes.values())

    for label, gpus in GPUS.items():
        keys = nodes[label]["keys"]
        page, wrong = found[label]
        assert page is not None and not wrong, f"{label}: no page it served has these values: {wrong[:10]}"
        # Every key of the page, and the host's CPU as the mean of its cores; besides, on nodeA, only
        # what its node_exporter gives and leet serve does not (a disk leet serve leaves out, say).
        extra = set(keys) - set(page.values) - {"cpu.percent"}
        assert set(page.values) | {"cpu.percent"} <= set(keys), label
        assert not extra if label != "nodeA" else all(re.fullmatch(NODE_EXPORTER_KEYS, key) for key in extra), extra
        cores = [value for key, value in page.values.items() if re.fullmatch(r"cpu\.\d+\.cpu_percent", key)]
        assert keys["cpu.percent"] == pytest.approx(sum(cores) / len(cores))
        assert gpu_indices(keys) == set(range(gpus)), label
        for gpu in range(gpus):
            assert 0 <= keys[f"gpu.{gpu}.gpu"] <= 100 and 45 <= keys[f"gpu.{gpu}.temp"] <= 70
            assert 1500 <= keys[f"gpu.{gpu}.smClock"] <= 1980  # MHz again, though the page says hertz
            assert 250 <= keys[f"gpu.{gpu}.powerWatts"] <= 650
        assert 0 < keys["memory_percent"] < 100 and keys["network.recv"] >= 0 and 0 < keys["disk./.usagePercent"] < 100

    storage = nodes[STORAGE]["keys"]
    # Its root file system and network interfaces may be ones node_exporter leaves out (overlay, none but lo).
    assert {"cpu.percent", "memory_percent", "memory.used"} <= set(storage) and all(re.fullmatch(NODE_EXPORTER_KEYS, key) for key in storage), storage
    assert 0 <= storage["cpu.percent"] <= 100 and 0 < storage["memory_percent"] < 100 and storage["memory.used"] > 0
    dgx = nodes[DGX]["keys"]
    # The fixture page's two H100s: 97 % and 0 % busy, 58 °C and 44 °C.
    assert (dgx["gpu.0.gpu"], dgx["gpu.1.gpu"], dgx["gpu.0.temp"], dgx["gpu.1.temp"]) == (97.0, 0.0, 58.0, 44.0)


def test_a_labelled_page_passes_promtool(fleet):
    text = fleet.serves["nodeB"].pages[-1].text
    assert 'leet_gpu_utilization_percent{gpu="3",node="nodeB",wandb_key="gpu.3.gpu"}' in text
    checked = promtool_check(text)
    assert checked.returncode == 0 and not checked.stdout.strip() and not checked.stderr.strip(), checked.stdout + checked.stderr


# -- the screen ---------------------------------------------------------------------------------


ROW = re.compile(r"(\S+)\s+(up|down(?: \S+)?)\s+(\S+)\s+(\S+)")


def table_rows(screen: str) -> dict[str, tuple[str, str, str]]:
    """The node table's rows: ``{node: (state, GPU%, MEM%)}``, in screen order."""
    rows: dict[str, tuple[str, str, str]] = {}
    for line in screen.splitlines()[3:]:
        found = ROW.match(line[:TABLE_WIDTH].rstrip("│ "))
        if found:
            node, state, util, memory = found.groups()
            rows[node] = (state, util, memory)
    return rows


def table_heading(screen: str) -> str:
    return next(line[:TABLE_WIDTH] for line in screen.splitlines() if line.startswith("NODE"))


def heatmap(screen: str) -> str:
    """The heatmap's rows: right of the node table, above the first chart."""
    lines = []
    for line in screen.splitlines()[1:]:
        right = line[TABLE_WIDTH:]
        if "╭" in right:
            break
        lines.append(right)
    return "\n".join(lines)


def heat_cells(screen: str, node: str) -> str:
    """The shade cells after ``node``'s name in the heatmap (two a GPU), or ""."""
    found = re.search(rf"(?<!\S){re.escape(node)} ([{SHADES}]+)", heatmap(screen))
    return found.group(1) if found else ""


def shows_nodes(nodes: dict[str, str], gpus: dict[str, int]):
    """A screen condition: the table lists ``{node: state}``, and the heatmap each GPU node's GPUs."""

    def condition(screen: str) -> bool:
        rows = table_rows(screen)
        states = {node: rows[node][0].split()[0] for node in nodes if node in rows}
        return states == nodes and all(len(heat_cells(screen, node)) == 2 * count for node, count in gpus.items())

    condition.__name__ = f"nodes {nodes} with GPUs {gpus}"
    return condition


def start_cluster(leet_terminal, fleet: Fleet) -> Terminal:
    return leet_terminal("cluster", fleet.prometheus_url, "--node-label", "node", "--interval", "1", "--range", "5m")


EVERY_NODE_UP = {"nodeA": "up", "nodeB": "up", "nodeC": "up", STORAGE: "up", DGX: "up"}


def charted(screen: str) -> set[str]:
    """The titles of the charts with something plotted."""
    return {panel.title for panel in chart_panels(screen) if panel.has_data}


def utilisations(screen: str) -> list[float]:
    """The GPU% column top to bottom; a node without GPUs (``-``) counts as below every figure."""
    return [float(util) if util != "-" else -1.0 for _, util, _ in table_rows(screen).values()]


def test_the_screen_shows_every_node_and_answers_the_keys(fleet, leet_terminal):
    terminal = start_cluster(leet_terminal, fleet)
    screen = terminal.wait_for(shows_nodes(EVERY_NODE_UP, {**GPUS, DGX: 2}), timeout=SLOW)
    header = screen.splitlines()[0]
    assert f"leet cluster {fleet.prometheus_url} · 5 nodes · 5 up" in header and "down" not in header, header
    assert "every 1s" in header
    assert list(table_rows(screen)) == ["dgx-7", "nodeA", "nodeB", "nodeC", "storage-1"]  # natural order, by name
    assert table_heading(screen).startswith("NODE▲")
    assert "GPU utilisation · 4 nodes, 9 GPUs · 1 without GPUs" in heatmap(screen)
    assert heat_cells(screen, DGX) == "██░░"  # 97 % and 0 %
    # Charts with a series per node, the history of --range first.
    terminal.wait_for(lambda s: {"CPU Core (%)", "GPU Temp (°C)"} <= charted(s), timeout=SLOW, what="the CPU and GPU charts drawn")

    # m: the heatmap steps through its figures, and back.
    for title, scale in (("GPU temperature", "30°C"), ("GPU memory", "0%"), ("GPU power", "0 W"), ("GPU utilisation", "0%")):
        terminal.press("m")
        screen = terminal.wait_for(lambda s, title=title: f"{title} · 4 nodes" in heatmap(s), timeout=SLOW, what=f"the {title} heatmap")
        assert f" {scale} ░░▒▒▓▓██ " in heatmap(screen)

    # F6: the sort chooser; GPU% is the fourth column; the busiest node first.
    terminal.press("F6")
    terminal.wait_for(lambda s: "Sort nodes by" in s and "mean GPU utilisation" in s, timeout=SLOW, what="the sort chooser")
    terminal.press("Down", "Down", "Down", "Enter")
    screen = terminal.wait_for(
        lambda s: "Sort nodes by" not in s and "GPU%▼" in table_heading(s) and len(table_rows(s)) == 5 and utilisations(s) == sorted(utilisations(s), reverse=True),
        timeout=SLOW, what="nodes by GPU%, busiest first",
    )
    assert list(table_rows(screen))[-1] == STORAGE  # no GPUs: last

    # > and <: the column to the right (MEM%), then back to the left, three times, to NODE.
    terminal.press(">")
    terminal.wait_for(lambda s: "MEM%▼" in table_heading(s), timeout=SLOW, what="nodes by MEM%")
    terminal.press("<", "<", "<")
    screen = terminal.wait_for(lambda s: table_heading(s).startswith("NODE▲"), timeout=SLOW, what="nodes by name again")
    assert list(table_rows(screen)) == ["dgx-7", "nodeA", "nodeB", "nodeC", "storage-1"]

    # l: the node picker lists every node, all shown; escape leaves it as it was.
    terminal.press("l")
    # The picker's title can be on screen a frame before all its rows are.
    terminal.wait_for(lambda s: "Node labels (5)" in s and all(f"[x] {node}" in s for node in EVERY_NODE_UP), timeout=SLOW, what="every node listed and shown")
    terminal.press("Escape")
    screen = terminal.wait_for(lambda s: "Node labels" not in s and shows_nodes(EVERY_NODE_UP, GPUS)(s), timeout=SLOW, what="the picker closed")
    assert "labels" not in screen.splitlines()[0]  # no node filter

    terminal.press("q")
    assert terminal.wait_exit(SLOW) == 0


# -- a node stops, another joins -------------------------------------------------------------------


def test_a_stopped_node_goes_down_and_a_new_one_joins_without_a_restart(fleet, leet_terminal):
    terminal = start_cluster(leet_terminal, fleet)
    terminal.wait_for(shows_nodes(EVERY_NODE_UP, GPUS), timeout=SLOW)

    fleet.kill("nodeC")
    down = {**EVERY_NODE_UP, "nodeC": "down"}
    screen = terminal.wait_for(shows_nodes(down, GPUS), timeout=SLOW)
    assert "5 nodes · 4 up · 1 down" in screen.splitlines()[0]
    assert heat_cells(screen, "nodeC") == "××"  # its GPU, down
    _, util, memory = table_rows(screen)["nodeC"]
    assert util != "-" and memory != "-"  # its last figures stay

    printed = once_json(fleet)
    assert {name: node["up"] for name, node in printed["nodes"].items()} == {name: state == "up" for name, state in down.items()}
    assert printed["nodes"]["nodeC"]["targets"] == ["leet"]

    label, gpus = NEWCOMER
    fleet.add(label, gpus)
    joined = {**down, label: "up"}
    screen = terminal.wait_for(shows_nodes(joined, {**GPUS, label: gpus}), timeout=SLOW)
    assert "6 nodes · 5 up · 1 down" in screen.splitlines()[0]
    assert not terminal.exited()
    assert once_json(fleet)["nodes"][label]["up"] is True

    terminal.press("q")
    assert terminal.wait_exit(SLOW) == 0


def test_once_json_gives_a_node_that_is_down_its_last_values(fleet):
    # leet/commands/cluster_once.py: "a node that is down has its last values and "up": false".
    serve = fleet.serves["nodeC"]
    fleet.kill("nodeC")  # already stopped when the test above ran
    fleet.wait_for_query(f'up{{instance="{serve.address}"}} == 0', "Prometheus to see nodeC down")
    node = once_json(fleet)["nodes"]["nodeC"]
    assert node["up"] is False
    _, wrong = scraped_page(serve, node["keys"])
    if wrong:  # the watcher can miss the last page if this machine stalled then: Prometheus's own last samples are the page it scraped
        wrong = mismatches(node["keys"], wandb_units(fleet.last_scraped(serve), serve.label))
    assert not wrong, f"nodeC is down; its last values are not those Prometheus last scraped of it: {wrong[:5]} (keys: {node['keys']})"


# -- leet watch over the cluster (last: it stops nodeD) ----------------------------------------------


def test_leet_watch_tells_a_node_going_down_and_rules_per_node(fleet, tmp_path):
    from alert_servers import wait_until

    out = tmp_path / "watch.out"
    command = [
        sys.executable, "-m", "leet", "watch", "--cluster", fleet.prometheus_url, "--cluster-node-label", "node", "--interval", "1",
        "--rule", "gpu.*.gpu/l:node[AD] >= 0", "--node-lost-after", "5", "--json", "--state", str(tmp_path / "ledger.json"),
    ]
    with out.open("wb") as sink:
        watch = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **NO_CONFIG})
    try:
        def lines() -> list[dict]:
            return [json.loads(line) for line in out.read_text().splitlines() if line.startswith("{")]

        label, gpus = NEWCOMER
        expected = {("nodeA", f"gpu.{index}") for index in range(GPUS["nodeA"])} | {(label, f"gpu.{index}") for index in range(gpus)}
        assert wait_until(lambda: {(line["label"], line["key"].rsplit(".", 1)[0]) for line in lines()} >= expected, SLOW), out.read_text()
        assert {line["label"] for line in lines()} == {"nodeA", label}  # the rule's label glob: nodeA and nodeD only
        assert all(line["kind"] == "threshold" and line["source"] == fleet.prometheus_url for line in lines())
        # nodeC was down before leet watch started: not news. nodeD goes down now, for good: news once it has been down
        # 5 s (a target of this loaded machine missing a scrape or two is not).
        fleet.kill(label)
        assert wait_until(lambda: any(line["kind"] == "node-lost" for line in lines()), SLOW), out.read_text()
        lost = [line for line in lines() if line["kind"] == "node-lost"]
        assert [line["label"] for line in lost] == [label] and lost[0]["title"] == f"node {label} down"
    finally:
        watch.terminate()
        assert watch.wait(15) == 0
