"""What a session was, told again from what is left of it when its row is lost: its kept
events (the `start` event holds the run's folder, agent, name, project, branch, options and
start; the `exit` event how it ended) and its recording's header (the command, its start,
the name as its title) and last event (its end). A plain function over data: nothing is
guessed, and each fact that neither holds is named for the repair's report."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .. import project
from ..detection import patterns
from ..store.database import COMPLETED, FAILED, INTERRUPTED


# What a start event says that is not a column of the session's row.
_NOT_THE_ROW = {"cols", "rows", "rebuilt", "sources"}


@dataclass
class Told:
    """A session's facts as its recording tells them."""

    row: dict[str, Any]  # the session's row, as far as it is known
    unknown: list[str] = field(default_factory=list)  # the facts neither the events nor the recording hold
    agent_from_command: bool = False  # the agent was read from its command (the run did not say it)
    rendered: bool = False  # its text log was rendered again


def told(
    header: Mapping[str, Any],
    start: float,
    last: float,
    events: list[dict],
    sets: Mapping[str, patterns.PatternSet],
) -> Told:
    """A session's row from its kept `events` (decoded rows, in order) and its
    recording (`header`; `start`, its start in Unix seconds; `last`, its last event's offset)."""
    began = next((e for e in events if e["kind"] == "start"), None)
    ended = next((e for e in reversed(events) if e["kind"] == "exit"), None)
    said: Mapping[str, Any] = (began or {}).get("detail") or {}
    how: Mapping[str, Any] = (ended or {}).get("detail") or {}
    command = header["command"] if isinstance(header.get("command"), str) else ""
    argv: list[str] = said["argv"] if _strings(said.get("argv")) else _split(command)
    out = Told(
        {
            "name": said["name"] if "name" in said else header.get("title") if isinstance(header.get("title"), str) else None,
            "command": command or shlex.join(argv),
            "argv": argv,
            "cwd": said.get("cwd") if isinstance(said.get("cwd"), str) else "",
            "started": said.get("started") or (began or {}).get("time") or _iso(start),
            "ended": (ended or {}).get("time") or _iso(start + last),
            "parent_id": said.get("parent_id"),
            "options": said.get("options") if isinstance(said.get("options"), dict) else {},
        }
    )
    out.row.update({k: v for k, v in said.items() if k not in out.row and k not in _NOT_THE_ROW})  # (what else the run said of itself)
    if isinstance(said.get("agent"), str):
        out.row["agent"] = said["agent"]
    else:
        out.row["agent"] = patterns.agent_for(sets, argv)[0] if argv else None
        out.agent_from_command = True
    if not out.row["cwd"]:
        out.unknown += ["folder", "project", "branch"]
    elif "project" in said:
        out.row.update(project=said.get("project"), branch=said.get("branch"))
    else:  # (a run of an older supervise: its folder's project, as the database's upgrade gives it)
        out.row["project"] = project.root(out.row["cwd"])
        out.unknown.append("branch")
    if ended is None:
        out.row.update(status=INTERRUPTED, exit_code=None)  # as for a supervisor that was killed
        out.unknown.append("exit code")
    else:
        code = how.get("exit_code")
        out.row["exit_code"] = code if isinstance(code, int) else None
        out.row["status"] = INTERRUPTED if how.get("interrupted_by") else COMPLETED if code == 0 else FAILED
    if "options" not in said:
        out.unknown.append("options")
    return out


def _strings(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return [command] if command else []


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")
