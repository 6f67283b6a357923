"""The Textual application: a thin shell around one screen and its data sources."""

from __future__ import annotations

import time
from typing import Callable, Protocol, Sequence, runtime_checkable

from rich.console import RenderableType
from textual import events
from textual.app import App
from textual.driver import Driver
from textual.filter import LineFilter
from textual.message import Message
from textual.screen import Screen

from leet.config import Config
from leet.config.remembered import Remembering
from leet.sources.base import Source
from leet.sources.live import LiveSource
from leet.ui.layout_keeper import LayoutKeeper
from leet.ui.output import keep_geometry_cache_small
from leet.ui.terminal import TEXTUAL_COLOR_FILTERS, terminal_filters
from leet.ui.views.alerts import AlertLog
from widgets.lines import ASCII_CLASS

# The quiet driver reads Textual's input parser from the inside: only on the
# releases it was checked against. Any other Textual gets its own driver.
QUIET_DRIVER_TEXTUAL = ("8.2.",)


def quiet_driver() -> type[Driver] | None:
    """The idle-friendly driver where the platform default is Textual's Linux one."""
    from importlib.metadata import PackageNotFoundError, version

    from textual.drivers.linux_driver import LinuxDriver

    default = App.get_driver_class(App)  # type: ignore[arg-type]  # reads no instance state; honours TEXTUAL_DRIVER
    if default is not LinuxDriver:
        return None
    try:
        if not version("textual").startswith(QUIET_DRIVER_TEXTUAL):
            return None
    except PackageNotFoundError:
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


@runtime_checkable
class ShowsData(Protocol):
    """A screen that pulls from its sources when told that they changed."""

    def update_view(self) -> None: ...


class LeetApp(App[None]):
    """Runs one screen and owns the sources it shows.

    ``source`` is the root screen's data source; ``screen`` builds that
    screen (by default the live system monitor). Every source the app shows,
    the root one and any a screen opens later, goes through :meth:`attach`:
    the app hears its changes, starts it, and closes it when it is detached
    or the app ends. With ``live=False`` the root source is the caller's to
    feed (tests and screenshots feed it synchronously): the app only listens.
    """

    CSS_PATH = "leet.tcss"
    TITLE = "leet"
    ENABLE_COMMAND_PALETTE = False

    def __init__(
        self,
        source: Source,
        config: Config | None = None,
        *,
        clock: Callable[[], float] = time.time,
        live: bool = True,
        screen: Callable[[], Screen] | None = None,
        remembering: Remembering | None = None,
    ) -> None:
        super().__init__(driver_class=quiet_driver())
        self.config = config or Config()
        # The layout file (leet.config.layout_state): None when nothing is remembered.
        self.layout_keeper = LayoutKeeper(self, remembering, self.config.origin) if remembering is not None else None
        self.source = source
        self._clock = clock
        self._make_screen = screen or self._symon_screen
        self._attached: dict[Source, bool] = {}  # each source (by identity), and whether the app runs it
        self.alert_log = AlertLog()  # every alert this session saw, for the alerts pane (``!``)
        self._started = False
        # What the terminal can show (leet.ui.terminal): ASCII only, no colour.
        self._terminal_filters = terminal_filters(ascii=bool(self.config.ascii), color=self.config.color)
        self.no_color = not self.config.color  # Textual's own :nocolor rules follow
        if self.config.ascii:
            self.add_class(ASCII_CLASS)
        self.attach(source, run=live)

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, less its NO_COLOR ones (``Config.color`` decides), then the terminal's."""
        return [f for f in super().get_line_filters() if not isinstance(f, TEXTUAL_COLOR_FILTERS)] + self._terminal_filters

    # -- the sources ------------------------------------------------------------------
    def attach(self, source: Source, *, run: bool = True) -> None:
        """Show ``source``: hear its changes and, with ``run``, start it (once the app runs) and close it at the end."""
        if source in self._attached:
            return
        self._attached[source] = run
        source.on_change(self._changed_from_thread)
        if run and self._started:
            source.start()

    def detach(self, source: Source) -> None:
        """Stop showing ``source``: no more notices, and closed if the app ran it."""
        if source not in self._attached:
            return
        run = self._attached.pop(source)
        source.off_change(self._changed_from_thread)
        if run:
            source.close()

    def _changed_from_thread(self) -> None:
        # Runs on a source's thread: post, never touch widgets here.
        if self.is_running:
            self.post_message(DataChanged())

    # -- the app's life ------------------------------------------------------------------
    def _symon_screen(self) -> Screen:
        from leet.ui.screens.symon import SymonScreen

        assert isinstance(self.source, LiveSource), "the system monitor shows a live source"
        return SymonScreen(
            self.source,
            grid=(self.config.grid_rows, self.config.grid_cols),
            history_seconds=self.config.history_minutes * 60,
            disk_paths=self.config.disk_paths,
            sidebar=self.config.sidebar,
            interval=self.config.interval,
            clock=self._clock,
            watched_pid=self.config.pid,
            watch_tree=self.config.track_tree,
            energy_price=self.config.energy_price,
            energy_currency=self.config.energy_currency,
        )

    def on_mount(self) -> None:
        try:
            self.theme = self.config.theme
        except Exception:
            self.notify(f"unknown theme {self.config.theme!r}; using textual-dark", severity="warning", markup=False)
            self.theme = "textual-dark"
        if self.layout_keeper is not None:
            self.layout_keeper.start()
        self.push_screen(self._make_screen())
        self._started = True
        for source, run in self._attached.items():
            if run:
                source.start()

    def on_ready(self) -> None:
        # First frame drawn: a source holding back its bulk work can go on.
        for source in self._attached:
            source.ui_ready()

    def on_data_changed(self, _message: DataChanged) -> None:
        # A modal (help) on top: the screen below catches up when it closes.
        if isinstance(self.screen, ShowsData):
            self.screen.update_view()
        keep_geometry_cache_small()

    # -- the remembered layout ------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        await super().on_event(event)
        if self.layout_keeper is not None and isinstance(event, (events.Key, events.MouseUp)):
            self.layout_keeper.soon()  # a key or a click may have changed the layout

    def exit(self, result: None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        if self.layout_keeper is not None and self.is_running:
            self.layout_keeper.save_at_exit()
        super().exit(result, return_code, message)

    def on_unmount(self) -> None:
        for source, run in reversed(self._attached.items()):
            if run:
                source.close()


def leet_app(app: App) -> LeetApp:
    """``app`` as the LeetApp it is: how a screen reaches :meth:`LeetApp.attach` and :meth:`LeetApp.detach`."""
    if not isinstance(app, LeetApp):
        raise TypeError(f"leet screens run in a LeetApp, not {type(app).__name__}")
    return app
