"""``leet serve``: this host's metrics for Prometheus, at ``/metrics``.

The collectors ``leet symon`` runs (host, every accelerator backend, and the
exporters the settings name) sweep headless; each scrape reads the last
sweep, never samples. Names follow Prometheus' conventions
(``leet.export.names``). No Textual here.

Exit status: 0 after SIGTERM or SIGINT (hub stopped, server closed), 1 when
the address cannot be had (a port in use), 2 for a bad setting, and for a
bind other machines can reach without ``--token-file`` or ``--insecure``,
and for a token file that its group or others may read.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import stat
import sys
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # loaded when the command runs: ``leet --help`` stays light
    import ssl

    from collectors.base import Collector
    from leet.config import Config

DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 9464
MAX_TOKEN_BYTES = 4096


class _Stop(BaseException):
    """Raised in the main thread by SIGTERM or SIGINT, to leave the serving loop.

    A BaseException, as KeyboardInterrupt is: the ``except Exception`` around
    each request in socketserver must not swallow it.
    """


class _Refused(Exception):
    """A setting that stops the command: its message and exit status."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def _seconds(text: str) -> float:
    from leet.config import interval_flag  # late: --help stays light

    return interval_flag(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bind", default=DEFAULT_BIND, metavar="ADDRESS", help=f"address to listen on (default {DEFAULT_BIND}; another machine's reach needs --token-file or --insecure)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT})")
    parser.add_argument("--label", metavar="NODE", help="the node label every series carries (default: the host name)")
    parser.add_argument("--interval", type=_seconds, metavar="SECONDS", help="seconds between sweeps (default 2; '500ms' works too)")
    parser.add_argument("--token-file", metavar="FILE", help="require 'Authorization: Bearer <token>', the token being this file's text")
    parser.add_argument("--insecure", action="store_true", help="serve a non-loopback address without a token")
    parser.add_argument("--tls-cert", metavar="FILE", help="serve https with this certificate chain (PEM); needs --tls-key")
    parser.add_argument("--tls-key", metavar="FILE", help="the private key (PEM) of --tls-cert")
    parser.add_argument("--max-connections", metavar="N", help="connections served at once; one more is answered 503 (default 64)")
    parser.add_argument("--disk-path", dest="disk_paths", action="append", metavar="PATH", help="disk path to watch (repeatable; default /)")
    parser.add_argument("--gpu-ids", metavar="IDS", help="only these GPUs (NVIDIA, AMD), e.g. 0,2 (default all)")
    parser.add_argument("--no-cgroup", dest="use_cgroup", action="store_false", help="ignore cgroup v2 limits in percentages")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $LEET_CONFIG or the user config dir)")
    parser.add_argument("--openmetrics", action="append", metavar="NAME=URL", help="also scrape this OpenMetrics/Prometheus page, as leet symon does (repeatable)")
    parser.add_argument("--openmetrics-filter", action="append", metavar="REGEX", help="keep only metrics whose ENDPOINT.METRIC this regex finds (repeatable)")
    parser.add_argument("--openmetrics-header", action="append", metavar="'NAME: VALUE'", help="HTTP header for every endpoint and --dcgm-exporter (repeatable)")
    parser.add_argument("--dcgm-exporter", metavar="URL", help="GPUs from DCGM-exporter series in Prometheus, as leet symon takes them")


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0 to 65535): {text!r}")
    return value


