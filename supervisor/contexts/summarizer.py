"""Turn a digest into a session context with a cheap model, or without one.

The dispatcher: the digest is redacted before it leaves the machine, the backend chosen for
the session (backends/choose.py) is asked for the context, its answer is validated, a
malformed one is asked for once more, and any failure (no key, no CLI, a refused login, a
usage limit, 401, 429/529 after retries, 5xx, timeout, malformed twice) falls back to the
heuristic summarizer, marked as such, with the reason and the backend kept. One deadline
(`timeout`) covers the whole summary, asked twice or not.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

from ..config import Summary
from ..plaintext import plain
from ..redact import redact
from . import schema
from .backends import Answer, Failed, api, choose
from .digest import Digest

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
    """A context, and what made it."""

    context: dict
    source: str  # "model" | "heuristic"
    model: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    error: str | None = None
    backend: str = "heuristic"  # who was asked: api | an agent CLI's name | heuristic (none)


def model_input(d: Digest, previous: dict | None) -> str:
    parts = []
    if previous:
        parts.append("## Previous context (integrate, do not repeat)\n" + json.dumps(previous, indent=1, ensure_ascii=False))
    parts.append("## Session digest\n" + d.text)
    return redact("\n\n".join(parts))


def count_tokens(d: Digest, previous: dict | None, cfg: Summary) -> int | None:
    """The API's count of what a summary would send, or None (no key, or the API is not the
    backend: a login's token is never sent by supervise itself)."""
    if cfg.backend not in ("auto", "api"):
        return None
    return api.count_tokens(model_input(d, previous), SYSTEM, cfg)


def summarize(
    d: Digest, previous: dict | None, cfg: Summary, session: Mapping | None = None, env: Mapping[str, str] | None = None
) -> Result:
    """The context of `d` (and `previous`), by the backend `cfg` names for `session` (the
    session row: its agent and the program it ran); the heuristic's, with the reason, when
    the backend gives none."""
    env = os.environ if env is None else env
    choice = choose.resolve(cfg, session, env)
    if choice.backend == "heuristic" or (choice.backend in choose.backends() and not choice.executable):
        return _fallback(d, previous, choice.why, backend=choice.backend)
    text = model_input(d, previous)
    ends = time.monotonic() + cfg.timeout  # one deadline for the whole summary, asked twice or not
    spent = Answer(None, cfg.model if choice.backend == "api" else _cli_model(choice.backend, cfg))
    problem = "no answer"
    for attempt in range(2):  # a malformed answer is asked for once more
        try:
            answer = _ask(choice, text, cfg, ends, env)
        except Failed as exc:
            return _fallback(d, previous, str(exc), spent, choice.backend)
        spent = _add(spent, answer)
        try:
            if answer.data is None:
                raise schema.Malformed(answer.missing)
            context = schema.validate(answer.data)
        except schema.Malformed as exc:
            problem = f"malformed answer ({exc})"
            continue
        return Result(context, "model", spent.model, spent.input_tokens, spent.output_tokens, spent.cost_usd, None, choice.backend)
    return _fallback(d, previous, problem + ", twice", spent, choice.backend)


def _ask(choice: choose.Choice, text: str, cfg: Summary, ends: float, env: Mapping[str, str]) -> Answer:
    if choice.backend == "api":
        return api.ask(text, SYSTEM, cfg, ends)
    backend = choose.backends().get(choice.backend)
    if backend is None:
        raise Failed(f"no summary backend {choice.backend}")
    return backend.ask(text, SYSTEM, schema.SCHEMA, cfg, ends, choice.executable, env)


def _cli_model(name: str, cfg: Summary) -> str | None:
    """The model a CLI backend asks for, as far as it says before answering."""
    backend = choose.backends().get(name)
    return backend.model(cfg) if backend is not None and hasattr(backend, "model") else None


def _add(spent: Answer, answer: Answer) -> Answer:
    """What two attempts used, together."""
    cost = None if spent.cost_usd is None and answer.cost_usd is None else (spent.cost_usd or 0.0) + (answer.cost_usd or 0.0)
    return Answer(
        None, answer.model or spent.model, spent.input_tokens + answer.input_tokens, spent.output_tokens + answer.output_tokens, cost
    )


def _fallback(d: Digest, previous: dict | None, error: str, spent: Answer | None = None, backend: str = "heuristic") -> Result:
    spent = spent or Answer(None, None)
    # What another program said, stored and shown: plain text only.
    return Result(
        schema.heuristic(d, previous),
        "heuristic",
        spent.model,
        spent.input_tokens,
        spent.output_tokens,
        spent.cost_usd if (spent.input_tokens or spent.output_tokens) else None,
        plain(error),
        backend,
    )
