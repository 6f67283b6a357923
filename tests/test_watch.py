"""Alerts from real run files: what ``leet watch`` raises, prints and remembers.

The runs are written by the real SDK (``wandb_runs``): one that calls
``run.alert()`` three times (the third inside the first's wait_duration),
one that fails with exit code 3, one SIGKILLed mid-write, and a shared run
whose writers are copied into a watched folder, one of them cut before its
exit record, as a node that died leaves it.
"""

from __future__ import annotations

import io
import json
import os
import queue
import shutil
import time
from pathlib import Path

import pytest
from alert_servers import HookServer, wait_until
from framer import Framer

from leet.alerts.events import ALERT, CRASHED, FAILED, FINISHED, NODE_LOST, THRESHOLD
from leet.alerts.follow import Follower
from leet.alerts.ledger import Ledger
from leet.alerts.rules import parse_rule
from leet.alerts.settings import AlertSettings
from leet.alerts.thresholds import ThresholdWatch
from leet.commands.watch import Watch
from leet.discovery.probe import probe
from leet.model.state import RunState
from leet.runfile import wandb_records_pb2 as pb
from leet.runfile.decode import EventReader


def copy_run(run_dir: Path, folder: Path) -> Path:
    """A run directory's run file copied into ``folder`` (a watched workspace), as a new run appearing: written just now."""
    target = folder / run_dir.name
    target.mkdir(parents=True)
    for file in run_dir.glob("run-*.wandb"):
        shutil.copy(file, target / file.name)  # not copy2: the fixture's own age must not make a run look crashed
    return target


def last_written(run_dir: Path, seconds_ago: float) -> None:
    """Set when the run's files were last written: silence is what the crash rule reads."""
    when = time.time() - seconds_ago
    for file in run_dir.glob("run-*.wandb"):
        os.utime(file, (when, when))


def drain(follower: Follower, now: float | None = None, rounds: int = 3) -> list:
    alerts = []
    for _ in range(rounds):
        alerts += follower.poll(now)
        for followed in follower.files.values():
            followed.next_look = 0.0  # look again at once: the cadence is not what these tests are about
    return alerts


def follow(folder: Path, **options) -> Follower:
    return Follower([folder], ledger=options.pop("ledger", Ledger(None)), **options)


# -- what a file says ---------------------------------------------------------------------


def test_what_was_there_before_watching_is_nobodys_news(alert_run, failed_run, tmp_path):
    for made in (alert_run, failed_run):
        copy_run(made.run_dir, tmp_path)
    ledger = Ledger(None)
    follower = follow(tmp_path, ledger=ledger)
    assert drain(follower) == []
    assert len(follower.files) == 2
    # Settled, so a later reading of the same records raises nothing either.
    assert all(ledger.reached(ident) == {"*"} for ident in ledger._sent)
    assert any(ident.startswith("failed:") for ident in ledger._sent)


def test_a_run_that_joins_raises_its_alerts_its_end_and_its_threshold(alert_run, tmp_path):
    rules = ThresholdWatch([parse_rule("loss > 0.5")])
    follower = follow(tmp_path, thresholds=rules)
    assert drain(follower) == []  # an empty folder waits for runs
    copy_run(alert_run.run_dir, tmp_path)
    alerts = drain(follower)
    kinds = [alert.kind for alert in alerts]
    assert kinds == [THRESHOLD, ALERT, ALERT, ALERT, FINISHED], [(a.kind, a.title) for a in alerts]
    threshold, first, note, again, finished = alerts
    assert threshold.key == "loss" and threshold.value == 0.9 and threshold.run_id == alert_run.run_id  # one episode: 0.9 then 1.5
    assert (first.title, first.text, first.level, first.wait_s) == ("Loss exploded", "loss is 1e9 at step 3", "error", 300.0)
    assert (note.title, note.level, note.wait_s) == ("Checkpoint saved", "info", 60.0)  # the SDK's default wait: a minute
    assert again.text == "loss is 2e9 at step 4"
    assert finished.source == str((tmp_path / alert_run.run_dir.name))
    assert len({alert.ident for alert in alerts}) == 5


