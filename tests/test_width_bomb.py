"""Width bombs: run files that name more keys than anyone can chart cost bounded memory and say what they hide.

A run charts the first ``MAX_METRICS`` history keys it logs (first come); a
row too wide to read whole is read as far as its first ``ROW_ITEMS`` names
in code-point order. Speed is measured in ``benchmarks/width_bomb.py``.
"""

from __future__ import annotations

import random

import pytest
from framer import RunWriter
from hostile import width_bomb
from loading import load as loaded

from leet.config import Config
from leet.model.catalog import MAX_METRICS, KeyCap
from leet.model.store import SeriesKey, Store
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode import bulk
from leet.runfile.decode.convert import ROW_ITEMS, WideRow, history_event, parse
from leet.sources.run import RunSource
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen

WIDE = MAX_METRICS + 2_000


def name(index: int) -> str:
    return f"k{index:07d}"



@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> RunSource:
    return loaded(width_bomb(tmp_path_factory.mktemp("bomb"), WIDE))


def test_the_row_cap_is_the_chart_cap():
    assert ROW_ITEMS == MAX_METRICS


def test_a_wide_run_keeps_the_first_keys_by_name_and_counts_the_rest(bomb):
    snapshot = bomb.snapshot()
    assert snapshot.history_keys == tuple((name(index), None) for index in range(MAX_METRICS))
    # Both rows were too wide to read whole: the count is a lower bound.
    assert snapshot.capped["metrics"] == (MAX_METRICS, WIDE - MAX_METRICS, False)
    assert len(bomb.store.series(bomb.run_key)) == MAX_METRICS
    assert snapshot.last_step == 1


def test_every_row_of_a_wide_run_reads_the_same_keys_whatever_their_order(tmp_path):
    writer = RunWriter("shuffled")
    keys = [name(index) for index in range(WIDE)]
    for step in range(3):
        random.Random(step).shuffle(keys)
        writer.history(step, {key: float(step) for key in keys})
    source = loaded(writer.exit().write(tmp_path / "run-shuffled.wandb"))
    found = source.store.snapshot([SeriesKey(source.run_key, name(0)), SeriesKey(source.run_key, name(MAX_METRICS - 1))])
    assert [list(data.t) for data in found.values()] == [[0.0, 1.0, 2.0]] * 2


def test_keys_that_come_later_wait_behind_the_first_ones_and_are_counted_exactly(tmp_path):
    writer = RunWriter("trickle")
    per_row = 4_000
    for step in range(3):
        writer.history(step, {name(step * per_row + index): 1.0 for index in range(per_row)})
    source = loaded(writer.exit().write(tmp_path / "run-trickle.wandb"))
    snapshot = source.snapshot()
    assert snapshot.history_keys == tuple((name(index), None) for index in range(MAX_METRICS))
    assert snapshot.capped["metrics"] == (MAX_METRICS, 3 * per_row - MAX_METRICS, True)
    assert len(source.store.series(source.run_key)) == MAX_METRICS


def test_a_narrow_run_has_nothing_capped(tmp_path):
    writer = RunWriter("narrow")
    writer.history(0, {"loss": 1.0, "acc": 0.5})
    source = loaded(writer.exit().write(tmp_path / "run-narrow.wandb"))
    assert source.snapshot().capped == {}


def test_wide_config_summary_and_stats_are_capped_and_counted(tmp_path):
    keys = {name(index): index for index in range(WIDE)}
    writer = RunWriter("widemeta").config(**keys).summary(**keys)
    writer.stats(1_700_000_010.0, {name(index): 1.0 for index in range(WIDE)})
    writer.history(0, {"loss": 1.0})
    source = loaded(writer.exit().write(tmp_path / "run-widemeta.wandb"))
    snapshot = source.snapshot()
    for part in ("config", "summary", "system"):
        assert snapshot.capped[part] == (MAX_METRICS, WIDE - MAX_METRICS, True)
    assert len(snapshot.config) == len(snapshot.summary) == MAX_METRICS
    assert len(source.store.series(source.system_key)) == MAX_METRICS
    assert snapshot.history_keys == (("loss", None),)


