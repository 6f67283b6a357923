"""What an alert says once it leaves the machine: a one-line title and a plain-text body, every unsafe character written out."""

from __future__ import annotations

from leet.alerts.events import Alert
from leet.common.text import escaped, escaped_lines


def message_parts(alert: Alert) -> tuple[str, str]:
    """The title (one line) and the body: the alert's text, then one line saying what it is about."""
    title = escaped(" ".join((alert.title or alert.kind).split()))
    body = "\n".join(part for part in (escaped_lines(alert.text.strip()), context_line(alert)) if part)
    return title, body or title


def context_line(alert: Alert) -> str:
    """``run NAME (ID) · LABEL · SOURCE``, leaving out what the alert does not say."""
    if alert.run_name and alert.run_id and alert.run_name != alert.run_id:
        run = f"run {alert.run_name} ({alert.run_id})"
    else:
        run = f"run {alert.run_name or alert.run_id}" if alert.run_name or alert.run_id else ""
    parts = [run, alert.label, alert.source if alert.source not in (alert.run_name, alert.run_id) else ""]
    return escaped(" · ".join(part for part in parts if part))


def slack_text(title: str, body: str) -> str:
    """Slack reads ``&``, ``<`` and ``>`` as markup (``<!channel>`` pings everyone): escaped as Slack asks."""
    text = f"{title}\n{body}" if body != title else title
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
