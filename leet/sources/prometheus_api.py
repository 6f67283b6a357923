"""A small client for the Prometheus HTTP API: instant and range queries, auth, one-line errors.

Queries go as form-encoded POSTs to ``/api/v1/query`` and
``/api/v1/query_range`` (a batched expression is too long for some proxies'
URL limits), asking for JSON. Whatever goes wrong becomes a
``PrometheusError`` whose text is one line naming the server (its URL with
any password masked) and what happened, and whose ``kind`` says which of
these it was:

* ``unreachable``: refused, no such host, reset, TLS failure;
* ``timeout``: no full answer within the timeout;
* ``http``: a status other than 200 that is not Prometheus's own JSON
  (a proxy's 502, a login page's 401);
* ``refused``: Prometheus's own error answer (``status: error``: a bad
  query, a query it timed out or cancelled);
* ``garbage``: a 200 that is not Prometheus API JSON (an HTML page from a
  proxy or a login wall, something cut short);
* ``too_big``: an answer past ``MAX_ANSWER_BYTES``.

Credentials: HTTP basic auth (``http://user:pass@host`` in the URL, or a
user and a password given apart) or a bearer token, sent as an
``Authorization`` header; the URL requests go to never holds them, and no
message shows a password or a token. A redirect is followed only within the
server's origin (scheme, host and port): one elsewhere would carry the
credentials there, so it is refused (kind ``http``), saying where it pointed.
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import os
import re
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Mapping

from collectors.openmetrics import checked_headers, checked_url, display_url
from leet.common.gc_pause import collection_paused

DEFAULT_TIMEOUT = 10.0
MAX_ANSWER_BYTES = 256 << 20  # a range query over a big cluster runs to tens of MiB
MAX_SECRET_BYTES = 64 << 10
MAX_MESSAGE = 300  # characters of a server's own words kept in a message
READ_CHUNK = 1 << 16
PASSWORD_ENV = "LEET_PROMETHEUS_PASSWORD"
TOKEN_ENV = "LEET_PROMETHEUS_TOKEN"

_API_SUFFIX = re.compile(r"(/api/v1(/query(_range)?)?|/graph)/?$")
_LOOPBACK = frozenset({"localhost", "::1"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HINTS = {
    401: " (check --user and --password-file, or --token-file)",
    403: " (the credentials are not allowed to query)",
    404: " (is this a Prometheus server's URL? leet wants http://HOST:9090)",
    405: " (is this a Prometheus server's URL? leet wants http://HOST:9090)",
}


class PrometheusError(RuntimeError):
    """A query that got no usable answer; ``str()`` is one line, ``kind`` says why (see the module doc)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Answer:
    """The ``data`` of a successful answer: ``resultType`` and ``result``, with Prometheus's warnings."""

    result_type: str
    result: list[Any]
    warnings: tuple[str, ...] = ()
    elapsed_ms: float = 0.0


