"""The remembered layout in a real terminal (tmux): arrange ``leet symon``, quit, start it again, and it looks the same."""

from __future__ import annotations

import json
import sys

from terminal import LEET_ENV, Terminal, chart_panels

SLOW = 30.0  # seconds; only bounds a hang on a loaded machine


def columns(screen: str) -> int:
    """How many charts the grid's top row shows."""
    panels = chart_panels(screen)
    top = min((panel.top for panel in panels), default=None)
    return sum(1 for panel in panels if panel.top == top)


def sidebar_shown(screen: str) -> bool:
    return "PID" in screen  # the process table's heading


def leet_symon(state_dir: str, *args: str) -> Terminal:
    env = {**LEET_ENV, "LEET_STATE_DIR": state_dir}
    terminal = Terminal([sys.executable, "-m", "leet", "symon", "--interval", "1", *args], width=160, height=48, env=env)
    terminal.start()
    return terminal


def quit_and_close(terminal: Terminal) -> None:
    try:
        terminal.press("q")
        assert terminal.wait_exit(SLOW) == 0, terminal.screen()
    finally:
        terminal.close()


def test_a_hidden_sidebar_and_an_added_column_are_back_after_a_restart(tmp_path):
    state = tmp_path / "state"
    first = leet_symon(str(state))
    try:
        screen = first.wait_for(lambda s: columns(s) == 3 and sidebar_shown(s), timeout=SLOW, what="a 3-column grid beside the sidebar")
        first.press("[")
        first.wait_for(lambda s: not sidebar_shown(s) and columns(s) == 3, timeout=SLOW, what="the sidebar hidden")
        first.press("c")
        screen = first.wait_for(lambda s: columns(s) == 4, timeout=SLOW, what="a fourth column")
    finally:
        quit_and_close(first)
    saved = json.loads((state / "layout.json").read_text())["views"]["symon"]
    assert saved["sidebar"] is False and saved["grid"] == [3, 4], saved

    again = leet_symon(str(state))
    try:
        screen = again.wait_for(lambda s: columns(s) == 4, timeout=SLOW, what="the four columns again")
        assert not sidebar_shown(screen), screen
    finally:
        quit_and_close(again)


def test_no_remember_starts_from_the_defaults(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "layout.json").write_text(json.dumps({"version": 1, "views": {"symon": {"sidebar": False, "grid": [3, 4]}}}))
    terminal = leet_symon(str(state), "--no-remember")
    try:
        terminal.wait_for(lambda s: columns(s) == 3 and sidebar_shown(s), timeout=SLOW, what="the default layout")
    finally:
        quit_and_close(terminal)
    assert json.loads((state / "layout.json").read_text())["views"]["symon"]["grid"] == [3, 4]  # untouched
