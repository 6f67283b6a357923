"""The node table: its order, its columns at each width, how a down, hot or hidden node looks, and its keys and clicks."""

from __future__ import annotations

from textual.app import App, ComposeResult

from widgets.nodetable import (
    UNKNOWN,
    NodeRow,
    NodeTable,
    arrange_nodes,
    cell_text,
    choose_columns,
    header_text,
    node_row,
)


def row(name: str, rank: int, **figures) -> NodeRow:
    figures.setdefault("up", True)
    figures.setdefault("state", "up" if figures["up"] else "down 3m")
    return NodeRow(node=name, rank=rank, **figures)


ROWS = [
    row("node1", 0, gpus=8, gpu_util=91.0, memory=40.0, hot_temp=66.0, hot_gpu="2", age=3.0, age_text="3s"),
    row("node2", 1, gpus=8, gpu_util=12.0, memory=70.0, hot_temp=94.0, hot_gpu="5", age=4.0, age_text="4s", hot=True),
    row("node10", 2, up=False, gpus=8, gpu_util=88.0, memory=55.0, hot_temp=65.0, hot_gpu="0", age=180.0, age_text="3m"),
    row("login", 3, gpus=0, memory=20.0, age=2.0, age_text="2s"),
]


def names(rows) -> list[str]:
    return [r.node for r in rows]


def test_nodes_sort_in_natural_order_by_default_and_by_any_figure_unknowns_last():
    assert names(arrange_nodes(ROWS)) == ["node1", "node2", "node10", "login"]
    assert names(arrange_nodes(ROWS, "util")) == ["node1", "node10", "node2", "login"], "busiest first; no GPU figure last"
    assert names(arrange_nodes(ROWS, "util", descending=False)) == ["node2", "node10", "node1", "login"], "unknowns stay last"
    assert names(arrange_nodes(ROWS, "temp"))[0] == "node2", "the hottest first"
    assert names(arrange_nodes(ROWS, "state"))[0] == "node10", "down nodes first"
    assert names(arrange_nodes(ROWS, "age"))[0] == "node10", "the stalest first"


def test_the_filter_matches_node_names_as_text_or_regex():
    assert names(arrange_nodes(ROWS, pattern="node1")) == ["node1", "node10"]
    assert names(arrange_nodes(ROWS, pattern="^node[12]$")) == ["node1", "node2"]


def test_every_column_shows_in_a_wide_sidebar_and_node_state_and_gpu_stay_in_a_narrow_one():
    wide = [column.key for column, _ in choose_columns(44, 6)]
    assert wide == ["node", "state", "gpus", "util", "memory", "temp", "age"]
    narrow = [column.key for column, _ in choose_columns(26, 6)]
    assert narrow[:2] == ["node", "state"] and "util" in narrow and len(narrow) < len(wide)
    tiny = choose_columns(12, 16)
    assert [column.key for column, _ in tiny] == ["node", "state", "util"] and tiny[0][1] == 4, "the name gives way, down to 4 cells"


def test_headings_mark_the_sorted_column_and_its_direction():
    layout = choose_columns(44, 6)
    assert "GPU%▼" in header_text(layout, "util", True)
    assert "NODE▲" in header_text(layout, "node", False)


def test_figures_are_worded_and_unknown_ones_are_a_dash_never_zero():
    login = ROWS[3]
    assert cell_text("util", login) == UNKNOWN and cell_text("temp", login) == UNKNOWN
    assert cell_text("temp", ROWS[1]) == "94° g5" and cell_text("temp", ROWS[1], ascii=True) == "94C g5"
    assert cell_text("gpus", login) == "0" and cell_text("age", ROWS[2]) == "3m"


def test_a_down_node_says_so_in_the_error_colour_and_its_old_figures_are_muted():
    runs = node_row(ROWS[2], choose_columns(44, 6), "value", 44)
    text = "".join(part for part, _ in runs)
    assert "down 3m" in text and len(text) == 44
    assert {style for part, style in runs if "down" in part} == {"error"}
    assert {style for part, style in runs if "88" in part} == {"muted"}


def test_a_hot_gpu_and_a_node_the_charts_leave_out_look_apart():
    hot = node_row(ROWS[1], choose_columns(44, 6), "value", 44)
    assert {style for part, style in hot if "94°" in part} == {"warn"}
    hidden = node_row(NodeRow("node9", True, "up", gpu_util=50.0, shown=False), choose_columns(44, 6), "value", 44)
    assert {style for part, style in hidden if "50" in part} == {"muted"}
    cursor = node_row(ROWS[1], choose_columns(44, 6), "cursor", 44)
    assert {style for _, style in cursor} == {"cursor"}, "the cursor's row is one bar"


class TableApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.chosen: list[str] = []
        self.highlighted: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield NodeTable(id="nodes")

    def on_mount(self) -> None:
        self.query_one(NodeTable).set_nodes(ROWS)

    def on_node_table_chosen(self, event: NodeTable.Chosen) -> None:
        self.chosen.append(event.node)

    def on_node_table_highlighted(self, event: NodeTable.Highlighted) -> None:
        self.highlighted.append(event.node)


def shown(table: NodeTable) -> list[str]:
    return [r.node for r in table.shown]


async def test_a_click_on_a_heading_sorts_by_it_and_again_reverses():
    app = TableApp()
    async with app.run_test(size=(44, 10)) as pilot:
        table = app.query_one(NodeTable)
        x = next(first for first, _, key in table.header_spans(44) if key == "temp")
        await pilot.click(NodeTable, offset=(x + 1, 1))
        await pilot.pause()
        assert table.sort == "temp" and shown(table)[0] == "node2"
        assert "HOT▼" in table.plain_rows()[1]
        await pilot.click(NodeTable, offset=(x + 1, 1))
        await pilot.pause()
        assert not table.descending and shown(table)[0] == "node10"


async def test_the_cursor_follows_its_node_through_a_new_order_and_enter_chooses_it():
    app = TableApp()
    async with app.run_test(size=(44, 10)) as pilot:
        table = app.query_one(NodeTable)
        table.focus()
        await pilot.press("down", "down")
        await pilot.pause()
        assert table.selected_node == "node10" and app.highlighted[-1] == "node10"
        table.sort_by("util")
        await pilot.pause()
        assert table.selected_node == "node10" and shown(table).index("node10") == 1
        await pilot.press("enter")
        await pilot.pause()
        assert app.chosen == ["node10"]


async def test_a_table_with_no_nodes_says_so():
    app = TableApp()
    async with app.run_test(size=(44, 10)) as pilot:
        table = app.query_one(NodeTable)
        table.set_nodes([])
        await pilot.pause()
        assert "no nodes yet" in table.plain_rows()[2]
        table.set_nodes(ROWS)
        table.set_filter("gpu-box")
        await pilot.pause()
        assert "no node matches" in table.plain_rows()[2]
