"""`supervise doctor --repair`: a damaged database is moved aside and what can be read of it
goes into a fresh one; then every recording the database does not list (its row lost with
the damage, or the database moved aside by hand) is brought back from its session folder.
Run twice, the second run finds nothing to do."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..memory.reindex import reindex
from ..recording.reimport import Reimported, events_again, reimport
from ..store.database import Store
from ..store.repair import is_sound, rebuild, refuse_if_running, unlisted, without_events


@dataclass
class Repaired:
    """What repairing a damaged database did."""

    database: Path
    moved_to: Path | None = None  # the damaged file, kept aside
    kept: dict[str, int] = field(default_factory=dict)  # rows copied from it, by table
    reimported: Reimported = field(default_factory=Reimported)

    @property
    def complete(self) -> bool:
        return not self.reimported.unreadable


def repair(env: Mapping[str, str] | None = None) -> Repaired:
    env = os.environ if env is None else env
    done = Repaired(paths.db_path(env))
    paths.ensure_private_dir(done.database.parent)  # a folder we cannot write: said before anything is read or made
    if not is_sound(done.database):
        refuse_if_running(done.database)
        done.moved_to, kept = rebuild(done.database)
        done.kept = kept.rows
    store = Store(done.database)  # (a new one, if the database was moved aside by hand)
    try:
        done.reimported = reimport(store, unlisted(store, paths.data_dir(env) / "sessions"), env)
        if done.moved_to is not None:
            events_again(store, without_events(store), done.reimported)
            reindex(store)  # the logs are the record: chunks lost with a bad page are made again from them
    finally:
        store.close()
    return done


def said(done: Repaired) -> list[str]:
    """What was done, for the user: a line, and a line for each recording left out."""
    back = done.reimported
    brought = f"re-imported {_count(len(back.ids), 'session')} from {_their(len(back.ids))}"
    if back.logs_rendered:
        brought += f" ({_count(len(back.logs_rendered), 'text log')} rendered again)"
    if back.events_rebuilt:
        n = len(back.events_rebuilt)
        brought += f"; rebuilt the events of {_count(n, 'kept session')} from {_their(n)}"
    if back.ids:
        brought += "; recordings hold no contexts: `supervise summarize ID` makes one"
    if done.moved_to is not None:
        kept = ", ".join(
            _count(done.kept.get(t, 0), what) for t, what in (("sessions", "session"), ("events", "event"), ("contexts", "context"))
        )
        lines = [f"supervise: moved the damaged database to {done.moved_to}; kept {kept}; {brought}"]
    elif back.ids or back.unreadable:
        lines = [f"supervise: the database {done.database} is sound; {brought}"]
    else:
        lines = [f"supervise: nothing to repair: the database {done.database} is sound and lists every recording"]
    for unknown, ids in back.unknown.items():
        which = ", ".join(ids[:5]) + (f" and {len(ids) - 5:,} more" if len(ids) > 5 else "")
        what = ", ".join(f + (" (so it reads `interrupted`)" if f == "exit code" else "") for f in unknown)
        lines.append(
            f"supervise: {_count(len(ids), 'session')} re-imported ({which}) without what neither {_their_own(len(ids))} hold: {what}"
        )
    lines += [f"supervise: could not re-import {why} (hint: the folder is left as it is)" for why in back.unreadable]
    return lines


def _their(n: int) -> str:
    return "its recording" if n == 1 else "their recordings"


def _their_own(n: int) -> str:
    return "its events nor its recording" if n == 1 else "their events nor their recordings"


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"
