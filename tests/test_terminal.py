"""``leet symon`` in a real terminal (tmux, 160×48): what a person sees and can do.

These start the real app on this host, so they check the whole path from
/proc to the screen. Waits only bound a hang on a loaded machine: how fast
the first data comes is measured by ``benchmarks/symon.py``, not here.
"""

from __future__ import annotations

import pytest
from terminal import chart_panels

SLOW = 20.0  # seconds; only bounds a hang on a loaded machine


@pytest.fixture
def launch(leet_terminal):
    return lambda *args: leet_terminal("symon", "--interval", "1", *args)


def titles(screen: str) -> list[str]:
    return [panel.title for panel in chart_panels(screen)]


def header(screen: str) -> str:
    return screen.splitlines()[0] if screen else ""


def has_charts(screen: str) -> bool:
    return bool(chart_panels(screen))


def families_with_data(screen: str) -> bool:
    """CPU, memory, disk and network charts are all on screen and every one of them has dots."""
    panels = chart_panels(screen)
    wanted = [p for p in panels if any(word in p.title for word in ("CPU Core", "System Memory", "Disk", "Network"))]
    present = all(any(word in p.title for p in wanted) for word in ("CPU Core", "System Memory", "Disk", "Network"))
    return present and all(p.has_data for p in wanted)


def test_the_first_reading_comes_at_start_not_one_interval_later(leet_terminal):
    # A five-minute interval: charts with data before it has passed can only come from the reading taken at start.
    terminal = leet_terminal("symon", "--interval", "300", "--grid", "4x4")  # room for every host chart on one page
    screen = terminal.wait_for(families_with_data, timeout=SLOW, poll=0.05, what="CPU, memory, disk and network charts with data")
    assert "waiting for data" not in screen
    assert "every 300s" in header(screen), header(screen)


def test_q_quits(launch):
    terminal = launch()
    terminal.wait_for(has_charts, timeout=SLOW, what="a chart")
    terminal.press("q")
    status = terminal.wait_exit(SLOW)
    screen = terminal.screen()
    assert status == 0, f"leet exited with status {status}:\n{screen}"
    assert "Traceback" not in screen and "Error" not in screen, f"leet printed an error on the way out:\n{screen}"


def test_help_opens_and_a_key_closes_it(launch):
    terminal = launch()
    terminal.wait_for(has_charts, timeout=SLOW, what="a chart")
    terminal.type("?")
    screen = terminal.wait_for(lambda s: "Show this help" in s and "Next page" in s, timeout=SLOW, what="help")
    assert "Quit" in screen
    terminal.press("Escape")
    screen = terminal.wait_for(lambda s: "Show this help" not in s, timeout=SLOW, what="help closed")
    assert has_charts(screen)
    assert not terminal.exited()


def test_chart_filter_keeps_only_network_charts(launch):
    terminal = launch()
    terminal.wait_for(lambda s: "CPU Core" in " ".join(titles(s)), timeout=SLOW, what="the CPU chart")
    terminal.type("\\")
    terminal.wait_for("Chart filter", timeout=SLOW)
    terminal.type("net")
    terminal.press("Enter")

    def filtered(screen: str) -> bool:
        shown = titles(screen)
        only_network = bool(shown) and all("Network" in title for title in shown)
        return only_network and "filter" in header(screen) and "net" in header(screen) and "Chart filter" not in screen

    screen = terminal.wait_for(filtered, timeout=SLOW, what="only Network charts, the filter in the header and the prompt closed")
    assert not any("CPU" in title or "Memory" in title or "Disk" in title for title in titles(screen))


def test_n_turns_to_the_next_page(launch):
    terminal = launch("--grid", "1x2")
    first = terminal.wait_for(lambda s: "charts 1-2 of" in header(s) and len(titles(s)) == 2, timeout=SLOW, what="page 1 of the 1×2 grid")
    terminal.press("n")
    second = terminal.wait_for(lambda s: "charts 3-4 of" in header(s) and len(titles(s)) == 2, timeout=SLOW, what="page 2")
    assert set(titles(first)).isdisjoint(titles(second)), f"same charts on both pages: {titles(first)} / {titles(second)}"
