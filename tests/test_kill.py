"""k / F9: a signal chooser that names its target, a confirmation, then the signal, and a clear word on how it went."""

from __future__ import annotations

import signal
import subprocess
from contextlib import asynccontextmanager

import pytest

from collectors.processes import ProcessRow
from leet.testing.demo import make_demo
from leet.ui.bindings import SYMON_KEYS
from leet.ui.screens.process_dialogs import SignalPicker, Target, offered_signals, send_signal


class Recorder:
    """A stand-in for os.kill: remembers what would be sent, or fails as told."""

    def __init__(self, error: Exception | None = None) -> None:
        self.sent: list[tuple[int, int]] = []
        self.error = error

    def __call__(self, pid: int, number: int) -> None:
        if self.error is not None:
            raise self.error
        self.sent.append((pid, number))


# -- sending -------------------------------------------------------------------------


def test_success_names_the_signal_and_the_process():
    sender = Recorder()
    message, severity = send_signal(Target(4242, "python train.py", "ml"), signal.SIGTERM, sender)
    assert sender.sent == [(4242, signal.SIGTERM)]
    assert (message, severity) == ("Sent SIGTERM to PID 4242 (python train.py)", "information")


@pytest.mark.parametrize("pid", [0, -1, -4242])
def test_no_pid_at_or_below_zero_is_ever_signalled(pid):
    sender = Recorder()
    message, severity = send_signal(Target(pid, "init"), signal.SIGKILL, sender)
    assert sender.sent == [] and severity == "error" and "Not sent" in message


def test_not_permitted_says_who_owns_the_process():
    message, severity = send_signal(Target(1, "/sbin/init", "root"), signal.SIGTERM, Recorder(PermissionError(1, "Operation not permitted")))
    assert severity == "error"
    assert message.startswith("Not permitted to send SIGTERM to PID 1 (/sbin/init): it belongs to root, and you are ")


def test_a_process_that_already_exited_is_said_so():
    message, severity = send_signal(Target(77, "sleep 60"), signal.SIGTERM, Recorder(ProcessLookupError(3, "No such process")))
    assert (message, severity) == ("PID 77 (sleep 60) has already exited", "warning")


def test_a_hostile_command_line_reaches_the_message_cleaned():
    message, _ = send_signal(Target(5, "evil\x1b[2J\nname"), signal.SIGTERM, Recorder())
    assert "\x1b" not in message and "\n" not in message


def test_term_is_offered_first_then_the_usual_signals():
    names = [name for name, _, _ in offered_signals()]
    assert names[0] == "TERM"
    assert {"KILL", "INT", "HUP", "QUIT", "STOP", "CONT", "USR1", "USR2"} <= set(names)


def test_a_real_process_is_really_signalled():
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        message, severity = send_signal(Target(sleeper.pid, "sleep 60"), signal.SIGTERM)
        assert severity == "information"
        assert sleeper.wait(timeout=5) == -signal.SIGTERM
        message, severity = send_signal(Target(sleeper.pid, "sleep 60"), signal.SIGTERM)
        assert "has already exited" in message
    finally:
        sleeper.kill()
        sleeper.wait()


def test_k_and_f9_are_the_kill_keys():
    assert any(key.action == "kill" and set(key.keys.split(",")) == {"k", "f9"} for key in SYMON_KEYS)


# -- the dialog on the monitor ------------------------------------------------------------


@asynccontextmanager
async def running(sender=None, size=(120, 36)):
    demo = make_demo()
    async with demo.app.run_test(size=size) as pilot:
        await pilot.pause()
        if sender is not None:
            demo.app.screen.send_signal = sender
        yield demo.app, pilot


