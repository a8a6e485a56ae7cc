"""Who fills a session context: the Anthropic API, or an agent CLI headless on the user's login.

Each backend takes the redacted model input and gives back an `Answer`
(what the model filled in, unvalidated, and what it cost) or raises `Failed` with the reason;
the dispatcher (summarizer.py) validates, asks once more, and falls back to the heuristic.

    api       the Anthropic Messages API through the SDK, with a key (any compatible base URL)
    headless  a CLI run with its input on stdin, one deadline, its process group killed past it
    claude    `claude -p --json-schema ...` on the user's Claude Code login
    codex     `codex exec --output-schema ...` on the user's Codex login (ChatGPT or key)
    gemini    a name only: Gemini CLI cannot summarize yet, and says why
    choose    which backend `auto` uses for a session, and which CLIs can be used here
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Answer:
    data: object  # the context as the model filled it; None when it filled nothing
    model: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    missing: str = "no answer"  # when data is None: what came instead


class Failed(Exception):
    """The backend gave no answer to use (an error, a limit, a timeout): the reason, for the
    context row's `error`."""
