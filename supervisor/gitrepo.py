"""What project.py reads of a git repository, from the files git keeps: where its folders
are (a worktree's own, and the one its repository's objects and config are in), the branch
checked out, its origin, whether it holds an object. Its root commit is the one thing that
runs git (finding it walks the history), once, with a timeout. Nothing here writes into the
repository."""

from __future__ import annotations

import mmap
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

HEAD_MAX = 4096  # bytes of .git/HEAD, a .git file or a commondir file read (each is one line)
CONFIG_MAX = 1 << 20  # bytes of .git/config read
WALK_TIMEOUT = 3.0  # seconds the root commit may take to find (300,000 commits: 0.7 s with a commit-graph, 2.5 s without)
HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
IDX_MAGIC = b"\xfftOc"  # a pack index of version 2 (git's since 1.5.2)


@dataclass(frozen=True)
class Repo:
    """A git work tree's folders."""

    top: Path  # the work tree's top (a worktree's own)
    git_dir: Path  # its git folder (a worktree's own: its HEAD)
    common: Path  # the repository's: objects, refs, config (a worktree's main repository's)

    @property
    def main(self) -> Path:
        """The main work tree of the repository (a bare one's folder): one for all its worktrees."""
        if self.git_dir == self.common:
            return self.top
        return self.common.parent if self.common.name == ".git" else self.common


def find(start: Path) -> Repo | None:
    """The repository whose work tree `start` (a real path) is in; None if there is none, or
    a folder on the way up cannot be looked into (nothing above it to find)."""
    for here in (start, *start.parents):
        dot_git = here / ".git"
        try:
            if dot_git.is_dir():
                git_dir = dot_git
            elif dot_git.is_file():
                git_dir = _linked(dot_git)
            else:
                continue
        except OSError:
            return None
        return Repo(here, git_dir, _common(git_dir))
    return None


def _read(path: Path, most: int = HEAD_MAX) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(most).strip()
    except OSError:
        return ""


def _linked(dot_git: Path) -> Path:
    """A worktree's or submodule's `.git` file names its git folder: `gitdir: PATH`."""
    text = _read(dot_git)
    if not text.startswith("gitdir:"):
        return dot_git
    target = Path(text.removeprefix("gitdir:").strip())
    return Path(os.path.realpath(target if target.is_absolute() else dot_git.parent / target))


def _common(git_dir: Path) -> Path:
    """A worktree's git folder names its repository's in `commondir` (relative to it, as a rule)."""
    named = _read(git_dir / "commondir")
    if not named:
        return git_dir
    return Path(os.path.realpath(git_dir / named))


def branch(repo: Repo) -> str | None:
    """The branch checked out; a detached HEAD's commit (its first 12); None if none can be read."""
    head = _read(repo.git_dir / "HEAD")
    if head.startswith("ref:"):
        return head.removeprefix("ref:").strip().removeprefix("refs/heads/") or None
    return head[:12] or None


def shallow(repo: Repo) -> bool:
    """A shallow clone: its oldest commits are where the clone stopped, not its root."""
    return (repo.common / "shallow").exists()


def origin(repo: Repo) -> str | None:
    """The origin remote's URL, without a user or password, a trailing `.git` or `/`: the
    same for an https and an ssh clone of one repository (`host/owner/name`)."""
    section, url = "", None
    for line in _read(repo.common / "config", CONFIG_MAX).splitlines():
        line = line.strip()
        if line.startswith("["):
            section = re.sub(r"\s+", " ", line.split("]", 1)[0].lstrip("[").strip()).lower()
            continue
        key, eq, value = line.partition("=")
        if eq and section == 'remote "origin"' and key.strip().lower() == "url":
            url = re.split(r"\s+[#;]", value.strip(), maxsplit=1)[0].strip().strip('"')
    return _plain_url(url, repo.top) if url else None


def _plain_url(url: str, top: Path) -> str:
    if m := re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/]*@)?([^/]+)(/.*)?", url):
        host, path = m.group(1), m.group(2) or ""
    elif m := re.fullmatch(r"(?:[^@/:]+@)?([^/:]{2,}):(?!/)(.*)", url):  # scp-like: git@host:owner/name
        host, path = m.group(1), "/" + m.group(2)
    else:  # a folder on this machine
        return os.path.realpath(url if os.path.isabs(url) else top / url)
    return host.lower() + path.rstrip("/").removesuffix(".git").rstrip("/")


def held(repo: Repo, shas: list[str]) -> list[str]:
    """Those of `shas` the repository has (loose, in a pack, or in an alternate store), in order."""
    wanted = [sha for sha in shas if HEX.fullmatch(sha)]
    if not wanted:
        return []
    stores = [repo.common / "objects"]
    for line in _read(repo.common / "objects" / "info" / "alternates", CONFIG_MAX).splitlines():
        if line.strip() and not line.startswith("#"):
            stores.append(stores[0] / line.strip())
    found = {sha for sha in wanted if any((objects / sha[:2] / sha[2:]).exists() for objects in stores)}
    for objects in stores:
        try:
            indexes = list((objects / "pack").glob("*.idx"))
        except OSError:
            continue
        for idx in indexes:
            found |= _indexed(idx, [sha for sha in wanted if sha not in found])
    return [sha for sha in wanted if sha in found]


def _indexed(idx: Path, shas: list[str]) -> set[str]:
    """Those of `shas` in this pack index. Its fan-out table gives the range of names that
    start with a name's first byte, which are sorted: a binary search of that range."""
    found: set[str] = set()
    try:
        with open(idx, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if m[:4] != IDX_MAGIC or int.from_bytes(m[4:8], "big") != 2:
                return found
            base = 8 + 256 * 4
            for sha in shas:
                raw, width = bytes.fromhex(sha), len(sha) // 2
                fan = 8 + 4 * raw[0]
                lo = int.from_bytes(m[fan - 4 : fan], "big") if raw[0] else 0
                hi = int.from_bytes(m[fan : fan + 4], "big")
                while lo < hi:
                    mid = (lo + hi) // 2
                    name = m[base + mid * width : base + (mid + 1) * width]
                    if name == raw:
                        found.add(sha)
                        break
                    lo, hi = (mid + 1, hi) if name < raw else (lo, mid)
    except (OSError, ValueError):  # gone, unreadable, empty
        pass
    return found


def root_commit(repo: Repo, timeout: float = WALK_TIMEOUT) -> str | None:
    """The first commit of the history checked out: where HEAD's first-parent line begins
    (a history merged in later does not change it). None with no commit yet, no git, or
    past `timeout`. Run on the repository's git folder, with none of the caller's GIT_*
    variables (which could name another repository)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        done = subprocess.run(
            ["git", "--git-dir", str(repo.git_dir), "rev-list", "--first-parent", "--max-parents=0", "HEAD"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = done.stdout.decode("ascii", errors="replace").split()
    return found[-1] if done.returncode == 0 and found and HEX.fullmatch(found[-1]) else None
