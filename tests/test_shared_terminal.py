"""``leet RUN_DIR --label …`` in a real terminal (tmux, 160×48) on a four-writer shared run."""

from __future__ import annotations

SLOW = 30.0  # seconds; only bounds a hang on a loaded machine
LABELS = ("rank0", "rank1", "rank2", "rank3")


def body(screen: str) -> str:
    """Everything under the header (which names the filter) right of the overview (which lists every node)."""
    return "\n".join(line[40:] for line in screen.splitlines()[1:])


def test_filtering_to_one_label_shows_only_that_node(shared_run, leet_terminal):
    secondary = next(writer for writer in shared_run.writers if not writer.primary)
    terminal = leet_terminal(str(secondary.run_dir), "--label", "rank3")
    screen = terminal.wait_for(lambda s: "finished" in s.splitlines()[0] and "rank3" in body(s), timeout=SLOW, what="the run loaded")
    header = screen.splitlines()[0]
    assert "4 writers" in header and "labels rank3 (1 of 4)" in header, header
    assert not any(label in body(screen) for label in ("rank0", "rank1", "rank2")), screen

    terminal.press("4")  # the console: only rank3's lines
    screen = terminal.wait_for("hello from rank3", timeout=SLOW)
    assert "hello from rank0" not in screen and "bye from rank3" in screen

    terminal.press("l")  # the picker: every node, then only rank1
    rows = [f"] {label}" for label in LABELS]
    terminal.wait_for(lambda s: "Node labels (4)" in s and all(row in s for row in rows), timeout=SLOW, what="the picker listing every node")
    terminal.press("a")
    terminal.press("Down")
    terminal.press("o")
    terminal.press("Enter")
    screen = terminal.wait_for(lambda s: "labels rank1 (1 of 4)" in s.splitlines()[0] and "Node labels" not in s, timeout=SLOW, what="the rank1 filter")
    assert "hello from rank1" in screen and "hello from rank3" not in screen
    assert "rank1" in body(screen) and "rank3" not in body(screen)
