"""The Textual application: a thin shell around one screen and one source."""

from __future__ import annotations

import time
from typing import Callable

from textual.app import App
from textual.message import Message

from leet.config import Config
from leet.screens.symon import SymonScreen
from leet.sources import LiveSource


def quiet_driver():
    """The idle-friendly driver where the platform default is Textual's Linux one."""
    from textual.drivers.linux_driver import LinuxDriver

    default = App.get_driver_class(App)  # honours TEXTUAL_DRIVER
    if default is not LinuxDriver:
        return None
    try:
        from leet.driver import QuietLinuxDriver
    except ImportError:  # a Textual without the parser API this driver uses
        return None
    return QuietLinuxDriver


class DataChanged(Message):
    """A source wrote to the store. Coalesced: a burst of these is one redraw."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DataChanged)


class LeetApp(App[None]):
    CSS_PATH = "leet.tcss"
    TITLE = "leet"
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, source: LiveSource, config: Config | None = None, *, clock: Callable[[], float] = time.time, live: bool = True) -> None:
        super().__init__(driver_class=quiet_driver())
        self.config = config or Config()
        self.source = source
        self._clock = clock
        self._live = live
        source.on_change(self._data_changed_from_thread)

    def on_mount(self) -> None:
        try:
            self.theme = self.config.theme
        except Exception:
            self.notify(f"unknown theme {self.config.theme!r}; using textual-dark", severity="warning")
            self.theme = "textual-dark"
        self.push_screen(
            SymonScreen(
                self.source,
                grid=(self.config.grid_rows, self.config.grid_cols),
                history_seconds=self.config.history_minutes * 60,
                disk_paths=self.config.disk_paths,
                sidebar=self.config.sidebar,
                interval=self.config.interval,
                clock=self._clock,
            )
        )
        if self._live:
            self.source.start()

    def _data_changed_from_thread(self) -> None:
        # Runs on the hub thread: post, never touch widgets here.
        if self.is_running:
            self.post_message(DataChanged())

    def on_data_changed(self, _message: DataChanged) -> None:
        screen = self.screen
        if isinstance(screen, SymonScreen):
            screen.update_view()
        elif self.screen_stack and isinstance(self.screen_stack[0], SymonScreen):
            pass  # a modal (help) is on top; charts catch up when it closes

    def on_unmount(self) -> None:
        if self._live:
            self.source.stop()
