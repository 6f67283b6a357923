"""Shared-mode runs written by the real SDK: four processes, labels rank0…rank3, one primary.

Opening any writer's directory opens the whole run; history comes from the
primary, system metrics and console output from every writer under its label.
Crafted writers' files cover what the SDK would not readily write.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from framer import RunWriter

from leet.config import Config
from leet.discovery.layout import read_head
from leet.model.node_filter import LabelFilter
from leet.model.run import ConsoleLine, RunState
from leet.model.store import SeriesKey, Store
from leet.runfile.folders import sibling_files
from leet.sources.run import RunSource
from leet.sources.shared import (
    SharedRunSource,
    merge_console,
    open_run,
    writer_files,
)
from leet.ui.app import LeetApp
from leet.ui.screens.label_picker import LabelPicker
from leet.ui.screens.run import RunScreen
from leet.ui.views.run import metric_specs

LABELS = ("rank0", "rank1", "rank2", "rank3")


def loaded(path) -> SharedRunSource:
    source = open_run(path, Store())
    assert isinstance(source, SharedRunSource)
    for _ in range(200):
        source.step()
        if source.snapshot().state is not RunState.LOADING:
            break
    return source


@pytest.fixture(scope="module")
def shared(shared_run):
    return shared_run


def file_of(writer) -> Path:
    return writer.wandb_path


# -- finding the writers -----------------------------------------------------------


def test_any_writer_directory_finds_all_four_writers_primary_first(shared):
    primary = file_of(shared.primary)
    for writer in shared.writers:
        files = writer_files(writer.run_dir)
        assert sorted(files) == sorted(file_of(w) for w in shared.writers)
        assert files[0] == primary, f"opened from {writer.label}: the primary leads"


def test_only_the_primary_wrote_an_environment_record(shared):
    heads = {writer.label: read_head(file_of(writer)) for writer in shared.writers}
    assert [label for label, head in heads.items() if head.primary] == ["rank0"]
    assert {head.info.run_id for head in heads.values()} == {shared.run_id}


def copy_writer(writer, root: Path) -> Path:
    """Only the run file: the SDK's log folder holds links that dangle once the writer is gone."""
    target = root / writer.run_dir.name
    target.mkdir(parents=True)
    shutil.copy2(file_of(writer), target / file_of(writer).name)
    return target


def test_siblings_are_the_directories_holding_the_same_run_file(shared, tmp_path):
    root = tmp_path / "wandb"
    for writer in shared.writers[:2]:
        copy_writer(writer, root)
    (root / "offline-run-20990101_000000-other").mkdir()
    (root / "offline-run-20990101_000000-other" / "run-other.wandb").write_bytes(b"")
    files = sibling_files(root / shared.writers[0].run_dir.name / file_of(shared.writers[0]).name)
    assert [f.parent.name for f in files] == sorted(w.run_dir.name for w in shared.writers[:2])


# -- one merged run ------------------------------------------------------------------


def test_the_merged_run_has_four_labels_history_from_the_primary_and_every_writers_system_metrics(shared):
    source = loaded(shared.writers[2].run_dir)
    try:
        snapshot = source.snapshot()
        assert snapshot.state is RunState.FINISHED
        assert snapshot.labels == LABELS
        assert [w.label for w in snapshot.writers][0] == "rank0" and snapshot.writers[0].primary
        assert sorted(w.label for w in snapshot.writers) == list(LABELS)
        assert snapshot.history_keys == (("loss", None),) and snapshot.last_step == len(shared.primary.rows) - 1
        system = source.store.series(source.system_key)
        assert {s.label for s in system} == set(LABELS)
        cpu = {s.label for s in system if s.key == "cpu"}
        assert cpu == set(LABELS), "the same metric once per node, never collapsed"
        assert snapshot.file_size == sum(file_of(w).stat().st_size for w in shared.writers)
    finally:
        source.close()


def test_console_lines_of_every_writer_arrive_tagged_and_in_time_order(shared):
    source = loaded(shared.primary.run_dir)
    try:
        console = source.snapshot().console
        tagged = {(line.label, line.text) for line in console}
        for label in LABELS:
            assert (label, f"hello from {label}") in tagged and (label, f"bye from {label}") in tagged
        times = [line.time for line in console]
        assert times == sorted(times)
        for label in LABELS:
            said = [line.text for line in console if line.label == label]
            assert said == [f"hello from {label}", f"bye from {label}"]
    finally:
        source.close()


