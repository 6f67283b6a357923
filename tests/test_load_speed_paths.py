"""The fast paths for long runs give exactly what the per-item path gives.

``bulk.peek`` reads a record's number and kind from its first bytes; the merged
view turns history and summary records into lists in one parse; the event
stream folds a poll's summary records into one event, and a reader can stop
before a part someone else reads and resume after it. Each is checked against
the plain protobuf decode, on records the real SDK wrote and on hand-made odd ones.
"""

from __future__ import annotations

import pytest

from leet.model.run import RunModel
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode import (
    EventReader,
    EventStream,
    RawJSON,
    bulk,
    parse,
    to_event,
)
from leet.runfile.decode.convert import history_event, raw_summary_event
from leet.runfile.events import HistoryRow
from leet.runfile.reader import BLOCK_SIZE, Chunked, read_records


def records_of(path) -> list[tuple[int, bytes]]:
    return read_records(path).records


def same_row(a: HistoryRow, b: HistoryRow) -> bool:
    """Equal rows, NaN equal to NaN, key order included."""
    def norm(row):
        return (row.step, row.timestamp, row.runtime, [(k, repr(v)) for k, v in row.values.items()])

    return norm(a) == norm(b)


def feed(*payloads: bytes, **options) -> list:
    stream = EventStream(**options)
    return stream.feed(Chunked(records=[(7 + 100 * i, p) for i, p in enumerate(payloads)])), stream


def history_payload(num: int, items: list[dict], step: int | None = None) -> bytes:
    history = pb.HistoryRecord()
    if step is not None:
        history.step.num = step
    for item in items:
        history.item.add(**item)
    return pb.Record(num=num, history=history).SerializeToString()


def summary_payload(num: int, update: list[dict] = (), remove: list[dict] = ()) -> bytes:
    summary = pb.SummaryRecord()
    for item in update:
        summary.update.add(**item)
    for item in remove:
        summary.remove.add(**item)
    return pb.Record(num=num, summary=summary).SerializeToString()


# ---------------------------------------------------------------- peek


def test_peek_agrees_with_a_full_parse_on_every_record_the_sdk_wrote(basic_run):
    peeked = 0
    for _, payload in records_of(basic_run.wandb_path):
        record = pb.Record.FromString(payload)
        kind = record.WhichOneof("record_type")
        found = bulk.peek(payload)
        if kind in ("history", "stats"):
            assert found is not None, kind
        if found is not None:
            peeked += 1
            assert found[:2] == (record.num, kind)
            assert payload[found[2]] == (record.DESCRIPTOR.fields_by_name[kind].number << 3 | 2)
    assert peeked > 2 * basic_run.steps  # the rows and the summary updates that go with them


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\x08",
        pb.Record(history=pb.HistoryRecord()).SerializeToString(),  # num 0 is not written: no num first
        pb.Record(num=5, run=pb.RunRecord(run_id="x")).SerializeToString(),  # field 17: a two-byte tag
        history_payload(5, [{"nested_key": ["a"], "value_json": "1"}]) + b"\x08\x01",  # a field after the kind's
        history_payload(5, [{"nested_key": ["a"], "value_json": "1"}])[:-1],  # cut short
        b"\x08\x05\x12\x7f" + b"x" * 3,  # a length that runs past the end
        b"\x08" + b"\xff" * 9 + b"\x01\x12\x00",  # a num too long for the fast read
        b"\x10\x05\x12\x00",  # another field first
    ],
)
def test_peek_leaves_anything_unusual_to_the_parser(payload):
    assert bulk.peek(payload) is None


def test_peek_reads_long_numbers_and_lengths():
    big = pb.Record(num=2**40 + 3, history=pb.HistoryRecord(step=pb.HistoryStep(num=1)))
    big.history.item.add(nested_key=["k"], value_json="x" * 20000)
    payload = big.SerializeToString()
    assert bulk.peek(payload)[:2] == (2**40 + 3, "history")


# ---------------------------------------------------------------- history