def say(message: object) -> None:
    from leet.common.text import escaped

    print(f"leet serve: {escaped(str(message))}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT."""
    wake, signalled = socket.socketpair()  # a signal writes its number to signalled; wake reads it
    signalled.setblocking(False)
    previous_fd = signal.set_wakeup_fd(signalled.fileno(), warn_on_full_buffer=False)
    previous = {number: signal.signal(number, _raise_stop) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        return _serve(args, wake)
    except _Refused as refused:
        say(refused)
        return refused.status
    except _Stop:  # stopped before the server was up
        return 0
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(previous_fd)
        wake.close()
        signalled.close()


def _raise_stop(signum: int, frame: Any) -> None:
    # Once: a second signal while stopping must not cut the cleanup short.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise _Stop


def _serve(args: argparse.Namespace, wake: socket.socket) -> int:
    from leet import __version__
    from leet.export.connections import ServeCounters
    from leet.export.exposition import Exposition
    from leet.export.http import make_server, metrics_app

    config = _config(args)
    family, address, exposed = _address(args.bind, args.port, args.token_file is not None, args.insecure)
    token = _token(args.token_file) if args.token_file else None
    tls = _tls(config.tls_cert, config.tls_key)
    hostname = socket.gethostname()
    node = config.label or hostname
    exposition = Exposition(node=node, hostname=hostname, version=__version__)
    counters = ServeCounters(node, say=say)
    exposition.registry.register(counters)
    try:
        server = make_server(family, address, metrics_app(exposition, token), counters=counters, max_connections=config.max_connections, ssl_context=tls)
    except OSError as error:
        raise _Refused(f"cannot listen on {_where(address)}: {error.strerror or error}", status=1) from None
    hub = headless_hub(config, args.use_cgroup)
    try:
        hub.subscribe(lambda sample: exposition.update(sample, max(0.0, time.time() - sample.timestamp)))
        hub.start()
        access = "Bearer token required" if token else ("open to every machine that reaches it" if exposed else "loopback only")
        scheme = "https" if tls else "http"
        say(f"node {node}: {scheme}://{_where(server.server_address)}/metrics ({access}; at most {config.max_connections} connections at once)")
        while True:  # SIGTERM and SIGINT end it by raising _Stop, on whichever thread the kernel hands them to
            server.serve_until(wake)
            _drain(wake)  # woken by some other signal
    except _Stop:
        pass
    finally:
        server.server_close()
        hub.stop()
    return 0


def _drain(wake: socket.socket) -> None:
    wake.setblocking(False)
    try:
        while wake.recv(64):
            pass
    except BlockingIOError:
        pass


def _config(args: argparse.Namespace) -> Config:
    from pathlib import Path

    from leet.config import ConfigError, load

    try:
        overrides = {
            **_exporter_settings(args),
            "interval": args.interval,
            "label": args.label,
            "disk_paths": tuple(args.disk_paths) if args.disk_paths else None,
            "gpu_ids": args.gpu_ids,
            "max_connections": args.max_connections,
            "tls_cert": args.tls_cert,
            "tls_key": args.tls_key,
        }
        return load(overrides, path=Path(args.config) if args.config else None, must_exist=bool(args.config))
    except ConfigError as error:
        raise _Refused(str(error)) from None


def _exporter_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The OpenMetrics and DCGM flags as settings, parsed as ``leet symon`` parses them."""
    from collectors.openmetrics import parse_endpoint_arg, parse_header_arg
    from leet.config import ConfigError

    def parsed(texts: list[str] | None, parse: Callable[[str], tuple[str, str]], flag: str) -> tuple[tuple[str, str], ...] | None:
        try:
            return tuple(parse(text) for text in texts) if texts else None
        except ValueError as error:
            message = str(error)
            raise ConfigError(message if message.startswith(flag) else f"{flag}: {message}") from None

    return {
        "open_metrics_endpoints": parsed(args.openmetrics, parse_endpoint_arg, "--openmetrics"),
        "open_metrics_filters": tuple(args.openmetrics_filter) if args.openmetrics_filter else None,
        "open_metrics_http_headers": parsed(args.openmetrics_header, parse_header_arg, "--openmetrics-header"),
        "dcgm_exporter": args.dcgm_exporter,
    }


def _address(bind: str, port: int, has_token: bool, insecure: bool) -> tuple[int, tuple[Any, ...], bool]:
    """(family, address, reachable from other machines) for ``--bind``; refused when it is exposed without a token."""
    from leet.export.http import is_loopback, resolve

    if not bind:
        raise _Refused("--bind: give an address, e.g. 127.0.0.1 or 0.0.0.0")
    try:
        addresses = resolve(bind, port)
    except (socket.gaierror, UnicodeError) as error:
        raise _Refused(f"--bind {bind}: not an address this host has ({getattr(error, 'strerror', None) or error})") from None
    exposed = not is_loopback(addresses)
    if exposed and not (has_token or insecure):
        raise _Refused(f"--bind {bind} lets other machines read this host's metrics: give --token-file FILE (Bearer auth), or --insecure")
    # A name with both (localhost) binds IPv4, where scrape configs usually point.
    family, address = min(addresses, key=lambda found: found[0] != socket.AF_INET)
    return family, address, exposed


def _tls(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    """The TLS context ``--tls-cert`` and ``--tls-key`` make, or None for plain http; both or neither."""
    import ssl

    from leet.export.connections import tls_context
    from leet.runfile.files import open_regular

    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise _Refused("--tls-cert and --tls-key go together: give both (or set tls_cert and tls_key in the config file)")
    for flag, path in (("--tls-cert", cert), ("--tls-key", key)):
        try:
            with open_regular(path):  # ssl's own error names no file, and would wait on a FIFO
                pass
        except OSError as error:
            raise _Refused(f"{flag} {path}: {error.strerror or error}") from None
    try:
        return tls_context(cert, key)
    except (ssl.SSLError, OSError) as error:
        raise _Refused(f"--tls-cert {cert}, --tls-key {key}: not a PEM certificate chain and its key ({getattr(error, 'reason', None) or error})") from None


def _token(path: str) -> str:
    """The token in ``path``: its text, surrounding white space removed; refused where its group or others may read it."""
    from leet.runfile.files import read_regular

    try:
        raw = read_regular(path, MAX_TOKEN_BYTES + 1)
        mode = os.stat(path).st_mode
    except OSError as error:
        raise _Refused(f"--token-file {error.filename or path}: {error.strerror or error}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise _Refused(f"--token-file {path}: its group or others may read the token; run: chmod 600 {shlex.quote(path)}")
    if len(raw) > MAX_TOKEN_BYTES:
        raise _Refused(f"--token-file {path}: longer than {MAX_TOKEN_BYTES} bytes; a token is one line")
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise _Refused(f"--token-file {path}: not UTF-8 text") from None
    if not token or not token.isascii() or any(char.isspace() or not char.isprintable() for char in token):
        raise _Refused(f"--token-file {path}: the token must be one word of printable ASCII characters")
    return token


def headless_collectors(config: Config, use_cgroup: bool) -> list[Collector]:
    """What ``leet symon`` sweeps, less what only its screen reads (no process table, no host facts)."""
    from collectors.accelerators import accelerator_collectors, exporter_collectors
    from collectors.host import host_collectors
    from collectors.hostinfo import HostInfoCollector
    from collectors.processes import ProcessTableCollector

    screen_only = (ProcessTableCollector, HostInfoCollector)  # extras for the screen, no metric keys
    collectors = [c for c in host_collectors(disk_paths=config.disk_paths, use_cgroup=use_cgroup) if not isinstance(c, screen_only)]
    collectors += accelerator_collectors(gpu_ids=config.gpu_ids)
    collectors += exporter_collectors(config.open_metrics_endpoints, config.open_metrics_filters, config.open_metrics_http_headers, config.dcgm_exporter)
    return collectors


def headless_hub(config: Config, use_cgroup: bool):  # -> collectors.hub.Hub
    from collectors.hub import Hub

    # No hub label: a key's own /l: label (DCGM's node) stays its node, and the rest get --label.
    return Hub(headless_collectors(config, use_cgroup), interval=config.interval, warmup=0.2)


def _where(address: tuple[Any, ...]) -> str:
    host, port = str(address[0]), address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


__all__ = ["DEFAULT_BIND", "DEFAULT_PORT", "add_arguments", "run"]
