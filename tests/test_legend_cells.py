"""Chart frames measure text in terminal cells, and cut legends keep series apart."""

from __future__ import annotations

from rich.cells import cell_len

from widgets.chartframe import ChartView, compose_rows, row_text
from widgets.raster import SeriesView


def _series(values):
    return SeriesView([float(i) for i in range(len(values))], list(values), list(values), list(values))


def _legend_names(view: ChartView, width: int) -> list[str]:
    bottom = row_text(compose_rows(view, width, 8)[-1])
    return [part.strip(" ─╰╯") for part in bottom.split("●")[1:]]


def test_cut_legend_names_stay_distinct_when_they_share_a_long_prefix():
    names = tuple(f"CoreWeave node {host} at 10.0.0.1" for host in ("alpha", "bravo", "delta"))
    view = ChartView(title="temp", x_range=(0.0, 1.0), series_names=names, data=tuple(_series([1.0, 2.0]) for _ in names))
    shown = _legend_names(view, 40)
    assert len(set(shown)) == 3, shown


def test_cut_legend_names_stay_distinct_on_a_disk_chart():
    names = tuple(f"disk.{dev}.write_bytes_per_second_avg2" for dev in ("nvme0n1", "nvme1n1", "sda", "sdb", "sdc", "loop0"))
    view = ChartView(title="disk", series_names=names, data=tuple(_series([1.0, 2.0]) for _ in names))
    shown = _legend_names(view, 80)
    assert len(set(shown)) == len(shown), shown


def test_a_wide_character_title_keeps_the_frame_its_width():
    view = ChartView(title="学习率 " * 8, unit="", series_names=("学习率",), data=(_series([1.0, 2.0]),))
    for row in compose_rows(view, 30, 8):
        assert cell_len(row_text(row)) == 30


def test_wide_character_legend_names_keep_the_frame_its_width():
    names = ("学习率甲乙丙丁", "学习率戊己庚辛")
    view = ChartView(title="lr", series_names=names, data=tuple(_series([1.0, 2.0]) for _ in names))
    for row in compose_rows(view, 30, 8):
        assert cell_len(row_text(row)) == 30