ODD_ROWS = [
    [{"nested_key": ["a"], "value_json": "1"}, {"nested_key": ["_step"], "value_json": "4"}],
    [{"key": "flat", "value_json": "1"}, {"nested_key": ["b"], "value_json": "2"}],  # key and nested_key mixed
    [{"nested_key": ["eval", "loss"], "value_json": "0.5"}, {"nested_key": ["x"], "value_json": "1"}],
    [{"nested_key": ["img", "_type"], "value_json": '"image-file"'}, {"nested_key": ["img", "width"], "value_json": "28"}],
    [{"nested_key": ["s"], "value_json": '"text"'}, {"nested_key": ["n"], "value_json": "2"}],  # a string
    [{"nested_key": ["o"], "value_json": '{"a": 1, "b": {"c": 2}}'}],  # an object
    [{"nested_key": ["t"], "number": 2.5}, {"nested_key": ["u"], "value_json": "3"}],  # a typed value
    [{"nested_key": ["d"], "value_json": "1"}, {"nested_key": ["d"], "value_json": "2"}],  # the same name twice
    [{"nested_key": ["_step"], "value_json": "NaN"}, {"nested_key": ["v"], "value_json": "Infinity"}],
    [{"nested_key": ["_timestamp"], "value_json": "1.7e9"}, {"nested_key": ["_runtime"], "value_json": "3"}],
    [{"nested_key": ["w"], "value_json": "-Infinity"}, {"nested_key": ["z"], "value_json": " 1_0 "}],
    [],
]


@pytest.mark.parametrize("items", ODD_ROWS)
def test_history_rows_match_the_per_item_decode(items):
    payload = history_payload(11, items, step=9)
    (item,), _ = feed(payload)
    assert item.kind == "history" and item.num == 11
    assert same_row(item.event, history_event(parse(payload).history))


def test_history_rows_of_a_real_run_match_the_per_item_decode(basic_run):
    rows = 0
    for _, payload in records_of(basic_run.wandb_path):
        record = parse(payload)
        if record.WhichOneof("record_type") != "history":
            continue
        (item,), _ = feed(payload)
        assert same_row(item.event, history_event(record.history))
        rows += 1
    assert rows == basic_run.steps


@pytest.mark.parametrize("made", ["basic_run", "hostile_run"])
def test_every_record_the_sdk_wrote_decodes_as_the_per_item_path_decodes_it(made, request):
    path = request.getfixturevalue(made).wandb_path
    with EventReader(path) as reader:
        fast = reader.poll().items
    slow = [(offset, *to_event(parse(payload))) for offset, payload in records_of(path)]
    assert len(fast) == len(slow)
    for item, (offset, kind, event) in zip(fast, slow):
        assert (item.offset, item.kind) == (offset, kind)
        assert same_row(item.event, event) if kind == "history" else item.event == event


def test_a_history_record_that_does_not_parse_is_lost_not_guessed():
    good = history_payload(3, [{"nested_key": ["a"], "value_json": "1"}])
    bad = good.replace(b"\x12\x01a", b"\x12\x01\xff")  # the name is no longer UTF-8
    assert bulk.peek(bad) is not None and parse(bad) is None
    (item,), stream = feed(bad)
    assert item.kind == "loss" and stream.undecodable == 1


# ---------------------------------------------------------------- summary


def test_lazy_summaries_match_the_per_item_decode(basic_run):
    for _, payload in records_of(basic_run.wandb_path):
        record = parse(payload)
        if record.WhichOneof("record_type") != "summary":
            continue
        (item,), _ = feed(payload, lazy_summary=True)
        assert item.event == raw_summary_event(record.summary)
        assert all(type(value) is RawJSON for value in item.event.update.values())


def folded_by_hand(payloads) -> dict:
    model = RunModel()
    for payload in payloads:
        model.apply(raw_summary_event(parse(payload).summary))
    return model.summary


