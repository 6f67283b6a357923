"""The settings screen (F2) as a snapshot: the monitor on fake hardware, a state folder of the test's own, no config file.

Made with ``python3 -m pytest tests/test_settings_snapshot.py --snapshot-update``;
look at the SVG in ``tests/__snapshots__/test_settings_snapshot/`` before keeping it.
"""

from __future__ import annotations

from leet.config.remembered import remembered
from leet.testing.demo import make_demo
from leet.ui.app import LeetApp

SIZE = (120, 36)


def test_settings_screen_after_a_change(snap_compare):
    demo = make_demo()
    config, remembering = remembered(demo.app.config)  # LEET_STATE_DIR: the test's own empty folder (conftest)
    app = LeetApp(demo.source, config, clock=demo.clock, live=False, remembering=remembering)
    keys = ("f2", "down", "down", "down", "down", "enter", "backspace", "backspace", "3", "0", "enter")
    assert snap_compare(app, terminal_size=SIZE, press=keys)
