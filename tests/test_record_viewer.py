"""``i``: the record viewer on real SDK runs (and a damaged copy of one), driven by keys; one snapshot on a crafted run."""

from __future__ import annotations

import json
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from framer import RunWriter
from hostile import escapes, width_bomb
from loading import load as loaded
from pilot_waits import until

from leet.config import Config
from leet.model.store import Store
from leet.runfile import record_index
from leet.runfile.reader import read_records
from leet.runfile.record_index import LOST, RecordIndex, file_span, record_kind, unchunk
from leet.sources.workspace import WorkspaceSource
from leet.testing.demo import make_run_demo
from leet.ui.app import LeetApp
from leet.ui.bindings import RECORDS_KEYS, RUN_KEYS, WORKSPACE_KEYS, screen_keys
from leet.ui.screens.help import HelpScreen
from leet.ui.screens.records import RecordsScreen
from leet.ui.screens.run import RunScreen
from leet.ui.screens.workspace import WorkspaceScreen
from leet.ui.views.records import JSON_ITEMS, next_kind, record_json, record_row
from widgets.linelist import LineList
from widgets.runlist import RunList
from widgets.textpane import TextPane

SIZE = (160, 40)


@asynccontextmanager
async def run_view(path: Path):
    source = loaded(path)
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        yield app, pilot


async def open_records(app, pilot) -> RecordsScreen:
    """``i``, then the whole file indexed and drawn."""
    await pilot.press("i")
    await until(pilot, lambda: isinstance(app.screen, RecordsScreen), "the record viewer")
    screen = app.screen
    await until(pilot, lambda: screen.index.reached_end and screen.lines.count == len(screen.index), "the whole file indexed")
    await pilot.pause()
    return screen


def shown_lines(screen: RecordsScreen) -> list[str]:
    return screen.lines.plain_rows()[1:]


def pane_json(screen: RecordsScreen) -> dict:
    return json.loads("\n".join(screen.query_one(TextPane).lines))


async def show_kind(pilot, screen: RecordsScreen, kind: str | None) -> None:
    for _ in range(len(screen.index.kinds()) + 1):
        if screen.kind == kind:
            return
        await pilot.press("k")
    assert screen.kind == kind, f"k never listed {kind}"


async def search(pilot, screen: RecordsScreen, *keys: str) -> None:
    await pilot.press(*keys)
    await until(pilot, lambda: not screen.search_note.startswith("searching"), "the search")
    await pilot.pause()


# -- the index -----------------------------------------------------------------------------


def test_the_index_gives_back_every_record_the_reader_reads_with_its_kind(basic_run):
    index = RecordIndex(basic_run.wandb_path, step=7)  # many small reads: records cross read boundaries
    while not index.read_more():
        pass
    batch = read_records(basic_run.wandb_path)
    assert len(index) == len(batch.records)
    for number, (offset, payload) in enumerate(batch.records):
        entry = index.entry(number)
        assert (entry.offset, entry.size) == (offset, len(payload))
        assert index.payload(number) == payload
        assert entry.kind == index.record(number).WhichOneof("record_type")
    assert index.kinds()["history"] == basic_run.steps
    assert list(index.positions("exit")) == [n for n in range(len(index)) if index.entry(n).kind == "exit"]


def test_a_record_split_over_blocks_is_read_back_whole(tmp_path):
    writer = RunWriter("split")
    big = {"key": ["x" * 100_000]}  # three blocks and more
    writer.config(**big).exit()
    path = writer.write(tmp_path / "run-split.wandb")
    index = RecordIndex(path)
    while not index.read_more():
        pass
    config = index.record(1)
    assert config.config.update[0].key == "key" and json.loads(config.config.update[0].value_json) == big["key"]
    offset, payload = writer.records()[1]
    span = file_span(offset, len(payload))
    assert unchunk(path.read_bytes()[offset : offset + span], offset, len(payload)) == payload
    assert index.entry(2).kind == "exit"


