"""layout.json: read back bounded and checked, written atomically, one message when it cannot be."""

from __future__ import annotations

import json
import os
import stat

import pytest

from leet.config import load
from leet.config.layout_state import (
    FILE_NAME,
    MAX_FILE_BYTES,
    Layout,
    LayoutFile,
    read_layout,
    remembered_grid,
    remembered_modes,
    remembered_sort,
    state_dir,
    write_atomically,
)
from leet.config.remembered import remembered, with_remembered


def test_state_dir_follows_leet_state_dir(tmp_path):
    assert state_dir({"LEET_STATE_DIR": str(tmp_path)}) == tmp_path
    assert state_dir({}).name == "leet"


def test_a_layout_round_trips(tmp_path):
    first = LayoutFile(tmp_path / "state")
    assert first.message == "" and first.layout == Layout()
    first.layout.views["symon"] = {"grid": [2, 4], "sidebar": False, "modes": {"CPU cores": "log"}}
    first.layout.settings["theme"] = "nord"
    assert first.save() == ""
    again = LayoutFile(tmp_path / "state")
    assert again.message == ""
    assert again.layout.view("symon") == {"grid": [2, 4], "sidebar": False, "modes": {"CPU cores": "log"}}
    assert again.layout.settings == {"theme": "nord"}


def test_nothing_changed_writes_nothing(tmp_path):
    keeper = LayoutFile(tmp_path)
    assert keeper.save() == ""
    assert not (tmp_path / FILE_NAME).exists()


def test_the_write_is_atomic_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / FILE_NAME
    write_atomically(path, "old")

    def broken_replace(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomically(path, "new")
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == [FILE_NAME]  # the temporary file went too


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_folder_that_cannot_be_written_is_one_message_then_silence(tmp_path):
    folder = tmp_path / "state"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        keeper = LayoutFile(folder)
        keeper.layout.views["symon"] = {"sidebar": False}
        first = keeper.save()
        keeper.layout.views["symon"] = {"sidebar": True}
        assert "cannot write" in first and str(folder) in first
        assert keeper.save() == ""
    finally:
        folder.chmod(stat.S_IRWXU)


def test_a_path_that_cannot_be_a_folder_is_one_message_then_silence(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    keeper = LayoutFile(blocker / "state")  # a folder under a regular file: never writable, root or not
    keeper.layout.views["symon"] = {"sidebar": False}
    assert "cannot write" in keeper.save()
    keeper.layout.views["symon"] = {"sidebar": True}
    assert keeper.save() == ""


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"version": 2}', "not a version 1 layout"),
        (b"[1, 2]", "not a version 1 layout"),
        (b'{"version": 1, "views": []}', "views must be"),
        (b'{"version": 1, "views": {"symon": {"grid": NaN}}}', "not valid JSON"),
        (b'{"version": 1, "views": {"symon": {"grid": 1e999}}}', "out of range"),
        (b'{"version": 1, "other": 1}', "unknown entries"),
        (b'{"version": 1, "views": {"a": {"b": {"c": {"d": [1]}}}}}', "deeper than"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
        (json.dumps({"version": 1, "views": {"v": {"modes": {str(i): "log" for i in range(2000)}}}}).encode(), "more than 1000 entries"),
        (json.dumps({"version": 1, "settings": {"theme": "x" * 10_000}}).encode(), "longer than"),
    ],
)
def test_a_broken_or_hostile_file_is_the_defaults_and_one_message(tmp_path, content, why):
    path = tmp_path / FILE_NAME
    path.write_bytes(content)
    layout, message = read_layout(path)
    assert layout == Layout()
    assert why in message and message.startswith("remembered layout not used")


def test_a_huge_file_is_refused_unread(tmp_path):
    path = tmp_path / FILE_NAME
    path.write_bytes(b" " * (MAX_FILE_BYTES + 10))
    layout, message = read_layout(path)
    assert layout == Layout() and "larger than" in message


