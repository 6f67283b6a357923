"""``p`` on every screen: freeze what is shown while the sources read on."""

from __future__ import annotations

from typing import cast

from textual.screen import Screen

from widgets.chartframe import Row

PAUSED = " PAUSED"


class PauseActions:
    """Mixed into a screen whose ``update_view(force)`` redraws from its sources.

    While ``paused``, the redraws new data asks for (``update_view()``) are
    skipped; the sources go on sampling and reading, so resuming shows
    everything gathered meanwhile. What a person does (a page, a filter)
    still redraws, with ``force``.
    """

    paused = False

    def update_view(self, force: bool = False) -> None:
        raise NotImplementedError

    def pause_mark(self, sep: str = " ·") -> Row:
        """The header's marker while paused, ``sep`` parting it from what follows."""
        return [(PAUSED + sep, "warn")] if self.paused else []

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        self.update_view(force=True)  # the marker; on resume, all that came meanwhile
        said = "Paused: the display holds still, data is still collected (p resumes)" if self.paused else "Resumed"
        cast(Screen, self).notify(said, timeout=2, markup=False)  # mixed into a Screen
