"""Projects as this database knows them: a folder's project key (project.py), found again
from the keys stored before where it can be; the key of a folder that is gone, from the
sessions recorded there; and the folder each project is shown by (its newest)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from .. import project
from .database import Store

KNOWN_MOST = 500  # root-commit keys a repository not seen at its folder is checked against


def key_of(store: Store, folder: str | os.PathLike) -> str:
    """What the project of `folder` (a folder that exists) is known by."""
    where = project.of(folder)
    here = store.conn.execute(
        "select project_key from sessions where project = ? and project_key is not null order by started desc limit 1", [where.root]
    ).fetchone()
    known = store.conn.execute(
        "select project_key from sessions where project_key >= ? and project_key < ? group by project_key order by max(started) desc limit ?",
        [project.GIT, project.GIT[:-1] + chr(ord(project.GIT[-1]) + 1), KNOWN_MOST],  # the git: keys, a range of the index
    ).fetchall()
    return project.identify(where, here[0] if here else None, [k for (k,) in known])


def carry(store: Store, folder: str | os.PathLike, key: str) -> int:
    """Once a repository has a root commit, its sessions recorded without one (before its
    first commit, a shallow clone, a walk that ran out of time: known by its origin or its
    folder) are its project's too. Returns how many were carried over."""
    where = project.of(folder)
    old = project.fallback(where)
    if not key.startswith(project.GIT) or old == key:
        return 0
    if not store.conn.execute("select 1 from sessions where project_key = ? limit 1", [old]).fetchone():
        return 0  # (nothing to write: no write lock taken)
    with store.conn:
        return store.conn.execute("update sessions set project_key = ? where project_key = ?", [key, old]).rowcount


def key_recorded(store: Store, folder: str) -> str | None:
    """The key of the project sessions were recorded in at `folder` (its top, or a folder
    in it), as it was last stored: for a folder that is gone (moved, renamed)."""
    row = store.conn.execute(
        "select project_key from sessions where (project = ? or cwd = ?) and project_key is not null order by started desc limit 1",
        [folder, folder],
    ).fetchone()
    return row[0] if row else None


def key_for(store: Store, folder: str) -> str | None:
    """The key of `folder`'s project: a folder that exists as it is now; one that is gone as
    sessions recorded there had it (None if none was)."""
    return key_of(store, folder) if os.path.isdir(folder) else key_recorded(store, folder)


def folders(store: Store, keys: Iterable[str | None]) -> dict[str, str]:
    """The folder each project was last recorded in (where it is now, as far as we know)."""
    out = {}
    for key in dict.fromkeys(k for k in keys if k):
        row = store.conn.execute("select project from sessions where project_key = ? order by started desc limit 1", [key]).fetchone()
        out[key] = row[0] if row and row[0] else key
    return out


def shown(store: Store, keys: Iterable[str | None]) -> dict[str, str]:
    """How each project is named in a list (project.names): its newest folder's name, with
    the folders above it where two share one."""
    return project.names(folders(store, keys))
