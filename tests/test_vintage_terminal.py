"""``leet PATH`` in a real terminal (tmux) on runs old SDKs wrote (tests/fixtures/vintage)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "vintage"
SLOW = 30.0


def files_of(release: str, case: str) -> list[Path]:
    manifest = json.loads((FIXTURES / "MANIFEST.json").read_text())
    found = next(c for c in manifest["cases"] if c["release"] == release and c["case"] == case)
    return [FIXTURES / name for name in found["files"]]


def test_a_resumed_segment_shows_itself_and_lists_the_other(leet_terminal, tmp_path):
    root = tmp_path / "resumed"
    shutil.copytree(FIXTURES / "0.12.21" / "resumed", root, symlinks=True)
    first = files_of("0.12.21", "resumed")[0]
    named = root / first.relative_to(FIXTURES / "0.12.21" / "resumed")
    terminal = leet_terminal(str(named.parent))
    screen = terminal.wait_for(lambda s: "failed (exit 1)" in s.splitlines()[0], timeout=SLOW, what="the first segment's state")
    assert "2 writers" not in screen.splitlines()[0], "a resumed run is not a shared run"
    assert "Segments" in screen and "this one" in screen and "later" in screen, screen


def test_a_trainer_run_charts_by_global_step(leet_terminal):
    (file,) = files_of("0.31.0", "trainer")
    terminal = leet_terminal(str(file))
    # Chart titles are cut to the chart's width: "train/loss · by train/glob…".
    screen = terminal.wait_for(lambda s: "train/loss · by train/" in s, timeout=SLOW, what="a chart against train/global_step")
    assert "finished" in screen.splitlines()[0]
