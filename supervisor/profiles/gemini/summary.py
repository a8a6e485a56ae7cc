"""Gemini CLI as a summary backend: accepted as a name, but no release so far can do what a
summary needs, so it always answers why (the round is made by the heuristic, with that reason
stored) and `auto` never picks it.

What a summary needs, and what Gemini CLI 0.61.0 has (observed, `gemini --help`): `-p` runs
headless and `-o json` wraps the answer in JSON, but there is no flag that makes the answer
follow a schema (its JSON-schema calls are internal), and none that keeps the call from being
saved as a session of the user's (a `gemini -p` run left
~/.gemini/tmp/<project>/chats/session-*.jsonl, listed by `--list-sessions`, with a model call
of its own to title it). Prompting for JSON without a schema, and leaving a session behind in the user's
history, would be faking support.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..headless import Answer, Failed, Settings

LABEL = "gemini -p"
HELP = ["--help"]
UNABLE = "this Gemini CLI cannot summarize: it has no headless structured output (no schema flag) and saves every headless run as a session"


def ask(text: str, system: str, schema: dict, cfg: Settings, ends: float, executable: str, env: Mapping[str, str]) -> Answer:
    raise Failed(f"{LABEL}: {UNABLE}")
