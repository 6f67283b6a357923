"""Regenerate the vintage run-file fixtures in ``tests/fixtures/vintage``.

Each wandb SDK release is installed into its own throwaway venv (this needs
network access for pip; the tests that read the fixtures do not), then small
writer programs log offline runs with it (``WANDB_MODE=offline``, no git, no
code saving, UTC).  Only the ``.wandb`` transaction logs are kept, in the
layout the SDK wrote them::

    tests/fixtures/vintage/<release>/<case>/wandb/offline-run-…-<id>/run-<id>.wandb
    tests/fixtures/vintage/<release>/<case>/wandb/latest-run -> offline-run-…

plus ``MANIFEST.json`` describing every case (merged, so regenerating a few
releases keeps the entries of the others).

Usage::

    python tests/vintage/make_runs.py                       # every release
    python tests/vintage/make_runs.py --releases 0.10.33,0.12.21
    python tests/vintage/make_runs.py --out /tmp/vintage --cases basic,killed
    python tests/vintage/make_runs.py --venvs /tmp/vv       # reuse/keep venvs

Run it from anywhere; it takes a few minutes per release (most of it pip).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE.parent / "fixtures" / "vintage"

# release -> extra pip requirements (beside wandb==release)
RELEASES: dict[str, list[str]] = {
    # protobuf 4 breaks its generated modules; numpy 2 removed np.float_
    "0.10.33": ["protobuf<3.20", "numpy<2", "pillow"],
    "0.12.21": ["protobuf<4", "numpy<2", "pillow"],
    "0.15.12": ["numpy<2", "pillow"],
    "0.17.9": ["numpy", "pillow"],
    "0.19.11": ["numpy", "pillow"],
    "0.22.3": ["numpy", "pillow"],
    "0.31.0": ["numpy", "pillow"],
}

# What we learnt writing with each release (copied into the manifest).
RELEASE_NOTES = {
    "0.10.33": "needs protobuf<3.20 and numpy<2 (np.float_); no stats-interval setting (one stats sample, at exit); Settings() rejects unknown keys, so no disable_git; no shared mode",
    "0.12.21": "needs numpy<2; stats every _stats_sample_rate_seconds x _stats_samples_to_average (min 0.5 s x 2); no shared mode",
    "0.15.12": "needs numpy<2; no shared mode (no x_label/x_primary)",
    "0.17.9": "last Python-internal writer; no shared mode (has _shared but no x_label/x_primary)",
    "0.19.11": "wandb-core writer; x_label/x_primary but no x_sync_dir_suffix (writers started 1.5 s apart for distinct directories); "
    "a secondary with x_update_finish_state=False hung in finish() offline, so it is not set",
    "0.22.3": "x_sync_dir_suffix exists; x_update_finish_state=False also hung the secondary offline, so not set",
    "0.31.0": "define_metric() no longer takes goal=; x_transaction_log_flush_interval set to 1 s",
}

CASES = ["basic", "resumed", "define_metric", "trainer", "shared", "killed", "empty"]

EXPECT = {
    "basic": "finished, exit 0; nested config, 6 steps of loss/acc/val.loss, one image, summary best=0.123",
    "resumed": "two segments of one id; seg1 finished with exit code 1, seg2 resumed (resume='allow') and finished 0",
    "define_metric": "finished 0; epoch step metric for val/*, val/loss summary min, train/acc summary max, secret hidden",
    "trainer": "finished 0; Hugging Face Trainer pattern: * against train/global_step (10,20,...) with step_sync; _step differs",
    "shared": "one run id, two writers: rank0 primary (little history), rank1 secondary with loss/acc history; both finish 0",
    "killed": "no exit record: writer and service SIGKILLed after 200 steps (~60 KB; pre-0.31 writers lose the unflushed tail); crashed once stale",
    "empty": "SIGKILL right after wandb.init returned (see size_bytes); a 0-byte file if the SDK left one",
}

WRITER = textwrap.dedent(
    r"""
    import os, sys, time, json
    import wandb

    CASE, ROLE = sys.argv[1], sys.argv[2]
    STATS_INTERVAL = 1.0

    def settings(**extra):
        want = dict(
            x_stats_sampling_interval=STATS_INTERVAL,
            _stats_sample_rate_seconds=STATS_INTERVAL / 2,
            _stats_samples_to_average=2,
            disable_git=True,
            save_code=False,
            disable_code=True,
            x_transaction_log_flush_interval=1.0,
        )
        want.update(extra)
        ok = {}
        for key, value in want.items():
            try:
                probe = wandb.Settings(**{key: value})
            except Exception:
                continue
            if hasattr(probe, key):
                ok[key] = value
        print("settings used:", sorted(ok), file=sys.stderr)
        return wandb.Settings(**ok)

    def note(text):
        with open(os.environ["VINTAGE_READY"] + ".notes", "a") as f:
            f.write(text + "\n")

    def ready():
        open(os.environ["VINTAGE_READY"], "w").write("ready")
        while True:
            time.sleep(1)

    def init(**kw):
        extra = kw.pop("extra_settings", {})
        return wandb.init(project="vintage", settings=settings(**extra), **kw)

    def finish(run, code=0):
        if code:
            run.finish(exit_code=code)
        else:
            run.finish()

    if CASE == "basic":
        import numpy as np
        run = init(id="basic01", name="basic", config={
            "lr": 0.01, "epochs": 3, "model": {"layers": 2, "act": "relu", "sizes": [8, 4]}})
        print("hello from the basic case")
        for i in range(6):
            row = {"loss": 1.0 / (i + 1), "acc": i / 10, "val": {"loss": 2.0 / (i + 1)}}
            if i == 3:
                row["img"] = wandb.Image(np.arange(48, dtype=np.uint8).reshape(4, 4, 3))
            run.log(row)
            time.sleep(0.8)
        run.summary["best"] = 0.123
        print("done")
        time.sleep(1.5)
        finish(run)

    elif CASE == "resumed":
        if ROLE == "a":
            run = init(id="resum01", name="resumed", resume="allow", config={"phase": "a"})
            for i in range(4):
                run.log({"loss": 1.0 / (i + 1), "acc": i / 10})
                time.sleep(0.5)
            time.sleep(1.0)
            finish(run, 1)
        else:
            run = init(id="resum01", name="resumed", resume="allow", config={"phase": "b"})
            for i in range(3):
                run.log({"loss": 0.1 / (i + 1), "acc": 0.5 + i / 10})
                time.sleep(0.5)
            time.sleep(1.0)
            finish(run)

    elif CASE == "define_metric":
        run = init(id="defmet1", name="define_metric")
        run.define_metric("epoch")
        run.define_metric("val/*", step_metric="epoch")
        try:
            run.define_metric("val/loss", summary="min", goal="minimize")
        except TypeError:  # 0.31 dropped goal=
            note("define_metric(goal=) not accepted; defined without goal")
            run.define_metric("val/loss", summary="min")
        run.define_metric("secret", hidden=True)
        try:
            run.define_metric("train/acc", summary="max", goal="maximize")
        except TypeError:
            run.define_metric("train/acc", summary="max")
        for e in range(4):
            run.log({"epoch": e, "val/loss": [0.9, 0.5, 0.7, 0.6][e], "val/acc": 0.2 * e})
            run.log({"train/acc": [0.3, 0.8, 0.6, 0.7][e], "secret": 42 + e})
            time.sleep(0.6)
        time.sleep(1.0)
        finish(run)

    elif CASE == "trainer":
        run = init(id="trainr1", name="trainer", config={"learning_rate": 5e-5, "num_train_epochs": 2})
        run.define_metric("train/global_step")
        run.define_metric("*", step_metric="train/global_step", step_sync=True)
        for k in range(1, 6):
            gs = 10 * k
            run.log({"train/loss": 2.0 / k, "train/learning_rate": 5e-5 * (1 - k / 6),
                     "train/epoch": k / 3, "train/global_step": gs})
            if k == 3:
                run.log({"eval/loss": 1.1, "eval/runtime": 0.5, "train/global_step": gs})
            time.sleep(0.6)
        time.sleep(1.0)
        finish(run)

    elif CASE == "shared":
        primary = ROLE == "rank0"
        extra = {"x_label": ROLE, "x_primary": primary}
        if not primary:
            extra["x_sync_dir_suffix"] = "1"
        run = init(id="shared1", name="shared", extra_settings=extra)
        for i in range(1 if primary else 6):
            run.log({"loss": 1.0 / (i + 1), "acc": i / 10} if not primary else {"rank0_note": 1})
            time.sleep(0.7)
        time.sleep(1.0)
        finish(run)

    elif CASE == "killed":
        run = init(id="killed1", name="killed")
        # Writers before 0.31 only write whole 32 KiB blocks (or 8 KiB
        # buffers) until the run ends: log ~60 KB so something reaches disk.
        for i in range(200):
            row = {"loss": 1.0 / (i + 1), "acc": i / 200}
            row.update({f"m{k}": k + i / 1000 for k in range(6)})
            run.log(row)
            time.sleep(0.01)
        time.sleep(4.0)  # past the flush interval (1 s where settable) and a stats sample
        ready()

    elif CASE == "empty":
        run = init(id="empty01", name="empty")
        ready()
    """
)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def make_venv(release: str, root: Path) -> Path:
    venv = root / release
    py = venv / "bin" / "python"
    marker = venv / ".vintage-ok"
    if marker.exists():
        return py
    if venv.exists():
        shutil.rmtree(venv)
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    reqs = [f"wandb=={release}", *RELEASES.get(release, ["numpy", "pillow"])]
    log(f"{release}: pip install {' '.join(reqs)}")
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *reqs],
        check=True,
        timeout=900,
    )
    marker.write_text(" ".join(reqs))
    return py


def writer_env(case_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_") and k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(
        WANDB_MODE="offline",
        WANDB_SILENT="true",
        WANDB_DIR=str(case_dir),
        WANDB_DISABLE_GIT="true",
        WANDB_DISABLE_CODE="true",
        WANDB_ERROR_REPORTING="false",
        WANDB_CONSOLE="wrap",
        WANDB_CONFIG_DIR=str(case_dir / ".config"),
        WANDB_CACHE_DIR=str(case_dir / ".cache"),
        WANDB_DATA_DIR=str(case_dir / ".data"),
        WANDB_ANONYMOUS="never",
        TZ="UTC",
        LC_ALL="C.UTF-8",
        LANG="C.UTF-8",
        HOME=str(case_dir / ".home"),
        PYTHONUNBUFFERED="1",
    )
    (case_dir / ".home").mkdir(parents=True, exist_ok=True)
    return env


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def run_writer(py: Path, script: Path, case: str, role: str, case_dir: Path, *, kill: bool = False) -> dict:
    env = writer_env(case_dir)
    ready = case_dir / f".ready-{role}"
    env["VINTAGE_READY"] = str(ready)
    errlog = case_dir / f".writer-{role}.log"
    with open(errlog, "w") as err:
        proc = subprocess.Popen(
            [str(py), str(script), case, role],
            cwd=case_dir,
            env=env,
            stdout=err,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        info: dict = {"role": role}
        if not kill:
            try:
                info["rc"] = proc.wait(timeout=180)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                info["rc"] = "timeout"
            return info
        deadline = time.time() + 180
        while not ready.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        # Kill the writer, its process group and every descendant (the wandb
        # service / internal process may sit in its own session) at once.
        victims = [proc.pid, *descendants(proc.pid)]
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        info["killed_pids"] = len(victims)
        info["was_ready"] = ready.exists()
        return info


def run_case(py: Path, script: Path, release: str, case: str, work: Path) -> tuple[Path, list[dict]]:
    case_dir = work / release / case
    case_dir.mkdir(parents=True)
    runs: list[dict] = []
    if case == "resumed":
        runs.append(run_writer(py, script, case, "a", case_dir))
        time.sleep(1.2)  # new directory name (seconds resolution)
        runs.append(run_writer(py, script, case, "b", case_dir))
    elif case == "shared":
        with concurrent.futures.ThreadPoolExecutor(2) as pool:  # both at once
            f0 = pool.submit(run_writer, py, script, case, "rank0", case_dir)
            time.sleep(1.5)  # releases without x_sync_dir_suffix: distinct directory names
            f1 = pool.submit(run_writer, py, script, case, "rank1", case_dir)
            runs += [f0.result(), f1.result()]
    elif case in ("killed", "empty"):
        runs.append(run_writer(py, script, case, "main", case_dir, kill=True))
    else:
        runs.append(run_writer(py, script, case, "main", case_dir))
    return case_dir, runs


def supports(py: Path, case: str) -> str | None:
    """None if the release can write this case, else why not."""
    if case == "shared":
        probe = "import wandb; s = wandb.Settings(x_label='a', x_primary=True); assert s.x_label == 'a'"
    elif case in ("define_metric", "trainer"):
        probe = "import wandb; assert hasattr(wandb.sdk.wandb_run.Run, 'define_metric')"
    else:
        return None
    env = dict(os.environ, WANDB_SILENT="true", WANDB_MODE="offline")
    r = subprocess.run([str(py), "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode == 0:
        return None
    last = (r.stderr.strip().splitlines() or ["?"])[-1]
    return f"not supported by this release ({last[:160]})"


def copy_case(case_dir: Path, dest: Path, prefix: str) -> dict:
    """Copy only the .wandb files and the latest-run link into dest/wandb.

    Paths in the result are ``prefix/…`` (relative to the fixtures root).
    """
    src = case_dir / "wandb"
    if dest.exists():
        shutil.rmtree(dest)
    files: list[str] = []
    sizes: dict[str, int] = {}
    for f in sorted(src.glob("*/run-*.wandb")):
        if f.parent.is_symlink():  # latest-run
            continue
        rel = f.relative_to(case_dir)
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest / rel)
        files.append(f"{prefix}/{rel}")
        sizes[f"{prefix}/{rel}"] = f.stat().st_size
    latest = src / "latest-run"
    latest_target = None
    if latest.is_symlink():
        latest_target = os.path.basename(os.readlink(latest).rstrip("/"))
        (dest / "wandb").mkdir(parents=True, exist_ok=True)
        os.symlink(latest_target, dest / "wandb" / "latest-run")
    return {"files": files, "size_bytes": sizes, "latest_run": latest_target}


def wandb_version(py: Path) -> str:
    r = subprocess.run(
        [str(py), "-c", "import importlib.metadata as m; print(m.version('wandb'))"],
        capture_output=True,
        text=True,
    )
    return r.stdout.strip()


def do_release(release: str, cases: list[str], venvs: Path, work: Path, out: Path) -> list[dict]:
    entries: list[dict] = []
    t0 = time.time()
    try:
        py = make_venv(release, venvs)
    except Exception as error:  # noqa: BLE001 - record and go on
        log(f"{release}: install failed: {error}")
        return [{"release": release, "case": c, "files": [], "notes": f"install failed: {error}"} for c in cases]
    script = work / f"writer-{release}.py"
    script.write_text(WRITER)
    for case in cases:
        entry: dict = {"release": release, "case": case, "expect": EXPECT[case]}
        why_not = supports(py, case)
        if why_not:
            entry.update(files=[], notes=why_not)
            entries.append(entry)
            log(f"{release}/{case}: {why_not}")
            continue
        case_dir, runs = run_case(py, script, release, case, work)
        dest = out / release / case
        entry.update(copy_case(case_dir, dest, f"{release}/{case}"))
        entry["writers"] = runs
        notes = []
        for f in sorted(case_dir.glob(".ready-*.notes")):
            notes += f.read_text().split("\n")[:-1]
        for r in runs:
            if r.get("rc") not in (0, None):
                logtail = (case_dir / f".writer-{r['role']}.log").read_text(errors="replace")[-600:]
                notes.append(f"writer {r['role']} exited {r['rc']}: {logtail}")
        if case == "empty":
            sizes = list(entry["size_bytes"].values())
            if sizes and all(s == 0 for s in sizes):
                notes.append("0-byte file left by the SDK itself (SIGKILL right after wandb.init)")
            else:
                notes.append(f"SIGKILL right after wandb.init left {sizes} bytes (not truncated)")
        if case == "killed":
            notes.append("file mtime is whatever git checkout gives; tests set it explicitly")
        if notes:
            entry["notes"] = "; ".join(notes)
        entries.append(entry)
        log(f"{release}/{case}: {entry['files']} {entry.get('notes', '')[:200]}")
    log(f"{release}: done in {time.time() - t0:.0f}s")
    for e in entries:
        e["sdk_version"] = wandb_version(py)
    return entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--releases", default=",".join(RELEASES), help="comma-separated wandb releases")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated cases")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--venvs", type=Path, default=None, help="keep/reuse venvs here (default: a temp dir, removed)")
    ap.add_argument("--jobs", type=int, default=3, help="releases written at once")
    ap.add_argument("--keep-work", action="store_true", help="keep the full run directories (printed)")
    args = ap.parse_args(argv)

    releases = [r.strip() for r in args.releases.split(",") if r.strip()]
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case {c!r}; known: {', '.join(CASES)}")
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="vintage-"))
    venvs = args.venvs.resolve() if args.venvs else tmp / "venvs"
    venvs.mkdir(parents=True, exist_ok=True)
    work = tmp / "work"
    work.mkdir()
    t0 = time.time()
    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
            results = list(pool.map(lambda r: do_release(r, cases, venvs, work, out), releases))
    finally:
        if args.keep_work:
            log(f"run directories kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        if not args.venvs:
            shutil.rmtree(venvs, ignore_errors=True)

    manifest_path = out / "MANIFEST.json"
    old = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"cases": []}
    done = {(e["release"], e["case"]) for entries in results for e in entries}
    kept = [e for e in old.get("cases", []) if (e["release"], e["case"]) not in done]
    new = kept + [e for entries in results for e in entries]
    order = {r: i for i, r in enumerate(RELEASES)}
    new.sort(key=lambda e: (order.get(e["release"], 99), e["release"], CASES.index(e["case"])))
    manifest = {
        "about": "wandb .wandb files written by old SDK releases; regenerate with tests/vintage/make_runs.py",
        "layout": "<release>/<case>/wandb/<run dir>/run-<id>.wandb; paths are relative to this folder; latest_run is the target of <release>/<case>/wandb/latest-run",
        "releases": {r: {"pip": [f"wandb=={r}", *RELEASES[r]], "notes": RELEASE_NOTES.get(r, "")} for r in RELEASES},
        "cases": new,
    }
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    log(f"all done in {time.time() - t0:.0f}s; manifest {manifest_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
