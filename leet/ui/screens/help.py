"""The help overlay, generated from the key table."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from leet import __version__
from leet.ui.bindings import SYMON_KEYS, Key, help_sections


def help_text(keys: tuple[Key, ...], view: str) -> Text:
    text = Text()
    text.append(f"leet {__version__}", style="bold")
    text.append(f" — {view}\n\n")
    width = max(len(shown) for _, rows in help_sections(keys) for shown, _ in rows)
    for category, rows in help_sections(keys):
        text.append(f"{category}\n", style="bold underline")
        for shown, description in rows:
            text.append(f"  {shown.ljust(width)}  ", style="bold")
            text.append(f"{description}\n")
        text.append("\n")
    text.append("Press any key to close.", style="dim")
    return text


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,h,question_mark", "dismiss", "Close", show=False)]

    def __init__(self, keys: tuple[Key, ...] = SYMON_KEYS, view: str = "system monitor") -> None:
        super().__init__()
        self._keys = keys
        self._view = view

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(help_text(self._keys, self._view), id="help-text")

    def on_key(self, event) -> None:
        # Any key closes help; scrolling keys stay with the scroller.
        if event.key not in ("up", "down", "pageup", "pagedown", "home", "end"):
            event.stop()
            self.dismiss()
