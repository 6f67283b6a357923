"""OpenMetrics / Prometheus endpoints, scraped the way W&B does (``x_stats_open_metrics_*``).

One collector per endpoint, so a dead or slow endpoint costs only its own
slot in the hub. Each sweep fetches the page (urllib, one retry inside the
timeout) and keeps gauge and counter samples only, keyed
``openmetrics.<endpoint>.<metric>.<index>``: ``<metric>`` is the name the
page exposes and ``<index>`` numbers the label sets of that metric in the
order they were first captured, for the collector's life. Labels are never
part of a key; that is W&B's rule, and keys must match its records.

Filters are W&B's two forms and match ``<endpoint>.<metric>`` with an
unanchored search (``re.search``): a list of regexes, any of which captures;
or a mapping ``{metric_regex: {label: value_regex}}``, where an entry
captures a sample when its metric regex matches and every label it names
exists and matches. No filters capture everything.

Parsing: sample lines are cut into series text (name and labels) and value;
label text goes through ``prometheus_client``'s label parser, lines holding a
'#' (exemplars) through its whole-page parser. Both are cached: a series
seen before costs a dict lookup and a ``float()``, and a label set shared by
several metrics is parsed once. Lines of families that are not gauge or
counter, or that no filter can capture by name, are dropped before any
parsing. A sample belongs to the ``# TYPE`` line just above its family, as
``prometheus_client`` has it; a counter keeps the name it is exposed under
(``node_cpu_seconds_total``, ``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION``), never
the ``_total`` name that parser gives every counter.
"""

from __future__ import annotations

import http.client
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from prometheus_client.parser import parse_labels, text_string_to_metric_families

from collectors.base import Collector

DEFAULT_TIMEOUT = 2.0  # seconds for a whole fetch, the retry included
MAX_TIMEOUT = 300.0
RETRY_PAUSE = 0.2
# A retry is only worth starting with at least this much of the timeout left.
RETRY_MIN_LEFT = 0.3
# The hub's budget is the timeout plus this, so a fetch that ends by its own
# timeout is reported as the error it is, not as a hang.
BUDGET_SLACK = 1.0
MAX_PAGE_BYTES = 32 << 20
READ_CHUNK = 1 << 16
# Exporters whose label values churn (pods, request ids) would grow the series
# cache for ever; past this many it starts again. Indices are kept apart, so
# keys stay the same.
SERIES_CACHE_LIMIT = 200_000
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# Ask for the Prometheus text format: OpenMetrics pages rename counters
# (``foo`` exposed as ``foo_total``), which would change keys.
ACCEPT = "text/plain;version=0.0.4;q=1.0,*/*;q=0.1"
RECORDED_TYPES = ("gauge", "counter")

_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_PLAIN_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
# ``# HELP name …`` and ``# TYPE name type``; newer Prometheus allows a quoted UTF-8 name.
_DIRECTIVE = re.compile(r'#[ \t]*(HELP|TYPE)[ \t]+(?:"((?:[^"\\]|\\.)*)"|(\S+))(?:[ \t]+(\S+))?')
_ESCAPE = re.compile(r"\\(.)")


# -- errors and HTTP -------------------------------------------------------


class ScrapeError(RuntimeError):
    """A fetch that failed: refused, timed out, an HTTP error, or an answer that is no metrics page."""