def test_a_kind_is_read_from_the_first_bytes_and_anything_else_is_unknown():
    assert record_kind(b"\x08\x05\x12\x00") == "history"
    assert record_kind(b"\x08\x05\x92\x01\x00") == "exit"  # field 18: a two-byte tag
    assert record_kind(b"\x08\x05") == "unknown"
    assert record_kind(b"\xff\xff") == "unknown"


def test_a_row_of_many_keys_shows_its_first_items_as_json_and_says_how_many_more(tmp_path):
    path = width_bomb(tmp_path, keys=3_000)
    index = RecordIndex(path)
    while not index.read_more():
        pass
    number = index.positions("history")[0]
    lines = record_json(index.entry(number), index.record(number))
    assert lines[-1] == f"… {3_000 + 1 - JSON_ITEMS:,} more in history.item, not shown"  # and _step
    shown = json.loads("\n".join(lines[:-1]))
    assert len(shown["history"]["item"]) == JSON_ITEMS


def test_no_line_carries_a_terminal_escape_from_the_file(tmp_path):
    index = RecordIndex(escapes(tmp_path))
    while not index.read_more():
        pass
    for number in range(len(index)):
        row = record_row(index.entry(number), index.record(number), 200)
        assert not any(ch in text for text, _ in row for ch in "\x1b\x07"), row


def test_kinds_cycle_through_all_and_back():
    kinds = ["run", "history", "summary"]
    assert next_kind(kinds, None, 1) == "run"
    assert next_kind(kinds, "summary", 1) is None
    assert next_kind(kinds, None, -1) == "summary"


# -- the keys ------------------------------------------------------------------------------


def test_the_record_viewer_binds_every_row_of_its_table_and_i_opens_it_on_both_screens():
    bound = {(one, binding.action) for binding in RecordsScreen.BINDINGS for one in binding.key.split(",")}
    for key in screen_keys(RECORDS_KEYS):
        assert hasattr(RecordsScreen, f"action_{key.action.split('(')[0]}")
        assert all((one, key.action) in bound for one in key.keys.split(","))
    listed = {(one, binding.action) for binding in LineList.BINDINGS for one in binding.key.split(",")}  # type: ignore[union-attr]
    for key in RECORDS_KEYS:
        if key.where == "list":
            assert all((one, key.action) in listed for one in key.keys.split(","))
    assert [key.action for key in RUN_KEYS + WORKSPACE_KEYS if key.keys == "i"] == ["records", "records"]


# -- the viewer on a real run --------------------------------------------------------------


async def test_i_lists_the_records_by_kind_shows_the_selected_one_as_json_and_esc_goes_back(basic_run):
    async with run_view(basic_run.run_dir) as (app, pilot):
        screen = await open_records(app, pilot)
        lines = shown_lines(screen)
        kinds = {line.split()[1] for line in lines if line.strip()}
        assert {"run", "history", "summary"} <= kinds
        assert pane_json(screen)["num"] == "1"  # the first record, selected
        await pilot.press("down")
        record = screen.index.record(screen.index.positions()[1])
        assert pane_json(screen)["num"] == str(record.num)

        await show_kind(pilot, screen, "history")
        assert screen.lines.count == basic_run.steps
        assert all(line.split()[1] == "history" for line in shown_lines(screen) if line.strip())
        assert "history 200" in screen.query_one("#header").plain_rows()[0]
        first = pane_json(screen)["history"]["item"]
        assert {"nested_key": ["_step"], "value_json": "0"} in first  # the cursor went to the first history record

        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, RunScreen), "the run view again")


