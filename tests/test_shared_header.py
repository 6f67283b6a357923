"""A shared run's header, opened at a secondary writer: the step is the one that writer's history reached.

Each writer's history is charted on its own axis (under its label), so the
step beside the opened writer's state is its own; a writer with no history
of its own says ``no history`` (the run's step there would read as its own:
``step 0`` where the primary has logged its first row). Opened at the
primary, the header shows the run's step.
"""

from __future__ import annotations

import pytest
from test_sharedrun import crafted_shared_run
from wandb_runs import SharedRun, SharedWriter, make_shared_run

from leet.config import Config
from leet.model.store import Store
from leet.sources.shared import SharedRunSource, open_run
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen
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


def test_a_secondary_with_no_history_says_so_rather_than_the_runs_step(tmp_path):
    source = crafted_shared_run(tmp_path, {"rank0": [{"a": 1.0}] * 20, "rank1": []})
    try:
        assert header_text(opened_at(source, 1)).endswith("writer1 finished · no history")
    finally:
        source.close()


# -- runs the SDK wrote, opened in the app ------------------------------------------------------------


@pytest.fixture(scope="module")
def sdk_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SharedRun]:
    """Two shared runs of two writers, by the real SDK: one where both log history (rank0 12 steps, rank1 4), one where only rank0 logs (step 0 alone)."""
    root = tmp_path_factory.mktemp("shared-header")
    return {
        "both": make_shared_run(root / "both", writers=2, history_by=("rank0", "rank1"), steps_by={"rank0": 12, "rank1": 4}),
        "primary_only": make_shared_run(root / "primary_only", writers=2, steps=1),
    }


async def opened_header(writer: SharedWriter) -> str:
    """The app's header line for ``leet RUN_DIR`` at this writer, once the run is read."""
    source = open_run(writer.run_dir, Store(), rescan=0.0)
    while not source.loaded():
        source.step()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        return app.screen.query_one("#header").plain_rows()[0]


def writer_of(run: SharedRun, label: str) -> SharedWriter:
    return next(writer for writer in run.writers if writer.label == label)


async def test_the_app_opened_at_an_sdk_secondary_shows_its_own_step(sdk_runs):
    header = await opened_header(writer_of(sdk_runs["both"], "rank1"))
    assert "· rank1 finished · step 3 ·" in header, header
    assert "finished · step 11 ·" in await opened_header(writer_of(sdk_runs["both"], "rank0"))


async def test_the_app_opened_at_an_sdk_secondary_with_no_history_claims_no_step(sdk_runs):
    header = await opened_header(writer_of(sdk_runs["primary_only"], "rank1"))
    assert "step 0" not in header and "· rank1 finished · no history ·" in header, header
    assert "finished · step 0 ·" in await opened_header(writer_of(sdk_runs["primary_only"], "rank0"))  # the primary's own step 0
