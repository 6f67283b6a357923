"""Files built to hurt leet: what each costs the parser as it was handed them, and what leet does with them now.

    python3 benchmarks/hostile_config.py

"before": the file's text handed straight to the parser leet used (``tomllib``
or ``json``), in a child process held to 4 GiB of address space and 60 s:
what ``leet symon`` / ``leet watch`` did before the files were bounded.
"after": ``python -m leet symon --once`` (a config) or ``leet watch --once
--state FILE`` (a ledger) on the same file. Each row gives the exit status,
the child's peak RSS (``getrusage(RUSAGE_CHILDREN)`` in a small parent of its
own) and its wall time. Then what real ledgers weigh, for their size bound.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leet.alerts.ledger import MAX_BYTES, MAX_IDENTS, Ledger  # noqa: E402

# Runs argv[2:] and writes its peak RSS in KB to argv[1]; a fresh small parent, since a child's peak counts the memory of what forked it.
MEASURED = (
    "import resource, subprocess, sys\n"
    "def limit():\n"
    "    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
    "try:\n"
    "    code = subprocess.call(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=limit, timeout=60)\n"
    "except subprocess.TimeoutExpired:\n"
    "    code = 'timeout'\n"
    "open(sys.argv[1], 'w').write(f'{code} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}')\n"
)
PARSE_TOML = "import sys, tomllib; tomllib.loads(open(sys.argv[1]).read())"
PARSE_JSON = "import sys, json; json.loads(open(sys.argv[1]).read())"
LONG_SOURCE = "/home/someone/projects/a-long-project-name/wandb/run-20250101_120000-abcdefgh/run-abcdefgh.wandb"


def configs(folder: Path) -> list[tuple[str, Path]]:
    cases = {
        "dotted key, 8,000 parts": "a" + ".a" * 7_999 + " = 1\n",
        "dotted key, 100,000 parts": "a" + ".a" * 99_999 + " = 1\n",
        "array 100,000 deep": "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
        "inline tables 100,000 deep": "x = " + "{a = " * 100_000 + "1" + "}" * 100_000 + "\n",
    }
    paths = []
    for name, text in cases.items():
        path = folder / f"{len(paths)}.toml"
        path.write_text(text)
        paths.append((name, path))
    big = folder / "big.toml"
    with open(big, "w") as handle:
        for _ in range(50):
            handle.write(f"# {'padding ' * 12}\n" * 10_000)
    paths.append(("config of 50 MB", big))
    return paths


def ledgers(folder: Path) -> list[tuple[str, Path]]:
    cases = {
        "ledger holding 1e400": '{"version":1,"sent":{"x":{"t":1e400,"sinks":["*"]}},"files":{},"titles":{}}',
        "ledger nested 100,000 deep": '{"version":1,"sent":' + "[" * 100_000 + "]" * 100_000 + "}",
    }
    paths = []
    for name, text in cases.items():
        path = folder / f"ledger{len(paths)}.json"
        path.write_text(text)
        paths.append((name, path))
    big = folder / "big-ledger.json"
    with open(big, "w") as handle:
        handle.write('{"version":1,"sent":{')
        entry = f'"alert:{LONG_SOURCE}:%d":{{"t":1700000000.5,"sinks":["*"]}},'
        for chunk in range(200):
            handle.write("".join(entry % (chunk * 10_000 + n) for n in range(10_000)))
            if handle.tell() > 200 << 20:
                break
        handle.write('"end":{"t":1,"sinks":[]}},"files":{},"titles":{}}')
    paths.append(("ledger of 200 MB", big))
    return paths


def measured(argv: list[str], folder: Path, environ: dict[str, str]) -> tuple[str, float, float]:
    figure = folder / "maxrss"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", MEASURED, str(figure), *argv], env=environ, check=False)
    wall = time.perf_counter() - started
    code, rss = figure.read_text().split()
    return code, int(rss) / 1024, wall


def main() -> None:
    environ = {key: value for key, value in os.environ.items() if key != "LEET_CONFIG"}
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        (folder / "runs").mkdir()
        environ["LEET_STATE_DIR"] = str(folder / "state")
        print(f"{'file':<30} {'bytes':>12} | {'before: exit':>12} {'peak MB':>8} {'s':>6} | {'after: exit':>11} {'peak MB':>8} {'s':>6}")
        for name, path in configs(folder) + ledgers(folder):
            is_config = path.suffix == ".toml"
            before = measured([sys.executable, "-c", PARSE_TOML if is_config else PARSE_JSON, str(path)], folder, environ)
            if is_config:
                after = measured([sys.executable, "-m", "leet", "symon", "--once"], folder, {**environ, "LEET_CONFIG": str(path)})
            else:
                state = folder / "state.json"
                os.replace(path, state)
                after = measured(
                    [sys.executable, "-m", "leet", "watch", "--once", "--state", str(state), str(folder / "runs")], folder, {**environ, "LEET_CONFIG": str(folder / "none")}
                )
                path = state.with_name("state.json.bad")
            size = path.stat().st_size
            print(f"{name:<30} {size:>12,} | {before[0]:>12} {before[1]:>8.0f} {before[2]:>6.2f} | {after[0]:>11} {after[1]:>8.0f} {after[2]:>6.2f}")
        print()
        print(f"{'ledger of':<30} {'bytes':>12}   (bound: {MAX_BYTES:,})")
        for count in (10_000, MAX_IDENTS):
            path = folder / f"real-{count}.json"
            ledger = Ledger(path)
            for n in range(count):
                ledger.record(f"alert:{LONG_SOURCE}:{n * 4096}", "slack", when=1_700_000_000.0 + n)
                ledger.leave(f"{LONG_SOURCE}{n % 300}", 2049, 1_000_000 + n, n * 4096)
            ledger.save()
            print(f"{f'{count:,} alerts, 300 files':<30} {path.stat().st_size:>12,}")


if __name__ == "__main__":
    main()
