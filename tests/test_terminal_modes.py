"""``leet symon`` in terminals that cannot show everything (tmux, 160×48).

A C locale gets ASCII only, and its charts still plot; ``TERM=dumb`` and
``NO_COLOR`` get no colour at all on the screen tmux holds.
"""

from __future__ import annotations

import re
import sys

import pytest
from terminal import LEET_ENV, Terminal, TmuxMissing, chart_panels, require_tmux

SLOW = 20.0  # seconds; only bounds a hang on a loaded machine
SGR = re.compile(r"\x1b\[([0-9;:]*)m")
# Foreground and background colours: 30-38, 40-48, 90-97, 100-107 (39 and 49 are the terminal's own).
COLOUR = re.compile(r"(^|;)(3[0-8]|4[0-8]|9[0-7]|10[0-7])(;|:|$)")


@pytest.fixture
def symon():
    """``start(env)``: ``leet symon`` in tmux with ``env`` over the usual test environment."""
    try:
        require_tmux()
    except TmuxMissing as error:
        pytest.fail(str(error), pytrace=False)
    started: list[Terminal] = []

    def start(env: dict[str, str]) -> Terminal:
        terminal = Terminal([sys.executable, "-m", "leet", "symon", "--interval", "1"], width=160, height=48, env={**LEET_ENV, **env})
        started.append(terminal)
        terminal.start()
        return terminal

    yield start
    for terminal in started:
        terminal.close()


def ascii_chart_plotted(screen: str) -> bool:
    """The CPU chart (``+- CPU Core … +``) has something right of its y axis."""
    lines = screen.splitlines()
    for top, line in enumerate(lines):
        left = line.find("+- CPU Core")
        if left < 0:
            continue
        right = line.find("+", left + 1)
        body = []
        for below in lines[top + 1 :]:
            if len(below) <= right or below[left] != "|":
                break
            body.append(below[left + 1 : right])
        axis = next((row.find("+") for row in body if "+" in row), -1)
        return axis >= 0 and any(row[axis] in "|+" and row[axis + 1 :].strip() for row in body)
    return False


def test_a_c_locale_gets_only_ascii_and_charts_that_plot(symon):
    terminal = symon({"LANG": "C", "LC_ALL": "C"})
    screen = terminal.wait_for(ascii_chart_plotted, timeout=SLOW, what="the CPU chart plotted in ASCII")
    strays = sorted({char for char in screen if not char.isascii()})
    assert not strays, f"not ASCII: {strays}\n{screen}"
    assert "+-" in screen and "#" in screen  # frames and meters, drawn in ASCII


@pytest.mark.parametrize("env", [{"TERM": "dumb"}, {"NO_COLOR": "1"}], ids=["TERM=dumb", "NO_COLOR"])
def test_no_colour_reaches_the_screen(symon, env):
    terminal = symon(env)
    terminal.wait_for(lambda s: any(panel.has_data for panel in chart_panels(s)), timeout=SLOW, what="a chart with data")
    codes = SGR.findall(terminal.styled_screen())
    coloured = sorted({code for code in codes if COLOUR.search(code)})
    assert not coloured, f"colour on screen with {env}: {coloured}"
