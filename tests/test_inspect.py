"""``leet inspect``: record lines, JSON, the run summary, following a growing file, hostile text."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from leet.commands import inspect_run as inspect
from leet.commands.inspect_run import idle_timeout
from leet.model.run import Console
from leet.runfile.locate import find_run_file
from leet.runfile.reader import BLOCK_SIZE, RunFileError, read_records

REPO = Path(__file__).resolve().parent.parent
STEPS = 400
HOSTILE_KEY = "evil\x1b[2J\u202ekey"
HOSTILE_NAME = "name\x1b]0;pwned\x07\x9b31m"

SCRIPT = textwrap.dedent(
    """
    import sys
    import wandb

    run = wandb.init(project="leet-inspect", name=%(name)r, config={"lr": 0.01, "model": {"layers": 4}, %(key)r: 1})
    for i in range(%(steps)d):
        run.log({"loss": 1.0 / (i + 1), "weird": float("nan"), %(key)r: i, "img": {"_type": "image-file", "width": 28}})
        if i %% 40 == 0:
            print(f"step {i}")
    for k in range(3):
        print(f"\\rbar {k}/2", end="", flush=True)
    print()
    print("osc \\x1b]0;title\\x07 c1 \\x9b31m bidi \\u202e end", file=sys.stderr)
    run.config.update({"late": 5})
    run.summary["best"] = 0.5
    run.finish()

    failed = wandb.init(project="leet-inspect-failed")
    failed.log({"x": 1})
    failed.finish(exit_code=3)
    """
) % {"name": HOSTILE_NAME, "key": HOSTILE_KEY, "steps": STEPS}

UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inspect-runs")
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(root), "WANDB_SILENT": "true", "WANDB_CONSOLE": "wrap"}
    (root / "make.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(root / "make.py")], env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    files = sorted(root.glob("wandb/offline-run-*/run-*.wandb"), key=lambda path: path.stat().st_mtime)
    assert len(files) == 2
    return {"finished": files[0], "failed": files[1]}


def inspect_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="leet inspect")
    inspect.add_arguments(parser)
    return parser.parse_args(list(argv))


def run_inspect(capsys, *argv: str) -> tuple[int, str, str]:
    status = inspect.run(inspect_args(*map(str, argv)))
    out, err = capsys.readouterr()
    return status, out, err


def strict_json(line: str):
    def refuse(name: str):
        raise ValueError(f"non-standard JSON literal {name}")

    return json.loads(line, parse_constant=refuse)


def test_one_line_per_record_with_a_short_hint(runs, capsys):
    status, out, _ = run_inspect(capsys, runs["finished"])
    lines = out.splitlines()
    assert status == 0
    assert len(lines) == len(read_records(runs["finished"]).records)
    assert re.search(r"^\s+\d+  history\s+step 12 \(3 values\)$", out, re.MULTILINE)  # loss, key, image dropped, NaN kept
    assert re.search(r"exit\s+exit code 0", lines[-1])


def test_json_lines_are_strict_json_with_nan_as_text(runs, capsys):
    status, out, _ = run_inspect(capsys, runs["finished"], "--json")
    objects = [strict_json(line) for line in out.splitlines()]
    assert status == 0 and objects[0]["type"] == "header" and objects[-1]["type"] == "exit"
    history = [obj for obj in objects if obj["type"] == "history"]
    assert history[7]["step"] == 7 and history[7]["values"]["weird"] == "NaN" and history[7]["values"][HOSTILE_KEY] == 7
    assert all(isinstance(obj["offset"], int) and obj["num"] == index + 1 for index, obj in enumerate(objects))
    assert not UNSAFE.search(out) and out.isascii()  # escaped by JSON, so inert in a terminal
    run = next(obj for obj in objects if obj["type"] == "run")
    assert run["display_name"] == HOSTILE_NAME


def test_hostile_text_is_shown_escaped(runs, capsys):
    for argv in ((runs["finished"],), (runs["finished"], "--summary")):
        _, out, _ = run_inspect(capsys, *argv)
        assert not UNSAFE.search(out)
        assert "\\x1b]0;pwned\\x07\\x9b31m" in out
    assert "osc \\x1b]0;title\\x07 c1 \\x9b31m bidi \\u202e end" in out


def test_summary_of_a_finished_run(runs, capsys):
    status, out, _ = run_inspect(capsys, runs["finished"], "--summary")
    assert status == 0
    assert "state      finished, runtime" in out
    assert f"last step  {STEPS - 1} ({STEPS} history rows)" in out
    assert "lost data  none" in out
    for line in ("  model.layers = 4", "  late = 5", "  lr = 0.01", "  best = 0.5", "  img = image", f"  loss = {1 / STEPS:.6g}"):
        assert line in out.splitlines(), line
    # Media by kind (not a dict), the time as a local time, the runtime as a duration.
    assert re.search(r"^  _timestamp = \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", out, re.MULTILINE), out
    assert re.search(r"^  _runtime = \d+(\.\d)?s$", out, re.MULTILINE), out
    assert "_type" not in out and "img.width" not in out
    console = out.split("console")[1]
    assert "step 80" in console and "bar 2/2" in console and "bar 0/2" not in console


def test_summary_as_json(runs, capsys):
    _, out, _ = run_inspect(capsys, runs["finished"], "--summary", "--json")
    report = strict_json(out)
    assert report["state"] == "finished" and report["exit_code"] == 0 and report["last_step"] == STEPS - 1
    assert report["state_text"] == "finished" and "exit record" in report["reason"] and report["last_write_age_s"] >= 0
    assert report["config"]["model.layers"] == 4 and report["summary"]["best"] == 0.5 and report["summary"]["weird"] == "NaN"
    assert report["name"] == HOSTILE_NAME and report["lost"]["bytes"] == 0
    assert report["console_tail"][-1].startswith("osc ")


def test_summary_of_a_failed_run(runs, capsys):
    _, out, _ = run_inspect(capsys, runs["failed"].parent, "--summary")
    assert "state      failed (exit 3)" in out


def test_killed_writer_looks_crashed_with_an_unfinished_tail(runs, capsys, tmp_path):
    data = runs["finished"].read_bytes()
    cut = BLOCK_SIZE  # where a killed writer's file usually ends: a block boundary inside a record
    assert len(data) > cut and cut not in {offset for offset, _ in read_records(runs["finished"]).records}
    crashed = tmp_path / "run-crashed.wandb"
    crashed.write_bytes(data[:cut])
    an_hour_ago = time.time() - 3600
    os.utime(crashed, (an_hour_ago, an_hour_ago))
    _, out, _ = run_inspect(capsys, crashed, "--summary")
    assert "presumed crashed" in out and "no exit record, and no write for 1h00m (crash threshold 10m00s)" in out
    assert "unfinished record at the end" in out
    os.utime(crashed)
    _, out, _ = run_inspect(capsys, crashed, "--summary")
    assert "state      running" in out and "no exit record yet; last write" in out


def test_damage_is_reported_and_reading_goes_on(runs, capsys, tmp_path):
    data = bytearray(runs["finished"].read_bytes())
    target = next(offset for offset, _ in read_records(runs["finished"]).records if offset > BLOCK_SIZE // 2)
    data[target + 20] ^= 0x10
    damaged = tmp_path / "run-damaged.wandb"
    damaged.write_bytes(data)
    status, out, err = run_inspect(capsys, damaged, "--json")
    objects = [strict_json(line) for line in out.splitlines()]
    (loss,) = [obj for obj in objects if obj["type"] == "loss"]
    assert status == 0 and loss["offset"] == target and loss["lost_records"] > 0 and loss["reason"] == "checksum mismatch"
    assert objects[-1]["type"] == "exit"
    assert "skipped damaged data" in err
    _, out, _ = run_inspect(capsys, damaged, "--summary")
    assert f"damaged bytes skipped ({loss['lost_records']} records)" in out

    data = bytearray(runs["finished"].read_bytes())
    data[-60] ^= 0x10  # inside the exit record: nothing readable follows to count the loss
    damaged.write_bytes(data)
    _, out, _ = run_inspect(capsys, damaged, "--summary")
    assert "damaged bytes skipped (records lost: unknown)" in out


def test_paths_that_are_not_one_run_file_get_a_clear_message(runs, capsys, tmp_path):
    two = tmp_path / "two"
    two.mkdir()
    for name in ("run-a.wandb", "run-b.wandb"):
        shutil.copy(runs["failed"], two / name)
    cases = {
        two: "holds several run files (run-a.wandb, run-b.wandb)",
        tmp_path / "missing": "does not exist",
        REPO / "leet": "no run-*.wandb file in this directory",
        REPO / "pyproject.toml": "not a W&B run file",
    }
    for path, message in cases.items():
        status, out, err = run_inspect(capsys, path)
        assert status == 1 and out == "" and message in err, path


def python_inspect(*argv: str) -> list[str]:
    code = "import argparse, sys; from leet.commands import inspect_run as inspect; p = argparse.ArgumentParser(); inspect.add_arguments(p); status = inspect.run(p.parse_args(sys.argv[1:]))"
    return [sys.executable, "-c", code + "; assert 'textual' not in sys.modules; sys.exit(status)", *argv]


def test_inspect_runs_without_textual(runs):
    done = subprocess.run(python_inspect(str(runs["finished"]), "--summary"), cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr  # the command line asserts that textual was never imported
    assert "state      finished" in done.stdout


def test_a_reader_that_stops_early_is_not_an_error(runs):
    # Like `leet inspect … | head -1`: the next write fails with EPIPE.
    code = textwrap.dedent(
        """
        import argparse, io, os, sys
        from leet.commands import inspect_run as inspect

        class ClosedPipe(io.TextIOWrapper):
            def write(self, text):
                raise BrokenPipeError(32, "Broken pipe")

        sys.stdout = ClosedPipe(io.FileIO(os.pipe()[1], "w"))
        parser = argparse.ArgumentParser()
        inspect.add_arguments(parser)
        sys.exit(inspect.run(parser.parse_args(sys.argv[1:])))
        """
    )
    done = subprocess.run([sys.executable, "-c", code, str(runs["finished"]), "--json"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""


def test_follow_through_a_pipe_until_the_exit_record(runs, tmp_path):
    data = runs["finished"].read_bytes()
    live = tmp_path / "run-live.wandb"
    live.write_bytes(data[:5000])

    def grow() -> None:
        for cut in range(5000, len(data) + 9000, 9000):
            time.sleep(0.05)
            with open(live, "ab") as handle:
                handle.write(data[live.stat().st_size : cut])

    writer = threading.Thread(target=grow)
    process = subprocess.Popen(python_inspect(str(live), "--follow", "--json"), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writer.start()
    out, err = process.communicate(timeout=60)
    writer.join()
    assert process.returncode == 0, err
    objects = [strict_json(line) for line in out.splitlines()]
    assert len(objects) == len(read_records(runs["finished"]).records) and objects[-1]["type"] == "exit"


def test_follow_stops_after_the_idle_timeout(runs, tmp_path):
    quiet = tmp_path / "run-quiet.wandb"
    quiet.write_bytes(runs["finished"].read_bytes()[:BLOCK_SIZE])
    started = time.monotonic()
    done = subprocess.run(python_inspect(str(quiet), "--follow", "--idle-timeout", "0.4s"), cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and time.monotonic() - started < 30
    assert "no new data for 0.4s; stopped following" in done.stderr
    assert len(done.stdout.splitlines()) == len(read_records(quiet).records)


def test_console_tail_keeps_the_final_state_of_progress_bars():
    console = Console()
    for text in ("first\n", "prog", "\rbar 1", "", "\rbar 2", "\n", "win\r\n"):
        console.feed("stdout", text)
    console.feed("stderr", "half a line")
    console.feed("stdout", "tail\rdone")
    tail = console.tail(3)  # finished lines, then each stream's unfinished one
    assert tail[0] == "win" and sorted(tail[1:]) == ["done", "half a line"]
    assert Console().tail(5) == []
    many = Console()
    for index in range(100):
        many.feed("stdout", f"{index}\n")
    assert many.tail(2) == ["98", "99"]


def test_idle_timeout_durations():
    assert [idle_timeout(text) for text in ("30", "30s", "10m", "1h", "500ms", "0.5")] == [30, 30, 600, 3600, 0.5, 0.5]
    with pytest.raises(argparse.ArgumentTypeError):
        idle_timeout("soon")


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "run-x.wandb"
    os.mkfifo(fifo)
    with pytest.raises(RunFileError, match="not a regular file"):
        find_run_file(fifo)
    for command, status in ((["inspect", str(fifo)], 1), ([str(fifo)], 2)):  # inspect's own status for a bad path
        result = subprocess.run([sys.executable, "-m", "leet", *command], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert result.returncode == status and "not a regular file" in result.stderr, command