async def press(pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await pilot.pause()


def notes(app) -> list[tuple[str, str]]:
    return [(str(note.message), note.severity) for note in app._notifications]


def dialog_text(app) -> str:
    dialog = app.screen
    parts = [str(dialog.query_one("#signal-target").render())]
    parts += dialog.list.plain_rows()
    parts.append(str(dialog.query_one("#signal-ask").render()))
    return "\n".join(parts)


async def test_k_names_the_target_and_sends_term_after_y():
    sender = Recorder()
    async with running(sender) as (app, pilot):
        table = app.screen.processes
        await press(pilot, "tab", "down")
        target = table.selected_row
        await press(pilot, "k")
        assert isinstance(app.screen, SignalPicker)
        text = dialog_text(app)
        assert f"Send a signal to PID {target.pid} ({target.command}), owned by {target.user}" in text
        assert "› 15 TERM" in text, "TERM is where the cursor starts"
        await press(pilot, "enter")
        assert isinstance(app.screen, SignalPicker), "a second step asks first"
        assert app.screen.question == f"Send SIGTERM (15) to PID {target.pid} ({target.command})?"
        assert sender.sent == []
        await press(pilot, "enter")
        assert sender.sent == [], "enter again does not send: only y does"
        await press(pilot, "y")
        assert not isinstance(app.screen, SignalPicker)
        assert sender.sent == [(target.pid, signal.SIGTERM)]
        assert (f"Sent SIGTERM to PID {target.pid} ({target.command})", "information") in notes(app)


async def test_f9_picks_kill_from_the_list():
    sender = Recorder()
    async with running(sender) as (app, pilot):
        await press(pilot, "tab")
        pid = app.screen.processes.selected_pid
        await press(pilot, "f9", "down", "enter", "y")
        assert sender.sent == [(pid, signal.SIGKILL)]


async def test_n_goes_back_and_escape_sends_nothing():
    sender = Recorder()
    async with running(sender) as (app, pilot):
        await press(pilot, "tab", "k", "enter")
        assert app.screen.question
        await press(pilot, "n")
        assert isinstance(app.screen, SignalPicker) and not app.screen.question
        await press(pilot, "escape")
        assert not isinstance(app.screen, SignalPicker)
        assert sender.sent == []
        await press(pilot, "k", "enter", "escape", "escape")
        assert not isinstance(app.screen, SignalPicker) and sender.sent == []


async def test_a_click_on_a_signal_chooses_it():
    sender = Recorder()
    async with running(sender) as (app, pilot):
        await press(pilot, "tab", "k")
        picker = app.screen
        await pilot.click(picker.list, offset=(3, 2))  # the third signal: INT
        await pilot.pause()
        assert "SIGINT" in picker.question
        await press(pilot, "y")
        assert sender.sent[0][1] == signal.SIGINT


async def test_not_permitted_and_already_gone_are_told():
    async with running(Recorder(PermissionError(1, "Operation not permitted"))) as (app, pilot):
        table = app.screen.processes
        table.select_pid(1)  # systemd, owned by root
        await press(pilot, "k", "enter", "y")
        message, severity = notes(app)[-1]
        assert severity == "error" and "Not permitted to send SIGTERM to PID 1" in message and "belongs to root" in message
    async with running(Recorder(ProcessLookupError(3, "No such process"))) as (app, pilot):
        await press(pilot, "tab", "k", "enter", "y")
        pid = app.screen.processes.selected_pid
        assert notes(app)[-1][0].startswith(f"PID {pid} (") and notes(app)[-1][0].endswith("has already exited")


async def test_the_dialog_really_ends_a_process_it_started():
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        async with running() as (app, pilot):
            table = app.screen.processes
            row = ProcessRow(sleeper.pid, "sleep", "me", 0.0, 4096, 0.0, 1, "sleep 60", ppid=1, state="S")
            table.set_processes([row])
            await press(pilot, "tab", "k", "enter", "y")
            assert sleeper.wait(timeout=5) == -signal.SIGTERM
            assert notes(app)[-1] == (f"Sent SIGTERM to PID {sleeper.pid} (sleep 60)", "information")
    finally:
        sleeper.kill()
        sleeper.wait()


async def test_a_gpu_row_seen_only_by_its_host_pid_is_never_signalled():
    from test_snapshots_gpu import gpu_demo

    from collectors.gpu import GpuProcess

    sender = Recorder()
    demo = gpu_demo(2)
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        app = demo.app
        app.screen.send_signal = sender
        gpu_table = app.screen.gpu_processes
        gpu_table.set_processes([GpuProcess(1, 4012731, 4012731)])
        await press(pilot, "tab", "k")
        assert not isinstance(app.screen, SignalPicker)
        assert "not visible from here" in notes(app)[-1][0]
        assert sender.sent == []
