"""A fake Anthropic Messages API: a real HTTP server on 127.0.0.1 that records what it was sent.

The one part of the system that cannot be real here is the model. This server speaks enough
of the Messages API for the real Claude Code and for the `anthropic` SDK: `POST
/v1/messages` streaming (SSE) and not, text and tool use, errors with the API's status codes
and bodies, `count_tokens`, `/v1/models`, `HEAD /api/hello`, and with `keys` set the 401 for
any other key on every route. Replies are scripted by rules
(first matching rule wins, each used a set number of times), else a default that answers
title requests, compaction-summary requests and ordinary turns plausibly.

    with FakeAnthropic() as api:
        api.add({"status": 400, "message": "prompt is too long: 204858 tokens > 200000 maximum"},
                match=lambda r: r.last_user_text().startswith("turn 3"))
        ... ANTHROPIC_BASE_URL=api.url ...
        api.requests  # everything it was sent

`python -m supervisor.fakeapi --port 8765` runs one by hand.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from fakeserver import FakeServer, QuietHandler, serve

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
COMPACTION_MARK = "REMINDER: Do NOT call any tools"
_ids = itertools.count(1)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: dict
    received: float = field(default_factory=time.time)  # wall clock

    @property
    def streaming(self) -> bool:
        return bool(self.body.get("stream"))

    def texts(self, role: str | None = None) -> list[str]:
        """Every text block of the messages (of one role, if given), in order."""
        out = []
        for message in self.body.get("messages", []):
            if role and message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                out.append(content)
                continue
            for block in content or []:
                if block.get("type") == "text":
                    out.append(block.get("text", ""))
                elif block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, str):
                        out.append(inner)
                    else:
                        out.extend(b.get("text", "") for b in inner or [] if b.get("type") == "text")
        return out

    def last_user_text(self) -> str:
        texts = self.texts("user")
        return texts[-1] if texts else ""

    def all_text(self) -> str:
        system = self.body.get("system", "")
        if isinstance(system, list):
            system = "\n".join(b.get("text", "") for b in system)
        return "\n".join([system, *self.texts()])

    @property
    def is_compaction(self) -> bool:
        return COMPACTION_MARK in self.last_user_text()

    @property
    def has_tools(self) -> bool:
        return bool(self.body.get("tools"))

    def tool(self, name: str) -> dict | None:
        """The tool of that name the request offers the model, if any."""
        return next((t for t in self.body.get("tools") or [] if t.get("name") == name), None)

    @property
    def has_tool_result(self) -> bool:
        """Does the last user turn carry a tool's result (the model called one before)?"""
        messages = self.body.get("messages") or []
        content = messages[-1].get("content") if messages else None
        return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


Reply = dict[str, Any]
Responder = Callable[[Request], Reply]


@dataclass
class Rule:
    reply: Reply | Responder
    match: Callable[[Request], bool] | None = None
    times: int | None = 1  # None: forever
    used: int = 0


# Claude Code carries out `-p --json-schema` as this tool, whose input_schema is the schema:
# the model calls it with the object, is given its result, and ends with a short text.
STRUCTURED_OUTPUT = "StructuredOutput"
SAMPLE_CONTEXT = {
    "original_request": "Fix the flaky test in tests/test_net.py",
    "current_task": "Making the retry in src/net.py wait for the socket",
    "completed_steps": ["Reproduced the TimeoutError"],
    "pending_steps": ["Run the suite"],
    "key_decisions": ["Retry with backoff instead of a longer timeout, because the server starts slowly"],
    "relevant_files": ["src/net.py: the client", "tests/test_net.py: the flaky test"],
    "errors_and_resolutions": ["TimeoutError in test_net.py: open"],
}


def structured(data: Any, usage: dict | None = None) -> Responder:
    """Claude Code's structured-output turn: the StructuredOutput tool called with `data`,
    then a short text once its result comes back."""

    def reply(req: Request) -> Reply:
        if req.has_tool_result:
            return {"text": "Recorded.", "usage": {"input_tokens": 40, "output_tokens": 5}}
        return {"tool_use": {"name": STRUCTURED_OUTPUT, "input": data}, **({"usage": usage} if usage else {})}

    return reply


