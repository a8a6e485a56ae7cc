"""The Anthropic Messages API through the SDK, with an API key or token (any
Anthropic-compatible base URL), or with none for a model server on this machine (Ollama,
LM Studio, llama.cpp's llama-server, vLLM). The model fills the context through a forced
tool call."""

from __future__ import annotations

import threading
import time

from ...config import Summary
from .. import schema
from ..pricing import cost_usd
from . import Answer, Failed

NO_KEY = "no API key (set ANTHROPIC_API_KEY or SUPERVISE_SUMMARY_API_KEY, or a base URL on this machine for a local model)"
# What the SDK sends as the key to a local server, which asks for none.
LOCAL_KEY = "local"
# The most an answer may weigh: 4096 output tokens of JSON are ~50 KB. A broken proxy that
# sends more (a 200 MB body) is cut off here instead of filling the recorder's memory.
MAX_ANSWER_BYTES = 4 << 20


class Overdue(Exception):
    """The model call went on past its deadline (a hung or trickling endpoint)."""


def ask(text: str, system: str, cfg: Summary, ends: float) -> Answer:
    """One model call, to be over by `ends` (time.monotonic()), the SDK's retries included."""
    if not cfg.uses_api:
        raise Failed(NO_KEY)
    import anthropic

    client = _client(cfg)
    try:
        response = _within(
            ends - time.monotonic(),
            client,
            lambda: client.messages.create(
                model=cfg.model,
                max_tokens=4096,
                system=system,
                tools=[schema.TOOL],
                tool_choice={"type": "tool", "name": schema.TOOL["name"]},
                messages=[{"role": "user", "content": text}],
            ),
        )
    except (Overdue, anthropic.APITimeoutError):
        raise Failed(f"model call timed out after {cfg.timeout:g}s") from None
    except anthropic.APIStatusError as exc:
        raise Failed(f"model call failed: {exc.status_code} {_message(exc)}") from None
    except anthropic.APIError as exc:
        raise Failed(f"model call failed: {exc}") from None
    except ValueError as exc:  # a 200 whose body is not JSON (a proxy's error page)
        raise Failed(f"model call failed: unreadable answer ({exc})") from None
    usage = getattr(response, "usage", None)
    used_in = getattr(usage, "input_tokens", 0) or 0
    used_out = getattr(usage, "output_tokens", 0) or 0
    block = next((b for b in response.content if getattr(b, "type", None) == "tool_use"), None)
    return Answer(
        block.input if block is not None else None,
        cfg.model,
        used_in,
        used_out,
        cost_usd(cfg.model, used_in, used_out),
        missing="no tool call in the answer",
    )


def count_tokens(text: str, system: str, cfg: Summary) -> int | None:
    """The API's count of what a summary would send, or None (no key, no endpoint, error)."""
    if not cfg.uses_api:
        return None
    client = _client(cfg)
    try:
        counted = _within(
            cfg.timeout,
            client,
            lambda: client.messages.count_tokens(
                model=cfg.model,
                system=system,
                tools=[schema.TOOL],
                messages=[{"role": "user", "content": text}],
            ),
        )
        return int(counted.input_tokens)
    except Exception:  # an estimate will do
        return None


def _message(exc) -> str:
    try:
        return exc.body["error"]["message"]
    except (TypeError, KeyError):
        return str(exc)


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
        api_key=cfg.api_key or (None if cfg.auth_token else LOCAL_KEY),
        auth_token=None if cfg.api_key else cfg.auth_token,
        base_url=cfg.base_url,
        timeout=cfg.timeout,
        max_retries=cfg.max_retries,
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
    worker.join(max(0.0, deadline))
    if worker.is_alive():
        try:
            client.close()
        except Exception:
            pass
        raise Overdue()
    if "error" in box:
        raise box["error"]
    return box["value"]
