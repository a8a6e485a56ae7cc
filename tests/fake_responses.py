"""A fake OpenAI Responses API: a real HTTP server on 127.0.0.1 for the real Codex CLI.

Codex (npm @openai/codex) is pointed at it through a `model_provider` in its config.toml
(`base_url = "http://127.0.0.1:PORT/v1"`, `wire_api = "responses"`). It answers
`POST /v1/responses` with a streamed (SSE) response: `response.created`,
`response.output_item.added`, `response.output_text.delta`s, `response.output_item.done`,
`response.completed` with `usage`. Replies are scripted by markers in the user's last
message (what Codex sends for the turn):

    OVERFLOW     -> `response.failed` with code `context_length_exceeded`
    BIGUSAGE     -> an ordinary reply reporting 150,000 input tokens ("Context 22% left" of 200k)
    HUGEUSAGE    -> an ordinary reply reporting 186,000 input tokens (over a 180k auto-compact limit)
    RUNCMD       -> a function call of Codex's shell tool asking to run a command outside the
                    sandbox (the approval dialog); once its output comes back, a short reply
    USAGELIMIT   -> HTTP 429 as the ChatGPT backend answers a plan whose usage limit is used up:
                    error type `usage_limit_reached` with `plan_type` ("plus"), `resets_at` and
                    `resets_in_seconds` (`usage_reset` seconds ahead), and the `x-codex-*`
                    rate-limit headers (5-hour window at 100%)
    RATELIMIT    -> HTTP 429 of a plain rate limit (error code `rate_limit_exceeded`, `retry-after`)
    (Codex's compaction prompt, "CONTEXT CHECKPOINT COMPACTION") -> a summary, after
                    `compact_delay` seconds so the "Compacting context" spinner is on screen
    a request for a `json_schema` answer (`text.format`, what `codex exec --output-schema`
                    sends) -> a JSON object filling that schema
    anything else -> "Fake reply #N: hello from the fake model." (#N counts model calls)

Usage otherwise reports a few thousand tokens. Replies queued with `add()` come first, in
order: {"json": obj} or {"text": s} (a message), {"failed": {"code", "message"}}
(`response.failed`), {"status": 429, "body": {...}, "headers": {...}} (an HTTP error),
{"garbage": s} (a 200 that is not an event stream); any of them with "delay" (seconds
before answering) and "usage" ((input, output) tokens). Everything it was sent is in
`.requests`, with its headers.

    with FakeResponses() as api:
        ... base_url = api.url + "/v1" ...

`python tests/fake_responses.py --port 8766` runs one by hand.
"""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from fakeserver import FakeServer, QuietHandler, serve

COMPACTION_MARK = "CONTEXT CHECKPOINT COMPACTION"
USAGE_MARKS = {"HUGEUSAGE": 186_000, "BIGUSAGE": 150_000}
RUN_COMMAND = "echo approved-by-the-user"
SUMMARY = (
    "Checkpoint: the user is testing the terminal client with short greetings. "
    "Progress: every message was answered. Next: answer the next message briefly."
)


@dataclass
class Request:
    method: str
    path: str
    body: dict
    headers: dict = field(default_factory=dict)  # lower-cased names

    def items(self) -> list[dict]:
        raw = self.body.get("input") or []
        return [raw] if isinstance(raw, dict) else [i for i in raw if isinstance(i, dict)]

    def last_user_text(self) -> str:
        """The text of the last user message in the input (the turn's prompt, or Codex's
        compaction prompt appended after it)."""
        for item in reversed(self.items()):
            if item.get("role") == "user":
                content = item.get("content")
                if isinstance(content, str):
                    return content
                return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))
        return ""

    def ends_with_tool_output(self) -> bool:
        items = self.items()
        return bool(items) and items[-1].get("type", "").endswith("_output")

    def tool_names(self) -> list[str]:
        return [t.get("name") or t.get("type", "") for t in self.body.get("tools") or []]

    def wanted_schema(self) -> dict | None:
        """The JSON schema the answer must follow (`text.format` of type json_schema), if any."""
        form = (self.body.get("text") or {}).get("format") or {}
        return form.get("schema") if form.get("type") == "json_schema" else None

    @property
    def is_compaction(self) -> bool:
        return COMPACTION_MARK in self.last_user_text()


