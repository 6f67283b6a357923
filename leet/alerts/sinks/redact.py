"""Credentials kept out of sight: ``${NAME}`` read from the environment, and known secrets hidden in any text a sink shows.

``expand`` remembers which value came from which variable, so that a
``Redactor`` can put ``${NAME}`` back wherever the value shows up; any other
part of a URL that a sink's name does not show becomes ``***``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from leet.common.text import escaped

MIN_SECRET = 3  # shorter parts of a URL are not worth hiding, and hiding them would garble every message
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_LINE_LIMIT = 300


def expand(text: str, environ: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``text`` with each ``${NAME}`` read from ``environ``, and {value: ``${NAME}``} for each value put in."""
    shown_as: dict[str, str] = {}

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise ValueError(f"environment variable {name} is not set (a sink reads ${{{name}}} from it)")
        shown_as[environ[name]] = f"${{{name}}}"
        return environ[name]

    return _VARIABLE.sub(value, text), shown_as


class Redactor:
    """Replaces known secrets (case-insensitively, raw and percent-encoded) in any text."""

    def __init__(self, replacements: Mapping[str, str]) -> None:
        table: dict[str, str] = {}
        for secret, shown in replacements.items():
            if len(secret) >= MIN_SECRET:
                for form in (secret, quote(secret, safe=""), quote(secret)):
                    table.setdefault(form.lower(), shown)
        self._table = table
        forms = sorted(table, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, forms)), re.IGNORECASE) if forms else None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda match: self._table[match.group().lower()], text)

    def line(self, text: str) -> str:
        """``text`` as one escaped line without the secrets, cut to a length a status line can show."""
        text = self(escaped(text))
        return text if len(text) <= _LINE_LIMIT else text[: _LINE_LIMIT - 1] + "…"


def url_parts(url: str) -> list[str]:
    """The parts of a URL that may be secret: host, user, password, path segments, query values, fragment."""
    try:
        split = urlsplit(url)
    except ValueError:
        return [part for part in re.split(r"[/:@?&=#]+", url) if part]
    userinfo, _, hostport = split.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    host = hostport.rsplit(":", 1)[0] if hostport.count(":") == 1 else hostport
    values = [value for key, value in parse_qsl(split.query, keep_blank_values=True) if not key.startswith(":")]
    parts = [host, unquote(user), unquote(password), *map(unquote, split.path.split("/")), *values, unquote(split.fragment)]
    return [part for part in parts if part]
