"""A fake Gemini API: a real HTTP server on 127.0.0.1 that Gemini CLI talks to instead of Google.

Gemini CLI (npm @google/gemini-cli) with `GEMINI_API_KEY=anything` and
`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT` (settings: security.auth.selectedType =
"gemini-api-key") sends every model call here, through the @google/genai SDK:

    POST /v1beta/models/MODEL:streamGenerateContent?alt=sse   the turns (SSE, `data: {...}`)
    POST /v1beta/models/MODEL:generateContent                 utility calls: the model router,
                                                              the next-speaker check, the
                                                              compression summary and its probe
    POST /v1beta/models/MODEL:countTokens                     {"totalTokens": N}
    GET  /v1beta/models...                                    a model list

Replies are scripted by markers in the last user text of a request (first match wins):

    RUNTOOL     a functionCall run_shell_command (`echo hello-from-fake > DIR/tool_out.txt`):
                Gemini CLI asks "Allow execution of [Shell]?"; after the tool ran: "The command ran. Done."
    TINYTOKENS  usageMetadata.promptTokenCount 5 (a later /compress is "not beneficial")
    BIGTOKENS   promptTokenCount 600000 (57% of the 1,048,576 window: the next message is
                compressed automatically at the default threshold 0.5)
    FULLCTX     promptTokenCount 1048570 (6 tokens left: a longer next message "might exceed
                the context window limit")
    QUOTADAY    HTTP 429 RESOURCE_EXHAUSTED: the free tier's daily request quota spent, as the
                Gemini API answers an API key (`daily_quota`; a QuotaFailure whose quotaId is per
                day); the JSON utility calls (the router) are answered as usual. Gemini CLI says
                "Usage limit reached for all Pro models." in a dialog
    otherwise   "Fake reply to: TEXT", promptTokenCount 2000 + 40 * len(contents)

Requests asking for JSON (responseMimeType application/json) get an object filled from their
responseJsonSchema (first enum value: the router picks "flash"/"pro", the next speaker is
"user"); requests whose system instruction asks for a <state_snapshot> get a short snapshot.

    with FakeGemini(tool_dir="/tmp/x") as api:
        ... GOOGLE_GEMINI_BASE_URL=api.url ...
        api.requests  # everything it was sent

`python tests/fake_gemini.py --port 18777` runs one by hand.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlparse

from fakeserver import FakeServer, QuietHandler, serve

CONTEXT_WINDOW = 1_048_576
TOKENS = {"TINYTOKENS": 5, "BIGTOKENS": 600_000, "FULLCTX": 1_048_570}
SNAPSHOT = (
    "<state_snapshot>\n"
    "  <overall_goal>Exercise Gemini CLI against a fake API.</overall_goal>\n"
    "  <key_knowledge>The user sends short test messages.</key_knowledge>\n"
    "  <current_plan>1. [DONE] Answer the test turns.</current_plan>\n"
    "</state_snapshot>"
)
_MODEL_PATH = re.compile(r"^/(?P<version>v1[a-z0-9]*)/models/(?P<model>[^:/]+):(?P<method>\w+)$")


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: dict

    @property
    def model(self) -> str:
        m = _MODEL_PATH.match(self.path)
        return m.group("model") if m else ""

    @property
    def action(self) -> str:
        m = _MODEL_PATH.match(self.path)
        return m.group("method") if m else ""

    def contents(self) -> list[dict]:
        return self.body.get("contents") or []

    def user_texts(self) -> list[str]:
        out = []
        for content in self.contents():
            if content.get("role", "user") != "user":
                continue
            out.extend(p["text"] for p in content.get("parts") or [] if isinstance(p.get("text"), str))
        return out

    def last_user_text(self) -> str:
        """The last text the user wrote (not a tool's result, not Gemini CLI's own context, not a hook's)."""
        texts = [t for t in self.user_texts() if not t.lstrip().startswith(("<session_context>", "<hook_context>"))]
        return texts[-1] if texts else ""

    def ends_with_tool_result(self) -> bool:
        contents = self.contents()
        return bool(contents) and any("functionResponse" in p for p in contents[-1].get("parts") or [])

    def system_text(self) -> str:
        system = self.body.get("systemInstruction") or (self.body.get("config") or {}).get("systemInstruction") or {}
        if isinstance(system, str):
            return system
        return "\n".join(p.get("text", "") for p in system.get("parts") or [] if isinstance(p, dict))

    def generation_config(self) -> dict:
        return self.body.get("generationConfig") or {}

    @property
    def wants_json(self) -> bool:
        return self.generation_config().get("responseMimeType") == "application/json"

    @property
    def is_compression(self) -> bool:
        return "<state_snapshot>" in self.system_text()

    def all_text(self) -> str:
        parts = [self.system_text()]
        for content in self.contents():
            for p in content.get("parts") or []:
                parts.append(p.get("text") or json.dumps(p.get("functionCall") or p.get("functionResponse") or ""))
        return "\n".join(parts)


def fill_schema(schema: dict | None) -> Any:
    """A value that satisfies a JSON schema well enough for Gemini CLI's utility calls."""
    schema = schema or {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    kind = str(kind or "object").lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: fill_schema(sub) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "fake"


class FakeGemini(FakeServer):
    name = "fake Gemini API"

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tool_dir: str = "/tmp"):
        self.tool_dir = tool_dir
        super().__init__(host, port)

    def turns(self) -> list[Request]:
        """The streamed model calls (the conversation's turns)."""
        with self._lock:
            return [r for r in self.requests if r.action == "streamGenerateContent"]

    # The scripted replies.

    def reply(self, req: Request) -> dict:
        """{'parts': [...], 'prompt_tokens': N} for one generate call."""
        last = req.last_user_text()
        default_tokens = 2000 + 40 * len(req.contents())
        if req.wants_json:
            schema = req.generation_config().get("responseJsonSchema") or req.generation_config().get("responseSchema")
            return {"parts": [{"text": json.dumps(fill_schema(schema))}], "prompt_tokens": 100}
        if req.is_compression:  # a moment, as a real summary takes: the spinner stays up
            return {"parts": [{"text": SNAPSHOT}], "prompt_tokens": 100, "delay": 1.0}
        if "QUOTADAY" in last:
            return {"status": 429, "error": daily_quota(req.model or "gemini-2.5-pro")}
        if "RUNTOOL" in last and not req.ends_with_tool_result():
            command = f"echo hello-from-fake > {self.tool_dir}/tool_out.txt"
            call = {"name": "run_shell_command", "args": {"command": command, "description": "Write a marker file."}}
            return {"parts": [{"functionCall": call}], "prompt_tokens": default_tokens}
        if req.ends_with_tool_result():
            return {"parts": [{"text": "The command ran. Done."}], "prompt_tokens": default_tokens}
        tokens = next((n for marker, n in TOKENS.items() if marker in last), default_tokens)
        first = last.strip().splitlines()[0] if last.strip() else "(empty)"
        return {"parts": [{"text": f"Fake reply to: {first[:80]}"}], "prompt_tokens": tokens}

    def count_tokens(self, req: Request) -> int:
        return max(1, len(req.all_text()) // 4)

    # HTTP.

    def _handler(self):
        api = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                path = urlparse(self.path).path
                if "/models" in path:
                    model = {
                        "name": "models/gemini-2.5-pro",
                        "inputTokenLimit": CONTEXT_WINDOW,
                        "outputTokenLimit": 65536,
                        "supportedGenerationMethods": ["generateContent", "countTokens"],
                    }
                    self._json(200, model if ":" in path or path.rstrip("/").count("/") > 2 else {"models": [model]})
                else:
                    self._json(200, {})

            def do_POST(self) -> None:
                parsed = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode(errors="replace")}
                req = Request("POST", parsed.path, parse_qs(parsed.query), body)
                with api._lock:
                    api.requests.append(req)
                if req.action == "countTokens":
                    self._json(200, {"totalTokens": api.count_tokens(req)})
                elif req.action in ("generateContent", "streamGenerateContent"):
                    reply = api.reply(req)
                    time.sleep(reply.get("delay", 0.0))
                    if "error" in reply:  # a JSON error body, also for a stream request
                        self._json(reply["status"], reply["error"])
                        return
                    response = build_response(req, reply)
                    if req.action == "streamGenerateContent":
                        self._sse(response)
                    else:
                        self._json(200, response)
                else:
                    self._json(200, {})

            def _json(self, status: int, data: Any) -> None:
                self.send_json(status, data, content_type="application/json; charset=UTF-8")

            def _sse(self, response: dict) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                for chunk in sse_chunks(response):
                    self.wfile.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
                    self.wfile.flush()
                    time.sleep(0.02)

        return Handler


def daily_quota(model: str, limit: int = 50, retry: float = 37.1) -> dict:
    """The body of the Gemini API's 429 when an API key's free-tier daily request quota for a
    model is spent (as the service sends it: the message with "Please retry in", then Help,
    QuotaFailure with a per-day quotaId, RetryInfo). Gemini CLI reads the per-day quotaId as
    a terminal quota error ("You have exhausted your daily quota on this model."), and the
    RetryInfo is not used then."""
    metric = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
    message = (
        "You exceeded your current quota, please check your plan and billing details. For more information on "
        "this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, "
        f"head to: https://ai.dev/usage?tab=rate-limit. \n* Quota exceeded for metric: {metric}, limit: {limit}, "
        f"model: {model}\nPlease retry in {retry}s."
    )
    return {
        "error": {
            "code": 429,
            "message": message,
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.Help",
                    "links": [
                        {"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}
                    ],
                },
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": metric,
                            "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                            "quotaDimensions": {"location": "global", "model": model},
                            "quotaValue": str(limit),
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{int(retry)}s"},
            ],
        }
    }


def build_response(req: Request, reply: dict) -> dict:
    parts = reply["parts"]
    out_tokens = max(1, sum(len(json.dumps(p)) for p in parts) // 4)
    prompt = reply["prompt_tokens"]
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": out_tokens, "totalTokenCount": prompt + out_tokens},
        "modelVersion": req.model or "gemini-2.5-pro",
        "responseId": f"fake-{int(time.time() * 1000)}",
    }


def sse_chunks(response: dict):
    """A text reply in two chunks (the usage and finishReason on the last), a call in one."""
    candidate = response["candidates"][0]
    parts = candidate["content"]["parts"]
    text = parts[0].get("text") if len(parts) == 1 else None
    if text and len(text) > 12:
        cut = len(text) // 2
        yield {
            "candidates": [{"content": {"role": "model", "parts": [{"text": text[:cut]}]}, "index": 0}],
            "modelVersion": response["modelVersion"],
        }
        yield {**response, "candidates": [{**candidate, "content": {"role": "model", "parts": [{"text": text[cut:]}]}}]}
    else:
        yield response


if __name__ == "__main__":
    serve(FakeGemini, 18777, tool_dir="/tmp")
