"""A run's logged media, without Textual: the index of which steps logged what, the paths it may read, the images and bars drawn.

The run comes from the real SDK (``image_run``: images, an image list with
captions, a table and a histogram over six steps).
"""

from __future__ import annotations

import os
import shutil

import pytest
from PIL import Image

from leet.model.media import MediaIndex, MediaPathError, media_item, neighbour_step, resolve_media
from leet.runfile.media_rows import MediaRows
from leet.sources.media import MediaLog, read_table
from leet.ui.views.media import RunMedia, Scrub, run_model, side_by_side
from widgets.halfblocks import HalfBlocks, fitted
from widgets.histogram_bars import HistogramBars, columns_of
from widgets.image_cache import ImageCache


def indexed(run) -> MediaLog:
    log = MediaLog(run.wandb_path)
    while not log.loaded:
        log.refresh()
    return log


# -- the index, from a real run ----------------------------------------------------------------


def test_the_index_knows_which_steps_logged_which_key(image_run):
    index = indexed(image_run).index
    assert index.keys() == ["batch", "preds", "sample", "weights"]
    assert index.steps("sample") == [0, 1, 2, 3, 4, 5]
    assert index.steps("batch") == index.steps("weights") == [0, 2, 4]
    assert index.steps("preds") == [1, 4]
    assert index.steps() == [0, 1, 2, 3, 4, 5]
    assert index.keys(("images",)) == ["batch", "sample"]


def test_images_keep_their_captions_and_paths_under_media_images(image_run):
    index = indexed(image_run).index
    sample = index.at("sample", 3)
    assert sample is not None and sample.kind == "images"
    assert [ref.caption for ref in sample.images] == ["sample at 3"]
    assert sample.images[0].path.startswith("media/images/sample_3_")
    batch = index.at("batch", 2)
    assert batch is not None and [ref.caption for ref in batch.images] == ["digit 0", "digit 1", "digit 2"]
    assert all((image_run.run_dir / "files" / ref.path).is_file() for ref in batch.images)


def test_a_histogram_has_its_counts_and_one_edge_more(image_run):
    histogram = indexed(image_run).index.at("weights", 4).histogram
    assert histogram is not None
    assert len(histogram.edges) == len(histogram.counts) + 1
    assert sum(histogram.counts) == 100  # np.arange(100) % 7: a hundred values
    assert histogram.edges[0] == 0 and histogram.edges[-1] == 6


def test_a_table_is_read_from_its_json_only_when_asked(image_run):
    log = indexed(image_run)
    item = log.index.at("preds", 4)
    assert item is not None and item.table is not None and (item.table.rows, item.table.cols) == (4, 2)
    table = read_table(log, item.table)
    assert table.columns == ("id", "guess")
    assert table.rows[3] == (3, "class 12")
    assert not table.error


def test_a_table_file_that_is_no_table_is_said_in_one_line(image_run, tmp_path):
    run_dir = shutil.copytree(image_run.run_dir, tmp_path / "run", ignore=shutil.ignore_patterns("logs"))
    log = MediaLog(run_dir / image_run.wandb_path.name)
    while not log.loaded:
        log.refresh()
    ref = log.index.at("preds", 1).table
    (run_dir / "files" / ref.path).write_text("{not json")
    table = read_table(log, ref)
    assert table.error.startswith(os.path.basename(ref.path) + ": not a table")
    assert "\n" not in table.error


def test_media_rows_read_on_from_where_they_stopped(image_run):
    rows = MediaRows(image_run.wandb_path)
    first = rows.read(max_records=3)
    rest = []
    while not rows.at_eof:
        rest += rows.read(max_records=3)
    steps = [step for step, _ in first + rest]
    assert steps == [0, 1, 2, 3, 4, 5]
    rows.close()


# -- values as logged ------------------------------------------------------------------------------


def test_packed_bins_give_evenly_spaced_edges():
    item = media_item({"_type": "histogram", "values": [1, 2, 3], "packedBins": {"min": -1.0, "size": 0.5, "count": 3}})
    assert item is not None and item.histogram is not None
    assert item.histogram.edges == (-1.0, -0.5, 0.0, 0.5)


