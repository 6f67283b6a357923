"""symon's small faults: the interval toast, the process table after a sort, its empty header."""

from __future__ import annotations

from dataclasses import replace

from test_process_table import many

from collectors import Hub
from collectors.base import Sample
from leet.testing.demo import make_demo


async def test_ten_interval_changes_leave_one_toast_saying_the_last():
    demo = make_demo(samples=5)
    hub = Hub([], interval=0.5)
    demo.source.hub = hub
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        for _ in range(10):
            await pilot.press("plus")
            await pilot.pause()
        await pilot.pause()
        notes = list(demo.app._notifications)
        assert len(notes) == 1 and notes[0].message.startswith(f"Sampling every {hub.interval:g}s")


async def test_a_sort_after_focusing_the_table_shows_its_top_rows():
    demo = make_demo()
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        table = demo.app.screen.processes
        table.set_processes(many(88))
        await pilot.pause()
        await pilot.press("tab")
        for key in ("greater_than_sign", "t", "less_than_sign"):
            await pilot.press(key)
            await pilot.pause()
            title = table.plain_rows()[0]
            assert "[1-" in title, (key, title)


async def test_an_empty_process_table_says_none_and_a_filter_that_matches_nothing_says_so():
    demo = make_demo()
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        table = demo.app.screen.processes
        table.set_processes(many(88))
        table.set_filter("no-such-process")
        await pilot.pause()
        title = table.plain_rows()[0]
        assert "0 of 88 match" in title and "[0-0" not in title, title
        table.set_filter("")
        table.set_processes([])
        await pilot.pause()
        title = table.plain_rows()[0]
        assert "none" in title and "[0-0" not in title, title


async def test_with_pid_the_process_charts_are_on_the_first_page():
    demo = make_demo(samples=0)
    demo.app.config = replace(demo.app.config, pid=4242)
    for n in range(3):
        demo.feed(1)
        span = demo.source.time_span
        assert span is not None
        demo.source.ingest(Sample(span[1] + 0.5, {"proc.memory.rssMB": 100.0 + n, "proc.cpu.threads": 4.0}))
    async with demo.app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        grid = demo.app.screen.grid
        charts = grid.chart_ids[: grid.per_page]
        assert any(chart.startswith("proc.") for chart in charts), (charts, grid.chart_ids)
