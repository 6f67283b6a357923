"""Threshold rules as people write them: ``gpu.*.temp > 85 for 2m``.

One rule is ``KEY OP NUMBER ['%'] CLAUSE*``; a clause is ``for DURATION``,
``while running``, ``cooldown DURATION`` or ``level info|warning|warn|error``,
and a duration is number-unit groups (``30s``, ``1h30m``, ``0.5s``; units
ms, s, m, h, d). Keywords and units are case-insensitive. The key is an
fnmatch glob, case-sensitive, where ``*`` crosses dots and slashes; a ``/l:``
in it splits off a glob for the node label. A key with spaces, operator
characters or a leading quote is written in quotes, single or double, with no
escapes inside. A ``#`` where a clause could start begins a comment.

A rule that cannot be read is a :class:`RuleError` naming the 1-based column
of the text as given, so a caller can point at it (:meth:`RuleError.caret`).
"""

from __future__ import annotations

import fnmatch
import math
import operator
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Pattern

from leet.alerts.events import LEVELS, WARNING, level_of
from leet.model.keys import LABEL_SEPARATOR, join_label, split_label

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
}
_OP_CHARS = frozenset("<>=!")
_OP_LIST = ">, >=, <, <=, ==, !="
# What people type when they mean one of ours.
_OP_GUESSES = {"=>": ">=", "=<": "<=", "=": "==", "<>": "!=", "!": "!=", "=!": "!=", "!==": "!=", "===": "=="}

UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([A-Za-z]*)")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)

CLAUSES = ("for", "while", "cooldown", "level")
_LEVEL_WORDS = ("info", "warning", "warn", "error")
_DURATION_HINT = "a duration such as 30s, 2m or 1h"
_EXAMPLE = "gpu.*.temp > 85 for 2m"
_SHOWN = 24  # a quoted token in a message is cut to this many characters


class RuleError(ValueError):
    """A rule that cannot be read: ``column 14: expected a duration … after 'for', found 'two'``."""

    def __init__(self, reason: str, column: int, rule_text: str, line: int | None = None) -> None:
        self.reason = reason
        self.column = column
        self.rule_text = rule_text
        self.line = line
        where = f"column {column}" if line is None else f"line {line}, column {column}"
        super().__init__(f"{where}: {reason}")

    def caret(self) -> str:
        """The rule, and a ``^`` under the column (tabs kept, wide characters counted twice)."""
        pad = "".join(_blank_like(char) for char in self.rule_text[: self.column - 1])
        return f"{self.rule_text}\n{pad}^"

    def __reduce__(self) -> tuple:
        return (RuleError, (self.reason, self.column, self.rule_text, self.line))

    def on_line(self, line: int) -> RuleError:
        return RuleError(self.reason, self.column, self.rule_text, line)


def _blank_like(char: str) -> str:
    if char == "\t":
        return "\t"
    return "  " if unicodedata.east_asian_width(char) in ("W", "F") else " "