def test_a_writer_that_joins_later_is_picked_up(shared, tmp_path):
    root = tmp_path / "wandb"
    for writer in shared.writers[:3]:
        copy_writer(writer, root)
    source = SharedRunSource(writer_files(root / shared.writers[0].run_dir.name), Store(), rescan=0.0)
    try:
        for _ in range(20):
            source.step()
        assert len(source.snapshot().labels) == 3
        late = shared.writers[3]
        copy_writer(late, root)
        assert source.find_new_writers()
        for _ in range(20):
            source.step()
        assert source.snapshot().labels == LABELS
    finally:
        source.close()


def crafted_shared_run(root: Path, histories: dict[str, list[dict[str, float]]]) -> SharedRunSource:
    """A run of ``histories``' writers (label → rows by step; the first is the primary), read to its end."""
    files = []
    for label, rows in histories.items():
        writer = RunWriter("crafted")
        for step, row in enumerate(rows):
            writer.history(step, row)
        files.append(writer.exit().write(root / label / "run-crafted.wandb"))
    source = SharedRunSource(files, Store(), labels=[None, *list(histories)[1:]], rescan=0.0)
    while not source.loaded():
        source.step()
    return source


def test_a_writers_metric_named_like_a_labelled_key_is_its_own_chart_with_its_points(tmp_path):
    """rank1 logs ``loss/l:x``: the metric of that name, rank1's series of it (not ``loss`` of a node ``x``)."""
    source = crafted_shared_run(tmp_path, {"rank0": [{"loss": 1.0}, {"loss": 0.5}], "rank1": [{"loss/l:x": 2.0}, {"loss/l:x": 3.0}]})
    try:
        snapshot = source.snapshot()
        assert snapshot.history_keys == (("loss", None), ("loss/l:x", "rank1"))
        specs = {spec.chart: spec for spec in metric_specs(snapshot.history_keys, run=snapshot.run_key)}
        assert list(specs) == ["loss", "loss/l:x"]
        assert specs["loss/l:x"].keys == (SeriesKey(source.run_key, "loss/l:x", "rank1"),)
        points = source.store.snapshot(list(specs["loss/l:x"].keys))
        assert [list(series.mean) for series in points.values()] == [[2.0, 3.0]]
    finally:
        source.close()


def test_every_writers_series_of_a_metric_share_its_chart_and_a_hidden_metric_has_none():
    series = [("loss", None), ("loss", "rank10"), ("loss", "rank2"), ("secret", None), ("secret", "rank1"), ("acc", "rank1")]
    specs = metric_specs(series, hidden={"secret"}, run="run")
    assert [spec.chart for spec in specs] == ["acc", "loss"]
    assert specs[1].keys == (SeriesKey("run", "loss", None), SeriesKey("run", "loss", "rank2"), SeriesKey("run", "loss", "rank10"))


def test_merge_console_keeps_time_order_and_the_newest_lines():
    a = [ConsoleLine("stdout", "a1", "rank0", 1.0), ConsoleLine("stdout", "a2", "rank0", 4.0)]
    b = [ConsoleLine("stdout", "b1", "rank1", 2.0), ConsoleLine("stderr", "b2", "rank1", 3.0)]
    assert [line.text for line in merge_console([a, b], 10)] == ["a1", "b1", "b2", "a2"]
    assert [line.text for line in merge_console([a, b], 2)] == ["b2", "a2"]
    assert merge_console([a, b], 0) == ()


# -- label filters ---------------------------------------------------------------------


def test_label_filter_takes_comma_separated_globs():
    chosen = LabelFilter.parse("rank0,rank[23]")
    assert chosen.shown(list(LABELS)) == ["rank0", "rank2", "rank3"]
    assert not chosen.matches(None), "asking for nodes hides unlabelled series"
    assert LabelFilter().matches(None) and not LabelFilter().active
    assert LabelFilter.parse(["rank1", "rank2,rank1"]).patterns == ("rank1", "rank2")
    assert LabelFilter.parse("rank9").unmatched(list(LABELS)) == ["rank9"]
    assert chosen.describe(list(LABELS)) == "labels rank0,rank2,rank3 (3 of 4)"


