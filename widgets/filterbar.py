"""A one-line filter prompt that previews as you type.

Enter keeps the pattern, Escape restores the one from before. The owner
listens for ``FilterBar.Changed`` (every keystroke) and ``FilterBar.Done``.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Label


class FilterBar(Horizontal):
    DEFAULT_CSS = """
    FilterBar {
        height: 1;
        display: none;
    }
    FilterBar Label {
        width: auto;
        padding: 0 1 0 0;
    }
    FilterBar Input {
        border: none;
        height: 1;
        padding: 0;
        width: 1fr;
    }
    FilterBar Input:nocolor > .input--cursor {
        text-style: reverse;  /* without colour the caret is only its background */
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    class Changed(Message):
        def __init__(self, target: str, pattern: str) -> None:
            super().__init__()
            self.target = target
            self.pattern = pattern

    class Done(Message):
        def __init__(self, target: str, pattern: str, accepted: bool) -> None:
            super().__init__()
            self.target = target
            self.pattern = pattern
            self.accepted = accepted

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.target = ""
        self._before = ""

    def compose(self) -> ComposeResult:
        yield Label("", id="filter-prompt")
        yield Input(id="filter-input", compact=True)

    def open(self, target: str, prompt: str, current: str) -> None:
        self.target = target
        self._before = current
        self.query_one(Label).update(Content(prompt))
        field = self.query_one(Input)
        field.value = current
        field.cursor_blink = False
        self.display = True
        field.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.display:
            self.post_message(self.Changed(self.target, event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close(event.value, True)

    def action_cancel(self) -> None:
        self._close(self._before, False)

    def _close(self, pattern: str, accepted: bool) -> None:
        self.display = False
        self.post_message(self.Done(self.target, pattern, accepted))
