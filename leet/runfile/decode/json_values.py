"""JSON values as a run file holds them: decoded, capped in depth, flattened.

Values arrive as JSON text, with the non-standard ``NaN``/``Infinity``
literals. A writer can send a value nested a million levels deep, and every
reader of config and summary values (display, flatten, JSON output) walks
it: past ``DEPTH_CAP`` levels a value stays text, as a ``DeepJSON``. A value
nobody has looked at yet can stay text too, as a ``RawJSON``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Mapping

_loads = json.loads
# The C scanner behind json.loads, called directly: half the cost per value, same results.
# ``scan_json(text, 0)`` gives ``(value, where it ended)``; StopIteration or ValueError for text that is not JSON.
scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set per instance, absent from the stubs

# JSON nesting decoded at most.
DEPTH_CAP = 32
CUT = "…"  # stands for the levels below the cap in a shallow copy
# A text shorter than this holds too few brackets to nest deeper than the cap: ``too_deep`` need not look.
DEEP_LENGTH = 2 * (DEPTH_CAP + 1)
# Strings (skipped whole, escapes included) and the brackets outside them.
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{\]}]', re.S)


def json_value(text: str) -> Any:
    """A ``value_json`` decoded; NaN/Infinity become floats; text that is not JSON is kept as it is.

    A value nested deeper than ``DEPTH_CAP`` stays text, as a ``DeepJSON``.
    """
    if len(text) >= DEEP_LENGTH and too_deep(text):
        return DeepJSON(text)
    try:
        value, end = scan_json(text, 0)
    except (StopIteration, ValueError):
        return text if text else None
    except RecursionError:
        return DeepJSON(text)
    if end != len(text):
        try:
            return _loads(text)  # trailing whitespace is fine, anything else is not JSON
        except ValueError:
            return text
    return value


def too_deep(text: str) -> bool:
    """Whether the JSON in ``text`` nests more than ``DEPTH_CAP`` levels (brackets in strings do not count)."""
    if text.count("[") + text.count("{") <= DEPTH_CAP:
        return False
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > DEPTH_CAP:
                return True
        elif bracket in "]}":
            depth -= 1
    return False


class DeepJSON(str):
    """A JSON value nested deeper than ``DEPTH_CAP``, kept as its text.

    Output that keeps values whole (``inspect --json``) writes the text as a
    string; display shows :meth:`shallow`.
    """

    def shallow(self, keep: int = DEPTH_CAP) -> Any:
        """The value decoded to ``keep`` levels (at most ``DEPTH_CAP``), each container below them replaced by ``CUT``."""
        return _cut(self, min(keep, DEPTH_CAP))[0]

    def depth(self) -> int:
        """How many levels the value nests."""
        return _cut(self, DEPTH_CAP)[1]

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # Split-load frames carry values as RawJSON, which decodes back into a DeepJSON when shown.
        return RawJSON, (str(self),)


@lru_cache(maxsize=64)
def _cut(text: str, keep: int) -> tuple[Any, int]:
    # A long run redraws its overview often; cutting a value a million levels deep takes a while.
    cut, depth = cut_text(text, keep)
    return json_value(cut), depth


def cut_text(text: str, keep: int = DEPTH_CAP) -> tuple[str, int]:
    """``text`` with every container that starts below ``keep`` levels replaced by the string ``CUT``, and its depth."""
    pieces: list[str] = []
    depth = deepest = 0
    resume = 0
    for token in _JSON_TOKENS.finditer(text):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth == keep + 1:
                pieces.append(text[resume : token.start()])
                pieces.append(f'"{CUT}"')
            deepest = max(deepest, depth)
        elif bracket in "]}":
            if depth == keep + 1:
                resume = token.end()
            depth -= 1
    if depth <= keep:
        pieces.append(text[resume:])
    return "".join(pieces), deepest


def flatten(mapping: Mapping[str, Any], prefix: str = "", limit: int | None = None) -> dict[str, Any]:
    """Nested dicts as one level of dotted keys: ``{"a": {"b": 1}}`` → ``{"a.b": 1}``.

    Walks with its own stack: a mapping may nest deeper than Python recurses.
    ``limit``: stop after that many leaves (a config can hold a million).
    """
    flat: dict[str, Any] = {}
    stack = [(prefix, iter(mapping.items()))]
    while stack:
        outer, items = stack[-1]
        for key, value in items:
            name = f"{outer}{key}"
            if isinstance(value, dict) and value:
                stack.append((name + ".", iter(value.items())))
                break
            if limit is not None and len(flat) >= limit:
                return flat
            flat[name] = value
        else:
            stack.pop()
    return flat


class RawJSON(str):
    """A value still in its JSON text; ``json_value(raw)`` decodes it when someone looks."""

    __slots__ = ()
