"""A JSON POST to a plain http(s) URL, with urllib: leet's alert JSON, or Slack's ``{"text": …}``.

``shape="json"`` posts exactly what ``--exec`` gets on stdin and ``--json``
prints (``Alert.as_json``: ``kind``, ``title``, ``text``, ``run_id``,
``key``, ``value``, ``ident`` …), so a receiver can drop repeats by
``ident``. ``shape="slack"`` posts ``{"text": …}``, as Slack's incoming
webhooks (and Mattermost's, Rocket.Chat's …) take it. Redirects are not
followed (a POST carrying an alert goes where it was told, or fails), and
any answer but 2xx is a failure.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from leet.alerts.events import Alert
from leet.alerts.sinks.message import message_parts, slack_text
from leet.alerts.sinks.redact import Redactor, expand, url_parts
from leet.alerts.sinks.sink import SinkError
from leet.common.text import escaped

SHAPES = ("json", "slack")
MAX_ANSWER = 64 << 10  # bytes of the answer read (and ignored): enough for the connection to end cleanly


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # a 3xx becomes an HTTPError
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class WebhookSink:
    """``WebhookSink("https://hooks.example.com/x").send(alert, timeout)``: one POST, ``SinkError`` unless it was answered 2xx."""

    def __init__(self, url: str, shape: str = "json", *, shown_as: Mapping[str, str] | None = None, timeout: float | None = None) -> None:
        if shape not in SHAPES:
            raise ValueError(f"unknown webhook shape {escaped(shape)!r} (known: json, slack)")
        self.url = request_url(url)
        self.shape = shape
        self.timeout = timeout
        shown_as = dict(shown_as or {})
        self.name = display_name(self.url, shown_as)
        shown = unquote(self.name).lower()
        self._redact = Redactor({**{part: "***" for part in url_parts(self.url) if part.lower() not in shown}, **shown_as})

    def __repr__(self) -> str:
        return f"WebhookSink({self.name})"

    def payload(self, alert: Alert) -> dict[str, Any]:
        if self.shape == "slack":
            return {"text": slack_text(*message_parts(alert))}
        return alert.as_json()

    def send(self, alert: Alert, timeout: float) -> None:
        body = json.dumps(self.payload(alert), ensure_ascii=True).encode("ascii")
        request = urllib.request.Request(self.url, data=body, method="POST", headers={"Content-Type": "application/json", "User-Agent": "leet-watch"})
        try:
            with _OPENER.open(request, timeout=timeout) as answer:
                answer.read(MAX_ANSWER)
        except urllib.error.HTTPError as error:
            moved = " (redirects are not followed)" if 300 <= error.code < 400 else ""
            raise SinkError(self._redact.line(f"HTTP {error.code} {error.reason}{moved}")) from None
        except urllib.error.URLError as error:
            raise SinkError(self._redact.line(str(error.reason))) from None
        except (OSError, http.client.HTTPException, ValueError) as error:
            raise SinkError(self._redact.line(str(error) or type(error).__name__)) from None


def webhook(url: str, shape: str = "json", *, environ: Mapping[str, str] | None = None, timeout: float | None = None) -> WebhookSink:
    """A JSON POST to an http(s) URL: ``webhook("https://hooks.example.com/x")``; ``${NAME}`` read from ``environ``."""
    url, shown_as = expand(url, environ) if environ is not None else (url, {})
    return WebhookSink(url, shape, shown_as=shown_as, timeout=timeout)


def display_name(url: str, shown_as: Mapping[str, str]) -> str:
    """``http://host:port/h...s/${HOOK}``: no credentials, no query, each path part cut to its ends unless it came from the environment."""
    split = urlsplit(url)
    parts = []
    for part in split.path.split("/"):
        part = unquote(part)
        parts.append(shown_as.get(part) or (f"{part[0]}...{part[-1]}" if len(part) > 2 else part))
    return f"{split.scheme}://{split.netloc.rpartition('@')[2]}{'/'.join(parts) or '/'}"


def request_url(url: str) -> str:
    """``url`` checked (http or https, a host, a valid port) and quoted as a request line needs it; ValueError otherwise."""
    try:
        split = urlsplit(url.strip())
        split.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ValueError("a webhook needs an http:// or https:// URL with a valid host and port") from None
    if split.scheme.lower() not in ("http", "https") or not split.hostname:
        got = f"{escaped(split.scheme)}://" if split.scheme else "no scheme"
        raise ValueError(f"a webhook needs an http:// or https:// URL with a host (got {got})")
    path = quote(split.path or "/", safe="/%:@!$&'()*+,;=~-._")
    query = urlencode(parse_qsl(split.query, keep_blank_values=True))
    return urlunsplit((split.scheme.lower(), split.netloc, path, query, ""))
