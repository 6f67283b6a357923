"""``leet inspect --summary`` reads summaries lazily and reports exactly what a full decode of the file reports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from leet.commands import inspect_run as inspect
from leet.runfile.locate import find_run_file

SCRIPT = textwrap.dedent(
    """
    import os
    import sys
    import wandb

    kind = sys.argv[1]
    run = wandb.init(project="leet-fast", id="fastrun" + kind, resume="allow", config={"lr": 0.1, "model": {"layers": 2}})
    for i in range(300):
        run.log({"loss": 1.0 / (i + 1), "acc": i / 300, "nested": {"a": i, "b": [i, i + 1]}, "text": "s" * (i % 7)})
        if i % 50 == 0:
            run.summary["best"] = {"loss": 1.0 / (i + 1), "step": i}
            print(f"step {i}")
    run.summary["final"] = "done"
    run.summary.update({"acc": 2.0, "nan": float("nan")})
    if kind == "crashed":
        sys.stdout.flush()
        os._exit(1)
    run.finish()
    """
)


def _make_run(root: Path, kind: str) -> Path:
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(root), "WANDB_SILENT": "true", "WANDB_CONSOLE": "wrap"}
    script = root / "make_run.py"
    script.write_text(SCRIPT)
    subprocess.run([sys.executable, str(script), kind], env=env, check=True if kind != "crashed" else False, timeout=300, capture_output=True)
    files = sorted(root.glob("wandb/offline-run-*/run-*.wandb"), key=lambda path: path.stat().st_mtime)
    assert files, f"no run file for {kind}"
    return files[-1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    made: dict[str, Path] = {}
    for kind in ("finished", "crashed"):
        made[kind] = _make_run(tmp_path_factory.mktemp(f"fast-{kind}"), kind)
    resumed_root = tmp_path_factory.mktemp("fast-resumed")
    _make_run(resumed_root, "resumed")
    made["resumed"] = _make_run(resumed_root, "resumed")  # the same id again: a resumed run's second file
    damaged = tmp_path_factory.mktemp("fast-damaged") / made["finished"].name
    shutil.copy(made["finished"], damaged)
    data = bytearray(damaged.read_bytes())
    for at in range(len(data) // 3, len(data) // 3 + 4000, 97):
        data[at] ^= 0x5A
    damaged.write_bytes(bytes(data))
    made["damaged"] = damaged
    return made


def _report(path: Path, lazy: bool) -> dict:
    state, follower = inspect.read_state(find_run_file(path), follow=False, timeout=0.0, lazy_summary=lazy)
    report = inspect._summary_report(path, state, follower)
    for timed in ("last_write_age_s", "reason", "state_text"):  # they tell the age of the last write, which moves on
        report[timed] = None if timed == "last_write_age_s" else ""
    return report


@pytest.mark.parametrize("kind", ["finished", "crashed", "resumed", "damaged"])
def test_lazy_summary_reports_what_a_full_decode_reports(runs, kind):
    lazy, full = _report(runs[kind], True), _report(runs[kind], False)
    assert inspect.to_json(lazy) == inspect.to_json(full)
    assert inspect._summary_text(lazy) == inspect._summary_text(full)
    if kind != "crashed":  # a run killed before it finished may never have written its summary
        assert full["summary"]["final"] == "done"
        assert full["summary"]["best"] == {"loss": 1.0 / 251, "step": 250}
    if kind == "damaged":
        assert full["lost"]["bytes"] > 0


def test_the_summary_command_reads_summaries_lazily(runs, monkeypatch):
    opened: list[dict] = []
    real = inspect.EventReader

    def recording(*args, **kwargs):
        opened.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(inspect, "EventReader", recording)
    parser = inspect.argparse.ArgumentParser()
    inspect.add_arguments(parser)
    assert inspect.run(parser.parse_args([str(runs["finished"]), "--summary", "--json"])) == 0
    assert opened and all(kwargs.get("lazy_summary") for kwargs in opened)
