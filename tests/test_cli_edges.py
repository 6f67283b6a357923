"""The command line at its edges: each gets one clear line and a non-zero exit, or what ``wandb leet`` does.

Subprocess tests run ``python -m leet`` as a person would. Unreadable
folders are made with ``chmod 000``; as root (who reads everything anyway)
the program runs without the capabilities that let root past file modes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from pilot_waits import until
from test_workspace import copy_run

from leet.config import Config
from leet.discovery.layout import resolve
from leet.model.store import Store
from leet.runfile.folders import awaits_runs
from leet.runfile.locate import RunNotFound, check_listable, find_run_file
from leet.sources.workspace import WorkspaceSource
from leet.testing.demo import make_demo, make_run_demo
from leet.testing.workspace_demo import make_workspace_demo
from leet.ui.app import LeetApp
from leet.ui.screens.workspace import WorkspaceScreen, header_left
from leet.ui.views.symon import host_summary
from widgets.runlist import RunList
from widgets.textline import TextLine, cut_at_space, join_line

ROOT = Path(__file__).resolve().parent.parent
ENV = {"LEET_CONFIG": "", "PATH": "/usr/bin:/bin"}
NEVER_A_PID = 2**22 + 1  # above the largest pid_max Linux allows: no process ever had it
WAIT = 20.0


def leet(*args: str, cwd: str | Path | None = None, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "leet", *args],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, env={**ENV, "PYTHONPATH": str(ROOT)}, cwd=cwd or ROOT,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line a failing command wrote to stderr (never a traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- usage -----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["symon", "serve", "cluster", "watch", "inspect"])
def test_a_subcommand_names_itself_in_its_usage_and_errors(command):
    result = leet(command, "--no-such-flag")
    assert result.returncode == 2
    assert result.stderr.startswith(f"usage: leet {command} [-h]"), result.stderr
    assert f"leet {command}: error:" in result.stderr
    helped = leet(command, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith(f"usage: leet {command} [-h]")


def test_the_top_level_usage_is_unchanged():
    result = leet("--no-such-flag")
    assert result.returncode == 2 and result.stderr.startswith("usage: leet [-h] [--version] {symon,serve,cluster,watch,inspect}")


# -- symon settings ---------------------------------------------------------------------------


def test_a_config_file_named_with_config_must_exist(tmp_path):
    missing = tmp_path / "nope.toml"
    result = leet("symon", "--once", "--config", str(missing))
    assert result.returncode == 2
    assert one_line(result) == f"leet: config file {missing} does not exist"
    result = leet("symon", "--once", "--json")  # LEET_CONFIG set and empty: no config file at all
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("command", [("symon", "--once"), ("watch", "--once", ".")])
def test_a_config_file_named_by_leet_config_must_exist_as_with_config(tmp_path, command):
    missing = tmp_path / "nope.toml"
    result = subprocess.run(
        [sys.executable, "-m", "leet", *command], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**ENV, "LEET_CONFIG": str(missing), "PYTHONPATH": str(ROOT)}, cwd=tmp_path,
    )
    assert result.returncode == 2
    assert one_line(result) in (f"leet: config file {missing} does not exist", f"leet watch: config file {missing} does not exist")


@pytest.mark.parametrize("once", [True, False])
def test_a_pid_that_does_not_exist_is_refused_before_anything_starts(once):
    began = time.monotonic()
    result = leet("symon", "--pid", str(NEVER_A_PID), *(["--once"] if once else []))
    assert result.returncode == 2
    assert one_line(result) == f"leet: --pid {NEVER_A_PID}: no such process"
    assert result.stdout == ""
    assert time.monotonic() - began < 30


def test_a_pid_that_exists_is_watched():
    result = leet("symon", "--once", "--json", "--pid", str(os.getpid()), "--tree")
    assert result.returncode == 0, result.stderr
    assert '"proc.cpu.threads"' in result.stdout or '"cpu"' in result.stdout


def test_tree_without_pid_is_a_usage_error():
    result = leet("symon", "--once", "--tree")
    assert result.returncode == 2
    assert one_line(result).startswith("leet: --tree goes with --pid")


# -- what a path is -----------------------------------------------------------------------------


def test_a_character_device_is_called_one():
    result = leet("/dev/null")
    assert result.returncode == 2
    assert one_line(result) == "leet: /dev/null is a character device, not a regular file or a directory"
    result = leet("inspect", "/dev/null")
    assert result.returncode != 0 and result.stdout == ""
    assert one_line(result) == "leet inspect: /dev/null is a character device, not a regular file or a directory"


def test_a_path_that_does_not_exist_still_says_so(tmp_path):
    result = leet(str(tmp_path / "gone"))
    assert result.returncode == 2 and one_line(result) == f"leet: {tmp_path / 'gone'} does not exist"


@contextmanager
def unreadable(*paths: Path) -> Iterator[tuple[str, ...]]:
    """``paths`` made unreadable (mode 000); yields the command prefix under which file modes hold."""
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file modes do not stop root")
        prefix = (setpriv, "--bounding-set", "-dac_override,-dac_read_search")
    for path in paths:
        path.chmod(0)
    try:
        probe = subprocess.run([*prefix, "ls", str(paths[0])], capture_output=True, timeout=30)
        if probe.returncode == 0:
            pytest.skip("file modes do not stop this user here")
        yield prefix
    finally:
        for path in paths:
            path.chmod(0o755)


def test_an_unreadable_wandb_folder_here_is_one_line_not_a_traceback(tmp_path):
    (tmp_path / "wandb").mkdir()
    with unreadable(tmp_path / "wandb") as prefix:
        result = leet(cwd=tmp_path, prefix=prefix)
        assert result.returncode == 2
        assert one_line(result).startswith("leet: wandb: cannot read this directory: Permission denied")
        result = leet("wandb", cwd=tmp_path, prefix=prefix)
        assert result.returncode == 2
        assert one_line(result) == "leet: wandb: cannot read this directory: Permission denied"


def test_an_unreadable_folder_named_is_one_line(tmp_path):
    folder = tmp_path / "runs"
    (folder / "inner").mkdir(parents=True)
    holder = tmp_path / "holder"
    (holder / "wandb").mkdir(parents=True)
    with unreadable(folder, holder / "wandb") as prefix:
        result = leet(str(folder), prefix=prefix)
        assert result.returncode == 2
        assert one_line(result) == f"leet: {folder}: cannot read this directory: Permission denied"
        result = leet(str(holder), prefix=prefix)  # its runs would be in wandb/, which cannot be read
        assert result.returncode == 2
        assert one_line(result) == f"leet: {holder / 'wandb'}: cannot read this directory: Permission denied"
        result = leet("inspect", str(folder), prefix=prefix)
        assert result.returncode == 1
        assert one_line(result) == f"leet inspect: {folder}: cannot read this directory: Permission denied"


def test_check_listable_names_the_directory(tmp_path, monkeypatch):
    real = os.scandir

    def refusing(path=".", *args, **kwargs):
        if os.fspath(path) == str(tmp_path):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", refusing)
    with pytest.raises(PermissionError) as raised:
        check_listable(tmp_path)
    assert raised.value.filename == str(tmp_path) and raised.value.strerror == "cannot read this directory: Permission denied"
    with pytest.raises(PermissionError):
        find_run_file(tmp_path)  # never "no run-*.wandb file" for a folder it could not look into
    check_listable(tmp_path / "missing")  # not a directory: the caller says what it is


# -- an empty folder waits for runs ---------------------------------------------------------------


def test_which_folders_wait_for_runs(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert awaits_runs(empty)
    layout = resolve(empty)
    assert layout.kind == "workspace" and layout.root == empty.resolve()
    project = tmp_path / "project"
    (project / "wandb").mkdir(parents=True)
    (project / "train.py").write_text("print()\n")
    layout = resolve(project)
    assert layout.kind == "workspace" and layout.root == (project / "wandb").resolve(), "runs will be in its wandb/"
    run_dir = tmp_path / "wandb" / "offline-run-20240101_120000-abc123"
    run_dir.mkdir(parents=True)
    assert not awaits_runs(run_dir), "runs never appear inside a run's own folder"
    with pytest.raises(RunNotFound, match="no run-\\*.wandb file in this directory"):
        resolve(run_dir)
    with pytest.raises(RunNotFound, match="does not exist"):
        resolve(tmp_path / "missing")
    assert not awaits_runs(Path("/dev/null"))



def rows(app, selector: str) -> list[str]:
    return app.screen.query_one(selector).plain_rows()


async def test_an_empty_folder_waits_then_shows_the_first_run(basic_run, tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    source = WorkspaceSource(folder, Store(), rescan=0.1)
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    source.start()
    try:
        async with app.run_test(size=(200, 24)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen), "the workspace")
            assert rows(app, "#header")[0].startswith(f" {folder} · waiting for runs")
            listed = "\n".join(rows(app, "#runs"))
            assert "Waiting for runs in" in listed and "/project" in listed
            # The first run writes into a wandb/ folder made after leet started, as `wandb.init` does.
            copy_run(basic_run.run_dir, folder / "wandb")
            await until(pilot, lambda: len(app.screen.query_one(RunList).runs) == 1, "the new run listed")
            await until(pilot, lambda: source.selected() != [], "the new run selected")
            await until(pilot, lambda: "metrics 1-" in rows(app, "#header")[0], "its charts")
            header = rows(app, "#header")[0]
            assert "waiting" not in header and "1 run · 1 selected" in header
            assert "Waiting for runs" not in "\n".join(rows(app, "#runs"))
            await pilot.press("q")
    finally:
        source.stop()


def test_leet_on_an_empty_folder_opens_and_waits(tmp_path):
    """End to end in a real terminal: ``leet EMPTY`` stays up, saying it waits."""
    from terminal import LEET_ENV, Terminal, TmuxMissing, require_tmux

    try:
        require_tmux()
    except TmuxMissing as error:
        pytest.fail(str(error), pytrace=False)
    folder = tmp_path / "empty"
    (folder / "wandb").mkdir(parents=True)
    with Terminal([sys.executable, "-m", "leet", str(folder)], width=100, height=24, env=LEET_ENV, cwd=str(ROOT)) as terminal:
        screen = terminal.wait_for("Waiting for runs in", 30)
        assert "empty/wandb · waiting for runs" in screen
        terminal.press("q")
        assert terminal.wait_exit(10) == 0


# -- g without GPUs ---------------------------------------------------------------------------------


def toasts(app) -> list[str]:
    from textual.widgets._toast import Toast

    return [str(toast.render()) for toast in app.screen.query(Toast)]


@pytest.mark.parametrize(("gpus", "said"), [(0, "No GPUs here: the sidebar lists host processes"), (2, "Sidebar: GPU processes")])
async def test_g_says_what_it_did_on_screen(gpus, said):
    # run_test() hides notifications unless asked: a person's terminal shows them.
    demo = make_demo(gpus=gpus)
    async with demo.app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("g")
        await until(pilot, lambda: any(said in text for text in toasts(demo.app)), f"the toast {said!r}")


# -- headers at 60 columns ------------------------------------------------------------------------


def text_of(row) -> str:
    return "".join(text for text, _ in row)


def test_join_line_gives_way_by_whole_runs_with_a_space_before_the_right():
    left = [(" gpu-node-07", "heading"), (" • up 3d 2h", "heading"), (" • load 1.50 0.75 0.25", "heading")]
    right = [("charts 1-9 of 13 · every 2s ", "muted")]
    assert text_of(join_line(left, right, 20)) == " gpu-node-07        ", "a right side wider than the bar goes"
    for width in range(29, 80):
        line = text_of(join_line(left, right, width))
        assert len(line) == width and line.endswith(text_of(right))
        shown = line[: width - len(text_of(right))]
        assert shown.endswith(" "), (width, line)
        for part in ("up 3d 2h", "load 1.50 0.75 0.25"):
            assert part in line or part.split()[-1] not in line, (width, line)
    assert text_of(join_line(left, right, 52)) == " gpu-node-07 • up 3d 2h charts 1-9 of 13 · every 2s "
    assert text_of(join_line(left, right, 51)) == " gpu-node-07           charts 1-9 of 13 · every 2s "
    assert cut_at_space(" gpu-node-07 • load 1.50 0.75 0.25", 30) == " gpu-node-07 • load 1.50 0.75…"
    assert cut_at_space(" gpu-node-07 • load 1.50", 16) == " gpu-node-07…", "no separator left dangling"
    assert cut_at_space(" an-unbroken-host-name", 10) == " an-unbro…"


def test_host_summary_drops_whole_parts_to_fit():
    class Host:
        hostname = "gpu-node-07"
        boot_time = 1000.0
        load_avg = (1.5, 0.75, 0.25)

    now = 1000.0 + 3 * 86400 + 7200
    assert host_summary(Host(), now, 100) == "gpu-node-07 • up 3d 2h • load 1.50 0.75 0.25"
    assert host_summary(Host(), now, 40) == "gpu-node-07 • load 1.50 0.75 0.25"
    assert host_summary(Host(), now, 25) == "gpu-node-07 • load 1.50"
    assert host_summary(Host(), now, 12) == "gpu-node-07"
    assert host_summary(Host(), now, 5) == "gpu-node-07"  # the bar cuts the name itself


def test_workspace_header_keeps_the_folder_tail():
    root = "/home/someone/projects/a-rather-long-project-name/experiments/wandb"
    left = header_left(root, 3, 1, 50)
    assert left[0][0].endswith("experiments/wandb") and "…" in left[0][0]
    assert [text for text, _ in left[1:]] == [" · 3 runs", " · 1 selected"]
    assert header_left(root, 0, 0, 200)[1] == (" · waiting for runs", "warn")


@pytest.mark.parametrize("screen", ["symon", "run", "workspace"])
async def test_headers_at_60_columns_cut_no_number_and_keep_a_gap(screen):
    app = {"symon": lambda: make_demo().app, "run": lambda: make_run_demo().app, "workspace": lambda: make_workspace_demo().app}[screen]()
    async with app.run_test(size=(60, 15)) as pilot:
        await pilot.pause(0.2)
        header = app.screen.query_one("#header", TextLine)
        line = header.plain_rows()[0]
        assert len(line) == 60
        left, right = text_of(header._left), text_of(header._right)
        assert line.endswith(right)
        shown = line[: 60 - len(right)]
        assert shown.endswith(" ") or right.startswith(" "), line
        words = left.split()
        assert shown.split() == words[: len(shown.split())] or shown.rstrip().endswith("…"), line
        if screen == "symon":
            assert re.search(r" • load \d+\.\d\d( \d+\.\d\d \d+\.\d\d)? ", line), line
