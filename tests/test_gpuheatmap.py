"""The GPU heatmap's pure part: which layout a size gets, and what each cell says, with and without colour."""

from __future__ import annotations

from widgets.chartframe import Row
from widgets.glyphs import ASCII_HEAT_RAMP, HEAT_RAMP
from widgets.gpuheatmap import (
    DOWN,
    UNKNOWN,
    HeatmapModel,
    HeatNode,
    choose_layout,
    common_prefix,
    common_suffix,
    heatmap_rows,
    level_of,
    render,
    short_name,
)


def cluster(nodes: int = 64, gpus: int = 8, *, value=lambda n, g: 10.0 + (n * 8 + g) % 90, down=(), names=None, selected=None) -> HeatmapModel:
    names = names or [f"node{n + 1:02d}" for n in range(nodes)]
    heat = tuple(HeatNode(names[n], tuple(value(n, g) for g in range(gpus)), gpus, n in down) for n in range(nodes))
    return HeatmapModel("GPU utilisation", "%", 0.0, 100.0, heat, selected, ("util", "temp"), "util")


def text(rows: list[Row]) -> list[str]:
    return ["".join(part for part, _ in row) for row in rows]


def cells_of(rows: list[Row], name: str, columns: int) -> list[tuple[str, str]]:
    """The runs of node ``name``'s cells: those after its name and the space that follows it."""
    for row in rows:
        for at, (part, _) in enumerate(row):
            if part.strip() == name:
                return list(row[at + 2 : at + 2 + columns])
    raise AssertionError(f"{name} is not drawn")


def styles_of(row: Row, what: str) -> set[str]:
    """The styles of the runs of ``row`` whose text holds ``what``."""
    return {style for part, style in row if what in part}


def test_64_nodes_of_8_gpus_fit_beside_the_node_table_at_160_by_48_every_name_whole():
    model = cluster()
    width, height = 112, 18  # what the screen gives the heatmap at 160×48
    layout = choose_layout(model, width, height)
    assert layout.form == "grid" and layout.count == 64 and layout.height <= 14
    lines = text(heatmap_rows(model, width, layout.height))
    for n in range(64):
        assert sum(line.count(f"node{n + 1:02d} ") for line in lines) == 1, f"node{n + 1:02d} once, whole"
    assert all(len(line) == width for line in lines)
    assert "0% " in lines[0] and " 100%" in lines[0], "the scale rides on the title row"


def test_every_level_has_its_own_shade_so_levels_read_apart_without_colour():
    levels = [0.0, 20.0, 45.0, 70.0, 99.0]
    assert [level_of(v, 0, 100) for v in levels] == [0, 1, 3, 5, 7]
    model = cluster(1, len(levels), value=lambda n, g: levels[g])
    shades = [part[0] for part, style in cells_of(heatmap_rows(model, 60, 6), "node01", len(levels))]
    assert set(shades) <= set(HEAT_RAMP) and len(set(shades)) == len(HEAT_RAMP), shades
    assert shades == sorted(shades, key=HEAT_RAMP.index), "denser as the value rises"
    ascii_shades = [part[0] for part, _ in cells_of(heatmap_rows(model, 60, 6, ascii=True), "node01", len(levels))]
    assert set(ascii_shades) <= set(ASCII_HEAT_RAMP) and len(set(ascii_shades)) == len(levels), ascii_shades


def test_a_cell_has_the_colour_of_its_level_too():
    model = cluster(1, 2, value=lambda n, g: (5.0, 95.0)[g])
    body = heatmap_rows(model, 40, 5)[2]
    assert [style for _, style in body if style.startswith("h")] == ["h0", "h7"]


def test_a_down_node_is_crossed_out_and_named_in_the_error_colour():
    model = cluster(4, 4, down=(2,))
    rows = heatmap_rows(model, 80, 6)
    line = next(row for row in rows if any("node03" in part for part, _ in row))
    assert styles_of(line, "node03") == {"error"}
    assert DOWN * 4 in "".join(part for part, _ in line)


