"""``leet watch`` as people run it: a process over a folder of runs, real sinks on loopback.

Runs join the watched folder as the real SDK wrote them; alerts go to a
webhook server, a Slack-shaped webhook, an SMTP server (aiosmtpd, through
Apprise's ``mailto://``) and a command reading JSON on stdin. The process is
SIGKILLed and started again: nothing is sent twice. A webhook that never
answers costs only itself.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from alert_servers import HookServer, Mailbox, SilentServer, wait_until
from test_openmetrics import stop_process
from wandb_runs import BLOCK_SIZE

from leet.alerts.ledger import Ledger

ROOT = Path(__file__).resolve().parent.parent
NO_CONFIG = {"LEET_CONFIG": ""}
RECORDER = "import sys, pathlib; pathlib.Path(sys.argv[1]).open('a').write(sys.stdin.read().strip() + '\\n')"


def join(run_dir: Path, folder: Path) -> Path:
    """The run's file appears in the watched folder, as a run that starts there; its copy."""
    target = folder / run_dir.name
    target.mkdir()
    for file in run_dir.glob("run-*.wandb"):
        shutil.copy2(file, target / file.name)
    return target


def read_to_the_end(state: Path, run_dir: Path) -> bool:
    """Whether the ledger at ``state`` says the run file in ``run_dir`` was read into its last block (a killed run's last record is cut short)."""
    ledger = Ledger(state)
    files = list(run_dir.glob("run-*.wandb"))
    return bool(files) and all(
        (place := ledger.place(str(file.absolute()))) is not None and place[2] > file.stat().st_size - BLOCK_SIZE for file in files
    )


class Watcher:
    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.out = tmp_path / f"watch-{len(list(tmp_path.glob('watch-*.out')))}.out"
        self.state = tmp_path / "ledger.json"
        self.command = [sys.executable, "-m", "leet", "watch", *args, "--json", "--state", str(self.state)]
        self.process: subprocess.Popen | None = None

    def start(self) -> "Watcher":
        with self.out.open("wb") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, **NO_CONFIG})
        return self

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.out.read_text().splitlines() if line.startswith("{")]

    def text(self) -> str:
        return self.out.read_text()

    def wait_listed(self, folder: Path, timeout: float = 30.0) -> None:
        """Until the watch has listed ``folder`` and written so: a run that joins now is news."""
        assert wait_until(lambda: Ledger(self.state).listed(str(folder.absolute())), timeout), self.text()

    def wait_for_lines(self, count: int, timeout: float = 30.0) -> list[dict]:
        assert wait_until(lambda: len(self.lines()) >= count, timeout), self.text()
        return self.lines()

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        assert self.process is not None
        self.process.terminate()
        return self.process.wait(15)


