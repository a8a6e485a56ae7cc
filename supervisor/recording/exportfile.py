"""Where `supervise export -o FILE` may write, and writing there whole or not at all.

Never over supervise's own files: the database (and its -wal, -shm and -journal files), a
.json beside it, anything in the sessions folder. They are told apart by the file itself
(its device and inode, after symlinks), not by how the path is spelled, so a symlink or a
hard link to one is refused too. An existing file is replaced only when asked (`force`),
keeping its mode; the export goes to a temporary file beside it, renamed over it once
complete, so a failing export leaves no half file and the old one as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..errors import SuperviseError
from ..plaintext import plain

DB_FILES = ("", "-wal", "-shm", "-journal")  # suffixes of the database's own files
NAMED = {"session.cast": "recording", "session.log": "text log"}  # a session's files, as a refusal names them


@dataclass(frozen=True)
class Target:
    """Where an export is written, and what it replaces."""

    path: Path  # where the file goes (symlinks followed)
    replaced: os.stat_result | None = None  # the file it replaces (--force)
    straight: bool = False  # a device or a pipe (/dev/null, a FIFO): written into as it is


def target(output: Path, force: bool, env: Mapping[str, str] | None = None) -> Target:
    """Where an export to `output` goes, or a SuperviseError saying why not there."""
    shown = _shown(output)
    try:
        st: os.stat_result | None = os.stat(output)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise SuperviseError(f"cannot write {shown}: {exc.strerror or exc}", "give -o a file in a folder you can write") from exc
    real = Path(os.path.realpath(output))
    data = Path(os.path.realpath(paths.data_dir(env)))
    refusal = own_file(real, st, data)
    if refusal:
        raise SuperviseError(f"refusing to write {refusal}", f"give -o a file outside {_shown(data)}")
    if st is None:
        if not real.parent.is_dir():
            raise SuperviseError(
                f"cannot write {shown}: there is no folder {_shown(real.parent)}",
                "create it first, or give -o a file in a folder that exists",
            )
        return Target(real)
    if stat.S_ISDIR(st.st_mode):
        raise SuperviseError(f"{shown} is a folder", "give -o a file name")
    if not stat.S_ISREG(st.st_mode):
        return Target(output, straight=True)
    if not force:
        raise SuperviseError(f"{shown} exists", "add --force to replace it")
    return Target(real, replaced=st)


def own_file(real: Path, st: os.stat_result | None, data: Path) -> str | None:
    """What `real` (a path with symlinks resolved; `st`, its stat if it exists) is of
    supervise's own files in the data directory `data`, said for a refusal; None if none."""
    data_id = _identity(data)
    if data_id is None:
        return None  # no data directory: nothing of ours to overwrite
    sessions = data / "sessions"
    sessions_id = _identity(sessions)
    # the folders it would go in, by what they are (a bind mount, a folder's other spelling)
    inner = real
    for folder in real.parents:
        folder_id = _identity(folder)
        if folder_id is not None and folder_id == sessions_id:
            return _session_file(sessions / real.relative_to(folder), sessions, st)
        if folder_id == data_id and inner == real and _is_db_file(real.name):
            return f"over supervise's own database {_shown(data / real.name)}"
        if folder_id == data_id and inner == real and real.name.endswith(".json"):
            return f"over supervise's own file {_shown(data / real.name)}"
        inner = folder
    if st is None or not stat.S_ISREG(st.st_mode):
        return None
    # the same file under another name: a hard link (or a bind mount of the data directory)
    for suffix in DB_FILES:
        if _identity(data / (paths.DB_NAME + suffix)) == (st.st_dev, st.st_ino):
            return f"over supervise's own database {_shown(data / (paths.DB_NAME + suffix))} (linked as {_shown(real)})"
    if st.st_nlink > 1 and sessions_id is not None:
        for walked, _, names in os.walk(sessions):
            for name in names:
                if _identity(Path(walked) / name) == (st.st_dev, st.st_ino):
                    return _session_file(Path(walked) / name, sessions, st) + f" (linked as {_shown(real)})"
    return None


def _session_file(path: Path, sessions: Path, st: os.stat_result | None) -> str:
    parts = path.relative_to(sessions).parts
    if st is None or len(parts) < 2:
        return f"into supervise's sessions folder {_shown(sessions)}"
    return f"over session {_shown(parts[0])}'s {NAMED.get(path.name, 'file')} {_shown(path)}"


def _is_db_file(name: str) -> bool:
    return any(name == paths.DB_NAME + suffix for suffix in DB_FILES)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def write(where: Target, chunks: Iterable[str]) -> None:
    """The export written to `where`: whole, or not at all (the file it replaces as it was)."""
    shown = _shown(where.path)
    if where.straight:
        try:
            with open(where.path, "w", encoding="utf-8") as fh:
                _copy(chunks, fh, shown)
        except OSError as exc:
            raise SuperviseError(f"cannot write {shown}: {exc.strerror or exc}") from exc
        return
    kept = "nothing was written" if where.replaced is None else f"{shown} is as it was"
    try:
        fd, part = tempfile.mkstemp(prefix=f".{where.path.name}.", suffix=".part", dir=where.path.parent)
    except OSError as exc:
        raise SuperviseError(f"cannot write {shown}: {exc.strerror or exc}", kept) from exc
    try:
        if where.replaced is not None:  # the file it replaces keeps its mode (and owner, where we may)
            os.fchmod(fd, stat.S_IMODE(where.replaced.st_mode))
            with contextlib.suppress(OSError):
                os.fchown(fd, where.replaced.st_uid, where.replaced.st_gid)
        else:
            os.fchmod(fd, 0o600)  # (mkstemp's already; said here for the reader)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            _copy(chunks, fh, shown, kept)
        os.replace(part, where.path)
    except OSError as exc:
        _remove(part)
        raise SuperviseError(f"cannot write {shown}: {exc.strerror or exc}", kept) from exc
    except BaseException:  # an export that failed mid-way (a damaged source, Ctrl-C)
        _remove(part)
        raise


def _copy(chunks: Iterable[str], fh, shown: str, kept: str | None = None) -> None:
    """Each chunk written; reading them may fail on its own (said by the exporter)."""
    for chunk in chunks:
        try:
            fh.write(chunk)
        except OSError as exc:
            raise SuperviseError(f"cannot write {shown}: {exc.strerror or exc}", kept) from exc


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _shown(path: Path | str) -> str:
    return plain(str(path), newlines=False)
