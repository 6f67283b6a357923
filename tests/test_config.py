import pytest

from leet.config import Config, ConfigError, load


def write(tmp_path, text):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_defaults_without_a_file(tmp_path):
    config = load(environ={}, path=tmp_path / "missing.toml")
    assert config == Config()


def test_file_then_environment_then_flags(tmp_path):
    path = write(tmp_path, 'interval = 5\ntheme = "nord"\n[grid]\nrows = 2\ncols = 4\n')
    config = load(environ={}, path=path)
    assert (config.interval, config.theme, config.grid_rows, config.grid_cols) == (5.0, "nord", 2, 4)
    config = load(environ={"LEET_INTERVAL": "1.5", "LEET_GRID": "1x1"}, path=path)
    assert (config.interval, config.grid_rows, config.grid_cols) == (1.5, 1, 1)
    config = load({"interval": 0.5, "theme": None}, environ={"LEET_INTERVAL": "1.5"}, path=path)
    assert config.interval == 0.5 and config.theme == "nord"


@pytest.mark.parametrize(
    "text, message",
    [
        ("interval = 0.01", "at least 0.1"),
        ("interval = 'soon'", "number of seconds"),
        ("[grid]\nrows = 12", "1 to 9"),
        ("colour = 'red'", "unknown setting"),
        ("interval = ", "not valid TOML"),
        ("disk_paths = 3", "list of paths"),
    ],
)
def test_bad_settings_name_the_file_and_the_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        load(environ={}, path=path)
    assert message in str(error.value)
    if "unknown" in message or "TOML" in message:
        assert str(path) in str(error.value)


def test_leet_config_env_points_at_the_file(tmp_path):
    path = write(tmp_path, "interval = 3")
    assert load(environ={"LEET_CONFIG": str(path)}).interval == 3.0