def wide_payload(count: int, nested: bool, extra: dict[str, str] | None = None) -> bytes:
    items = [(name(index), str(index)) for index in range(count)] + list((extra or {}).items())
    random.Random(count).shuffle(items)
    field = "nested_key" if nested else "key"
    made = [pb.HistoryItem(**{field: [key] if nested else key}, value_json=text) for key, text in items]
    made.append(pb.HistoryItem(**{field: ["_step"] if nested else "_step"}, value_json="7"))
    return pb.Record(num=3, history=pb.HistoryRecord(item=made, step=pb.HistoryStep(num=7))).SerializeToString()


@pytest.mark.parametrize("nested", [True, False])
def test_the_fast_and_the_per_item_decoders_read_the_same_part_of_a_wide_row(nested):
    payload = wide_payload(ROW_ITEMS + 50, nested)
    fast, slow = bulk.history_row(payload), history_event(parse(payload).history)
    assert fast is not None and fast.step == slow.step == 7
    assert fast.values == slow.values == {name(index): float(index) for index in range(ROW_ITEMS)}
    assert isinstance(fast.values, WideRow) and fast.values.unread == slow.values.unread == 50


def test_a_wide_row_with_a_string_is_read_per_item_with_the_same_cap():
    payload = wide_payload(ROW_ITEMS + 5, nested=True, extra={"a_note": '"text"'})
    assert bulk.history_row(payload) is None
    row = history_event(parse(payload).history)
    # The note sorts first, so it takes one of the places; it is not a number, so it is no value.
    assert len(row.values) == ROW_ITEMS - 1 and "a_note" not in row.values and row.values.unread == 6


def test_a_key_cap_keeps_arrival_order_and_counts_each_key_once():
    cap = KeyCap(limit=3)
    cap.add(["a", "b"])
    cap.add(["b", "c", "d", "e"])
    cap.add(["d", "a"])
    assert cap.shown == {"a", "b", "c"} and (cap.hidden, cap.exact) == (2, True)
    assert cap.filter({"a": 1, "d": 2}) == {"a": 1}
    cap.saw_row(keys=50, unread=40)
    assert (cap.hidden, cap.exact) == (47, False)


def test_the_store_refuses_series_past_its_cap_and_counts_them():
    store = Store(max_series=2)
    store.extend_many("run", {("a", None): ([0.0], [1.0]), ("b", None): ([0.0], [1.0]), ("c", None): ([0.0], [1.0])})
    store.append_many("run", 1.0, {("a", None): 2.0, ("d", None): 1.0, ("c", None): 3.0})
    assert [series.key for series in store.series("run")] == ["a", "b"]
    assert store.refused("run") == 2
    store.append_many("other", 1.0, {("x", None): 1.0})
    assert store.refused("other") == 0 and len(store.series("other")) == 1


async def test_the_run_view_says_how_many_metrics_it_hides_and_filters_what_it_shows(bomb):
    app = LeetApp(bomb, Config(theme="textual-dark"), live=False, screen=lambda: RunScreen(bomb))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        header = app.screen.query_one("#header").plain_rows()[0]
        assert f"of {MAX_METRICS} ·" in header and f"{MAX_METRICS:,} of ≥{WIDE:,} metrics shown" in header
        await pilot.press("slash", *name(MAX_METRICS - 1))
        await pilot.pause()
        assert list(app.screen.query_one("#metrics").chart_ids) == [name(MAX_METRICS - 1)]
        await pilot.press("ctrl+u", *name(MAX_METRICS))
        await pilot.pause()
        assert list(app.screen.query_one("#metrics").chart_ids) == []


def test_one_config_value_holding_a_huge_mapping_lists_a_bounded_part_and_says_so(tmp_path):
    import json
    import time

    from leet.ui.views.run import OVERVIEW_ENTRIES, overview_lines

    writer = RunWriter("bigcfg")
    writer.config(layers=json.dumps({f"layer{index}": index for index in range(OVERVIEW_ENTRIES * 4)}))
    writer.summary(table=json.dumps([[index, index * 2] for index in range(200_000)]))
    writer.history(0, {"loss": 1.0}).exit()
    snapshot = loaded(writer.write(tmp_path / "run-bigcfg.wandb")).snapshot()
    lines = [text for text, _ in overview_lines(snapshot, time.time())]
    listed = [line for line in lines if line.strip().startswith("layers.layer")]
    assert len(listed) == OVERVIEW_ENTRIES
    assert f"  … only the first {OVERVIEW_ENTRIES:,} entries are listed" in lines
    (table,) = [line for line in lines if line.strip().startswith("table ")]
    assert table.split()[1].startswith("[[0,") and table.endswith("MiB of JSON)"), "a huge value shows its start and its size"
