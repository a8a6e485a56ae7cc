"""The Anthropic Messages API spoken with the standard library (the SDK costs an idle
recorder tens of MB for one request now and then): a key's or token's header, the SDK's
retries (408, 409, 429, 5xx, a dropped connection or a timeout, waiting what `retry-after`
asks), each read within the timeout, the whole call within a deadline, an answer cut off past
a size, proxies from the environment."""

from __future__ import annotations

import json
import random
import socket
import ssl
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

from ... import __version__
from ...config import Summary

API_VERSION = "2023-06-01"
DEFAULT_URL = "https://api.anthropic.com"
# What is sent as the key to a model server on this machine, which asks for none.
LOCAL_KEY = "local"
# The most an answer may weigh: 4096 output tokens of JSON are ~50 KB. A broken proxy that
# sends more (a 200 MB body) is cut off here instead of filling the recorder's memory.
MAX_ANSWER_BYTES = 4 << 20
RETRY_STATUS = frozenset({408, 409, 429})
MAX_BACKOFF = 8.0
# A `retry-after` beyond this is not waited for (the SDK's rule): the call fails instead.
MAX_RETRY_AFTER = 60.0


class ApiError(Exception):
    """The call did not give a JSON answer; str() is one line for the user."""


class Refused(ApiError):
    """The API answered with an error status."""

    def __init__(self, status: int, message: str, headers: dict[str, str]):
        super().__init__(f"{status} {message}")
        self.status, self.message, self.headers = status, message, headers


class Unreachable(ApiError):
    """No HTTP answer: the connection failed or dropped."""

    def __init__(self, url: str, reason: str):
        super().__init__(f"cannot reach {url}: {reason}")
        self.reason = reason


class TimedOut(ApiError):
    """No answer within the timeout or the deadline."""


class Unreadable(ApiError):
    """An answer that is not the API's: not JSON, or past MAX_ANSWER_BYTES."""


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    headers: dict[str, str]
    timeout: float
    max_retries: int


def endpoint(cfg: Summary) -> Endpoint:
    headers = {
        "anthropic-version": API_VERSION,
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": f"supervise/{__version__}",
    }
    if cfg.api_key or not cfg.auth_token:
        headers["x-api-key"] = cfg.api_key or LOCAL_KEY
    else:
        headers["authorization"] = f"Bearer {cfg.auth_token}"
    return Endpoint((cfg.base_url or DEFAULT_URL).rstrip("/"), headers, cfg.timeout, cfg.max_retries)


def call(where: Endpoint, path: str, body: dict | None = None, ends: float | None = None) -> dict:
    """POST `body` (GET when None) to `path`; the answer's JSON. Retried as the SDK retries,
    over by `ends` (time.monotonic()) when given."""
    data = None if body is None else json.dumps(body).encode()
    attempt = 0
    while True:
        try:
            return _once(where, path, data, ends)
        except ApiError as exc:
            wait = _retry_in(exc, attempt, where.max_retries)
            if wait is None or (ends is not None and time.monotonic() + wait >= ends):
                raise
        time.sleep(wait)
        attempt += 1


def _retry_in(exc: ApiError, attempt: int, max_retries: int) -> float | None:
    """Seconds to wait before the next attempt, or None: not to be retried."""
    if attempt >= max_retries or isinstance(exc, Unreadable):
        return None
    asked = None
    if isinstance(exc, Refused):
        should = exc.headers.get("x-should-retry")
        if should == "false" or (should != "true" and exc.status not in RETRY_STATUS and exc.status < 500):
            return None
        asked = retry_after(exc.headers)
    if asked is not None and 0 <= asked <= MAX_RETRY_AFTER:
        return asked
    return min(0.5 * 2**attempt, MAX_BACKOFF) * (1 - 0.25 * random.random())


def retry_after(headers: dict[str, str]) -> float | None:
    """What `retry-after-ms` or `retry-after` (seconds or an HTTP date) asks, in seconds."""
    try:
        return float(headers["retry-after-ms"]) / 1000
    except (KeyError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects; a POST must not turn into a GET elsewhere."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.ProxyHandler(), urllib.request.HTTPSHandler(context=ssl.create_default_context()), _NoRedirect()
    )


def _once(where: Endpoint, path: str, data: bytes | None, ends: float | None) -> dict:
    url = where.base_url + path
    timeout = where.timeout if ends is None else min(where.timeout, ends - time.monotonic())
    if timeout <= 0:
        raise TimedOut(f"timed out after {where.timeout:g}s")
    request = urllib.request.Request(url, data, where.headers, method="GET" if data is None else "POST")
    try:
        with _opener().open(request, timeout=timeout) as response:
            raw = _read(response, ends)
    except urllib.error.HTTPError as exc:
        with exc:
            text = _read(exc, ends)
        raise Refused(exc.code, _error_message(text, exc.reason), {k.lower(): v for k, v in exc.headers.items()}) from None
    except (TimeoutError, socket.timeout):
        raise TimedOut(f"timed out after {where.timeout:g}s") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (TimeoutError, socket.timeout)):
            raise TimedOut(f"timed out after {where.timeout:g}s") from None
        raise Unreachable(where.base_url, _line(str(exc.reason))) from None
    except (OSError, ValueError) as exc:  # a dropped connection, a broken status line
        raise Unreachable(where.base_url, f"the connection broke ({_line(str(exc)) or type(exc).__name__})") from None
    try:
        answer = json.loads(raw)
    except ValueError as exc:  # a 200 whose body is not JSON (a proxy's error page)
        raise Unreadable(f"unreadable answer ({exc})") from None
    if not isinstance(answer, dict):
        raise Unreadable(f"unreadable answer (a JSON {type(answer).__name__}, not an object)")
    return answer


def _read(response, ends: float | None) -> bytes:
    """The body, read as it comes (a trickle stops at the deadline, not at the last byte)."""
    parts, seen = [], 0
    while chunk := response.read1(65536):
        seen += len(chunk)
        if seen > MAX_ANSWER_BYTES:
            raise Unreadable(f"answer larger than {MAX_ANSWER_BYTES >> 20} MB")
        if ends is not None and time.monotonic() > ends:
            raise TimedOut("deadline passed while the answer came in")
        parts.append(chunk)
    return b"".join(parts)


def _error_message(body: bytes, reason: str) -> str:
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, TypeError, KeyError):
        message = body.decode("utf-8", "replace")[:200] or reason
    return _line(str(message))


def _line(text: str) -> str:
    """One printable line: what an endpoint says can hold control keys and escapes."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
