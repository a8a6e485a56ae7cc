"""The Anthropic Messages API, with an API key or token (any Anthropic-compatible base URL),
or with none for a model server on this machine (Ollama, LM Studio, llama.cpp's
llama-server, vLLM). The model fills the context through a forced tool call."""

from __future__ import annotations

import time

from ...config import Summary
from .. import schema
from ..pricing import cost_usd
from . import Answer, Failed
from . import messagesapi as wire

NO_KEY = "no API key (set ANTHROPIC_API_KEY or SUPERVISE_SUMMARY_API_KEY, or a base URL on this machine for a local model)"


def ask(text: str, system: str, cfg: Summary, ends: float) -> Answer:
    """One model call, to be over by `ends` (time.monotonic()), retries included."""
    if not cfg.uses_api:
        raise Failed(NO_KEY)
    body = {
        "model": cfg.model,
        "max_tokens": 4096,
        "system": system,
        "tools": [schema.TOOL],
        "tool_choice": {"type": "tool", "name": schema.TOOL["name"]},
        "messages": [{"role": "user", "content": text}],
    }
    try:
        response = wire.call_apart(wire.endpoint(cfg), "/v1/messages", body, ends)
    except wire.TimedOut:
        raise Failed(f"model call timed out after {cfg.timeout:g}s") from None
    except wire.ApiError as exc:
        raise Failed(f"model call failed: {exc}") from None
    usage = response.get("usage")
    used_in = _tokens(usage, "input_tokens")
    used_out = _tokens(usage, "output_tokens")
    content = response.get("content")
    blocks = content if isinstance(content, list) else []
    block = next((b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"), None)
    return Answer(
        block.get("input") if block is not None else None,
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
    body = {"model": cfg.model, "system": system, "tools": [schema.TOOL], "messages": [{"role": "user", "content": text}]}
    try:
        counted = wire.call_apart(wire.endpoint(cfg), "/v1/messages/count_tokens", body, time.monotonic() + cfg.timeout)
        return int(counted["input_tokens"])
    except (wire.ApiError, KeyError, TypeError, ValueError):  # an estimate will do
        return None


def _tokens(usage, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0
