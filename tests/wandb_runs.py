"""Real W&B offline runs for tests, written by the real wandb SDK.

Every maker runs a short script with ``wandb.init(mode="offline")`` in a
subprocess (no network, nothing from the user's W&B settings) and returns
where the run landed and what the script logged, so a test can hold a
reader's output against the truth. ``root`` is the writer's ``WANDB_DIR``:
runs land in ``root / "wandb" / "offline-run-<time>-<id>[-N]"``.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import psutil

BLOCK_SIZE = 32768
FILE_HEADER = b":W&B\xe1\xbe\x00"
CHUNK_HEADER_SIZE = 7
STATS_INTERVAL = 0.2
"""Seconds between system-metric samples, so even a short run has stats."""
SCRIPT_TIMEOUT = 90.0

KeyPath = tuple[str, ...]
Action = tuple[str, Any]


class RunMakerError(RuntimeError):
    """The SDK script did not produce the run it was asked for."""


# --- what the makers return -------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MadeRun:
    """One writer's run directory and what its script logged."""

    root: Path
    run_dir: Path
    wandb_path: Path
    run_id: str
    rows: tuple[dict, ...] = ()
    """Each ``run.log`` argument in order; ``rows[i]`` is step ``i``."""
    exit_code: int | None = 0
    """Code in the exit record; None when the writer died before writing one."""
    stdout_text: str = ""
    stderr_text: str = ""

    @property
    def steps(self) -> int:
        return len(self.rows)

    @property
    def keys(self) -> tuple[KeyPath, ...]:
        """History key paths (nested dicts give several names), first-seen order."""
        return logged_keys(self.rows)


@dataclass(frozen=True, kw_only=True)
class BasicRun(MadeRun):
    name: str
    notes: str
    tags: tuple[str, ...]
    group: str
    job_type: str
    config: dict
    summary: dict
    """Values set with ``run.summary.update`` after the last step."""
    nan_at: tuple[KeyPath, int]
    """(key path, step) whose logged value is NaN."""
    inf_at: tuple[KeyPath, int]
    """(key path, step) whose logged value is +inf."""


@dataclass(frozen=True, kw_only=True)
class HostileRun(MadeRun):
    name: str
    notes: str
    config: dict
    summary: dict
    texts: tuple[str, ...] = field(default_factory=lambda: HOSTILE_TEXTS)


@dataclass(frozen=True, kw_only=True)
class KilledRun(MadeRun):
    size_before_kill: int
    """File size seen just before the SIGKILL (the file cannot grow after)."""


@dataclass(frozen=True, kw_only=True)
class CorruptedRun(MadeRun):
    source: Path
    """The intact ``.wandb`` file this is a copy of."""
    offset: int
    """Absolute offset of the flipped byte."""
    original_byte: int