def test_alerts_reach_every_sink_once_across_a_restart(alert_run, failed_run, killed_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    piped = tmp_path / "piped.jsonl"
    with HookServer() as hook, HookServer() as slack, Mailbox() as mailbox:
        # Mail goes out at most every 5.5 s (Apprise's pace for mail servers): only failures are mailed.
        config = tmp_path / "config.toml"
        config.write_text(
            '[alerts]\non = ["finished", "failed", "alert"]\n\n[[alerts.sinks]]\n'
            f'notify = "mailto://127.0.0.1:{mailbox.port}?mode=insecure&from=leet@example.com&to=oncall@example.com"\non = ["failed"]\n'
        )
        args = (str(folder), "--config", str(config), "--webhook", hook.url(), "--exec", f"{sys.executable} -c \"{RECORDER}\" {piped}")
        watcher = Watcher(tmp_path, *args).start()
        slack_watcher = None
        try:
            watcher.wait_listed(folder)  # an empty folder, watched
            join(alert_run.run_dir, folder)
            join(failed_run.run_dir, folder)
            lines = watcher.wait_for_lines(4)
            assert sorted((line["kind"], line["title"]) for line in lines) == sorted([
                ("alert", "Loss exploded"), ("alert", "Checkpoint saved"),
                ("finished", f"{alert_run.run_id} finished"), ("failed", f"{failed_run.run_id} failed"),
            ])  # the second "Loss exploded" fell inside its 300 s wait
            posts = hook.wait_for(4, timeout=15)
            assert sorted(body["title"] for _, _, body in posts) == sorted(line["title"] for line in lines)
            failed = next(body for _, _, body in posts if body["title"].endswith("failed"))
            assert "exit code 3" in failed["text"] and failed["level"] == "error" and failed == next(line for line in lines if line["kind"] == "failed")
            (mail,) = mailbox.wait_for(1, timeout=15)
            assert str(mail["subject"]) == f"{failed_run.run_id} failed" and "exit code 3" in mail.get_content()
            assert mailbox.envelopes == [("leet@example.com", ["oncall@example.com"])]
            assert wait_until(lambda: piped.exists() and len(piped.read_text().splitlines()) == 4, 15)
            assert {json.loads(line)["ident"] for line in piped.read_text().splitlines()} == {line["ident"] for line in lines}

            # The ledger written after the results came back: nothing owed.
            def settled() -> bool:
                ledger = Ledger(watcher.state)
                return not ledger.pending() and all(len(ledger.reached(line["ident"])) > 2 for line in lines)  # stdout, the webhook, the command

            assert wait_until(settled, 15), Ledger(watcher.state).pending()
            watcher.kill()  # no goodbye: SIGKILL
            again = Watcher(tmp_path, *args).start()
            joined = join(killed_run.run_dir, folder)  # crashed, but "crashed" is off: nothing to tell
            # Once the restarted watch has read the whole of it, what it told is all it will tell of it.
            assert wait_until(lambda: read_to_the_end(again.state, joined), 30), again.text()
            assert again.lines() == [], again.text()
            assert len(hook.posts) == 4 and len(mailbox.messages) == 1 and len(piped.read_text().splitlines()) == 4
            assert again.stop() == 0

            # The same folder to a Slack-shaped webhook, from a fresh ledger: {"text": …} only.
            (tmp_path / "ledger.json").unlink()
            for child in list(folder.iterdir()):
                shutil.rmtree(child)
            slack_watcher = Watcher(tmp_path, str(folder), "--webhook", slack.url(), "--webhook-shape", "slack", "--on", "failed").start()
            slack_watcher.wait_listed(folder)
            join(failed_run.run_dir, folder)
            ((_, _, body),) = slack.wait_for(1, timeout=15)
            assert set(body) == {"text"} and "exit code 3" in body["text"]
        finally:
            stop_process(watcher.process, 5)
            if slack_watcher is not None:
                stop_process(slack_watcher.process, 5)


def test_a_webhook_that_never_answers_costs_only_itself(failed_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    config = tmp_path / "config.toml"
    with SilentServer() as silent, HookServer() as hook:
        config.write_text(f'[alerts]\n[[alerts.sinks]]\nwebhook = "http://127.0.0.1:{silent.port}/s3cr3t-path"\ntimeout = "1s"\n')
        watcher = Watcher(tmp_path, str(folder), "--config", str(config), "--webhook", hook.url()).start()
        try:
            watcher.wait_listed(folder)
            join(failed_run.run_dir, folder)
            (line,) = watcher.wait_for_lines(1)
            printed_at = time.time()
            hook.wait_for(1, timeout=10)
            assert len(hook.posts) == 1 and hook.posts[0][2]["title"] == line["title"]
            assert time.time() - printed_at < 2.0  # the hung sink held nothing up
            # The hung sink says so on stderr, named without its path's secret.
            said = lambda: "alerts.sinks[1]: http://127.0.0.1" in watcher.text() and ("timed out" in watcher.text() or ": hung" in watcher.text())  # noqa: E731
            assert wait_until(said, 15), watcher.text()
            assert "s3cr3t" not in watcher.text()
        finally:
            assert watcher.stop() == 0


def test_nothing_to_watch_says_so():
    result = subprocess.run([sys.executable, "-m", "leet", "watch"], capture_output=True, text=True, cwd=ROOT, env={**os.environ, **NO_CONFIG}, timeout=60)
    assert result.returncode == 2 and result.stderr.strip() == "leet watch: nothing to watch: name runs or folders of runs, or --symon, or --cluster PROM_URL"


def test_a_host_rule_tells_once_while_it_holds_across_restarts(tmp_path):
    state = tmp_path / "ledger.json"

    def once(rule: str) -> list[dict]:
        command = [sys.executable, "-m", "leet", "watch", "--symon", "--rule", rule, "--once", "--json", "--state", str(state)]
        result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, **NO_CONFIG}, timeout=120)
        assert result.returncode == 0, result.stderr
        return [json.loads(line) for line in result.stdout.splitlines()]

    (alert,) = once("memory_percent >= 0")
    assert alert["kind"] == "threshold" and alert["key"] == "memory_percent" and alert["source"] == "host"
    assert 0 <= alert["value"] <= 100 and alert["text"].startswith("memory_percent is ")
    assert once("memory_percent >= 0") == []  # still holding: the same episode, told already
    assert once("memory_percent < 0") == []


