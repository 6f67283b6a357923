"""Which node labels of a shared run are shown: glob patterns, toggled by name.

An empty filter shows every node. Series and console lines without a label
(an ordinary run, or a writer that set none) are shown only when nothing is
filtered: asking for ``rank3`` means "only rank3".
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True)
class LabelFilter:
    patterns: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str | Iterable[str] | None) -> "LabelFilter":
        """``"rank0,rank3"`` or ``"rank[0-3]"`` (comma- or space-separated globs)."""
        if text is None:
            return cls()
        parts = text.replace(",", " ").split() if isinstance(text, str) else [p for item in text for p in item.replace(",", " ").split()]
        return cls(tuple(dict.fromkeys(parts)))

    @property
    def active(self) -> bool:
        return bool(self.patterns)

    def matches(self, label: str | None) -> bool:
        if not self.patterns:
            return True
        if label is None:
            return False
        return any(fnmatch.fnmatchcase(label, pattern) for pattern in self.patterns)

    def shown(self, labels: Sequence[str]) -> list[str]:
        return [label for label in labels if self.matches(label)]

    def unmatched(self, labels: Sequence[str]) -> list[str]:
        """Patterns that match none of ``labels`` (a typo, or a node not seen yet)."""
        return [p for p in self.patterns if not any(fnmatch.fnmatchcase(label, p) for label in labels)]

    def toggle(self, label: str, labels: Sequence[str]) -> "LabelFilter":
        """Show or hide one node; showing every node again clears the filter."""
        shown = set(self.shown(labels))
        shown.symmetric_difference_update({label})
        if not shown or shown >= set(labels):
            return LabelFilter() if shown else LabelFilter(("∅",))
        return LabelFilter(tuple(label for label in labels if label in shown))

    def only(self, label: str) -> "LabelFilter":
        return LabelFilter((label,))

    def describe(self, labels: Sequence[str]) -> str:
        """For the header: ``labels rank0,rank3 (2 of 4)``; empty when every node shows."""
        if not self.patterns:
            return ""
        shown = self.shown(labels)
        names = ",".join(shown) if shown else "none"
        if len(names) > 40:
            names = names[:39] + "…"
        return f"labels {names} ({len(shown)} of {len(labels)})"
