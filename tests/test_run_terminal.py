"""``leet PATH`` in a real terminal (tmux, 160×48) on a run the real SDK is still writing.

The writer logs a step every 0.2 s and appends to its file every 0.2 s; the
view must follow it and say when it finishes. Waits are generous for a
loaded CI machine; the time from a step being logged to it being on screen
is measured and printed, not asserted.
"""

from __future__ import annotations

import re
import statistics
import time

import pytest

from leet.runfile.decode import iter_events
from leet.runfile.events import HistoryRow

SLOW = 30.0  # seconds; only bounds a hang on a loaded machine
STEP = re.compile(r"· step ([\d,]+)")


@pytest.fixture
def open_run(leet_terminal):
    return lambda path: leet_terminal(str(path))


def header(screen: str) -> str:
    return screen.splitlines()[0] if screen else ""


def shown_step(screen: str) -> int | None:
    match = STEP.search(header(screen))
    return int(match.group(1).replace(",", "")) if match else None


def logged_at(path) -> dict[int, float]:
    """Each step's wall-clock time as the writer logged it (its ``wall_time`` metric)."""
    return {event.step: event.values["wall_time"] for event in iter_events(path) if isinstance(event, HistoryRow) and "wall_time" in event.values}


def test_the_view_follows_a_live_run_until_it_finishes(live_run, open_run):
    live = live_run(seconds=60.0, step_interval=0.2, flush_interval=0.2)
    terminal = open_run(live.run_dir)
    screen = terminal.wait_for(lambda s: shown_step(s) is not None, timeout=SLOW, what="a step in the header")
    first = shown_step(screen)
    assert "running" in header(screen), header(screen)

    appeared: dict[int, float] = {}  # step -> when it was first on screen (wall clock)
    deadline = time.monotonic() + SLOW
    while time.monotonic() < deadline and len(appeared) < 5:
        step = shown_step(terminal.screen())
        if step is not None and step > first and step not in appeared:
            appeared[step] = time.time()
        time.sleep(0.02)
    assert appeared, f"no step after {first} on screen within {SLOW:g} s:\n{terminal.screen()}"
    assert "running" in header(terminal.screen())

    live.stop()  # run.finish(): the exit record lands in the file
    stopped = time.monotonic()
    screen = terminal.wait_for(lambda s: "finished" in header(s), timeout=SLOW, what="'finished' in the header")
    finished_after = time.monotonic() - stopped
    assert "running" not in header(screen)

    when_logged = logged_at(live.wandb_path)
    latencies = [seen - when_logged[step] for step, seen in appeared.items() if step in when_logged]
    assert latencies, "the steps seen on screen are in the file"
    print(
        f"\nleet on a live run: steps {first} -> {max(appeared)}; logged -> on screen: "
        f"median {statistics.median(latencies) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms "
        f"(the writer flushes every 0.2 s); 'finished' {finished_after * 1000:.0f} ms after the writer exited"
    )
