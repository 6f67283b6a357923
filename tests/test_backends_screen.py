"""The backends list: every collector, present, absent (why, dimly), failing or hung (why), and its sweep cost."""

from __future__ import annotations

from collectors.base import CollectorStatus, Health
from leet.testing.demo import make_accelerator_demo, make_demo
from leet.ui.bindings import SYMON_KEYS
from leet.ui.screens.backends import (
    BackendList,
    BackendsScreen,
    backend_fields,
    backend_lines,
    ordered,
    summary_line,
    sweep_cost,
)

STATUSES = (
    CollectorStatus("cpu", Health.OK, "", 0.42),
    CollectorStatus("nvidia", Health.ABSENT, "no NVIDIA driver: libnvidia-ml.so.1 not found"),
    CollectorStatus("openmetrics:node", Health.FAILING, "ConnectionRefusedError: http://localhost:9100/metrics: connection refused", 3.1),
    CollectorStatus("amd", Health.HUNG, "amd-smi did not answer within 11 s", 11000.0),
    CollectorStatus("tpu", Health.OK, "", 152.0),
)


def plain(rows) -> list[str]:
    return ["".join(text for text, _ in row) for row in rows]


def styles_of(rows, text: str) -> set[str]:
    return {style for row in rows for run, style in row if text in run}


def test_fields_name_the_state_cost_and_reason():
    assert backend_fields(STATUSES[0]) == ("cpu", "present", "0.4 ms", "")
    assert backend_fields(STATUSES[1]) == ("nvidia", "absent", "–", "no NVIDIA driver: libnvidia-ml.so.1 not found")
    assert backend_fields(STATUSES[3])[1:3] == ("hung", "–")  # its last figure is from an earlier call
    assert sweep_cost(1400.0) == "1.40 s" and sweep_cost(float("nan")) == "–"
    assert backend_fields(STATUSES[4])[2] == "152 ms"
    assert sweep_cost(0.0) == "–" and sweep_cost(12.345) == "12.3 ms"


def test_trouble_first_then_present_then_absent_each_in_the_hub_order():
    assert [status.name for status in ordered(STATUSES)] == ["openmetrics:node", "amd", "cpu", "tpu", "nvidia"]
    assert summary_line(STATUSES) == "5 backends: 1 failing · 1 hung · 2 present · 1 absent"
    assert summary_line(()) == "no backends yet"


def test_lines_fit_the_width_and_wrap_long_reasons_under_their_column():
    rows = backend_lines(STATUSES, 70)
    text = plain(rows)
    assert all(len(line) == 70 for line in text)
    assert text[0].split() == ["backend", "state", "sweep", "why"]
    assert text[1].startswith("openmetrics:node  failing  3.1 ms")
    reason_column = text[1].index("ConnectionRefusedError")
    assert text[2][:reason_column].strip() == "" and text[2][reason_column:].startswith("http://localhost:9100")
    assert "connection refused" in text[3]
    assert text[-2].startswith("nvidia            absent   –")


def test_absent_is_dim_and_trouble_is_coloured():
    rows = backend_lines(STATUSES, 100)
    assert styles_of(rows, "no NVIDIA driver") == {"muted"}
    assert styles_of(rows, "nvidia") == {"muted"}
    assert styles_of(rows, "failing") == {"error"} and styles_of(rows, "ConnectionRefusedError") == {"error"}
    assert styles_of(rows, "hung") == {"warn"}
    assert styles_of(rows, "present") == {"ok"}


def test_a_narrow_list_puts_reasons_on_lines_of_their_own():
    text = plain(backend_lines(STATUSES[1:2], 36))
    assert text[1].rstrip() == "nvidia   absent   –"
    assert text[2].startswith("  no NVIDIA driver") and all(len(line) == 36 for line in text)


def test_names_and_reasons_from_a_collector_are_plain_text():
    hostile = CollectorStatus("openmetrics:x\x1b[2J", Health.FAILING, "boom\x07\nagain")
    assert not any("\x1b" in line or "\x07" in line or "\n" in line for line in plain(backend_lines([hostile], 60)))


def test_b_is_in_the_key_table_and_help():
    assert any(key.keys == "b" and key.action == "backends" for key in SYMON_KEYS)


async def test_b_opens_the_list_escape_and_q_close_it():
    demo = make_accelerator_demo("nvidia-openmetrics", samples=3)
    async with demo.app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await pilot.press("b")
        await pilot.pause()
        screen = demo.app.screen
        assert isinstance(screen, BackendsScreen)
        text = "\n".join(screen.query_one(BackendList).plain_rows())
        assert "openmetrics:vllm  failing" in text and "connection refused" in " ".join(text.split())
        assert "tpu               absent" in text and "no Google TPU on the PCI bus" in text
        assert "nvidia            present" in text
        assert "1 failing · 3 present · 5 absent" in str(screen.query_one("#backends-title").render())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(demo.app.screen, BackendsScreen)
        await pilot.press("b", "q")
        await pilot.pause()
        assert not isinstance(demo.app.screen, BackendsScreen) and demo.app.is_running


async def test_a_long_list_scrolls_under_its_heading_and_says_where_more_is():
    many = [CollectorStatus(f"openmetrics:endpoint{n}", Health.OK, "", 1.0 + n) for n in range(60)]
    demo = make_demo(samples=2)
    async with demo.app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        demo.app.push_screen(BackendsScreen(lambda: many))
        await pilot.pause()
        listing = demo.app.screen.query_one(BackendList)
        first = listing.plain_rows()
        assert first[0].split()[:2] == ["backend", "state"] and "endpoint0 " in first[1]
        assert len(first) < 60 and listing.more == "↓ more"
        assert demo.app.screen.query_one("#backends-box").border_subtitle == "↓ more"
        await pilot.press("end")
        await pilot.pause()
        last = listing.plain_rows()
        assert last[0].split()[:2] == ["backend", "state"]  # the heading stays
        assert "endpoint59 " in last[-1] and listing.more == "↑ more"
        await pilot.press("up")
        await pilot.pause()
        assert listing.more == "↑↓ more"


async def test_the_list_follows_the_hub_while_open():
    statuses = [CollectorStatus("tpu", Health.OK, "", 5.0)]
    demo = make_demo(samples=2)
    async with demo.app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        screen = BackendsScreen(lambda: statuses)
        demo.app.push_screen(screen)
        await pilot.pause()
        statuses = [CollectorStatus("tpu", Health.HUNG, "the runtime metrics service did not answer", 500.0)]
        screen.refresh_statuses()
        await pilot.pause()
        assert "tpu      hung" in "\n".join(screen.list.plain_rows())
