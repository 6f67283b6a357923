"""The workspace runs list: rows for shared runs, groups and job types, and the ``g`` and ``j`` keys.

Row building is pure (``list_rows`` over ``RunEntry`` values); the keys are
driven on the made-up workspace of ``leet.testing.workspace_demo``: nine runs in the
groups ``sweep``, ``ddp`` and ``vit`` plus one without a group, job types
``train`` and ``eval``, and ``ddp-r50-4gpu``, a shared run written by four
processes labelled rank0-rank3.
"""

from __future__ import annotations

from pathlib import Path

from leet.discovery.probe import RunEntry
from leet.model.run import RunState
from leet.testing.workspace_demo import DEMO_RUNS, DemoRunSpec, make_workspace_demo
from leet.ui.screens.workspace import (
    NO_GROUP,
    job_types,
    list_note,
    list_rows,
    next_job_type,
    run_row,
)
from widgets.runlist import (
    GroupHeader,
    RunList,
    RunRow,
    compact_labels,
    detail_text,
    identity,
)

SIZE = (160, 48)
ESC = "\x1b"


def entry(name: str, group: str = "", job_type: str = "", state: RunState = RunState.FINISHED, labels: tuple[str, ...] = ()) -> RunEntry:
    folder = Path("/runs") / f"run-{name}"
    files = tuple(folder.with_name(f"{folder.name}-{n}") if n else folder for n in range(len(labels)))
    return RunEntry(
        key=folder.name, directory=folder, file=folder / "run.wandb", run_id=name, name=name,
        group=group, job_type=job_type, state=state, files=tuple(f / "run.wandb" for f in files), labels=labels,
    )


# Newest first, as the workspace lists them.
ENTRIES = [
    entry("a", "sweep", "train", RunState.RUNNING),
    entry("b", "ddp", "train", RunState.RUNNING, labels=("rank0", "rank1", "rank2", "rank3")),
    entry("c", "sweep", "eval"),
    entry("d"),
    entry("e", "sweep", "train"),
]


def shown(rows) -> list[str]:
    """Headers as ``[name n/running]``, runs by name."""
    return [f"[{row.name} {row.runs}/{row.running}]" if isinstance(row, GroupHeader) else row.name for row in rows]


# -- labels and row text -----------------------------------------------------------------


def test_numbered_labels_compact_to_a_range_in_any_order():
    assert compact_labels(("rank0", "rank1", "rank2", "rank3")) == "rank0-3"
    assert compact_labels(("rank3", "rank1", "rank0", "rank2")) == "rank0-3"
    assert compact_labels(("node08", "node09", "node10")) == "node08-10"


def test_labels_that_are_not_one_range_are_listed():
    assert compact_labels(("rank0", "rank2")) == "rank0,rank2"
    assert compact_labels(("gpu0", "cpu1")) == "gpu0,cpu1"
    assert compact_labels(("rank0",)) == "rank0"
    assert compact_labels(()) == ""


def test_labels_lose_escape_sequences():
    assert compact_labels((f"{ESC}[31mrank0", "rank1")) == "rank0-1"


def test_a_shared_run_carries_its_writer_count_and_labels_and_a_plain_run_nothing():
    shared, plain = run_row(ENTRIES[1]), run_row(ENTRIES[0])
    assert (shared.writers, shared.labels) == (4, "rank0-3")
    assert (plain.writers, plain.labels) == (1, "")


def test_the_name_wins_over_the_writer_tag_and_the_tag_over_its_labels():
    run = RunRow("k", "ddp-r50", "id", "running", "ok", "", writers=16, labels="rank0-15")
    assert identity(run, 40) == ("ddp-r50", "×16 rank0-15")
    assert identity(run, 12) == ("ddp-r50", "×16"), "labels go first"
    assert identity(run, 8) == ("ddp-r50", ""), "then the count"
    assert identity(run, 5) == ("ddp-…", "")


def test_details_show_whole_parts_then_the_first_one_cut_then_nothing():
    assert detail_text(("sweep", "train"), 20) == "sweep · train"
    assert detail_text(("sweep", "train"), 8) == "sweep"
    assert detail_text(("baseline-runs", "train"), 6) == "basel…"
    assert detail_text(("sweep",), 3) == ""
    assert detail_text((f"{ESC}]8;;x{ESC}\\sweep",), 20) == "sweep"


