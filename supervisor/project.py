"""A folder's project: the top of the git work tree it is in (a worktree's own top, as git
says it), else the folder itself; and the branch checked out there. Read from the files git
keeps, without running git: it is asked before every session starts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

HEAD_MAX = 4096  # bytes of .git/HEAD or a .git file read (both are one line)


@dataclass(frozen=True)
class Project:
    root: str
    branch: str | None  # None: not a git work tree, or a detached HEAD with no name


def of(folder: str | os.PathLike) -> Project:
    """The project `folder` belongs to."""
    start = Path(os.path.realpath(folder))
    for here in (start, *start.parents):
        dot_git = here / ".git"
        try:
            if dot_git.is_dir():
                return Project(str(here), _branch(dot_git))
            if dot_git.is_file():
                return Project(str(here), _branch(_linked(dot_git)))
        except OSError:  # a folder we may not look into: no project above it to find
            break
    return Project(str(start), None)


def root(folder: str | os.PathLike) -> str:
    return of(folder).root


def _read(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(HEAD_MAX).strip()
    except OSError:
        return ""


def _linked(dot_git: Path) -> Path:
    """A worktree's or submodule's `.git` file names its git folder: `gitdir: PATH`."""
    text = _read(dot_git)
    if not text.startswith("gitdir:"):
        return dot_git
    target = Path(text.removeprefix("gitdir:").strip())
    return target if target.is_absolute() else dot_git.parent / target


def _branch(git_dir: Path) -> str | None:
    head = _read(git_dir / "HEAD")
    if head.startswith("ref:"):
        return head.removeprefix("ref:").strip().removeprefix("refs/heads/") or None
    return head[:12] or None  # detached: the commit it is at
