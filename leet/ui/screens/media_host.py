"""What a screen showing the media pane answers: the pane's scrub and pick messages, its focus, closing on unmount.

Kept apart from ``screens.media`` so that a screen can take these handlers
without importing the pane's modules before the pane is first opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.screen import Screen

if TYPE_CHECKING:
    from leet.ui.screens.media import MediaPanel
    from widgets.media import MediaPane


class MediaHost:
    """The media pane's messages, for a screen that holds a ``MediaPanel`` in ``media_panel`` and draws it in ``draw_media``."""

    media_panel: MediaPanel | None

    def draw_media(self) -> None:
        raise NotImplementedError

    def action_toggle_media(self) -> None:
        raise NotImplementedError

    def remembered_media(self) -> dict[str, bool]:
        """Whether the media pane shows, for the screen's remembered layout."""
        return {"media": self.media_panel is not None and self.media_panel.shown}

    def restore_media(self, shown: bool | None) -> None:
        """Open the pane again when it was open (``shown``, checked by the caller), once the screen has its size."""
        if shown and (self.media_panel is None or not self.media_panel.shown):
            cast(Screen, self).call_after_refresh(self.action_toggle_media)

    def focus_media(self) -> None:
        if self.media_panel is not None and self.media_panel.pane is not None:
            cast(Screen, self).set_focus(self.media_panel.pane)

    def on_media_pane_scrub(self, event: MediaPane.Scrub) -> None:
        if self.media_panel is not None:
            self.media_panel.scrub_to(event.move)
            self.draw_media()

    def on_media_pane_pick(self, event: MediaPane.Pick) -> None:
        if self.media_panel is not None:
            self.media_panel.pick(event.step)
            self.draw_media()

    def on_media_pane_read(self, _event: MediaPane.Read) -> None:
        if self.media_panel is not None and self.media_panel.shown and not getattr(self, "paused", False):
            self.draw_media()

    def on_unmount(self) -> None:
        if self.media_panel is not None:
            self.media_panel.close()
