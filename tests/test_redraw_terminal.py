"""What a person sees after toggling panes, opening runs and resizing, in a real terminal (tmux).

Every check holds the screen a change leaves against a screen drawn from
scratch in the same state, cell for cell, colours and attributes included
(``capture-pane -e``): a fresh start where one exists (toggling a pane twice
is the fresh start's state; a workspace's run is ``leet RUN`` on the same
run; ``make_demo(sidebar=False)`` is the monitor started without its
sidebar), otherwise a forced full redraw, which is what a person gets by
resizing the terminal. A stale cell left by a partial repaint shows as a
difference. The runs are finished files written by the real SDK and the
monitor is the demo on fake hardware, so nothing on screen moves by itself.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Callable, Iterator

import pytest
from terminal import LEET_ENV, Terminal, TmuxMissing, require_tmux

WIDTH, HEIGHT = 160, 48
SLOW = 30.0  # seconds; only bounds a hang on a loaded machine
SAME = 6.0  # seconds for a screen to become the one expected; stale cells never do
STILL = 3  # captures in a row that must agree before a screen counts as drawn
STILL_GAP = 0.2  # seconds between those captures

SGR = re.compile(r"\x1b\[([0-9;:]*)m")
MONITOR = "from leet.testing.demo import make_demo; make_demo(gpus=2, sidebar={sidebar}).app.run()"


# -- terminals -----------------------------------------------------------------------
@pytest.fixture
def terminals() -> Iterator[Callable[..., Terminal]]:
    """``start(argv, width, height)``: a program in its own tmux; every one is closed after the test."""
    try:
        require_tmux()
    except TmuxMissing as error:
        pytest.fail(str(error), pytrace=False)
    started: list[Terminal] = []

    def start(argv: list[str], width: int = WIDTH, height: int = HEIGHT) -> Terminal:
        terminal = Terminal(argv, width=width, height=height, env=LEET_ENV)
        started.append(terminal)
        terminal.start()
        return terminal

    yield start
    for terminal in started:  # all at once: q is quicker than tmux hanging up on each in turn
        try:
            if not terminal.exited():
                terminal.press("q")
        except RuntimeError:
            pass  # close() still ends it
    deadline = time.monotonic() + 3.0
    for terminal in started:
        try:
            while not terminal.exited() and time.monotonic() < deadline:
                time.sleep(0.05)
        except RuntimeError:
            pass
        terminal.close()


def leet(*args: str) -> list[str]:
    return [sys.executable, "-m", "leet", *args]


def monitor(sidebar: bool = True) -> list[str]:
    """The system monitor on two fake GPUs and a fake clock: the same screen every time."""
    return [sys.executable, "-c", MONITOR.format(sidebar=sidebar)]


# -- reading the screen ------------------------------------------------------------------
def plain(screen: str) -> str:
    return SGR.sub("", screen)


def drawn(
    terminal: Terminal, ready: Callable[[str], bool] = lambda screen: True, *, changed_from: str | None = None, what: str = "the screen"
) -> str:
    """The styled screen once it differs from ``changed_from`` (in any cell), ``ready`` holds for its
    text, and it holds still (``STILL`` captures alike)."""
    deadline = time.monotonic() + SLOW
    seen_in_a_row: list[str] = []
    while time.monotonic() < deadline:
        screen = terminal.styled_screen()
        seen_in_a_row = seen_in_a_row + [screen] if seen_in_a_row and seen_in_a_row[-1] == screen else [screen]
        if len(seen_in_a_row) >= STILL and ready(plain(screen)) and (changed_from is None or not alike(screen, changed_from)):
            return screen
        if terminal.exited():
            break
        time.sleep(STILL_GAP)
    pytest.fail(f"{what} was not drawn within {SLOW:g} s:\n{plain(terminal.styled_screen())}")


def differences(actual: str, expected: str) -> str:
    """The rows whose cells differ, as text; rows alike but for colours or attributes are marked so."""
    got_rows, want_rows = seen(actual), seen(expected)
    lines = []
    for row, (got, want) in enumerate(zip(got_rows, want_rows)):
        if got != want:
            got_text, want_text = "".join(c for c, _ in got), "".join(c for c, _ in want)
            note = " (colours or attributes only)" if got_text == want_text else ""
            lines.append(f"row {row}{note}:\n  got  {got_text!r}\n  want {want_text!r}")
    if len(got_rows) != len(want_rows):
        lines.append(f"{len(got_rows)} rows, expected {len(want_rows)}")
    return "\n".join(lines)


def alike(actual: str, expected: str) -> bool:
    """Every cell shows the same: character, colours and attributes."""
    return actual == expected or seen(actual) == seen(expected)


def becomes(terminal: Terminal, expected: str, what: str) -> str:
    """Wait for the screen to be ``expected``, cell for cell; fail with the rows that stay different."""
    deadline = time.monotonic() + SAME
    while True:
        screen = terminal.styled_screen()
        if alike(screen, expected):
            return screen
        if time.monotonic() >= deadline:
            pytest.fail(f"{what}: the screen differs from one drawn from scratch in the same state\n{differences(screen, expected)}")
        time.sleep(0.05)


def after(terminal: Terminal, before: str, *keys: str, ready: Callable[[str], bool] = lambda screen: True, what: str) -> str:
    """Press ``keys`` and return the screen they lead to, once it has changed and holds still."""
    terminal.press(*keys)
    return drawn(terminal, ready, changed_from=before, what=what)


def fills(height: int) -> Callable[[str], bool]:
    """The app has laid its screen out for ``height`` rows: as many rows, the status line on the last.

    tmux resizes at once; until the app has drawn at the new size, its last row
    is blank (or the old layout is cut), and a slow machine can hold that still.
    """
    def ready(screen: str) -> bool:
        rows = screen.splitlines()
        return len(rows) == height and bool(rows[-1].strip())
    return ready


def redrawn(terminal: Terminal) -> str:
    """The screen drawn again from scratch: a row shorter, then the old size (a resize repaints every cell)."""
    width, height = terminal.width, terminal.height
    terminal.resize(width, height - 1)
    drawn(terminal, fills(height - 1), what="the screen a row shorter")
    terminal.resize(width, height)
    return drawn(terminal, fills(height), what="the screen at its size again")


def no_stale_cells(terminal: Terminal, screen: str, what: str) -> None:
    """``screen`` is what the terminal shows; a full redraw of the same state must show the same."""
    again = redrawn(terminal)
    if not alike(screen, again):
        pytest.fail(f"{what} left stale cells: a full redraw shows otherwise\n{differences(screen, again)}")


# -- cells ------------------------------------------------------------------------------------
BLANK_SHOWS = frozenset({"4", "7", "9", "53"})  # underline, reverse, strike, overline: what a blank cell can show


def cells(screen: str) -> list[list[tuple[str, tuple]]]:
    """Each row as (character, style) cells; the style is the SGR state in force: (fg, bg, attributes).

    tmux writes each cell's style as a change from the cell before, across rows too.
    """
    fg: str | None = None
    bg: str | None = None
    attrs: set[str] = set()
    rows = []
    for line in screen.splitlines():
        row: list[tuple[str, tuple]] = []
        at = 0
        for match in SGR.finditer(line + "\x1b[39m"):
            row.extend((char, (fg, bg, frozenset(attrs))) for char in line[at : match.start()])
            at = match.end()
            params = match.group(1).replace(":", ";").split(";") if match.group(1) else ["0"]
            i = 0
            while i < len(params):
                code = params[i] or "0"
                if code == "0":
                    fg, bg, attrs = None, None, set()
                elif code in ("38", "48"):
                    size = 3 if params[i + 1 : i + 2] == ["5"] else 5
                    value = ";".join(params[i : i + size])
                    fg, bg = (value, bg) if code == "38" else (fg, value)
                    i += size - 1
                elif code == "39":
                    fg = None
                elif code == "49":
                    bg = None
                elif 30 <= int(code) <= 37 or 90 <= int(code) <= 97:
                    fg = code
                elif 40 <= int(code) <= 47 or 100 <= int(code) <= 107:
                    bg = code
                elif len(code) == 2 and code.startswith("2"):
                    attrs.discard(str(int(code) - 20))
                else:
                    attrs.add(code)
                i += 1
        rows.append(row)
    return rows


def seen(screen: str) -> list[list[tuple[str, tuple]]]:
    """What a person sees in each cell: a blank's foreground colour and weight show nowhere."""
    return [
        [(char, (None, style[1], style[2] & BLANK_SHOWS) if char == " " else style) for char, style in row]
        for row in cells(screen)
    ]