@pytest.mark.parametrize("value", [
    {"_type": "histogram", "values": [1, 2], "bins": [0, 1]},  # an edge short
    {"_type": "histogram", "values": [1, 2], "bins": [2, 1, 0]},  # falling edges
    {"_type": "histogram", "values": "many"},
    {"_type": "image-file"},  # no path
])
def test_a_malformed_media_value_is_other_not_an_error(value):
    item = media_item(value)
    assert item is not None and item.kind == "other"


def test_a_plain_value_is_no_media():
    assert media_item({"a": 1}) is None and media_item(3.0) is None
    index = MediaIndex()
    assert not index.add(0, "loss", 0.5)
    assert index.keys() == []


def test_steps_logged_out_of_order_are_kept_in_order():
    index = MediaIndex()
    for step in (5, 1, 3):
        index.add(step, "img", {"_type": "image-file", "path": f"media/images/img_{step}.png"})
    assert index.steps("img") == [1, 3, 5]
    assert index.at_or_before("img", 4)[0] == 3
    assert index.at_or_before("img", 0) is None


def test_scrubbing_moves_between_logged_steps_and_the_last_follows_the_newest():
    steps = [0, 2, 4]
    assert neighbour_step(steps, 2, "next") == 4 and neighbour_step(steps, 2, "prev") == 0
    assert neighbour_step(steps, 3, "prev") == 2 and neighbour_step(steps, 0, "prev") == 0
    scrub = Scrub()
    assert scrub.shown(steps) == 4  # following
    scrub.move(steps, "prev")
    assert scrub.step == 2
    scrub.move(steps, "home")
    assert scrub.step == 2  # an unknown move changes nothing
    scrub.move(steps, "first")
    assert scrub.step == 0
    scrub.move(steps, "next")
    scrub.move(steps, "next")
    assert scrub.step is None and scrub.shown(steps + [6]) == 6


# -- paths stay inside the run ------------------------------------------------------------------------


def test_paths_resolve_inside_the_runs_files_only(tmp_path):
    run = tmp_path / "run"
    (run / "files" / "media" / "images").mkdir(parents=True)
    (run / "files" / "media" / "images" / "a.png").write_bytes(b"")
    (tmp_path / "secret.png").write_bytes(b"")
    assert resolve_media(run, "media/images/a.png") == (run / "files" / "media" / "images" / "a.png").resolve()
    for escaping in ("../../secret.png", "media/../../../secret.png", str(tmp_path / "secret.png"), ""):
        with pytest.raises(MediaPathError):
            resolve_media(run, escaping)


def test_a_symlink_leading_out_of_the_run_is_refused_and_one_inside_is_not(tmp_path):
    run = tmp_path / "run"
    images = run / "files" / "media" / "images"
    images.mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(b"")
    (images / "a.png").write_bytes(b"")
    (images / "out.png").symlink_to(tmp_path / "secret.png")
    (images / "in.png").symlink_to(images / "a.png")
    with pytest.raises(MediaPathError, match="outside"):
        resolve_media(run, "media/images/out.png")
    assert resolve_media(run, "media/images/in.png") == (images / "a.png").resolve()


def test_a_tile_whose_path_escapes_says_so_and_opens_nothing(tmp_path):
    index = MediaIndex()
    index.add(0, "img", {"_type": "images/separated", "filenames": ["media/images/ok.png", "../../../etc/passwd"], "captions": ["a", "b"]})
    model = run_model(index, Scrub(), lambda logged: resolve_media(tmp_path, logged))
    ok, bad = model.tiles
    assert ok.opener is not None and not ok.error
    assert bad.opener is None and bad.error == "passwd: leads outside the run's files"


# -- the workspace's side by side ------------------------------------------------------------------------


def test_side_by_side_takes_each_runs_latest_image_at_or_before_the_step(tmp_path):
    def run(title: str, steps: list[int]) -> RunMedia:
        index = MediaIndex()
        for step in steps:
            index.add(step, "img", {"_type": "image-file", "path": f"media/images/img_{step}.png", "caption": f"c{step}"})
        return RunMedia(title, index, lambda logged: resolve_media(tmp_path, logged))

    runs = [run("a", [0, 10, 20]), run("b", [5, 15]), run("c", [30])]
    scrub = Scrub(step=16)
    model = side_by_side(runs, scrub)
    assert [tile.caption for tile in model.tiles[:2]] == ["a · step 10 · c10", "b · step 15 · c15"]
    assert model.tiles[2].error == "no img at or before step 15"
    assert "step 15" in "".join(text for text, _ in model.scrubber)


