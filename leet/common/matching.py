"""One matching rule for every filter: regex first, substring as the fallback.

Case-insensitive and unanchored. A pattern that is not a valid regular
expression (``gpu[0``) still filters, by plain substring, so a person typing
into a filter never sees an error for a half-typed pattern.
"""

from __future__ import annotations

import re
from typing import Callable

_META = set(".^$*+?{}[]\\|()")


def compile_filter(pattern: str) -> Callable[[str], bool]:
    """A predicate for ``pattern``; the empty pattern matches everything."""
    if not pattern:
        return lambda text: True
    if _META & set(pattern):
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error:
            pass
        else:
            return lambda text: regex.search(text) is not None
    needle = pattern.casefold()
    return lambda text: needle in text.casefold()


def is_regex(pattern: str) -> bool:
    """Whether ``pattern`` is used as a regular expression (for the status line)."""
    if not (_META & set(pattern)):
        return False
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True
