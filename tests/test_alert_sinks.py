"""Alert sinks against real servers: mail through a loopback SMTP server, webhooks to a loopback HTTP server, real commands.

Nothing of Apprise is replaced: every send goes through its plugins to a
server on 127.0.0.1. Secrets are planted in URLs, the environment and files,
and looked for in every name, error and log line.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from alert_servers import HookServer, Mailbox, SilentServer, closed_port

from leet.alerts.events import Alert
from leet.alerts.sinks import AppriseSink, CommandSink, SinkError, command_sink, message_parts, sinks_from, webhook

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cr3tT0ken9f8e7dQx"

ALERT = Alert(
    "failed", "run abc123 failed", "exit code 1\nloss was nan", level="error", time=1_700_000_000.0,
    source="/runs/abc123", run_id="abc123", run_name="lr-sweep", label="rank0", ident="abc123:exit",
)


def mail_url(port: int, to: str = "oncall@example.com") -> str:
    return f"mailto://127.0.0.1:{port}?mode=insecure&from=leet@example.com&to={to}"


@pytest.fixture
def all_logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


# -- mail ---------------------------------------------------------------------------------------


def test_mail_reaches_a_real_smtp_server_with_the_title_as_subject_and_the_text_then_context_as_body():
    with Mailbox() as box:
        sink = AppriseSink(mail_url(box.port))
        sink.send(ALERT, timeout=5)
        [message] = box.wait_for(1)
    assert message["Subject"] == "run abc123 failed"
    assert box.envelopes == [("leet@example.com", ["oncall@example.com"])]
    body = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
    assert body.strip() == "exit code 1\nloss was nan\nrun lr-sweep (abc123) · rank0 · /runs/abc123"
    assert sink.name == f"mailto://127.0.0.1:{box.port}/oncall%40example.com"


def test_mail_to_a_closed_port_fails_with_the_reason_and_no_password(all_logs):
    sink = sinks_from([f"mailto://leet:${{SMTP_PASS}}@127.0.0.1:{closed_port()}?mode=insecure&from=leet@example.com&to=a@example.com"],
                      {"SMTP_PASS": SECRET})[0]
    with pytest.raises(SinkError) as failure:
        sink.send(ALERT, timeout=2)
    assert "Connection refused" in str(failure.value)
    assert SECRET not in str(failure.value) + sink.name + repr(sink) + all_logs.text
    assert sink.name.startswith("mailto://leet:****@127.0.0.1:")


# -- webhooks -----------------------------------------------------------------------------------


def test_a_json_webhook_posts_the_alerts_own_json_to_the_same_path_and_query():
    with HookServer() as server:
        sink = webhook(server.url("/hooks/leet?team=ml&tag=a b"))
        sink.send(ALERT, timeout=5)
        [(path, headers, body)] = server.wait_for(1)
    assert path == "/hooks/leet?team=ml&tag=a+b"
    assert headers["Content-Type"] == "application/json"
    assert body == ALERT.as_json()  # what --exec reads on stdin and --json prints, ident included
    assert body["title"] == "run abc123 failed" and body["kind"] == "failed" and "ident" in body


def test_a_webhook_does_not_follow_a_redirect():
    with HookServer(statuses=[307]) as server:
        with pytest.raises(SinkError, match="307.*redirects are not followed"):
            webhook(server.url()).send(ALERT, timeout=5)
        assert len(server.posts) == 1


def test_a_slack_shaped_webhook_posts_only_a_top_level_text_with_slack_markup_escaped():
    alert = Alert("alert", "<!channel> loss & grad", "see <https://evil.example|here>", run_name="r1")
    with HookServer() as server:
        webhook(server.url("/services/T0/B0/X"), shape="slack").send(alert, timeout=5)
        [(path, _, body)] = server.wait_for(1)
    assert path == "/services/T0/B0/X"
    assert body == {"text": "&lt;!channel&gt; loss &amp; grad\nsee &lt;https://evil.example|here&gt;\nrun r1"}


def test_a_webhook_needs_an_http_url_and_a_known_shape():
    with pytest.raises(ValueError, match="http:// or https://"):
        webhook("ftp://example.com/x")
    with pytest.raises(ValueError, match="http:// or https://"):
        webhook("hooks.example.com/x")
    with pytest.raises(ValueError, match="unknown webhook shape"):
        webhook("https://example.com/x", shape="teams")


def test_a_webhook_secret_in_the_path_or_query_never_shows(all_logs):
    url = f"https://hooks.example.com/services/T0/B0/{SECRET}?token={SECRET}"
    assert SECRET not in webhook(url).name
    dead = webhook(f"http://127.0.0.1:{closed_port()}/services/T0/{SECRET}?key={SECRET}")
    with pytest.raises(SinkError) as failure:
        dead.send(ALERT, timeout=2)
    assert "Connection refused" in str(failure.value)
    assert SECRET not in dead.name + str(failure.value) + all_logs.text
    assert dead.name.startswith("http://127.0.0.1:")


def test_a_server_that_never_answers_fails_within_the_timeout_and_says_so(all_logs):
    with SilentServer() as server:
        sink = webhook(f"http://127.0.0.1:{server.port}/hook/{SECRET}")
        started = time.monotonic()
        with pytest.raises(SinkError, match="timed out"):
            sink.send(ALERT, timeout=1.0)
        took = time.monotonic() - started
    assert took < 1.5
    assert SECRET not in all_logs.text


def test_a_server_answering_an_error_status_is_a_failure():
    with HookServer(statuses=[500]) as server:
        with pytest.raises(SinkError, match="500"):
            webhook(server.url()).send(ALERT, timeout=5)


# -- Apprise URLs -------------------------------------------------------------------------------


def test_a_url_apprise_does_not_know_names_only_its_scheme():
    with pytest.raises(ValueError, match=r"^nosuch:// is not a notification service Apprise knows$"):
        AppriseSink(f"nosuch://{SECRET}@host/{SECRET}")
    with pytest.raises(ValueError) as bad:
        AppriseSink("slack://")
    assert str(bad.value).startswith("slack:// URL cannot be used: ")
    with pytest.raises(ValueError, match="not a notification URL"):
        AppriseSink(SECRET)


def test_apprise_names_keep_tokens_out():
    names = [sink.name for sink in sinks_from([
        f"slack://T1JJ3T3L2/A1BRTD4JD/{SECRET}/#alerts",
        f"ntfy://bob:{SECRET}@ntfy.example.com/leet",
        f"discord://123456/{SECRET}",
    ], {})]
    assert all(SECRET not in name for name in names), names
    assert names[1] == "ntfy://bob:****@ntfy.example.com/leet"


def test_variables_are_read_from_the_environment_and_shown_by_name():
    [sink] = sinks_from(["json://127.0.0.1:8080/hook/${HOOK_TOKEN}"], {"HOOK_TOKEN": SECRET})
    assert sink.name == "json://127.0.0.1:8080/h...k/${HOOK_TOKEN}"
    with pytest.raises(ValueError) as missing:
        sinks_from(["json://127.0.0.1/${NOT_SET}/x"], {})
    assert str(missing.value) == "environment variable NOT_SET is not set (a sink reads ${NOT_SET} from it)"


def test_a_url_file_is_read_line_by_line_skipping_blanks_and_comments(tmp_path):
    urls = tmp_path / "sinks.txt"
    urls.write_text(f"# where alerts go\n\n  json://127.0.0.1:9/{SECRET}  \n# mailto://old@example.com\nntfy://ntfy.example.com/${{TOPIC}}\n")
    sinks = sinks_from([f"@{urls}", "jsons://example.com/"], {"TOPIC": "leet-alerts"})
    assert [sink.name for sink in sinks] == ["json://127.0.0.1:9/s...x", "ntfy://ntfy.example.com/${TOPIC}", "jsons://example.com"]


def test_a_url_file_that_is_missing_or_not_a_file_or_bad_is_one_line_naming_it(tmp_path):
    with pytest.raises(ValueError) as missing:
        sinks_from([f"@{tmp_path}/nope.txt"], {})
    assert str(missing.value) == f"cannot read sink URLs from {tmp_path}/nope.txt: No such file or directory"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO"):
        sinks_from([f"@{fifo}"], {})
    bad = tmp_path / "bad.txt"
    bad.write_text(f"jsons://example.com/\nnosuch://{SECRET}\n")
    with pytest.raises(ValueError) as wrong:
        sinks_from([f"@{bad}"], {})
    assert str(wrong.value) == f"{bad} line 2: nosuch:// is not a notification service Apprise knows"


def test_the_body_is_plain_text_with_unprintable_characters_written_out():
    title, body = message_parts(Alert("alert", "loss\x1b[2J\nexploded", "line one\n\u202eevil\tcol", run_id="r9", source="r9"))
    assert title == "loss\\x1b[2J exploded"
    assert body == "line one\n\\u202eevil\tcol\nrun r9"
    title, body = message_parts(Alert("alert", "a\u2028b", "one\u2028two\r\nthree", run_id="r9", source="r9", label="rank\u20290"))
    assert title == "a b", "a line separator in the title is a space, as any other"
    assert body == "one\ntwo\nthree\nrun r9 · rank\\u20290", "line breaks of any kind are lines; in the one-line context, written out"


# -- commands -----------------------------------------------------------------------------------


def script(tmp_path: Path, name: str, body: str) -> list[str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def test_a_command_gets_the_alert_as_json_on_stdin_and_its_arguments_intact(tmp_path):
    out = tmp_path / "got.json"
    argv = script(tmp_path, "record.py", """
        import json, sys
        with open(sys.argv[1], "w") as out:
            json.dump({"argv": sys.argv[2:], "stdin": json.load(sys.stdin)}, out)
    """)
    tricky = ["two words", "$(touch pwned)", "; rm -rf /", "'quoted'", "*", "${HOME}x"]
    CommandSink([*argv, str(out), *tricky]).send(ALERT, timeout=10)
    got = json.loads(out.read_text())
    assert got["stdin"] == ALERT.as_json()
    assert got["argv"] == tricky
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


def test_a_command_string_is_split_like_a_shell_would_but_run_without_one(tmp_path):
    out = tmp_path / "argv.json"
    argv = script(tmp_path, "argv.py", "import json, sys; json.dump(sys.argv[1:], open(sys.argv[1], 'w'))\n")
    sink = command_sink(f"{argv[0]} {argv[1]} {out} 'a b' \"c | d\" ${{WHO}}", {"WHO": "on call"})
    sink.send(ALERT, timeout=10)
    assert json.loads(out.read_text()) == [str(out), "a b", "c | d", "on call"]
    assert sink.name == os.path.basename(sys.executable)


def test_a_command_past_its_timeout_is_killed_with_its_process_group(tmp_path):
    pid_file = tmp_path / "child.pid"
    argv = script(tmp_path, "slow.py", f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
    """)
    sink = CommandSink(argv)
    started = time.monotonic()
    with pytest.raises(SinkError) as failure:
        sink.send(ALERT, timeout=1.0)
    assert time.monotonic() - started < 3
    assert str(failure.value) == f"{sink.name} did not finish within 1 s and was killed"
    child = int(pid_file.read_text())
    assert wait_gone(child), "the command's child outlived it"


