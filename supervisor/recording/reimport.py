"""Bringing a session back from its folder when the database lost its row (a damaged
database repaired, or one moved aside by hand): the row and events from the `.cast`, the
text log rendered again if it is gone, and its search index.

What the recording holds: the header (the command, its start time, the terminal's size,
the session's name as its title), the output, input and resizes, and an `m` marker for each
event that was detected (compactions, limits, states: the marker is its kind). It does not
hold the directory the agent ran in, the agent's own session id, how it exited or the
session's contexts: those stay unknown (the status reads `interrupted`, as for a
supervisor that was killed, and `supervise summarize ID` makes a context again).
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
from ..store.database import INTERRUPTED, Event, Store
from . import asciicast, logindex
from .export import render_cast

REBUILT = {"rebuilt": "from the recording"}  # in each event's detail: it was not stored as it happened


@dataclass
class Reimported:
    ids: list[str] = field(default_factory=list)
    logs_rendered: list[str] = field(default_factory=list)  # ids whose text log was rendered again
    events_rebuilt: list[str] = field(default_factory=list)  # ids of sessions kept without their events, given them again
    unreadable: list[str] = field(default_factory=list)  # one line each: the folder and why


@dataclass
class Recorded:
    """What a recording says of its session."""

    start: float  # Unix seconds
    last: float  # the offset of its last event
    command: str
    argv: list[str]
    title: str | None
    events: list[Event]


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
            log_rendered = _one(store, folder, sets)
        except (OSError, ValueError) as exc:
            done.unreadable.append(f"{folder}: {plain(str(exc), newlines=False)}")
            continue
        done.ids.append(folder.name)
        if log_rendered:
            done.logs_rendered.append(folder.name)
    return done


def events_again(store: Store, sessions: list[dict], done: Reimported) -> None:
    """The events of sessions that were kept without them, from their recordings."""
    for session in sessions:
        try:
            recorded = read(Path(session["cast_path"]), session.get("exit_code"))
        except (OSError, ValueError) as exc:
            done.unreadable.append(f"{Path(session['cast_path']).parent}: {plain(str(exc), newlines=False)}")
            continue
        for event in recorded.events:
            store.add_event(session["id"], event)
        done.events_rebuilt.append(session["id"])


def read(cast_path: Path, exit_code: int | None = None) -> Recorded:
    """The session as its recording tells it: a start event, one for each marker, an exit
    (with `exit_code` if it is known from elsewhere)."""
    header, events = asciicast.read(cast_path)
    start = _start(header.get("timestamp"), cast_path)
    command = header["command"] if isinstance(header.get("command"), str) else ""
    try:
        argv = shlex.split(command)
    except ValueError:
        argv = [command]
    cols, rows = asciicast.header_size(header)
    found = [Event("start", {"argv": argv, "cols": cols, "rows": rows, **REBUILT}, 0.0, _iso(start))]
    last = 0.0
    for t, code, data in events:
        last = max(last, t)
        if code == "m" and data:
            found.append(Event(data, {"sources": ["recording"], **REBUILT}, t, _iso(start + t)))
    found.append(Event("exit", {"exit_code": exit_code, **REBUILT}, last, _iso(start + last)))
    title = header.get("title") if isinstance(header.get("title"), str) else None
    return Recorded(start, last, command, argv, title, found)


def _one(store: Store, folder: Path, sets: Mapping[str, patterns.PatternSet]) -> bool:
    cast_path, log_path = folder / "session.cast", folder / "session.log"
    recorded = read(cast_path)
    wanted = Path(recorded.argv[0]).name if recorded.argv else ""
    chosen = patterns.select(sets, wanted) if wanted else None
    rendered = False
    if not log_path.exists():
        _render_log(cast_path, log_path)
        rendered = True
    store.create_session(
        folder.name,
        name=recorded.title,
        command=recorded.command,
        argv=recorded.argv,
        agent=chosen.agent if chosen else wanted or None,
        cwd="",
        started=_iso(recorded.start),
        ended=_iso(recorded.start + recorded.last),
        status=INTERRUPTED,
        cast_path=str(cast_path),
        log_path=str(log_path),
        options={},
    )
    if not store.conn.execute("select 1 from events where session_id = ? limit 1", [folder.name]).fetchone():
        for event in recorded.events:  # (events kept from the damaged database are not doubled)
            store.add_event(folder.name, event)
    logindex.index_new(store, folder.name, log_path)
    return rendered


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
