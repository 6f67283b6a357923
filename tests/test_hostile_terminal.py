"""Crafted and changing run files in a real terminal (tmux): a first frame, a clean exit on q."""

from __future__ import annotations

import os

import pytest
from framer import RunWriter
from hostile import CASES

FIRST_FRAME = 15.0  # seconds: the most a crafted file may take to show its run


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_crafted_file_shows_a_first_frame_and_quits_on_q(leet_terminal, tmp_path, case):
    path = CASES[case](tmp_path / case)
    terminal = leet_terminal(str(path))
    screen = terminal.wait_for(lambda s: "finished" in s.splitlines()[0], timeout=FIRST_FRAME, what=f"{case}: the first frame")
    assert "Traceback" not in screen
    terminal.press("4")  # the console pane too
    terminal.press("tab")
    screen = terminal.wait_for(lambda s: "Console" in s or "console" in s, timeout=5.0, what=f"{case}: the console pane")
    terminal.press("q")
    assert terminal.wait_exit(5.0) == 0, terminal.screen()


def unfinished(run_id: str, steps: int) -> bytes:
    writer = RunWriter(run_id)
    for step in range(steps):
        writer.history(step, {"loss": 1.0 / (step + 1)})
    return bytes(writer.data)


def test_a_file_rewritten_then_deleted_under_the_view_is_said(leet_terminal, tmp_path):
    path = tmp_path / "run-live.wandb"
    path.write_bytes(unfinished("first", 5))
    terminal = leet_terminal(str(path))
    terminal.wait_for(lambda s: "first" in s.splitlines()[0] and "step 4" in s.splitlines()[0], timeout=FIRST_FRAME, what="the first run")
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(unfinished("second", 30))
    screen = terminal.wait_for(lambda s: "second" in s.splitlines()[0], timeout=10.0, what="the rewritten file read again")
    assert "read again from the start" in screen and "step 29" in screen.splitlines()[0]
    os.unlink(path)
    screen = terminal.wait_for("was deleted", timeout=10.0, what="the deletion said")
    assert "step 29" in screen.splitlines()[0], "what was read stays on screen"
    terminal.press("q")
    assert terminal.wait_exit(5.0) == 0


def test_every_notification_built_from_data_is_shown_as_plain_text():
    """A run name or command line like ``[bold]x`` must not be read as Textual markup."""
    import ast
    from pathlib import Path

    loose = []
    for path in Path(__file__).resolve().parent.parent.joinpath("leet").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "notify"):
                continue
            message = node.args[0] if node.args else None
            if isinstance(message, ast.Constant) or message is None:
                continue
            if isinstance(message, ast.IfExp) and all(isinstance(b, ast.Constant) for b in (message.body, message.orelse)):
                continue
            plain = any(k.arg == "markup" and isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords)
            if not plain and not _only_own_values(message):
                loose.append(f"{path.name}:{node.lineno}")
    assert not loose, loose


def _only_own_values(message) -> bool:
    """An f-string whose values are numbers or our own words (an interval, a grid size), not outside text."""
    import ast

    if not isinstance(message, ast.JoinedStr):
        return False
    names = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(message) if isinstance(n, (ast.Name, ast.Attribute))}
    return names <= {"self", "_interval", "grid", "rows", "cols", "step", "shown", "tables", "said", "row", "pid"}