def test_folded_summaries_leave_the_summary_a_record_by_record_fold_leaves():
    payloads = [
        summary_payload(1, [{"nested_key": ["a"], "value_json": "1"}, {"nested_key": ["b"], "value_json": "2"}]),
        summary_payload(2, [{"nested_key": ["_wandb", "runtime"], "value_json": "3"}, {"key": "_runtime", "value_json": "3"}]),
        summary_payload(3, [{"nested_key": ["a"], "value_json": "4"}, {"nested_key": ["c", "d"], "value_json": "5"}]),
        summary_payload(4, remove=[{"nested_key": ["c"]}]),
        summary_payload(5, [{"nested_key": ["c", "e"], "value_json": "6"}, {"nested_key": ["b"], "value_json": '"x"'}]),
        summary_payload(6, [{"nested_key": ["_wandb", "runtime"], "value_json": "3"}, {"key": "_runtime", "value_json": "3"}]),
    ]
    items, stream = feed(*payloads, fold_summary=True)
    model = RunModel()
    for item in items:
        model.apply(item.event)
    assert model.summary == folded_by_hand(payloads)
    assert list(model.summary) == list(folded_by_hand(payloads))
    assert len(items) + stream.folded == len(payloads) == stream.records
    assert all(type(value) is RawJSON for value in model.summary.values())


def test_a_real_run_folded_per_poll_ends_with_the_same_summary(basic_run):
    summaries = [p for _, p in records_of(basic_run.wandb_path) if parse(p).WhichOneof("record_type") == "summary"]
    with EventReader(basic_run.wandb_path, fold_summary=True) as reader:
        model = RunModel()
        counted = 0
        while True:
            batch = reader.poll(50)
            for item in batch.items:
                model.apply(item.event)
            counted += len(batch.items) + batch.folded
            if batch.at_eof:
                break
        assert counted == reader.records
    assert model.summary == folded_by_hand(summaries)


def read_all(reader: EventReader, limit: int = 100) -> list:
    items = []
    while True:
        batch = reader.poll(limit)
        items += batch.items
        if batch.at_eof or reader.stopped_at is not None:
            return items


def offsets_and_events(items) -> list:
    return [(item.offset, item.kind, repr(item.event)) for item in items]


@pytest.mark.parametrize("block", [1, 2])
def test_a_reader_stopped_at_a_block_and_resumed_reads_every_record_once(basic_run, block):
    path = basic_run.wandb_path
    with EventReader(path) as whole:
        everything = read_all(whole)
        total = whole.records
    with EventReader(path) as reader:
        reader.stop_before(block * BLOCK_SIZE)
        before = read_all(reader)
        stop = reader.stopped_at
        assert stop == min(offset for offset, _ in records_of(path) if offset >= block * BLOCK_SIZE)
        assert all(item.offset < stop for item in before)
        reader.resume(stop)
        after = read_all(reader)
        assert reader.records == total
    assert offsets_and_events(before + after) == offsets_and_events(everything)


def test_a_loss_just_before_the_stop_is_counted_from_the_record_there(corrupted_run):
    path = corrupted_run.wandb_path
    with EventReader(path) as whole:
        read_all(whole)
        lost = (whole.lost_records, whole.lost_bytes, whole.uncounted_losses)
    assert lost[0] > 0
    with EventReader(path) as reader:
        reader.stop_before(2 * BLOCK_SIZE)  # the damage runs to the end of block 1
        read_all(reader)
        reader.resume(reader.stopped_at, reader.last_num)
        read_all(reader)
        assert (reader.lost_records, reader.lost_bytes, reader.uncounted_losses) == lost


def test_skipped_kinds_are_counted_without_being_decoded(basic_run):
    with EventReader(basic_run.wandb_path) as reader:
        everything = reader.poll().items
    with EventReader(basic_run.wandb_path, skip={"history", "summary"}) as reader:
        items = reader.poll().items
        assert reader.records == len(everything)
    assert [i.offset for i in items] == [i.offset for i in everything if i.kind not in ("history", "summary")]
