"""Files leet reads that are built to hurt it: each is refused in one line that names it, with little memory and no traceback.

A config whose one key has 100,000 dotted parts makes Python's TOML parser
quadratic; nesting 100,000 deep overflows its recursion; a ledger holding
``1e400`` reads as infinity. Each case runs the real command in a child
process, and the child's own peak memory is read with ``os.wait4``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leet.alerts.ledger import Ledger

MAX_RSS_MB = 100


# Runs leet and writes its peak RSS in KB; a fresh small parent, since a child's peak counts the memory of what forked it.
MEASURED = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call([sys.executable, '-m', 'leet', *sys.argv[2:]], stdin=subprocess.DEVNULL)\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(code)\n"
)


def run_leet(args: list[str], tmp_path: Path, **environ: str) -> tuple[int, str, float]:
    """Exit status, stderr and the peak RSS in MB of ``python -m leet ARGS``."""
    env = {key: value for key, value in os.environ.items() if key != "LEET_CONFIG"}
    env.update({"LEET_STATE_DIR": str(tmp_path / "state"), **environ})
    figure = tmp_path / "maxrss"
    done = subprocess.run([sys.executable, "-c", MEASURED, str(figure), *args], capture_output=True, env=env)
    return done.returncode, done.stderr.decode("utf-8", "replace"), int(figure.read_text()) / 1024


def hostile_config(kind: str) -> str:
    if kind == "dotted key":
        return "a" + ".a" * 99_999 + " = 1\n"
    if kind == "deep array":
        return "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    if kind == "deep inline tables":
        return "x = " + "{a = " * 100_000 + "1" + "}" * 100_000 + "\n"
    assert kind == "50 MB"
    return ""


CONFIGS = {
    "dotted key": "line 1: a key of 100,000 dotted parts",
    "deep array": "line 1: nested deeper than",
    "deep inline tables": "line 1: nested deeper than",
    "50 MB": "larger than 1 MiB",
}


@pytest.mark.parametrize("kind", list(CONFIGS))
@pytest.mark.parametrize("command", [["symon", "--once"], ["watch", "--once"]])
def test_a_hostile_config_is_one_line_naming_it(tmp_path, kind, command):
    path = tmp_path / "config.toml"
    path.write_text(hostile_config(kind))
    if kind == "50 MB":
        with open(path, "a") as handle:
            for _ in range(50):
                handle.write("# padding\n" * 100_000)
    if command[0] == "watch":
        command = [*command, str(tmp_path / "runs")]
        (tmp_path / "runs").mkdir()
    code, err, rss = run_leet(command, tmp_path, LEET_CONFIG=str(path))
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and CONFIGS[kind] in lines[0], err
    assert rss < MAX_RSS_MB, f"{rss:.0f} MB"


def hostile_ledger(kind: str, path: Path) -> None:
    if kind == "1e400":
        path.write_text('{"version":1,"sent":{"x":{"t":1e400,"sinks":["*"]}},"files":{},"titles":{}}')
    elif kind == "NaN":
        path.write_text('{"version":1,"sent":{},"files":{},"titles":{"a\\u0000b":NaN}}')
    elif kind == "nested":
        path.write_text('{"version":1,"sent":' + "[" * 100_000 + "]" * 100_000 + "}")
    else:
        with open(path, "wb") as handle:
            handle.truncate(200 << 20)  # sparse: 200 MB on paper


LEDGERS = {"1e400": "not a finite number", "NaN": "not a finite number", "nested": "nested deeper than", "200 MB": "larger than"}


@pytest.mark.parametrize("kind", list(LEDGERS))
def test_a_hostile_ledger_is_set_aside_and_named(tmp_path, kind):
    ledger = tmp_path / "ledger.json"
    hostile_ledger(kind, ledger)
    (tmp_path / "runs").mkdir()
    code, err, rss = run_leet(["watch", "--once", "--state", str(ledger), str(tmp_path / "runs")], tmp_path, LEET_CONFIG="")
    assert code == 0, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if str(ledger) in line]
    assert len(lines) == 1 and LEDGERS[kind] in lines[0] and "could not be used" in lines[0], err
    assert (tmp_path / "ledger.json.bad").exists()
    assert rss < MAX_RSS_MB, f"{rss:.0f} MB"


@pytest.mark.parametrize("kind", list(LEDGERS))
def test_a_hostile_ledger_starts_afresh_in_process(tmp_path, kind):
    path = tmp_path / "ledger.json"
    hostile_ledger(kind, path)
    ledger = Ledger(path)
    assert LEDGERS[kind] in ledger.note and ledger.reached("x") == frozenset()


def test_a_ledger_of_many_alerts_still_loads(tmp_path):
    path = tmp_path / "ledger.json"
    ledger = Ledger(path)
    source = "/home/someone/projects/a-long-project-name/wandb/run-20250101_120000-abcdefgh/run-abcdefgh.wandb"
    for n in range(50_000):
        ledger.record(f"alert:{source}:{n * 4096}", "slack://hooks", when=1_700_000_000.0 + n)
    ledger.save()
    again = Ledger(path)
    assert again.note == "" and again.reached(f"alert:{source}:0") == {"slack://hooks"}


def test_a_rules_file_past_its_bound_is_refused(tmp_path):
    from leet.alerts.settings import rules_from_file

    path = tmp_path / "rules.txt"
    path.write_text("gpu.*.temp > 85\n" * 100_000)  # 1.6 MB: read whole, it was cut at 1 MiB mid-rule
    with pytest.raises(ValueError, match="larger than 1 MiB"):
        rules_from_file(str(path), ValueError)
    path.write_text("gpu.*.temp > 85 " + "x" * 10_000 + "\n")
    with pytest.raises(ValueError, match="line 1: longer than"):
        rules_from_file(str(path), ValueError)


def test_a_url_file_with_a_huge_line_is_refused(tmp_path):
    from leet.alerts.sinks.apprise_sink import sinks_from

    path = tmp_path / "urls"
    path.write_text("json://localhost/" + "a" * 100_000 + "\n")
    with pytest.raises(ValueError, match="line 1: longer than"):
        sinks_from([f"@{path}"], {})


def test_a_valid_config_near_the_bounds_still_parses(tmp_path):
    from leet.config.files import parse_toml

    text = (
        'theme = "nord"  # [[[[ { a.b.c.d = 1 in a comment\n'
        'note.x = """a.b.c.d.e.f [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n]]]"""\n'
        "floats.y = [" + ", ".join("1.5" for _ in range(50_000)) + "]\n"
        "deep.z = " + "[" * 20 + "]" * 20 + "\n"
        "[a.b.c.d.e.f.g.h]\nk = 1\n"
    )
    data = parse_toml(text, tmp_path / "config.toml")
    assert data["note"]["x"].startswith("a.b.c") and len(data["floats"]["y"]) == 50_000 and data["a"]["b"]["c"]["d"]["e"]["f"]["g"]["h"] == {"k": 1}


def test_json_of_the_ledger_holds_finite_numbers_only(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"version": 1, "sent": {}, "files": {}, "titles": {"a": 1.0}}))
    assert Ledger(path).note == ""