@dataclass(frozen=True)
class Endpoint:
    """Where queries go and the headers they carry; ``display`` is the URL as messages show it."""

    base: str  # scheme://host[:port][/prefix], no credentials, no trailing slash
    display: str
    headers: Mapping[str, str] = field(default_factory=dict)


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` as one line of at most ``limit`` characters (a server's words can be a page long)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _read_secret(path: str, what: str) -> str:
    from leet.runfile.files import read_regular

    try:
        data = read_regular(path, MAX_SECRET_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"{what} {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_SECRET_BYTES:
        raise ValueError(f"{what} {path}: larger than {MAX_SECRET_BYTES >> 10} KiB, not a secret")
    try:
        return data.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise ValueError(f"{what} {path}: not UTF-8 text") from None


def endpoint(
    url: str,
    *,
    user: str | None = None,
    password_file: str | None = None,
    token_file: str | None = None,
    environ: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Endpoint:
    """The server a person named, with its credentials as a header; ValueError, one line, for anything wrong.

    ``URL`` may leave out ``http://``, and may end in ``/api/v1/query`` or
    ``/graph`` (copied from a browser). Basic auth: a user from ``--user`` or
    the URL, the password from ``password_file``, else ``$LEET_PROMETHEUS_PASSWORD``,
    else the URL. Bearer: the token from ``token_file``, else
    ``$LEET_PROMETHEUS_TOKEN`` when no user is given. Both at once is an error.
    """
    environ = os.environ if environ is None else environ
    text = url.strip() if isinstance(url, str) else ""
    if text and "://" not in text:
        text = "http://" + text
    parts = urllib.parse.urlsplit(checked_url(text, "Prometheus URL"))
    url_user = urllib.parse.unquote(parts.username) if parts.username is not None else None
    url_password = urllib.parse.unquote(parts.password) if parts.password is not None else None
    if user is not None and url_user is not None and user != url_user:
        raise ValueError(f"two users given: {user!r} with --user and {url_user!r} in the URL; give one")
    if user is not None and not user:
        raise ValueError("--user needs a name")
    name = user if user is not None else url_user
    if token_file is not None and name is not None:
        raise ValueError("give either a user (basic auth) or --token-file (a bearer token), not both")
    if password_file is not None and name is None:
        raise ValueError("--password-file goes with --user NAME (or a user in the URL)")
    extra = checked_headers(headers)
    if name is not None:
        if password_file is not None:
            password = _read_secret(password_file, "--password-file")
        else:
            password = environ.get(PASSWORD_ENV) or url_password or ""
        pair = f"{name}:{password}".encode()
        extra["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    else:
        token = _read_secret(token_file, "--token-file").strip() if token_file is not None else environ.get(TOKEN_ENV, "").strip()
        if token_file is not None and not token:
            raise ValueError(f"--token-file {token_file}: the file is empty")
        if token:
            if any(ch in token for ch in "\r\n\0"):
                raise ValueError("the bearer token must be one line of text")
            extra["Authorization"] = "Bearer " + token
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    path = _API_SUFFIX.sub("", parts.path.rstrip("/")).rstrip("/")
    base = urllib.parse.urlunsplit((parts.scheme, netloc, path, "", ""))
    shown = display_url(urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", "")))
    return Endpoint(base, shown, extra)


def origin(url: str) -> tuple[str, str, int | None]:
    """``url``'s scheme, host and port (the scheme's default port when none is written)."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


class SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the origin of the URL asked; one elsewhere is a ``PrometheusError``."""

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> urllib.request.Request | None:
        if origin(newurl) != origin(req.full_url):
            fp.close()
            shown = one_line(display_url(newurl), 160)
            raise PrometheusError(
                f"{self.what} answered HTTP {code}, a redirect to {shown}: not followed, "
                "it would carry the credentials to another server (give that URL if it is the one meant)",
                "http",
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class PrometheusClient:
    """Instant and range queries against one server, each within ``timeout`` seconds.

    ``requests`` counts every request sent (the screen shows it; tests check
    the per-interval budget with it).
    """

    def __init__(self, where: Endpoint, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.endpoint = where
        self.timeout = float(timeout)
        self.requests = 0
        self.what = f"Prometheus at {where.display}"
        host = (urllib.parse.urlsplit(where.base).hostname or "").lower()
        loopback = host in _LOOPBACK or host.startswith("127.")
        # Proxies from the environment, as every HTTP tool takes them, except for this machine.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({} if loopback else None), SameOriginRedirects(self.what))

    @property
    def display_url(self) -> str:
        return self.endpoint.display

    def query(self, expr: str, at: float | None = None, timeout: float | None = None) -> Answer:
        """``/api/v1/query``: ``expr`` evaluated at ``at`` (unix seconds; the server's now if None)."""
        form = {"query": expr}
        if at is not None:
            form["time"] = f"{at:.3f}"
        return self._ask("/api/v1/query", form, timeout)

    def query_range(self, expr: str, start: float, end: float, step: float, timeout: float | None = None) -> Answer:
        """``/api/v1/query_range`` from ``start`` to ``end`` every ``step`` seconds."""
        form = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        return self._ask("/api/v1/query_range", form, timeout)

    # -- one request -------------------------------------------------------------

    def _ask(self, path: str, form: Mapping[str, str], timeout: float | None) -> Answer:
        limit = self.timeout if timeout is None else timeout
        body = urllib.parse.urlencode(form).encode()
        headers = {
            "Accept": "application/json",
            "Content-Type": "application/x-www-form-urlencoded",
            **self.endpoint.headers,
        }
        request = urllib.request.Request(self.endpoint.base + path, data=body, headers=headers, method="POST")
        self.requests += 1
        started = time.monotonic()
        deadline = started + limit
        try:
            with self._opener.open(request, timeout=limit) as response:
                data = self._read(response, deadline, limit)
                content_type = response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            raise self._status_error(exc) from None
        except PrometheusError:
            raise
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            raise self._transport_error(exc, limit) from None
        try:
            with collection_paused():  # a big answer is tens of thousands of dicts and lists
                answer = self._parse(data, content_type)
        except (RecursionError, ValueError, TypeError, KeyError) as exc:  # JSON nested too deep, or of a shape not foreseen
            raise PrometheusError(f"{self.what} answered with JSON that cannot be read ({type(exc).__name__})", "garbage") from None
        return Answer(answer[0], answer[1], answer[2], (time.monotonic() - started) * 1000)

    def _read(self, response: Any, deadline: float, limit: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            if time.monotonic() > deadline:
                raise PrometheusError(f"{self.what}: no full answer within {limit:.3g} s", "timeout")
            chunk = response.read1(READ_CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise PrometheusError(f"{self.what}: the answer is larger than {MAX_ANSWER_BYTES >> 20} MiB", "too_big")
            chunks.append(chunk)

    def _parse(self, data: bytes, content_type: str) -> tuple[str, list[Any], tuple[str, ...]]:
        payload = _json(data)
        if payload is None:
            if content_type.split(";")[0].strip().lower() == "text/html" or data.lstrip()[:1] == b"<":
                raise PrometheusError(f"{self.what} answered with an HTML page, not Prometheus API JSON (a proxy or a login page?)", "garbage")
            raise PrometheusError(f"{self.what} answered with something that is not JSON", "garbage")
        if not isinstance(payload, Mapping) or "status" not in payload:
            raise PrometheusError(f"{self.what} answered with JSON that is not a Prometheus API answer", "garbage")
        if payload.get("status") != "success":
            raise PrometheusError(f"{self.what} refused the query: {_api_error(payload)}", "refused")
        data_part = payload.get("data")
        if not isinstance(data_part, Mapping) or not isinstance(data_part.get("result"), list):
            raise PrometheusError(f"{self.what} answered without data.result", "garbage")
        result_type = data_part.get("resultType", "")
        if not isinstance(result_type, str):
            raise PrometheusError(f"{self.what} answered with a data.resultType that is not a name", "garbage")
        warnings = payload.get("warnings") or ()
        notes = tuple(one_line(str(w)) for w in warnings) if isinstance(warnings, list) else ()
        return result_type, data_part["result"], notes

    def _status_error(self, exc: urllib.error.HTTPError) -> PrometheusError:
        try:
            body = exc.read(64 << 10)
        except (OSError, http.client.HTTPException):
            body = b""
        finally:
            exc.close()
        payload = _json(body)
        if isinstance(payload, Mapping) and payload.get("status") == "error":
            # Prometheus's own refusal (400 bad_data, 422 execution, 503 timeout): its words say why.
            return PrometheusError(f"{self.what} refused the query (HTTP {exc.code}): {_api_error(payload)}", "refused")
        reason = one_line(str(exc.reason or ""), 80)
        return PrometheusError(f"{self.what} answered HTTP {exc.code} {reason}".rstrip() + _HINTS.get(exc.code, ""), "http")

    def _transport_error(self, exc: BaseException, limit: float) -> PrometheusError:
        reason: Any = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        if isinstance(reason, TimeoutError):
            return PrometheusError(f"{self.what}: no answer within {limit:.3g} s", "timeout")
        if isinstance(reason, ConnectionRefusedError):
            return PrometheusError(f"{self.what}: connection refused (is Prometheus running there?)", "unreachable")
        if isinstance(reason, (ConnectionResetError, http.client.RemoteDisconnected, http.client.IncompleteRead)):
            return PrometheusError(f"{self.what}: the connection was closed before a full answer", "unreachable")
        if isinstance(reason, ssl.SSLError):
            return PrometheusError(f"{self.what}: TLS failed: {one_line(reason.reason or str(reason), 120)}", "unreachable")
        if isinstance(reason, socket.gaierror):
            return PrometheusError(f"{self.what}: cannot resolve the host name ({one_line(reason.strerror or str(reason), 80)})", "unreachable")
        detail = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
        return PrometheusError(f"{self.what}: {one_line(detail, 120)}", "unreachable")


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested deeper than Python recurses
        return None


def _api_error(payload: Mapping[str, Any]) -> str:
    try:
        kind = one_line(str(payload.get("errorType") or "error"), 40)
        message = one_line(str(payload.get("error") or "no reason given"))
    except RecursionError:  # a reason nested deeper than str() recurses
        return "error: a reason that cannot be shown"
    return f"{kind}: {message}"
