"""Where alerts go: Apprise URLs and local commands, each shown without its secrets.

Everything that leaves the machine goes through Apprise (``slack://``,
``mailtos://``, ``jsons://``, ``ntfy://`` …); ``webhook`` turns a plain
http(s) URL into Apprise's JSON sink. A command gets the alert as JSON on
its stdin, never through a shell.

Credentials stay out of sight. ``${NAME}`` in a URL or a command is read
from the environment when the sink is made; ``@PATH`` names a file of URLs.
A sink is shown by ``name``: Apprise's privacy form of its URL (its query
left out, and the path of a JSON/form/XML URL masked, since Apprise shows
those whole), or a command's program base name. Every message a sink makes
goes through its ``_Redactor``, which puts ``${NAME}`` back for what came
from the environment and ``***`` for any other part of the URL its name
does not show.

Apprise is imported inside the functions that use it: ``leet --help`` and
the screens must not pay for it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from leet.alerts.events import Alert
from leet.runfile.files import read_regular

if TYPE_CHECKING:
    from apprise.plugins.base import NotifyBase

# Apprise's own sinks for arbitrary endpoints: their privacy form shows the path, where webhook secrets live.
_PATH_SHOWN = ("json", "jsons", "form", "forms", "xml", "xmls")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_URL_FILE_LIMIT = 1 << 20
_MIN_SECRET = 3  # shorter parts of a URL are not worth hiding, and hiding them would garble every message
_STDERR_TAIL = 4096
_LINE_LIMIT = 300


class SinkError(Exception):
    """A send that failed: one printable line, already redacted."""


class Sink(Protocol):
    """Anything that carries an alert somewhere. ``send`` raises ``SinkError``, and nothing else."""

    name: str  # redacted: safe for a screen, a log and the ledger

    def send(self, alert: Alert, timeout: float) -> None: ...


# -- text ---------------------------------------------------------------------------------------


def one_line(text: str) -> str:
    """``text`` as one printable line: line breaks and other unprintable characters written as ``\\n``, ``\\x1b``, ``\\u202e``."""
    return "".join(char if char.isprintable() else _visible(char) for char in text)


def _visible(char: str) -> str:
    code = ord(char)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def _plain_lines(text: str) -> str:
    """Several lines of plain text: line breaks and tabs kept, other unprintable characters written out."""
    return "\n".join("\t".join(one_line(part) for part in line.split("\t")) for line in text.splitlines())


def message_parts(alert: Alert) -> tuple[str, str]:
    """The title (one line) and the body: the alert's text, then one line saying what it is about."""
    title = one_line(" ".join((alert.title or alert.kind).split()))
    body = "\n".join(part for part in (_plain_lines(alert.text.strip()), context_line(alert)) if part)
    return title, body or title


def context_line(alert: Alert) -> str:
    """``run NAME (ID) · LABEL · SOURCE``, leaving out what the alert does not say."""
    if alert.run_name and alert.run_id and alert.run_name != alert.run_id:
        run = f"run {alert.run_name} ({alert.run_id})"
    else:
        run = f"run {alert.run_name or alert.run_id}" if alert.run_name or alert.run_id else ""
    parts = [run, alert.label, alert.source if alert.source not in (alert.run_name, alert.run_id) else ""]
    return one_line(" · ".join(part for part in parts if part))


def _slack_text(title: str, body: str) -> str:
    """Slack reads ``&``, ``<`` and ``>`` as markup (``<!channel>`` pings everyone): escaped as Slack asks."""
    text = f"{title}\n{body}" if body != title else title
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- credentials ----------------------------------------------------------------------------------


