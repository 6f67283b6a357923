"""Special files and hostile names: nothing hangs, nothing crashes, nothing reaches the terminal raw.

A FIFO named ``run-x.wandb`` would block ``open()`` until a writer came; a
directory named like a run file, a file we may not read, a run directory we
may not list: each is said plainly where the run is listed, or as one line on
stderr, and never as a hang or a traceback. Names with escape sequences come
out inert. Tests run as root here, so "may not read" is simulated by making
``os.open`` or ``os.scandir`` refuse one path.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from framer import RunWriter
from test_workspace_screen import run_rows, until

from leet import cli
from leet.common.text import clean, escaped
from leet.config import Config
from leet.discovery.probe import probe
from leet.model.store import Store
from leet.runfile.files import NotRegularFile, open_regular, read_regular
from leet.runfile.reader import BLOCK_SIZE
from leet.sources.workspace import WorkspaceSource
from leet.ui.app import LeetApp
from leet.ui.screens.workspace import UNREADABLE, WorkspaceScreen, list_rows
from widgets.runlist import RunList, RunNote, RunRow

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZWNobyBoaQ==\x07"
FIFO_WHY = "run-x.wandb is a FIFO (named pipe), not a regular file"
QUICK = 20.0  # seconds: only bounds a hang


def good_run(path: Path, run_id: str = "good") -> Path:
    writer = RunWriter(run_id, name=f"{run_id}-run")
    for step in range(3):
        writer.history(step, {"loss": 1.0 / (step + 1)})
    return writer.exit().write(path)


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


@pytest.fixture
def folder(tmp_path):
    """A workspace: a good run, a FIFO run file, and a directory named like a run file."""
    root = tmp_path / "ws"
    good_run(root / "run-good" / "run-good.wandb")
    fifo(root / "run-fifo" / "run-x.wandb")
    (root / "run-dir" / "run-d.wandb").mkdir(parents=True)
    return root


def leet(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """``python -m leet ARGS`` with no stdin, as bytes: what would reach a terminal, unfiltered."""
    environ = {"LEET_CONFIG": "", "PATH": "/usr/bin:/bin", **(env or {})}
    return subprocess.run([sys.executable, "-m", "leet", *args], capture_output=True, stdin=subprocess.DEVNULL, timeout=QUICK, env=environ, cwd=ROOT)


def refuse(monkeypatch, name: str, target: Path) -> None:
    """``os.<name>`` raises PermissionError for ``target``, as it would for a file we may not read."""
    original = getattr(os, name)

    def refusing(path, *args, **kwargs):
        if os.fspath(path) == os.fspath(target):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return original(path, *args, **kwargs)

    monkeypatch.setattr(os, name, refusing)


def assert_inert(data: bytes) -> None:
    assert b"\x1b" not in data and b"\x07" not in data, data
    assert b"Traceback" not in data, data.decode(errors="replace")


# -- the one opening rule ------------------------------------------------------------


def test_open_regular_refuses_a_fifo_at_once_and_says_what_it_is(tmp_path):
    pipe = fifo(tmp_path / "run-x.wandb")
    began = time.monotonic()
    with pytest.raises(NotRegularFile, match=r"is a FIFO \(named pipe\), not a regular file"):
        open_regular(pipe)
    with pytest.raises(NotRegularFile, match="is a directory"):
        read_regular(tmp_path)
    assert time.monotonic() - began < 1.0


# Calls that open a path. Only files.py may open one, and only these named uses of
# a path that is not the user's are allowed beside it.
OPENERS = {"open", "read_bytes", "read_text", "fdopen"}
ALLOWED = {
    ("leet/runfile/files.py", "os.open"),
    ("leet/runfile/files.py", "fdopen"),
    ("leet/commands/inspect_run.py", "os.open"),  # os.devnull, once the reader of stdout went away
    ("leet/runfile/regenerate.py", "read_text"),
    ("leet/runfile/writer.py", "open"),  # creates a new run file ("x": an existing path, a symlink included, is refused)
    ("leet/alerts/acks.py", "os.open"),  # appends to the acknowledgement journal leet owns: no symlink followed, a FIFO never waited on  # the generated module and protoc's output, not user files
}


def openers(path: Path) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in OPENERS:
            found.append((func.id, node.lineno))
        elif isinstance(func, ast.Attribute) and func.attr in OPENERS - {"open"}:
            found.append((func.attr, node.lineno))
        elif isinstance(func, ast.Attribute) and func.attr == "open" and isinstance(func.value, ast.Name) and func.value.id in ("os", "io"):
            found.append((f"{func.value.id}.open", node.lineno))
    return found


def test_nothing_in_leet_opens_a_path_except_through_open_regular():
    stray = [
        f"{path.relative_to(ROOT)}:{line}: {call}("
        for path in sorted((ROOT / "leet").rglob("*.py"))
        if not path.name.endswith("_pb2.py")
        for call, line in openers(path)
        if (str(path.relative_to(ROOT)), call) not in ALLOWED
    ]
    assert not stray, "open these through leet.runfile.files.open_regular:\n" + "\n".join(stray)


# -- one sanitiser ---------------------------------------------------------------------


def test_clean_and_escaped_follow_one_rule():
    text = f"a{HOSTILE}\u202eb\u200bc\td\n"
    assert clean(text) == "abc d "
    shown = escaped(text)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert shown.startswith("a\\x1b]0;pwned\\x07\\x1b[2J") and "\\u202eb\\u200bc\\td\\n" in shown
    assert escaped(shown) == shown, "escaping twice changes nothing"
    assert escaped("one\ntwo\x1b", keep_newlines=True) == "one\ntwo\\x1b"


# -- a workspace -----------------------------------------------------------------------


def test_a_workspace_lists_every_run_that_cannot_be_read_with_the_reason(folder, monkeypatch):
    (folder / "run-locked").mkdir()
    refuse(monkeypatch, "scandir", folder / "run-locked")
    source = WorkspaceSource(folder, Store())
    source.refresh()
    errors = {entry.key: entry.error for entry in source.entries()}
    assert errors == {
        "run-good": "",
        "run-fifo": FIFO_WHY,
        "run-dir": "run-d.wandb is a directory, not a regular file",
        "run-locked": "cannot read this directory: Permission denied",
    }
    lines = list_rows(source.entries())
    rows = {line.key: line for line in lines if isinstance(line, RunRow)}
    notes = {line.key: line.text for line in lines if isinstance(line, RunNote)}
    assert rows["run-fifo"].state == UNREADABLE and rows["run-good"].state == "finished"
    assert notes == {key: why for key, why in errors.items() if why}, "each reason on the line under its run"
    assert lines.index(rows["run-fifo"]) + 1 == lines.index(RunNote("run-fifo", FIFO_WHY))
    assert source.select("run-fifo") is None, "nothing to load"
    assert not source.refresh(), "an unchanged error is no change"


def test_damage_seen_while_listing_is_said_under_the_run_and_the_run_still_opens(tmp_path):
    writer = RunWriter("hurt")
    for step in range(3000):  # several blocks: the head and the tail are read apart
        writer.history(step, {"loss": 1.0 / (step + 1), "pad": "x" * 40})
    data = bytearray(writer.exit().data)
    data[200] ^= 0xFF  # in the head
    data[-BLOCK_SIZE - 300] ^= 0xFF  # in the tail, a block before the exit record
    file = tmp_path / "run-hurt" / "run-hurt.wandb"
    file.parent.mkdir(parents=True)
    file.write_bytes(bytes(data))
    entry = probe("run-hurt", file, time.time())
    assert not entry.error and entry.state.value == "finished"
    assert entry.damage.startswith("damaged data near the start and end: ") and "checksum mismatch" in entry.damage
    lines = list_rows([entry])
    assert RunNote("run-hurt", entry.damage) in lines


def test_a_clean_tail_read_that_starts_inside_a_record_is_not_damage(tmp_path):
    writer = RunWriter("whole")
    for step in range(3000):
        writer.history(step, {"loss": 1.0 / (step + 1), "pad": "x" * 40})
    file = writer.exit().write(tmp_path / "run-whole" / "run-whole.wandb")
    assert probe("run-whole", file, time.time()).damage == ""


def test_a_run_file_we_may_not_read_is_listed_with_why(folder, monkeypatch):
    file = folder / "run-good" / "run-good.wandb"
    refuse(monkeypatch, "open", file)
    entry = probe("run-good", file, time.time())
    assert entry.error == "run-good.wandb: Permission denied"


def test_a_workspace_root_we_may_not_list_is_said_in_the_header(folder, monkeypatch):
    source = WorkspaceSource(folder, Store(), rescan=0.05)
    refuse(monkeypatch, "scandir", source.root)
    source.start()
    try:
        deadline = time.monotonic() + QUICK
        while "Permission denied" not in source.error and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "Permission denied" in source.error
    finally:
        source.stop()


async def test_the_first_frame_comes_with_the_fifo_listed_and_the_good_run_charted(folder):
    (folder / f"run-{HOSTILE}").mkdir()
    fifo(folder / f"run-{HOSTILE}" / "run-y.wandb")
    source = WorkspaceSource(folder, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark"), live=False, screen=lambda: WorkspaceScreen(source))
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, WorkspaceScreen) and len(app.screen.query_one(RunList).runs) == 4, "four runs listed")
            assert source.selected() == ["run-good"], "the run that can be read is the one selected"
            rows = "\n".join(run_rows(app))
            assert "good-run" in rows and f"⚠ {FIFO_WHY}" in rows and UNREADABLE in rows
            assert "run-y.wandb is a FIFO" in rows
            assert "\x1b" not in rows and "\x07" not in rows
            await pilot.press("q")
    finally:
        source.stop()


# -- leet inspect, leet PATH -------------------------------------------------------------


def test_inspect_of_a_fifo_ends_at_once_with_a_clear_message(folder):
    for path in (folder / "run-fifo" / "run-x.wandb", folder / "run-fifo"):
        result = leet("inspect", str(path))
        assert result.returncode != 0
        assert b"run-x.wandb is" in result.stderr and b"not a regular file" in result.stderr
        assert_inert(result.stderr)


def test_leet_path_of_a_fifo_or_a_directory_named_like_a_run_says_so(folder):
    result = leet(str(folder / "run-fifo" / "run-x.wandb"))
    assert result.returncode == 2 and b"not a regular file" in result.stderr
    result = leet(str(folder / "run-dir" / "run-d.wandb"))
    assert result.returncode == 2 and result.stderr.startswith(b"leet: ")
    assert_inert(result.stderr)


def test_a_run_file_we_may_not_read_is_one_line_not_a_traceback(folder, monkeypatch, capsys):
    file = folder / "run-good" / "run-good.wandb"
    refuse(monkeypatch, "open", file)
    assert cli.main([str(file)]) == 2
    err = capsys.readouterr().err
    assert err == f"leet: {file}: Permission denied\n"
    for args in ([str(file)], [str(file), "--summary"]):
        assert cli.main(["inspect", *args]) == 1
        err = capsys.readouterr().err
        assert "Permission denied" in err and "Traceback" not in err


def test_hostile_names_reach_stderr_inert(tmp_path):
    place = tmp_path / f"run-{HOSTILE}"
    place.mkdir()
    (place / "run-n.wandb").write_bytes(b"not a run file at all")
    fifo(tmp_path / f"pipe-{HOSTILE}" / "run-x.wandb")
    cases = [
        ("inspect", str(place)),
        ("inspect", str(place / "run-n.wandb")),
        ("inspect", str(place / "missing")),
        ("inspect", str(tmp_path / f"pipe-{HOSTILE}")),
        (str(place),),
        (str(place / "missing"),),
        (str(tmp_path / f"pipe-{HOSTILE}"),),
        ("symon", "--once", "--config", str(place / "run-n.wandb")),
        ("symon", "--once", "--theme", HOSTILE),
        ("inspect", "--bogus", HOSTILE),
    ]
    for args in cases:
        result = leet(*args)
        assert result.returncode != 0, args
        assert result.stderr.strip(), args
        assert_inert(result.stderr)
    shown = leet("inspect", str(place / "run-n.wandb")).stderr.decode()
    assert "run-\\x1b]0;pwned\\x07\\x1b[2J" in shown, "the name is shown, made visible"


def test_a_workspace_with_a_fifo_in_a_real_terminal_lists_both_and_quits_with_q(folder, leet_terminal):
    terminal = leet_terminal(str(folder))
    screen = terminal.wait_for(lambda s: "good-run" in s and "run-x.wandb is a FIFO" in s, timeout=QUICK, what="the good run and the FIFO listed")
    assert UNREADABLE in screen
    terminal.press("q")
    status = terminal.wait_exit(QUICK)
    screen = terminal.screen()
    assert status == 0, f"leet exited with status {status}:\n{screen}"
    assert "Traceback" not in screen
