"""What the run screen's header says: a long name gives way to state and step; a media-only run names its media."""

from __future__ import annotations

import dataclasses

import pytest
from loading import load
from wandb_runs import MEDIA_LOGGED, MediaRun, make_media_run

from collectors.fake import DEFAULT_START
from leet.config import Config
from leet.model.run import RunModel, RunSnapshot, RunState
from leet.model.store import Store
from leet.runfile.events import HistoryRow, RunInfo
from leet.runfile.reader import BLOCK_SIZE
from leet.sources import run as runsource
from leet.sources.parallel import Frame, decode_frame, encode_frame, read_part
from leet.sources.run import RunSource
from leet.testing.demo import DEMO_RUN_FILE_BYTES, DemoRunSource, demo_run_events
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen
from leet.ui.views.run import header_parts, media_text, no_charts_text
from widgets.textline import join_line

LONG_NAME = "llama-3.1-70b-instruct-sft-lora-r64-alpha128-lr2e-5-cosine-warmup500-bs512-seq8192-packing-dpo-beta0.1v3"


def test_the_long_name_is_104_characters() -> None:
    assert len(LONG_NAME) == 104


def snapshot_of(name: str = LONG_NAME, *, project: str = "big-llm-finetuning-experiments", group: str = "sweep-2024-11", last_step: int = 31_257) -> RunSnapshot:
    model = RunModel(info=RunInfo(run_id="k3v9x2q7", project=project, display_name=name, group=group, job_type="train"))
    model.apply(HistoryRow(step=last_step, values={"loss": 0.5}))
    model.loaded = True
    model.records = 123_456
    return RunSnapshot.of(model, run_key="k3v9x2q7", state=RunState.RUNNING, file_size=3 * 2**30, run_id="k3v9x2q7")


def shown(snapshot: RunSnapshot, width: int) -> str:
    """The header bar as ``width`` cells show it (the bar's own cut, after ``header_parts``')."""
    left, right = header_parts(snapshot, width)
    return "".join(text for text, _ in join_line(left, right, width))


@pytest.mark.parametrize("width", [80, 100, 120])
def test_a_long_name_gives_way_to_state_and_step(width: int) -> None:
    text = shown(snapshot_of(), width)
    assert len(text) == width
    assert "running" in text and "step 31,257" in text
    assert "123,456 records" in text  # the right side stays too
    assert "…" in text and LONG_NAME not in text
    assert text.startswith(" " + LONG_NAME[:15])  # the name keeps its head


def test_group_and_project_go_before_the_name_is_cut() -> None:
    snapshot = snapshot_of(name="resnet50-adamw-lr3e-4-with-a-rather-long-tail")
    wide = shown(snapshot, 200)
    assert "big-llm-finetuning-experiments" in wide and "sweep-2024-11 / train" in wide
    narrower = shown(snapshot, 110)
    assert "sweep-2024-11" not in narrower and "resnet50-adamw-lr3e-4-with-a-rather-long-tail" in narrower
    assert "running · step 31,257" in narrower


def test_a_header_that_fits_is_left_whole() -> None:
    snapshot = snapshot_of(name="short")
    left, _ = header_parts(snapshot, 200)
    assert left == header_parts(snapshot)[0]
    assert "…" not in shown(snapshot, 200)


def test_without_a_width_nothing_is_cut() -> None:
    left, _ = header_parts(snapshot_of())
    assert left[0] == (" " + LONG_NAME, "heading")


def long_named_demo(width: int) -> LeetApp:
    events = [
        dataclasses.replace(event, display_name=LONG_NAME) if isinstance(event, RunInfo) else event
        for event in demo_run_events(300, 12.0, DEFAULT_START)
    ]
    source = DemoRunSource(Store(), clock=lambda: DEFAULT_START + 300 * 12.0 + 60, file_size=DEMO_RUN_FILE_BYTES)
    source.feed(events)
    return LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))


@pytest.mark.parametrize("width", [80, 120])
async def test_the_run_screen_header_keeps_state_and_step_at_80_and_120_columns(width: int) -> None:
    app = long_named_demo(width)
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.pause()
        text = app.screen.query_one("#header").plain_rows()[0]
        assert "finished" in text and "step 299" in text, text
        assert text.startswith(" " + LONG_NAME[:15]) and "…" in text


async def test_the_header_refits_when_the_terminal_grows() -> None:
    app = long_named_demo(80)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        await pilot.resize_terminal(240, 30)
        await pilot.pause()
        await pilot.pause()
        text = app.screen.query_one("#header").plain_rows()[0]
        assert LONG_NAME in text and "step 299" in text


