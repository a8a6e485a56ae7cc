"""A damaged database, said one way wherever it is met: when it opens, in a query of any
command, and by `supervise doctor`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import SuperviseError

REPAIR = "supervise doctor --repair"
# SQLite's primary result codes for a damaged file: SQLITE_CORRUPT (and its extended codes), SQLITE_NOTADB.
_DAMAGE_CODES = (11, 26)


def is_damage(exc: BaseException) -> bool:
    """Is `exc` SQLite saying the file is damaged (not busy, locked, read-only or out of space)?"""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _DAMAGE_CODES
    text = str(exc).lower()
    return "locked" not in text and any(w in text for w in ("malformed", "not a database", "disk image", "corrupt"))


def damaged(path: Path) -> SuperviseError:
    """The one line for a damaged database, and its fix."""
    return SuperviseError(
        f"database {path} is damaged: SQLite cannot read all of it",
        f"`{REPAIR}` keeps what is readable, moves the damaged file aside and brings every recording back",
    )