def test_a_failed_run_says_its_exit_code(failed_run, tmp_path):
    follower = follow(tmp_path)
    drain(follower)
    copy_run(failed_run.run_dir, tmp_path)
    (failed,) = drain(follower)
    assert failed.kind == FAILED and failed.level == "error"
    assert "exit code 3" in failed.text and failed.run_id == failed_run.run_id


def test_a_killed_run_is_presumed_crashed_once_silent_long_enough(killed_run, tmp_path):
    follower = follow(tmp_path, crash_after=600.0)
    drain(follower)
    copied = copy_run(killed_run.run_dir, tmp_path)
    mtime = (copied / killed_run.wandb_path.name).stat().st_mtime
    assert drain(follower, now=mtime + 30) == []  # quiet for half a minute: still running, as far as anyone knows
    (crashed,) = drain(follower, now=mtime + 601)
    assert crashed.kind == CRASHED and "no exit record" in crashed.text
    assert drain(follower, now=mtime + 1200) == []  # once a silence


def test_a_node_that_stops_writing_while_the_others_go_on_is_lost(shared_run, tmp_path):
    follower = follow(tmp_path, node_lost_after=120.0)
    drain(follower)
    copies = {writer.label: copy_run(writer.run_dir, tmp_path) / writer.wandb_path.name for writer in shared_run.writers}
    lost = copies["rank1"]
    cut_before_exit(lost)  # rank1 died: no exit record
    for label, path in copies.items():
        if label != "rank0":
            cut_before_exit(path)  # the others still write: no exit either
    now = time.time()
    for label, path in copies.items():
        os.utime(path, (now - 300, now - 300) if label == "rank1" else (now - 5, now - 5))
    alerts = [alert for alert in drain(follower, now=now) if alert.kind == NODE_LOST]
    assert [alert.label for alert in alerts] == ["rank1"], [(a.title, a.text) for a in alerts]
    assert "rank1" in alerts[0].title and "other node" in alerts[0].text
    assert [alert for alert in drain(follower, now=now + 10) if alert.kind == NODE_LOST] == []  # once a silence


def test_a_restart_does_not_call_a_node_that_exited_before_it_lost(shared_run, tmp_path):
    folder = tmp_path / "wandb"
    state = tmp_path / "state" / "ledger.json"
    copies = {writer.label: copy_run(writer.run_dir, folder) / writer.wandb_path.name for writer in shared_run.writers}
    for label, path in copies.items():
        if label != "rank1":
            cut_before_exit(path)  # the others still write; rank1 exited five minutes ago
    now = time.time()
    for label, path in copies.items():
        os.utime(path, (now - 300, now - 300) if label == "rank1" else (now - 5, now - 5))
    for _ in range(2):  # the second start reads rank1 on from after its exit record
        ledger = Ledger(state)
        follower = follow(folder, ledger=ledger, node_lost_after=120.0)
        assert [alert for alert in drain(follower, now=now) if alert.kind == NODE_LOST] == []
        ledger.save()


def cut_before_exit(path: Path) -> None:
    exits = [item.offset for item in EventReader(path, live=False).poll().items if item.kind == "exit"]
    if exits:
        os.truncate(path, exits[0])


# -- printing, waiting, remembering -----------------------------------------------------------


def watch_of(folder: Path, ledger: Ledger, **settings) -> tuple[Watch, io.StringIO]:
    out = io.StringIO()
    chosen = AlertSettings(**settings)
    follower = Follower([folder], ledger=ledger)
    return Watch(chosen, follower, ledger, routes=[], json_lines=True, out=out), out