def test_a_fifo_is_refused_never_waited_on(tmp_path):
    path = tmp_path / FILE_NAME
    os.mkfifo(path)
    layout, message = read_layout(path)
    assert layout == Layout() and "FIFO" in message


def test_a_broken_file_is_replaced_by_the_next_save(tmp_path):
    (tmp_path / FILE_NAME).write_text("{broken")
    keeper = LayoutFile(tmp_path)
    assert keeper.message
    keeper.layout.views["run"] = {"panes": {"console": True}}
    assert keeper.save() == ""
    assert LayoutFile(tmp_path).layout.view("run") == {"panes": {"console": True}}


def test_remembered_values_are_checked_before_use():
    assert remembered_grid([2, 3]) == (2, 3)
    assert remembered_grid([0, 3]) is None and remembered_grid([True, 3]) is None and remembered_grid("2x3") is None
    assert remembered_sort(["cpu", False], {"cpu", "mem"}) == ("cpu", False)
    assert remembered_sort(["rm -rf", False], {"cpu"}) is None
    assert remembered_modes({"a": "log", "b": "explode", "c": 3}, ("line", "log")) == {"a": "log"}
    assert remembered_modes([1], ("line",)) == {}


# -- the remembered layer of the settings -------------------------------------------
def test_remembered_beats_the_file_for_layout_settings_only(tmp_path):
    config_file = tmp_path / "config.toml"
    config_file.write_text('theme = "nord"\ninterval = 5\n[grid]\nrows = 2\ncols = 2\n')
    config = load(environ={}, path=config_file)
    assert config.origin("theme") == "file" and config.origin("grid_rows") == "file" and config.origin("mouse") == "default"
    effective, problems = with_remembered(config, {"theme": "gruvbox", "interval": 1.0, "grid_rows": 4, "history_minutes": 30})
    assert problems == []
    assert (effective.theme, effective.grid_rows, effective.interval, effective.history_minutes) == ("gruvbox", 4, 5.0, 30.0)
    assert effective.origin("theme") == "remembered" and effective.origin("interval") == "file"
    assert effective.origin("history_minutes") == "remembered"


def test_flags_and_environment_beat_remembered(tmp_path):
    config = load({"interval": 0.5}, environ={"LEET_GRID": "2x2"}, path=tmp_path / "none.toml")
    assert config.origin("interval") == "flag" and config.origin("grid_cols") == "env"
    effective, _ = with_remembered(config, {"interval": 3.0, "grid_cols": 5})
    assert (effective.interval, effective.grid_cols) == (0.5, 2)


def test_a_bad_remembered_setting_is_a_message_not_a_failure(tmp_path):
    config = load(environ={}, path=tmp_path / "none.toml")
    effective, problems = with_remembered(config, {"interval": -1, "no_such": 1, "theme": "nord"})
    assert effective.theme == "nord" and effective.interval == 2.0
    assert len(problems) == 2 and "interval" in problems[0] and "no_such" in problems[1]


def test_remember_off_reads_nothing(tmp_path):
    (tmp_path / FILE_NAME).write_text(json.dumps({"version": 1, "settings": {"theme": "nord"}}))
    config = load({"remember": False}, environ={}, path=tmp_path / "none.toml")
    assert remembered(config, {"LEET_STATE_DIR": str(tmp_path)}) == (config, None)
    effective, remembering = remembered(load(environ={}, path=tmp_path / "none.toml"), {"LEET_STATE_DIR": str(tmp_path)})
    assert effective.theme == "nord" and remembering is not None and remembering.below.theme == "textual-dark"


def test_remember_false_in_the_config_file_turns_it_off(tmp_path):
    config_file = tmp_path / "config.toml"
    config_file.write_text("remember = false\n")
    config = load(environ={}, path=config_file)
    assert config.remember is False and config.origin("remember") == "file"
    assert remembered(config, {"LEET_STATE_DIR": str(tmp_path / "state")}) == (config, None)
    assert not (tmp_path / "state").exists()
