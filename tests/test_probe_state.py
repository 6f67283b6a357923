"""The runs list's state, from a run file's tail, is the state reading it whole gives: the run view's and ``leet inspect --summary``'s.

Older SDKs write a large final summary (histograms: 100 KB and more) after
the exit record, and telemetry or file lists may follow it: the probe steps
back over such records by their chunk headers to find the exit record.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from framer import Framer

from leet import cli
from leet.discovery.probe import probe
from leet.model.state import RunState
from leet.model.store import Store
from leet.runfile import wandb_records_pb2 as pb
from leet.sources.workspace import WorkspaceSource

VINTAGE = Path(__file__).resolve().parent / "fixtures" / "vintage"


def appended(file: Path, *sizes: int) -> None:
    """Records of ``sizes`` bytes after what ``file`` holds: a final summary, then file lists and telemetry as large."""
    framer = Framer()
    framer.data = bytearray(file.read_bytes())
    for n, size in enumerate(sizes):
        if n == 0:
            record = pb.Record(summary=pb.SummaryRecord(update=[pb.SummaryItem(key="histogram", value_json=json.dumps("x" * size))]))
        else:
            record = pb.Record(files=pb.FilesRecord(files=[pb.FilesItem(path="f" * size)]))
        framer.add(record.SerializeToString())
    file.write_bytes(bytes(framer.data))


def inspect_state(file: Path) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["inspect", str(file), "--summary", "--json"]) == 0
    return json.loads(out.getvalue())["state"]


def run_files(roots: list[Path]) -> list[Path]:
    return sorted(file for root in roots for file in root.rglob("run-*.wandb") if file.is_file())


@pytest.fixture(scope="module")
def every_run_file(tmp_path_factory, basic_run, console_run, failed_run, alert_run, killed_run, corrupted_run, hostile_run, shared_run) -> list[Path]:
    """Every vintage and SDK fixture, copied, and each again with large records after its end, written an hour ago."""
    folder = tmp_path_factory.mktemp("every")
    sources = run_files([VINTAGE]) + [made.wandb_path for made in (basic_run, console_run, failed_run, alert_run, killed_run, corrupted_run, hostile_run)]
    sources += [writer.wandb_path for writer in shared_run.writers]
    files = []
    for n, source in enumerate(sources):
        for tail, sizes in (("as-written", ()), ("one-large", (200_000,)), ("several-large", (150_000, 300_000, 100))):
            target = folder / f"{n}-{tail}" / source.name
            target.parent.mkdir()
            shutil.copyfile(source, target)
            if sizes and source.stat().st_size == 0:
                continue  # an empty file (its writer died at once) stays one
            if sizes:
                appended(target, *sizes)
            hour_ago = time.time() - 3600
            os.utime(target, (hour_ago, hour_ago))
            files.append(target)
    return files


def test_the_list_state_is_the_whole_files_state_for_every_fixture(every_run_file):
    assert len(every_run_file) > 60
    differ = []
    for file in every_run_file:
        listed = probe(file.parent.name, file, time.time()).state.code
        inspected = inspect_state(file)
        if listed != inspected:
            differ.append(f"{file.parent.name}/{file.name}: list {listed}, inspect {inspected}")
    assert differ == []


def test_a_finished_run_with_large_records_after_its_exit_is_listed_finished(basic_run, failed_run, tmp_path):
    for made, state, sizes in (
        (basic_run, RunState.FINISHED, (108_000,)),
        (failed_run, RunState.FAILED, (108_000,)),
        (basic_run, RunState.FINISHED, (108_000, 400_000, 50_000, 90)),
    ):
        folder = tmp_path / f"ws-{state.code}-{len(sizes)}"
        target = folder / made.run_dir.name / made.wandb_path.name
        target.parent.mkdir(parents=True)
        shutil.copyfile(made.wandb_path, target)
        appended(target, *sizes)
        hour_ago = time.time() - 3600
        os.utime(target, (hour_ago, hour_ago))
        source = WorkspaceSource(folder, Store())
        source.refresh()
        (entry,) = source.entries()
        assert entry.state is state, (sizes, entry.reason)


def test_the_step_back_is_bounded(basic_run, tmp_path):
    """Past 4 MiB of large records nothing is found: the run is judged as a run without an exit record."""
    target = tmp_path / "run" / basic_run.wandb_path.name
    target.parent.mkdir()
    shutil.copyfile(basic_run.wandb_path, target)
    appended(target, *[1_000_000] * 5)
    hour_ago = time.time() - 3600
    os.utime(target, (hour_ago, hour_ago))
    assert probe("run", target, time.time()).state is RunState.CRASHED


def test_an_exit_record_split_across_blocks_is_found_behind_large_records(tmp_path):
    """The exit record's first chunk ends one block and its last starts the next, then large records follow."""
    from framer import RunWriter

    writer = RunWriter("split", name="split-run")
    for step in range(3):
        writer.history(step, {"loss": 1.0})
    writer.fill_to(leave=12)  # the exit record (a few dozen bytes) cannot fit the 5 bytes of payload left
    writer.exit(code=3)
    assert writer.kinds[-2:] == [2, 4]  # FIRST, LAST
    file = writer.write(tmp_path / "run-split" / "run-split.wandb")
    appended(file, 150_000, 300_000)
    hour_ago = time.time() - 3600
    os.utime(file, (hour_ago, hour_ago))
    entry = probe("run-split", file, time.time())
    assert (entry.state, entry.exit_code) == (RunState.FAILED, 3)