def usage_limit(reset: int, claim: str = "five_hour") -> Reply:
    """A subscription's usage limit, as the API tells a login: 429 with the
    `anthropic-ratelimit-unified-*` headers, `reset` in epoch seconds. Claude Code on a login
    then says "You've hit your 5-hour limit · resets 7:45am (UTC)"; on a key it retries."""
    window = {"five_hour": "5h", "seven_day": "7d"}.get(claim, claim)
    return {
        "status": 429,
        "message": "This request would exceed your account's rate limit. Please try again later.",
        "headers": {
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": str(reset),
            f"anthropic-ratelimit-unified-{window}-status": "rejected",
            f"anthropic-ratelimit-unified-{window}-reset": str(reset),
            "anthropic-ratelimit-unified-representative-claim": claim,
        },
    }


def go_usage_limit(retry_after: int, limit: str = "5 hour", workspace: str = "wrk_01KFAKEW0RKSPACE0000000000") -> Reply:
    """OpenCode Go's usage limit, as its gateway (opencode.ai/zen/go/v1, Anthropic format for
    the MiniMax models) answers once a subscription's 5-hour, weekly or monthly allowance is
    spent: 429 with `retry-after` (seconds to the reset) and the body
    {"type": "error", "error": {"type": "GoUsageLimitError", "message": ...},
    "metadata": {"workspace": ..., "limitName": ...}}. `limit` is "5 hour", "weekly" or
    "monthly". OpenCode writes its own words from the type, limitName and retry-after:
    "5 hour usage limit reached. It will reset in 2 hours 3 minutes. ..."."""
    days, hours, minutes = retry_after // 86400, retry_after // 3600, -(-(retry_after % 3600) // 60)
    retry_in = f"{days} day{'s' if days > 1 else ''}" if days else f"{hours}hr {minutes}min" if hours else f"{minutes}min"
    title = {"5 hour": "5-hour", "weekly": "Weekly", "monthly": "Monthly"}[limit]
    return {
        "status": 429,
        "error_type": "GoUsageLimitError",
        "message": f"{title} usage limit reached. Resets in {retry_in}. To continue using this model now, enable usage "
        f"from your available balance: https://opencode.ai/workspace/{workspace}/go",
        "fields": {"metadata": {"workspace": workspace, "limitName": limit}},
        "headers": {"retry-after": str(retry_after)},
    }


def default_reply(req: Request) -> Reply:
    if req.tool(STRUCTURED_OUTPUT):
        return structured(SAMPLE_CONTEXT)(req)
    if req.is_compaction:
        return {
            "text": "<analysis>The user and assistant worked through a few turns.</analysis>\n"
            "<summary>1. Primary Request: continue the test conversation.\n"
            "2. Current Work: answering numbered turns.</summary>"
        }
    if not req.has_tools and len(req.body.get("messages", [])) <= 1:
        return {"text": '{"title": "Test session"}' if "title" in req.all_text().lower() else "Test session"}
    last = req.last_user_text().strip().splitlines()
    return {"text": f"Reply to: {last[-1][:60] if last else '(empty)'}"}


