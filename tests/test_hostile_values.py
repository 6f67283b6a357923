"""Run files with valid framing and hostile values (tests/hostile.py): every view copes.

Each crafted file is loaded, inspected four ways and opened in the run view
with every pane shown; a folder of them is opened as a workspace. What a
person would notice is asserted: a value too deep to show is cut with "…",
a time no calendar holds is "?", charts of extreme values still draw, and
nothing stops or hangs.
"""

from __future__ import annotations

import json
import pickle
import time
from contextlib import asynccontextmanager
from pathlib import Path

import hostile
import pytest
from loading import load
from test_inspect import run_inspect, strict_json

from leet.config import Config
from leet.model.store import Store
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode.convert import item_values
from leet.runfile.decode.json_values import DEPTH_CAP, DeepJSON, RawJSON, flatten, json_value
from leet.sources.workspace import WorkspaceSource
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen
from leet.ui.screens.workspace import WorkspaceScreen
from widgets.lines import StyledLines
from widgets.runlist import RunList

SIZE = (160, 48)
FIRST_FRAME_S = 15.0
CASES = sorted(hostile.CASES)
# The keys that show every pane: console, focus, a chart's mode, next page, overview off, system off.
EVERY_PANE = ("4", "tab", "enter", "tab", "y", "pagedown", "left_square_bracket", "right_square_bracket")
DEEP_CASES = {"deep_summary": ("nest", "obj"), "deep_config": ("nest", "arr"), "deep_everywhere": ("list1000", "dict100000", "mixed1000")}
FAR_START = ("far_future_start", "far_past_start", "edge_start")
EXTREME = ("extreme_values", "constant_extremes")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile")


@pytest.fixture(scope="module")
def files(folder) -> dict[str, Path]:
    """Each case in its own run directory, named as the SDK names them, so the folder is a workspace."""
    made = {}
    for index, name in enumerate(CASES):
        made[name] = hostile.CASES[name](folder / f"offline-run-20240101_{index:06d}-{name.replace('_', '')}")
    return made


def braille(rows) -> bool:
    return any("\u2800" < char <= "\u28ff" for row in rows for char in row)


# ---------------------------------------------------------------- decoding


@pytest.mark.parametrize("depth", hostile.DEPTHS)
def test_json_deeper_than_the_cap_stays_text(depth):
    for text in (hostile.deep_list(depth), hostile.deep_dict(depth), hostile.deep_mixed(depth)):
        value = json_value(text)
        if depth <= DEPTH_CAP:
            assert value == json.loads(text)
        else:
            assert isinstance(value, DeepJSON) and value == text and value.depth() == depth


def test_a_cut_copy_keeps_the_top_levels():
    value = json_value(hostile.deep_dict(100))
    cut = value.shallow(3)
    assert cut == {"a": {"a": {"a": "…"}}}
    assert json.dumps(value.shallow()).count("{") == DEPTH_CAP


def test_brackets_inside_strings_do_not_count_as_depth():
    text = json.dumps({"s": "[{" * 500 + "\\", "t": '\\"[[[' * 100, "n": [[1]]})  # escaped quotes and backslashes too
    assert "[{" * 500 in text and json_value(text) == json.loads(text)


def test_config_and_summary_items_too_deep_stay_text():
    items = [pb.ConfigItem(key="deep", value_json=hostile.deep_list(5000)), pb.ConfigItem(key="n", value_json="1.5")]
    update = item_values(items)
    assert isinstance(update["deep"], DeepJSON) and update["n"] == 1.5


def test_a_deep_value_travels_between_processes_as_raw_json():
    copy = pickle.loads(pickle.dumps(json_value(hostile.deep_list(100))))
    assert type(copy) is RawJSON and isinstance(json_value(copy), DeepJSON)


def test_flatten_walks_deeper_than_python_recurses():
    nested: dict = {"leaf": 1}
    for _ in range(5000):
        nested = {"a": nested}
    flat = flatten({"top": nested, "x": 2})
    assert list(flat.values()) == [1, 2] and next(iter(flat)).count(".") == 5001


