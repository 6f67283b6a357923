"""Whole-screen snapshots of alerts in the run view: listed in the overview, marked on the metric charts' x axes,
and the ``!`` pane over them.

The run is the made-up run of ``leet.testing.demo`` (fixed clock, no file, no thread) with
``run.alert()`` records after a few of its steps; the SVGs live in
``tests/__snapshots__/test_snapshots_alerts/``. Regenerate them with
``python3 -m pytest tests/test_snapshots_alerts.py --snapshot-update`` after a deliberate change.
"""

from __future__ import annotations

from collectors.fake import DEFAULT_START, FakeClock
from leet.config import Config
from leet.model.store import Store
from leet.runfile.events import HistoryRow, RunAlert
from leet.testing.demo import DEMO_RUN_FILE_BYTES, DEMO_THEME, DemoRunSource, demo_run_events
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen

LARGE = (160, 48)
STEPS, SECONDS_PER_STEP = 300, 12.0
# After which step each alert came; two after step 260 share a cell: the error shows.
ALERTS = {
    80: [RunAlert("Loss spike", "loss 3.1 > 2.5 (3 steps)", "WARN")],
    150: [RunAlert("Checkpoint saved", "checkpoints/step150.pt", "INFO")],
    260: [RunAlert("Eval started", "cifar10 test split", "INFO"), RunAlert("NaN in grad_norm", "skipped the step", "ERROR")],
}


def alert_run_app() -> LeetApp:
    end = DEFAULT_START + STEPS * SECONDS_PER_STEP
    clock = FakeClock(end + 60.0)
    source = DemoRunSource(Store(), clock=clock, file_size=DEMO_RUN_FILE_BYTES)
    events = []
    for event in demo_run_events(STEPS, SECONDS_PER_STEP, DEFAULT_START):
        events.append(event)
        if isinstance(event, HistoryRow):
            events += ALERTS.get(event.step, [])
    source.feed(events)
    return LeetApp(source, Config(theme=DEMO_THEME), clock=clock, live=False, screen=lambda: RunScreen(source, clock=clock))


def test_run_view_with_alerts_in_the_overview_and_on_the_charts(snap_compare):
    assert snap_compare(alert_run_app(), terminal_size=LARGE)


def test_alerts_pane_over_the_run_view(snap_compare):
    assert snap_compare(alert_run_app(), terminal_size=LARGE, press=("exclamation_mark",))