# -- chart frames and focus ------------------------------------------------------------------
def frame_styles(screen: str) -> list[tuple[str, tuple]]:
    """(title, style of its top-left corner) for every chart frame on screen."""
    frames = []
    for row in cells(screen):
        text = "".join(char for char, _ in row)
        for column, (char, style) in enumerate(row):
            if char == "╭":
                title = text[column + 1 :].split("╮")[0].strip("─ ").split(" ─")[0]
                frames.append((title.strip(), style))
    return frames


def focused_frames(screen: str, unfocused: str) -> list[str]:
    """Titles of the frames drawn in another style than the frames of ``unfocused`` (a screen with no focus)."""
    plain_style = {style for _, style in frame_styles(unfocused)}
    assert len(plain_style) == 1, f"frames of the unfocused screen differ in style: {plain_style}"
    return [title for title, style in frame_styles(screen) if style not in plain_style]


def system_counter(screen: str) -> str:
    match = re.search(r"System \[(\d+-\d+ of \d+)\]", screen)
    return match.group(1) if match else ""


# -- the run view ------------------------------------------------------------------------------
def finished(screen: str) -> bool:
    return "finished" in screen.splitlines()[0] and "╭" in screen


def test_each_pane_toggle_draws_what_a_fresh_start_draws(basic_run, terminals):
    """``[``, ``1``, ``2``, ``]`` and ``4`` each leave the screen a full redraw would show, and toggling
    back gives the screen leet started with; a resize gives what leet starts with at that size."""
    run = terminals(leet(str(basic_run.run_dir)))
    small = terminals(leet(str(basic_run.run_dir)), width=WIDTH - 31, height=HEIGHT - 9)
    fresh = drawn(run, finished, what="the run view")
    assert basic_run.run_id in plain(fresh).splitlines()[0] and "#" not in plain(fresh).splitlines()[0]
    for key, pane in (("[", "overview"), ("1", "metrics"), ("2", "system"), ("]", "system"), ("4", "console")):
        toggled = after(run, fresh, key, what=f"the run view with the {pane} pane toggled ({key})")
        no_stale_cells(run, toggled, f"toggling the {pane} pane ({key})")
        run.press(key)
        becomes(run, fresh, f"toggling the {pane} pane ({key}) back")
    run.resize(WIDTH - 31, HEIGHT - 9)
    becomes(run, drawn(small, finished, what="the run view started smaller"), "shrinking the terminal")
    run.resize(WIDTH, HEIGHT)
    becomes(run, fresh, "growing the terminal back")