# -- grouping and the job-type filter (pure) ------------------------------------------------------


def test_flat_rows_keep_the_order_and_say_group_and_job_type():
    rows = list_rows(ENTRIES)
    assert shown(rows) == ["a", "b", "c", "d", "e"]
    assert [row.detail for row in rows] == [("sweep", "train"), ("ddp", "train"), ("sweep", "eval"), (), ("sweep", "train")]


def test_grouped_rows_put_groups_in_order_of_their_newest_run_and_runs_without_one_last():
    rows = list_rows(ENTRIES, "group")
    assert shown(rows) == ["[sweep 3/1]", "a", "c", "e", "[ddp 1/1]", "b", f"[{NO_GROUP} 1/0]", "d"]
    assert [row.detail for row in rows if isinstance(row, RunRow)] == [("train",), ("eval",), ("train",), ("train",), ()], "the header says the group"


def test_the_job_type_filter_keeps_its_runs_and_drops_empty_groups():
    rows = list_rows(ENTRIES, "group", "eval")
    assert shown(rows) == ["[sweep 1/0]", "c"]
    assert rows[1].detail == (), "every run shown has that job type"
    assert shown(list_rows(ENTRIES, "flat", "train")) == ["a", "b", "e"]


def test_the_job_type_filter_and_the_text_filter_both_apply():
    assert shown(list_rows(ENTRIES, "flat", "train", "sweep")) == ["a", "e"]
    assert shown(list_rows(ENTRIES, "group", "train", "rank2")) == ["[ddp 1/1]", "b"], "labels are searched"
    assert list_rows(ENTRIES, "group", "eval", "ddp") == []


def test_j_cycles_all_then_each_job_type_sorted_then_all():
    assert job_types(ENTRIES) == ["eval", "train"]
    seen = [""]
    for _ in range(3):
        seen.append(next_job_type(ENTRIES, seen[-1]))
    assert seen == ["", "eval", "train", ""]
    assert next_job_type(ENTRIES, "gone") == "eval", "a job type no run has any more starts the cycle over"


def test_the_list_note_always_says_grouping_and_job_type():
    assert list_note("flat", "", "") == "flat · all jobs"
    assert list_note("group", "eval", "lr") == "by group · job: eval · filter: lr"


# -- keys, on the made-up workspace ------------------------------------------------------------------


def runs_list(app) -> RunList:
    return app.screen.query_one(RunList)


def lines(app) -> list[str]:
    """The list below its title, blank lines dropped."""
    return [line.rstrip() for line in runs_list(app).plain_rows()[1:] if line.strip()]


def title(app) -> str:
    return runs_list(app).plain_rows()[0].rstrip()


def header(app) -> str:
    return app.screen.query_one("#header").plain_rows()[0]


def cursor_name(app) -> str:
    return next(row.name for row in runs_list(app).runs if row.key == runs_list(app).cursor_key)


async def test_the_shared_run_shows_its_writers_and_every_run_its_group_and_job_type():
    demo = make_workspace_demo()
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        listed = lines(demo.app)
        shared = next(line for line in listed if "ddp-r50-4gpu" in line)
        assert "ddp-r50-4gpu ×4 rank0-3 ddp" in shared
        plain = next(line for line in listed if "resnet50-adamw-lr1e-4" in line)
        assert "×" not in plain and " sweep " in plain


async def test_at_a_narrow_width_the_name_wins():
    demo = make_workspace_demo()
    async with demo.app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        shared = next(line for line in lines(demo.app) if "ddp-" in line)
        assert "×" not in shared and "ddp " not in shared


async def test_g_groups_the_runs_under_headers_and_back():
    demo = make_workspace_demo()
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert title(demo.app) == "Runs [1-9 of 9] · flat · all jobs"
        await pilot.press("g")
        assert title(demo.app) == "Runs [1-9 of 9] · by group · all jobs"
        listed = lines(demo.app)
        headers = [line for line in listed if "─" in line]
        assert [line.split(" · ")[0] for line in headers] == ["sweep", "ddp", "vit", NO_GROUP]
        assert headers[0].startswith("sweep · 6 runs · 1 running ─")
        assert headers[2].startswith("vit · 1 run ─"), "no running count when none runs"
        assert listed[listed.index(headers[1]) + 1].startswith("○ ddp-r50-4gpu ×4 rank0-3 train")
        assert listed[-1].startswith("○ smoke-test")
        await pilot.press("g")
        assert title(demo.app).endswith("· flat · all jobs") and not [line for line in lines(demo.app) if "─" in line]


