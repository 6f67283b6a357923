"""What leet makes of runs written by every SDK from 0.10 to 0.31 (files in tests/fixtures/vintage).

``test_vintage.py`` holds ``leet inspect --summary`` to ``wandb leet inspect``;
these tests check the run view's data on the same files: old system keys on
today's charts, resumed segments apart, shared secondaries' history,
``define_metric`` axes, empty files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loading import settled

from leet.discovery.layout import resolve
from leet.model.catalog import group
from leet.model.run import RunState
from leet.model.store import Store
from leet.sources.shared import open_run

FIXTURES = Path(__file__).parent / "fixtures" / "vintage"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())


def cases(name: str) -> list:
    found = [case for case in MANIFEST["cases"] if case["case"] == name and case["files"]]
    return [pytest.param(case, id=case["release"]) for case in found]


@pytest.mark.parametrize("case", cases("basic"))
def test_old_system_keys_land_on_todays_charts(case):
    store = Store()
    source = open_run(FIXTURES / case["files"][0], store)
    snapshot = settled(source)
    assert snapshot.state is RunState.FINISHED and snapshot.last_step == 5
    assert {("loss", None), ("acc", None), ("val.loss", None)} <= set(snapshot.history_keys)
    keys = [series.key for series in store.series(source.system_key)]
    titles = {spec.title for spec in group(store.series(source.system_key))}
    assert "System Memory" in titles and "Disk Usage" in titles, f"{case['release']}: {sorted(keys)}"
    assert "memory" not in keys and "disk" not in keys, "legacy names are mapped to today's"
    if case["release"] in ("0.10.33", "0.12.21"):
        assert {"network.sent", "network.recv"} <= set(keys), "nested network stats are flattened"


@pytest.mark.parametrize("case", cases("resumed"))
def test_each_resumed_segment_opens_as_itself(case):
    first, second = (FIXTURES / name for name in case["files"])
    for file, state, segment in ((first, RunState.FAILED, 0), (second, RunState.FINISHED, 1)):
        layout = resolve(file)
        assert layout.kind == "run" and layout.files == (file.resolve(),)
        assert layout.segment_index == segment and len(layout.segments) == 2
        assert settled(open_run(file, Store())).state is state
    assert resolve(first.parent.parent / "latest-run").file == second.resolve()


@pytest.mark.parametrize("case", cases("shared"))
def test_a_shared_secondarys_history_is_read(case):
    files = [FIXTURES / name for name in case["files"]]
    layouts = [resolve(file) for file in files]
    assert all(layout.kind == "shared" and len(layout.writers) == 2 for layout in layouts)
    secondary = next(layout for layout in layouts if not layout.writers[0].file == layout.file)
    snapshot = settled(open_run(secondary.file, Store(), rescan=0.0))
    labelled = [key for key, label in snapshot.history_keys if label is not None]
    assert labelled, f"the secondary's history: {snapshot.history_keys}"
    assert [writer.opened for writer in snapshot.writers] == [False, True]


@pytest.mark.parametrize("case", cases("trainer"))
def test_trainer_metrics_are_charted_by_global_step(case):
    snapshot = settled(open_run(FIXTURES / case["files"][0], Store()))
    assert snapshot.axes.get("train/loss") == "train/global_step", snapshot.axes


@pytest.mark.parametrize("case", cases("empty"))
def test_an_empty_or_header_only_file_is_unknown(case):
    snapshot = settled(open_run(FIXTURES / case["files"][0], Store()))
    assert snapshot.state is RunState.UNKNOWN and snapshot.reason
