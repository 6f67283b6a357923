"""Record layer: protobuf payloads into events, on messages built here and on real SDK runs."""

from __future__ import annotations

import math
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode import (
    EventReader,
    decode,
    flatten,
    iter_decoded,
    iter_events,
    json_value,
)
from leet.runfile.events import (
    ConfigUpdate,
    ConsoleOutput,
    DataLoss,
    Environment,
    HistoryRow,
    MetricDefinition,
    OtherRecord,
    RunExit,
    RunInfo,
    StatsRow,
    SummaryUpdate,
)
from leet.runfile.reader import BLOCK_SIZE, read_records

STEPS = 300

# Shared by the SDK script and the assertions, so both sides agree on what was logged.
ROW_SOURCE = """
def row(i):
    special = [float("nan"), float("inf"), float("-inf")]
    values = {
        "loss": 1.0 / (i + 1),
        "acc": i / 300,
        "nested": {"b": {"c": i * 2}},
        "weird": special[i % 3] if i % 50 < 3 else i,
        "note": "text",
        "flag": True,
    }
    if i % 10 == 0:
        values["val/loss"] = 2.0 / (i + 1)
        values["epoch"] = i // 10
    return values
"""

SCRIPT = ROW_SOURCE + textwrap.dedent(
    """
    import sys
    import wandb

    run = wandb.init(project="leet-records", name="records-run", config={"lr": 0.001, "model": {"layers": 4, "act": "relu"}})
    run.define_metric("epoch")
    run.define_metric("val/*", step_metric="epoch")
    for i in range(300):
        values = row(i)
        if i == 5:
            values["hist"] = wandb.Histogram([1, 2, 2, 3])
        run.log(values)
        if i % 100 == 0:
            print(f"step {i} done")
    print("progress", end="", flush=True)
    for k in range(3):
        print(f"\\rbar {k}/2", end="", flush=True)
    print()
    print("bad \\x1b[31mred\\x1b[0m text", file=sys.stderr)
    run.config.update({"late": 5})
    run.summary["best"] = 0.5
    run.finish()
    """
)


def row(i: int) -> dict:
    namespace: dict = {}
    exec(ROW_SOURCE, namespace)
    return namespace["row"](i)


def expected_values(i: int) -> dict[str, float]:
    values = row(i)
    expected = {key: float(value) for key, value in values.items() if isinstance(value, (int, float)) and not isinstance(value, bool)}
    expected["nested.b.c"] = float(values["nested"]["b"]["c"])
    return expected


def make_sdk_run(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(root), "WANDB_SILENT": "true", "WANDB_CONSOLE": "wrap"}
    script = root / "log_run.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (path,) = root.glob("wandb/offline-run-*/run-*.wandb")
    return path


@pytest.fixture(scope="session")
def sdk_run(tmp_path_factory) -> Path:
    return make_sdk_run(tmp_path_factory.mktemp("sdk") / "root")


@pytest.fixture(scope="session")
def sdk_events(sdk_run):
    return list(iter_decoded(sdk_run))


def texts(items) -> list[str]:
    """Items as comparable text: NaN never equals itself, but its repr does."""
    return [repr(item) for item in items]


def same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


# ---------------------------------------------------------------- real SDK files


def test_history_values_are_what_was_logged(sdk_events):
    rows = [item.event for item in sdk_events if isinstance(item.event, HistoryRow)]
    assert [r.step for r in rows] == list(range(STEPS))
    for r in rows:
        want = expected_values(r.step)
        assert set(r.values) == set(want), r.step
        assert all(same(r.values[key], want[key]) for key in want), r.step
        assert r.timestamp > 1.6e9 and r.runtime >= 0
    assert math.isnan(rows[0].values["weird"]) and rows[1].values["weird"] == math.inf and rows[2].values["weird"] == -math.inf
    assert not any(key.startswith("hist") for key in rows[5].values)
    assert "note" not in rows[5].values and "flag" not in rows[5].values


