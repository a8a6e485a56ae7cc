"""The memory tools, defined once: their names, what they say of themselves, their input
schemas, and how a call is carried out. The MCP server offers them to any agent, and
supervise's own agent has them among its tools (prefixed, as MCP clients prefix them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Short: every request an agent makes carries them (all four under ~400 tokens, measured).
TOOLS: dict[str, dict[str, Any]] = {
    "search": {
        "description": "Full-text search of past agent sessions (logs, user requests, contexts) in this project; since: 7d or a date.",
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "agent": {"type": "string"},
                "since": {"type": "string"},
                "all_projects": {"type": "boolean"},
                "limit": {"type": "integer"},
            },
            "required": ["query"],
        },
    },
    "session": {
        "description": "One session by id: the user's requests, latest context, outcome, timeline.",
        "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
    },
    "excerpt": {
        "description": "The text log around a hit id from search.",
        "input_schema": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "around": {"type": "integer"}, "lines": {"type": "integer"}},
            "required": ["id"],
        },
    },
    "brief": {
        "description": "What the project's last sessions knew: requests, decisions, open work, errors.",
        "input_schema": {"type": "object", "properties": {"project": {"type": "string"}}},
    },
}
DEFAULT_LIMIT = 8


def call(memory, name: str, args: Mapping[str, Any]) -> str:
    """Carry out tool `name` with the model's `args` on `memory` (mcpserver.Memory)."""
    if name == "search":
        return memory.search(
            str(args.get("query") or ""),
            str(args.get("agent") or "") or None,
            str(args.get("since") or "") or None,
            bool(args.get("all_projects")),
            int(args.get("limit") or DEFAULT_LIMIT),
        )
    if name == "session":
        return memory.session(str(args.get("id") or ""))
    if name == "excerpt":
        around = args.get("around")
        return memory.excerpt(
            str(args.get("id") or ""), int(around) if around is not None and int(around) >= 0 else None, int(args.get("lines") or 0)
        )
    if name == "brief":
        return memory.brief(str(args.get("project") or "") or None)
    raise ValueError(f"no tool {name!r}")