class HttpStatusError(ScrapeError):
    """The server answered with a status other than 200; ``body`` holds the start of its answer."""

    def __init__(self, message: str, status: int, body: bytes = b"") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class _Retryable(Exception):
    def __init__(self, error: ScrapeError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class Page:
    body: bytes
    content_type: str

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def display_url(url: str) -> str:
    """``url`` fit for a message: a password in it is masked."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


class HttpGetter:
    """GETs one URL with fixed headers; errors become ``ScrapeError`` naming ``what`` and the URL.

    Proxies come from the environment, except for loopback hosts, as Go's
    ``ProxyFromEnvironment`` does for W&B.
    """

    def __init__(self, url: str, headers: Mapping[str, str], what: str, accept: str = ACCEPT) -> None:
        self.url = url
        self.what = f"{what} ({display_url(url)})"
        self.headers = {"Accept": accept, **headers}
        host = (urllib.parse.urlsplit(url).hostname or "").lower()
        proxies: dict[str, str] | None = {} if host in _LOOPBACK_HOSTS or host.startswith("127.") else None
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxies))

    def get(self, timeout: float, url: str | None = None) -> Page:
        """The answer to one GET of ``url`` (default: this getter's URL), with one retry, all within ``timeout``."""
        deadline = time.monotonic() + timeout
        target = url or self.url
        try:
            return self._attempt(target, deadline, timeout)
        except _Retryable as failed:
            if deadline - time.monotonic() < RETRY_PAUSE + RETRY_MIN_LEFT:
                raise failed.error from None
        time.sleep(RETRY_PAUSE)
        try:
            return self._attempt(target, deadline, timeout)
        except _Retryable as failed:
            raise failed.error from None

    def _attempt(self, url: str, deadline: float, timeout: float) -> Page:
        request = urllib.request.Request(url, headers=self.headers, method="GET")
        try:
            with self._opener.open(request, timeout=max(deadline - time.monotonic(), 0.001)) as response:
                body = self._read(response, deadline)
                return Page(body, response.headers.get("Content-Type", ""))
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            raise self._transport_error(exc, timeout) from None

    def _read(self, response: Any, deadline: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError("timed out while reading")
            chunk = response.read1(READ_CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_PAGE_BYTES:
                raise ScrapeError(f"{self.what}: the answer is larger than {MAX_PAGE_BYTES >> 20} MiB")
            chunks.append(chunk)

    def _status_error(self, exc: urllib.error.HTTPError) -> Exception:
        try:
            body = exc.read(4096)
        except (OSError, http.client.HTTPException):
            body = b""
        finally:
            exc.close()
        error = HttpStatusError(f"{self.what} answered HTTP {exc.code} {exc.reason}".rstrip(), exc.code, body)
        return _Retryable(error) if exc.code in RETRY_STATUSES else error

    def _transport_error(self, exc: BaseException, timeout: float) -> Exception:
        reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if isinstance(reason, TimeoutError):
            return ScrapeError(f"{self.what}: no answer within {timeout:.3g} s")
        if isinstance(reason, ConnectionRefusedError):
            return _Retryable(ScrapeError(f"{self.what}: connection refused (is it running?)"))
        if isinstance(reason, (ConnectionResetError, http.client.RemoteDisconnected)):
            return _Retryable(ScrapeError(f"{self.what}: the connection was closed before an answer"))
        detail = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return ScrapeError(f"{self.what}: {detail}")


# -- settings --------------------------------------------------------------


@dataclass(frozen=True)
class FilterRule:
    """One filter entry: a metric regex and, for the mapping form, label regexes that must all match."""

    metric: re.Pattern[str]
    labels: tuple[tuple[str, re.Pattern[str]], ...] = ()

    def accepts(self, labels: Mapping[str, str]) -> bool:
        for label, pattern in self.labels:
            value = labels.get(label)
            if value is None or pattern.search(value) is None:
                return False
        return True


@dataclass(frozen=True)
class MetricFilter:
    """W&B's ``x_stats_open_metrics_filters``, compiled; no rules capture everything."""

    rules: tuple[FilterRule, ...] = ()

    @property
    def captures_all(self) -> bool:
        return not self.rules

    def rules_for(self, qualified_name: str) -> tuple[FilterRule, ...]:
        """The rules whose metric regex finds ``<endpoint>.<metric>``."""
        return tuple(rule for rule in self.rules if rule.metric.search(qualified_name))


def _compiled(pattern: Any, what: str) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ValueError(f"{what}: expected a regular expression as text, got {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{what}: {pattern!r} is not a valid regular expression ({exc})") from None


def parse_filters(setting: Any, source: str = "open_metrics_filters") -> MetricFilter:
    """W&B's filter setting in either form (or one regex, or None) as a ``MetricFilter``.

    List form: ``["regex", …]``. Mapping form: ``{"metric regex": {"label": "value regex"}}``.
    Raises ValueError, naming ``source``, for anything else or a bad regex.
    """
    if isinstance(setting, MetricFilter):
        return setting
    if setting is None:
        return MetricFilter()
    if isinstance(setting, str):
        setting = [setting]
    if isinstance(setting, Mapping):
        return MetricFilter(tuple(_mapping_rule(metric, labels, source) for metric, labels in setting.items()))
    if isinstance(setting, (list, tuple)):
        return MetricFilter(tuple(FilterRule(_compiled(pattern, source)) for pattern in setting))
    raise ValueError(
        f"{source}: expected a list of regular expressions or a mapping "
        f"{{metric regex: {{label: value regex}}}}, got {type(setting).__name__}"
    )


def _mapping_rule(metric: Any, labels: Any, source: str) -> FilterRule:
    if labels is None:
        labels = {}
    if not isinstance(labels, Mapping):
        raise ValueError(f"{source}: the labels of {metric!r} must be a mapping {{label: value regex}}, got {labels!r}")
    compiled = []
    for label, pattern in labels.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"{source}: label names under {metric!r} must be non-empty text, got {label!r}")
        compiled.append((label, _compiled(pattern, f"{source} [{metric!r}][{label!r}]")))
    return FilterRule(_compiled(metric, source), tuple(compiled))


def checked_endpoint_name(name: Any) -> str:
    """An endpoint name usable inside keys: non-empty, no blanks, no ``/`` (the node-label marker)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"an OpenMetrics endpoint needs a non-empty name, got {name!r}")
    if any(ch.isspace() or ch == "/" or not ch.isprintable() for ch in name):
        raise ValueError(f"OpenMetrics endpoint name {name!r} must not contain blanks, '/' or control characters")
    return name


def checked_url(url: Any, what: str) -> str:
    """``url`` if it is an http(s) URL with a host; ValueError otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise ValueError(f"{what}: expected an http:// or https:// URL, got {url!r}")
    url = url.strip()
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - a bad port raises here, not at the first fetch
    except ValueError as exc:
        raise ValueError(f"{what}: {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what}: {url!r} is not an http:// or https:// URL with a host")
    return url


def checked_timeout(timeout: Any) -> float:
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        raise ValueError(f"timeout must be a number of seconds, got {timeout!r}") from None
    if not math.isfinite(value) or not 0 < value <= MAX_TIMEOUT:
        raise ValueError(f"timeout must be more than 0 and at most {MAX_TIMEOUT:g} s, got {timeout!r}")
    return value


def checked_header(name: Any, value: Any) -> tuple[str, str]:
    if not isinstance(name, str) or not _HEADER_NAME.match(name):
        raise ValueError(f"{name!r} is not a valid HTTP header name")
    if not isinstance(value, str) or any(ch in value for ch in "\r\n\0"):
        raise ValueError(f"the value of header {name!r} must be text on one line")
    return name, value.strip()


def checked_headers(headers: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> dict[str, str]:
    """Headers as a dict; ValueError for a bad name or value, or a name given twice (in any case)."""
    pairs = headers.items() if isinstance(headers, Mapping) else (headers or ())
    checked: dict[str, str] = {}
    seen: set[str] = set()
    for pair in pairs:
        name, value = checked_header(*pair)
        if name.lower() in seen:
            raise ValueError(f"header {name!r} is given twice")
        seen.add(name.lower())
        checked[name] = value
    return checked


def parse_endpoint_arg(text: str) -> tuple[str, str]:
    """``--openmetrics NAME=URL`` as ``(name, url)``; ValueError with the reason otherwise."""
    name, sep, url = text.partition("=")
    if not sep or not name.strip() or not url.strip():
        raise ValueError(f"--openmetrics expects NAME=URL (e.g. node=http://localhost:9100/metrics), got {text!r}")
    name = checked_endpoint_name(name.strip())
    return name, checked_url(url, f"--openmetrics {name}")


def parse_header_arg(text: str) -> tuple[str, str]:
    """``--openmetrics-header 'Name: value'`` as ``(name, value)``; ValueError with the reason otherwise."""
    name, sep, value = text.partition(":")
    if not sep or not name.strip():
        raise ValueError(f"--openmetrics-header expects 'Name: value' (e.g. 'Authorization: Bearer TOKEN'), got {text!r}")
    return checked_header(name.strip(), value)


@dataclass(frozen=True)
class EndpointSpec:
    """One endpoint to scrape, validated; ``collector()`` makes its collector."""

    name: str
    url: str
    filters: MetricFilter = field(default_factory=MetricFilter)
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT

    def collector(self) -> "OpenMetricsCollector":
        return OpenMetricsCollector(self.name, self.url, self.filters, dict(self.headers), self.timeout)


def endpoints_from_settings(
    endpoints: Mapping[str, str] | Iterable[tuple[str, str]] | None,
    filters: Any = None,
    headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[EndpointSpec]:
    """W&B-style settings (``open_metrics_endpoints``, ``_filters``, ``_http_headers``) as endpoint specs.

    Filters and headers apply to every endpoint, as in W&B. Raises ValueError
    for a bad name, URL, regex or header, or a name given twice.
    """
    pairs = endpoints.items() if isinstance(endpoints, Mapping) else (endpoints or ())
    compiled = parse_filters(filters)
    header_pairs = tuple(checked_headers(headers).items())
    limit = checked_timeout(timeout)
    specs: list[EndpointSpec] = []
    for name, url in pairs:
        name = checked_endpoint_name(name)
        if any(spec.name == name for spec in specs):
            raise ValueError(f"OpenMetrics endpoint {name!r} is given twice")
        specs.append(EndpointSpec(name, checked_url(url, f"OpenMetrics endpoint {name!r}"), compiled, header_pairs, limit))
    return specs


def endpoints_from_args(
    endpoint_args: Sequence[str],
    filter_args: Sequence[str] = (),
    header_args: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
) -> list[EndpointSpec]:
    """The repeatable ``--openmetrics``, ``--openmetrics-filter`` and ``--openmetrics-header`` options as specs."""
    endpoints = [parse_endpoint_arg(arg) for arg in endpoint_args]
    headers = [parse_header_arg(arg) for arg in header_args]
    filters = parse_filters(list(filter_args), "--openmetrics-filter")
    return endpoints_from_settings(endpoints, filters, headers, timeout)


# -- pages to keys ---------------------------------------------------------

_EVERYTHING: tuple[FilterRule, ...] = ()
_UNSEEN: Any = object()


class _Member(NamedTuple):
    """A metric name that a sample line of the current family may carry."""

    metric: str  # the exposed name: the key's ``<metric>``
    prefix: str  # how a sample line of it starts
    ends: str  # characters that may follow the prefix
    header: str  # the ``# TYPE`` line that makes a one-family page of such lines
    rules: tuple[FilterRule, ...] | None  # filter rules left to check on labels; _EVERYTHING: none


class Labels(NamedTuple):
    """One label set: as a mapping for filters, and sorted, as its identity for the index."""

    mapping: dict[str, str]
    identity: tuple[tuple[str, str], ...]


def _labels_of(mapping: dict[str, str]) -> Labels:
    return Labels(mapping, tuple(sorted(mapping.items())))


class _Miss(NamedTuple):
    series: str | None  # None: not cacheable (the line holds a '#')
    line: str
    member: _Member


@dataclass
class PageStats:
    """What the last page held, for notes."""

    recorded_families: int = 0  # gauge and counter families on the page
    captured: int = 0  # keys the page produced
    malformed: int = 0  # sample lines that did not parse


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _member(metric: str, typ: str, rules: tuple[FilterRule, ...] | None) -> _Member:
    if _PLAIN_METRIC_NAME.match(metric):
        return _Member(metric, metric, "{ \t", f"# TYPE {metric} {typ}", rules)
    quoted = _quoted(metric)
    return _Member(metric, "{" + quoted, ",} \t", f"# TYPE {quoted} {typ}", rules)


def _member_of(line: str, members: tuple[_Member, ...]) -> _Member | None:
    for member in members:
        prefix = member.prefix
        if line.startswith(prefix) and len(line) > len(prefix) and line[len(prefix)] in member.ends:
            return member
    return None


def _split_series(line: str) -> tuple[str, str]:
    """A sample line as (series text, what follows it: value and optional timestamp)."""
    close = line.rfind("}")
    if close >= 0:
        return line[: close + 1], line[close + 1 :]
    parts = line.split(None, 1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _value(rest: str) -> float | None:
    fields = rest.split()
    if not fields:
        return None
    try:
        return float(fields[0])
    except ValueError:
        return None


def _parse_whole_line(miss: _Miss) -> tuple[dict[str, str], float] | None:
    """Labels and value of a line by ``prometheus_client``'s full parser: for lines holding a '#'
    (an exemplar, or one in a label value), which the series split cannot cut safely."""
    try:
        families = list(text_string_to_metric_families(f"{miss.member.header}\n{miss.line}\n"))
    except Exception:  # noqa: BLE001 - any parser failure only marks the line malformed
        return None
    samples = [sample for family in families for sample in family.samples]
    if len(samples) != 1:
        return None
    return dict(samples[0].labels), float(samples[0].value)


class PageMapper:
    """Turns the pages of one endpoint into W&B keys, remembering label-set indices across pages."""

    def __init__(self, endpoint: str, filters: MetricFilter | Any = None) -> None:
        self.endpoint = endpoint
        self.filters = parse_filters(filters)
        self.last = PageStats()
        self._prefix = f"openmetrics.{endpoint}."
        self._series: dict[str, str | None] = {}  # series text -> key, None when filtered out
        self._label_sets: dict[str, Labels] = {}  # label text -> parsed; families share label sets
        self._indices: dict[str, dict[tuple[tuple[str, str], ...], int]] = {}
        self._families: dict[tuple[str, str], tuple[_Member, ...]] = {}

    def map(self, text: str) -> dict[str, float]:
        """``{openmetrics.<endpoint>.<metric>.<index>: value}`` for one page's gauge and counter samples."""
        if len(self._series) > SERIES_CACHE_LIMIT:
            self._series.clear()
        if len(self._label_sets) > SERIES_CACHE_LIMIT:
            self._label_sets.clear()
        stats = PageStats()
        values: dict[str, float] = {}
        misses: list[_Miss] = []
        cache = self._series
        family: str | None = None
        members: tuple[_Member, ...] = ()
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            if line[0] == "#":
                directive = _DIRECTIVE.match(line)
                if directive is None:
                    continue
                kind, quoted, plain, typ = directive.groups()
                name = plain if quoted is None else _unescape(quoted)
                if kind == "TYPE":
                    family, members = name, self._members(name, typ or "", stats)
                elif name != family:
                    family, members = name, ()
                continue
            if not members:
                continue
            member = _member_of(line, members)
            if member is None:
                continue  # not this family's name: untyped, or a histogram/summary part
            if "#" in line:
                misses.append(_Miss(None, line, member))
                continue
            series, rest = _split_series(line)
            key = cache.get(series, _UNSEEN)
            if key is _UNSEEN:
                misses.append(_Miss(series, line, member))
            elif key is not None:
                value = _value(rest)
                if value is None:
                    stats.malformed += 1
                else:
                    values[key] = value
        if misses:
            self._resolve(misses, values, stats)
        stats.captured = len(values)
        self.last = stats
        return values

    def notes(self) -> tuple[str, ...]:
        """Short warnings about the last page: nothing captured, or lines that did not parse."""
        stats = self.last
        notes = []
        if stats.captured == 0:
            if stats.recorded_families == 0:
                notes.append("no gauge or counter metrics on the page (only those are recorded)")
            elif not self.filters.captures_all:
                notes.append(f"the filters capture none of the {stats.recorded_families} gauge and counter metrics on the page")
        if stats.malformed:
            notes.append(f"{stats.malformed} sample line{'s' if stats.malformed != 1 else ''} could not be parsed")
        return tuple(notes)

    def _members(self, name: str, typ: str, stats: PageStats) -> tuple[_Member, ...]:
        if typ not in RECORDED_TYPES:
            return ()
        stats.recorded_families += 1
        cached = self._families.get((name, typ))
        if cached is None:
            names = [name]
            if typ == "counter" and not name.endswith("_total"):
                # An OpenMetrics page declares counter ``foo`` and exposes ``foo_total``.
                names.append(name + "_total")
            made = (_member(metric, typ, self._rules(metric)) for metric in names)
            cached = self._families[(name, typ)] = tuple(m for m in made if m.rules is not None)
        return cached

    def _rules(self, metric: str) -> tuple[FilterRule, ...] | None:
        """The filter rules left to check on labels; None when no rule can capture this metric."""
        if self.filters.captures_all:
            return _EVERYTHING
        rules = self.filters.rules_for(f"{self.endpoint}.{metric}")
        if not rules:
            return None
        if any(not rule.labels for rule in rules):
            return _EVERYTHING
        return rules

    def _resolve(self, misses: list[_Miss], values: dict[str, float], stats: PageStats) -> None:
        for miss in misses:
            parsed = self._parse(miss)
            if parsed is None:
                stats.malformed += 1
                continue
            labels, value = parsed
            key = self._key(miss.member, labels)
            if miss.series is not None:
                self._series[miss.series] = key
            if key is not None:
                values[key] = value

    def _parse(self, miss: _Miss) -> tuple[Labels, float] | None:
        if miss.series is None:
            whole = _parse_whole_line(miss)
            return None if whole is None else (_labels_of(whole[0]), whole[1])
        series, rest = _split_series(miss.line)
        value = _value(rest)
        if value is None:
            return None
        brace = series.find("{")
        text = series[brace + 1 : -1] if brace >= 0 else ""
        labels = self._label_sets.get(text)
        if labels is None:
            try:
                parsed = parse_labels(text, False)
            except Exception:  # noqa: BLE001 - any parser failure only marks the line malformed
                return None
            parsed.pop("__name__", None)  # a quoted metric name sits among the labels
            labels = self._label_sets[text] = _labels_of(parsed)
        return labels, value

    def _key(self, member: _Member, labels: Labels) -> str | None:
        rules = member.rules
        if rules and not any(rule.accepts(labels.mapping) for rule in rules):
            return None
        indices = self._indices.setdefault(member.metric, {})
        index = indices.setdefault(labels.identity, len(indices))
        return f"{self._prefix}{member.metric}.{index}"


# -- the collector ---------------------------------------------------------


class OpenMetricsCollector(Collector):
    """One OpenMetrics/Prometheus endpoint as ``openmetrics.<name>.<metric>.<index>`` keys.

    ``filters`` takes either W&B form (or a ``MetricFilter``); ``headers`` are
    sent with every request (e.g. ``Authorization``); ``timeout`` bounds a
    whole fetch, its one retry included.
    """

    cadence = 0.0

    def __init__(
        self,
        name: str,
        url: str,
        filters: Any = None,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.endpoint = checked_endpoint_name(name)
        self.name = f"openmetrics:{self.endpoint}"
        self.url = checked_url(url, f"OpenMetrics endpoint {self.endpoint!r}")
        self.timeout = checked_timeout(timeout)
        self.budget = self.timeout + BUDGET_SLACK
        self._getter = HttpGetter(self.url, checked_headers(headers), f"OpenMetrics endpoint {self.endpoint!r}")
        self._mapper = PageMapper(self.endpoint, filters)
        self._notes: tuple[str, ...] = ()

    @classmethod
    def from_spec(cls, spec: EndpointSpec) -> "OpenMetricsCollector":
        return spec.collector()

    def sample(self) -> dict[str, float]:
        page = self._getter.get(self.timeout)
        if page.content_type.split(";")[0].strip().lower() == "text/html":
            raise ScrapeError(f"{self._getter.what} answered with an HTML page, not metrics")
        values = self._mapper.map(page.text)
        self._notes = self._mapper.notes()
        return values

    def extras(self) -> Mapping[str, Any]:
        return {f"notes.{self.name}": self._notes}


def openmetrics_collectors(specs: Iterable[EndpointSpec]) -> list[OpenMetricsCollector]:
    """A collector per endpoint, so each one fails or stalls on its own."""
    return [spec.collector() for spec in specs]