def test_run_identity_config_summary_and_exit(sdk_events):
    kinds = [item.kind for item in sdk_events]
    assert kinds[0] == "header" and kinds[1] == "run" and kinds[-1] == "exit"
    info = sdk_events[1].event
    assert isinstance(info, RunInfo)
    assert info.project == "leet-records" and info.display_name == "records-run" and len(info.run_id) == 8
    assert info.config == {"lr": 0.001, "model": {"layers": 4, "act": "relu"}}
    assert info.start_time > 1.6e9
    updates = [item.event for item in sdk_events if isinstance(item.event, ConfigUpdate)]
    assert {"late": 5} in [dict(update.update) for update in updates]
    summary: dict = {}
    for item in sdk_events:
        if isinstance(item.event, SummaryUpdate):
            summary.update(item.event.update)
    assert summary["best"] == 0.5 and summary["_step"] == STEPS - 1 and summary["note"] == "text"
    assert summary["nested.b.c"] == 2 * (STEPS - 1) and summary["hist._type"] == "histogram"
    assert sdk_events[-1].event == RunExit(exit_code=0, runtime=sdk_events[-1].event.runtime)


def test_console_environment_stats_and_metric_definitions(sdk_events):
    console = [item.event for item in sdk_events if isinstance(item.event, ConsoleOutput)]
    stdout = "".join(event.text for event in console if event.stream == "stdout")
    assert "step 0 done\n" in stdout and "step 200 done" in stdout and "\rbar 2/2" in stdout
    assert "bad \x1b[31mred\x1b[0m text" in "".join(event.text for event in console if event.stream == "stderr")
    environments = [item.event for item in sdk_events if isinstance(item.event, Environment)]
    assert environments and environments[0].fields["python"].startswith("CPython") and environments[0].writer_id
    assert any("cpu_count" in env.fields for env in environments)
    stats = [item.event for item in sdk_events if isinstance(item.event, StatsRow)]
    assert stats and all(isinstance(value, float) for value in stats[0].values.values()) and stats[0].timestamp > 1.6e9
    metrics = [item.event for item in sdk_events if isinstance(item.event, MetricDefinition)]
    assert MetricDefinition(glob_name="val/*", step_metric="epoch", step_sync=True) in metrics, "step_sync is the SDK default with a step metric"
    header = sdk_events[0].event
    assert isinstance(header, OtherRecord) and header.fields["version_info"]["producer"].startswith("0.")


def test_record_numbers_count_up_without_gaps(sdk_events):
    assert [item.num for item in sdk_events] == list(range(1, len(sdk_events) + 1))


def test_iter_events_and_tailing_agree_with_a_whole_read(sdk_run, sdk_events):
    assert texts(iter_events(sdk_run)) == texts(item.event for item in sdk_events)
    with EventReader(sdk_run) as reader:
        polled = []
        while True:
            batch = reader.poll(max_records=50)
            polled += batch.items
            if batch.at_eof:
                break
    assert texts(polled) == texts(sdk_events)
    with EventReader(sdk_run, history_values=False) as reader:
        steps = [item.event for item in reader.poll().items if item.kind == "history"]
    assert [row.step for row in steps] == list(range(STEPS)) and not any(row.values for row in steps)
    skipping = list(iter_events(sdk_run, skip={"summary", "stats"}))
    assert not any(isinstance(event, (SummaryUpdate, StatsRow)) for event in skipping)
    assert len(skipping) == len([i for i in sdk_events if i.kind not in ("summary", "stats")])


def test_one_flipped_byte_in_block_one_loses_only_that_blocks_records(sdk_run, sdk_events, tmp_path):
    data = bytearray(sdk_run.read_bytes())
    assert len(data) > 3 * BLOCK_SIZE
    target = next(offset for offset, _ in read_records(sdk_run).records if offset > BLOCK_SIZE + 4000)
    data[target + 30] ^= 0x55
    damaged = tmp_path / sdk_run.name
    damaged.write_bytes(data)

    items = list(iter_decoded(damaged))
    losses = [item.event for item in items if isinstance(item.event, DataLoss)]
    assert len(losses) == 1 and losses[0].offset == target and losses[0].reason == "checksum mismatch"
    kept = texts(item for item in items if item.kind != "loss")
    missing = [item for item in sdk_events if repr(item) not in kept]
    assert missing and all(BLOCK_SIZE <= item.offset < 2 * BLOCK_SIZE for item in missing)
    assert [item.num for item in missing] == list(range(missing[0].num, missing[-1].num + 1))
    assert losses[0].lost_records == len(missing)
    assert kept == texts(item for item in sdk_events if item not in missing)
    assert items[-1].kind == "exit"