def test_one_focus_frame_at_a_time_and_the_system_pane_counts_its_pages(basic_run, terminals):
    run = terminals(leet(str(basic_run.run_dir)))
    unfocused = drawn(run, finished, what="the run view")
    assert focused_frames(unfocused, unfocused) == []
    first, _, total = system_counter(plain(unfocused)).partition(" of ")
    assert first == "1-4" and int(total) > 4, f"no page counter over the system charts:\n{plain(unfocused)}"

    screen = unfocused
    metrics = ["acc", "eval.loss", "loss", "lr"]  # the metrics grid, 2×2, in reading order
    system = [title for title, _ in frame_styles(unfocused) if title not in metrics]
    for keys, expected in ((("Tab", "Tab"), "acc"), (("d",), "eval.loss"), (("s",), "lr"), (("a",), "loss"), (("Tab",), system[0])):
        screen = after(run, screen, *keys, what=f"focus moved by {' '.join(keys)}")
        focused = focused_frames(screen, unfocused)
        assert focused == [expected], f"after {' '.join(keys)}: frames drawn focused: {focused}, expected only {expected}"

    screen = after(run, screen, "n", ready=lambda s: system_counter(s).startswith("5-"), what="the next page of system charts")
    assert system_counter(plain(screen)) == f"5-{min(8, int(total))} of {total}"
    assert len(focused_frames(screen, unfocused)) == 1
    no_stale_cells(run, screen, "turning the system pane's page")
    # Focus leaves with its pane, and does not come back with it.
    screen = after(run, screen, "2", what="the run view without its system pane")
    screen = after(run, screen, "2", ready=lambda s: "System [" in s, what="the system pane shown again")
    assert focused_frames(screen, unfocused) == []


# -- the workspace ------------------------------------------------------------------------------
def test_a_run_opened_from_the_workspace_is_drawn_as_leet_RUN_draws_it(basic_run, terminals):
    workspace = terminals(leet(str(basic_run.root)))
    run = terminals(leet(str(basic_run.run_dir)))
    listed = drawn(workspace, lambda s: "basic-run" in s and "╭" in s, what="the workspace")
    alone = drawn(run, finished, what="the run view")
    run.press("[")
    alone_without_overview = drawn(run, lambda s: "Overview" not in s, what="the run view without its overview")

    workspace.press("Enter")
    opened = becomes(workspace, alone, "opening the run from the workspace")
    assert "#open" not in plain(opened)
    workspace.press("[")
    becomes(workspace, alone_without_overview, "hiding the overview of the opened run")
    workspace.press("[")
    becomes(workspace, alone, "showing the overview of the opened run again")
    workspace.press("Escape")
    becomes(workspace, listed, "closing the run")

    charts = after(workspace, listed, "Tab", what="the workspace with a chart focused")
    hidden = after(workspace, charts, "[", what="the workspace without its runs list")
    no_stale_cells(workspace, hidden, "hiding the runs list")
    workspace.press("[")
    becomes(workspace, charts, "showing the runs list again")
    workspace.press("Escape")  # back to the runs list
    becomes(workspace, listed, "focusing the runs list")
    workspace.press("Enter")
    becomes(workspace, alone, "opening the run a second time")


# -- the system monitor ------------------------------------------------------------------------------
def test_monitor_sidebar_and_process_tables_toggle_cleanly(terminals):
    live = terminals(monitor())
    bare = terminals(monitor(sidebar=False))
    fresh = drawn(live, lambda s: "GPU" in s and "╭" in s, what="the monitor")
    without = drawn(bare, lambda s: "╭" in s, what="the monitor started without its sidebar")

    live.press("[")
    becomes(live, without, "hiding the sidebar")
    live.press("[")
    becomes(live, fresh, "showing the sidebar again")

    screen = fresh
    for shown in ("GPU processes", "host processes", "GPU and host processes"):
        screen = after(live, screen, "g", ready=lambda s: "Sidebar:" not in s, what=f"the sidebar with {shown}")
        no_stale_cells(live, screen, f"switching the sidebar to {shown}")
    becomes(live, fresh, "cycling the sidebar's tables back")
