"""The lines said as a session ends about what supervise gave the agent (its context, a
brief), or why it did not, and how to see it."""

from __future__ import annotations

import os

from ..plaintext import plain
from ..store.database import Store


def injection(sid: str, parent_id: str | None, inject: str, given: list[dict], compacted: bool) -> list[str]:
    """One line after the agent exits on what was given back (or how to get it)."""
    if given:
        how = ", ".join(f"{d.get('reason')} via {d.get('channel')}" + ("" if d.get("confirmed") else " (not confirmed)") for d in given)
        return [f"supervise: gave the agent its session context {len(given)} time(s): {how}"]
    if not compacted and not parent_id:
        return []
    whose = sid if compacted else parent_id
    if inject == "off":
        return [f"supervise: context injection was off; the session context: supervise context {whose}"]
    return [f"supervise: the session context was not given to the agent; see it with: supervise context {whose}"]


def brief(sid: str, argv: list[str], asked: bool | None, agent: bool, inject: str, store: Store, given: list[dict]) -> list[str]:
    """A new session with the brief on: why it had none, or that it was not given. For a
    program that is no agent, only when the flag asked for it (the setting is for every run)."""
    if not agent:
        program = plain(os.path.basename(argv[0]), newlines=False)[:40]
        return [f"supervise: no brief: {program} is not an agent supervise knows (see: supervise patterns list)"] if asked else []
    if inject == "off":
        return ["supervise: no brief: context injection was off (--inject off)"]
    try:
        made = store.events(sid, "brief")
    except Exception:  # (the store's trouble is said by its own note)
        return []
    if not made:
        return ["supervise: no brief: no earlier session of this project has a context yet"]
    if not any(d.get("reason") == "brief" for d in given):
        return [f"supervise: the brief was not given to the agent; see it with: supervise show {sid}"]
    return []