def test_a_record_that_does_not_parse_is_counted_not_raised(sdk_run, sdk_events, tmp_path):
    data = bytearray(sdk_run.read_bytes())
    victim = next(item for item in sdk_events if item.kind == "history" and item.offset > 2 * BLOCK_SIZE)
    length = struct.unpack_from("<H", data, victim.offset + 4)[0]
    garbage = b"\xff" * length
    data[victim.offset : victim.offset + 7 + length] = struct.pack("<IHB", zlib.crc32(b"\x01" + garbage), length, 1) + garbage
    broken = tmp_path / sdk_run.name
    broken.write_bytes(data)
    with EventReader(broken) as reader:
        items = reader.poll().items
        assert reader.undecodable == 1 and reader.lost_records == 1
    (loss,) = [item for item in items if item.kind == "loss"]
    assert loss.offset == victim.offset and loss.event.lost_records == 1
    assert texts(item for item in items if item.kind != "loss") == texts(item for item in sdk_events if item is not victim)


def test_reading_a_live_copy_chunk_by_chunk_sees_every_record_once(sdk_run, sdk_events, tmp_path):
    data = sdk_run.read_bytes()
    live = tmp_path / "run-live.wandb"
    live.write_bytes(b"")
    seen = []
    with EventReader(live) as reader:
        for cut in list(range(0, len(data), 9001)) + [len(data)]:
            with open(live, "ab") as grow:
                grow.write(data[os.path.getsize(live) : cut])
            seen += reader.poll().items
    assert texts(seen) == texts(sdk_events)


# ---------------------------------------------------------------- single messages


def payload(**fields) -> bytes:
    return pb.Record(num=3, **fields).SerializeToString()


def test_history_items_flat_keys_nested_json_and_typed_values():
    history = pb.HistoryRecord(step=pb.HistoryStep(num=9))
    history.item.add(key="flat/key", value_json="1.5e+00")
    history.item.add(key="obj", value_json='{"a": {"b": 2, "s": "x"}, "img": {"_type": "image-file"}, "t": true}')
    history.item.add(nested_key=["deep", "er"], value_json="-Infinity")
    history.item.add(key="typed", number=2.5)
    history.item.add(key="typed_int", integer=-4)
    history.item.add(key="list", value_json="[1, 2]")
    history.item.add(key="null", value_json="null")
    history.item.add(nested_key=["img", "_type"], value_json='"image-file"')
    history.item.add(nested_key=["img", "width"], value_json="28")
    event = decode(payload(history=history))
    assert event == HistoryRow(
        step=9,
        values={"flat/key": 1.5, "obj.a.b": 2.0, "deep.er": -math.inf, "typed": 2.5, "typed_int": -4.0},
        media=(("img", "image-file"),),  # named, not charted
    )


def test_history_names_media_logged_whole_or_split_into_paths():
    history = pb.HistoryRecord(step=pb.HistoryStep(num=2))
    history.item.add(nested_key=["preds", "nrows"], value_json="10")
    history.item.add(nested_key=["preds", "_type"], value_json='"table-file"')
    history.item.add(key="hist", value_json='{"_type": "histogram", "values": [1, 2], "bins": [0, 1, 2]}')
    history.item.add(key="loss", value_json="0.5")
    event = decode(payload(history=history))
    assert event.values == {"loss": 0.5}
    assert dict(event.media) == {"preds": "table-file", "hist": "histogram"}


def test_stats_keep_labels_and_skip_non_numbers():
    stats = pb.StatsRecord()
    stats.timestamp.seconds, stats.timestamp.nanos = 1700000000, 500000000
    stats.item.add(key="gpu.0.temp/l:rank1", value_json="41")
    stats.item.add(key="cpu/l:rank1", value_json="NaN")
    stats.item.add(key="odd", value_json='"text"')
    event = decode(payload(stats=stats))
    assert event.timestamp == 1700000000.5
    assert set(event.values) == {"gpu.0.temp/l:rank1", "cpu/l:rank1"} and math.isnan(event.values["cpu/l:rank1"])