async def test_search_finds_the_history_records_with_a_key_and_n_and_N_move_between_them(basic_run):
    async with run_view(basic_run.run_dir) as (app, pilot):
        screen = await open_records(app, pilot)
        await show_kind(pilot, screen, "history")
        await search(pilot, screen, "slash", *"eval", "enter")
        found = pane_json(screen)["history"]
        assert found["step"]["num"] == "19"  # eval.loss is logged every 20 steps, first at step 19
        assert any(item.get("nested_key") == ["eval", "loss"] for item in found["item"])
        assert "     19 " in screen.lines.plain_rows()[screen.lines.cursor - screen.lines.top + 1]
        await search(pilot, screen, "n")
        assert pane_json(screen)["history"]["step"]["num"] == "39"
        await search(pilot, screen, "N")
        assert pane_json(screen)["history"]["step"]["num"] == "19"
        await search(pilot, screen, "slash", *"no such text anywhere", "enter")
        assert screen.search_note == "no match"
        assert pane_json(screen)["history"]["step"]["num"] == "19"


async def test_tab_focuses_the_json_and_help_lists_the_viewers_keys(basic_run):
    async with run_view(basic_run.run_dir) as (app, pilot):
        screen = await open_records(app, pilot)
        await pilot.press("tab")
        assert screen.focused is screen.query_one(TextPane)
        await pilot.press("tab")
        assert screen.focused is screen.lines
        await pilot.press("h")
        assert isinstance(app.screen, HelpScreen)


async def test_the_workspace_opens_the_records_of_the_run_under_the_cursor(basic_run):
    source = WorkspaceSource(basic_run.root, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen) and app.screen.query_one(RunList).cursor_key, "the runs listed")
            screen = await open_records(app, pilot)
            assert screen.index.path == basic_run.wandb_path
            assert screen.index.kinds()["history"] == basic_run.steps
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen), "the workspace again")
    finally:
        source.stop()


async def test_a_damaged_block_is_a_line_of_its_own_and_the_records_after_it_are_listed(corrupted_run):
    async with run_view(corrupted_run.run_dir) as (app, pilot):
        screen = await open_records(app, pilot)
        index = screen.index
        lost = list(index.positions(LOST))
        assert len(lost) == 1
        region = index.entry(lost[0])
        assert region.offset <= corrupted_run.offset < region.offset + region.size
        after = [index.entry(n) for n in range(lost[0] + 1, len(index))]
        assert after and all(entry.kind != LOST and entry.offset >= region.offset + region.size for entry in after)
        await show_kind(pilot, screen, LOST)
        assert f"── {region.size:,} bytes lost at offset {region.offset:,}: checksum mismatch ──" in shown_lines(screen)[0]
        await show_kind(pilot, screen, None)
        await pilot.press("end")
        assert pane_json(screen)["num"] == str(index.record(len(index) - 1).num)


async def test_the_file_is_indexed_off_the_screens_thread_which_answers_meanwhile(tmp_path, monkeypatch):
    writer = RunWriter("large")
    for step in range(3_000):
        writer.history(step, {"loss": 1 / (step + 1)})
    path = writer.write(tmp_path / "run-large.wandb")
    monkeypatch.setattr(record_index, "READ_STEP", 500)
    held, threads = threading.Event(), set()
    read_more = RecordIndex.read_more

    def read_slowly(index: RecordIndex) -> bool:
        threads.add(threading.get_ident())
        if len(index) >= 1_000:
            held.wait()  # the rest of the file waits until the screen has answered
        return read_more(index)

    monkeypatch.setattr(RecordIndex, "read_more", read_slowly)
    demo = make_run_demo()
    demo.source.path = path
    try:
        async with demo.app.run_test(size=SIZE) as pilot:
            await pilot.press("i")
            await until(pilot, lambda: isinstance(demo.app.screen, RecordsScreen), "the record viewer")
            screen = demo.app.screen
            await until(pilot, lambda: screen.lines.count >= 1_000, "the first part indexed")
            await pilot.press("down", "down")
            assert screen.lines.cursor == 2 and pane_json(screen)["num"] == "3"
            assert "indexing … 1,000 records" in screen.lines.plain_rows()[0]
            assert threading.get_ident() not in threads
            held.set()
            await until(pilot, lambda: screen.index.reached_end and screen.lines.count == 3_001, "the whole file indexed")
    finally:
        held.set()


