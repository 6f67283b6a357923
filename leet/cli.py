"""Command line: ``leet``, ``leet symon``.

``--help`` and ``--version`` import nothing heavy (no Textual, no psutil):
they must answer instantly on a loaded GPU node. The hub starts before the
UI is imported, so the first sample is ready by the time the first frame is.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterator, Literal, NoReturn, Sequence

from leet import __version__

if TYPE_CHECKING:  # the modules themselves load late: --help must stay light
    from leet.config import Config
    from leet.config.remembered import Remembering
    from leet.discovery.layout import RunLayout
    from leet.model.node_filter import LabelFilter
    from leet.sources.recorder import SessionRecorder
    from leet.sources.run import RunSource
    from leet.sources.shared import SharedRunSource
    from leet.sources.workspace import WorkspaceSource
    from leet.ui.app import LeetApp

DESCRIPTION = "A fast full-screen terminal monitor for machine-learning hosts and W&B runs."


class _Parser(argparse.ArgumentParser):
    """argparse that makes what it echoes back (unknown arguments, bad values) inert on a terminal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}  # subcommand → its parser, which parses its own arguments

    def error(self, message: str) -> NoReturn:
        from leet.common.text import escaped

        super().error(escaped(message))


def say(message: object) -> None:
    """One line to stderr, made inert: paths and messages may hold escape sequences."""
    from leet.common.text import escaped

    print(f"leet: {escaped(str(message))}", file=sys.stderr)


def _positive_seconds(text: str) -> float:
    from leet.config import interval_flag

    return interval_flag(text)


def _pid(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"not a process id: {text!r}")
    return value


COMMANDS = ("symon", "serve", "cluster", "watch", "inspect")


