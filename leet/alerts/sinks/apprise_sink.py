"""Alerts through Apprise (``slack://``, ``mailtos://``, ``jsons://``, ``ntfy://`` …), each sink named without its secrets.

A sink is shown by ``name``: Apprise's privacy form of its URL, its query
left out and the path of a JSON/form/XML URL masked (Apprise shows those
whole, and webhook secrets live there). ``sinks_from`` builds them from URLs
and from ``@PATH`` files of URLs.

Apprise is imported inside the functions that use it: ``leet --help`` and
the screens must not pay for it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from leet.alerts.events import Alert
from leet.alerts.sinks.apprise_log import apprise_log, failure_reason
from leet.alerts.sinks.message import message_parts
from leet.alerts.sinks.redact import MIN_SECRET, Redactor, expand, url_parts
from leet.alerts.sinks.sink import Sink, SinkError
from leet.common.text import escaped
from leet.runfile.files import read_regular

if TYPE_CHECKING:
    from apprise.plugins.base import NotifyBase

# Apprise's own sinks for arbitrary endpoints: their privacy form shows the path, where webhook secrets live.
_PATH_SHOWN = ("json", "jsons", "form", "forms", "xml", "xmls")
_URL_FILE_LIMIT = 1 << 20
_URL_LINE_LIMIT = 16 << 10  # a URL with its tokens; a longer line is not one


class AppriseSink:
    """One Apprise URL: ``AppriseSink("slack://…")``. Raises ``ValueError`` for a URL Apprise cannot use.

    ``shown_as`` maps values that came from the environment to the ``${NAME}``
    they are shown as; ``timeout`` overrides the delivery's for this sink.
    """

    def __init__(self, url: str, *, shown_as: Mapping[str, str] | None = None, timeout: float | None = None) -> None:
        import apprise

        shown_as = dict(shown_as or {})
        scheme = _scheme(url)
        with apprise_log.captured() as lines:
            plugin = apprise.Apprise.instantiate(url)
        if plugin is None:
            hide = Redactor({**{part: "***" for part in url_parts(url)}, **shown_as})
            raise ValueError(_refusal(scheme, lines, hide))
        self._plugin: NotifyBase = plugin
        self.name = _display_name(plugin.url(privacy=True), shown_as)
        shown = unquote(self.name).lower()
        self._redact = Redactor({**{part: "***" for part in url_parts(url) if part.lower() not in shown}, **shown_as})
        self._own_timeouts = {"cto", "rto"} & _query_keys(url)
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"AppriseSink({self.name})"

    def send(self, alert: Alert, timeout: float) -> None:
        title, body = message_parts(alert)
        self._set_timeouts(timeout)
        with apprise_log.captured() as lines:
            try:
                ok = self._plugin.notify(body=body, title=title, notify_type=alert.apprise_type, body_format="text")
            except Exception as exc:  # a plugin's bug must not stop the worker
                raise SinkError(self._redact.line(f"{type(exc).__name__}: {exc}")) from None
        if not ok:
            raise SinkError(self._redact.line(failure_reason(lines) or "Apprise could not send it (it logged no reason)"))

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


def _query_keys(url: str) -> set[str]:
    try:
        return {key for key, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
    except ValueError:
        return set()


def _scheme(url: str) -> str:
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*)://", url)
    return match.group(1).lower() if match else ""


def _refusal(scheme: str, lines: list[tuple[int, str]], hide: Redactor) -> str:
    """Why Apprise would not take a URL, naming only its scheme: the rest may be a token."""
    if not scheme:
        return "not a notification URL (SCHEME://…, e.g. slack://, mailtos://, jsons://)"
    try:
        from apprise.plugins import N_MGR

        known = scheme in N_MGR
    except ImportError:  # an Apprise without the plugin manager: say what it logged
        known = True
    if not known:
        return f"{escaped(scheme)}:// is not a notification service Apprise knows"
    warnings = [message for level, message in lines if level >= logging.WARNING and "URL" not in message]
    why = warnings[0].rstrip(".") if warnings else "its form is not one Apprise accepts"
    return f"{escaped(scheme)}:// URL cannot be used: {hide.line(why)}"


def _display_name(privacy_url: str, shown_as: Mapping[str, str]) -> str:
    """Apprise's privacy form without its query; a JSON/form/XML path masked as Apprise masks tokens (``a...z``)."""
    name = privacy_url.split("?", 1)[0]
    for value, shown in sorted(shown_as.items(), key=lambda item: -len(item[0])):
        if len(value) >= MIN_SECRET:
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
    shown = escaped(path)
    try:
        data = read_regular(os.path.expanduser(path), _URL_FILE_LIMIT + 1)
        if len(data) > _URL_FILE_LIMIT:
            raise ValueError(f"cannot read sink URLs from {shown}: larger than 1 MiB")
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"cannot read sink URLs from {shown}: not UTF-8 text") from None
    except OSError as exc:
        raise ValueError(f"cannot read sink URLs from {shown}: {escaped(exc.strerror or str(exc))}") from None
    sinks: list[Sink] = []
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > _URL_LINE_LIMIT:
            raise ValueError(f"{shown} line {number}: longer than {_URL_LINE_LIMIT:,} characters, so not a URL")
        line = line.strip()
        if line and not line.startswith("#"):
            try:
                url, shown_as = expand(line, environ)
                sinks.append(AppriseSink(url, shown_as=shown_as, timeout=timeout))
            except ValueError as exc:
                raise ValueError(f"{shown} line {number}: {exc}") from None
    return sinks