class GatedHook:
    """A webhook on a fixed loopback port that holds every POST unanswered until ``open()``, then answers 200."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.arrived: list[dict] = []  # every body that came, answered or not
        self.answered: list[dict] = []  # the bodies answered 200
        self.gate = threading.Event()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook name
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                hook.arrived.append(body)
                hook.gate.wait()
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                    self.wfile.flush()
                except OSError:  # the sender was killed while it waited
                    return
                hook.answered.append(body)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/hook"
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.gate.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def test_alerts_in_flight_when_watch_is_killed_reach_the_webhook_after_a_restart(alert_run, failed_run, killed_run, tmp_path):
    folder = tmp_path / "wandb"
    folder.mkdir()
    join(killed_run.run_dir, folder)  # there before watching: settled, so the ledger is written once the watch has looked
    hook = GatedHook()
    args = (str(folder), "--webhook", hook.url, "--on", "finished,failed,alert")
    watcher = Watcher(tmp_path, *args)
    again = None
    try:
        watcher.start()
        assert wait_until(lambda: (tmp_path / "ledger.json").exists() or watcher.process.poll() is not None, 30)
        assert watcher.process.poll() is None, watcher.text()
        join(alert_run.run_dir, folder)
        join(failed_run.run_dir, folder)
        lines = watcher.wait_for_lines(4)
        assert wait_until(lambda: hook.arrived, 30), watcher.text()
        watcher.kill()  # while a send hangs
        in_flight = len(hook.arrived)
        hook.gate.set()
        again = Watcher(tmp_path, *args).start()
        titles = sorted(line["title"] for line in lines)
        assert wait_until(lambda: sorted({body["title"] for body in hook.answered}) == titles, 60), again.text()
        assert again.stop() == 0
        assert again.lines() == []  # printed once, before the kill
        assert len(hook.arrived) <= len(lines) + in_flight  # repeats: at most the ones in flight
    finally:
        stop_process(watcher.process, 5)
        if again is not None:
            stop_process(again.process, 5)
        hook.close()


def test_a_sink_added_after_a_restart_is_told_once_of_the_episodes_open_now(tmp_path):
    state = tmp_path / "ledger.json"

    def once(*sinks: str) -> list[dict]:
        command = [sys.executable, "-m", "leet", "watch", "--symon", "--rule", "memory_percent >= 0", "--once", "--json", "--state", str(state), *sinks]
        result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, **NO_CONFIG}, timeout=120)
        assert result.returncode == 0, result.stderr
        return [json.loads(line) for line in result.stdout.splitlines()]

    (told,) = once()
    with HookServer() as hook:
        assert once("--webhook", hook.url()) == []  # nothing new to print
        ((_, _, body),) = hook.wait_for(1)
        assert body == told  # the episode still open, told to the sink that came late
        assert once("--webhook", hook.url()) == [] and len(hook.posts) == 1