async def test_a_file_that_is_no_run_file_says_why(tmp_path):
    path = tmp_path / "run-notes.wandb"
    path.write_text("just some notes\n")
    demo = make_run_demo()
    demo.source.path = path
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await until(pilot, lambda: isinstance(demo.app.screen, RecordsScreen), "the record viewer")
        screen = demo.app.screen
        await until(pilot, lambda: "not a W&B run file" in screen.lines.plain_rows()[0], "the reason in the list's title")
        assert "not a W&B run file" in screen.query_one(TextPane).lines[0]


async def test_an_unexpected_failure_of_the_index_thread_is_said_on_screen(basic_run, monkeypatch):
    def broken(self, stop, told):
        raise MemoryError("no room for the index")

    monkeypatch.setattr(RecordIndex, "follow", broken)
    demo = make_run_demo()
    demo.source.path = basic_run.wandb_path
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await until(pilot, lambda: isinstance(demo.app.screen, RecordsScreen), "the record viewer")
        screen = demo.app.screen
        await until(pilot, lambda: "no room for the index" in screen.lines.plain_rows()[0], "the failure in the list's title")


async def test_a_growing_file_is_followed(tmp_path):
    writer = RunWriter("growing")
    writer.history(0, {"loss": 1.0})
    path = writer.write(tmp_path / "run-growing.wandb")
    demo = make_run_demo()
    demo.source.path = path
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        await until(pilot, lambda: isinstance(demo.app.screen, RecordsScreen), "the record viewer")
        screen = demo.app.screen
        await until(pilot, lambda: screen.lines.count == 2, "the first records")
        await pilot.press("end")
        writer.history(1, {"loss": 0.5}).exit()
        writer.write(path)  # the same file, longer: the bytes already read are unchanged
        await until(pilot, lambda: screen.lines.count == 4, "the records written since")
        await until(pilot, lambda: "exit" in screen.query_one(TextPane).title, "the cursor following the end")


# -- the snapshot --------------------------------------------------------------------------


def crafted_run(root: Path) -> Path:
    """A small run with every common kind, the same bytes each time."""
    writer = RunWriter("snapshot", name="snapshot-run")
    writer.config(lr=0.001, model={"depth": 2})
    for step in range(6):
        writer.history(step, {"loss": round(1 / (step + 1), 4), "acc": step / 10})
        writer.summary(loss=round(1 / (step + 1), 4))
        if step == 2:
            writer.console("epoch 1 done")
            writer.stats(1_700_000_010.0, {"cpu": 12.5, "memory_percent": 40.0})
    writer.exit(0, runtime=42)
    return writer.write(root / "run-snapshot.wandb")


def test_the_record_viewer_on_a_small_run(snap_compare, tmp_path):
    demo = make_run_demo()
    demo.source.path = crafted_run(tmp_path)

    async def open_and_pick(pilot) -> None:
        await pilot.press("i")
        await until(pilot, lambda: isinstance(pilot.app.screen, RecordsScreen), "the record viewer")
        screen = pilot.app.screen
        await until(pilot, lambda: screen.index.reached_end and screen.lines.count == len(screen.index), "the file indexed")
        await pilot.press("down", "down")  # the history record of step 0
        await pilot.pause()

    assert snap_compare(demo.app, terminal_size=SIZE, run_before=open_and_pick)


@pytest.fixture(autouse=True)
def _no_leftover_readers():
    """Every viewer's index thread ends with its screen."""
    before = {thread.ident for thread in threading.enumerate()}
    yield
    for thread in threading.enumerate():
        if thread.ident not in before and thread.name == "leet-records":
            thread.join(timeout=5)
            assert not thread.is_alive(), "the index thread outlived its screen"
