"""Where supervise keeps its data. Every path derives from `data_dir()`."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from .errors import SuperviseError

DB_NAME = "supervise.db"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get("SUPERVISE_HOME")
    if override:
        return Path(override).expanduser()
    xdg = env.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg) / "supervise"
    return user_dir("data")


# Where each kind of folder is on Linux with no XDG_* variable set (the XDG base directories)
XDG_DEFAULTS = {"data": ".local/share", "config": ".config"}


def user_dir(kind: str) -> Path:
    """supervise's own `data` or `config` folder where the user set none: on Linux the XDG
    default, as platformdirs answers there; elsewhere platformdirs' (its import is 5 ms of
    every start that Linux does not need)."""
    if sys.platform.startswith("linux"):
        return Path.home() / XDG_DEFAULTS[kind] / "supervise"
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")("supervise", appauthor=False))


def db_path(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / DB_NAME


def session_dir(session_id: str, env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "sessions" / session_id


def stored(path: str | os.PathLike, home: Path) -> str:
    """A file's path as the database in `home` keeps it: relative to `home` when it is inside
    it (so the data folder can be moved or copied whole), else as it is."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    for base, full in ((os.path.abspath(home), os.path.abspath(text)), (os.path.realpath(home), os.path.realpath(text))):
        inner = os.path.relpath(full, base)
        if inner != os.curdir and inner != os.pardir and not inner.startswith(os.pardir + os.sep):
            return inner
    return text


def resolved(value: str | None, home: Path) -> str | None:
    """A path the database in `home` keeps, as a path on this machine: a relative one is
    inside `home`; an absolute one that is gone, but whose session folder part
    (sessions/ID/FILE) is in `home`, is there (the folder was moved while it was kept whole)."""
    if not value:
        return value
    if not os.path.isabs(value):
        return os.path.join(home, value)
    if os.path.lexists(value):
        return value
    parts = Path(value).parts
    if len(parts) >= 4 and parts[-3] == "sessions":
        moved = Path(home, *parts[-3:])
        if os.path.lexists(moved):
            return str(moved)
    return value


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) readable by the user only; fail with a hint if we cannot."""
    try:
        # mkdir's mode does not apply to the parents it creates: make each level ourselves.
        # Another supervise (a `ps` beside a starting session) may make a level between our
        # look and our mkdir: one that exists by then is fine, and is not ours to chmod.
        for level in [*reversed(path.parents), path]:
            if level.exists():
                continue
            try:
                level.mkdir(mode=0o700)
            except FileExistsError:
                continue
            os.chmod(level, 0o700)
        os.chmod(path, os.stat(path).st_mode & 0o700)  # private; one the user made read-only stays so (and is refused below)
        # a probe of our own: two supervisors starting at once must not unlink each other's
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise SuperviseError(
            f"cannot write to data directory {path}: {exc.strerror or exc}",
            "set SUPERVISE_HOME to a writable directory",
        ) from exc
    return path


def open_private(path: Path, mode: str = "a", **kwargs):
    """Open a file we write so that only the user can read it (0600), whatever the umask."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, mode, **kwargs)


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text` at once (a reader sees the old file or the new, never half),
    only the user able to read it."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


SOCKET_DIR_PREFIX = "supervise-"


# A Unix socket's path fits in 104 bytes with its NUL (macOS; Linux: 108); ours ends in
# "/supervise-PID-XXXXXXXX/hook.sock" (up to 37 more).
SOCKET_PATH_MAX = 103
SOCKET_TAIL = 40


def socket_bases() -> list[Path]:
    """Where socket folders go: the temp dir, else (one too deep for a socket path) /tmp."""
    base = Path(tempfile.gettempdir())
    if len(str(base)) + SOCKET_TAIL > SOCKET_PATH_MAX and Path("/tmp").is_dir():
        return [Path("/tmp"), base]
    return [base]


def socket_dir() -> Path:
    """A private (0700) folder for this run's hook socket, in the temp dir (a socket path must
    be short), named for the supervisor's pid so a later run can tell it was left behind."""
    return Path(tempfile.mkdtemp(prefix=f"{SOCKET_DIR_PREFIX}{os.getpid()}-", dir=socket_bases()[0]))


def sweep_socket_dirs(alive: Callable[[int], bool]) -> list[Path]:
    """Remove the socket folders of supervisors that died without cleaning up (kill -9).
    Only the user's own, and only where `alive(pid)` says that supervisor is gone."""
    removed = []
    for folder in (f for base in socket_bases() for f in base.glob(f"{SOCKET_DIR_PREFIX}*-*")):
        m = re.fullmatch(rf"{SOCKET_DIR_PREFIX}(\d+)-\w+", folder.name)
        try:
            if not m or folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
        except OSError:
            continue
        if alive(int(m.group(1))):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed
