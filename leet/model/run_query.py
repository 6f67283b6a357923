"""The run filter language of the workspace: ``parse(text)`` → a ``Query`` that says whether a run matches.

A query is terms side by side (all must match), ``|`` between alternatives
(juxtaposition binds tighter), ``-`` before a term to negate it, and
parentheses to group. A term is

* a bare word: a case-insensitive substring of the run's name, id, project,
  group, job type (and directory, node labels, state);
* ``tag:x`` / ``tag=x``, ``note:x``: a tag or the notes holding ``x`` (``=``: the whole tag);
* ``state:failed``: the state the runs list shows (running, finished, failed, crashed …);
* ``cfg.KEY OP VALUE`` and ``summary.KEY OP VALUE``, ``OP`` one of
  ``= != < <= > >=`` or ``:`` (substring). Dotted keys reach into nested
  values; summary keys may hold ``/``. Numbers compare as numbers, text as
  text; a value of another kind, or a key the run lacks, does not match.

Double quotes hold spaces (``tag:"big model"``). A query that is not valid
raises ``QueryError``, which says at which column and what was expected.
Pure: no files, no Textual; the caller hands each run as ``RunFields``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

OPERATORS = ("!=", "<=", ">=", "=", "<", ">", ":")  # longest first: "<=" is not "<" then "="
ORDERING = ("<", "<=", ">", ">=")
STATES = ("running", "finished", "failed", "crashed", "loading", "unknown", "unreadable")
TEXT_FIELDS = {"tag": "tags", "tags": "tags", "note": "notes", "notes": "notes"}
VALUE_FIELDS = {"cfg": "config", "config": "config", "summary": "summary"}
_STOPS = frozenset(' \t()|"')  # where a word or a value ends
_OPERATOR_START = frozenset("=!<>:")
_KNOWN = "tag, note, state, cfg.KEY or summary.KEY"


class QueryError(ValueError):
    """A query that is not valid: ``column`` (1-based) and what was ``expected`` there."""

    def __init__(self, column: int, expected: str) -> None:
        super().__init__(f"column {column}: {expected}")
        self.column = column
        self.expected = expected


@dataclass(frozen=True)
class RunFields:
    """One run as a query reads it."""

    words: Sequence[str] = ()  # what a bare word searches
    state: str = ""  # one of ``STATES``, as the runs list shows it
    tags: Sequence[str] = ()
    notes: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)


# -- the query tree ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Word:
    text: str  # lower case

    def matches(self, run: RunFields) -> bool:
        return any(self.text in word.lower() for word in run.words)


@dataclass(frozen=True)
class TextTerm:
    """``tag:x``, ``tag=x``, ``note:x`` (and ``!=``)."""

    field: str  # "tags" or "notes"
    operator: str
    value: str

    def matches(self, run: RunFields) -> bool:
        texts = list(run.tags) if self.field == "tags" else ([run.notes] if run.notes else [])
        wanted = self.value.lower()
        if self.operator == ":":
            return any(wanted in text.lower() for text in texts)
        equal = any(wanted == text.lower() for text in texts)
        return equal if self.operator == "=" else bool(texts) and not equal


@dataclass(frozen=True)
class StateTerm:
    operator: str
    value: str

    def matches(self, run: RunFields) -> bool:
        found = run.state.startswith(self.value) if self.operator == ":" else run.state == self.value
        return found if self.operator != "!=" else not found


@dataclass(frozen=True)
class ValueTerm:
    """``cfg.KEY OP VALUE`` or ``summary.KEY OP VALUE``."""

    field: str  # "config" or "summary"
    key: str
    operator: str
    value: str

    def matches(self, run: RunFields) -> bool:
        found, value = lookup(run.config if self.field == "config" else run.summary, self.key)
        return found and compare(value, self.operator, self.value)


@dataclass(frozen=True)
class Not:
    term: Node

    def matches(self, run: RunFields) -> bool:
        return not self.term.matches(run)


@dataclass(frozen=True)
class AllOf:
    terms: tuple[Node, ...]

    def matches(self, run: RunFields) -> bool:
        return all(term.matches(run) for term in self.terms)


@dataclass(frozen=True)
class AnyOf:
    terms: tuple[Node, ...]

    def matches(self, run: RunFields) -> bool:
        return any(term.matches(run) for term in self.terms)


Node = Union[Word, TextTerm, StateTerm, ValueTerm, Not, AllOf, AnyOf]


@dataclass(frozen=True)
class Query:
    """A parsed query; the empty one matches every run."""

    text: str
    root: Node | None = None

    def matches(self, run: RunFields) -> bool:
        return self.root is None or self.root.matches(run)

    @property
    def reads(self) -> frozenset[str]:
        """What of a run beyond its listing the query looks at: "config", "summary"."""
        return frozenset(_reads(self.root)) if self.root is not None else frozenset()


def _reads(node: Node) -> set[str]:
    if isinstance(node, ValueTerm):
        return {node.field}
    if isinstance(node, Not):
        return _reads(node.term)
    if isinstance(node, (AllOf, AnyOf)):
        return set().union(*(_reads(term) for term in node.terms))
    return set()


# -- values ------------------------------------------------------------------------------------
def lookup(values: Mapping[str, Any], key: str) -> tuple[bool, Any]:
    """(found, value) of dotted ``key``: a key holding dots as written, else a walk into nested mappings."""
    if key in values:
        return True, values[key]
    parts = key.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        inner = values.get(head)
        if isinstance(inner, Mapping):
            found, value = lookup(inner, ".".join(parts[cut:]))
            if found:
                return True, value
    return False, None


def number(value: Any) -> float | None:
    """``value`` as a number: ints and floats, and text that reads as one; never a bool."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def as_text(value: Any) -> str:
    """A value as a query compares it as text: strings as they are, anything else as JSON writes it."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, allow_nan=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def compare(value: Any, operator: str, wanted: str) -> bool:
    """Whether a run's ``value`` stands in ``operator`` to the query's ``wanted`` text."""
    if operator == ":":
        return wanted.lower() in as_text(value).lower()
    target = number(wanted)
    actual = None if isinstance(value, str) else number(value)
    if target is not None and actual is not None:
        return _holds(actual, operator, target)
    if operator in ORDERING:
        # Text against text only: a number against text (or a dict against anything) is no match.
        return isinstance(value, str) and target is None and _holds(value, operator, wanted)
    # Text as written; true, false and null as JSON writes them, in any case.
    equal = value == wanted if isinstance(value, str) else as_text(value).lower() == wanted.lower()
    return equal if operator == "=" else not equal


def _holds(left: Any, operator: str, right: Any) -> bool:
    return {
        "=": left == right, "!=": left != right, "<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right,
    }[operator]


# -- parsing -------------------------------------------------------------------------------------
def parse(text: str) -> Query:
    """The query ``text`` says; ``QueryError`` when it is not one."""
    parser = _Parser(text)
    root = parser.parse()
    return Query(text, root)


class _Parser:
    """Recursive descent over the characters: or := and ('|' and)*; and := unary+; unary := '-' unary | '(' or ')' | term."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def error(self, expected: str, at: int | None = None) -> QueryError:
        at = self.at if at is None else at
        return QueryError(max(1, min(at + 1, len(self.text))), expected)

    def skip_spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self) -> str:
        self.skip_spaces()
        return self.text[self.at] if self.at < len(self.text) else ""

    def parse(self) -> Node | None:
        if not self.peek():
            return None
        node = self.alternatives()
        if self.peek():
            raise self.error("a '(' before this ')'")  # all else was taken by the alternatives
        return node

    def alternatives(self) -> Node:
        terms = [self.conjunction()]
        while self.peek() == "|":
            self.at += 1
            if self.peek() in ("", ")", "|"):
                raise self.error("a term after |")
            terms.append(self.conjunction())
        return terms[0] if len(terms) == 1 else AnyOf(tuple(terms))

    def conjunction(self) -> Node:
        terms = [self.unary()]
        while self.peek() not in ("", "|", ")"):
            terms.append(self.unary())
        return terms[0] if len(terms) == 1 else AllOf(tuple(terms))

    def unary(self) -> Node:
        char = self.peek()
        if char == "-":
            self.at += 1
            if self.at >= len(self.text) or self.text[self.at] in _STOPS - {"(", '"'}:
                raise self.error("a term after -")
            return Not(self.unary())
        if char == "(":
            opened = self.at
            self.at += 1
            if self.peek() in ("", ")"):
                raise self.error("a term inside ( )")
            node = self.alternatives()
            if self.peek() != ")":
                raise self.error(f"')' to close the '(' at column {opened + 1}")
            self.at += 1
            return node
        if not char:
            raise self.error("a term")
        if char in (")", "|"):
            raise self.error(f"a term, not {char!r}")
        return self.term()

    def term(self) -> Node:
        start = self.at
        if self.text[self.at] == '"':
            return Word(self.quoted().lower())
        name = self.word(_STOPS | _OPERATOR_START)
        after_name = self.at
        self.skip_spaces()  # "cfg.lr >= 1e-3" reads as "cfg.lr>=1e-3"
        operator_at = self.at
        operator = self.operator()
        if not operator:
            self.at = after_name
            if not name:
                raise self.error("a term")
            return Word(name.lower())
        self.skip_spaces()
        value_at = self.at
        value = self.value(operator)
        return self.qualified(name, operator, value, (start, operator_at, value_at))

    def word(self, stops: frozenset[str]) -> str:
        start = self.at
        while self.at < len(self.text) and self.text[self.at] not in stops and not self.text[self.at].isspace():
            self.at += 1
        return self.text[start:self.at]

    def quoted(self) -> str:
        opened = self.at
        end = self.text.find('"', opened + 1)
        if end < 0:
            raise self.error(f"a '\"' to close the one at column {opened + 1}", len(self.text))
        self.at = end + 1
        return self.text[opened + 1:end]

    def operator(self) -> str:
        if self.at >= len(self.text) or self.text[self.at] not in _OPERATOR_START:
            return ""
        for operator in OPERATORS:
            if self.text.startswith(operator, self.at):
                self.at += len(operator)
                return operator
        raise self.error("'!=' (a '!' alone is not an operator)")

    def value(self, operator: str) -> str:
        if self.at < len(self.text) and self.text[self.at] == '"':
            return self.quoted()
        value = self.word(_STOPS)
        if not value:
            raise self.error(f"a value after {operator}", self.at if self.at < len(self.text) else len(self.text) - 1)
        return value

    def qualified(self, name: str, operator: str, value: str, at: tuple[int, int, int]) -> Node:
        """The term ``name operator value``; ``at``: where the name, the operator and the value start."""
        start, operator_at, value_at = at
        lowered = name.lower()
        if lowered in TEXT_FIELDS:
            if operator not in (":", "=", "!="):
                raise self.error(f"':', '=' or '!=' after {name}, not {operator}", operator_at)
            return TextTerm(TEXT_FIELDS[lowered], operator, value)
        if lowered == "state":
            return self.state(operator, value, operator_at, value_at)
        head, dot, key = name.partition(".")
        if head.lower() in VALUE_FIELDS:
            if not dot or not key:
                raise self.error(f"a key after {head}. (as in {head}.lr)", start + len(head) + len(dot))
            return ValueTerm(VALUE_FIELDS[head.lower()], key, operator, value)
        if not name:
            raise self.error(f"a field before {operator} ({_KNOWN})", start)
        raise self.error(f"a known field ({_KNOWN}) before {operator}, not {name!r}", start)

    def state(self, operator: str, value: str, operator_at: int, value_at: int) -> StateTerm:
        if operator not in (":", "=", "!="):
            raise self.error(f"':', '=' or '!=' after state, not {operator}", operator_at)
        wanted = value.lower()
        known = [state for state in STATES if state.startswith(wanted)] if operator == ":" else [s for s in STATES if s == wanted]
        if not known:
            raise self.error(f"a state: {', '.join(STATES)}", value_at)
        return StateTerm(operator, wanted)
