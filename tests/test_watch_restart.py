"""``leet watch`` killed and started again over a folder of runs: what appeared while nobody watched is news.

The ledger remembers the folders it has listed: on a restart, a run whose
file the ledger has never seen joined while the watch was down (or before
its place was written), so it is read from its first record, not settled
as if it had been there before anyone watched.
"""

from __future__ import annotations

import io
from pathlib import Path

from alert_servers import HookServer, wait_until
from test_watch import copy_run, printed, step_until_quiet, watch_of

from leet.alerts.events import ALERT, FAILED, FINISHED
from leet.alerts.follow import Follower
from leet.alerts.ledger import Ledger
from leet.alerts.settings import AlertSettings, SinkSpec
from leet.commands.watch import Watch, answers_for, routes_for


def acknowledging_watch(folder: Path, ledger: Ledger, url: str) -> Watch:
    """A watch of ``folder`` posting to the webhook at ``url``, wired as ``leet watch`` wires it; its stdout is ``watch.out``."""
    results = answers_for(ledger)
    routes = routes_for(SinkSpec("webhook", (url,), where="--webhook 1"), results)
    return Watch(AlertSettings(), Follower([folder], ledger=ledger), ledger, routes, json_lines=True, out=io.StringIO(), results=results)


def test_a_run_that_joins_while_the_watch_is_down_is_told_after_the_restart(alert_run, failed_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    copy_run(failed_run.run_dir, folder)  # there before anyone watched: nobody's news
    state = tmp_path / "state" / "ledger.json"
    first, out = watch_of(folder, Ledger(state))
    step_until_quiet(first)
    assert printed(out) == [] and state.exists()
    # Killed: no close, nothing more written. A run joins while it is down.
    joined = copy_run(alert_run.run_dir, folder)
    again, out = watch_of(folder, Ledger(state))
    step_until_quiet(again)
    again.close()
    assert [line["kind"] for line in printed(out)] == [ALERT, ALERT, FINISHED]
    assert {line["source"] for line in printed(out)} == {str(joined)}


def test_a_folder_listed_for_the_first_time_is_still_nobodys_news_after_a_kill_before_any_save(failed_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    copy_run(failed_run.run_dir, folder)
    state = tmp_path / "state" / "ledger.json"
    watch_of(folder, Ledger(state))  # killed before its first save: the ledger was never written
    assert not state.exists()
    again, out = watch_of(folder, Ledger(state))
    step_until_quiet(again)
    again.close()
    assert printed(out) == [], "what was there before any watch wrote its ledger is still nobody's news"
    assert FAILED not in {line["kind"] for line in printed(out)}


def test_a_kill_after_the_webhook_acknowledged_sends_nothing_again(alert_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    state = tmp_path / "state" / "ledger.json"
    with HookServer() as hook:
        first = acknowledging_watch(folder, Ledger(state), hook.url())
        step_until_quiet(first)
        copy_run(alert_run.run_dir, folder)
        step_until_quiet(first)  # told, owed, written, handed to the webhook
        told = {line["ident"] for line in printed(first.out)}  # type: ignore[arg-type]
        assert len(told) == 3
        # The webhook acknowledged each, and the sink's thread heard so; the loop has not written it to the ledger yet.
        assert wait_until(lambda: first.results.qsize() == 3, 30) and {body["ident"] for _, _, body in hook.posts} == told
        for route in first.routes:  # kill -9: the threads end, nothing more is written
            route.delivery.close(5)

        again = acknowledging_watch(folder, Ledger(state), hook.url())
        step_until_quiet(again)
        assert again.routes[0].delivery.flush(30)
        assert len(hook.posts) == 3, [body["ident"] for _, _, body in hook.posts]
        again.close()
