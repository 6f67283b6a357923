"""The help overlay, generated from the key table.

It scrolls (arrows, page keys, home/end, the mouse wheel) and says on its
bottom border when more lies below or above; F10 and ctrl+c quit, any other
key closes it.
"""

from __future__ import annotations

import textwrap

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from leet import __version__
from leet.ui.bindings import SYMON_KEYS, Key, help_sections

SCROLL_KEYS = frozenset({"up", "down", "pageup", "pagedown", "home", "end"})
QUIT_KEYS = frozenset({"f10", "ctrl+c"})


def help_text(keys: tuple[Key, ...], view: str, width: int | None = None) -> Text:
    """The help, descriptions wrapped under themselves to fit ``width`` cells (None: no wrapping)."""
    text = Text()
    text.append(f"leet {__version__}", style="bold")
    text.append(f" — {view}\n\n")
    key_width = max(len(shown) for _, rows in help_sections(keys) for shown, _ in rows)
    indent = key_width + 4
    room = max(20, width - indent) if width else None
    for category, rows in help_sections(keys):
        text.append(f"{category}\n", style="bold underline")
        for shown, description in rows:
            text.append(f"  {shown.ljust(key_width)}  ", style="bold")
            lines = textwrap.wrap(description, room) if room else [description]
            text.append(("\n" + " " * indent).join(lines) + "\n")
        text.append("\n")
    text.append("Press any key to close.", style="dim")
    return text


def more_note(scroll_y: float, max_scroll_y: float) -> str:
    """What the bottom border says: where more of the help lies, and how to reach it."""
    if max_scroll_y <= 0:
        return ""
    below, above = scroll_y < max_scroll_y, scroll_y > 0
    if below and above:
        return "↑↓ more · pgup pgdn"
    return "↓ more · pgdn, wheel" if below else "↑ more · pgup, home"


class HelpScreen(ModalScreen[None]):
    def __init__(self, keys: tuple[Key, ...] = SYMON_KEYS, view: str = "system monitor") -> None:
        super().__init__()
        self._keys = keys
        self._view = view
        self._wrapped_at = 0

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(help_text(self._keys, self._view), id="help-text")

    def on_mount(self) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        box.border_title = "keys"
        self.watch(box, "scroll_y", self._show_more, init=False)
        self.watch(box, "virtual_size", self._show_more, init=False)
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Wrap the descriptions to the box's width, then say whether more lies out of view."""
        text = self.query_one("#help-text", Static)
        width = text.content_region.width
        if width > 0 and width != self._wrapped_at:
            self._wrapped_at = width
            text.update(help_text(self._keys, self._view, width))
        self.call_after_refresh(self._show_more)

    def _show_more(self, *_changed: object) -> None:
        box = self.query_one("#help-box", VerticalScroll)
        box.border_subtitle = more_note(box.scroll_y, box.max_scroll_y)

    def on_key(self, event: events.Key) -> None:
        # Scrolling keys go on to the scroller's bindings; F10 quits; any other key closes help.
        if event.key in SCROLL_KEYS:
            return
        event.stop()
        event.prevent_default()
        if event.key in QUIT_KEYS:
            self.app.exit()
        else:
            self.dismiss()
