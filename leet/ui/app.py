"""The Textual application: a thin shell around one screen and its data sources."""

from __future__ import annotations

import time
from typing import Any, Callable

from textual.app import App
from textual.message import Message
from textual.screen import Screen

from leet.config import Config


def quiet_driver():
    """The idle-friendly driver where the platform default is Textual's Linux one."""
    from textual.drivers.linux_driver import LinuxDriver

    default = App.get_driver_class(App)  # honours TEXTUAL_DRIVER
    if default is not LinuxDriver:
        return None
    try:
        from leet.ui.driver import QuietLinuxDriver
    except ImportError:  # a Textual without the parser API this driver uses
        return None
    return QuietLinuxDriver


class DataChanged(Message):
    """A source wrote to the store. Coalesced: a burst of these is one redraw."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DataChanged)


class LeetApp(App[None]):
    """Runs one screen; its sources start with the app and stop with it.

    ``source`` is the screen's data source (a ``LiveSource`` or a ``RunSource``):
    anything with ``on_change``, ``start`` and ``stop``. ``screen`` builds the
    screen; by default the live system monitor.
    """

    CSS_PATH = "leet.tcss"
    TITLE = "leet"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self,
        source: Any,
        config: Config | None = None,
        *,
        clock: Callable[[], float] = time.time,
        live: bool = True,
        screen: Callable[[], Screen] | None = None,
    ) -> None:
        super().__init__(driver_class=quiet_driver())
        self.config = config or Config()
        self.source = source
        self._clock = clock
        self._live = live
        self._make_screen = screen or self._symon_screen
        source.on_change(self._data_changed_from_thread)

    def _symon_screen(self) -> Screen:
        from leet.ui.screens.symon import SymonScreen

        return SymonScreen(
            self.source,
            grid=(self.config.grid_rows, self.config.grid_cols),
            history_seconds=self.config.history_minutes * 60,
            disk_paths=self.config.disk_paths,
            sidebar=self.config.sidebar,
            interval=self.config.interval,
            clock=self._clock,
        )

    def on_mount(self) -> None:
        try:
            self.theme = self.config.theme
        except Exception:
            self.notify(f"unknown theme {self.config.theme!r}; using textual-dark", severity="warning")
            self.theme = "textual-dark"
        self.push_screen(self._make_screen())
        if self._live:
            self.source.start()

    def on_ready(self) -> None:
        # First frame drawn: a source holding back its bulk work can go on.
        ready = getattr(self.source, "ui_ready", None)
        if ready is not None:
            ready()

    def _data_changed_from_thread(self) -> None:
        # Runs on a source's thread: post, never touch widgets here.
        if self.is_running:
            self.post_message(DataChanged())

    def on_data_changed(self, _message: DataChanged) -> None:
        # A modal (help) on top: the screen below catches up when it closes.
        update = getattr(self.screen, "update_view", None)
        if update is not None:
            update()

    def on_unmount(self) -> None:
        if self._live:
            self.source.stop()
