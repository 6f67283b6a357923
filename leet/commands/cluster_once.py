"""``leet cluster``'s arguments, and ``leet cluster URL --once``: one instant query, printed.

``--once`` prints a table, a line per node: up or down, its target kinds,
GPUs, mean GPU utilisation, the hottest GPU, host memory, and how long ago
its newest good scrape was. ``--once --json`` prints one JSON object::

    {"prometheus": "http://prom:9090", "node_label": "instance", "time": 1767225600.0,
     "nodes": {"gpu-node-17": {"up": true, "since": 1767225400.0, "targets": ["leet", "dcgm"], "last_scrape": 1767225598.1,
                               "keys": {"gpu.0.gpu": 97.0, "memory_percent": 31.2, ...}}},
     "notes": []}

``since`` is when the node entered that state, as far as the answer tells
(for a node down, from its targets' ``up`` series: the last good scrape in
the range, else the first scrape there; the table's ``down 3 min``).
``keys`` holds the current value of every series leet cluster charts for the
node, by W&B key (``null`` for a value JSON cannot hold, NaN); a node that
is down has its last values and ``"up": false``. ``notes`` holds what
Prometheus warned about, or that no target of a known kind was found.
When Prometheus cannot be asked (unreachable, slow, an error answer) the
command prints one line on stderr and exits 1. Nothing here imports Textual.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence, TextIO

if TYPE_CHECKING:
    from leet.model.cluster import NodeState
    from leet.model.node_filter import LabelFilter
    from leet.sources.cluster import ClusterSource

MAX_RANGE = 30 * 24 * 3600.0


def _duration(flag: str, low: float, high: float) -> Any:
    def parse(text: str) -> float:
        from leet.model.state import parse_duration

        try:
            value = parse_duration(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{flag} must be from {low:g} s to {high:g} s, got {text!r}")
        return value

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="PROM_URL", help="the Prometheus server, e.g. http://prometheus:9090 (http://user:pass@host works too)")
    parser.add_argument("--selector", metavar="MATCHERS", help="label matchers added to every query, e.g. '{job=\"gpu\"}' or '{cluster=~\"a.*\"}'")
    parser.add_argument(
        "--node-label", choices=("instance", "hostname", "node"), default="instance",
        help="how nodes are named: the target's instance less its port (default), the host's own name, or a node label on the series",
    )
    parser.add_argument("--range", type=_duration("--range", 60.0, MAX_RANGE), default=3600.0, metavar="DURATION",
                        help="history loaded at start (default 1h; e.g. 30m, 6h)")
    parser.add_argument("--interval", type=_duration("--interval", 1.0, 3600.0), default=15.0, metavar="SECONDS",
                        help="seconds between queries (default 15)")
    parser.add_argument("--label", action="append", metavar="GLOBS", help="show only these nodes (comma-separated globs, e.g. 'gpu-node-1*')")
    parser.add_argument("--user", metavar="NAME", help="HTTP basic auth user; the password from --password-file or $LEET_PROMETHEUS_PASSWORD")
    parser.add_argument("--password-file", metavar="FILE", help="file holding the basic auth password")
    parser.add_argument("--token-file", metavar="FILE", help="file holding a bearer token (else $LEET_PROMETHEUS_TOKEN)")
    parser.add_argument("--timeout", type=_duration("--timeout", 0.1, 300.0), default=10.0, metavar="SECONDS",
                        help="seconds to wait for an answer (default 10; the history gets three times that)")
    parser.add_argument("--once", action="store_true", help="ask once, print every node and exit (no screen)")
    parser.add_argument("--json", action="store_true", help="with --once: print JSON")


def make_source(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> ClusterSource:
    """The source the arguments describe; ValueError, one line, for a bad URL, selector or credential."""
    from leet.model.store import Store
    from leet.sources.cluster import ClusterSource
    from leet.sources.cluster_queries import QueryPlan, parse_selector
    from leet.sources.prometheus_api import PrometheusClient, endpoint

    where = endpoint(args.url, user=args.user, password_file=args.password_file, token_file=args.token_file, environ=environ)
    plan = QueryPlan(parse_selector(args.selector), args.node_label)
    client = PrometheusClient(where, timeout=args.timeout)
    return ClusterSource(Store(), client, plan=plan, interval=args.interval, range_s=args.range, load_history=not args.once, last_values=args.once)


# -- output ---------------------------------------------------------------------------


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None  # JSON has no NaN


def as_json(source: ClusterSource, nodes: Sequence[NodeState], now: float) -> str:
    from leet.model.keys import natural_key

    payload = {
        "prometheus": source.client.display_url,
        "node_label": source.plan.node_label,
        "time": round(now, 3),
        "nodes": {
            state.node: {
                "up": state.up,
                "since": state.since,
                "targets": list(state.targets),
                "last_scrape": state.last_scrape,
                "keys": {key: _number(value) for key, value in sorted(source.values(state.node).items(), key=lambda kv: natural_key(kv[0]))},
            }
            for state in nodes
        },
        "notes": list(source.status().notes),
    }
    return json.dumps(payload, separators=(", ", ": "))


def _figure(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{value:.0f}{unit}"


def _age(last: float | None, now: float) -> str:
    if last is None:
        return "-"
    seconds = max(0.0, now - last)
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min ago"
    return f"{seconds / 3600:.1f} h ago"


def _state(state: NodeState, now: float) -> str:
    if state.up:
        return "up"
    return "down" if state.since is None else f"down {_age(state.since, now).removesuffix(' ago')}"


def as_table(source: ClusterSource, nodes: Sequence[NodeState], now: float) -> str:
    from leet.common.text import escaped

    rows = [("NODE", "STATE", "TARGETS", "GPUS", "GPU UTIL", "HOTTEST GPU", "MEMORY", "SCRAPED")]
    for state in nodes:
        hottest = "-" if state.hottest_gpu_temp is None else f"{state.hottest_gpu_temp:.0f} °C (gpu {escaped(state.hottest_gpu or '?')})"
        rows.append((
            escaped(state.node), _state(state, now), ",".join(state.targets) or "-", str(state.gpus) if state.gpus else "-",
            _figure(state.gpu_util_mean, " %"), hottest, _figure(state.memory_percent, " %"), _age(state.last_scrape, now),
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    up = sum(1 for state in nodes if state.up)
    lines = [f"Prometheus {escaped(source.client.display_url)}: {len(nodes)} node{'s' if len(nodes) != 1 else ''}, {up} up"]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines += [f"! {escaped(note)}" for note in source.status().notes]
    return "\n".join(lines)


def print_once(
    source: ClusterSource, labels: LabelFilter | None = None, *, json_output: bool = False,
    out: TextIO | None = None, err: TextIO | None = None,
) -> int:
    """One round (one instant query); 1 with one line on ``err`` when Prometheus gives no answer."""
    from leet.common.text import escaped

    source.step()
    status = source.status()
    if not status.reachable:
        print(f"leet: {escaped(status.message)}", file=err or sys.stderr)
        return 1
    now = time.time()
    nodes = [state for state in source.nodes() if labels is None or labels.matches(state.node)]
    text = as_json(source, nodes, now) if json_output else as_table(source, nodes, now)
    (out or sys.stdout).write(text + "\n")
    return 0
