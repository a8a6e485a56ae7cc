"""What a profile adds to the agent's run, for this run only (the user's own config files
are never written): the hook it asks for its context through, and supervise's MCP server."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .. import paths, profiles
from ..giveback import hookserver
from ..memory import launch
from ..store.database import supervisor_alive

if TYPE_CHECKING:
    from .session import Plan


def add(
    plan: Plan,
    argv: list[str],
    cleanup: contextlib.ExitStack,
    env: Mapping[str, str],
    resumed: bool,
    project: str,
    say: Callable[[str], None],
) -> None:
    # An agent that asks for its context through a hook of its own is given it there: nothing
    # to type, and it cannot land in a dialog.
    if plan.inject == "auto" and plan.profile.hooks(argv):
        paths.sweep_socket_dirs(supervisor_alive)
        socket_dir = paths.socket_dir()
        cleanup.callback(shutil.rmtree, socket_dir, ignore_errors=True)
        socket = str(socket_dir / "hook.sock")
        at_start = resumed or plan.settings.memory.brief
        hooked = plan.profile.with_hook(argv, plan.sdir, socket, at_start=at_start, env=plan.env)
        # no door this run (the context is typed), or a file door: no socket to ask over
        if hooked is not None and hooked.door_file is None:
            try:  # listening before the agent starts (its first hook may beat the recorder's start-up); the recorder's once handed over
                plan.hook_listener = hookserver.listen(socket)
            except OSError as exc:  # its hook finds no one and gives nothing: the context is typed
                say(f"supervise: cannot listen for the agent's hook at {socket} ({exc.strerror or exc}); its context will be typed instead")
            else:
                plan.hook_socket = socket
                cleanup.callback(plan.hook_listener.close)
        _given(plan, hooked)
    if plan.settings.memory.mcp and plan.pattern_set is not None:
        server = launch.server(env, project, plan.sid, plan.settings.memory.mcp_all_projects)  # the run's scope, carried to it
        _given(plan, plan.profile.with_mcp(plan.argv, plan.sdir, server, plan.env))


def _given(plan: Plan, hooked: profiles.Hooked | None) -> None:
    """The profile's command line, environment and files (written private) for the agent."""
    if hooked is None:
        return
    for path, text in hooked.files.items():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with paths.open_private(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    plan.argv = hooked.argv
    plan.env.update(hooked.env)
    if hooked.door_file is not None:
        plan.door_file = str(hooked.door_file)