def test_flatten_keeps_the_order_of_the_leaves():
    assert flatten({"a": {"b": 1, "c": {"d": 2}}, "e": 3, "f": {}}) == {"a.b": 1, "a.c.d": 2, "e": 3, "f": {}}


# ---------------------------------------------------------------- loading


@pytest.mark.parametrize("case", CASES)
def test_each_file_loads_to_a_snapshot(files, case):
    started = time.monotonic()
    snapshot = load(files[case]).snapshot()
    assert snapshot.records > 0 and snapshot.info is not None
    assert time.monotonic() - started < FIRST_FRAME_S


def test_a_deep_value_stays_its_text_and_a_shallow_one_is_decoded(files):
    snapshot = load(files["deep_everywhere"]).snapshot()
    assert snapshot.config["list30"] == json.loads(hostile.deep_list(30))
    assert snapshot.config["list100000"] == hostile.deep_list(100_000)
    assert snapshot.config["brackets_in_text"] == {"s": "[{" * 2000, "n": 1}
    assert ("loss", None) in snapshot.history_keys


# ---------------------------------------------------------------- leet inspect


@pytest.mark.parametrize("case", CASES)
def test_inspect_every_way_exits_cleanly_with_strict_json(files, case, capsys):
    status, out, _ = run_inspect(capsys, files[case])
    assert status == 0 and out.count("\n") > 3
    status, out, _ = run_inspect(capsys, files[case], "--json")
    assert status == 0
    assert all(isinstance(strict_json(line), dict) for line in out.splitlines())
    status, out, _ = run_inspect(capsys, files[case], "--summary")
    assert status == 0 and "state" in out and "Traceback" not in out
    status, out, _ = run_inspect(capsys, files[case], "--summary", "--json")
    assert status == 0 and strict_json(out)["run_id"]


@pytest.mark.parametrize("case", sorted(DEEP_CASES))
def test_inspect_summary_cuts_a_deep_value_and_json_keeps_its_text(files, case, capsys):
    keys = DEEP_CASES[case]
    _, text, _ = run_inspect(capsys, files[case], "--summary")
    for key in keys:
        line = next(line for line in text.splitlines() if line.startswith(f"  {key} = "))
        assert "…" in line and len(line) < 100
    _, out, _ = run_inspect(capsys, files[case], "--summary", "--json")
    report = strict_json(out)
    for key in keys:
        value = report["summary"].get(key, report["config"].get(key))
        assert isinstance(value, str) and value.count("[") + value.count("{") >= 100, "the raw text, whole"


def test_inspect_json_keeps_a_value_a_hundred_thousand_deep_as_text(files, capsys):
    _, out, _ = run_inspect(capsys, files["deep_everywhere"], "--json")
    summary = next(record for record in map(strict_json, out.splitlines()) if record["type"] == "summary")
    assert summary["update"]["dict100000"] == hostile.deep_dict(100_000)


def test_inspect_summary_shows_far_times_and_huge_numbers_short(files, capsys):
    _, text, _ = run_inspect(capsys, files["edge_start"], "--summary")
    values = dict(line.strip().split(" = ", 1) for line in text.splitlines() if " = " in line)
    assert values["start_time"] == "1000000000000"  # out of the plausible range: a number, not a date
    assert values["_runtime"] == "1e+400"
    _, text, _ = run_inspect(capsys, files["constant_extremes"], "--summary")
    values = dict(line.strip().split(" = ", 1) for line in text.splitlines() if " = " in line)
    assert values["beyond"] == "1e+400" and values["below"] == "-1e+400" and values["big"] == "1e+400"
    assert values["most"] == "1.7e+308" and values["tiny"] == "4.94066e-324"


# ---------------------------------------------------------------- the run view


@asynccontextmanager
async def run_view(path: Path):
    source = load(path)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        assert time.monotonic() - started < FIRST_FRAME_S, "the first frame took too long"
        yield app, pilot


