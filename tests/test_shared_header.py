"""A shared run's header, opened at a secondary writer: the step is the one that writer's history reached.

Each writer's history is charted on its own axis (under its label), so the
step beside the opened writer's state is its own; a writer with no history
of its own shows the run's.
"""

from __future__ import annotations

from test_sharedrun import crafted_shared_run

from leet.sources.shared import SharedRunSource
from leet.ui.views.run import header_parts


def header_text(source: SharedRunSource) -> str:
    left, _ = header_parts(source.snapshot(), width=160)
    return "".join(text for text, _ in left)


def opened_at(source: SharedRunSource, index: int) -> SharedRunSource:
    source.opened = source.snapshot().writers[index].file
    return source


def test_an_opened_secondary_shows_the_step_its_history_reached(tmp_path):
    source = crafted_shared_run(tmp_path, {"rank0": [{"a": 1.0}] * 20, "rank1": [{"loss": 1.0}] * 6})
    try:
        assert header_text(source).endswith("finished · step 19")  # the primary opened: the run's step
        assert header_text(opened_at(source, 1)).endswith("writer1 finished · step 5")
    finally:
        source.close()


def test_a_secondary_past_a_primary_at_step_0_shows_its_own(tmp_path):
    source = crafted_shared_run(tmp_path, {"rank0": [{"note": 1.0}], "rank1": [{"loss": 1.0}] * 6})
    try:
        assert header_text(opened_at(source, 1)).endswith("writer1 finished · step 5")
    finally:
        source.close()


def test_a_secondary_with_no_history_shows_the_runs_step(tmp_path):
    source = crafted_shared_run(tmp_path, {"rank0": [{"a": 1.0}] * 20, "rank1": []})
    try:
        assert header_text(opened_at(source, 1)).endswith("writer1 finished · step 19")
    finally:
        source.close()
