"""A whole-screen snapshot of the media pane (``3``), images drawn as half-blocks.

The run view is the made-up run of ``leet.testing.demo`` on its fixed clock;
the pane reads the media of a real SDK run (``image_run``: images made from
seeded random arrays, captions, steps), so every cell it draws is the same
on each run. Regenerate with
``python3 -m pytest tests/test_media_snapshots.py --snapshot-update`` and look
at the SVG before keeping it.
"""

from __future__ import annotations

from dataclasses import replace

from pilot_waits import until

from leet.testing.demo import make_run_demo

LARGE = (160, 48)


def test_media_pane_with_an_image_list_at_its_newest_step(snap_compare, image_run):
    demo = make_run_demo()
    demo.source.path = image_run.wandb_path  # the media of a real run, under the demo's charts
    demo.app.config = replace(demo.app.config, images="blocks")
    assert snap_compare(demo.app, terminal_size=LARGE, run_before=open_media)


async def open_media(pilot) -> None:
    """``1`` ``3``, then the pane's reads (on its own thread) done and drawn."""
    await pilot.press("1", "3")
    panel = pilot.app.screen.media_panel
    await until(pilot, lambda: not panel.busy, "the media pane's reads")
    await pilot.pause()
