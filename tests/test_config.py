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


def test_gpu_ids_come_from_flag_env_or_file_and_bad_ones_are_named(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("gpu_ids = [0, 2]\n")
    assert load(path=path, environ={}).gpu_ids == (0, 2)
    assert load(path=path, environ={"LEET_GPU_IDS": "1"}).gpu_ids == (1,)
    assert load({"gpu_ids": "3,1,3"}, path=path, environ={}).gpu_ids == (3, 1)
    assert load(path=tmp_path / "missing.toml", environ={}).gpu_ids is None, "every GPU by default"
    path.write_text('gpu_ids = ["a"]\n')
    with pytest.raises(ConfigError, match="gpu_ids"):
        load(path=path, environ={})