def expand(text: str, environ: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``text`` with each ``${NAME}`` read from ``environ``, and {value: ``${NAME}``} for each value put in."""
    shown_as: dict[str, str] = {}

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise ValueError(f"environment variable {name} is not set (a sink reads ${{{name}}} from it)")
        shown_as[environ[name]] = f"${{{name}}}"
        return environ[name]

    return _VARIABLE.sub(value, text), shown_as


class _Redactor:
    """Replaces known secrets (case-insensitively, raw and percent-encoded) in any text."""

    def __init__(self, replacements: Mapping[str, str]) -> None:
        table: dict[str, str] = {}
        for secret, shown in replacements.items():
            if len(secret) >= _MIN_SECRET:
                for form in (secret, quote(secret, safe=""), quote(secret)):
                    table.setdefault(form.lower(), shown)
        self._table = table
        forms = sorted(table, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, forms)), re.IGNORECASE) if forms else None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda match: self._table[match.group().lower()], text)


def _url_parts(url: str) -> list[str]:
    """The parts of a URL that may be secret: host, user, password, path segments, query values, fragment."""
    try:
        split = urlsplit(url)
    except ValueError:
        return [part for part in re.split(r"[/:@?&=#]+", url) if part]
    userinfo, _, hostport = split.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    host = hostport.rsplit(":", 1)[0] if hostport.count(":") == 1 else hostport
    values = [value for key, value in parse_qsl(split.query, keep_blank_values=True) if not key.startswith(":")]
    parts = [host, unquote(user), unquote(password), *map(unquote, split.path.split("/")), *values, unquote(split.fragment)]
    return [part for part in parts if part]


def _limited(text: str) -> str:
    return text if len(text) <= _LINE_LIMIT else text[: _LINE_LIMIT - 1] + "…"


# -- Apprise's log --------------------------------------------------------------------------------


class _AppriseLog:
    """What Apprise logs while this thread calls it, at every level, kept for the error message.

    Apprise says why a send failed only in its log, and the useful part
    ("Connection refused", "Read timed out") at DEBUG, next to URLs with their
    secrets. So while any thread is inside Apprise, its logger is opened to
    DEBUG; a filter keeps the records of the calling thread and lets none of
    them through (the outcome is reported redacted, as a ``SinkError``), while
    other threads' records pass exactly as they would have before.
    """

    LOGGERS = ("apprise", "urllib3", "urllib3.connectionpool", "urllib3.connection", "urllib3.util.retry")
    KEPT = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._active = 0
        self._saved_level = logging.NOTSET
        self._installed = False

    def filter(self, record: logging.LogRecord) -> bool:
        lines = getattr(self._local, "lines", None)
        if lines is not None:
            if len(lines) < self.KEPT:
                lines.append((record.levelno, record.getMessage()))
            return False
        if record.name != "apprise":
            return True
        return bool(record.levelno >= self._floor())

    def _floor(self) -> int:
        """The level Apprise's records had to reach before this class opened its logger."""
        logger = logging.getLogger("apprise")
        if self._saved_level != logging.NOTSET:
            return self._saved_level
        return logger.parent.getEffectiveLevel() if logger.parent else logging.WARNING

    @contextmanager
    def captured(self) -> Iterator[list[tuple[int, str]]]:
        logger = logging.getLogger("apprise")
        with self._lock:
            if not self._installed:
                for name in self.LOGGERS:
                    logging.getLogger(name).addFilter(self)
                self._installed = True
            if self._active == 0:
                self._saved_level = logger.level
                logger.setLevel(logging.DEBUG)
            self._active += 1
        lines: list[tuple[int, str]] = []
        self._local.lines = lines
        try:
            yield lines
        finally:
            self._local.lines = None
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    logger.setLevel(self._saved_level)


_apprise_log = _AppriseLog()


def _reason(lines: list[tuple[int, str]]) -> str:
    """Why Apprise failed, from its log: its last warning, with the socket's own words when it logged them."""
    warnings = [message for level, message in lines if level >= logging.WARNING and not message.startswith("Unparseable")]
    detail = ""
    for _, message in reversed(lines):
        if "Exception" in message or "Errno" in message or "timed out" in message:
            detail = _condensed(message)
            break
    head = warnings[-1].rstrip(".") if warnings else ""
    if head and detail and detail.lower() not in head.lower():
        return f"{head}: {detail}"
    return head or detail


def _condensed(message: str) -> str:
    errno = re.search(r"\[Errno -?\d+\] ([^'\"()\[\]]+)", message)
    if errno:
        return errno.group(1).strip().rstrip(".")
    timeout = re.search(r"(read|connect(?:ion)?)? ?timed out", message, re.IGNORECASE)
    if timeout:
        return f"{timeout.group(1).lower()} timed out" if timeout.group(1) else "timed out"
    return message.split(":", 1)[1].strip() if message.startswith("Socket Exception:") else message


# -- Apprise sinks --------------------------------------------------------------------------------


class AppriseSink:
    """One Apprise URL: ``AppriseSink("slack://…")``. Raises ``ValueError`` for a URL Apprise cannot use.

    ``shown_as`` maps values that came from the environment to the ``${NAME}``
    they are shown as; ``slack`` makes the body Slack's ``text`` (the title
    on its first line, Slack's markup characters escaped); ``timeout``
    overrides the delivery's for this sink.
    """

    def __init__(self, url: str, *, shown_as: Mapping[str, str] | None = None, slack: bool = False, timeout: float | None = None) -> None:
        import apprise

        shown_as = dict(shown_as or {})
        scheme = _scheme(url)
        with _apprise_log.captured() as lines:
            plugin = apprise.Apprise.instantiate(url)
        if plugin is None:
            hide = _Redactor({**{part: "***" for part in _url_parts(url)}, **shown_as})
            raise ValueError(_refusal(scheme, lines, hide))
        self._plugin: NotifyBase = plugin
        self.name = _display_name(plugin.url(privacy=True), shown_as)
        shown = unquote(self.name).lower()
        self._redact = _Redactor({**{part: "***" for part in _url_parts(url) if part.lower() not in shown}, **shown_as})
        self._own_timeouts = {"cto", "rto"} & _query_keys(url)
        self._slack = slack
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"AppriseSink({self.name})"

    def send(self, alert: Alert, timeout: float) -> None:
        title, body = message_parts(alert)
        if self._slack:
            title, body = "", _slack_text(title, body)
        self._set_timeouts(timeout)
        with _apprise_log.captured() as lines:
            try:
                ok = self._plugin.notify(body=body, title=title, notify_type=alert.apprise_type, body_format="text")
            except Exception as exc:  # a plugin's bug must not stop the worker
                raise SinkError(self._line(f"{type(exc).__name__}: {exc}")) from None
        if not ok:
            raise SinkError(self._line(_reason(lines) or "Apprise could not send it (it logged no reason)"))

    def ready_in(self) -> float:
        """Seconds before Apprise's rate limit for this service (5.5 s between sends for many) would let a send go at once.

        Apprise sleeps them inside ``notify``; the delivery worker waits them out
        first, so that they are not taken from the send's timeout.
        """
        last = getattr(self._plugin, "_last_io_datetime", None)
        rate = float(getattr(self._plugin, "request_rate_per_sec", 0) or 0)
        if last is None or rate <= 0:
            return 0.0
        return max(0.0, min(rate, rate - (datetime.now() - last).total_seconds()))

    def _set_timeouts(self, timeout: float) -> None:
        """Connecting and reading get half the time each, so Apprise's own error, which says more, comes before the worker gives up."""
        half = max(timeout / 2, 0.05)
        if "cto" not in self._own_timeouts:
            self._plugin.socket_connect_timeout = half
        if "rto" not in self._own_timeouts:
            self._plugin.socket_read_timeout = half

    def _line(self, text: str) -> str:
        return _limited(self._redact(one_line(text)))


def _query_keys(url: str) -> set[str]:
    try:
        return {key for key, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
    except ValueError:
        return set()


def _scheme(url: str) -> str:
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", url)
    return match.group(1).lower() if match else ""


def _refusal(scheme: str, lines: list[tuple[int, str]], hide: _Redactor) -> str:
    """Why Apprise would not take a URL, naming only its scheme: the rest may be a token."""
    if not scheme:
        return "not a notification URL (SCHEME://…, e.g. slack://, mailtos://, jsons://)"
    try:
        from apprise.plugins import N_MGR

        known = scheme in N_MGR
    except ImportError:  # an Apprise without the plugin manager: say what it logged
        known = True
    if not known:
        return f"{one_line(scheme)}:// is not a notification service Apprise knows"
    warnings = [message for level, message in lines if level >= logging.WARNING and "URL" not in message]
    why = warnings[0].rstrip(".") if warnings else "its form is not one Apprise accepts"
    return f"{one_line(scheme)}:// URL cannot be used: {_limited(hide(one_line(why)))}"


def _display_name(privacy_url: str, shown_as: Mapping[str, str]) -> str:
    """Apprise's privacy form without its query; a JSON/form/XML path masked as Apprise masks tokens (``a...z``)."""
    name = privacy_url.split("?", 1)[0]
    for value, shown in sorted(shown_as.items(), key=lambda item: -len(item[0])):
        if len(value) >= _MIN_SECRET:
            name = name.replace(value, shown).replace(quote(value, safe=""), shown)
    scheme, sep, rest = name.partition("://")
    if scheme.lower() in _PATH_SHOWN and sep:
        host, slash, path = rest.partition("/")
        masked = "/".join(_masked(segment) for segment in path.split("/"))
        name = f"{scheme}://{host}{slash}{masked}"
    return name.rstrip("/") or name


def _masked(segment: str) -> str:
    if not segment or "${" in segment:
        return segment
    return f"{segment[0]}...{segment[-1]}" if len(segment) > 2 else "..."


def webhook(url: str, shape: str = "json", *, environ: Mapping[str, str] | None = None, timeout: float | None = None) -> AppriseSink:
    """A JSON POST to an http(s) URL, through Apprise's json sink: ``webhook("https://hooks.example.com/x")``.

    ``shape="json"`` posts Apprise's payload (``title``, ``message``, ``type``,
    ``version``, ``attachments``); ``shape="slack"`` posts ``{"text": …}``,
    as Slack's incoming webhooks (and Mattermost's, Rocket.Chat's …) take it.
    """
    if shape not in ("json", "slack"):
        raise ValueError(f"unknown webhook shape {one_line(shape)!r} (known: json, slack)")
    url, shown_as = expand(url, environ) if environ is not None else (url, {})
    return AppriseSink(apprise_json_url(url, shape), shown_as=shown_as, slack=shape == "slack", timeout=timeout)


# Apprise's json sink renames a standard key with ``:key=new`` and drops it with ``:key=`` (empty).
_SLACK_PAYLOAD = (":message=text", ":title=", ":version=", ":type=", ":attachments=")


def apprise_json_url(url: str, shape: str = "json") -> str:
    """``http(s)://[user:pass@]host[:port]/path?q=v`` → ``json(s)://[user:pass@]host[:port]/path?-q=v`` (``-``: sent as a query parameter)."""
    try:
        split = urlsplit(url.strip())
        split.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ValueError("a webhook needs an http:// or https:// URL with a valid host and port") from None
    if split.scheme.lower() not in ("http", "https") or not split.hostname:
        got = f"{one_line(split.scheme)}://" if split.scheme else "no scheme"
        raise ValueError(f"a webhook needs an http:// or https:// URL with a host (got {got})")
    scheme = "jsons" if split.scheme.lower() == "https" else "json"
    query = [f"-{quote(key, safe='')}={quote(value, safe='')}" for key, value in parse_qsl(split.query, keep_blank_values=True)]
    if shape == "slack":
        query += _SLACK_PAYLOAD
    return f"{scheme}://{split.netloc}{split.path or '/'}" + (f"?{'&'.join(query)}" if query else "")


def sinks_from(specs: Iterable[str], environ: Mapping[str, str], *, timeout: float | None = None) -> list[Sink]:
    """Apprise sinks from URLs and ``@PATH`` files of URLs (one a line; blank lines and ``#`` comments skipped)."""
    sinks: list[Sink] = []
    for spec in specs:
        spec = spec.strip()
        if spec.startswith("@"):
            sinks += _sinks_in_file(expand(spec[1:], environ)[0], environ, timeout)
        elif spec:
            url, shown_as = expand(spec, environ)
            sinks.append(AppriseSink(url, shown_as=shown_as, timeout=timeout))
    return sinks


def _sinks_in_file(path: str, environ: Mapping[str, str], timeout: float | None) -> list[Sink]:
    shown = one_line(path)
    try:
        data = read_regular(os.path.expanduser(path), _URL_FILE_LIMIT + 1)
        if len(data) > _URL_FILE_LIMIT:
            raise ValueError(f"cannot read sink URLs from {shown}: larger than 1 MiB")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"cannot read sink URLs from {shown}: not UTF-8 text") from None
    except OSError as exc:
        raise ValueError(f"cannot read sink URLs from {shown}: {one_line(exc.strerror or str(exc))}") from None
    sinks: list[Sink] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            try:
                url, shown_as = expand(line, environ)
                sinks.append(AppriseSink(url, shown_as=shown_as, timeout=timeout))
            except ValueError as exc:
                raise ValueError(f"{shown} line {number}: {exc}") from None
    return sinks


# -- commands -------------------------------------------------------------------------------------


class CommandSink:
    """A local program that gets each alert as one JSON object on stdin: ``CommandSink(["page-me", "--team", "ml"])``.

    No shell. It runs in a session of its own, and after ``timeout`` its whole
    process group is killed. A non-zero exit is a failure carrying the last
    line of its stderr.
    """

    def __init__(self, argv: Sequence[str], *, shown_as: Mapping[str, str] | None = None, timeout: float | None = None) -> None:
        argv = [str(arg) for arg in argv]
        if not argv or not argv[0]:
            raise ValueError("a command sink needs a program to run")
        self._redact = _Redactor(dict(shown_as or {}))
        self.argv = argv
        self.name = self._redact(one_line(os.path.basename(argv[0].rstrip("/")) or argv[0]))
        self.timeout = timeout
        if shutil.which(argv[0]) is None:
            raise ValueError(f"{self.name}: program not found, or not executable")

    def __repr__(self) -> str:
        return f"CommandSink({self.name})"

    def send(self, alert: Alert, timeout: float) -> None:
        payload = json.dumps(alert.as_json(), ensure_ascii=False).encode("utf-8") + b"\n"
        with tempfile.TemporaryFile() as stderr:
            try:
                process = subprocess.Popen(
                    self.argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True, close_fds=True
                )
            except OSError as exc:
                raise SinkError(self._line(f"cannot run {self.name}: {exc.strerror or exc}")) from None
            try:
                process.communicate(payload, timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                raise SinkError(f"{self.name} did not finish within {timeout:g} s and was killed") from None
            except BaseException:
                _kill_group(process)
                raise
            if process.returncode != 0:
                raise SinkError(self._line(self._exit_text(process.returncode, _last_line(stderr))))

    def _exit_text(self, code: int, last: str) -> str:
        if code < 0:
            try:
                how = f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with status {code}"
        return f"{self.name} {how}" + (f": {last}" if last else "")

    def _line(self, text: str) -> str:
        return _limited(self._redact(one_line(text)))


def command_sink(command: str | Sequence[str], environ: Mapping[str, str], *, timeout: float | None = None) -> CommandSink:
    """A ``CommandSink`` from a list of arguments or one string split as a shell would (``shlex``), ``${NAME}`` read from ``environ``."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ValueError(f"cannot split the command into arguments: {exc}") from None
    else:
        argv = list(command)
    shown_as: dict[str, str] = {}
    expanded = []
    for arg in argv:
        value, found = expand(arg, environ)
        expanded.append(value)
        shown_as.update(found)
    return CommandSink(expanded, shown_as=shown_as, timeout=timeout)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the command's process group (its own session), then reap it; never waits long on grandchildren."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
    try:
        process.wait(2)
    except subprocess.TimeoutExpired:
        pass


def _last_line(stream: Any) -> str:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(max(0, size - _STDERR_TAIL))
    lines = [line.strip() for line in stream.read().decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""