class FakeResponses(FakeServer):
    name = "fake Responses API"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, compact_delay: float = 5.0, usage_reset: int = 8040):
        self.compact_delay = float(compact_delay)
        self.usage_reset = int(usage_reset)
        self._ids = itertools.count(1)
        self._queued: list[list] = []  # [reply, times left (None: always)]
        super().__init__(host, port)

    def add(self, reply: dict, times: int | None = 1) -> None:
        """Answer the next model call(s) with `reply` (see the module's docstring)."""
        with self._lock:
            self._queued.append([reply, times])

    def _next_queued(self) -> dict | None:
        with self._lock:
            if not self._queued:
                return None
            entry = self._queued[0]
            if entry[1] is not None:
                entry[1] -= 1
                if entry[1] <= 0:
                    self._queued.pop(0)
            return entry[0]

    def model_calls(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and r.path.endswith("/responses")]

    # -- the script ---------------------------------------------------------------------

    def events(self, req: Request, reply: dict | None = None) -> list[dict]:
        """The SSE events answering one model call."""
        n = next(self._ids)
        rid = f"resp_fake{n:04d}"
        text = req.last_user_text()
        created = {
            "type": "response.created",
            "response": {"id": rid, "object": "response", "status": "in_progress", "model": req.body.get("model")},
        }
        if reply is not None:
            used_in, used_out = reply.get("usage", (4_000, 100))
            if "failed" in reply:
                return [
                    created,
                    {
                        "type": "response.failed",
                        "response": {"id": rid, "object": "response", "status": "failed", "error": reply["failed"]},
                    },
                ]
            said = json.dumps(reply["json"]) if "json" in reply else reply.get("text", "")
            return [created, *message_events(rid, said), completed(rid, used_in, used_out)]
        if req.wanted_schema() is not None:
            return [created, *message_events(rid, json.dumps(fill_schema(req.wanted_schema(), f"Fake reply #{n}"))), completed(rid, 4_000)]
        if req.is_compaction:
            time.sleep(self.compact_delay)
            return [created, *message_events(rid, SUMMARY), completed(rid, 4_000)]
        if req.ends_with_tool_output():
            return [created, *message_events(rid, f"Fake reply #{n}: the command ran."), completed(rid, 4_000)]
        if "OVERFLOW" in text:
            error = {
                "code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
            }
            return [created, {"type": "response.failed", "response": {"id": rid, "object": "response", "status": "failed", "error": error}}]
        if "RUNCMD" in text:
            return [created, *call_events(rid, n, req.tool_names()), completed(rid, 4_000)]
        tokens = next((v for k, v in USAGE_MARKS.items() if k in text), 4_000)
        return [created, *message_events(rid, f"Fake reply #{n}: hello from the fake model."), completed(rid, tokens)]

    def _handler(self):
        api = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                with api._lock:
                    api.requests.append(Request("GET", urlparse(self.path).path, {}))
                if urlparse(self.path).path.endswith("/models"):
                    self._json(200, {"models": [], "data": [], "object": "list"})
                elif urlparse(self.path).path.endswith("/responses"):
                    # Codex on a ChatGPT login tries a WebSocket first; 426 sends it to HTTP at once
                    # (a 404 costs five retries, ~6 s)
                    self._json(426, {"error": {"message": "upgrade required", "type": "invalid_request_error"}})
                else:
                    self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

            def do_POST(self) -> None:
                path = urlparse(self.path).path
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw[:2000].decode(errors="replace")}
                req = Request("POST", path, body, {k.lower(): v for k, v in self.headers.items()})
                with api._lock:
                    api.requests.append(req)
                if not path.endswith("/responses"):
                    self._json(404, {"error": {"message": f"no {path} here", "type": "invalid_request_error"}})
                    return
                reply = api._next_queued()
                if reply and reply.get("delay"):
                    time.sleep(reply["delay"])
                if reply and "status" in reply:
                    self.send_json(reply["status"], reply.get("body") or {"error": {"message": "fake error"}}, reply.get("headers"))
                    return
                if reply and "garbage" in reply:
                    self.send_json(200, reply["garbage"], content_type="text/html")
                    return
                text = req.last_user_text() if reply is None and not req.is_compaction and not req.ends_with_tool_output() else ""
                if "USAGELIMIT" in text:
                    self.send_json(429, *usage_limit_reached(api.usage_reset))
                    return
                if "RATELIMIT" in text:
                    self.send_json(429, *rate_limit_exceeded())
                    return
                events = api.events(req, reply)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for event in events:
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(0.02)

            def _json(self, status: int, data: Any) -> None:
                self.send_json(status, data)

        return Handler