def build_parser() -> _Parser:
    parser = _Parser(
        prog="leet",
        description=DESCRIPTION,
        usage="leet [-h] [--version] {symon,serve,cluster,watch,inspect} ... | leet PATH [--label GLOBS]",
        epilog="leet PATH opens a W&B run (a run-*.wandb file or an offline run directory; every writer of a shared-mode run) "
        "or a folder of runs. --label rank0,rank3 shows only those nodes (globs allowed).",
    )
    parser.add_argument("--version", action="version", version=f"leet {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    symon = commands.add_parser("symon", prog="leet symon", help="live system monitor for this host", description="Live CPU, memory, disk, network and accelerator metrics for this host.")
    symon.add_argument("--interval", type=_positive_seconds, metavar="SECONDS", help="seconds between samples (default 2; '500ms' works too)")
    symon.add_argument("--pid", type=_pid, help="report process metrics (cpu, proc.*) for this process")
    symon.add_argument("--tree", action="store_true", default=None, help="with --pid: include all descendants, like x_stats_track_process_tree")
    symon.add_argument("--disk-path", dest="disk_paths", action="append", metavar="PATH", help="disk path to watch (repeatable; default /)")
    symon.add_argument("--gpu-ids", metavar="IDS", help="only these GPUs (NVIDIA, AMD), e.g. 0,2 (like x_stats_gpu_device_ids; default all)")
    symon.add_argument("--label", help="tag every metric with this node label (/l:LABEL), as shared-mode runs do")
    symon.add_argument("--no-mouse", dest="mouse", action="store_false", default=None, help="do not capture the mouse (cheaper over SSH)")
    symon.add_argument("--theme", help="Textual theme name (e.g. textual-dark, nord, gruvbox)")
    _add_ascii(symon)
    _add_remember(symon)
    symon.add_argument("--grid", metavar="ROWSxCOLS", help="chart grid size, e.g. 3x3")
    symon.add_argument("--config", metavar="FILE", help="config file (default: $LEET_CONFIG or the user config dir)")
    symon.add_argument("--no-cgroup", dest="use_cgroup", action="store_false", help="ignore cgroup v2 limits in percentages")
    symon.add_argument(
        "--openmetrics", action="append", metavar="NAME=URL",
        help="scrape this OpenMetrics/Prometheus page as openmetrics.NAME.* (repeatable; like x_stats_open_metrics_endpoints)",
    )
    symon.add_argument(
        "--openmetrics-filter", action="append", metavar="REGEX",
        help="keep only metrics whose ENDPOINT.METRIC this regex finds (repeatable; default: all gauges and counters)",
    )
    symon.add_argument(
        "--openmetrics-header", action="append", metavar="'NAME: VALUE'",
        help="HTTP header for every endpoint and --dcgm-exporter, e.g. 'Authorization: Bearer TOKEN' (repeatable)",
    )
    symon.add_argument(
        "--dcgm-exporter", metavar="URL",
        help="GPUs from DCGM-exporter series in Prometheus: http://HOST:9090/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP (like x_stats_dcgm_exporter)",
    )
    symon.add_argument("--once", action="store_true", help="take one sweep of every collector, print it and exit (byte rates, which one sweep cannot measure, are left out)")
    symon.add_argument("--backends", action="store_true", help="probe every backend, sweep once, and say which are present, absent, failing or hung, and why")
    symon.add_argument("--json", action="store_true", help="with --once or --backends: print JSON")
    symon.add_argument("--record", metavar="PATH", help="record the session as a W&B run: a run directory to create (PATH/run-ID.wandb) or a .wandb file")
    symon.add_argument("--record-max", metavar="SIZE", help="with --record: stop recording at this file size (default 1G; e.g. 500M)")
    serve = _serve_parser(commands.add_parser("serve", prog=SERVE_PROG, help="serve this host's metrics to Prometheus", description=SERVE_DESCRIPTION))
    parser.commands["cluster"] = _cluster_parser(commands)
    parser.commands["watch"] = _watch_parser(commands.add_parser("watch", prog="leet watch", help="send alerts: runs finished, failed, crashed, wandb.alert(), nodes lost, thresholds"))
    inspect = commands.add_parser("inspect", prog="leet inspect", help="print the records of a W&B run file", description="Print the records of a W&B run file (.wandb) or run directory; works in pipes.")
    from leet.commands.inspect_run import add_arguments

    add_arguments(inspect)
    parser.commands.update(symon=symon, serve=serve, inspect=inspect)
    return parser


SERVE_PROG = "leet serve"
SERVE_DESCRIPTION = "Sweep this host's collectors headless and serve every metric at /metrics for Prometheus."


def _serve_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from leet.commands.serve import add_arguments

    add_arguments(parser)
    return parser


def _watch_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    from leet.commands.watch import DESCRIPTION, add_arguments

    parser.description = DESCRIPTION
    add_arguments(parser)
    return parser


def _add_ascii(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ascii", action=argparse.BooleanOptionalAction, default=None,
        help="draw with ASCII characters only (default: when the locale's character set is not UTF-8, e.g. LANG=C)",
    )


def _add_remember(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-remember", dest="remember", action="store_false", default=None,
        help="neither restore nor save the remembered layout (layout.json in the user state dir)",
    )


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    from leet.config import parse_grid

    grid = parse_grid(args.grid, "--grid") if args.grid else {}
    return {
        **_exporter_overrides(args),
        "interval": args.interval,
        "pid": args.pid,
        "track_tree": args.tree,
        "disk_paths": tuple(args.disk_paths) if args.disk_paths else None,
        "label": args.label,
        "gpu_ids": args.gpu_ids,
        "mouse": args.mouse,
        "theme": args.theme,
        "grid_rows": grid.get("rows"),
        "grid_cols": grid.get("cols"),
        "ascii": args.ascii,
        "remember": args.remember,
    }


def _exporter_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The OpenMetrics and DCGM flags as settings; a malformed one is a ConfigError naming the flag."""
    endpoints, filters, headers = args.openmetrics, args.openmetrics_filter, args.openmetrics_header
    if not (endpoints or filters or headers):
        return {"dcgm_exporter": args.dcgm_exporter}
    from collectors.openmetrics import parse_endpoint_arg, parse_header_arg
    from leet.config import ConfigError

    def parsed(texts: list[str] | None, parse: Callable[[str], tuple[str, str]], flag: str) -> tuple[tuple[str, str], ...] | None:
        try:
            return tuple(parse(text) for text in texts) if texts else None
        except ValueError as error:
            message = str(error)  # some messages name the flag already, others only the value
            raise ConfigError(message if message.startswith(flag) else f"{flag}: {message}") from None

    return {
        "open_metrics_endpoints": parsed(endpoints, parse_endpoint_arg, "--openmetrics"),
        "open_metrics_filters": tuple(filters) if filters else None,
        "open_metrics_http_headers": parsed(headers, parse_header_arg, "--openmetrics-header"),
        "dcgm_exporter": args.dcgm_exporter,
    }


def _load_config(args: argparse.Namespace):
    from pathlib import Path

    from leet.config import load, resolve_ascii

    return resolve_ascii(load(_overrides(args), path=Path(args.config) if args.config else None, must_exist=bool(args.config)))


def _make_hub(config, use_cgroup: bool, warmup: float = 0.2):
    """Every collector: the host's, every accelerator backend, and the exporters the settings name.

    The default ``warmup`` is a short first span: rates and percentages need
    two readings, and the first one should be on screen with the first frame.
    """
    from collectors.accelerators import accelerator_collectors, exporter_collectors
    from collectors.host import host_collectors
    from collectors.hub import Hub

    collectors = host_collectors(pid=config.pid, disk_paths=config.disk_paths, track_tree=config.track_tree, use_cgroup=use_cgroup)
    # GPU use is attributed to the watched process and everything it started (W&B mirrors the same set).
    collectors += accelerator_collectors(gpu_ids=config.gpu_ids, pid=config.pid, track_tree=True)
    collectors += exporter_collectors(
        config.open_metrics_endpoints, config.open_metrics_filters, config.open_metrics_http_headers, config.dcgm_exporter
    )
    return Hub(collectors, interval=config.interval, label=config.label, warmup=warmup)


def run_symon(args: argparse.Namespace) -> int:
    from leet.config import ConfigError

    try:
        config = _load_config(args)
    except ConfigError as error:
        say(error)
        return 2
    if args.json and not (args.once or args.backends):
        say("--json goes with --once or --backends")
        return 2
    if args.once and args.backends:
        say("--once and --backends are two different reports: give one")
        return 2
    if args.tree and config.pid is None:
        say("--tree goes with --pid: it adds the descendants of the process --pid watches")
        return 2
    if config.pid is not None and not _process_exists(config.pid):
        where = "--pid" if args.pid is not None else f"pid in {config.source}"
        say(f"{where} {config.pid}: no such process")
        return 2
    if args.backends:
        from leet.commands.backends import print_backends

        # Which backends answer is the question, not their rates: no warmup.
        return print_backends(_make_hub(config, args.use_cgroup, warmup=0.0), json_output=args.json)
    remembering = None
    if not args.once:
        from leet.config.remembered import remembered

        config, remembering = remembered(config)
    if (args.record or args.record_max) and (args.once or args.backends):
        say("--record goes with the live monitor, not --once or --backends")
        return 2
    if args.record_max and not args.record:
        say("--record-max goes with --record")
        return 2
    recorder = _start_recording(args) if args.record else None
    if recorder is False:
        return 2
    hub = _make_hub(config, args.use_cgroup)
    if args.once:
        from leet.commands.once import print_once

        return print_once(hub, json_output=args.json)
    if recorder:
        hub.subscribe(recorder.ingest)
    from leet.model.store import Store
    from leet.sources.live import LiveSource

    # A few dozen host series: each takes its whole bound (about 160 KiB) at once.
    source = LiveSource(Store(preallocate=True), hub)
    source.start()  # sample while Textual imports; the app stops it
    from leet.ui.app import LeetApp

    app = LeetApp(source, config, remembering=remembering)
    if recorder:
        recorder.on_stop = lambda reason: _tell_from_thread(app, reason)
    code = _run_app(app)
    if recorder:
        recorder.finish(code)
        if recorder.stopped_because:
            say(recorder.stopped_because)
    return code


def _tell_from_thread(app: LeetApp, message: str) -> None:
    """A warning on screen, from a thread other than the screen's; none once the app has gone."""
    with contextlib.suppress(RuntimeError):
        app.call_from_thread(app.notify, message, severity="warning", timeout=8, markup=False)


def _start_recording(args: argparse.Namespace) -> SessionRecorder | Literal[False]:
    """The session's recorder, or False after saying why the file cannot be made."""
    from leet.sources.recorder import DEFAULT_MAX_BYTES, SessionRecorder, parse_size

    try:
        max_bytes = parse_size(args.record_max) if args.record_max else DEFAULT_MAX_BYTES
    except ValueError as error:
        say(f"--record-max: {error}")
        return False
    try:
        return SessionRecorder(args.record, max_bytes=max_bytes)
    except OSError as error:
        say(f"--record: {_os_error(error, args.record)}")
        return False


def _process_exists(pid: int) -> bool:
    """Whether a process ``pid`` is there now (one we may not signal counts)."""
    import os

    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except OSError:  # PermissionError: it exists, and belongs to someone else
        return True
    return True


def _run_app(app: LeetApp) -> int:
    app.run(mouse=app.config.mouse)
    return app.return_code or 0


def _run_parser() -> argparse.ArgumentParser:
    from leet.model.progress import total_argument

    parser = _Parser(prog="leet PATH", description="Open a W&B run (a run-*.wandb file or a run directory) or a folder of runs.")
    parser.add_argument("path", metavar="PATH")
    parser.add_argument("--label", action="append", metavar="GLOBS", help="shared runs: show only these node labels (comma-separated globs, e.g. rank0,rank3 or 'rank[0-3]')")
    parser.add_argument("--crash-after", metavar="DURATION", help="a run with no exit record and no write for this long is presumed crashed (default 10m)")
    parser.add_argument(
        "--images", choices=("auto", "blocks", "sixel", "kitty", "off"),
        help="how the media pane (3) draws logged images (default auto: Sixel or Kitty where the terminal has it, else half-blocks)",
    )
    parser.add_argument("--total", type=total_argument, metavar="KEY=N", help="the ETA counts to this (e.g. max_steps=5000 or epoch=10) instead of the config's total")
    _add_ascii(parser)
    _add_remember(parser)
    return parser


def run_file(path: str, args: Sequence[str]) -> int:
    """``leet PATH``: a run (a ``.wandb`` file or a run directory) or a folder of runs."""
    from leet.config import ConfigError, load, resolve_ascii
    from leet.config.remembered import remembered
    from leet.discovery.layout import resolve
    from leet.model.node_filter import LabelFilter
    from leet.model.store import Store
    from leet.runfile.reader import RunFileError
    from leet.sources.workspace import WorkspaceSource

    options = _run_parser().parse_args([path, *args])
    labels = LabelFilter.parse(options.label)
    try:
        config = resolve_ascii(load({"crash_after": options.crash_after, "ascii": options.ascii, "images": options.images, "remember": options.remember}))
        config, remembering = remembered(config)
        layout = resolve(path)  # what the path names is decided here, once
        if layout.kind == "workspace":
            return _show_workspace(WorkspaceSource(path, Store(), crash_after=config.crash_after), config, labels, remembering)
        run = _open_run_checked(layout, config.crash_after)
    except (ConfigError, RunFileError) as error:  # RunNotFound is a RunFileError
        say(error)
        return 2
    except OSError as error:  # unreadable, or not a regular file: said plainly, never a traceback
        say(_os_error(error, path))
        return 2
    return _show_run(run, config, labels, remembering, options.total)


def _open_run_checked(layout: RunLayout, crash_after: float) -> RunSource | SharedRunSource:
    """Every writer of the run ``layout`` names; a file that is no run file is an error now, not a blank screen."""
    from leet.model.store import Store
    from leet.runfile.files import read_regular
    from leet.runfile.reader import HEADER_SIZE, check_header
    from leet.sources.shared import open_layout

    run = open_layout(layout, Store(), crash_after=crash_after)
    head = read_regular(run.path, HEADER_SIZE)
    if head:  # an empty file is a run whose writer has flushed nothing yet: shown as such
        check_header(head, run.path)
    return run


def _os_error(error: OSError, path: str) -> str:
    """``PATH: reason``; a ``NotRegularFile`` already says both."""
    from leet.runfile.files import NotRegularFile

    if isinstance(error, NotRegularFile) or not error.strerror:
        return str(error)
    return f"{error.filename or path}: {error.strerror}"


def _show_workspace(workspace: WorkspaceSource, config: Config, labels: LabelFilter, remembering: Remembering | None) -> int:
    try:
        workspace.refresh()  # list the runs before the first frame
    except OSError as error:  # the folder cannot be listed now: the header says so, and the scans go on
        workspace.fail(error)
    workspace.start()  # the app stops it
    from leet.ui.app import LeetApp
    from leet.ui.screens.workspace import WorkspaceScreen

    return _run_app(LeetApp(workspace, config, screen=lambda: WorkspaceScreen(workspace, labels=labels), remembering=remembering))


def _show_run(run: RunSource | SharedRunSource, config: Config, labels: LabelFilter, remembering: Remembering | None, total: Any = None) -> int:
    run.hold_after_first_batch()  # the rest loads once the first frame is up
    run.start()  # the app stops it
    from leet.ui.app import LeetApp
    from leet.ui.screens.run import RunScreen

    return _run_app(LeetApp(run, config, screen=lambda: RunScreen(run, labels=labels, total=total), remembering=remembering))


def _cluster_parser(commands: Any) -> argparse.ArgumentParser:
    from leet.commands.cluster_once import add_arguments

    cluster = commands.add_parser(
        "cluster", prog="leet cluster", help="every node a Prometheus watches (leet serve, node_exporter, DCGM-exporter)",
        description="Every node a Prometheus server watches, from its leet serve, node_exporter and DCGM-exporter targets.",
    )
    add_arguments(cluster)
    _add_ascii(cluster)
    _add_remember(cluster)
    return cluster


def run_cluster(args: argparse.Namespace) -> int:
    """``leet cluster URL``: the node table and charts, or with ``--once`` one answer printed (no Textual)."""
    from leet.commands.cluster_once import make_source, print_once
    from leet.config import load, resolve_ascii
    from leet.model.node_filter import LabelFilter

    if args.json and not args.once:
        say("--json goes with --once")
        return 2
    try:
        source = make_source(args)
        config = resolve_ascii(load({"ascii": args.ascii, "remember": args.remember}))
    except ValueError as error:  # ConfigError is one too
        say(error)
        return 2
    labels = LabelFilter.parse(args.label)
    if args.once:
        return print_once(source, labels, json_output=args.json)
    import shutil

    from leet.ui.views.cluster_layout import chart_cells

    source.set_width(chart_cells(shutil.get_terminal_size().columns))  # as the screen will lay its charts out
    source.start()  # the history loads while Textual imports; the app stops it
    from leet.config.remembered import remembered
    from leet.ui.app import LeetApp
    from leet.ui.screens.cluster import ClusterScreen

    config, remembering = remembered(config)
    return _run_app(LeetApp(source, config, screen=lambda: ClusterScreen(source, labels=labels), remembering=remembering))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    from leet.arenas import share_malloc_arenas

    share_malloc_arenas()  # before any thread starts: resident memory stays flat for days
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        return run_file(argv[0], argv[1:])
    if argv and argv[0] == "serve":  # a daemon: its own parser only, not the run-file modules inspect's loads
        from leet.commands.serve import run as serve

        return serve(_serve_parser(_Parser(prog=SERVE_PROG, description=SERVE_DESCRIPTION)).parse_args(argv[1:], argparse.Namespace(command="serve")))
    if argv and argv[0] == "watch":  # a daemon too: its own parser only
        from leet.commands.watch import PROG
        from leet.commands.watch import run as watch

        return watch(_watch_parser(_Parser(prog=PROG)).parse_args(argv[1:], argparse.Namespace(command="watch")))
    parser = build_parser()
    if argv and argv[0] in COMMANDS:  # its own parser: usage and errors say ``leet symon``, not the top level
        args = parser.commands[argv[0]].parse_args(argv[1:], argparse.Namespace(command=argv[0]))
    else:
        args = parser.parse_args(argv)
    if args.command is None:
        from leet.runfile.folders import is_workspace
        from leet.runfile.locate import check_listable

        try:
            check_listable("wandb")
        except OSError as error:  # leet with no path looks here first: say why it cannot
            say(f"{_os_error(error, 'wandb')} (leet with no path shows the runs in ./wandb; leet symon shows this host)")
            return 2
        if is_workspace("wandb"):
            return run_file("wandb", [])  # runs here: the workspace, newest run selected
        args = parser.commands["symon"].parse_args([], argparse.Namespace(command="symon"))
    if args.command == "symon":
        return run_symon(args)
    if args.command == "cluster":
        return run_cluster(args)
    if args.command == "inspect":
        from leet.commands.inspect_run import run

        with _inert_stderr():
            return run(args)
    parser.print_help()
    return 2


class _InertStream:
    """A text stream that writes everything through ``escaped``, line breaks kept."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        from leet.common.text import escaped

        return self._stream.write(escaped(text, keep_newlines=True))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _inert_stderr() -> Iterator[None]:
    """Whatever a command prints to stderr (paths in messages, a traceback) cannot drive the terminal."""
    original = sys.stderr
    sys.stderr = _InertStream(original)
    try:
        yield
    finally:
        sys.stderr = original


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