@dataclass(frozen=True, kw_only=True)
class SharedWriter:
    label: str
    primary: bool
    run_dir: Path
    wandb_path: Path
    stdout_text: str
    rows: tuple[dict, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SharedRun:
    """Several writer processes sharing one run id, one directory each."""

    root: Path
    run_id: str
    writers: tuple[SharedWriter, ...]
    """Sorted by label: rank0, rank1, ..."""

    @property
    def primary(self) -> SharedWriter:
        return next(writer for writer in self.writers if writer.primary)


def logged_keys(rows: Iterable[Mapping]) -> tuple[KeyPath, ...]:
    seen: dict[KeyPath, None] = {}
    for row in rows:
        for path in _key_paths(row, ()):
            seen.setdefault(path, None)
    return tuple(seen)


def _key_paths(row: Mapping, prefix: KeyPath) -> Iterable[KeyPath]:
    for key, value in row.items():
        if isinstance(value, Mapping):
            yield from _key_paths(value, prefix + (key,))
        else:
            yield prefix + (key,)


# --- the script each writer process runs ------------------------------------

_PRELUDE = r'''
import json, math, os, sys, time
import wandb

with open(sys.argv[1]) as params_file:
    PARAMS = json.load(params_file)


def start():
    settings = wandb.Settings(
        x_stats_sampling_interval=PARAMS["stats_interval"], **PARAMS["settings"]
    )
    run = wandb.init(
        project="leet-tests", id=PARAMS["run_id"], settings=settings, **PARAMS["init"]
    )
    where = {"run_dir": run.settings.sync_dir, "wandb_path": run.settings.sync_file}
    with open(PARAMS["report_path"] + ".part", "w") as report:
        json.dump(where, report)
    os.replace(PARAMS["report_path"] + ".part", PARAMS["report_path"])
    return run


def write(stream, text):
    stream.write(text)
    stream.flush()
'''

_SCRIPTED_BODY = r'''
run = start()
for action, arg in PARAMS["actions"]:
    if action == "log":
        run.log(arg)
    elif action == "stdout":
        write(sys.stdout, arg)
    elif action == "stderr":
        write(sys.stderr, arg)
    elif action == "summary":
        run.summary.update(arg)
    elif action == "sleep":
        time.sleep(arg)
    elif action == "define_metric":
        run.define_metric(**arg)
    elif action == "alert":
        run.alert(**arg)
run.finish(exit_code=PARAMS["exit_code"])
'''

_LOOP_BODY = r'''
run = start()
deadline = time.monotonic() + PARAMS["seconds"]
step = 0
while time.monotonic() < deadline and not os.path.exists(PARAMS["stop_path"]):
    run.log({"loss": 1.0 / (step + 1), "wall_time": time.time()})
    if step % PARAMS["print_every"] == 0:
        write(sys.stdout, f"step {step}\n")
    step += 1
    time.sleep(PARAMS["step_interval"])
run.finish()
'''


def _writer_env(scratch: Path, root: Path, console: str) -> dict[str, str]:
    """The parent's environment minus its W&B settings, offline and quiet."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("WANDB_")}
    env.update(
        WANDB_MODE="offline",
        WANDB_SILENT="true",
        WANDB_DIR=str(root),
        WANDB_CONSOLE=console,
        WANDB_ERROR_REPORTING="false",
        WANDB_CONFIG_DIR=str(scratch / "config"),
        WANDB_CACHE_DIR=str(scratch / "cache"),
        WANDB_DATA_DIR=str(scratch / "data"),
    )
    return env


@dataclass
class _Writer:
    """One SDK script started in the background."""

    process: subprocess.Popen
    report_path: Path
    stderr_path: Path

    def failure(self, what: str) -> RunMakerError:
        tail = self.stderr_path.read_text(errors="replace")[-2000:]
        return RunMakerError(f"{what} (exit status {self.process.poll()}):\n{tail}")

    def wait(self, timeout: float = SCRIPT_TIMEOUT) -> None:
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            kill_writer(self.process)
            raise self.failure(f"wandb script still running after {timeout:.0f} s") from None
        if status != 0:
            raise self.failure("wandb script failed")

    def wait_for_report(self, timeout: float = SCRIPT_TIMEOUT) -> dict:
        """Where the run lives, as soon as ``wandb.init`` has returned."""
        deadline = time.monotonic() + timeout
        while not self.report_path.exists():
            if self.process.poll() is not None:
                raise self.failure("wandb script ended before its run started")
            if time.monotonic() > deadline:
                kill_writer(self.process)
                raise self.failure(f"no run started within {timeout:.0f} s")
            time.sleep(0.05)
        return json.loads(self.report_path.read_text())


def _start_writer(
    body: str,
    params: dict,
    root: Path,
    scratch: Path,
    *,
    name: str = "writer",
    console: str = "wrap",
    new_session: bool = False,
) -> _Writer:
    root.mkdir(parents=True, exist_ok=True)
    report_path = scratch / f"{name}-report.json"
    params = {"stats_interval": STATS_INTERVAL, "settings": {}, "init": {}, **params}
    params["report_path"] = str(report_path)
    params_path = scratch / f"{name}-params.json"
    params_path.write_text(json.dumps(params))
    stderr_path = scratch / f"{name}-stderr.txt"
    with open(stderr_path, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", _PRELUDE + body, str(params_path)],
            env=_writer_env(scratch, root, console),
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=new_session,
        )
    return _Writer(process, report_path, stderr_path)


def kill_writer(process: subprocess.Popen) -> None:
    """SIGKILL a writer, its process group and its wandb-core service.

    wandb-core runs in a session of its own, so it is found among the
    writer's descendants before the writer dies and its children are orphaned.
    """
    try:
        family = psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    for member in family:
        try:
            member.kill()
        except psutil.NoSuchProcess:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()
    psutil.wait_procs(family, timeout=10)


def _write_run(body: str, params: dict, root: Path) -> dict:
    """Run one writer to its end; where it wrote (``run_dir``, ``wandb_path``)."""
    with tempfile.TemporaryDirectory(prefix="leet-wandb-") as scratch:
        writer = _start_writer(body, params, Path(root), Path(scratch))
        writer.wait()
        return writer.wait_for_report(timeout=0)


def _scripted_run(root: Path, run_id: str, actions: Sequence[Action], **params: Any) -> MadeRun:
    """Run the action list in one writer and return its run (rows and text filled)."""
    where = _write_run(_SCRIPTED_BODY, {"run_id": run_id, "actions": list(actions), "exit_code": 0, **params}, root)
    return MadeRun(
        root=Path(root),
        run_dir=Path(where["run_dir"]),
        wandb_path=Path(where["wandb_path"]),
        run_id=run_id,
        rows=_rows_of(actions),
        exit_code=params.get("exit_code", 0),
        stdout_text=_text_of(actions, "stdout"),
        stderr_text=_text_of(actions, "stderr"),
    )


def _rows_of(actions: Sequence[Action]) -> tuple[dict, ...]:
    return tuple(arg for action, arg in actions if action == "log")


def _text_of(actions: Sequence[Action], stream: str) -> str:
    return "".join(arg for action, arg in actions if action == stream)


def new_run_id(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(4)}"


def _settle() -> Action:
    """Keep the run open for a couple of stats samples."""
    return ("sleep", 2 * STATS_INTERVAL)


def _as(kind: type, made: MadeRun, **extra: Any) -> Any:
    fields = {name: getattr(made, name) for name in MadeRun.__dataclass_fields__}
    return kind(**fields, **extra)


# --- makers ------------------------------------------------------------------


def metric_value(index: int, step: int) -> float:
    """A smooth, full-precision curve per metric (full digits keep the file big)."""
    return math.exp(-step / (40.0 + 15.0 * index)) + 0.05 * math.sin(1.3 * step + index)


def basic_rows(steps: int, metrics: Sequence[str], eval_every: int = 20) -> list[dict]:
    """Rows of the basic run: every metric each step, ``eval.loss`` now and then,
    and a NaN and an inf in the first metric at steps//3 and 2*steps//3."""
    rows = []
    for step in range(steps):
        row: dict = {name: metric_value(i, step) for i, name in enumerate(metrics)}
        if step % eval_every == eval_every - 1:
            row["eval"] = {"loss": metric_value(len(metrics), step)}
        rows.append(row)
    rows[steps // 3][metrics[0]] = math.nan
    rows[2 * steps // 3][metrics[0]] = math.inf
    return rows


def make_basic_run(
    root: Path,
    steps: int = 200,
    metrics: Sequence[str] = ("loss", "acc", "lr"),
    *,
    run_id: str | None = None,
) -> BasicRun:
    """A finished run (exit 0) with config, metadata, NaN/inf and summary overrides.

    The default size (~3 blocks of 32 KiB) leaves a complete block 1 for
    ``make_corrupted_copy``.
    """
    if steps < 3 or not metrics:
        raise ValueError("the basic run needs at least 3 steps and one metric")
    run_id = run_id or new_run_id("basic")
    init = {
        "config": {"model": {"depth": 12, "width": 768}, "lr": 3e-4, "optimizer": "adamw"},
        "group": "sweep-a",
        "job_type": "train",
        "name": "basic-run",
        "notes": "a plain training run",
        "tags": ["baseline", "test"],
    }
    summary = {"best_acc": 0.875, metrics[0]: 0.125}
    rows = basic_rows(steps, metrics)
    actions = [*(("log", row) for row in rows), ("summary", summary), _settle()]
    made = _scripted_run(root, run_id, actions, init=init)
    first = (metrics[0],)
    return _as(
        BasicRun,
        made,
        name=init["name"],
        notes=init["notes"],
        tags=tuple(init["tags"]),
        group=init["group"],
        job_type=init["job_type"],
        config=init["config"],
        summary=summary,
        nan_at=(first, steps // 3),
        inf_at=(first, 2 * steps // 3),
    )


def console_actions() -> list[Action]:
    """Plain lines on both streams, a ``\\r`` progress bar, ANSI colours, a
    multi-line single write, interleaved with five logged steps."""
    actions: list[Action] = [
        ("stdout", "starting training\n"),
        ("stderr", "warning: using the CPU\n"),
        ("stdout", "\x1b[32mgreen ok\x1b[0m \x1b[1mbold\x1b[0m\n"),
        ("stderr", "\x1b[1;31mERROR\x1b[0m something red\n"),
    ]
    for done in range(0, 101, 20):
        bar = "█" * (done // 10)
        actions.append(("stdout", f"\rEpoch 0: {done:3d}%|{bar:<10}| {done}/100"))
    actions.append(("stdout", "\n"))
    for step in range(5):
        loss = 1.0 / (step + 1)
        actions += [("log", {"loss": loss}), ("stdout", f"step {step} loss {loss:.3f}\n")]
    actions += [("stdout", "A\nB\nC\n"), ("stdout", "done\n"), _settle()]
    return actions


def make_console_run(root: Path, *, run_id: str | None = None) -> MadeRun:
    """A finished run whose console capture is the point (``output_raw`` records)."""
    return _scripted_run(root, run_id or new_run_id("console"), console_actions())


def make_failed_run(root: Path, exit_code: int = 3, *, run_id: str | None = None) -> MadeRun:
    """A run ended with ``run.finish(exit_code=...)``: an exit record, non-zero code."""
    if exit_code == 0:
        raise ValueError("a failed run needs a non-zero exit code")
    actions = [
        *(("log", {"loss": 1.0 / (step + 1)}) for step in range(10)),
        ("stderr", "Traceback (most recent call last):\nRuntimeError: boom\n"),
        _settle(),
    ]
    return _scripted_run(root, run_id or new_run_id("failed"), actions, exit_code=exit_code)


ALERT_CALLS = (
    {"title": "Loss exploded", "text": "loss is 1e9 at step 3", "level": "ERROR", "wait_duration": 300},
    {"title": "Checkpoint saved", "text": "step 3", "level": "INFO"},
    {"title": "Loss exploded", "text": "loss is 2e9 at step 4", "level": "ERROR", "wait_duration": 300},
)


def make_alert_run(root: Path, *, exit_code: int = 0, run_id: str | None = None) -> MadeRun:
    """A run that calls ``run.alert()`` three times (``ALERT_CALLS``: the third repeats the first's title
    inside its wait_duration), logs ``loss`` over 0.5 on two steps, and exits with ``exit_code``."""
    actions: list[Action] = [("log", {"loss": 0.2}), ("log", {"loss": 0.9}), ("log", {"loss": 1.5})]
    actions += [("alert", call) for call in ALERT_CALLS[:2]] + [("log", {"loss": 0.1}), ("alert", ALERT_CALLS[2])]
    return _scripted_run(root, run_id or new_run_id("alerts"), actions, exit_code=exit_code)


@dataclass(frozen=True)
class ResumedRun:
    """One run id written in two goes: ``first`` failed, ``second`` (``resume="allow"``) finished."""

    first: MadeRun
    second: MadeRun


def make_resumed_run(root: Path, *, run_id: str | None = None) -> ResumedRun:
    """Two writers, one after the other, with one id: the second resumes the first."""
    run_id = run_id or new_run_id("resumed")
    first_rows = [("log", {"loss": 1.0 / (step + 1)}) for step in range(8)]
    first = _scripted_run(root, run_id, [*first_rows, ("stderr", "RuntimeError: preempted" + chr(10)), _settle()], exit_code=1)
    time.sleep(1.1)  # the next directory's name has the next second in it
    second_rows = [("log", {"loss": 0.1 / (step + 1), "lr": 0.01}) for step in range(3)]
    second = _scripted_run(root, run_id, [*second_rows, _settle()], init={"resume": "allow"})
    if first.run_dir == second.run_dir:
        raise RunMakerError("the resumed writer reused the first directory")
    return ResumedRun(first, second)


def make_step_metric_run(root: Path, *, run_id: str | None = None) -> MadeRun:
    """``define_metric`` as a Hugging Face Trainer run uses it, and more.

    ``train/*`` is plotted against ``train/global_step`` (10, 20, …, while
    ``_step`` counts 0, 1, …); ``val/*`` against ``epoch``, with goals;
    ``secret`` is hidden.
    """
    actions: list[Action] = [
        ("define_metric", {"name": "train/global_step"}),
        ("define_metric", {"name": "train/*", "step_metric": "train/global_step", "step_sync": True}),
        ("define_metric", {"name": "epoch"}),
        ("define_metric", {"name": "val/*", "step_metric": "epoch"}),
        ("define_metric", {"name": "val/loss", "summary": "min"}),
        ("define_metric", {"name": "val/acc", "summary": "max"}),
        ("define_metric", {"name": "secret", "hidden": True}),
    ]
    for step in range(1, 7):
        actions.append(("log", {"train/loss": 1.0 / step, "train/learning_rate": 1e-3, "train/global_step": 10 * step, "secret": step}))
        if step % 2 == 0:
            actions.append(("log", {"epoch": step // 2, "val/loss": 1.0 / step + 0.1, "val/acc": step / 10}))
    actions.append(_settle())
    return _scripted_run(root, run_id or new_run_id("axes"), actions)


def make_rows_run(
    root: Path,
    rows: Sequence[dict],
    *,
    config: Mapping[str, Any] | None = None,
    defines: Sequence[dict] = (),
    name: str | None = None,
    run_id: str | None = None,
    resume: bool = False,
    exit_code: int = 0,
) -> MadeRun:
    """A run that logs ``rows`` (one step each) after ``define_metric(**d)`` for each of ``defines``;
    with ``resume``, it resumes the run ``run_id`` already written under ``root``."""
    init: dict[str, Any] = {"config": dict(config or {})}
    if name:
        init["name"] = name
    if resume:
        init["resume"] = "allow"
    actions: list[Action] = [*(("define_metric", dict(d)) for d in defines), *(("log", dict(row)) for row in rows), _settle()]
    return _scripted_run(root, run_id or new_run_id("rows"), actions, init=init, exit_code=exit_code)


def make_resumed_steps_run(root: Path, steps: int = 30, *, run_id: str | None = None) -> ResumedRun:
    """One id in two segments of ``steps`` rows each, offline: the second (``resume="allow"``) logs ``_step``
    0, 1, … again while its ``global_step`` goes on from ``steps``; ``loss`` is 1 in the first, 2 in the second."""
    run_id = run_id or new_run_id("resumedsteps")
    first = make_rows_run(root, [{"loss": 1.0, "global_step": step} for step in range(steps)], run_id=run_id, exit_code=1)
    time.sleep(1.1)  # the next directory's name has the next second in it
    second = make_rows_run(root, [{"loss": 2.0, "global_step": steps + step} for step in range(steps)], run_id=run_id, resume=True)
    if first.run_dir == second.run_dir:
        raise RunMakerError("the resumed writer reused the first directory")
    return ResumedRun(first, second)


HOSTILE_TEXTS: tuple[str, ...] = (
    "[bold red]x[/]",
    "[link=http://x]y",
    "[/]",
    "\x1b[31mred\x1b[0m",
    "\x1b[2J\x1b[?1049hclear",
    "\x1b]0;title\x07",
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
    "\x9b31m8bit",
    "back\bspace",
    "bell\x07",
    "tab\there",
    "\u202eevil",
    "zero\u200bwidth",
    "wide 漢字テスト",
)
"""Text a viewer must show inert: markup look-alikes, escapes, odd characters."""


def make_hostile_run(root: Path, *, run_id: str | None = None) -> HostileRun:
    """Every user-controlled text field carries ``HOSTILE_TEXTS``."""
    texts = HOSTILE_TEXTS
    name = "[bold red]run[/] \x1b[31mred\x1b[0m \u202eevil zero\u200bwidth 漢字"
    notes = " | ".join(texts)
    config = {f"cfg {text}": text for text in texts}
    config["nested"] = {text: i for i, text in enumerate(texts[:3])}
    summary = {f"note {i}": text for i, text in enumerate(texts)}
    rows = [
        {**{f"m/{text}": step + i / 10 for i, text in enumerate(texts)}, "n\nl\rr": float(step)}
        for step in range(3)
    ]
    rows.append({"[bold]": {"\x1b[31mdeep": 1.0}})
    actions: list[Action] = [("stdout", f"{text}\n") for text in texts]
    actions += [("stderr", "".join(texts) + "\n"), *(("log", row) for row in rows)]
    actions += [("summary", summary), _settle()]
    init = {"name": name, "notes": notes, "config": config}
    made = _scripted_run(root, run_id or new_run_id("hostile"), actions, init=init)
    return _as(HostileRun, made, name=name, notes=notes, config=config, summary=summary)


def make_killed_run(
    root: Path, min_bytes: int = 2 * BLOCK_SIZE, *, run_id: str | None = None
) -> KilledRun:
    """A run SIGKILLed (client and wandb-core) while logging: no exit record.

    The writer flushes mostly full 32 KiB blocks (flush interval 0), so the
    file usually ends in the middle of a record: the tail a crash leaves
    between two flushes.
    """
    run_id = run_id or new_run_id("killed")
    params = {
        "run_id": run_id,
        "seconds": 60.0,
        "step_interval": 0.0,
        "print_every": 50,
        "settings": {"x_transaction_log_flush_interval": 0},
    }
    with tempfile.TemporaryDirectory(prefix="leet-wandb-") as scratch:
        stop_path = Path(scratch) / "stop"
        writer = _start_writer(
            _LOOP_BODY, {**params, "stop_path": str(stop_path)}, Path(root), Path(scratch),
            new_session=True,
        )
        where = writer.wait_for_report()
        wandb_path = Path(where["wandb_path"])
        _wait_for_size(writer, wandb_path, min_bytes)
        kill_writer(writer.process)
        # Measured after the kill: a block may land between the last look and the kill.
        size = wandb_path.stat().st_size
    return KilledRun(
        root=Path(root),
        run_dir=Path(where["run_dir"]),
        wandb_path=wandb_path,
        run_id=run_id,
        exit_code=None,
        size_before_kill=size,
    )


def _wait_for_size(writer: _Writer, path: Path, min_bytes: int, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        size = path.stat().st_size if path.exists() else 0
        if size >= min_bytes:
            return size
        if writer.process.poll() is not None:
            raise writer.failure(f"writer ended before {path.name} reached {min_bytes} bytes")
        if time.monotonic() > deadline:
            kill_writer(writer.process)
            raise writer.failure(f"{path.name} stayed under {min_bytes} bytes for {timeout:.0f} s")
        time.sleep(0.02)


def make_corrupted_copy(
    src_wandb_path: Path, dst_root: Path, offset: int | None = None
) -> CorruptedRun:
    """Copy a run directory under ``dst_root / "wandb"`` and flip one byte.

    Without ``offset`` the byte is in the middle of the payload of a chunk in
    block 1 (offsets 32768..65535), so the damage is a checksum failure.
    """
    src_wandb_path = Path(src_wandb_path)
    run_dir = Path(dst_root) / "wandb" / src_wandb_path.parent.name
    shutil.copytree(src_wandb_path.parent, run_dir, symlinks=True)
    wandb_path = run_dir / src_wandb_path.name
    data = bytearray(wandb_path.read_bytes())
    if offset is None:
        offset = _payload_byte_in_block(bytes(data), 1)
    if not 0 <= offset < len(data):
        raise ValueError(f"offset {offset} is outside the file ({len(data)} bytes)")
    original = data[offset]
    data[offset] ^= 0xFF
    wandb_path.write_bytes(bytes(data))
    return CorruptedRun(
        root=Path(dst_root),
        run_dir=run_dir,
        wandb_path=wandb_path,
        run_id=run_id_of(src_wandb_path),
        source=src_wandb_path,
        offset=offset,
        original_byte=original,
    )


def _payload_byte_in_block(data: bytes, block: int) -> int:
    """Middle byte of the first sizeable chunk payload that lies in ``block``.

    Walks chunk headers from the block start (a block always starts with one).
    """
    start = block * BLOCK_SIZE
    end = min(start + BLOCK_SIZE, len(data))
    if len(data) < start + BLOCK_SIZE:
        raise RunMakerError(
            f"block {block} is incomplete: the file has {len(data)} bytes, "
            f"needs {start + BLOCK_SIZE}; log more steps"
        )
    pos = start
    while pos + CHUNK_HEADER_SIZE <= end:
        length = int.from_bytes(data[pos + 4 : pos + 6], "little")
        payload = pos + CHUNK_HEADER_SIZE
        if length >= 16 and payload + length <= end:
            return payload + length // 2
        pos = payload + length
    raise RunMakerError(f"no chunk payload of 16+ bytes in block {block}")


def run_id_of(wandb_path: Path) -> str:
    """``run-<id>.wandb`` -> ``<id>``."""
    return Path(wandb_path).name.removeprefix("run-").removesuffix(".wandb")


def make_shared_run(
    root: Path, writers: int = 4, steps: int = 20, *, run_id: str | None = None, history_by: Sequence[str] = ("rank0",),
    steps_by: Mapping[str, int] | None = None,
) -> SharedRun:
    """``writers`` processes, labelled ``rank0..``, writing one run id at once.

    Offline shared mode is ``mode="offline"`` plus ``x_label``/``x_primary``
    and a common ``id`` (``mode="shared"`` wants a server login). Each writer
    gets its own directory; same-second starts add ``-1``, ``-2``, ... Every
    writer samples system metrics (keys end in ``/l:rank<i>``) and prints a
    line; the writers named in ``history_by`` (rank0, the primary, by default)
    log history, ``steps`` rows each unless ``steps_by`` gives a writer its own.
    """
    if writers < 1:
        raise ValueError("a shared run needs at least one writer")
    run_id = run_id or new_run_id("shared")
    with tempfile.TemporaryDirectory(prefix="leet-wandb-") as scratch:
        started = [
            (label, _start_shared_writer(root, Path(scratch), run_id, label, (steps_by or {}).get(label, steps), label in history_by))
            for label in (f"rank{i}" for i in range(writers))
        ]
        for _, (writer, _) in started:
            writer.wait()
        made = tuple(
            _shared_writer(label, actions, writer.wait_for_report(timeout=0))
            for label, (writer, actions) in started
        )
    if len({writer.run_dir for writer in made}) != writers:
        raise RunMakerError(f"shared writers did not get {writers} distinct directories")
    return SharedRun(root=Path(root), run_id=run_id, writers=made)


def _start_shared_writer(
    root: Path, scratch: Path, run_id: str, label: str, steps: int, history: bool
) -> tuple[_Writer, list[Action]]:
    primary = label == "rank0"
    actions: list[Action] = [("stdout", f"hello from {label}\n")]
    if history:
        actions += [("log", {"loss": 1.0 / (step + 1)}) for step in range(steps)]
    actions += [("sleep", 3 * STATS_INTERVAL), ("stdout", f"bye from {label}\n")]
    params = {
        "run_id": run_id,
        "actions": actions,
        "exit_code": 0,
        # Writers started in the same second race for one directory name (the
        # SDK's own "-1" suffix is chosen before the directory is made), so
        # each secondary asks for its suffix up front, as a node would.
        "settings": {"x_label": label, "x_primary": primary, **_dir_suffix(label)},
    }
    return _start_writer(_SCRIPTED_BODY, params, Path(root), scratch, name=label), actions


def _dir_suffix(label: str) -> dict[str, str]:
    index = label.removeprefix("rank")
    return {} if index in ("", "0") else {"x_sync_dir_suffix": index}


def _shared_writer(label: str, actions: list[Action], where: dict) -> SharedWriter:
    return SharedWriter(
        label=label,
        primary=label == "rank0",
        run_dir=Path(where["run_dir"]),
        wandb_path=Path(where["wandb_path"]),
        stdout_text=_text_of(actions, "stdout"),
        rows=_rows_of(actions),
    )


# --- a run that is still being written ---------------------------------------


class LiveRun:
    """A writer logging one step every ``step_interval`` seconds, in the background.

    ``flush_interval`` is ``x_transaction_log_flush_interval``: how often the
    writer appends its partly filled block to the file (W&B's default is
    15 s). Each step logs ``loss`` and ``wall_time`` and every tenth prints a
    line. The writer finishes by itself after ``seconds``.

    Use as a context manager: entering waits until the ``.wandb`` file
    exists; leaving kills the writer if it is still running (call ``stop()``
    first for a finished file with an exit record).
    """

    def __init__(
        self,
        root: Path,
        *,
        seconds: float = 30.0,
        step_interval: float = 0.2,
        flush_interval: float = 0.2,
        run_id: str | None = None,
    ) -> None:
        self.root = Path(root)
        self.run_id = run_id or new_run_id("live")
        self.seconds = seconds
        self.step_interval = step_interval
        self.flush_interval = flush_interval
        self.run_dir: Path | None = None
        self.wandb_path: Path | None = None
        self._scratch: tempfile.TemporaryDirectory | None = None
        self._writer: _Writer | None = None

    def __enter__(self) -> LiveRun:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self, timeout: float = SCRIPT_TIMEOUT) -> None:
        """Start the writer; return once its ``.wandb`` file exists."""
        self._scratch = tempfile.TemporaryDirectory(prefix="leet-wandb-")
        scratch = Path(self._scratch.name)
        params = {
            "run_id": self.run_id,
            "seconds": self.seconds,
            "step_interval": self.step_interval,
            "print_every": 10,
            "stop_path": str(scratch / "stop"),
            "settings": {"x_transaction_log_flush_interval": self.flush_interval},
        }
        self._writer = _start_writer(_LOOP_BODY, params, self.root, scratch, new_session=True)
        where = self._writer.wait_for_report(timeout)
        self.run_dir = Path(where["run_dir"])
        self.wandb_path = Path(where["wandb_path"])
        _wait_for_size(self._writer, self.wandb_path, len(FILE_HEADER), timeout)

    @property
    def running(self) -> bool:
        return self._writer is not None and self._writer.process.poll() is None

    def size(self) -> int:
        """Bytes in the file now."""
        return self.wandb_path.stat().st_size if self.wandb_path else 0

    def wait_for_size(self, min_bytes: int, timeout: float = 30.0) -> int:
        """Block until the file holds at least ``min_bytes``; return its size."""
        return _wait_for_size(self._require_writer(), self.wandb_path, min_bytes, timeout)

    def stop(self, timeout: float = SCRIPT_TIMEOUT) -> None:
        """Ask the writer to ``run.finish()`` and wait until it has exited."""
        writer = self._require_writer()
        Path(self._scratch.name, "stop").touch()
        writer.wait(timeout)

    def kill(self) -> None:
        """SIGKILL the writer and its wandb-core: the file keeps a torn tail."""
        kill_writer(self._require_writer().process)

    def close(self) -> None:
        if self.running:
            self.kill()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def _require_writer(self) -> _Writer:
        if self._writer is None:
            raise RunMakerError("the live run was not started")
        return self._writer


# --- a run that logged only media -------------------------------------------

_MEDIA_BODY = r'''
run = start()
for step in range(PARAMS["steps"]):
    run.log({
        "grads": wandb.Histogram([float(i % 7) * (step + 1) for i in range(100)]),
        "preds": wandb.Table(columns=["x", "y", "z"], data=[[step, i, i * i] for i in range(10)]),
        "report": wandb.Html("<p>step %d</p>" % step),
    })
run.finish()
'''

MEDIA_LOGGED = {"grads": "histogram", "preds": "table-file", "report": "html-file"}
"""What ``make_media_run`` logs each step: key → W&B media type (no numbers at all)."""


@dataclass(frozen=True, kw_only=True)
class MediaRun(MadeRun):
    media: dict
    """Key → W&B media type, as ``MEDIA_LOGGED``."""
    media_steps: int


def make_media_run(root: Path, steps: int = 12, *, run_id: str | None = None) -> MediaRun:
    """A finished run whose history holds only media: a histogram, a 10×3 table and an HTML page per step.

    Needs no image library (``wandb.Image`` wants Pillow, which the test
    extra does not install).
    """
    run_id = run_id or new_run_id("media")
    where = _write_run(_MEDIA_BODY, {"run_id": run_id, "steps": steps, "init": {"name": "media-only"}}, root)
    return MediaRun(
        root=Path(root),
        run_dir=Path(where["run_dir"]),
        wandb_path=Path(where["wandb_path"]),
        run_id=run_id,
        media=dict(MEDIA_LOGGED),
        media_steps=steps,
    )


# --- a run that logged images, an image list, a table and a histogram ----------

_IMAGE_BODY = r'''
import numpy as np

run = start()
size = PARAMS["size"]
for step in range(PARAMS["steps"]):
    def picture(seed):
        generator = np.random.default_rng(seed)
        return (generator.random((size, size, 3)) * 255).astype("uint8")

    row = {"loss": 1.0 / (step + 1), "sample": wandb.Image(picture(step), caption=f"sample at {step}")}
    if step % 2 == 0:
        row["batch"] = [wandb.Image(picture(1000 + 10 * step + i), caption=f"digit {i}") for i in range(3)]
        row["weights"] = wandb.Histogram(np.arange(100) % (step + 3))
    if step % 3 == 1:
        row["preds"] = wandb.Table(columns=["id", "guess"], data=[[i, f"class {i * step}"] for i in range(4)])
    run.log(row)
run.finish()
'''


@dataclass(frozen=True, kw_only=True)
class ImageRun(MadeRun):
    size: int
    """Pixels a side of every logged image."""


def make_image_run(root: Path, steps: int = 6, size: int = 16, *, run_id: str | None = None) -> ImageRun:
    """A finished run logging, at step s: ``sample`` (one image captioned ``sample at s``) every step; ``batch``
    (three images captioned ``digit 0..2``) and ``weights`` (a histogram) at even steps; ``preds`` (a 4×2 table)
    at steps 1, 4, 7 …; ``loss`` every step."""
    run_id = run_id or new_run_id("images")
    where = _write_run(_IMAGE_BODY, {"run_id": run_id, "steps": steps, "size": size, "init": {"name": "images"}}, root)
    return ImageRun(
        root=Path(root), run_dir=Path(where["run_dir"]), wandb_path=Path(where["wandb_path"]), run_id=run_id, size=size,
    )


_IMAGE_SERIES_BODY = r'''
import numpy as np

run = start()
size = PARAMS["size"]
generator = np.random.default_rng(0)
for step in range(PARAMS["steps"]):
    picture = (generator.random((size, size, 3)) * 255).astype("uint8")
    run.log({"loss": 1.0 / (step + 1), "sample": wandb.Image(picture, caption=f"step {step}")})
run.finish()
'''


def make_image_series_run(root: Path, steps: int = 1000, size: int = 64, *, run_id: str | None = None) -> ImageRun:
    """A finished run logging one ``size``×``size`` image (``sample``, captioned ``step s``) and ``loss`` every step."""
    run_id = run_id or new_run_id("series")
    where = _write_run(_IMAGE_SERIES_BODY, {"run_id": run_id, "steps": steps, "size": size, "init": {"name": "image-series"}}, root)
    return ImageRun(
        root=Path(root), run_dir=Path(where["run_dir"]), wandb_path=Path(where["wandb_path"]), run_id=run_id, size=size,
    )