async def press(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.pause()


def overview(app) -> list[str]:
    return app.screen.query_one("#overview").lines


def screen_rows(app) -> list[str]:
    return [row for widget in app.screen.query(StyledLines) for row in widget.plain_rows()]


def chart_rows(app, grid: str) -> list[list[str]]:
    return [chart.plain_rows() for _, chart in app.screen.query_one(f"#{grid}").visible_charts()]


@pytest.mark.parametrize("case", CASES)
async def test_the_run_view_shows_every_pane_and_keeps_running(files, case):
    async with run_view(files[case]) as (app, pilot):
        assert any(row.strip() for row in screen_rows(app)), "a blank screen"
        await press(pilot, *EVERY_PANE)
        assert app.is_running and isinstance(app.screen, RunScreen)
        assert app.screen.query_one("#console").display
        assert "Traceback" not in "\n".join(screen_rows(app))


@pytest.mark.parametrize("case", sorted(DEEP_CASES))
async def test_the_overview_cuts_a_deep_value_with_an_ellipsis(files, case):
    async with run_view(files[case]) as (app, _):
        lines = overview(app)
        for key in DEEP_CASES[case]:
            line = next(line for line in lines if line.split()[:1] == [key])
            assert "…" in line and len(line) < 300


async def test_the_overview_shows_a_shallow_value_whole_and_a_deeper_one_cut(files):
    async with run_view(files["deep_everywhere"]) as (app, _):
        lines = {line.split()[0]: line for line in overview(app) if line.startswith("  ") and line.split()}
        assert "…" not in lines["list30"] and lines["list30"].rstrip().endswith("[1" + "]" * 30)
        assert "…" in lines["list100"]
        assert "[{[{" in lines["brackets_in_text"]


@pytest.mark.parametrize("case", FAR_START)
async def test_a_start_time_no_calendar_holds_shows_a_question_mark(files, case):
    async with run_view(files[case]) as (app, _):
        started = next(line for line in overview(app) if line.strip().startswith("Started"))
        assert started.split()[-1] == "?"


async def test_far_summary_times_and_a_runtime_past_any_float_read_short(files):
    async with run_view(files["edge_start"]) as (app, _):
        lines = {line.split()[0]: line.split(None, 1)[1] for line in overview(app) if line.startswith("  ") and line.split()}
        assert lines["Runtime"] == "1e+400"
        assert lines["_timestamp"] == "nan" and lines["eval_timestamp"] == "inf"


@pytest.mark.parametrize("case", EXTREME)
async def test_charts_of_extreme_values_draw_with_short_labels(files, case):
    async with run_view(files[case]) as (app, pilot):
        charts = chart_rows(app, "metrics")
        assert charts and all(braille(rows) or "waiting for data" in "".join(rows) for rows in charts)
        assert sum(braille(rows) for rows in charts) >= 3, "the extreme series draw"
        assert braille(sum(chart_rows(app, "system"), [])), "system charts of extreme values draw"
        assert max(len(row.split("┤")[0].strip()) for rows in charts for row in rows if "┤" in row) <= 10, "short axis labels"
        for _ in range(3):  # log y, heatmap, back to lines, on the focused chart
            await press(pilot, "d", "y")
            assert braille(sum(chart_rows(app, "metrics"), [])) or "█" in "".join(sum(chart_rows(app, "metrics"), []))


@pytest.mark.parametrize("case", ("huge_stats_times", "negative_stats_times", "limit_stats_times"))
async def test_system_charts_at_far_times_draw(files, case):
    async with run_view(files[case]) as (app, _):
        assert braille(sum(chart_rows(app, "system"), [])), "the system samples draw"


# ---------------------------------------------------------------- the workspace


async def test_a_folder_of_hostile_runs_lists_every_one(folder, files):
    source = WorkspaceSource(folder, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    try:
        async with app.run_test(size=SIZE) as pilot:
            deadline = time.monotonic() + FIRST_FRAME_S
            rows: list[str] = []
            while time.monotonic() < deadline:
                await pilot.pause(0.05)
                if isinstance(app.screen, WorkspaceScreen):
                    rows = [row for row in app.screen.query_one(RunList).plain_rows()[1:] if row.strip()]
                    if len(rows) >= len(files):
                        break
            assert len(rows) == len(files), rows
            for marker in ("deepsum", "future", "past", "edgestart", "extreme", "hugesteps", "limitstats"):
                assert any(marker in row for row in rows), f"{marker} is listed"
            await press(pilot, "space", "down", "space", "tab", "y")
            assert app.is_running
    finally:
        source.stop()
