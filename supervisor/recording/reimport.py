"""Bringing a session back from its folder when the database lost its row (a damaged
database repaired, or one moved aside by hand): the row and events from the `.cast`, the
text log rendered again if it is gone, and its search index.

What the recording holds: the header (the command, its start time, the terminal's size,
the session's name as its title), the output, input and resizes, and an `m` marker for each
event that was detected (compactions, limits, states: the marker is its kind). The rest of
the row (the folder, agent, project, branch, options, how it ended) is taken from the
session's events kept in the database (facts.py). Neither holds the agent's own session id
or the session's contexts (`supervise summarize ID` makes a context again); what a session
lacks is said in the repair's report.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .. import paths
from ..detection import patterns
from ..errors import SuperviseError
from ..plaintext import plain
from ..store.database import Event, Store
from ..store.repair import recording, stored
from . import asciicast, facts, logindex
from .export import render_cast

REBUILT = {"rebuilt": "from the recording"}  # in each event's detail: it was not stored as it happened


@dataclass
class Reimported:
    """What re-importing the sessions' folders did."""

    ids: list[str] = field(default_factory=list)
    logs_rendered: list[str] = field(default_factory=list)  # ids whose text log was rendered again
    events_rebuilt: list[str] = field(default_factory=list)  # ids of sessions kept without their events, given them again
    unreadable: list[str] = field(default_factory=list)  # one line each: the folder and why
    unknown: dict[tuple[str, ...], list[str]] = field(default_factory=dict)  # facts no event or recording holds -> ids


@dataclass
class Recorded:
    """What a recording says of its session."""

    start: float  # Unix seconds
    last: float  # the offset of its last event
    command: str
    argv: list[str]
    title: str | None
    events: list[Event]
    header: dict


def reimport(store: Store, folders: list[Path], env: Mapping[str, str] | None = None) -> Reimported:
    """A session for each folder's recording (the folder's name is its id). Nothing in a
    folder is changed, except a missing `session.log` written again."""
    done = Reimported()
    try:
        sets = patterns.load_all((), env)
    except SuperviseError:  # a broken pattern file of the user's: agents are named by their command
        sets = {}
    for folder in folders:
        try:
            told = _one(store, folder, sets)
        except (OSError, ValueError) as exc:
            done.unreadable.append(f"{folder}: {plain(str(exc), newlines=False)}")
            continue
        done.ids.append(folder.name)
        if told.rendered:
            done.logs_rendered.append(folder.name)
        unknown = tuple(told.unknown) + (("agent (read from its command)",) if told.agent_from_command else ())
        if unknown:
            done.unknown.setdefault(unknown, []).append(folder.name)
    return done


def events_again(store: Store, sessions: list[dict], done: Reimported) -> None:
    """The events of sessions that were kept without them, from their recordings."""
    for session in sessions:
        cast_path = recording(store, session["cast_path"])
        try:
            recorded = read(cast_path, session.get("exit_code"), {"cwd": session.get("cwd") or ""})
        except (OSError, ValueError) as exc:
            done.unreadable.append(f"{cast_path.parent}: {plain(str(exc), newlines=False)}")
            continue
        for event in recorded.events:
            store.add_event(session["id"], event)
        done.events_rebuilt.append(session["id"])


def read(cast_path: Path, exit_code: int | None = None, began: Mapping[str, object] | None = None) -> Recorded:
    """The session as its recording tells it: a start event (with `began`, what is known of
    it from elsewhere), one for each marker, an exit (with `exit_code` if it is known)."""
    header, events = asciicast.read(cast_path)
    start = _start(header.get("timestamp"), cast_path)
    command = header["command"] if isinstance(header.get("command"), str) else ""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = [command]
    cols, rows = asciicast.header_size(header)
    found = [Event("start", {"argv": argv, "cols": cols, "rows": rows, **(began or {}), **REBUILT}, 0.0, _iso(start))]
    last = 0.0
    for t, code, data in events:
        last = max(last, t)
        if code == "m" and data:
            found.append(Event(data, {"sources": ["recording"], **REBUILT}, t, _iso(start + t)))
    found.append(Event("exit", {"exit_code": exit_code, **REBUILT}, last, _iso(start + last)))
    title = header.get("title") if isinstance(header.get("title"), str) else None
    return Recorded(start, last, command, argv, title, found, dict(header))


def _one(store: Store, folder: Path, sets: Mapping[str, patterns.PatternSet]) -> facts.Told:
    cast_path, log_path = folder / "session.cast", folder / "session.log"
    recorded = read(cast_path)
    kept = store.events(folder.name)  # (those kept from the damaged database)
    told = facts.told(recorded.header, recorded.start, recorded.last, kept, sets)
    if not log_path.exists():
        _render_log(cast_path, log_path)
        told.rendered = True
    columns = {r[1] for r in store.conn.execute("pragma table_info(sessions)")}
    row = {k: v for k, v in told.row.items() if k in columns}  # (a start event of a newer supervise may say more)
    store.create_session(folder.name, **row, cast_path=stored(cast_path), log_path=stored(log_path))
    if not kept:
        for event in recorded.events:
            store.add_event(folder.name, event)
    logindex.finish(store, folder.name, log_path)  # (an ended session: its whole log)
    return told


def _render_log(cast_path: Path, log_path: Path) -> None:
    """The text log as the live renderer would have written it, whole or not at all."""
    partial = log_path.with_name(log_path.name + ".part")
    try:
        with paths.open_private(partial, "w", encoding="utf-8") as fh:
            for line in render_cast(cast_path):
                fh.write(line + "\n")
        os.replace(partial, log_path)
    finally:
        partial.unlink(missing_ok=True)


def _start(timestamp: object, cast_path: Path) -> float:
    """The header's start time (Unix seconds), or, where it has none that makes sense, the
    time the recording was last written."""
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool) and 0 <= timestamp < 2**35:
        return float(timestamp)
    return cast_path.stat().st_mtime


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")
