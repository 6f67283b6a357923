"""Where the config file is and what it holds: a small regular UTF-8 TOML file, read without ever waiting on a FIFO.

Python's TOML parser recurses once per level of nesting and is quadratic in
the parts of one dotted key, so a hostile file could exhaust the stack or the
memory. The text is scanned first, cheaply and outside strings and comments,
and refused past ``MAX_DEPTH`` levels, ``MAX_KEY_PARTS`` parts in one key or
``MAX_TABLES`` tables in all: bounds no hand-written config comes near.
"""

from __future__ import annotations

import os
import re
import sys
from itertools import accumulate
from pathlib import Path
from typing import Any, Mapping

from leet.config.settings import ConfigError
from leet.runfile.files import NotRegularFile, read_regular

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

MAX_FILE_BYTES = 1 << 20  # a config file is a few lines; anything larger is the wrong file
MAX_DEPTH = 32  # arrays and inline tables within each other
MAX_KEY_PARTS = 32  # a.b.c = 1 has three
MAX_TABLES = 10_000  # [headers], inline {tables} and the tables dotted keys make: each costs the parser about 1 KB

# Strings and comments, whose brackets, dots and '=' are text; longest forms first.
_STRING_OR_COMMENT = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*', re.S)
_BARE = r"[A-Za-z0-9_-]+"
# A dotted run of bare keys (a quoted key is one once strings are blanked); it starts at a word's start, so no backtracking goes quadratic.
_DOTTED = re.compile(rf"(?<![A-Za-z0-9_-]){_BARE}(?:[ \t]*\.[ \t]*{_BARE})+")
_HEADER = re.compile(r"^[ \t]*\[", re.M)
_NOT_BRACKET = re.compile(r"[^\[\]{}\n]+")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1, ord("\n"): 0}


def default_path() -> Path:
    from platformdirs import user_config_path

    return user_config_path("leet") / "config.toml"


def config_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """``$LEET_CONFIG``, else the user config dir's file; None when ``LEET_CONFIG`` is set and empty: no config file at all."""
    environ = os.environ if environ is None else environ
    explicit = environ.get("LEET_CONFIG")
    if explicit is None:
        return default_path()
    return Path(explicit).expanduser() if explicit else None


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
    """The TOML in ``text``; a ``ConfigError`` naming ``path`` (and the line) for bad TOML or text past the bounds."""
    why = beyond_bounds(text)
    if why:
        raise ConfigError(f"config file {path} {why}, so not a config file")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"config file {path}: not valid TOML: {error}") from None


def beyond_bounds(text: str) -> str:
    """Where and how ``text`` nests or dots its keys past what the parser may safely be given; "" when it does not."""
    code = _STRING_OR_COMMENT.sub(_blanked, text)
    return _too_deep(code) or _too_dotted(code)


def _blanked(match: re.Match[str]) -> str:
    """A string as a bare word (a quoted key stays a key part), a comment as nothing; its lines kept, so line numbers hold."""
    found = match.group()
    return ("" if found.startswith("#") else "q") + "\n" * found.count("\n")


def _too_deep(code: str) -> str:
    brackets = _NOT_BRACKET.sub("", code)
    for index, depth in enumerate(accumulate(map(_STEP.__getitem__, map(ord, brackets)))):
        if depth > MAX_DEPTH:
            return f"line {brackets.count(chr(10), 0, index) + 1}: nested deeper than {MAX_DEPTH} arrays or inline tables"
    return ""


def _too_dotted(code: str) -> str:
    tables = len(_HEADER.findall(code)) + code.count("{")
    for match in _DOTTED.finditer(code):
        parts = match.group().count(".") + 1
        if parts > MAX_KEY_PARTS:
            return f"line {code.count(chr(10), 0, match.start()) + 1}: a key of {parts:,} dotted parts (at most {MAX_KEY_PARTS})"
        if code[match.end():match.end() + 64].lstrip(" \t")[:1] in ("=", "]"):  # a key or a header, not a number
            tables += parts - 1
    if tables > MAX_TABLES:
        return f"holds more than {MAX_TABLES:,} tables"
    return ""