def message_events(rid: str, text: str, chunk: int = 12) -> list[dict]:
    item_id = f"msg_{rid}"
    item = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": []}
    out = [{"type": "response.output_item.added", "output_index": 0, "item": item}]
    out.append(
        {
            "type": "response.content_part.added",
            "item_id": item_id,
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        }
    )
    for i in range(0, len(text), chunk):
        out.append(
            {"type": "response.output_text.delta", "item_id": item_id, "output_index": 0, "content_index": 0, "delta": text[i : i + chunk]}
        )
    out.append({"type": "response.output_text.done", "item_id": item_id, "output_index": 0, "content_index": 0, "text": text})
    done = {**item, "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}
    out.append({"type": "response.output_item.done", "output_index": 0, "item": done})
    return out


def usage_limit_reached(reset_in: int, plan: str = "plus") -> tuple[dict, dict]:
    """The body and headers of the ChatGPT backend's 429 when a plan's usage limit is used up
    (its 5-hour window at 100%): Codex reads the error's `type`, `plan_type` and `resets_at`,
    and the `x-codex-*` headers of the limit named by `x-codex-active-limit`."""
    now = int(time.time())
    weekly_in = 4 * 86400 + 7 * 3600
    body = {
        "error": {
            "type": "usage_limit_reached",
            "message": "The usage limit has been reached",
            "plan_type": plan,
            "resets_at": now + reset_in,
            "eligible_promo": None,
            "resets_in_seconds": reset_in,
        }
    }
    headers = {
        "x-codex-plan-type": plan,
        "x-codex-active-limit": "codex",
        "x-codex-primary-used-percent": "100",
        "x-codex-primary-window-minutes": "300",
        "x-codex-primary-reset-after-seconds": str(reset_in),
        "x-codex-primary-reset-at": str(now + reset_in),
        "x-codex-secondary-used-percent": "41",
        "x-codex-secondary-window-minutes": "10080",
        "x-codex-secondary-reset-after-seconds": str(weekly_in),
        "x-codex-secondary-reset-at": str(now + weekly_in),
        "x-codex-primary-over-secondary-limit-percent": "0",
        "x-codex-credits-has-credits": "False",
        "x-codex-credits-unlimited": "False",
        "x-codex-credits-balance": "0",
    }
    return body, headers


def rate_limit_exceeded() -> tuple[dict, dict]:
    """A plain rate limit (requests per minute), not a plan's usage limit."""
    body = {
        "error": {
            "message": "Rate limit reached for requests per min. Please try again in 2s.",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }
    return body, {"retry-after": "2"}


def fill_schema(schema: dict, text: str):
    """A value that follows a JSON schema: `text` for each string, one item in each list."""
    kind = schema.get("type")
    if kind == "object":
        return {name: fill_schema(sub, text) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [fill_schema(schema.get("items") or {"type": "string"}, text)]
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return text


def call_events(rid: str, n: int, tools: list[str]) -> list[dict]:
    """A call of whichever shell tool Codex offered, asking for escalated permissions."""
    why = "Run a harmless echo outside the sandbox (a test of the approval dialog)."
    if "exec_command" in tools or not tools:
        name, args = "exec_command", {"cmd": RUN_COMMAND, "sandbox_permissions": "require_escalated", "justification": why}
    elif "shell_command" in tools:
        name, args = "shell_command", {"command": RUN_COMMAND, "sandbox_permissions": "require_escalated", "justification": why}
    else:
        name, args = (
            "shell",
            {
                "command": ["bash", "-lc", RUN_COMMAND],
                "with_escalated_permissions": True,
                "sandbox_permissions": "require_escalated",
                "justification": why,
            },
        )
    item = {
        "type": "function_call",
        "id": f"fc_{rid}",
        "call_id": f"call_fake{n:04d}",
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "arguments": "", "status": "in_progress"}},
        {"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    ]


def completed(rid: str, input_tokens: int, output_tokens: int = 100) -> dict:
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
    return {"type": "response.completed", "response": {"id": rid, "object": "response", "status": "completed", "usage": usage}}


if __name__ == "__main__":
    serve(FakeResponses, 8766, compact_delay=5.0)