# -- images, bounded ---------------------------------------------------------------------------------


def png(path, size=(16, 16), color=(200, 30, 30)) -> None:
    Image.new("RGB", size, color).save(path)


def opener(path):
    return lambda: open(path, "rb")


def test_a_missing_or_corrupt_png_is_one_line_naming_why(tmp_path):
    cache = ImageCache()
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"junk" * 10)
    assert cache.get("gone", opener(tmp_path / "gone.png"), (10, 10)) == "no such file"
    why = cache.get("bad", opener(tmp_path / "bad.png"), (10, 10))
    assert isinstance(why, str) and "\n" not in why and why


def test_an_image_claiming_too_many_pixels_is_refused_before_decoding(tmp_path):
    png(tmp_path / "big.png", (400, 300))
    cache = ImageCache(max_pixels=100_000)
    assert cache.get("big", opener(tmp_path / "big.png"), (10, 10)) == "400×300 is over 0 Mpx: not read"


def test_a_large_jpeg_is_held_only_at_the_size_of_its_tile(tmp_path):
    Image.new("RGB", (3000, 2000), (10, 120, 200)).save(tmp_path / "large.jpg", quality=80)
    cache = ImageCache()
    picture = cache.get("large", opener(tmp_path / "large.jpg"), (60, 40))
    assert picture.size == (60, 40)
    assert cache.held_bytes == 60 * 40 * 3


def test_the_cache_holds_no_more_than_its_bytes_and_keeps_the_latest(tmp_path):
    for index in range(20):
        png(tmp_path / f"{index}.png", (32, 32), (index * 10, 0, 0))
    cache = ImageCache(max_bytes=5 * 32 * 32 * 3)
    for index in range(20):
        cache.get(str(index), opener(tmp_path / f"{index}.png"), (32, 32))
    assert len(cache) == 5 and cache.held_bytes <= cache.max_bytes
    loads = cache.loads
    cache.get("19", opener(tmp_path / "19.png"), (32, 32))
    assert cache.loads == loads  # held: not read again


def test_half_blocks_draw_two_pixels_a_cell_and_keep_the_shape():
    assert fitted((64, 64), (40, 10)) == (20, 10)
    assert fitted((100, 20), (40, 10)) == (40, 4)
    image = Image.new("RGB", (2, 2))
    image.putpixel((0, 0), (255, 0, 0))
    image.putpixel((0, 1), (0, 0, 255))
    rows = HalfBlocks(image, 2, 1).rows()
    assert len(rows) == 1
    first = rows[0][0]
    assert first.text.startswith("▀")
    assert first.style.color.triplet == (255, 0, 0) and first.style.bgcolor.triplet == (0, 0, 255)


def test_histogram_bars_sum_bins_into_columns_and_name_the_range():
    assert columns_of([1, 1, 1, 1], 2) == [2, 2]
    assert columns_of([1, 2], 4) == [1, 1, 2, 2]
    lines = HistogramBars([0, 4, 8], [0.0, 1.0, 2.0, 3.0], height=4).lines(6)
    texts = ["".join(segment.text for segment in line) for line in lines]
    assert texts[0].startswith("max 8")
    assert texts[-1] == "0    3"
    assert texts[-2] == "  ████" and texts[1] == "    ██"


def test_nothing_here_reads_an_image_before_a_tile_asks(image_run):
    log = indexed(image_run)
    model = run_model(log.index, Scrub(key="batch"), log.path)
    assert [tile.caption for tile in model.tiles] == ["digit 0", "digit 1", "digit 2"]
    cache = ImageCache()
    assert cache.loads == 0
    picture = cache.get(model.tiles[0].name, model.tiles[0].opener, (16, 16))
    assert picture.size == (16, 16) and cache.loads == 1
