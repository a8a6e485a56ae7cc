"""The Anthropic Messages API spoken with the standard library's HTTP: the SDK's retries
(408, 409, 429, 5xx, a dropped connection or a timeout, waiting what `retry-after` asks),
each read within the timeout, the whole call within a deadline, an answer cut off past a
size, proxies from the environment. Run as a module, it serves messagesapi.call_apart."""

from __future__ import annotations

import json
import random
import socket
import ssl
import sys
import time
import urllib.error
import urllib.request

from .messagesapi import ApiError, Endpoint, Refused, TimedOut, Unreachable, Unreadable, one_line

# The most an answer may weigh: 4096 output tokens of JSON are ~50 KB. A broken proxy that
# sends more (a 200 MB body) is cut off here instead of filling the recorder's memory.
MAX_ANSWER_BYTES = 4 << 20
RETRY_STATUS = frozenset({408, 409, 429})
MAX_BACKOFF = 8.0
# A `retry-after` beyond this is not waited for (the SDK's rule): the call fails instead.
MAX_RETRY_AFTER = 60.0


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
        raise Refused.of(exc.code, _error_message(text, exc.reason), {k.lower(): v for k, v in exc.headers.items()}) from None
    except (TimeoutError, socket.timeout):
        raise TimedOut(f"timed out after {where.timeout:g}s") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (TimeoutError, socket.timeout)):
            raise TimedOut(f"timed out after {where.timeout:g}s") from None
        raise Unreachable.of(where.base_url, one_line(str(exc.reason))) from None
    except (OSError, ValueError) as exc:  # a dropped connection, a broken status line
        raise Unreachable.of(where.base_url, f"the connection broke ({one_line(str(exc)) or type(exc).__name__})") from None
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
    return one_line(str(message))


def _serve() -> None:
    """The process of `call_apart`: one request on stdin, its answer or error on stdout."""
    request = json.load(sys.stdin)
    ends = time.monotonic() + request["seconds"]
    reply: dict[str, object]
    try:
        reply = {"answer": call(Endpoint(**request["endpoint"]), request["path"], request["body"], ends)}
    except ApiError as exc:
        reply = {"error": type(exc).__name__, "message": str(exc), "fields": vars(exc)}
    sys.stdout.write(json.dumps(reply))


if __name__ == "__main__":
    _serve()
