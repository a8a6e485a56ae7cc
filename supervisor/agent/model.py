"""One model call per step, streamed: the answer's text is shown as it comes; tool calls are
returned to be run by us (the loop), never by the SDK.

Ctrl-C while the answer streams raises Cancelled from the signal handler (the loop's), and
what had arrived is returned as a partial, interrupted answer. The SDK retries 429, 5xx and
overloaded itself; a 401 or an unknown model ends the task with one clear line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import Summary
from ..errors import SuperviseError


class Cancelled(BaseException):
    """The user pressed Ctrl-C. A BaseException, as KeyboardInterrupt is: the HTTP stack and
    the SDK's retries catch Exception (a Cancelled raised in a summary call's read was taken
    for a connection error and retried)."""


@dataclass
class Step:
    """What one model call answered."""

    content: list[dict]  # text and tool_use blocks, in order
    usage: dict = field(default_factory=dict)  # input, cache read and write, output tokens of this call
    stop_reason: str | None = None
    interrupted: bool = False

    @property
    def tool_calls(self) -> list[dict]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def context_tokens(self) -> int:
        """What this call's context held: its whole input (cached or not) and its output;
        per step, never a running total."""
        u = self.usage
        return sum(int(u.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"))


class Model:
    def __init__(self, model: str, base_url: str | None, api_key: str | None, auth_token: str | None, max_tokens: int = 8192):
        import anthropic

        self.name = model
        self.max_tokens = max_tokens
        self.client = anthropic.Anthropic(api_key=api_key, auth_token=None if api_key else auth_token, base_url=base_url, max_retries=4)

    @classmethod
    def from_settings(cls, summary: Summary, model: str | None, base_url: str | None) -> "Model":
        if not summary.has_key:
            raise SuperviseError("no API key for the agent's model", "set ANTHROPIC_API_KEY (or SUPERVISE_SUMMARY_API_KEY)", exit_code=2)
        return cls(model or DEFAULT_AGENT_MODEL, base_url or summary.base_url, summary.api_key, summary.auth_token)

    def step(self, system: str, tools: list[dict], messages: list[dict], on_text: Callable[[str], None]) -> Step:
        import anthropic

        text: list[str] = []
        try:
            # the SDK types these as its TypedDicts; ours are the same JSON, held as plain dicts
            with self.client.messages.stream(
                model=self.name,
                max_tokens=self.max_tokens,
                system=system,
                tools=tools,  # type: ignore[arg-type]
                messages=messages,  # type: ignore[arg-type]
            ) as stream:
                for event in stream:
                    if event.type == "content_block_delta" and isinstance(event.delta, anthropic.types.TextDelta):
                        text.append(event.delta.text)
                        on_text(event.delta.text)
                final = stream.get_final_message()
        except Cancelled:
            partial = "".join(text)
            return Step([{"type": "text", "text": partial}] if partial else [], {}, "cancelled", interrupted=True)
        except anthropic.AuthenticationError as exc:
            raise SuperviseError("the model API refused the key (401)", "check ANTHROPIC_API_KEY") from exc
        except anthropic.NotFoundError as exc:
            raise SuperviseError(
                f"the model API does not know the model {self.name!r}", "pass --model with a model your key can use"
            ) from exc
        except anthropic.APIStatusError as exc:
            raise too_long(exc) or SuperviseError(
                f"the model call failed: {exc.status_code} {_message(exc)}", "try again; the conversation is kept"
            ) from exc
        except anthropic.APIError as exc:
            raise SuperviseError(f"the model call failed: {exc}", "check the network and --base-url; the conversation is kept") from exc
        content = [block.model_dump(exclude_none=True) for block in final.content]
        content = [{k: v for k, v in b.items() if k in ("type", "text", "id", "name", "input")} for b in content]
        return Step(content, final.usage.model_dump(exclude_none=True), final.stop_reason)


# A current model (the SDK warns that claude-sonnet-4-5 reaches its end of life on 2026-11-30).
class TooLong(Exception):
    """The API said the prompt is too long: `actual` tokens against `maximum` (0 if unsaid)."""

    def __init__(self, actual: int, maximum: int):
        super().__init__(f"prompt is too long: {actual} tokens > {maximum} maximum")
        self.actual, self.maximum = actual, maximum


def too_long(exc) -> TooLong | None:
    """The API's "prompt is too long: N tokens > M maximum" as TooLong, or None."""
    import re

    text = _message(exc)
    if "prompt is too long" not in text.lower():
        return None
    m = re.search(r"(\d+)\s*tokens?\s*>\s*(\d+)", text)
    return TooLong(int(m.group(1)), int(m.group(2))) if m else TooLong(0, 0)


DEFAULT_AGENT_MODEL = "claude-sonnet-5-5"
CONTEXT_LIMITS: dict[str, int] = {}  # known windows other than the default below, by model id


def summarize(model: "Model", system: str, text: str, name: str | None = None) -> tuple[str, dict]:
    """A tool-less call (the compaction's summary): its text and usage."""
    import anthropic

    try:
        reply = model.client.messages.create(
            model=name or model.name, max_tokens=model.max_tokens, system=system, messages=[{"role": "user", "content": text}]
        )
    except anthropic.APIStatusError as exc:
        raise too_long(exc) or SuperviseError(f"the summary call failed: {exc.status_code} {_message(exc)}") from exc
    except anthropic.APIError as exc:
        raise SuperviseError(f"the summary call failed: {exc}") from exc
    return "".join(getattr(b, "text", "") for b in reply.content), reply.usage.model_dump(exclude_none=True)


def context_limit(model: str, given: int | None) -> int:
    return given or CONTEXT_LIMITS.get(model, 200_000)


def _message(exc) -> str:
    try:
        return exc.body["error"]["message"]
    except (TypeError, KeyError):
        return str(exc)
