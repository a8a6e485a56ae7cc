"""Opening the database where it cannot be written (a read-only data directory, a copy on a
read-only disk): the commands that only read still work, as long as its schema is current."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..errors import SuperviseError
from .migrations import pending

_READONLY, _CANTOPEN = 8, 14  # SQLite's primary result codes


def cannot_write(path: Path) -> bool:
    """The database exists and this process may not write it or its folder (its WAL lives there)."""
    return path.exists() and not (os.access(path.parent, os.W_OK) and os.access(path, os.W_OK))


def connect(path: Path, timeout: float, **kwargs) -> sqlite3.Connection:
    """A read-only connection, refused in one line if the schema needs a migration first."""
    uri = "file:" + quote(str(path.resolve()))
    try:
        conn = schema_read(sqlite3.connect(uri + "?mode=ro", uri=True, timeout=timeout, **kwargs))
    except sqlite3.OperationalError as exc:
        # In WAL mode a reader needs the -shm file beside the database, and the folder does
        # not let us make it. With no -wal file, nothing is pending in one: the file alone is
        # the database, and `immutable` reads it without the -shm (nobody can write it here).
        wal = path.with_name(path.name + "-wal")
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in (_READONLY, _CANTOPEN) or (wal.exists() and wal.stat().st_size):
            raise SuperviseError(
                f"cannot read database {path}: {exc}", f"make {path.parent} writable (its write-ahead log needs it), then run again"
            ) from exc
        conn = schema_read(sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, timeout=timeout, **kwargs))
    if pending(conn):
        conn.close()
        raise SuperviseError(
            f"database {path} is read-only, and this supervise must upgrade its schema to read it",
            f"make {path.parent} and the database writable and run any supervise command once, or read it with the supervise that wrote it",
        )
    return conn


def schema_read(conn: sqlite3.Connection) -> sqlite3.Connection:
    """The connection, once it has read the schema (where a missing -shm shows)."""
    try:
        conn.execute("select count(*) from sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn
