"""The media pane (``3``) on real runs, driven by keys: tiles with captions, the step scrubber, bars, a table,
a broken image costing only its tile, and the workspace's runs side by side.
"""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from loading import load as loaded
from pilot_waits import until
from textual.widget import Widget
from wandb_runs import make_image_run

from leet.config import Config
from leet.model.store import Store
from leet.sources.workspace import WorkspaceSource
from leet.ui.app import LeetApp
from leet.ui.screens.run import RunScreen
from leet.ui.screens.workspace import WorkspaceScreen
from widgets.graphics import choose
from widgets.image_cache import ImageCache
from widgets.media import MediaPane, Tile

SIZE = (150, 44)
WAIT = 20.0
REPO = Path(__file__).resolve().parent.parent



@asynccontextmanager
async def running(run_dir, size=SIZE):
    source = loaded(run_dir)
    app = LeetApp(source, Config(theme="textual-dark", images="blocks"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        yield app, pilot


async def press(pilot, *keys: str) -> None:
    """Each key, then the pane's reads (on its own thread) done and drawn."""
    for key in keys:
        await pilot.press(key)
        await settled(pilot)


async def settled(pilot) -> None:
    panel = getattr(pilot.app.screen, "media_panel", None)
    if panel is not None:
        await until(pilot, lambda: not panel.busy, "the media pane's reads")
    await pilot.pause()


def pane(app) -> MediaPane:
    return app.screen.query_one("#media", MediaPane)


def row_text(row) -> str:
    return "".join(text for text, _ in row)


def head(app) -> str:
    return row_text(pane(app).model.head)


def scrubber(app) -> str:
    return row_text(pane(app).model.scrubber)


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def tile_lines(tile: Widget) -> list[str]:
    """What one widget draws, row by row (a tile: its caption, then its picture's rows or its why)."""
    region = tile.region
    lines = screen_text(tile.app).splitlines()
    return [line[region.x : region.right] for line in lines[region.y : region.bottom]]


def copy_run(run, where: Path) -> Path:
    """The run's file and its media in a folder of their own (the SDK's logs hold a dangling link)."""
    return Path(shutil.copytree(run.run_dir, where, ignore=shutil.ignore_patterns("logs")))


# -- the run view -------------------------------------------------------------------------------


async def test_3_opens_the_pane_on_the_newest_images_with_their_captions(image_run):
    async with running(image_run.run_dir) as (app, pilot):
        assert not app.screen.query("#media")  # nothing mounted, nothing read, before 3
        await press(pilot, "3")
        assert app.focused is pane(app)
        assert head(app).startswith(" Media batch · images · key 1 of 4")
        assert "step 4" in scrubber(app) and "3 of 3 logged steps" in scrubber(app)
        tiles = list(app.screen.query(Tile))
        assert [str(tile.caption.render()) for tile in tiles] == ["digit 0", "digit 1", "digit 2"]
        for tile in tiles:
            caption, *picture = tile_lines(tile)
            assert caption.strip() == str(tile.caption.render())
            assert picture and all(set(line.strip()) <= {"▀"} for line in picture) and "▀" in picture[0]
        await press(pilot, "3")
        assert not pane(app).display and app.focused is None


async def test_arrows_scrub_the_logged_steps_and_up_down_choose_the_key(image_run):
    async with running(image_run.run_dir) as (app, pilot):
        await press(pilot, "3", "down", "down")  # batch → preds → sample
        assert head(app).startswith(" Media sample · images · key 3 of 4")
        assert "step 5" in scrubber(app) and "following" in scrubber(app)
        await press(pilot, "left")
        assert "step 4" in scrubber(app) and "following" not in scrubber(app)
        assert [tile.caption for tile in pane(app).model.tiles] == ["sample at 4"]
        await press(pilot, "home")
        assert "step 0" in scrubber(app) and "1 of 6" in scrubber(app)
        await press(pilot, "right", "right")
        assert "step 2" in scrubber(app)
        await press(pilot, "up")  # preds logged steps 1 and 4: the latest at or before 2 is 1
        assert head(app).startswith(" Media preds · table")
        assert "step 1" in scrubber(app)
        await press(pilot, "end")
        assert "step 4" in scrubber(app) and "following" in scrubber(app)


async def test_a_table_is_listed_row_by_row_and_a_histogram_drawn_as_bars(image_run):
    async with running(image_run.run_dir) as (app, pilot):
        await press(pilot, "3", "down")
        assert pane(app).model.columns == ("id", "guess")
        text = screen_text(app)
        assert "class 12" in text and "guess" in text  # step 4: class i·4
        await press(pilot, "down", "down")  # weights
        assert pane(app).model.kind == "histogram"
        bars = app.screen.query_one("#media-bars")
        lines = tile_lines(bars)
        assert lines[0].startswith("max ")
        assert any("█" in line for line in lines)
        assert lines[-1].rstrip().endswith("6")


async def test_a_missing_or_corrupt_png_costs_only_its_tile_and_says_why(image_run, tmp_path):
    run_dir = copy_run(image_run, tmp_path / "run")
    files = {}
    async with running(run_dir) as (app, pilot):
        await press(pilot, "3")
        for tile in pane(app).model.tiles:
            files[tile.caption] = Path(tile.name)
    files["digit 1"].write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    files["digit 2"].unlink()
    async with running(run_dir) as (app, pilot):
        await press(pilot, "3")
        first, corrupt, missing = app.screen.query(Tile)
        assert "▀" in tile_lines(first)[1]
        why = str(corrupt.image.render())
        assert why.startswith(files["digit 1"].name + ": ") and "\n" not in why
        assert str(missing.image.render()) == f"{files['digit 2'].name}: no such file"
        assert tile_lines(missing)[1].strip().startswith(files["digit 2"].name[:12])
        assert [str(tile.caption.render()) for tile in (corrupt, missing)] == ["digit 1", "digit 2"]


async def test_only_the_tiles_on_screen_read_their_images(image_run):
    async with running(image_run.run_dir, size=(50, 24)) as (app, pilot):
        await press(pilot, "1", "2", "3")  # the pane alone (a narrow run view hides its overview), 50 cells wide: room for two tiles
        cache = pane(app).cache
        shown = len(app.screen.query(Tile))
        assert shown == 2 and "batch · 2 of 3 shown" in app.screen.query_one("#media-head").plain_rows()[0]
        assert cache.loads == shown
        await press(pilot, "left", "right")
        assert cache.loads == 2 * shown  # step 2's tiles read; step 4's held


# -- the workspace ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def image_workspace(wandb_runs_root):
    root = wandb_runs_root / "image-workspace"
    make_image_run(root, steps=6, run_id="wsimagesa")
    make_image_run(root, steps=3, run_id="wsimagesb")
    return root / "wandb"



async def test_3_in_the_workspace_shows_the_selected_runs_images_side_by_side(image_workspace):
    source = WorkspaceSource(image_workspace, Store())
    source.refresh()
    app = LeetApp(source, Config(theme="textual-dark", images="blocks"), live=False, screen=lambda: WorkspaceScreen(source))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: len(source.selected()) == 1, "the newest run selected")
            for entry in source.entries():
                if entry.key not in source.selected():
                    source.select(entry.key)
            await press(pilot, "3")
            # Each run's media is read on the panel's thread: a tile names its step once its run's rows are read.
            expected = ["images · step 2 · digit 0", "images · step 4 · digit 0"]
            await until(pilot, lambda: sorted(tile.caption for tile in pane(app).model.tiles) == expected, "a tile per run, at its newest step")
            assert not app.screen.query_one("#metrics").display
            assert head(app).startswith(" Media batch · images of 2 runs side by side")
            await press(pilot, "left")  # the shared step 2: both runs logged it
            assert sorted(tile.caption for tile in pane(app).model.tiles) == ["images · step 2 · digit 0"] * 2
            await press(pilot, "3")
            assert app.screen.query_one("#metrics").display
    finally:
        source.stop()


# -- the terminal is never asked ------------------------------------------------------------------


def test_auto_chooses_from_the_environment_and_half_blocks_off_a_terminal():
    assert choose("auto", {"TERM": "xterm-kitty"}, tty=False) == "blocks"
    assert choose("auto", {"TERM": "xterm-kitty"}, tty=True) == "kitty"
    assert choose("auto", {"TERM": "foot"}, tty=True) == "sixel"
    assert choose("auto", {"TERM": "xterm-256color", "TERM_PROGRAM": "WezTerm"}, tty=True) == "sixel"
    assert choose("auto", {"TERM": "xterm-256color", "COLORTERM": "truecolor"}, tty=True) == "blocks"
    assert choose("sixel", {}, tty=False) == "sixel"


def test_loading_the_graphics_widgets_writes_nothing_to_the_terminal_and_waits_for_nothing():
    """On a terminal that never answers, the Sixel and Kitty widgets load at once and send it no query."""
    primary, secondary = pty.openpty()
    script = "from widgets.graphics import graphics_widget; print(graphics_widget('sixel').__name__, graphics_widget('kitty').__name__)"
    process = subprocess.run(
        [sys.executable, "-c", script], stdin=secondary, stdout=secondary, stderr=subprocess.PIPE, cwd=REPO, timeout=60,
        env={**os.environ, "TERM": "xterm-kitty"},
    )
    os.close(secondary)
    written = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:
            break
        if not chunk:
            break
        written += chunk
    os.close(primary)
    assert process.returncode == 0, process.stderr.decode()
    assert b"\x1b" not in written and written.strip() == b"Image TGPImage"  # the Sixel widget class is named Image


def test_the_help_and_start_up_import_no_image_library():
    process = subprocess.run([sys.executable, "-X", "importtime", "-m", "leet", "--help"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert process.returncode == 0
    imported = {line.split("|")[-1].strip().split(".")[0] for line in process.stderr.splitlines() if "|" in line}
    assert "PIL" not in imported and "textual_image" not in imported


# -- the setting ------------------------------------------------------------------------------------


def test_images_is_a_setting_and_a_flag_and_a_bad_value_names_its_source(tmp_path):
    from leet.config import ConfigError, load

    nowhere = tmp_path / "none.toml"
    assert load({}, environ={}, path=nowhere).images == "auto"
    assert load({"images": "sixel"}, environ={}, path=nowhere).images == "sixel"
    (tmp_path / "config.toml").write_text('images = "kitty"\n')
    assert load({}, environ={}, path=tmp_path / "config.toml").images == "kitty"
    with pytest.raises(ConfigError, match="--images: images must be one of auto, blocks, sixel, kitty, off"):
        load({"images": "png"}, environ={}, path=nowhere)


async def test_with_images_off_no_image_is_read(image_run):
    source = loaded(image_run.run_dir)
    app = LeetApp(source, Config(images="off"), live=False, screen=lambda: RunScreen(source))
    async with app.run_test(size=SIZE) as pilot:
        await press(pilot, "3")
        tiles = list(app.screen.query(Tile))
        assert [str(tile.image.render()) for tile in tiles] == ["not drawn: images are off"] * 3
        assert pane(app).cache.loads == 0


def test_the_images_flag_takes_only_its_modes(image_run):
    process = subprocess.run(
        [sys.executable, "-m", "leet", str(image_run.run_dir), "--images", "png"], capture_output=True, text=True, cwd=REPO, timeout=60,
    )
    assert process.returncode == 2 and "--images: invalid choice: 'png'" in process.stderr


async def test_the_run_file_and_its_tables_are_read_off_the_screens_thread(image_run, monkeypatch):
    from leet.sources import media

    readers: set[str] = set()
    original_refresh = media.MediaLog.refresh

    def recorded_refresh(self, *args, **kwargs):
        readers.add(threading.current_thread().name)
        return original_refresh(self, *args, **kwargs)

    monkeypatch.setattr(media.MediaLog, "refresh", recorded_refresh)
    original_table = media.read_table

    def recorded_table(*args, **kwargs):
        readers.add(threading.current_thread().name)
        return original_table(*args, **kwargs)

    monkeypatch.setattr("leet.ui.screens.media.read_table", recorded_table)
    decoders: set[str] = set()
    original_load = ImageCache._load

    def recorded_load(self, *args, **kwargs):
        decoders.add(threading.current_thread().name)
        return original_load(self, *args, **kwargs)

    monkeypatch.setattr(ImageCache, "_load", recorded_load)
    async with running(image_run.run_dir) as (app, pilot):
        await press(pilot, "3")  # batch: three images
        assert [str(tile.caption.render()) for tile in app.screen.query(Tile)] == ["digit 0", "digit 1", "digit 2"]
        await press(pilot, "down")  # preds: a table
        assert pane(app).model.columns == ("id", "guess")
        assert readers and all(name.startswith("leet-media") for name in readers), readers
        assert decoders and threading.current_thread().name not in decoders, decoders
        assert threading.current_thread().name not in readers
