"""`supervise hooks install AGENT` / `uninstall AGENT`: the door of an agent that reads hooks
from its own configuration only (its profile's `door_install`), kept in supervise's data
folder (`doors/AGENT`) and added to the agent's configuration by the agent's own command,
which keeps the user's files as they are; taken out by its own command too."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import agentcmd, paths, profiles
from ..errors import SuperviseError
from ..plaintext import quoted


@dataclass(frozen=True)
class Door:
    """An agent's door: kept in supervise's data folder, added by the agent's own command."""

    agent: str
    folder: Path
    install: profiles.DoorInstall


def door(agent: str, env: Mapping[str, str] | None = None) -> Door:
    """The agent's door to install, or why there is none to install."""
    if agent not in profiles.shipped():
        raise SuperviseError(f"no agent '{quoted(agent)}'", f"use one of: {', '.join(profiles.clis())}", exit_code=2)
    profile = profiles.get(agent)
    folder = paths.data_dir(env) / "doors" / agent
    found = profile.door_install(folder)
    if found is None:
        how = (
            f"it gets its door for each run under supervise: {profile.door}"
            if profile.door
            else "it has no hooks of its own: its context is typed"
        )
        raise SuperviseError(f"{agent} has nothing to install: {how}", "see docs/giving-back.md", exit_code=2)
    return Door(agent, folder, found)


def install(d: Door) -> str | None:
    """Write the door's files and have the agent add it; None when it did, or what it said
    when it has one of that name already (ours, written anew in place, or the user's own)."""
    paths.ensure_private_dir(d.folder)
    for path, text in d.install.files.items():
        paths.ensure_private_dir(path.parent)
        paths.write_private(path, text)
    return agentcmd.run(d.install.install, "add supervise's door", d.install.exists, d.install.env, cwd=str(d.folder))


def uninstall(d: Door) -> str | None:
    """Have the agent take the door out, then remove its files; None when it did, or what it
    said when it had none."""
    cwd = str(d.folder) if d.folder.is_dir() else None
    said = agentcmd.run(d.install.uninstall, "take supervise's door out", d.install.absent, d.install.env, cwd=cwd)
    shutil.rmtree(d.folder, ignore_errors=True)
    return said