# -- media ----------------------------------------------------------------------------


def test_media_are_named_by_kind() -> None:
    media = (("grads", "histogram"), ("preds", "table-file"), ("report", "html-file"), ("samples", "image-file"), ("val/samples", "image-file"))
    assert media_text(media) == "histograms: grads · html: report · images: samples, val/samples · tables: preds"
    many = tuple((f"img{i}", "image-file") for i in range(5))
    assert media_text(many) == "images: img0, img1, img2 +2 more"


def test_only_a_run_without_metrics_says_it_logged_only_media() -> None:
    model = RunModel()
    model.apply(HistoryRow(step=0, values={}, media=(("preds", "table-file"),)))
    snapshot = RunSnapshot.of(model, run_key="r", state=RunState.FINISHED, file_size=1, run_id="r")
    assert snapshot.media_keys == (("preds", "table-file"),)
    assert no_charts_text(snapshot) == "no charts: this run logged only media — tables: preds"
    assert no_charts_text(RunSnapshot.of(RunModel(), run_key="r", state=RunState.LOADING, file_size=1, run_id="r")) == "no metrics yet"


@pytest.fixture(scope="session")
def media_run(wandb_runs_root) -> MediaRun:
    return make_media_run(wandb_runs_root / "media")


def test_a_media_only_run_knows_its_media_and_has_no_metrics(media_run) -> None:
    source = load(media_run.run_dir)
    snapshot = source.snapshot()
    source.close()
    assert snapshot.state is RunState.FINISHED
    assert snapshot.history_keys == ()
    assert snapshot.last_step == media_run.media_steps - 1
    assert dict(snapshot.media_keys) == MEDIA_LOGGED
    assert no_charts_text(snapshot) == "no charts: this run logged only media — histograms: grads · html: report · tables: preds"


def test_media_keys_come_through_a_split_load(media_run, monkeypatch, children) -> None:
    """Big files are read by a child process too: its batches carry the media keys."""
    assert media_run.wandb_path.stat().st_size > 32768  # more than one block, so there is a part to split off
    monkeypatch.setattr(runsource, "FIRST_BATCH", 20)
    monkeypatch.setattr(runsource, "SPLIT_DELAY", 0.0)
    source = load(media_run.run_dir, split_load_bytes=0)
    snapshot = source.snapshot()
    source.close()
    started = children
    assert started and started[0].error == ""
    assert dict(snapshot.media_keys) == MEDIA_LOGGED


def test_the_child_sends_the_media_of_its_part(media_run) -> None:
    path = media_run.wandb_path
    frames: list[Frame] = []
    read_part(path, BLOCK_SIZE, path.stat().st_size, frames.append)
    assert sum(frame.rows for frame in frames) > 0
    assert {key: kind for frame in frames for key, kind in frame.media.items()} == MEDIA_LOGGED


def test_the_loader_folds_the_media_of_a_childs_frames(media_run) -> None:
    source = RunSource(media_run.run_dir, Store())  # not read: only the child's frame goes in
    source._fold_frames([Frame(first=0, resume_at=1, last_num=1, rows=1, last_step=3, media={"preds": "table-file"})])
    source.close()
    assert source.model.media_keys == {"preds": "table-file"} and source.model.last_step == 3


def test_a_frame_carries_its_media() -> None:
    frame = Frame(first=10, resume_at=300, last_num=7, rows=2, last_step=9, media={"preds": "table-file"})
    back = decode_frame(encode_frame(frame)[9:])
    assert back.media == {"preds": "table-file"}


async def test_the_run_screen_lists_the_media_of_a_media_only_run(media_run) -> None:
    source = load(media_run.run_dir)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        text = app.screen.query_one("#header").plain_rows()[0]
        assert "no charts: this run logged only media — histograms: grads · html: report · tables: preds" in text
        assert "no metrics yet" not in text
        overview = "\n".join(app.screen.query_one("#overview").plain_rows())
        assert "table 10×3" in overview and "html" in overview and "_type" not in overview
    source.close()


def test_inspect_summary_shows_media_by_kind(media_run, capsys) -> None:
    import argparse

    from leet.commands import inspect_run

    parser = argparse.ArgumentParser()
    inspect_run.add_arguments(parser)
    assert inspect_run.run(parser.parse_args([str(media_run.wandb_path), "--summary"])) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  preds = table 10×3" in out and "  report = html" in out
    assert any(line.startswith("  grads = histogram ") and line.endswith(" bins") for line in out), out
