"""The SQLite store: sessions and their events.

The schema is the ordered, named migrations in `migrations.py`, applied whenever the
database opens, so a database written by an older supervise is upgraded in place. WAL mode
lets Datasette read while a supervisor writes.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils

from . import paths
from .migrations import apply as _apply_migrations
from .errors import SuperviseError

# Lower-case letters and digits without the look-alikes 0/o, 1/l/i: easy to read aloud and type.
ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ID_LENGTH = 6

ACTIVE, COMPLETED, FAILED, INTERRUPTED = "active", "completed", "failed", "interrupted"

def utcnow() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def new_id() -> str:
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


@dataclass(frozen=True)
class Event:
    kind: str
    detail: Mapping[str, Any]
    offset: float
    time: str


class _Connection(sqlite3.Connection):
    """Every write transaction takes the write lock before it reads. A deferred one (plain
    `BEGIN`, as sqlite-utils' inserts open theirs) reads the schema first, and if another
    process commits in between, SQLite fails it at once with "database is locked", no busy
    wait: 9 of 10 processes lost their first insert when started together, and 8 of 10 busy
    sessions lost events. `isolation_level` covers the sqlite3 module's own BEGINs."""

    def execute(self, sql, *args):
        if sql.strip().rstrip(";").upper() == "BEGIN":
            sql = "BEGIN IMMEDIATE"
        return super().execute(sql, *args)


class Store:
    """One connection to the database. Use one Store per thread (sqlite3 connections are not shared)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        paths.ensure_private_dir(self.path.parent)
        existed = self.path.exists()
        try:
            conn = sqlite3.connect(self.path, timeout=10, check_same_thread=False, isolation_level="IMMEDIATE",
                                   factory=_Connection)
            self.db = sqlite_utils.Database(conn)
            if not existed:
                os.chmod(self.path, 0o600)
            self.db.enable_wal()
            _apply_migrations(self.db)
        except sqlite3.DatabaseError as exc:
            raise SuperviseError(
                f"database {self.path} is unreadable: {exc}",
                f"move it aside (mv '{self.path}' '{self.path}.corrupt') and run again",
            ) from exc
        except sqlite3.OperationalError as exc:  # pragma: no cover - subclass of DatabaseError
            raise SuperviseError(f"cannot open database {self.path}: {exc}") from exc

    @classmethod
    def open_default(cls, env: Mapping[str, str] | None = None) -> "Store":
        return cls(paths.db_path(env))

    def close(self) -> None:
        self.db.conn.close()

    # -- sessions ---------------------------------------------------------------------------

    def create_session(self, **fields: Any) -> dict:
        for _ in range(20):
            session_id = new_id()
            if not self.db["sessions"].count_where("id = ?", [session_id]):
                break
        record = {"id": session_id, "started": utcnow(), "status": ACTIVE, **fields}
        if isinstance(record.get("argv"), (list, tuple)):
            record["argv"] = json.dumps(list(record["argv"]))
        if isinstance(record.get("options"), dict):
            record["options"] = json.dumps(record["options"])
        self.db["sessions"].insert(record)
        return self.get_session(record["id"])

    def update_session(self, session_id: str, **fields: Any) -> None:
        self.db["sessions"].update(session_id, fields)

    def finish_session(self, session_id: str, status: str, exit_code: int | None) -> None:
        self.update_session(session_id, status=status, exit_code=exit_code, ended=utcnow())

    def get_session(self, session_id: str) -> dict:
        row = self.db["sessions"].get(session_id)
        return _decode_session(row)

    def sessions(self) -> list[dict]:
        self.mark_dead_sessions()
        rows = self.db.query("select * from sessions order by started desc, rowid desc")
        return [_decode_session(r) for r in rows]

    def resolve(self, prefix: str) -> dict:
        """Find a session by any unique prefix of its id."""
        prefix = prefix.strip().lower()
        if not prefix:
            raise SuperviseError("empty session id", "run `supervise sessions` to list ids")
        rows = list(
            self.db.query(
                "select id from sessions where id like ? escape '\\' order by started desc",
                [prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"],
            )
        )
        if not rows:
            raise SuperviseError(f"no session matches '{prefix}'", "run `supervise sessions` to list ids")
        if len(rows) > 1 and not any(r["id"] == prefix for r in rows):
            ids = ", ".join(r["id"] for r in rows[:5])
            raise SuperviseError(
                f"'{prefix}' is ambiguous: it matches {len(rows)} sessions ({ids})",
                "type more characters of the id",
            )
        self.mark_dead_sessions()
        return self.get_session(rows[0]["id"] if len(rows) == 1 else prefix)

    def latest(self) -> dict:
        self.mark_dead_sessions()
        rows = list(self.db.query("select id from sessions order by started desc, rowid desc limit 1"))
        if not rows:
            raise SuperviseError("there are no sessions yet", "start one with `supervise -- CMD`")
        return self.get_session(rows[0]["id"])

    def children(self, session_id: str) -> list[dict]:
        return [_decode_session(r) for r in self.db["sessions"].rows_where("parent_id = ?", [session_id], order_by="started")]

    def mark_dead_sessions(self) -> None:
        """A session whose supervisor process is gone (killed, crashed) is `interrupted`, not `active`."""
        for row in list(self.db["sessions"].rows_where("status = ?", [ACTIVE])):
            if not supervisor_alive(row["pid"]):
                self.db["sessions"].update(row["id"], {"status": INTERRUPTED})

    def set_state(self, session_id: str, state: str, since: str, detail: Mapping[str, Any]) -> None:
        self.update_session(session_id, state=state, state_since=since, state_detail=json.dumps(dict(detail), ensure_ascii=False))

    def running(self) -> list[dict]:
        """The sessions whose supervisor is alive, newest first."""
        self.mark_dead_sessions()
        rows = self.db.query("select * from sessions where status = ? order by started desc, rowid desc", [ACTIVE])
        return [_decode_session(r) for r in rows]

    # -- events -----------------------------------------------------------------------------

    def add_event(self, session_id: str, event: Event) -> int:
        table = self.db["events"]
        table.insert(_event_row(session_id, event))
        return table.last_pk

    def update_event_detail(self, event_id: int, detail: Mapping[str, Any]) -> None:
        self.db["events"].update(event_id, {"detail": json.dumps(dict(detail), ensure_ascii=False)})

    # -- contexts -------------------------------------------------------------------------------

    def add_context(self, session_id: str, render: Callable[[int], str], **fields: Any) -> dict:
        """Store a context as the session's next round (1, 2, ...); `render(round)` gives its
        prompt. Round and prompt are decided in one write transaction, so two processes
        making a round of one session at once (a `resume` during the session-end context)
        each get their own round and each prompt names its own."""
        with self.db.conn:
            self.db.execute("begin immediate")
            row = self.db.execute("select coalesce(max(round), 0) + 1 from contexts where session_id = ?", [session_id]).fetchone()
            record = {"session_id": session_id, "round": row[0], "created": utcnow(), **fields, "prompt": render(row[0])}
            if not isinstance(record.get("context"), str):
                record["context"] = json.dumps(record["context"], ensure_ascii=False)
            self.db["contexts"].insert(record)
        return self.latest_context(session_id)

    def latest_context(self, session_id: str) -> dict | None:
        rows = list(self.db.query("select * from contexts where session_id = ? order by round desc limit 1", [session_id]))
        return _decode_context(rows[0]) if rows else None

    def contexts(self, session_id: str) -> list[dict]:
        return [_decode_context(r) for r in self.db.query("select * from contexts where session_id = ? order by round", [session_id])]

    def prompts(self, session_id: str, last: int) -> list[tuple[str, dict]]:
        """(prompt, context) of the session's latest `last` rounds, oldest first."""
        rows = self.db.execute("select prompt, context from contexts where session_id = ? order by round desc limit ?", [session_id, last]).fetchall()
        return [(prompt, json.loads(context) if context else {}) for prompt, context in reversed(rows)]

    def events(self, session_id: str) -> list[dict]:
        out = []
        for row in self.db["events"].rows_where("session_id = ?", [session_id], order_by="offset, id"):
            row = dict(row)
            row["detail"] = json.loads(row["detail"]) if row["detail"] else {}
            out.append(row)
        return out


def _event_row(session_id: str, e: Event) -> dict:
    return {
        "session_id": session_id,
        "time": e.time,
        "offset": round(e.offset, 6),
        "kind": e.kind,
        "detail": json.dumps(dict(e.detail), ensure_ascii=False),
    }


def _decode_context(row: Mapping[str, Any]) -> dict:
    out = dict(row)
    out["context"] = json.loads(out["context"]) if out.get("context") else {}
    return out


def _decode_session(row: Mapping[str, Any]) -> dict:
    out = dict(row)
    try:
        out["argv"] = json.loads(out["argv"]) if out.get("argv") else []
    except ValueError:
        out["argv"] = []
    for key in ("options", "state_detail"):
        try:
            out[key] = json.loads(out[key]) if out.get(key) else {}
        except ValueError:
            out[key] = {}
    return out


def supervisor_alive(pid: int | None) -> bool:
    """Is `pid` a live supervise process? A reused pid that runs something else counts as dead."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc (macOS): trust kill(0)
    # A zombie has an empty cmdline: dead for our purposes.
    return b"supervis" in cmdline