def printed(out: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def step_until_quiet(watch: Watch, rounds: int = 4) -> None:
    for _ in range(rounds):
        watch.step()
        for followed in watch.follower.files.values():
            followed.next_look = 0.0


def test_wait_duration_keeps_a_title_quiet_and_a_restart_tells_nothing_twice(alert_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    state = tmp_path / "state" / "ledger.json"
    watch, out = watch_of(folder, Ledger(state))
    step_until_quiet(watch)
    copy_run(alert_run.run_dir, folder)
    step_until_quiet(watch)
    watch.close()
    lines = printed(out)
    assert [(line["kind"], line["title"]) for line in lines] == [
        (ALERT, "Loss exploded"), (ALERT, "Checkpoint saved"), (FINISHED, f"{alert_run.run_id} finished"),
    ]  # the second "Loss exploded" came inside its 300 s wait
    assert state.exists()

    again, out_again = watch_of(folder, Ledger(state))  # leet watch started again
    step_until_quiet(again)
    assert printed(out_again) == []
    again.close()


def test_a_restart_does_not_take_runs_that_ended_long_ago_for_crashed(alert_run, failed_run, tmp_path):
    folder = tmp_path / "wandb"
    state = tmp_path / "state" / "ledger.json"
    for made in (alert_run, failed_run):
        last_written(copy_run(made.run_dir, folder), seconds_ago=3600)  # ended an hour ago: well past crash_after
    for _ in range(2):  # the second start reads on from where the first left, after the exit records
        watch, out = watch_of(folder, Ledger(state))
        step_until_quiet(watch)
        watch.close()
        assert printed(out) == []


def test_a_restart_finds_the_exit_record_that_a_large_final_summary_follows(alert_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    state = tmp_path / "state" / "ledger.json"
    watch, out = watch_of(folder, Ledger(state))
    step_until_quiet(watch)
    copied = copy_run(alert_run.run_dir, folder)
    (file,) = copied.glob("run-*.wandb")
    with_a_large_summary_after_its_exit(file)
    step_until_quiet(watch)
    watch.close()
    assert [line["kind"] for line in printed(out)][-1] == FINISHED
    last_written(copied, seconds_ago=3600)
    assert probe(copied.name, file, time.time()).state is RunState.FINISHED  # as `leet inspect`, reading it whole, says
    again, out = watch_of(folder, Ledger(state))
    step_until_quiet(again)
    again.close()
    assert printed(out) == []


def with_a_large_summary_after_its_exit(file: Path) -> None:
    """The file as older SDKs leave a run: the final summary after the exit record, here larger than a probe's tail read."""
    framer = Framer()
    framer.data = bytearray(file.read_bytes())
    table = pb.SummaryItem(key="table", value_json=json.dumps("x" * 200_000))
    framer.add(pb.Record(summary=pb.SummaryRecord(update=[table])).SerializeToString())
    file.write_bytes(bytes(framer.data))


def test_a_silent_run_with_no_exit_record_is_presumed_crashed_once_across_restarts(killed_run, tmp_path):
    folder = tmp_path / "wandb"
    state = tmp_path / "state" / "ledger.json"
    copied = copy_run(killed_run.run_dir, folder)
    first, out = watch_of(folder, Ledger(state))
    step_until_quiet(first)
    first.close()
    assert printed(out) == []  # written just now: running, as far as anyone knows
    last_written(copied, seconds_ago=3600)
    kinds = []
    for _ in range(2):
        again, out = watch_of(folder, Ledger(state))
        step_until_quiet(again)
        again.close()
        kinds.append([line["kind"] for line in printed(out)])
    assert kinds == [[CRASHED], []]


def test_events_switched_off_are_not_told(failed_run, alert_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    watch, out = watch_of(folder, Ledger(None), on=frozenset({FAILED}))
    step_until_quiet(watch)
    copy_run(alert_run.run_dir, folder)
    copy_run(failed_run.run_dir, folder)
    step_until_quiet(watch)
    assert [line["kind"] for line in printed(out)] == [FAILED]


@pytest.mark.parametrize("damaged", ["missing", "garbage"])
def test_a_ledger_that_cannot_be_used_is_set_aside_with_a_note(tmp_path, damaged):
    path = tmp_path / "ledger.json"
    if damaged == "garbage":
        path.write_text("{not json")
    ledger = Ledger(path)
    if damaged == "missing":
        assert ledger.note == ""
    else:
        assert "could not be used" in ledger.note and (tmp_path / "ledger.json.bad").exists()
    ledger.record("x", "stdout", 1.0)
    ledger.save()
    assert Ledger(path).reached("x") == {"stdout"}


# -- delivery that outlasts a sink's outage --------------------------------------------------


def webhook_watch(folder: Path, ledger: Ledger, url: str, **delivery) -> tuple[Watch, io.StringIO]:
    from leet.alerts.settings import SinkSpec
    from leet.commands.watch import routes_for

    out = io.StringIO()
    results: queue.SimpleQueue = queue.SimpleQueue()
    routes = routes_for(SinkSpec("webhook", (url,), where="--webhook 1"), results, **delivery)
    return Watch(AlertSettings(), Follower([folder], ledger=ledger), ledger, routes, json_lines=True, out=out, results=results), out


def test_a_webhook_down_longer_than_any_retry_schedule_gets_every_alert_once_up(alert_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    state = tmp_path / "ledger.json"
    with HookServer([500] * 15) as hook:
        watch, out = webhook_watch(folder, Ledger(state), hook.url(), backoff=(0.01,), max_age=3600.0, queue_size=1)  # a full queue waits in the ledger
        step_until_quiet(watch)
        copy_run(alert_run.run_dir, folder)
        step_until_quiet(watch)
        told = {line["ident"] for line in printed(out)}
        assert len(told) == 3
        acknowledged = lambda: {body["ident"] for _, _, body in hook.posts[15:]}  # noqa: E731
        assert wait_until(lambda: watch.step() is not None and acknowledged() >= told, 60), hook.posts
        assert wait_until(lambda: watch.step() is not None and not Ledger(state).pending(), 30)
        watch.close()
    assert {route_name for ident in told for route_name in Ledger(state).reached(ident)} == {"stdout", watch.routes[0].name}


def test_an_alert_past_its_max_age_is_given_up_said_and_kept(failed_run, tmp_path, capsys):
    folder = tmp_path / "wandb"
    folder.mkdir()
    state = tmp_path / "ledger.json"
    with HookServer([500] * 1000) as hook:
        watch, out = webhook_watch(folder, Ledger(state), hook.url(), backoff=(0.01,), max_age=0.2)
        step_until_quiet(watch)
        copy_run(failed_run.run_dir, folder)
        step_until_quiet(watch)
        (line,) = printed(out)
        assert wait_until(lambda: watch.step() is not None and "gave up" in capsys.readouterr().err, 30)
        watch.close()
    ledger = Ledger(state)
    assert ledger.pending() == [] and ledger.given_up(line["ident"]) == {watch.routes[0].name}


def test_max_age_is_a_setting_and_owed_alerts_survive_a_reload(tmp_path):
    from leet.alerts.events import Alert
    from leet.alerts.settings import AlertSettingsError, parse_alerts

    assert parse_alerts({"max_age": "2h"}).max_age == 7200.0 and AlertSettings().max_age == 86400.0
    with pytest.raises(AlertSettingsError, match="max_age"):
        parse_alerts({"max_age": "soon"})
    ledger = Ledger(tmp_path / "ledger.json")
    alert = Alert(THRESHOLD, "loss > 1", "loss is inf", key="loss", value=float("inf"), ident="t:1")
    ledger.owe(alert, ["--webhook 1: http://h/"], 100.0)
    ledger.save()
    ((ident, since, body, sinks),) = Ledger(tmp_path / "ledger.json").owed()
    assert (ident, since, sinks, body) == ("t:1", 100.0, ("--webhook 1: http://h/",), alert.as_json())
