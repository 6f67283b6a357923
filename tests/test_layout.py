"""Which files make a run: resumed segments, latest-run, shared-mode writers (real SDK files)."""

from __future__ import annotations

from pathlib import Path

import pytest
from loading import settled
from wandb_runs import ResumedRun, SharedRun, make_resumed_run, make_shared_run

from leet.discovery.layout import resolve
from leet.model.run import RunState
from leet.model.store import SeriesKey, Store
from leet.sources.run import RunSource
from leet.sources.shared import SharedRunSource, open_run
from leet.sources.workspace import WorkspaceSource


@pytest.fixture(scope="session")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> ResumedRun:
    return make_resumed_run(tmp_path_factory.mktemp("resumed"))


@pytest.fixture(scope="session")
def shared_secondary_history(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """rank0 is the primary and logs nothing; rank1 logs the history."""
    return make_shared_run(tmp_path_factory.mktemp("shared-history"), writers=2, steps=6, history_by=("rank1",))


def test_a_resumed_segment_is_its_own_run_with_its_segments_listed(resumed: ResumedRun):
    first, second = resumed.first.wandb_path.resolve(), resumed.second.wandb_path.resolve()
    layout = resolve(second.parent)
    assert layout.kind == "run" and layout.files == (second,)
    assert [head.file for head in layout.segments] == [first, second] and layout.segment_index == 1
    source = open_run(second.parent, Store())
    assert isinstance(source, RunSource)
    snapshot = settled(source)
    assert snapshot.state is RunState.FINISHED and snapshot.last_step == 2, "the file named, not the other segment"
    assert [(s.file, s.current) for s in snapshot.segments] == [(first, False), (second, True)]
    earlier = settled(open_run(first, Store()))
    assert earlier.state is RunState.FAILED and earlier.exit_code == 1 and earlier.last_step == 7
    assert not earlier.writers, "segments are not writers of a shared run"


def test_latest_run_opens_its_target(resumed: ResumedRun):
    latest = resumed.second.root / "wandb" / "latest-run"
    assert latest.is_symlink()
    layout = resolve(latest)
    assert layout.kind == "run" and layout.file == resumed.second.wandb_path.resolve()
    assert len(layout.segments) == 2


def test_the_workspace_lists_segments_apart_and_numbered(resumed: ResumedRun):
    workspace = WorkspaceSource(resumed.first.root)
    workspace.refresh()
    entries = sorted(workspace.entries(), key=lambda e: e.start_time or 0)
    assert [(e.segment, e.state) for e in entries] == [((1, 2), RunState.FAILED), ((2, 2), RunState.FINISHED)]
    assert all(e.writers == 1 for e in entries)


def test_a_secondary_writers_history_is_charted_under_its_label(shared_secondary_history: SharedRun):
    rank1 = next(w for w in shared_secondary_history.writers if w.label == "rank1")
    layout = resolve(rank1.run_dir)
    assert layout.kind == "shared" and len(layout.writers) == 2
    assert layout.writers[0].primary and layout.file == rank1.wandb_path.resolve()
    store = Store()
    source = open_run(rank1.run_dir, store, rescan=0.0)
    assert isinstance(source, SharedRunSource)
    snapshot = settled(source)
    assert ("loss", "rank1") in snapshot.history_keys
    assert snapshot.last_step == 5
    points = store.snapshot([SeriesKey(source.run_key, "loss", "rank1")])
    assert len(next(iter(points.values())).t) == 6
    opened = [writer for writer in snapshot.writers if writer.opened]
    assert [writer.label for writer in opened] == ["rank1"] and opened[0].last_step == 5
    assert snapshot.summary.get("loss") is not None, "the summary has the secondary's metrics too"


def test_a_secondary_alone_is_read_as_one_file_by_inspect(shared_secondary_history: SharedRun, capsys):
    import argparse
    import json

    from leet.commands.inspect_run import add_arguments, run

    rank1 = next(w for w in shared_secondary_history.writers if w.label == "rank1")
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run(parser.parse_args([str(rank1.wandb_path), "--summary", "--json"])) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["path"] == str(Path(rank1.wandb_path)) and report["last_step"] == 5 and report["state"] == "finished"


def test_the_header_shows_the_runs_state_and_the_opened_writers(shared_secondary_history: SharedRun):
    from leet.ui.views.run import header_parts

    rank1 = next(w for w in shared_secondary_history.writers if w.label == "rank1")
    snapshot = settled(open_run(rank1.run_dir, Store(), rescan=0.0))
    left, _ = header_parts(snapshot, width=120)
    text = "".join(part for part, _ in left)
    assert "2 writers · finished · rank1 finished · step 5" in text
