"""Turn a digest into a session context with a cheap model, or without one.

The digest is redacted before it leaves the machine. The model fills the context through a
forced tool call; its answer is validated, a malformed one is asked for once more, and any
failure (no key, 401, 429/529 after the SDK's retries, 5xx, timeout, malformed twice) falls
back to the heuristic summarizer, marked as such, with the reason kept.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from . import context as ctx
from .digest import DEFAULT_BUDGET, Digest
from .pricing import cost_usd
from .redact import redact

DEFAULT_MODEL = "claude-haiku-4-5"
SYSTEM = (
    "You keep the memory of a coding session for an AI coding agent whose context gets compacted. "
    "From the session digest (and the previous context, if any), record what the agent needs to carry on: "
    "the original request verbatim, the current task, completed and pending steps, key decisions with reasons, "
    "relevant files, errors and how they were resolved. Integrate the previous context: keep what still holds, "
    "update what changed, do not repeat. Be specific (names, paths, commands) and brief. Secrets appear as "
    "[REDACTED:kind]; never guess them."
)


@dataclass
class Config:
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = None
    auth_token: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    budget: int = DEFAULT_BUDGET


def config_file(env: Mapping[str, str]) -> Path:
    from .patterns import user_dir

    return user_dir(env).parent / "config.toml"


def load_config(env: Mapping[str, str] | None = None, **overrides) -> Config:
    """Flags (overrides) win over env vars, which win over the config file's [summary] table."""
    env = os.environ if env is None else env
    try:
        table = tomllib.loads(config_file(env).read_text()).get("summary", {})
    except (OSError, tomllib.TOMLDecodeError):
        table = {}
    key_env = table.get("api_key_env")
    cfg = Config(
        model=env.get("SUPERVISE_SUMMARY_MODEL") or table.get("model") or DEFAULT_MODEL,
        base_url=env.get("SUPERVISE_SUMMARY_BASE_URL") or table.get("base_url") or env.get("ANTHROPIC_BASE_URL"),
        api_key=env.get("SUPERVISE_SUMMARY_API_KEY") or (env.get(key_env) if key_env else None) or env.get("ANTHROPIC_API_KEY"),
        auth_token=env.get("ANTHROPIC_AUTH_TOKEN"),
        timeout=float(env.get("SUPERVISE_SUMMARY_TIMEOUT") or table.get("timeout") or 60.0),
        budget=int(env.get("SUPERVISE_DIGEST_BUDGET") or table.get("budget") or DEFAULT_BUDGET),
    )
    for key, value in overrides.items():
        if value is not None:
            setattr(cfg, key, value)
    return cfg


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


def _client(cfg: Config):
    import anthropic

    return anthropic.Anthropic(
        api_key=cfg.api_key, auth_token=None if cfg.api_key else cfg.auth_token,
        base_url=cfg.base_url, timeout=cfg.timeout, max_retries=cfg.max_retries,
    )


def count_tokens(d: Digest, previous: dict | None, cfg: Config) -> int | None:
    """The API's count of what a summary would send, or None (no key, no endpoint, error)."""
    if not (cfg.api_key or cfg.auth_token):
        return None
    try:
        counted = _client(cfg).messages.count_tokens(
            model=cfg.model, system=SYSTEM, tools=[ctx.TOOL],
            messages=[{"role": "user", "content": model_input(d, previous)}],
        )
        return int(counted.input_tokens)
    except Exception:  # an estimate will do
        return None


def summarize(d: Digest, previous: dict | None, cfg: Config) -> Result:
    if not (cfg.api_key or cfg.auth_token):
        return _fallback(d, previous, "no API key (set ANTHROPIC_API_KEY or SUPERVISE_SUMMARY_API_KEY)")
    import anthropic

    client = _client(cfg)
    text = model_input(d, previous)
    used_in = used_out = 0
    problem = "no answer"
    for attempt in range(2):  # a malformed answer is asked for once more
        try:
            response = client.messages.create(
                model=cfg.model,
                max_tokens=4096,
                system=SYSTEM,
                tools=[ctx.TOOL],
                tool_choice={"type": "tool", "name": ctx.TOOL["name"]},
                messages=[{"role": "user", "content": text}],
            )
        except anthropic.APIStatusError as exc:
            return _fallback(d, previous, f"model call failed: {exc.status_code} {_message(exc)}", used_in, used_out, cfg.model)
        except anthropic.APITimeoutError:
            return _fallback(d, previous, f"model call timed out after {cfg.timeout:g}s", used_in, used_out, cfg.model)
        except anthropic.APIError as exc:
            return _fallback(d, previous, f"model call failed: {exc}", used_in, used_out, cfg.model)
        usage = getattr(response, "usage", None)
        used_in += getattr(usage, "input_tokens", 0) or 0
        used_out += getattr(usage, "output_tokens", 0) or 0
        block = next((b for b in response.content if getattr(b, "type", None) == "tool_use"), None)
        try:
            if block is None:
                raise ctx.Malformed("no tool call in the answer")
            context = ctx.validate(block.input)
        except ctx.Malformed as exc:
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
    return Result(ctx.heuristic(d, previous), "heuristic", model, used_in, used_out, cost, error)