class FakeAnthropic(FakeServer):
    name = "fake Anthropic API"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = "claude-haiku-4-5"):
        self.model = model
        self.rules: list[Rule] = []
        self.default: Responder = default_reply
        self.count_factor = 1.0  # count_tokens answers len/4 times this (to test corrections)
        self.keys: set[str] | None = None  # if set, any other key or token gets the API's 401, on every route
        super().__init__(host, port)

    def add(self, reply: Reply | Responder, match: Callable[[Request], bool] | None = None, times: int | None = 1) -> Rule:
        rule = Rule(reply, match, times)
        with self._lock:
            self.rules.append(rule)
        return rule

    def messages(self) -> list[Request]:
        """The model calls (not probes or token counts)."""
        with self._lock:
            return [r for r in self.requests if r.path == "/v1/messages"]

    def _choose(self, req: Request) -> Reply:
        with self._lock:
            for rule in self.rules:
                if rule.times is not None and rule.used >= rule.times:
                    continue
                if rule.match is None or rule.match(req):
                    rule.used += 1
                    reply = rule.reply
                    break
            else:
                reply = self.default
        return reply(req) if callable(reply) else reply

    def _handler(self):
        api = self

        class Handler(QuietHandler):
            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _refused(self) -> bool:
                given = self.headers.get("x-api-key") or self.headers.get("Authorization", "").removeprefix("Bearer ")
                if api.keys is None or given in api.keys:
                    return False
                self._json(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
                return True

            def do_GET(self) -> None:
                path = urlparse(self.path).path
                with api._lock:
                    api.requests.append(Request("GET", path, {k.lower(): v for k, v in self.headers.items()}, {}))
                if self._refused():
                    return
                if path.startswith("/v1/models"):
                    self._json(200, {"data": [{"type": "model", "id": api.model, "display_name": api.model}], "has_more": False})
                else:
                    self._json(200, {})

            def do_POST(self) -> None:
                path = urlparse(self.path).path
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode(errors="replace")}
                req = Request("POST", path, {k.lower(): v for k, v in self.headers.items()}, body)
                with api._lock:
                    api.requests.append(req)
                if self._refused():
                    return
                if path == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": max(1, int(len(req.all_text()) // 4 * api.count_factor))})
                elif path == "/v1/messages":
                    self._messages(req, api._choose(req))
                else:
                    self._json(200, {})

            def _json(self, status: int, data: Any, headers: dict | None = None) -> None:
                self.send_json(status, data, {"request-id": f"req_fake_{next(_ids)}", **(headers or {})})

            def _messages(self, req: Request, reply: Reply) -> None:
                if reply.get("delay"):
                    time.sleep(reply["delay"])
                if "status" in reply and reply["status"] != 200:
                    status = reply["status"]
                    error = {
                        "type": reply.get("error_type", ERROR_TYPES.get(status, "api_error")),
                        "message": reply.get("message", "fake error"),
                    }
                    # `fields`: more top-level fields of the error body (a gateway's "metadata")
                    self._json(status, {"type": "error", "error": error, **reply.get("fields", {})}, reply.get("headers"))
                    return
                if "raw" in reply:
                    payload = reply["raw"].encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                message = build_message(req, reply, api.model)
                if reply.get("drip"):  # a proxy that trickles: one byte at a time, never a read timeout
                    payload = json.dumps(message).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    for i in range(len(payload)):
                        self.wfile.write(payload[i : i + 1])
                        self.wfile.flush()
                        time.sleep(reply["drip"])
                    return
                if req.streaming:
                    self._stream(message, reply.get("chunk", 40), reply.get("chunk_delay", 0.0))
                else:
                    self._json(200, message)

            def _stream(self, message: dict, chunk: int, chunk_delay: float) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for event in sse_events(message, chunk):
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                    if chunk_delay and event["type"] == "content_block_delta":
                        time.sleep(chunk_delay)

        return Handler


def build_message(req: Request, reply: Reply, model: str) -> dict:
    content: list[dict] = []
    if reply.get("text"):
        content.append({"type": "text", "text": reply["text"]})
    tools = reply.get("tool_uses") or ([reply["tool_use"]] if reply.get("tool_use") else [])
    for tool in tools:  # several in one step: "tool_uses"
        content.append(
            {"type": "tool_use", "id": tool.get("id", f"toolu_fake{next(_ids):06d}"), "name": tool["name"], "input": tool.get("input", {})}
        )
    if not content:
        content.append({"type": "text", "text": ""})
    usage = {"input_tokens": max(1, len(req.all_text()) // 4), "output_tokens": max(1, sum(len(json.dumps(c)) for c in content) // 4)}
    usage.update(reply.get("usage", {}))
    return {
        "id": f"msg_fake{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": req.body.get("model", model),
        "content": content,
        "stop_reason": "tool_use" if tools else "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }


def sse_events(message: dict, chunk: int = 40):
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            text = block["text"]
            for i in range(0, len(text), chunk):
                yield {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text[i : i + chunk]}}
        else:
            yield {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
            partial = json.dumps(block["input"])
            for i in range(0, len(partial), chunk):
                yield {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": partial[i : i + chunk]},
                }
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
        "usage": {"output_tokens": message["usage"]["output_tokens"]},
    }
    yield {"type": "message_stop"}


if __name__ == "__main__":
    serve(FakeAnthropic, 8765)