def test_a_gpu_without_a_reading_is_a_question_mark_and_a_missing_gpu_a_blank():
    heat = (
        HeatNode("a1", (50.0, None, 50.0, 50.0), 4),
        HeatNode("a2", (50.0, 50.0), 2),
    )
    model = HeatmapModel("GPU utilisation", "%", 0.0, 100.0, heat)
    rows = heatmap_rows(model, 40, 5)
    first = cells_of(rows, "a1", 4)
    assert [style for _, style in first] == ["h4", "muted", "h4", "h4"] and set(first[1][0]) == {UNKNOWN}
    second = cells_of(rows, "a2", 4)
    assert [style for _, style in second] == ["h4", "h4", "empty", "empty"] and not second[3][0].strip()


def test_the_selected_node_is_drawn_as_the_cursor():
    model = cluster(8, 4, selected="node05")
    rows = heatmap_rows(model, 80, 8)
    assert any(styles_of(row, "node05") == {"cursor"} for row in rows)


def test_too_little_room_shows_the_run_of_nodes_around_the_selected_one_and_says_which():
    model = cluster(selected="node50")
    layout = choose_layout(model, 50, 8)
    assert layout.count < 64 and layout.first <= 49 < layout.first + layout.count
    lines = text(heatmap_rows(model, 50, 8))
    assert f"nodes {layout.first + 1}-{layout.first + layout.count} of 64" in lines[0]
    assert any("node50" in line for line in lines)


def test_a_wide_short_space_lays_gpus_as_rows_and_names_nodes_under_them():
    model = cluster(100, 4, names=[f"node{n + 1:03d}" for n in range(100)], selected="node033")
    width, height = 140, 7
    layout = choose_layout(model, width, height)
    assert layout.form == "strip"
    rows = heatmap_rows(model, width, height)
    lines = text(rows)
    assert [line[:2] for line in lines[1:5]] == ["g0", "g1", "g2", "g3"]
    assert " 001 " in lines[5] and "node001" not in lines[5], "names less the prefix they share"
    assert styles_of(rows[5], "033") == {"cursor"}, "the selected node is named whatever the room"


def test_long_names_lose_their_shared_domain_then_are_cut_from_the_left_where_nodes_differ():
    assert short_name("gpu-node-017", 8) == "…ode-017"
    assert short_name("n1", 8) == "n1"
    assert common_suffix(["a1.example", "a2.example"]) == ".example" and common_suffix(["a1:9400", "b:9400"]) == ":9400"
    assert common_suffix(["a1.example"]) == "" and common_suffix(["x.a", "y.b"]) == ""
    names = [f"gpu-node-{n:03d}.cluster.example" for n in range(64)]
    lines = text(heatmap_rows(cluster(names=names), 112, 18))
    assert any("gpu-node-017 " in line for line in lines) and not any("cluster.example" in line for line in lines)
    longer = [f"rack{n // 8}-gpu-node-{n:03d}" for n in range(64)]
    lines = text(heatmap_rows(cluster(names=longer), 112, 18))
    assert any("…k2-gpu-node-017 " in line for line in lines), "cut at the left, the node's own part kept"
    assert common_prefix([f"node{n:02d}" for n in range(1, 65)]) == "node"
    assert common_prefix(["a", "b"]) == ""


def test_rows_are_exactly_the_size_asked_for_at_any_size():
    model = cluster()
    for width in (1, 7, 20, 50, 80, 112, 200):
        for height in (1, 3, 8, 18, 40):
            rows = heatmap_rows(model, width, height)
            assert len(rows) == height
            assert all(sum(len(part) for part, _ in row) == width for row in rows), (width, height)


def test_clicks_land_on_the_node_drawn_there():
    model = cluster(12, 4)
    rows, hits = render(model, 80, 8)
    for y, spots in hits.items():
        line = "".join(part for part, _ in rows[y])
        for first, end, node in spots:
            assert node in line[first:end]


def test_no_gpus_yet_says_so():
    lines = text(heatmap_rows(HeatmapModel("GPU utilisation", "%", 0, 100), 40, 3))
    assert "no node has reported a GPU yet" in lines[1]


def test_a_hostile_node_name_reaches_the_screen_cleaned():
    model = cluster(2, 2, names=["bad\x1b[2Jnode", "ok"])
    lines = text(heatmap_rows(model, 60, 5))
    assert not any("\x1b" in line for line in lines)
    assert any("badnode" in line for line in lines)
