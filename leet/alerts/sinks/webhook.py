"""A JSON POST to a plain http(s) URL, sent through Apprise's json sink, in Apprise's payload or Slack's."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl, quote, urlsplit

from leet.alerts.sinks.apprise_sink import AppriseSink
from leet.alerts.sinks.redact import expand
from leet.common.text import escaped

# Apprise's json sink renames a standard key with ``:key=new`` and drops it with ``:key=`` (empty).
_SLACK_PAYLOAD = (":message=text", ":title=", ":version=", ":type=", ":attachments=")


def webhook(url: str, shape: str = "json", *, environ: Mapping[str, str] | None = None, timeout: float | None = None) -> AppriseSink:
    """A JSON POST to an http(s) URL, through Apprise's json sink: ``webhook("https://hooks.example.com/x")``.

    ``shape="json"`` posts Apprise's payload (``title``, ``message``, ``type``,
    ``version``, ``attachments``); ``shape="slack"`` posts ``{"text": …}``,
    as Slack's incoming webhooks (and Mattermost's, Rocket.Chat's …) take it.
    """
    if shape not in ("json", "slack"):
        raise ValueError(f"unknown webhook shape {escaped(shape)!r} (known: json, slack)")
    url, shown_as = expand(url, environ) if environ is not None else (url, {})
    return AppriseSink(apprise_json_url(url, shape), shown_as=shown_as, slack=shape == "slack", timeout=timeout)


def apprise_json_url(url: str, shape: str = "json") -> str:
    """``http(s)://[user:pass@]host[:port]/path?q=v`` → ``json(s)://[user:pass@]host[:port]/path?-q=v`` (``-``: sent as a query parameter)."""
    try:
        split = urlsplit(url.strip())
        split.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise ValueError("a webhook needs an http:// or https:// URL with a valid host and port") from None
    if split.scheme.lower() not in ("http", "https") or not split.hostname:
        got = f"{escaped(split.scheme)}://" if split.scheme else "no scheme"
        raise ValueError(f"a webhook needs an http:// or https:// URL with a host (got {got})")
    scheme = "jsons" if split.scheme.lower() == "https" else "json"
    query = [f"-{quote(key, safe='')}={quote(value, safe='')}" for key, value in parse_qsl(split.query, keep_blank_values=True)]
    if shape == "slack":
        query += _SLACK_PAYLOAD
    return f"{scheme}://{split.netloc}{split.path or '/'}" + (f"?{'&'.join(query)}" if query else "")