async def test_the_cursor_steps_over_headers_and_space_selects_the_run_below_one():
    demo = make_workspace_demo()
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("g")
        assert cursor_name(demo.app) == "resnet50-adamw-lr5e-4"
        await pilot.press(*["down"] * 6)  # the sweep group has six runs: the seventh is past the ddp header
        assert cursor_name(demo.app) == "ddp-r50-4gpu"
        await pilot.press("space")
        assert "3 selected" in header(demo.app)
        assert next(line for line in lines(demo.app) if "ddp-r50" in line).startswith("●")
        await pilot.press("up")
        assert cursor_name(demo.app) == "resnet50-adamw-lr1e-4"
        await pilot.press("end")
        assert cursor_name(demo.app) == "smoke-test"
        await pilot.press("home")
        assert cursor_name(demo.app) == "resnet50-adamw-lr5e-4"


async def test_scrolling_up_to_a_groups_first_run_shows_its_header():
    demo = make_workspace_demo()
    async with demo.app.run_test(size=(160, 10)) as pilot:  # eight lines of list below its title
        await pilot.pause()
        await pilot.press("g", "end")
        assert lines(demo.app)[-1].startswith("○ smoke-test")
        assert not lines(demo.app)[0].startswith("sweep"), "scrolled"
        await pilot.press("home")
        assert lines(demo.app)[0].startswith("sweep · 6 runs")
        assert title(demo.app).startswith("Runs [1-6 of 9]"), "the title counts runs, not headers"


async def test_j_shows_one_job_type_at_a_time_then_all():
    demo = make_workspace_demo()
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("j")
        assert title(demo.app) == "Runs [1-1 of 1] · flat · job: eval"
        assert [line.split()[1] for line in lines(demo.app)] == ["eval-lr3e-4"]
        assert "job type: eval" in header(demo.app) and "9 runs" in header(demo.app)
        await pilot.press("j")
        assert title(demo.app) == "Runs [1-7 of 7] · flat · job: train"
        assert "eval-lr3e-4" not in " ".join(lines(demo.app)) and "smoke-test" not in " ".join(lines(demo.app))
        await pilot.press("j")
        assert title(demo.app) == "Runs [1-9 of 9] · flat · all jobs"
        assert "job type" not in header(demo.app)


async def test_j_and_f_and_g_combine():
    demo = make_workspace_demo()
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("j", "j", "g", "f", *"lr1e", "enter")
        assert title(demo.app) == "Runs [1-3 of 3] · by group · job: train · filter: lr1e"
        assert lines(demo.app)[0].startswith("sweep · 3 runs ─")


async def test_j_says_so_when_no_run_has_a_job_type():
    specs = [DemoRunSpec("a1b2c3d4", "untyped", "", 1e-3, 20, 1.0, RunState.FINISHED, 0, job_type="")]
    demo = make_workspace_demo(specs=specs, selected=())
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("j")
        await pilot.pause()
        assert title(demo.app).endswith("all jobs")
        assert any("no job types" in str(note.message) for note in demo.app._notifications)


async def test_text_from_files_reaches_the_list_without_escapes():
    base = DEMO_RUNS[0]
    spec = DemoRunSpec("x1y2z3w4", f"{ESC}[2Jname", f"{ESC}]0;title{ESC}\\grp", 1e-3, 20, 1.0, RunState.RUNNING,
                       job_type=f"tr{ESC}[5main", labels=(f"{ESC}[31mn0", "n1"))
    demo = make_workspace_demo(specs=[base, spec], selected=())
    async with demo.app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        row = next(line for line in lines(demo.app) if "x1y2z3w4" in line)
        assert row.startswith("○ name ×2 n0-1") and " grp " in row
        await pilot.press("g")
        text = "\n".join(runs_list(demo.app).plain_rows())
        assert ESC not in text and "grp · 1 run · 1 running" in text
        assert " train " in next(line for line in lines(demo.app) if "x1y2z3w4" in line), "the job type, cleaned"
