"""Folders watched for changes, told to a callback on a thread of the watch's own: Linux's
inotify through ctypes (a general file-watching library costs every recorder a few MB for
the two folders it follows), or a look once a second where inotify is not to be had (another
system, or the user's inotify instances used up by other programs).

Each change is (path, is_dir, kind), kind one of "created", "modified", "moved" (the new
name) or "deleted"; a recursive watch follows folders made inside it, and tells the files
already in one when it is told (made before its watch began; a file may be told twice).
When the kernel's queue overflowed, each watched folder is told as "created" (is_dir):
whoever follows it looks again."""

from __future__ import annotations

import os
import select
import struct
import threading
from collections.abc import Callable
from pathlib import Path

Changed = Callable[[str, bool, str], None]

IN_MODIFY = 0x2
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
# Not opens, closes, reads or attributes: a follower's own read of a file would be told to it
# again (an atime touched is an attribute), one change per read, for as long as it runs.
MASK = IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
HEADER = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL-padded
POLL_EVERY = 1.0


def _kind(mask: int) -> str | None:
    if mask & IN_CREATE:
        return "created"
    if mask & IN_MOVED_TO:
        return "moved"
    if mask & IN_MODIFY:
        return "modified"
    if mask & (IN_DELETE | IN_MOVED_FROM):
        return "deleted"
    return None


class Watch:
    """Folders to watch (`add`, before `start`), and the thread that tells their changes."""

    def __init__(self, changed: Changed, name: str):
        self.changed, self.name = changed, name
        self.roots: list[tuple[Path, bool]] = []
        self._stop = threading.Event()
        self._wake: tuple[int, int] | None = None  # a pipe that wakes the inotify thread to stop
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, folder: Path, recursive: bool = False) -> None:
        self.roots.append((Path(folder), recursive))

    def start(self) -> None:
        """Watching from now on: the folders are watched before this returns."""
        kernel = _Inotify.open()
        if kernel is not None and all(kernel.watch(str(root), recursive) for root, recursive in self.roots):
            self._wake = os.pipe()
            self._thread = threading.Thread(target=self._inotify, args=(kernel, self._wake[0]), name=self.name, daemon=True)
        else:  # no inotify here, or no more watches to be had
            if kernel is not None:
                kernel.close()
            self._thread = threading.Thread(target=self._poll, args=(self._look(),), name=self.name, daemon=True)
        self._thread.start()

    def stop(self, wait: float = 2.0) -> None:
        """No change told once this returns (unless called from a change, or `wait` ran out)."""
        with self._lock:
            wake, self._wake = self._wake, None
            self._stop.set()
        if wake is not None:  # the read end is the thread's to close
            os.write(wake[1], b"x")
            os.close(wake[1])
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(wait)

    # -- inotify -----------------------------------------------------------------------------

    def _inotify(self, kernel: _Inotify, wake: int) -> None:
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([kernel.fd, wake], [], [])
                if wake in ready:
                    return
                try:
                    data = os.read(kernel.fd, 65536)
                except BlockingIOError:
                    continue
                for path, is_dir, kind, recursive in self._events(data, kernel.folders):
                    if kind == "overflow":
                        for root, _ in self.roots:
                            self.changed(str(root), True, "created")
                        continue
                    already: list[str] = []
                    if is_dir and recursive and kind in ("created", "moved"):
                        kernel.watch(path, True, already)
                    self.changed(path, is_dir, kind)
                    for made in already:  # written before its folder's watch began
                        self.changed(made, False, "created")
        finally:
            kernel.close()
            os.close(wake)

    @staticmethod
    def _events(data: bytes, folders: dict[int, tuple[str, bool]]):
        at = 0
        while at + HEADER.size <= len(data):
            wd, mask, _cookie, size = HEADER.unpack_from(data, at)
            name = data[at + HEADER.size : at + HEADER.size + size].rstrip(b"\0")
            at += HEADER.size + size
            if mask & IN_Q_OVERFLOW:
                yield "", True, "overflow", False
                continue
            if mask & IN_IGNORED:
                folders.pop(wd, None)
                continue
            folder, recursive = folders.get(wd, ("", False))
            kind = _kind(mask)
            if folder and kind and name:
                yield os.path.join(folder, os.fsdecode(name)), bool(mask & IN_ISDIR), kind, recursive

    # -- a look once a second ----------------------------------------------------------------

    def _poll(self, seen: dict) -> None:
        while not self._stop.wait(POLL_EVERY):
            now = self._look()
            for path, (stamp, is_dir) in now.items():
                before = seen.get(path)
                if before is None:
                    self.changed(path, is_dir, "created")
                elif before[0] != stamp and not is_dir:
                    self.changed(path, is_dir, "modified")
            for path, (_, is_dir) in seen.items():
                if path not in now:
                    self.changed(path, is_dir, "deleted")
            seen = now

    def _look(self) -> dict[str, tuple[tuple[int, int, int], bool]]:
        found: dict[str, tuple[tuple[int, int, int], bool]] = {}
        for root, recursive in self.roots:
            todo = [str(root)]
            while todo:
                try:
                    entries = list(os.scandir(todo.pop()))
                except OSError:
                    continue
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    found[entry.path] = ((st.st_mtime_ns, st.st_size, st.st_ino), is_dir)
                    if is_dir and recursive:
                        todo.append(entry.path)
        return found


class _Inotify:
    """An inotify descriptor and the folders it watches (wd -> folder, recursive)."""

    def __init__(self, libc, fd: int):
        self.libc, self.fd = libc, fd
        self.folders: dict[int, tuple[str, bool]] = {}

    @classmethod
    def open(cls) -> _Inotify | None:
        """None where there is none to be had (another system; the user's instances used up)."""
        if os.uname().sysname != "Linux":
            return None
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (AttributeError, OSError):
            return None
        return cls(libc, fd) if fd >= 0 else None

    def watch(self, folder: str, recursive: bool, found: list[str] | None = None) -> bool:
        """`folder` watched (and, if `recursive`, the folders in it); False if it could not be.
        `found`: given the files already in them (made before their watch began)."""
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), MASK)
        if wd < 0:
            return False
        self.folders[wd] = (folder, recursive)
        if recursive or found is not None:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                return True
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if recursive:
                        self.watch(entry.path, True, found)
                elif found is not None:
                    found.append(entry.path)
        return True

    def close(self) -> None:
        os.close(self.fd)