def wait_gone(pid: int, seconds: float = 3) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie re-parented to us would still answer kill(0)
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True
        except (OSError, IndexError):
            return True
        time.sleep(0.05)
    return False


def test_a_failing_command_reports_its_exit_and_last_stderr_line_printable_and_without_secrets(tmp_path):
    argv = script(tmp_path, "fail.py", """
        import sys
        sys.stderr.write("first line\\nbad token " + sys.argv[1] + " \\x1b[31mrefused\\n\\n")
        sys.exit(3)
    """)
    sink = command_sink([*argv, "${PAGER_TOKEN}"], {"PAGER_TOKEN": SECRET})
    with pytest.raises(SinkError) as failure:
        sink.send(ALERT, timeout=10)
    assert str(failure.value) == f"{sink.name} exited with status 3: bad token ${{PAGER_TOKEN}} \\x1b[31mrefused"


def test_a_missing_program_is_a_clear_error_when_made_and_when_run(tmp_path):
    with pytest.raises(ValueError, match=r"^no-such-notifier: program not found, or not executable$"):
        command_sink("no-such-notifier --now", {})
    program = tmp_path / "notify-me"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    sink = CommandSink([str(program)])
    program.unlink()
    with pytest.raises(SinkError, match=r"^cannot run notify-me: No such file or directory$"):
        sink.send(ALERT, timeout=5)
    with pytest.raises(ValueError, match="cannot split"):
        command_sink("notify 'unclosed", {})


def test_importing_the_sinks_does_not_import_apprise():
    code = "import sys, leet.alerts.sinks, leet.alerts.delivery; print('apprise' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.strip() == "False", result.stderr
