"""The Anthropic Messages API: what a call is sent with (the key's or token's header, the
version, the base URL), what it can fail with, and `call_apart`, which makes it in a process
of its own (messageshttp.py, the request on its stdin, key included, the answer on its
stdout): a session's recorder asks the model now and then, and would otherwise hold the HTTP
and TLS stack for the rest of the session; a call past its deadline is killed there."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from ... import __version__
from ...config import Summary

API_VERSION = "2023-06-01"
DEFAULT_URL = "https://api.anthropic.com"
# What is sent as the key to a model server on this machine, which asks for none.
LOCAL_KEY = "local"
# What the process of `call_apart` is given past the deadline to say it timed out itself.
GRACE = 2.0


class ApiError(Exception):
    """The call did not give a JSON answer; str() is one line for the user, `fields` what
    else a caller may look at (all of it JSON, to cross from call_apart's process)."""

    def __init__(self, line: str, **fields):
        super().__init__(line)
        self.__dict__.update(fields)


class Refused(ApiError):
    """The API answered with an error status."""

    status: int
    message: str
    headers: dict[str, str]

    @classmethod
    def of(cls, status: int, message: str, headers: dict[str, str]) -> Refused:
        return cls(f"{status} {message}", status=status, message=message, headers=headers)


class Unreachable(ApiError):
    """No HTTP answer: the connection failed or dropped."""

    reason: str

    @classmethod
    def of(cls, url: str, reason: str) -> Unreachable:
        return cls(f"cannot reach {url}: {reason}", reason=reason)


class TimedOut(ApiError):
    """No answer within the timeout or the deadline."""


class Unreadable(ApiError):
    """An answer that is not the API's: not JSON, or past MAX_ANSWER_BYTES."""


@dataclass(frozen=True)
class Endpoint:
    """Where the Messages API is called, and how."""

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


def call_apart(where: Endpoint, path: str, body: dict | None, ends: float) -> dict:
    """`call` in a process of its own, killed if it outlives `ends` by GRACE."""
    request = {"endpoint": asdict(where), "path": path, "body": body, "seconds": ends - time.monotonic()}
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-m", f"{__package__}.messageshttp"],
            input=json.dumps(request).encode(),
            capture_output=True,
            timeout=max(0.0, ends - time.monotonic()) + GRACE,
        )
    except subprocess.TimeoutExpired:
        raise TimedOut("the call's process outlived its deadline") from None
    try:
        reply = json.loads(done.stdout)
        if "answer" in reply:
            return reply["answer"]
        error = _ERRORS[reply["error"]](reply["message"], **reply["fields"])
    except (ValueError, KeyError, TypeError):
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ApiError(f"the call's process failed (exit {done.returncode}): {one_line(said[-1]) if said else 'no word'}") from None
    raise error


_ERRORS: dict[str, type[ApiError]] = {e.__name__: e for e in (ApiError, Refused, Unreachable, TimedOut, Unreadable)}


def one_line(text: str) -> str:
    """One printable line: what an endpoint says can hold control keys and escapes."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
