"""``leet inspect --summary --json`` against ``wandb leet inspect`` on files of old SDKs.

The fixtures in ``tests/fixtures/vintage`` were written by real wandb
releases from 0.10.33 to 0.31.0 (see ``tests/vintage/make_runs.py`` and
``MANIFEST.json``). For every file both tools print the run's summary; they
must agree on every summary key the reference reports (except ``_wandb…``),
on the last step and on the run's state. Each test works on a copy in
``tmp_path`` whose modification times it sets itself, because the state of a
file without an exit record depends on how long ago it was written.
No network is needed: the reference is the ``wandb`` script of the installed
SDK (a test dependency), run on local files.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "vintage"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
WANDB = Path(sys.executable).parent / "wandb"
STATES = {"running", "finished", "failed", "crashed", "unknown"}
STALE_S = 3600  # an hour without a write: crashed for both tools
TIMEOUT_S = 120


def _cases():
    """Params (case dir relative to FIXTURES, path inside it, age of the copy's mtime in seconds)."""
    out = []
    for entry in MANIFEST["cases"]:
        files = entry.get("files") or []
        if not files:
            continue
        release, case = entry["release"], entry["case"]
        base = f"{release}/{case}"
        for n, rel in enumerate(files, 1):
            assert rel.startswith(base + "/"), rel
            inner = rel[len(base) + 1 :]
            name = f"{release}-{case}" + (f"-seg{n}" if len(files) > 1 else "")
            if case in ("killed", "empty"):
                out.append(pytest.param(base, inner, 0.0, id=f"{name}-fresh"))
                out.append(pytest.param(base, inner, STALE_S, id=f"{name}-stale"))
            else:
                out.append(pytest.param(base, inner, 0.0, id=name))
        if case in ("basic", "resumed") and entry.get("latest_run"):
            out.append(pytest.param(base, "wandb/latest-run", 0.0, id=f"{release}-{case}-latest-run"))
    return out


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(WANDB_MODE="offline", WANDB_SILENT="true", TZ="UTC", NO_COLOR="1")
    return env


def _reference_cmd(path: Path) -> list[str]:
    if not WANDB.exists():
        pytest.skip(f"no wandb script next to {sys.executable}")
    return [str(WANDB), "leet", "inspect", "--summary", "--json", str(path)]


def _our_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "leet", "inspect", "--summary", "--json", str(path)]


def _json_of(*cmds: list[str]) -> list[dict]:
    """Run the commands at once; each must exit 0 and print one JSON object."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()) for cmd in cmds]
    results = []
    for cmd, proc in zip(cmds, procs):
        try:
            out, err = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"{cmd} took over {TIMEOUT_S}s") from None
        assert proc.returncode == 0, f"{cmd} exited {proc.returncode}: {err[-2000:]}"
        try:
            results.append(json.loads(out))
        except json.JSONDecodeError as error:
            raise AssertionError(f"{cmd} printed no JSON object ({error}): {out[:500]!r} {err[-500:]!r}") from None
    return results


def reference_and_ours(path: Path) -> tuple[dict, dict]:
    theirs, mine = _json_of(_reference_cmd(path), _our_cmd(path))
    return theirs, mine


def flatten(value, prefix: str = "", out: dict | None = None, *, media_type_only: bool = False) -> dict:
    """Dotted-path leaves of a (possibly nested) summary; media dicts as ``key._type`` only if asked."""
    out = {} if out is None else out
    for key, item in value.items():
        path = f"{prefix}{key}"
        if isinstance(item, dict) and item:
            if media_type_only and "_type" in item:
                out[f"{path}._type"] = item["_type"]
            else:
                flatten(item, f"{path}.", out, media_type_only=media_type_only)
        else:
            out[path] = item
    return out


def same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def summary_mismatches(theirs: dict, mine: dict) -> list[str]:
    want = flatten(theirs.get("summary") or {}, media_type_only=True)
    have = flatten(mine.get("summary") or {})
    problems = []
    for key, value in sorted(want.items()):
        if key.startswith("_wandb"):
            continue
        if key not in have:
            problems.append(f"{key}: missing in ours (reference {value!r})")
        elif not same(have[key], value):
            problems.append(f"{key}: ours {have[key]!r}, reference {value!r}")
    return problems


def _copy(base: str, tmp_path: Path, age_s: float) -> Path:
    dest = tmp_path / base
    shutil.copytree(FIXTURES / base, dest, symlinks=True)
    when = time.time() - age_s
    for f in dest.rglob("*.wandb"):
        os.utime(f, (when, when))
    return dest


@pytest.mark.parametrize(("base", "inner", "age_s"), _cases())
def test_inspect_summary_matches_reference(tmp_path, base, inner, age_s):
    path = _copy(base, tmp_path, age_s) / inner
    theirs, mine = reference_and_ours(path)
    problems = summary_mismatches(theirs, mine)
    if theirs.get("step") != mine.get("last_step"):
        problems.append(f"step: ours last_step {mine.get('last_step')!r}, reference step {theirs.get('step')!r}")
    if theirs.get("state") != mine.get("state"):
        problems.append(f"state: ours {mine.get('state')!r}, reference {theirs.get('state')!r}")
    if theirs.get("exit_code") != mine.get("exit_code"):
        problems.append(f"exit_code: ours {mine.get('exit_code')!r}, reference {theirs.get('exit_code')!r}")
    # Ours: `state` is one word, with `exit_code`, `last_write_age_s` and `reason` beside it.
    if mine.get("state") not in STATES:
        problems.append(f"state: ours {mine.get('state')!r} is not one of {sorted(STATES)}")
    for key in ("exit_code", "last_write_age_s", "reason"):
        if key not in mine:
            problems.append(f"{key}: missing in ours")
    if isinstance(mine.get("last_write_age_s"), (int, float)) and abs(mine["last_write_age_s"] - age_s) > 60:
        problems.append(f"last_write_age_s: ours {mine['last_write_age_s']!r}, the copy's mtime is {age_s:.0f}s old")
    # What the reference says (checked by hand with 0.31.0's `wandb leet
    # inspect`): no exit record means `running` while the file was written in
    # the last ten minutes and `crashed` after that; a file with no run record
    # (0 bytes, or only the 7-byte header) is `unknown`, however old.
    case = base.split("/")[1]
    if case in ("killed", "empty"):
        want = "unknown" if case == "empty" else ("crashed" if age_s else "running")
        if theirs.get("state") != want:
            problems.append(f"state: the reference says {theirs.get('state')!r}, this test expects {want!r}")
    assert not problems, "\n".join(problems)


def test_manifest_lists_every_fixture_file():
    listed = {f for entry in MANIFEST["cases"] for f in entry.get("files") or []}
    on_disk = {str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("run-*.wandb") if not p.parent.is_symlink()}
    assert listed == on_disk
    for entry in MANIFEST["cases"]:
        if entry.get("latest_run"):
            link = FIXTURES / entry["release"] / entry["case"] / "wandb" / "latest-run"
            assert link.is_symlink() and os.readlink(link) == entry["latest_run"]
            assert (link.parent / entry["latest_run"]).is_dir()
