"""Turn a digest into a session context with a cheap model, or without one.

The digest is redacted before it leaves the machine. The model fills the context through a
forced tool call; its answer is validated, a malformed one is asked for once more, and any
failure (no key, 401, 429/529 after the SDK's retries, 5xx, timeout, malformed twice) falls
back to the heuristic summarizer, marked as such, with the reason kept.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

from ..config import Summary
from . import schema
from .digest import Digest
from .pricing import cost_usd
from .redact import redact

SYSTEM = (
    "You keep the memory of a coding session for an AI coding agent whose context gets compacted. "
    "From the session digest (and the previous context, if any), record what the agent needs to carry on: "
    "the original request verbatim, the current task, completed and pending steps, key decisions with reasons, "
    "relevant files, errors and how they were resolved. Integrate the previous context: keep what still holds, "
    "update what changed, do not repeat. Be specific (names, paths, commands) and brief. Secrets appear as "
    "[REDACTED:kind]; never guess them."
)


@dataclass
class Result:
    context: dict
    source: str  # "model" | "heuristic"
    model: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    error: str | None = None


def model_input(d: Digest, previous: dict | None) -> str:
    parts = []
    if previous:
        parts.append("## Previous context (integrate, do not repeat)\n" + json.dumps(previous, indent=1, ensure_ascii=False))
    parts.append("## Session digest\n" + d.text)
    return redact("\n\n".join(parts))


# The most an answer may weigh: 4096 output tokens of JSON are ~50 KB. A broken proxy that
# sends more (a 200 MB body) is cut off here instead of filling the recorder's memory.
MAX_ANSWER_BYTES = 4 << 20


class Overdue(Exception):
    """The model call went on past its deadline (a hung or trickling endpoint)."""


def _httpx():
    """The HTTP library the SDK speaks: anthropic 2.x brings httpx2, whose objects don't mix
    with httpx's."""
    try:
        import httpx2

        return httpx2
    except ImportError:  # an older SDK
        import httpx

        return httpx


def _client(cfg: Summary):
    import anthropic

    return anthropic.Anthropic(
        api_key=cfg.api_key, auth_token=None if cfg.api_key else cfg.auth_token,
        base_url=cfg.base_url, timeout=cfg.timeout, max_retries=cfg.max_retries,
        http_client=anthropic.DefaultHttpxClient(transport=_capped_transport()),
    )


def _capped_transport():
    """An HTTP transport whose responses stop at MAX_ANSWER_BYTES (built on the SDK's own
    library, whose base classes it checks)."""
    httpx = _httpx()

    class Capped(httpx.SyncByteStream):
        def __init__(self, inner, request):
            self.inner, self.request = inner, request

        def __iter__(self):
            seen = 0
            for chunk in self.inner:
                seen += len(chunk)
                if seen > MAX_ANSWER_BYTES:
                    raise httpx.ReadError(f"answer larger than {MAX_ANSWER_BYTES >> 20} MB", request=self.request)
                yield chunk

        def close(self):
            self.inner.close()

    class Transport(httpx.HTTPTransport):
        def handle_request(self, request):
            response = super().handle_request(request)
            response.stream = Capped(response.stream, request)
            return response

    return Transport()


def _within(deadline: float, client, call):
    """`call()` in a thread of its own, given at most `deadline` seconds in all, retries
    included: the SDK's timeout is between two bytes, and an endpoint that trickles one byte
    a second never reaches it. Past the deadline the call is left to its thread (a daemon),
    its connections closed, and Overdue raised."""
    box: dict = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="supervise-model-call", daemon=True)
    worker.start()
    worker.join(deadline)
    if worker.is_alive():
        try:
            client.close()
        except Exception:
            pass
        raise Overdue()
    if "error" in box:
        raise box["error"]
    return box["value"]


def count_tokens(d: Digest, previous: dict | None, cfg: Summary) -> int | None:
    """The API's count of what a summary would send, or None (no key, no endpoint, error)."""
    if not cfg.has_key:
        return None
    client = _client(cfg)
    try:
        counted = _within(cfg.timeout, client, lambda: client.messages.count_tokens(
            model=cfg.model, system=SYSTEM, tools=[schema.TOOL],
            messages=[{"role": "user", "content": model_input(d, previous)}],
        ))
        return int(counted.input_tokens)
    except Exception:  # an estimate will do
        return None


def summarize(d: Digest, previous: dict | None, cfg: Summary) -> Result:
    if not cfg.has_key:
        return _fallback(d, previous, "no API key (set ANTHROPIC_API_KEY or SUPERVISE_SUMMARY_API_KEY)")
    import anthropic

    client = _client(cfg)
    text = model_input(d, previous)
    used_in = used_out = 0
    problem = "no answer"
    ends = time.monotonic() + cfg.timeout  # one deadline for the whole summary, asked twice or not
    for attempt in range(2):  # a malformed answer is asked for once more
        try:
            response = _within(ends - time.monotonic(), client, lambda: client.messages.create(
                model=cfg.model,
                max_tokens=4096,
                system=SYSTEM,
                tools=[schema.TOOL],
                tool_choice={"type": "tool", "name": schema.TOOL["name"]},
                messages=[{"role": "user", "content": text}],
            ))
        except (Overdue, anthropic.APITimeoutError):
            return _fallback(d, previous, f"model call timed out after {cfg.timeout:g}s", used_in, used_out, cfg.model)
        except anthropic.APIStatusError as exc:
            return _fallback(d, previous, f"model call failed: {exc.status_code} {_message(exc)}", used_in, used_out, cfg.model)
        except anthropic.APIError as exc:
            return _fallback(d, previous, f"model call failed: {exc}", used_in, used_out, cfg.model)
        except ValueError as exc:  # a 200 whose body is not JSON (a proxy's error page)
            return _fallback(d, previous, f"model call failed: unreadable answer ({exc})", used_in, used_out, cfg.model)
        usage = getattr(response, "usage", None)
        used_in += getattr(usage, "input_tokens", 0) or 0
        used_out += getattr(usage, "output_tokens", 0) or 0
        block = next((b for b in response.content if getattr(b, "type", None) == "tool_use"), None)
        try:
            if block is None:
                raise schema.Malformed("no tool call in the answer")
            context = schema.validate(block.input)
        except schema.Malformed as exc:
            problem = f"malformed answer ({exc})"
            continue
        return Result(context, "model", cfg.model, used_in, used_out, cost_usd(cfg.model, used_in, used_out))
    return _fallback(d, previous, problem + ", twice", used_in, used_out, cfg.model)


def _message(exc) -> str:
    try:
        return exc.body["error"]["message"]
    except (TypeError, KeyError):
        return str(exc)


def _fallback(d: Digest, previous: dict | None, error: str, used_in: int = 0, used_out: int = 0, model: str | None = None) -> Result:
    cost = cost_usd(model, used_in, used_out) if model and (used_in or used_out) else None
    return Result(schema.heuristic(d, previous), "heuristic", model, used_in, used_out, cost, error)
