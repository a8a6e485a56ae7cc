"""`supervise ps`: every running session and what its agent is doing, newest first.

The recorder of each session writes its agent's state when it changes (states.py), so
listing costs a query and a stat: nothing runs while agents idle. The time since the last
output is the recording's modification time (it is flushed after every read). A session
whose supervisor died is not listed (the store marks it interrupted). A session whose
agent has no pattern set (a shell, a program of your own) is `running`: its screen cannot
tell working from waiting.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from ..detection.limits import parse_time
from ..plaintext import plain
from ..store.database import Store


def rows(store: Store, now: datetime | None = None) -> list[dict]:
    """The running sessions, newest first, each with its state and how long it has held."""
    now = now or datetime.now(timezone.utc)
    out = []
    running = store.running()
    unwatched = without_patterns([s for s in running if not s.get("state")])
    for s in running:
        detail = s.get("state_detail") or {}
        since = parse_time(s.get("state_since") or s["started"])  # no state yet: as it was since it started
        out.append(
            {
                "id": s["id"],
                "name": s["name"],
                "agent": s["agent"],
                "cwd": s["cwd"],
                "started": s["started"],
                "state": s.get("state") or ("running" if s["id"] in unwatched else "starting"),
                "state_seconds": round((now - since).total_seconds(), 1) if since else None,
                "context_left": detail.get("context_left"),
                "reset_at": detail.get("reset_at"),
                "continue_at": detail.get("continue_at"),  # --on-limit wait: when a continue will be typed
                "idle_seconds": _since_output(s.get("cast_path"), now),
            }
        )
    return out


def without_patterns(sessions: list[dict]) -> set[str]:
    """The ids of the sessions whose agent has no pattern set: nothing on their screen tells
    working from waiting, so they are `running` for as long as they run (the others are
    `starting` until their screen tells). Pattern files are read only when a session has
    no state yet."""
    if not sessions:
        return set()
    from ..detection import patterns  # (slow to import: only when needed)
    from ..errors import SuperviseError

    sets: dict[tuple[str, ...], dict[str, patterns.PatternSet] | None] = {}
    out = set()
    for s in sessions:
        extra = tuple((s.get("options") or {}).get("pattern_files") or ())
        if extra not in sets:
            try:
                sets[extra] = patterns.load_all([Path(p) for p in extra])
            except SuperviseError:
                sets[extra] = None  # a file broken since the session started: it had its patterns then
        found = sets[extra]
        if not s["agent"] or (found is not None and patterns.select(found, s["agent"]) is None):
            out.add(s["id"])
    return out


def table(items: list[dict]) -> list[str]:
    """`items` as the lines of a table a person reads."""
    if not items:
        return ["No session is running. Start one with: supervise -- COMMAND"]
    labels = [state_label(r) for r in items]
    width = max(22, *map(len, labels))
    lines = [f"{'ID':<8} {'AGENT':<10} {'STATE':<{width}} {'FOR':>6} {'OUTPUT':>6} {'CONTEXT':>7}  {'NAME':<14} DIRECTORY"]
    for r, label in zip(items, labels):
        context = "" if r["context_left"] is None else f"{r['context_left']}%"
        name = plain(r["name"] or "", newlines=False)[:14]
        lines.append(
            f"{r['id']:<8} {(r['agent'] or '')[:10]:<10} {label:<{width}} {_ago(r['state_seconds']):>6} "
            f"{_ago(r['idle_seconds']):>6} {context:>7}  {name:<14} {plain(r['cwd'] or '', newlines=False)}"
        )
    return lines


def state_label(r: dict) -> str:
    """`limited until 07:45` (local time; `, go on 07:47` when a continue waits), or the
    state's name."""
    if r["state"] == "limited" and r.get("reset_at"):
        at = _clock(r["reset_at"])
        if at:
            go_on = _clock(r.get("continue_at"))
            return f"limited until {at}" + (f", go on {go_on}" if go_on else "")
    return r["state"]


def _clock(text: str | None) -> str:
    """A time as HH:MM local, with its date unless today ("" if none)."""
    at = parse_time(text)
    if at is None:
        return ""
    local = at.astimezone()
    return f"{local:%H:%M}" + ("" if local.date() == datetime.now().astimezone().date() else local.strftime(" %b %d"))


def _since_output(cast_path: str | None, now: datetime) -> float | None:
    try:
        return round(max(0.0, now.timestamp() - os.stat(cast_path).st_mtime), 1) if cast_path else None
    except OSError:
        return None


def _ago(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}"
    return f"{seconds // 86400:.0f}d"
