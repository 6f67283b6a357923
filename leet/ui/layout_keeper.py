"""Keeping the layout: each screen's remembered dict handed to it at mount, and written back after changes.

A screen that remembers its layout has ``LAYOUT_NAME`` (its view: "symon",
"run", "workspace", "cluster"), ``remembered_layout()`` (a dict of JSON values: what
it would need to look the same again; a feature adds its own keys there) and
``restore_layout(saved)`` (the same dict as remembered, every value checked
before use). A key or a click may change a layout, so each one asks for a
save a second later (``SAVE_DELAY``): at most one write a second, made on a
thread of the keeper's own (a home folder on a network disk can take long to
write), and one more as the app exits, waited for. The theme is remembered
when it changes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

from textual.app import App
from textual.notifications import Notification, Notify
from textual.timer import Timer

from leet.config.layout_state import Layout
from leet.config.remembered import Remembering, with_remembered
from leet.config.settings import Config

SAVE_DELAY = 1.0  # seconds from a key or click to the write it may cause
# A view key that a setting also decides: a LEET_* variable or a flag for the setting wins over the remembered key.
SETTING_KEYS = {"grid": ("grid_rows", "grid_cols"), "sidebar": ("sidebar",)}


@runtime_checkable
class RemembersLayout(Protocol):
    LAYOUT_NAME: str

    def remembered_layout(self) -> dict[str, Any]: ...

    def restore_layout(self, saved: Mapping[str, Any]) -> None: ...


class LayoutKeeper:
    """The layout file of one app: what each view restores, and when it is written."""

    def __init__(self, app: App, remembering: Remembering, origin_of: Callable[[str], str]) -> None:
        self.app = app
        self.remembering = remembering
        self._origin_of = origin_of  # where each setting came from at the start
        self._pending: Timer | None = None
        self._theme: str | None = None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="leet-layout")  # one at a time, in order
        self._exited = False

    @property
    def layout(self) -> Layout:
        return self.remembering.file.layout

    def start(self) -> None:
        """Call once the theme is set: a later theme is the person's choice."""
        self._theme = self.app.theme
        if self.remembering.message:
            self.app.notify(self.remembering.message, severity="warning", timeout=8, markup=False)

    def view(self, name: str) -> dict[str, Any]:
        """What view ``name`` remembers, less the keys a ``LEET_*`` variable or a flag decided."""
        saved = dict(self.layout.view(name))
        for key, settings in SETTING_KEYS.items():
            if any(self._origin_of(setting) in ("env", "flag") for setting in settings):
                saved.pop(key, None)
        return saved

    def soon(self) -> None:
        """Save within ``SAVE_DELAY``, once however many changes come before then.

        What the screens show is also taken as soon as the key has been handled:
        a view closed within the delay (the run view, back to the workspace) is kept too.
        """
        if self._theme is None:
            return
        self.app.call_after_refresh(self._collect)
        if self._pending is None:
            self._pending = self.app.set_timer(SAVE_DELAY, self.save)

    def save(self) -> None:
        """Write what every screen in the stack shows now, if it changed, on the keeper's thread."""
        if self._pending is not None:
            self._pending.stop()
            self._pending = None
        self._collect()
        text, message = self.remembering.file.changed_text()
        self._tell(message)
        if text is not None and self._exited:
            self._tell(self.remembering.file.write(text))
        elif text is not None:
            self._writer.submit(self._write, text)

    def save_at_exit(self) -> None:
        """``save``, waited for: the last write lands before the process ends."""
        self.save()
        self._exited = True
        self._writer.shutdown(wait=True)

    def _write(self, text: str) -> None:
        self._tell(self.remembering.file.write(text))

    def _tell(self, message: str) -> None:
        if message:  # posted, not called: safe from the writer's thread, and never waits for the screen's
            self.app.post_message(Notify(Notification(message, "", "warning", 8, markup=False)))

    def change_setting(self, name: str, value: Any = None, *, forget: bool = False) -> Config:
        """Remember ``value`` for setting ``name`` (checked already), or with ``forget`` the value below; the settings now.

        The theme and the grid follow at once; every other setting at the next start.
        """
        if forget:
            self.layout.settings.pop(name, None)
        else:
            self.layout.settings[name] = value
        config, _ = with_remembered(self.remembering.below, self.layout.settings)
        if name == "theme":
            self.app.theme = self._theme = config.theme
        if name in ("grid_rows", "grid_cols"):
            grid = [config.grid_rows, config.grid_cols]
            for screen in self.app.screen_stack:
                if isinstance(screen, RemembersLayout) and screen.is_mounted:
                    screen.restore_layout({"grid": grid, "metrics_grid": grid})
        self.save()
        return config

    def _collect(self) -> None:
        for screen in self.app.screen_stack:
            if isinstance(screen, RemembersLayout) and screen.is_mounted:
                self.layout.views[screen.LAYOUT_NAME] = {**self.layout.view(screen.LAYOUT_NAME), **screen.remembered_layout()}
        if self._theme is not None and self.app.theme != self._theme:
            self._theme = self.layout.settings["theme"] = self.app.theme


def remembered_view(app: App, name: str) -> dict[str, Any]:
    """What view ``name`` remembers of its layout in ``app``: empty when the app remembers nothing."""
    keeper = getattr(app, "layout_keeper", None)
    return keeper.view(name) if isinstance(keeper, LayoutKeeper) else {}