def test_toggling_labels_hides_one_node_and_every_node_again_clears_the_filter():
    labels = list(LABELS)
    chosen = LabelFilter().toggle("rank1", labels)
    assert chosen.shown(labels) == ["rank0", "rank2", "rank3"]
    assert chosen.toggle("rank1", labels) == LabelFilter()
    only = LabelFilter().only("rank3")
    assert only.shown(labels) == ["rank3"]
    assert only.toggle("rank3", labels).shown(labels) == [], "hiding the last node shows none, not all"


# -- the run view --------------------------------------------------------------------------


def system_titles_and_legends(app) -> list[str]:
    grid = app.screen.query_one("#system")
    return ["\n".join(chart.plain_rows()) for _, chart in grid.visible_charts()]


def console_text(app) -> str:
    return "\n".join(app.screen.query_one("#console").plain_rows())


async def test_the_run_view_filters_system_charts_and_console_by_label(shared):
    source = loaded(shared.primary.run_dir)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source, labels="rank2"))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        header = app.screen.query_one("#header").plain_rows()[0]
        assert "4 writers" in header and "labels rank2 (1 of 4)" in header
        charts = "\n".join(system_titles_and_legends(app))
        assert "rank2" in charts and "rank0" not in charts and "rank3" not in charts
        await pilot.press("4")
        await pilot.pause()
        console = console_text(app)
        assert "[rank2] hello from rank2" in console and "rank0" not in console.replace("labels", "")

        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LabelPicker)
        await pilot.press("a")  # every node
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen) and not app.screen.labels.active
        console = console_text(app)
        assert all(f"[{label}] hello from {label}" in console for label in LABELS)
        assert "labels" not in app.screen.query_one("#header").plain_rows()[0]


async def test_the_label_picker_lists_each_writer_and_toggles_it(shared):
    source = loaded(shared.primary.run_dir)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        rows = app.screen.query_one("#label-list").plain_rows()
        assert [row.split()[1] for row in rows[:4]] == list(LABELS)
        assert "primary" in rows[0] and "finished" in rows[0] and all(row.startswith("[x]") for row in rows[:4])
        await pilot.press("down", "space")  # hide rank1
        await pilot.pause()
        assert app.screen.query_one("#label-list").plain_rows()[1].startswith("[ ]")
        await pilot.press("escape")
        await pilot.pause()
        screen = app.screen
        assert screen.labels.shown(list(LABELS)) == ["rank0", "rank2", "rank3"]
        charts = "\n".join(system_titles_and_legends(app))
        assert "rank1" not in charts and "rank0" in charts


async def test_l_on_an_ordinary_run_says_it_has_no_labels(basic_run):
    from leet.sources.run import RunSource

    source = RunSource(basic_run.run_dir, Store())
    while not source.model.loaded:
        source.step()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        assert any("no node labels" in str(n.message) for n in app._notifications)


def test_merge_console_tags_lines_with_their_writers_label():
    a = [ConsoleLine("stdout", "a1", None, 1.0)]
    b = [ConsoleLine("stdout", "b1", None, 2.0), ConsoleLine("stdout", "b2", None, 2.0)]
    merged = merge_console([a, b], 10, ("rank0", "rank1"))
    assert [(line.label, line.text) for line in merged] == [("rank0", "a1"), ("rank1", "b1"), ("rank1", "b2")]


def test_latest_run_is_its_target_not_a_second_writer(basic_run):
    latest = basic_run.root / "wandb" / "latest-run"
    assert latest.is_symlink(), "the SDK made the link"
    assert writer_files(latest) == [basic_run.wandb_path.resolve()]
    source = open_run(latest, Store())
    assert isinstance(source, RunSource), "an ordinary run, not a shared one"
    while not source.model.loaded:
        source.step()
    alone = open_run(basic_run.run_dir, Store())
    while not alone.model.loaded:
        alone.step()
    assert source.snapshot().records == alone.snapshot().records, "no record counted twice"
    assert source.snapshot().writers == ()
    source.close()
    alone.close()
