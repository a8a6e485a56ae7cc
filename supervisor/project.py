"""A folder's project, and what it is known by.

Its folder, which is what is shown, is the top of the git work tree it is in (a worktree's own
top), else the folder itself; with the branch checked out there. What it is known by (its
key, kept on each session) survives a rename or a move: for a git repository its root commit
(`git:SHA`), the same for all its worktrees and clones; where there is none to read (no
commit yet, a shallow clone, a history too long to walk in time) its origin
(`remote:host/owner/name`), else its main work tree's path; for a folder outside git, its
path. The folder is read from the files git keeps, without running git, and the key found
again from what was stored before where it can be (gitrepo.py): both are asked before every
session starts."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from . import gitrepo

GIT = "git:"
REMOTE = "remote:"
SHORT = 7  # characters of a root commit shown to tell two projects of one folder apart


@dataclass(frozen=True)
class Project:
    """The project a session ran in: its folder and branch."""

    root: str
    branch: str | None  # None: not a git work tree, or a detached HEAD with no name
    repo: gitrepo.Repo | None = None


def of(folder: str | os.PathLike) -> Project:
    """The project `folder` belongs to (its folder and branch; its key is `identify`'s)."""
    start = Path(os.path.realpath(folder))
    repo = gitrepo.find(start)
    if repo is None:
        return Project(str(start), None)
    return Project(str(repo.top), gitrepo.branch(repo), repo)


def root(folder: str | os.PathLike) -> str:
    return of(folder).root


def identify(
    where: Project,
    here: str | None = None,
    known: Iterable[str] = (),
    walk: Callable[[gitrepo.Repo], str | None] = gitrepo.root_commit,
) -> str:
    """What the project at `where` is known by. `here`: the key its folder's last session
    was given; `known`: every root-commit key recorded. A repository that holds the root
    commit of `here`, or of exactly one known key, is that project, found without walking
    its history (a moved repository's first session finds its own this way); else git is
    asked for it once."""
    repo = where.repo
    if repo is None:
        return where.root
    if not gitrepo.shallow(repo):
        if here and here.startswith(GIT) and gitrepo.held(repo, [here.removeprefix(GIT)]):
            return here
        held = gitrepo.held(repo, [k.removeprefix(GIT) for k in dict.fromkeys(known) if k.startswith(GIT)])
        if len(held) == 1:
            return GIT + held[0]
        if first := walk(repo):
            return GIT + first
    return fallback(where)


def fallback(where: Project) -> str:
    """What the project at `where` is known by without a root commit: its origin, else its
    main work tree's path (for a folder outside git, its path)."""
    if where.repo is None:
        return where.root
    url = gitrepo.origin(where.repo)
    return REMOTE + url if url else str(where.repo.main)


def names(folders: Mapping[str, str]) -> dict[str, str]:
    """How to show each project (key: its folder) in a list: its folder's name, and where
    two share one, as many of the folders above as tell them apart (`work/app`, `old/app`,
    as an editor's tabs do); two of one folder also by their root commit."""
    shown: dict[str, str] = {}
    for key, folder in folders.items():
        parts = Path(folder).parts
        others = [Path(f).parts for k, f in folders.items() if k != key]
        depth = 1
        while depth < len(parts) and any(o[-depth:] == parts[-depth:] for o in others):
            depth += 1
        name = folder if depth >= len(parts) else "/".join(parts[-depth:])
        if any(o == parts for o in others):
            name += f" ({key.removeprefix(GIT)[:SHORT] if key.startswith(GIT) else key})"
        shown[key] = name
    return shown


def scope(folder: str | None, everywhere: bool) -> str | None:
    """The project folder a command looks at: `--project DIR`'s, else the current folder's;
    None with --all. A folder that is gone is kept as given: sessions recorded there know
    their project (their key)."""
    from .errors import SuperviseError

    if everywhere:
        if folder is not None:
            raise SuperviseError("--project and --all cannot go together", "give one of them", exit_code=2)
        return None
    where = folder or os.getcwd()
    if not os.path.isdir(where):
        return os.path.realpath(os.path.expanduser(where))
    return root(where)
