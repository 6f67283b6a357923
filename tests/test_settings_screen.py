"""F2: every setting with its value and where it came from; a change is checked and remembered, a reset forgets it."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from pathlib import Path

from leet.config import load
from leet.config.layout_state import FILE_NAME, state_dir
from leet.config.remembered import remembered
from leet.testing.demo import make_demo
from leet.ui.app import LeetApp
from leet.ui.screens.settings import SettingsScreen
from leet.ui.views.settings import setting_rows, typed_value, value_text


def _config(tmp_path: Path, text: str = "", **flags):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load(flags, environ={}, path=path)


@asynccontextmanager
async def symon(config, remember: bool = True):
    demo = make_demo(samples=5)
    effective, remembering = remembered(config) if remember else (config, None)
    app = LeetApp(demo.source, effective, clock=demo.clock, live=False, remembering=remembering)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        yield app, pilot


def listed(app) -> dict[str, str]:
    return dict(app.screen.list.items)


def said(app) -> str:
    return str(app.screen.query_one("#settings-say").render())


async def open_on(pilot, app, name: str) -> None:
    await pilot.press("f2")
    await pilot.pause()
    assert isinstance(app.screen, SettingsScreen)
    app.screen.list.cursor = [item for item, _ in app.screen.list.items].index(name)


# -- the model ------------------------------------------------------------------------------
def test_values_read_as_a_config_file_writes_them():
    assert typed_value("2.5") == 2.5 and typed_value("true") is True and typed_value("[0, 2]") == [0, 2]
    assert typed_value("nord") == "nord" and typed_value(" 1979-05-27 ") == "1979-05-27"
    assert value_text(("/", "/data")) == '["/", "/data"]' and value_text(None) == "(none)" and value_text(2.0) == "2"


def test_every_setting_is_listed_with_where_it_came_from(tmp_path):
    config = _config(tmp_path, 'theme = "nord"\n', interval=0.5)
    rows = {row.name: row for row in setting_rows(config)}
    assert {"interval", "theme", "grid_rows", "grid_cols", "sidebar", "history_minutes", "remember", "images"} <= set(rows)
    assert (rows["interval"].origin, rows["theme"].origin, rows["mouse"].origin) == ("flag", "file", "default")
    assert "--interval" in rows["interval"].fixed and rows["theme"].fixed == "" and rows["mouse"].note == "at start"
    assert rows["theme"].note == ""  # followed at once
    from_file = {row.name: row for row in setting_rows(_config(tmp_path, "crash_after = 60\n"))}
    assert "config file, which wins" in from_file["crash_after"].fixed  # not a layout setting: the file wins


# -- on screen ------------------------------------------------------------------------------
async def test_f2_lists_settings_with_their_origins(tmp_path):
    async with symon(_config(tmp_path, "history_minutes = 5\n", interval=0.5)) as (app, pilot):
        await pilot.press("f2")
        await pilot.pause()
        items = listed(app)
        assert items["interval"].startswith("0.5 · flag")
        assert items["history_minutes"] == "5 · file · at start"
        assert items["theme"].endswith("· default")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsScreen)


async def test_a_change_is_checked_remembered_and_reset(tmp_path):
    config = _config(tmp_path)
    async with symon(config) as (app, pilot):
        await open_on(pilot, app, "history_minutes")
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#settings-input").value = ""
        await pilot.press(*"-3", "enter")
        await pilot.pause()
        assert "history_minutes must be positive" in said(app)
        app.screen.query_one("#settings-input").value = ""
        await pilot.press(*"30", "enter")
        await pilot.pause()
        assert listed(app)["history_minutes"] == "30 · remembered · at start"
        assert "set to 30" in said(app)
        saved = json.loads((state_dir() / FILE_NAME).read_text())
        assert saved["settings"] == {"history_minutes": 30}
    assert not (tmp_path / "config.toml").read_text()  # the config file is never written

    async with symon(config) as (app, pilot):
        assert app.config.history_minutes == 30 and app.config.origin("history_minutes") == "remembered"
        await open_on(pilot, app, "history_minutes")
        await pilot.press("r")
        await pilot.pause()
        assert listed(app)["history_minutes"] == "10 · default · at start"
        assert json.loads((state_dir() / FILE_NAME).read_text())["settings"] == {}


async def test_the_theme_and_the_grid_follow_at_once(tmp_path):
    async with symon(_config(tmp_path)) as (app, pilot):
        await open_on(pilot, app, "theme")
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#settings-input").value = ""
        await pilot.press(*"nord", "enter")  # r and q are letters of a value while it is typed
        await pilot.pause()
        assert app.theme == "nord" and listed(app)["theme"] == '"nord" · remembered'
        app.screen.list.cursor = [item for item, _ in app.screen.list.items].index("grid_cols")
        await pilot.press("enter")
        await pilot.pause()
        app.screen.query_one("#settings-input").value = "2"
        await pilot.press("enter", "escape")
        await pilot.pause()
        assert app.screen.grid.cols == 2
        await pilot.press("f2")
        await pilot.pause()
        app.screen.list.cursor = [item for item, _ in app.screen.list.items].index("theme")
        await pilot.press("r")
        await pilot.pause()
        assert app.theme == "textual-dark"
        await pilot.press("escape")
        await pilot.pause()
        app.exit()
    assert json.loads((state_dir() / FILE_NAME).read_text())["settings"] == {"grid_cols": 2}


async def test_a_flag_set_setting_says_why_it_cannot_be_changed(tmp_path):
    async with symon(_config(tmp_path, interval=0.5)) as (app, pilot):
        await open_on(pilot, app, "interval")
        await pilot.press("enter")
        await pilot.pause()
        assert "--interval" in said(app) and not app.screen.query_one("#settings-input").display


async def test_with_remembering_off_settings_are_only_read(tmp_path):
    async with symon(_config(tmp_path, remember=False), remember=False) as (app, pilot):
        await open_on(pilot, app, "history_minutes")
        assert "Remembering is off" in said(app)
        await pilot.press("enter")
        await pilot.pause()
        assert "config.toml" in said(app) and not app.screen.query_one("#settings-input").display
