"""Where the config file is and what it holds: a small regular UTF-8 TOML file, read without ever waiting on a FIFO."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Mapping

from leet.config.settings import ConfigError
from leet.runfile.files import NotRegularFile, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MAX_FILE_BYTES = 1 << 20  # a config file is a few lines; anything larger is the wrong file


def default_path() -> Path:
    from platformdirs import user_config_path

    return user_config_path("leet") / "config.toml"


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    explicit = environ.get("LEET_CONFIG")
    return Path(explicit).expanduser() if explicit else default_path()


def config_text(path: Path, must_exist: bool) -> str | None:
    """The text of ``path``; None when there is no such file, unless ``must_exist`` (a file named on the command line)."""
    try:
        data = read_regular(path, MAX_FILE_BYTES + 1)  # a FIFO or a device is refused, never waited on
    except FileNotFoundError:
        if must_exist:
            raise ConfigError(f"config file {path} does not exist") from None
        return None
    except NotRegularFile as error:
        raise ConfigError(f"config file {error}") from None
    except OSError as error:
        raise ConfigError(f"config file {path}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"config file {path}: larger than {MAX_FILE_BYTES >> 20} MiB, so not a config file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"config file {path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})") from None


def parse_toml(text: str, path: Path) -> Mapping[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {path}: not valid TOML: {error}") from None
