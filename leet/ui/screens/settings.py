"""The settings screen (F2): every setting, its value and where it came from; change one, or reset it.

A change is checked by the setting's own check and remembered in
``layout.json`` (never written to the config file); a reset forgets the
remembered value, so the setting falls back to the file, the environment or
its default. The theme and the grid follow at once; the rest at the next
start, as each row says.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from leet.common.text import clean
from leet.config.checks import CHECKS
from leet.config.settings import Config, ConfigError
from leet.ui.layout_keeper import LayoutKeeper
from leet.ui.screens.process_dialogs import DIALOG_CSS, ChoiceList
from leet.ui.views.settings import SettingRow, setting_rows, typed_value

WHERE = "settings screen"
HELP = "enter change · r reset to the value below the remembered one · esc close"


@runtime_checkable
class SettingsHost(Protocol):
    """The app, as this screen reaches it: its settings and the keeper of its layout file."""

    config: Config
    layout_keeper: LayoutKeeper | None


def row_items(rows: list[SettingRow]) -> list[tuple[str, str]]:
    """(name, ``value · origin · at start``) for the list."""
    return [(row.name, " · ".join(part for part in (clean(row.value), row.origin, row.note) if part)) for row in rows]


class SettingsScreen(ModalScreen[None]):
    DEFAULT_CSS = DIALOG_CSS.format(name="SettingsScreen", border="$accent") + """
    SettingsScreen > Vertical { width: 96; }
    SettingsScreen ChoiceList { max-height: 30; }
    SettingsScreen Input { border: tall $accent; height: 3; }
    """
    BINDINGS = [
        Binding("escape,q,f2", "close", "Close", show=False),
        Binding("r", "reset", "Reset", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.list = ChoiceList([], self._chosen, 0, id="settings-list")
        self.editing: str | None = None  # the setting the input is for

    @property
    def host(self) -> SettingsHost:
        if not isinstance(self.app, SettingsHost):
            raise TypeError(f"the settings screen runs in a leet app, not {type(self.app).__name__}")
        return self.app

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Settings: value · where it came from (default, file, env, flag, remembered)", classes="dialog-title")
            yield self.list
            yield Input(id="settings-input")
            yield Static("", classes="dialog-ask", id="settings-say", markup=False)
            yield Static(HELP, classes="dialog-help")

    def on_mount(self) -> None:
        self.query_one(Input).display = False
        self._fill()
        if self.host.layout_keeper is None:
            self._say("Remembering is off (--no-remember or remember = false): settings can be read here, changed in config.toml")
        self.list.focus()

    @property
    def rows(self) -> list[SettingRow]:
        return setting_rows(self.host.config)

    def _fill(self) -> None:
        self.list.items = row_items(self.rows)
        self.list.relayout()

    def _say(self, text: str) -> None:
        say = self.query_one("#settings-say", Static)
        say.update(text)
        say.display = bool(text)

    def _changeable(self, row: SettingRow) -> bool:
        if self.host.layout_keeper is None:
            self._say(f"{row.name}: remembering is off, so it is changed in config.toml")
            return False
        if row.fixed:
            self._say(f"{row.name}: {row.fixed}")
            return False
        return True

    # -- change --------------------------------------------------------------------------
    def _chosen(self, index: int) -> None:
        row = self.rows[index]
        if not self._changeable(row):
            return
        self.editing = row.name
        field = self.query_one(Input)
        field.value = "" if row.value == "(none)" else row.value.strip('"')
        field.placeholder = f"new value for {row.name}"
        field.display = True
        self._say(f"{row.name}: enter keeps it, esc leaves it" + (" (takes effect at the next start)" if row.note else ""))
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = self.editing
        if name is None:
            return
        value = typed_value(event.value)
        try:
            CHECKS[name](value, WHERE)
        except ConfigError as error:
            self._say(str(error).removeprefix(f"{WHERE}: "))
            return
        self._remember(name, value, forget=False)

    def _remember(self, name: str, value: object, *, forget: bool) -> None:
        keeper = self.host.layout_keeper
        assert keeper is not None
        self.host.config = keeper.change_setting(name, value, forget=forget)
        self._close_input()
        self._fill()
        row = next(row for row in self.rows if row.name == name)
        done = "reset to" if forget else "set to"
        self._say(f"{name} {done} {clean(row.value)} ({row.origin})" + (": at the next start" if row.note else ""))

    def _close_input(self) -> None:
        self.editing = None
        self.query_one(Input).display = False
        self.list.focus()

    # -- keys -----------------------------------------------------------------------------
    def action_close(self) -> None:
        if self.editing is not None:
            self._close_input()
            self._say("")
            return
        self.dismiss(None)

    def action_reset(self) -> None:
        if self.editing is not None:
            return  # r is a letter of the value being typed
        row = self.rows[self.list.cursor]
        if not self._changeable(row):
            return
        keeper = self.host.layout_keeper
        if keeper is None or row.name not in keeper.layout.settings:
            self._say(f"{row.name}: nothing remembered to reset")
            return
        self._remember(row.name, None, forget=True)
