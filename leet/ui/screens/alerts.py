"""Telling alerts in the TUI: toasts, the bell, and the pane (``!``) of every alert this session saw.

The run and workspace screens find what is news (``views.alerts``) and hand
it to ``announce``, on the UI thread: each alert joins the session's
``AlertLog`` (one per app), and one new to it gets a toast and, when the
config says so for its kind, the bell. ``AlertsScreen`` lists the log,
newest first, and follows it while open.
"""

from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen

from leet.alerts.events import Alert
from leet.ui.app import leet_app
from leet.ui.views.alerts import AlertLog, log_lines, toast, wanted
from widgets.textpane import TextPane

TOASTS_AT_ONCE = 5  # more news at once than this: the rest are told in one toast
EMPTY = (
    "No alerts yet.",
    "run.alert() records, and runs that finish, fail or crash while you watch, show here.",
)

def session_log(app: App) -> AlertLog:
    """The alerts ``app`` has seen this session."""
    return leet_app(app).alert_log


def announce(app: App, news: Iterable[Alert], seen: Iterable[Alert] = ()) -> None:
    """Keep ``seen`` (already there when a run was opened) quietly; tell each of ``news`` not told before."""
    log = session_log(app)
    for alert in seen:
        log.add(alert)
    toasts, bells = wanted(leet_app(app).config.alerts)
    told, untold, ring = 0, 0, False
    for alert in news:
        if not log.add(alert):
            continue  # another screen told it already
        ring = ring or alert.kind in bells
        if alert.kind not in toasts:
            continue
        if told < TOASTS_AT_ONCE:
            title, message, severity = toast(alert)
            app.notify(message, title=title, severity=severity, markup=False)  # type: ignore[arg-type]
            told += 1
        else:
            untold += 1
    if untold:
        app.notify(f"{untold} more alert{'s' if untold != 1 else ''}: press ! to list them", severity="warning", markup=False)
    if ring:
        app.bell()


@runtime_checkable
class WatchesAlerts(Protocol):
    """A screen that can look for news without drawing (so the pane over it follows the runs)."""

    def check_alerts(self) -> None: ...


class AlertsScreen(ModalScreen[None]):
    """Every alert seen this session, newest first; ``esc`` or ``!`` closes it."""

    DEFAULT_CSS = """
    AlertsScreen {
        align: center middle;
    }
    #alerts-box {
        width: 120;
        max-width: 95%;
        height: 80%;
        border: round $accent;
        background: $surface;
        padding: 0 1;
    }
    #alerts-list {
        height: 1fr;
    }
    """

    BINDINGS = [
        Binding("escape,exclamation_mark", "close", "Close", show=False),
        Binding("q,f10,ctrl+c", "quit", "Quit", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._drawn = -1

    def compose(self) -> ComposeResult:
        with Vertical(id="alerts-box"):
            yield TextPane("Alerts", id="alerts-list")

    def on_mount(self) -> None:
        self.query_one("#alerts-box").border_title = "alerts · esc closes"
        self.update_view()
        self.set_focus(self.query_one(TextPane))

    def update_view(self) -> None:
        """New data: the screen below looks for news, and the list follows the log."""
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        if isinstance(below, WatchesAlerts):
            below.check_alerts()
        log = session_log(self.app)
        if log.version == self._drawn:
            return
        self._drawn = log.version
        alerts = log.newest_first()
        pane = self.query_one(TextPane)
        pane.title = f"Alerts ({len(alerts):,}) · newest first" if alerts else "Alerts"
        pane.set_lines(log_lines(alerts) if alerts else [(text, "muted") for text in EMPTY], "this session")

    def action_close(self) -> None:
        self.dismiss()

    def action_quit(self) -> None:
        self.app.exit()