def test_summary_and_config_updates_and_removals():
    summary = pb.SummaryRecord()
    summary.update.add(nested_key=["a", "b"], value_json='{"max": 0.6}')
    summary.update.add(key="s", value_json='"hi"')
    summary.remove.add(nested_key=["old", "x"])
    assert decode(payload(summary=summary)) == SummaryUpdate(update={"a.b": {"max": 0.6}, "s": "hi"}, remove=("old.x",))
    config = pb.ConfigRecord()
    config.update.add(key="_wandb", value_json="{}")
    config.update.add(key="opt", value_json='{"lr": 0.1}')
    config.remove.add(key="gone")
    assert decode(payload(config=config)) == ConfigUpdate(update={"opt": {"lr": 0.1}}, remove=("gone",))


def test_console_records_old_and_new_and_exit():
    raw = pb.OutputRawRecord(output_type=pb.OutputRawRecord.STDOUT, line="\rhi")
    assert decode(payload(output_raw=raw)) == ConsoleOutput(stream="stdout", text="\rhi")
    old = pb.OutputRecord(line="line\n")  # stderr is the default, absent on the wire
    assert decode(payload(output=old)) == ConsoleOutput(stream="stderr", text="line\n")
    assert decode(payload(exit=pb.RunExitRecord(exit_code=3, runtime=12))) == RunExit(exit_code=3, runtime=12.0)


def test_unknown_and_opaque_records_are_named_not_dropped():
    future = pb.Record(num=4).SerializeToString() + b"\xe2\x01\x00"  # field 28: a record kind from a newer SDK
    assert decode(future) == OtherRecord("unknown")
    assert decode(payload(artifact=b"\x0a\x03abc")) == OtherRecord("artifact", {"size": 5})
    assert decode(payload(files=pb.FilesRecord(files=[pb.FilesItem(path="a.txt")]))) == OtherRecord("files", {"files": [{"path": "a.txt"}]})


def test_garbage_payload_decodes_to_none():
    assert decode(b"\xff\xff\xff\xff") is None


def test_json_values_accept_the_writers_literals():
    assert math.isnan(json_value("NaN")) and json_value("-Infinity") == -math.inf
    assert json_value("3") == 3 and json_value('"x"') == "x" and json_value("") is None
    assert json_value("not json") == "not json"
    assert flatten({"a": {"b": {"c": 1}}, "d": 2, "e": {}}) == {"a.b.c": 1, "d": 2, "e": {}}


def test_a_reader_that_skips_history_steps_over_it_and_keeps_the_rest(sdk_run, sdk_events):
    """A shared run's secondary writers are read this way: history and summary passed over unread."""
    with EventReader(sdk_run, skip=("history", "summary")) as reader:
        items = []
        while True:
            batch = reader.poll(max_records=50)
            items += batch.items
            if batch.at_eof:
                break
        skipped = reader._records.skipped
    assert texts(item.event for item in items) == texts(i.event for i in sdk_events if i.kind not in ("history", "summary"))
    assert skipped >= STEPS, "the history records were stepped over in the framing, not decoded"


def test_skipping_history_still_reports_damage_in_what_is_kept(sdk_run, sdk_events, tmp_path):
    kept = [item for item in sdk_events if item.kind not in ("history", "summary")]
    target = next(item for item in kept if item.offset > BLOCK_SIZE)
    data = bytearray(sdk_run.read_bytes())
    data[target.offset + 12] ^= 0x55
    damaged = tmp_path / sdk_run.name
    damaged.write_bytes(data)
    items = list(EventReader(damaged, skip=("history", "summary"), live=False).poll().items)
    losses = [item.event for item in items if isinstance(item.event, DataLoss)]
    assert len(losses) == 1 and losses[0].reason == "checksum mismatch"
    before = [item for item in kept if item.offset < target.offset]
    assert texts(item.event for item in items[: len(before)]) == texts(item.event for item in before)