@dataclass(frozen=True)
class Rule:
    """One threshold rule; ``parse_rule`` makes them, and equal fields mean the same rule."""

    text: str  # as written, stripped (a trailing comment left out)
    key_glob: str
    label_glob: str | None
    op: str
    threshold: float
    for_s: float = 0.0
    while_running: bool = False
    cooldown_s: float = 0.0  # 0: no cooldown
    level: str = WARNING
    percent: bool = False  # the number was written with '%'; the value is compared as it is
    _key_re: Pattern[str] = field(init=False, repr=False, compare=False)
    _label_re: Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise ValueError(f"unknown operator {self.op!r}: use one of {_OP_LIST}")
        if self.level not in LEVELS:
            raise ValueError(f"unknown level {self.level!r}: use one of {', '.join(LEVELS)}")
        object.__setattr__(self, "_key_re", re.compile(fnmatch.translate(self.key_glob)))
        label_re = None if self.label_glob is None else re.compile(fnmatch.translate(self.label_glob))
        object.__setattr__(self, "_label_re", label_re)

    def matches(self, key: str) -> bool:
        """Whether a stored key (``gpu.3.temp/l:node-12``, label included) is one this rule watches."""
        bare, label = split_label(key)
        if self._key_re.match(bare) is None:
            return False
        if self._label_re is None:
            return True
        return label is not None and self._label_re.match(label) is not None

    def holds(self, value: float) -> bool:
        """Whether the condition holds for ``value``; NaN never does, whatever the operator."""
        if value != value:
            return False
        return OPERATORS[self.op](value, self.threshold)

    @property
    def threshold_text(self) -> str:
        return number_text(self.threshold) + ("%" if self.percent else "")

    def condition(self, key: str) -> str:
        """``KEY OP NUMBER [for D]`` for a key of the caller's choosing (an alert names the key that crossed)."""
        text = f"{key} {self.op} {self.threshold_text}"
        return f"{text} for {format_duration(self.for_s)}" if self.for_s else text

    def describe(self) -> str:
        """The rule in its normal form, which ``parse_rule`` reads back to the same rule."""
        parts = [self.condition(_key_text(join_label(self.key_glob, self.label_glob)))]
        if self.while_running:
            parts.append("while running")
        if self.cooldown_s:
            parts.append(f"cooldown {format_duration(self.cooldown_s)}")
        if self.level != WARNING:
            parts.append(f"level {self.level}")
        return " ".join(parts)


def number_text(value: float) -> str:
    """A threshold as it would be written: ``85``, ``0.5``, ``1e-05``."""
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def format_duration(seconds: float, sep: str = "") -> str:
    """``120`` → ``2m``, ``5400`` → ``1h30m``, ``0.5`` → ``0.5s``; to the millisecond. ``sep=" "`` → ``2m 10s``."""
    if not math.isfinite(seconds):
        return str(seconds)
    if seconds < 0:
        return "-" + format_duration(-seconds, sep)
    whole, millis = divmod(round(seconds * 1000), 1000)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        count, whole = divmod(whole, size)
        if count:
            parts.append(f"{count}{unit}")
    if millis:
        parts.append(f"{whole}.{millis:03d}".rstrip("0") + "s")
    elif whole or not parts:
        parts.append(f"{whole}s")
    return sep.join(parts)


def parse_rule(text: str) -> Rule:
    """Read one rule; a mistake is a :class:`RuleError` pointing at its column."""
    return _Parser(text).rule()


def parse_rules(lines: Iterable[str]) -> list[Rule]:
    """Read a rules file: one rule a line; blank lines and lines starting with ``#`` are skipped.

    A mistake is a :class:`RuleError` that names its line (``.line``, from 1).
    """
    rules = []
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            rules.append(parse_rule(line))
        except RuleError as error:
            raise error.on_line(number) from None
    return rules


def _key_text(key: str) -> str:
    """The key as a rule writes it: bare when it reads back whole, else in quotes."""
    if key and key[0] not in "\"'" and _unquoted_end(key, 0) == len(key):
        return key
    quote = "'" if '"' in key else '"'
    return f"{quote}{key}{quote}"


def _unquoted_end(text: str, start: int) -> int:
    """Where a bare key that starts at ``start`` ends: at a space or an operator, a ``[...]`` set read whole."""
    pos = start
    while pos < len(text) and not text[pos].isspace() and text[pos] not in _OP_CHARS:
        pos = _set_end(text, pos, within_word=True) if text[pos] == "[" else pos + 1
    return pos


