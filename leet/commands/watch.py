"""``leet watch PATH... [--symon]``: alerts without a screen.

It follows run files and folders of runs (new runs join), and with
``--symon`` this host's live metrics, and tells what happens: each alert is
a line on stdout (JSON with ``--json``) and goes to the sinks the settings
and flags name (Apprise URLs, webhooks, commands), each on a thread of its
own. What was sent is kept in a ledger under the user's state directory, so
a restart never sends an alert again; what a file already held when it was
first watched is nobody's news. Delivery is at least once: an alert is owed
to each sink (in the ledger, written with the read offset that passes it)
until the sink acknowledges it; owed alerts are retried after 1, 5, 20, 60 s
and every minute after, across restarts, until ``max_age`` (``--max-age``,
default 24 h), when the sink gives it up with a line on stderr. ``wandb.alert``'s ``wait_duration`` keeps a
title quiet for that long; a rule's ``cooldown`` does the same for it.

Exit status: 0 after SIGTERM or SIGINT (or ``--once``), 2 for a bad setting
or nothing to watch. No Textual here.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TextIO

from leet.common.retry import BACKOFF_FIRST, BACKOFF_MAX, backoff

if TYPE_CHECKING:  # loaded when the command runs: ``leet --help`` stays light
    from leet.alerts.acks import Answers
    from leet.alerts.delivery import Delivery
    from leet.alerts.events import Alert
    from leet.alerts.follow import Follower
    from leet.alerts.ledger import Ledger
    from leet.alerts.settings import AlertSettings, SinkSpec
    from leet.alerts.thresholds import ThresholdWatch

PROG = "leet watch"
DESCRIPTION = (
    "Follow runs, folders of runs and (--symon) this host, and send alerts: a run finished, failed or crashed, "
    "a wandb.alert() call, a node of a shared run lost, a threshold rule crossed."
)
TICK = 0.25  # seconds between looks at the files: well inside the second an alert may take
SAVE_EVERY = 2.0  # seconds between ledger writes for offsets alone
BACKOFF = (1.0, 5.0, 20.0, 60.0)  # seconds between tries of an owed alert, the last repeated until it is max_age old
STDOUT = "stdout"  # the ledger's name for the lines printed
TROUBLE = ("retrying", "hung", "dead")  # a sink's states worth a line on stderr


class _Refused(Exception):
    """A setting that stops the command before it starts; ``detail``: lines shown under it as they are (a caret)."""

    def __init__(self, message: object, detail: str = "") -> None:
        super().__init__(str(message))
        self.detail = detail


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="run directories, run files or folders of runs (wandb/)")
    parser.add_argument("--symon", action="store_true", help="also watch this host's live metrics (rules only)")
    parser.add_argument("--cluster", metavar="PROM_URL", help="also watch every node this Prometheus scrapes (as leet cluster): nodes going down, rules per node")
    parser.add_argument("--cluster-node-label", choices=("instance", "hostname", "node"), default="instance", help="--cluster: how nodes are named (as leet cluster --node-label)")
    parser.add_argument("--rule", action="append", metavar="EXPR", help="a threshold rule, e.g. 'gpu.*.temp > 85 for 2m' (repeatable)")
    parser.add_argument("--rules", metavar="FILE", help="a file of rules, one a line, # comments")
    parser.add_argument("--notify", action="append", metavar="URL", help="an Apprise URL (slack://, mailto://, ntfy://, json:// …) or @FILE of URLs (repeatable); ${NAME} is read from the environment")
    parser.add_argument("--webhook", action="append", metavar="URL", help="POST each alert's JSON (as --json prints it, ident included) to this http(s) URL; no redirects followed (repeatable)")
    parser.add_argument("--webhook-shape", choices=("json", "slack"), default="json", help="the webhooks' body: leet's JSON (default) or Slack's {\"text\": …}")
    parser.add_argument("--exec", action="append", metavar="CMD", help="run CMD with the alert as JSON on stdin, no shell (repeatable)")
    parser.add_argument("--on", metavar="EVENTS", help="which events: finished,failed,crashed,alert,node-lost,threshold (default: all)")
    parser.add_argument("--crash-after", type=_seconds, metavar="SECONDS", help="a run silent this long without an exit record is presumed crashed (default 600)")
    parser.add_argument("--node-lost-after", type=_seconds, metavar="SECONDS", help="a shared run's node silent this long while others write, or a cluster node down this long, is lost (default 120)")
    parser.add_argument("--interval", type=_seconds, metavar="SECONDS", help="--symon: seconds between sweeps (default 2); --cluster: between queries (default 15)")
    parser.add_argument("--max-age", type=_duration, metavar="DURATION", help="keep retrying an alert a sink has not acknowledged this long (30m, 24h, seconds), across restarts, then give it up (default 24h)")
    parser.add_argument("--json", action="store_true", help="print each alert as one JSON line")
    parser.add_argument("--once", action="store_true", help="look once, send what is new, wait for the sinks, and exit")
    parser.add_argument("--state", metavar="FILE", help="the ledger of what was sent (default: under the user's state directory)")
    parser.add_argument("--config", metavar="FILE", help="config file with an [alerts] table (default: the user's leet config)")


def _seconds(text: str) -> float:
    from leet.config import interval_flag  # late: --help stays light

    return interval_flag(text)


def _duration(text: str) -> float:
    from leet.alerts.settings import parse_duration  # late: --help stays light

    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def say(message: object) -> None:
    from leet.common.text import escaped

    print(f"leet watch: {escaped(str(message))}", file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    add_arguments(parser)
    return run(parser.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        watch = _build(args)
    except _Refused as refused:
        say(refused)
        if refused.detail:
            from leet.common.text import escaped

            for line in refused.detail.splitlines():
                print(f"  {escaped(line)}", file=sys.stderr)
        return 2
    finally:
        if stop.is_set():
            for number, handler in previous.items():
                signal.signal(number, handler)
    try:
        watch.run(stop, once=args.once)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return 0


# -- putting it together ------------------------------------------------------------------


@dataclass
class Route:
    """One sink: its settings, its name in the ledger, and its delivery thread."""

    spec: SinkSpec
    name: str
    delivery: Delivery
    state: str = "idle"
    queued: set[str] = field(default_factory=set)  # idents handed to the delivery and not yet answered


def _build(args: argparse.Namespace) -> "Watch":
    from pathlib import Path

    from leet.alerts.ledger import Ledger, ledger_path
    from leet.alerts.settings import AlertSettings, merged, parse_events
    from leet.alerts.thresholds import ThresholdWatch
    from leet.config import ConfigError, load

    if not args.paths and not args.symon and not args.cluster:
        raise _Refused("nothing to watch: name runs or folders of runs, or --symon, or --cluster PROM_URL")
    try:
        config = load({"interval": args.interval, "crash_after": args.crash_after}, path=Path(args.config) if args.config else None, must_exist=bool(args.config))
    except ConfigError as error:
        raise _Refused(error) from None
    settings: AlertSettings = config.alerts or AlertSettings()
    try:
        on = parse_events(args.on) if args.on else None
    except ValueError as error:
        raise _Refused(f"--on: {error}") from None
    settings = merged(settings, rules=_flag_rules(args), sinks=_flag_sinks(args), on=on, node_lost_after=args.node_lost_after, max_age=args.max_age)
    environ = dict(os.environ)
    watched = [str(Path(path).absolute()) for path in args.paths] + (["--symon"] if args.symon else []) + ([f"--cluster {args.cluster}"] if args.cluster else [])
    ledger = Ledger(Path(args.state) if args.state else ledger_path(watched))
    results = answers_for(ledger)
    routes = [route for spec in settings.sinks for route in _routes(spec, environ, results, max_age=settings.max_age)]
    if ledger.note:
        say(ledger.note)
    thresholds = ThresholdWatch(settings.rules) if "threshold" in settings.on and settings.rules else None
    if thresholds is not None:
        texts = {rule.text for rule in settings.rules}
        thresholds.carried = {episode for episode in ledger.episodes if episode[1] in texts}  # told before a restart, maybe holding still
    follower = _follower(args.paths, ledger, thresholds, config.crash_after, settings.node_lost_after)
    hub = _hub(config) if args.symon and thresholds is not None else None
    if args.symon and thresholds is None:
        say("--symon watches this host through rules: give --rule, --rules or [alerts] rules")
    cluster = _cluster(args, ledger, thresholds, settings.node_lost_after) if args.cluster else None
    return Watch(settings, follower, ledger, routes, thresholds, hub, json_lines=args.json, results=results, cluster=cluster)


def answers_for(ledger: "Ledger") -> "Answers":
    """The queue the sinks answer on, each acknowledgement journaled beside ``ledger`` before the sink sends on."""
    from leet.alerts.acks import Answers

    return Answers(ledger.path)


def _flag_rules(args: argparse.Namespace) -> list:
    from leet.alerts.rules import RuleError, parse_rule
    from leet.alerts.settings import rules_from_file

    rules = []
    for text in args.rule or []:
        try:
            rules.append(parse_rule(text))
        except RuleError as error:
            raise _Refused(f"--rule {text!r}: {error}", error.caret()) from None
    if args.rules:
        rules += rules_from_file(args.rules, lambda message: _Refused(f"--rules: {message}"))
    return rules


def _flag_sinks(args: argparse.Namespace) -> list[SinkSpec]:
    from leet.alerts.settings import SinkSpec

    specs = [SinkSpec("notify", (url,), where=f"--notify {i + 1}") for i, url in enumerate(args.notify or [])]
    specs += [SinkSpec("webhook", (url,), shape=args.webhook_shape, where=f"--webhook {i + 1}") for i, url in enumerate(args.webhook or [])]
    specs += [SinkSpec("exec", (command,), where=f"--exec {i + 1}") for i, command in enumerate(args.exec or [])]
    return specs


def routes_for(spec: SinkSpec, results: queue.SimpleQueue, **delivery: Any) -> list[Route]:
    """The routes of one sink spec, with no environment to read: ``delivery`` (``backoff``, ``max_age`` …) goes to each ``Delivery``."""
    return _routes(spec, {}, results, **delivery)


def _routes(spec: SinkSpec, environ: dict[str, str], results: queue.SimpleQueue, *, backoff: tuple[float, ...] = BACKOFF, max_age: float = 86400.0, **delivery: Any) -> list[Route]:
    from leet.alerts.delivery import Delivery
    from leet.alerts.sinks import command_sink, sinks_from, webhook

    try:
        if spec.kind == "notify":
            sinks = sinks_from(spec.targets, environ, timeout=spec.timeout)
        elif spec.kind == "webhook":
            sinks = [webhook(spec.targets[0], spec.shape, environ=environ, timeout=spec.timeout)]
        else:
            sinks = [command_sink(list(spec.targets) if len(spec.targets) > 1 else spec.targets[0], environ, timeout=spec.timeout)]
    except ValueError as error:
        raise _Refused(f"{spec.where}: {error}") from None
    routes = []
    for sink in sinks:
        name = f"{spec.where}: {sink.name}"

        def result(alert: Alert, sink_name: str, ok: bool, error: str, name: str = name) -> None:
            results.put((alert, name, ok, error))  # from the sink's thread: the loop writes the ledger

        routes.append(Route(spec, name, Delivery([sink], timeout=spec.timeout, on_result=result, backoff=backoff, max_age=max_age, **delivery)))
    return routes


def _follower(paths: list[str], ledger: Ledger, thresholds: ThresholdWatch | None, crash_after: float, node_lost_after: float) -> Follower:
    from leet.alerts.follow import Follower

    follower = Follower(paths, ledger=ledger, thresholds=thresholds, crash_after=crash_after, node_lost_after=node_lost_after)
    for problem in follower.problems:
        say(problem)
    if paths and not follower.files and not follower.folders:
        raise _Refused("none of the paths given could be followed")
    return follower


def _cluster(args: argparse.Namespace, ledger: Ledger, thresholds: ThresholdWatch | None, lost_after: float) -> Any:  # -> ClusterAlerts
    from leet.alerts.cluster import ClusterAlerts
    from leet.model.store import Store
    from leet.sources.cluster import ClusterSource
    from leet.sources.cluster_queries import QueryPlan
    from leet.sources.prometheus_api import PrometheusClient, endpoint

    try:
        client = PrometheusClient(endpoint(args.cluster, environ=os.environ))
    except ValueError as error:
        raise _Refused(f"--cluster: {error}") from None
    source = ClusterSource(Store(), client, plan=QueryPlan(node_label=args.cluster_node_label), interval=args.interval or 15.0, range_s=600.0, load_history=False)
    return ClusterAlerts(source, client.display_url, ledger, thresholds, lost_after)


def _hub(config: Any):  # -> collectors.hub.Hub
    from leet.commands.serve import headless_hub

    return headless_hub(config, use_cgroup=True)


# -- the loop ------------------------------------------------------------------------------


class Watch:
    """The follower, the host's samples and the sinks, stepped from one thread.

    A step that raises is said on stderr and retried after ``backoff_first``
    seconds, doubling up to ``backoff_max``.
    """

    backoff_first = BACKOFF_FIRST
    backoff_max = BACKOFF_MAX

    def __init__(
        self, settings: AlertSettings, follower: Follower, ledger: Ledger, routes: list[Route], thresholds: ThresholdWatch | None = None,
        hub: Any = None, *, json_lines: bool = False, out: TextIO | None = None, clock: Callable[[], float] = time.time,
        results: queue.SimpleQueue | None = None, cluster: Any = None,
    ) -> None:
        self.settings = settings
        self.follower = follower
        self.ledger = ledger
        self.routes = routes
        self.thresholds = thresholds
        self.hub = hub
        self.cluster = cluster  # leet.alerts.cluster.ClusterAlerts over a started ClusterSource, or None
        self.json_lines = json_lines
        self.out = out or sys.stdout
        self.clock = clock
        self.results: queue.SimpleQueue[tuple[Alert, str, bool, str]] = results if results is not None else queue.SimpleQueue()  # (alert, route name, ok, error)
        self.samples: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._saved_at = 0.0
        self._unreadable: set[str] = set()
        self.host = os.uname().nodename if hasattr(os, "uname") else "host"
        self._fold_acknowledgements()
        self._tell_late_sinks()

    def _fold_acknowledgements(self) -> None:
        """What sinks acknowledged after the last write of the ledger, before this process began: not owed any more."""
        from leet.alerts.acks import Answers

        if isinstance(self.results, Answers):
            self.results.fold(self.ledger)

    def _tell_late_sinks(self) -> None:
        """A sink that has not heard of a threshold episode still holding since the last run is owed its alert, once."""
        from leet.alerts.ledger import alert_from_json

        if self.thresholds is None:
            return
        carried = {(source, rule) for source, rule, _ in self.thresholds.carried}
        for body in self.ledger.episode_alerts():
            if (body["source"], body["rule"]) not in carried or "threshold" not in self.settings.on:
                continue
            alert = alert_from_json(body)
            done = self.ledger.reached(alert.ident) | self.ledger.given_up(alert.ident)
            self.ledger.owe(alert, [route.name for route in self.routes if "threshold" in route.spec.on and route.name not in done], self.clock())

    def run(self, stop: threading.Event, once: bool = False) -> None:
        if self.hub is not None:
            self.hub.subscribe(self.samples.put)
            self.hub.start()
            if once:  # one look means one sweep of the host too
                self._first_sample(stop)
        if self.cluster is not None:
            self.cluster.source.start()
            if once:
                self._first_answer()
        try:
            failures = 0
            while True:
                failures = self._step_or_say(failures)
                if once or stop.wait(backoff(failures, self.backoff_first, self.backoff_max) if failures else TICK):
                    break
        finally:
            self.close(flush=2.0 if not once else 30.0)

    def _step_or_say(self, failures: int) -> int:
        """One step; the failures in a row after it. A step that raises is said on stderr and tried again later."""
        try:
            self.step()
        except Exception as error:  # noqa: BLE001 - a bug or an unforeseen file must not end the watch in silence
            delay = backoff(failures + 1, self.backoff_first, self.backoff_max)
            say(f"following failed, retrying in {delay:g} s: {type(error).__name__}: {error}")
            return failures + 1
        if failures:
            say("following works again")
        return 0

    def _first_sample(self, stop: threading.Event, seconds: float = 30.0) -> None:
        try:
            self.samples.put(self.samples.get(timeout=seconds))
        except queue.Empty:
            say(f"no sweep of this host within {seconds:.0f} s")

    def _first_answer(self, seconds: float = 60.0) -> None:
        deadline = time.monotonic() + seconds
        while not self.cluster.source.nodes() and not self.cluster.source.error and time.monotonic() < deadline:
            if self.cluster.source.status().message:
                say(self.cluster.source.status().message)
                return
            time.sleep(0.05)

    def step(self) -> list[Alert]:
        now = self.clock()
        alerts = self.follower.poll(now)
        alerts += self._host_alerts()
        if self.cluster is not None:
            alerts += self.cluster.poll(now)
        told = [alert for alert in alerts if self.handle(alert)]
        answered = self._take_results()
        if now - self._saved_at > SAVE_EVERY or told or answered:
            self._say_problems()
            self._save(now)  # the owed alerts and the offsets past them, in one write, before any is sent
        self._hand_out(now)
        return told

    def _host_alerts(self) -> list[Alert]:
        from leet.alerts.thresholds import Scope

        alerts: list[Alert] = []
        while True:
            try:
                sample = self.samples.get_nowait()
            except queue.Empty:
                return alerts
            if self.thresholds is not None:
                alerts += self.thresholds.observe(Scope("host", "", self.host), sample.timestamp, sample.values, running=True)

    def handle(self, alert: Alert) -> bool:
        """Print and send one alert, unless its event is off, its title is waiting, or it was told before."""
        if alert.kind not in self.settings.on:
            return False
        reached = self.ledger.reached(alert.ident)
        if "*" in reached:
            return False
        if alert.kind == "alert" and STDOUT not in reached and self._waiting(alert):
            self.ledger.settle(alert.ident, alert.time)
            return False
        if STDOUT not in reached:
            self._print(alert)
            self.ledger.record(alert.ident, STDOUT, alert.time)
        if alert.kind == "threshold":
            self.ledger.note_episode_alert(alert)
        done = reached | self.ledger.given_up(alert.ident)
        owed = [route.name for route in self.routes if alert.kind in route.spec.on and route.name not in done]
        for lost in self.ledger.owe(alert, owed, self.clock()):
            say(f"gave up on {lost}: too many alerts owed")
        return True

    def _hand_out(self, now: float) -> None:
        """Offers each owed alert to its sinks' queues, oldest first, until a queue is full (the rest wait in the ledger)."""
        from leet.alerts.ledger import alert_from_json

        routes = {route.name: route for route in self.routes}
        full: set[str] = set()
        for ident, since, body, sinks in self.ledger.owed():
            for name in sinks:
                route = routes.get(name)
                if route is None:  # a sink no longer configured: it may come back until the alert is too old
                    if now - since > self.settings.max_age:
                        self._give_up(ident, name, body, "no longer configured")
                    continue
                if name in full or ident in route.queued:
                    continue
                if route.delivery.offer(alert_from_json(body), since):
                    route.queued.add(ident)
                else:
                    full.add(name)

    def _waiting(self, alert: Alert) -> bool:
        """wandb.alert's wait_duration: the same title for this run went out less than wait_s ago."""
        last = self.ledger.title_sent(alert.source, alert.title)
        if last is not None and alert.wait_s > 0 and 0 <= alert.time - last < alert.wait_s:
            return True
        self.ledger.note_title(alert.source, alert.title, alert.time)
        return False

    def _print(self, alert: Alert) -> None:
        from leet.common.text import escaped

        if self.json_lines:
            line = json.dumps(alert.as_json(), ensure_ascii=True)
        else:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(alert.time or self.clock()))
            line = escaped(f"{stamp}  {alert.kind.upper():<9} {alert.title} — {alert.text}")
        print(line, file=self.out, flush=True)

    def _take_results(self) -> bool:
        """The sinks' answers into the ledger; True if there were any."""
        from leet.alerts.delivery import CLOSED

        answered = False
        while True:
            try:
                alert, name, ok, error = self.results.get_nowait()
            except queue.Empty:
                break
            answered = True
            route = next((route for route in self.routes if route.name == name), None)
            if route is not None:
                route.queued.discard(alert.ident)
            if ok:
                self.ledger.delivered(alert.ident, name, alert.time)
            elif CLOSED not in error:  # closing leaves it owed, for the next start
                self._give_up(alert.ident, name, alert.as_json(), error)
        for route in self.routes:
            state = _state_of(route)
            if state != route.state:
                if state in TROUBLE or route.state in TROUBLE:  # trouble, and the end of it, are news; idle → ok is not
                    say(f"{route.name}: {state}{_why(route) if state in TROUBLE else ''}")
                route.state = state
        return answered

    def _give_up(self, ident: str, name: str, body: dict[str, Any], why: str) -> None:
        self.ledger.give_up(ident, name)
        say(f"{name}: gave up on {body.get('kind')} alert {body.get('title')!r} ({ident}), kept in the ledger as given up: {why}")

    def _say_problems(self) -> None:
        """A file that cannot be read, or a Prometheus that does not answer, costs only itself, and says so once
        (and again if it comes back and goes again)."""
        problems = set(self.follower.unreadable)
        if self.cluster is not None:
            problems.update(line for line in (self.cluster.source.error, self.cluster.source.status().message) if line)
        for problem in sorted(problems - self._unreadable):
            say(problem)
        self._unreadable = problems

    def _save(self, now: float) -> None:
        from leet.alerts.acks import Answers

        if self.thresholds is not None:
            self.ledger.keep_episodes(self.thresholds.open_episodes())
        if isinstance(self.results, Answers):
            # Every answer journaled so far is queued: taken into the ledger and written, the journal may go.
            self.results.settled(self._take_and_write)
        else:
            self._write_ledger()
        self._saved_at = now

    def _take_and_write(self) -> bool:
        self._take_results()
        return self._write_ledger()

    def _write_ledger(self) -> bool:
        try:
            self.ledger.save()
        except OSError as error:
            say(f"cannot write the alert ledger {self.ledger.path}: {error.strerror or error}")
            return False
        return True

    def close(self, flush: float = 2.0) -> None:
        if self.hub is not None:
            self.hub.stop()
        if self.cluster is not None:
            self.cluster.source.stop()
        deadline = time.monotonic() + flush
        for route in self.routes:
            route.delivery.close(max(0.1, deadline - time.monotonic()))
        self._take_results()
        self.follower.close()
        self._save(self.clock())


def _state_of(route: Route) -> str:
    statuses = route.delivery.status()
    return statuses[0].state if statuses else "ok"


def _why(route: Route) -> str:
    statuses = route.delivery.status()
    error = statuses[0].last_error if statuses else ""
    return f": {error}" if error else ""