def _set_end(text: str, pos: int, within_word: bool = False) -> int:
    """Past the ``]`` that closes the glob set opening at ``pos`` (fnmatch's reading), or ``pos + 1`` when none does.

    ``within_word``: a bare key ends at a space, so its sets do too.
    """
    end = pos + 1
    if end < len(text) and text[end] == "!":
        end += 1
    if end < len(text) and text[end] == "]":
        end += 1
    while end < len(text) and text[end] != "]" and not (within_word and text[end].isspace()):
        end += 1
    return end + 1 if end < len(text) and text[end] == "]" else pos + 1


def _unclosed_set(glob: str) -> int | None:
    """The index of a ``[`` no ``]`` closes (fnmatch would take it as a plain character), or None."""
    pos = 0
    while pos < len(glob):
        if glob[pos] == "[":
            end = _set_end(glob, pos)
            if end == pos + 1:
                return pos
            pos = end
        else:
            pos += 1
    return None


def _cut(token: str) -> str:
    return token if len(token) <= _SHOWN else token[: _SHOWN - 1] + "…"


def _shown(token: str) -> str:
    return f"'{_cut(token)}'" if token else "the end of the rule"


class _Parser:
    """One pass over the text; ``pos`` indexes the text as given, so errors point into it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, reason: str, at: int) -> RuleError:
        return RuleError(reason, at + 1, self.text)

    def skip_space(self) -> int:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.pos

    def word(self) -> tuple[str, int]:
        """The next run of non-space characters, and where it starts."""
        start = self.skip_space()
        while self.pos < len(self.text) and not self.text[self.pos].isspace():
            self.pos += 1
        return self.text[start:self.pos], start

    def peek_word(self) -> str:
        pos = self.pos
        token = self.word()[0]
        self.pos = pos
        return token

    def rule(self) -> Rule:
        key_glob, label_glob, quoted = self.key()
        op = self.operator(quoted)
        threshold, percent = self.number(op)
        clauses, end = self.clauses()
        return Rule(
            text=self.text[:end].strip(), key_glob=key_glob, label_glob=label_glob, op=op, threshold=threshold, percent=percent,
            for_s=clauses.get("for", 0.0), while_running="while" in clauses, cooldown_s=clauses.get("cooldown", 0.0),
            level=clauses.get("level", WARNING),
        )

    def key(self) -> tuple[str, str | None, str]:
        """The key and label globs, and the bare key text when it was not quoted (for a hint)."""
        start = self.skip_space()
        if start == len(self.text):
            raise self.fail(f"empty rule: expected KEY OP NUMBER, such as {_EXAMPLE}", start)
        if self.text[start] in "\"'":
            quote = self.text[start]
            close = self.text.find(quote, start + 1)
            if close < 0:
                raise self.fail(f"unclosed quote: the key opened with {quote} has no closing {quote}", start)
            key, key_at, bare = self.text[start + 1:close], start + 1, ""
            self.pos = close + 1
            if not key:
                raise self.fail("expected a metric key between the quotes", start)
        else:
            self.pos = _unquoted_end(self.text, start)
            key, key_at = self.text[start:self.pos], start
            bare = key
            if not key:
                raise self.fail(f"expected a metric key before '{self.peek_word()}', such as {_EXAMPLE}", start)
        key_glob, label_glob = self.split(key, key_at)
        return key_glob, label_glob, bare

    def split(self, key: str, key_at: int) -> tuple[str, str | None]:
        cut = key.find(LABEL_SEPARATOR)
        key_glob = key if cut < 0 else key[:cut]
        label_glob = None if cut < 0 else key[cut + len(LABEL_SEPARATOR):]
        if not key_glob:
            raise self.fail(f"expected a metric key before '{LABEL_SEPARATOR}'", key_at)
        if label_glob == "":
            raise self.fail(f"expected a node label glob after '{LABEL_SEPARATOR}', such as node-*", key_at + len(key))
        for glob, offset in ((key_glob, 0), (label_glob, cut + len(LABEL_SEPARATOR))):
            bad = None if glob is None else _unclosed_set(glob)
            if bad is not None:
                raise self.fail("unclosed '[' in the key: a glob set needs its ']' (write [[] for a plain '[')", key_at + offset + bad)
        return key_glob, label_glob

    def operator(self, bare_key: str) -> str:
        start = self.skip_space()
        while self.pos < len(self.text) and self.text[self.pos] in _OP_CHARS:
            self.pos += 1
        op = self.text[start:self.pos]
        if not op:
            found = self.peek_word()
            hint = ""
            if bare_key and found and _NUMBER.match(found) is None:
                hint = f" (a key with spaces goes in quotes: \"{bare_key} {found}\")"
            raise self.fail(f"expected an operator ({_OP_LIST}) after the key, found {_shown(found)}{hint}", start)
        if op not in OPERATORS:
            guess = _OP_GUESSES.get(op)
            hint = f" (did you mean '{guess}'?)" if guess else ""
            raise self.fail(f"unknown operator '{op}': use one of {_OP_LIST}{hint}", start)
        return op

    def number(self, op: str) -> tuple[float, bool]:
        token, start = self.word()
        body = token[:-1] if token.endswith("%") else token
        if _NOT_FINITE.fullmatch(body):
            raise self.fail(f"the threshold must be a finite number, found {_shown(token)}", start)
        if not body or _NUMBER.fullmatch(body) is None:
            raise self.fail(f"expected a number after '{op}', found {_shown(token)}", start)
        value = float(body)
        if not math.isfinite(value):
            raise self.fail(f"the threshold must be a finite number, found {_shown(token)}", start)
        return value, body != token

    def clauses(self) -> tuple[dict[str, Any], int]:
        """The clauses given, by name, and where the rule's text ends (before a comment)."""
        found: dict[str, Any] = {}
        first_at: dict[str, int] = {}
        while True:
            at = self.skip_space()
            if at == len(self.text) or self.text[at] == "#":
                return found, at
            word, at = self.word()
            name = word.lower()
            if name not in CLAUSES:
                raise self.fail(f"unknown clause '{_cut(word)}': expected for, while running, cooldown or level", at)
            if name in first_at:
                raise self.fail(f"'{name}' is given twice (first at column {first_at[name] + 1})", at)
            first_at[name] = at
            found[name] = self.clause(name)

    def clause(self, name: str) -> object:
        if name in ("for", "cooldown"):
            return self.duration(name)
        word, at = self.word()
        if name == "while":
            if word.lower() != "running":
                raise self.fail(f"expected 'running' after 'while', found {_shown(word)}", at)
            return True
        if word.lower() not in _LEVEL_WORDS:
            what = f"unknown level {_shown(word)}" if word else "expected a level after 'level'"
            raise self.fail(f"{what}: use info, warning or error", at)
        return level_of(word)

    def duration(self, after: str) -> float:
        token, start = self.word()
        expected = f"expected {_DURATION_HINT} after '{after}', found {_shown(token)}"
        if not token:
            raise self.fail(expected, start)
        total, pos = 0.0, 0
        while pos < len(token):
            part = _DURATION_PART.match(token, pos)
            if part is None:
                raise self.fail(expected, start + pos)
            amount, unit = part.groups()
            if not unit:
                where = f"'{amount}'" if amount == token else f"'{amount}' in {_shown(token)}"
                raise self.fail(f"{where} needs a unit: ms, s, m, h or d (such as {amount}s or {amount}m)", start + part.end(1))
            if unit.lower() not in UNITS:
                raise self.fail(f"unknown unit '{unit}' in {_shown(token)}: use ms, s, m, h or d", start + part.start(2))
            total += float(amount) * UNITS[unit.lower()]
            pos = part.end()
        if not math.isfinite(total):
            raise self.fail(f"the duration {_shown(token)} is too long", start)
        return total


__all__ = ["CLAUSES", "OPERATORS", "UNITS", "Rule", "RuleError", "format_duration", "number_text", "parse_rule", "parse_rules"]
