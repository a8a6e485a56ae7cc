"""Starting the recorder process: what it is told of the run, and the process itself, in a
session of its own (terminal signals don't reach it), with the two pipes of channel.py and
the agent's hook socket, listening already."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from .. import paths
from ..channel import Inbox, Outbox, RecorderConfig
from ..errors import SuperviseError


def config_of(opts, plan, db_path: str, start: float, started_wall: float) -> RecorderConfig:
    """What the recorder is told of the run (its command line: nothing secret)."""
    cols, rows = plan.size
    header = {
        "width": cols,
        "height": rows,
        "timestamp": int(started_wall),
        "command": plan.session["command"],
        "title": opts.name,
        "env": {k: plan.env[k] for k in ("TERM", "SHELL") if k in plan.env},
    }
    folder = plan.profile.transcript_dir(plan.env, opts.cwd)
    return RecorderConfig(
        plan.sid,
        db_path,
        plan.session["cast_path"],
        plan.session["log_path"],
        header,
        opts.emulator,
        agent=plan.pattern_set.agent if plan.pattern_set else None,
        pattern_files=[str(Path(p).resolve()) for p in opts.pattern_files],
        start_monotonic=start,
        started_wall=started_wall,
        transcript_dir=str(folder) if folder else None,
        cwd=opts.cwd,
        agent_session_id=opts.agent_session_id,
        inject=plan.inject,
        hook_socket=plan.hook_socket,
        hook_fd=plan.hook_listener.fileno() if plan.hook_listener is not None else None,
        door_file=plan.door_file,
        resume_from=opts.parent_id,
        handoff_from=opts.handoff_from,
    )


CONFIG = "recorder.json"  # in the session's folder: what the recorder is told


def start(recorder: RecorderConfig, env: Mapping[str, str], sdir: Path) -> tuple[Outbox, Inbox, subprocess.Popen]:
    """Start the recorder process (its own session, so terminal signals don't reach it)."""
    frames_r, frames_w = os.pipe()
    back_r, back_w = os.pipe()
    told = sdir / CONFIG  # not on its command line, which any user of the machine can read with `ps`
    try:
        with paths.open_private(told, "w", encoding="utf-8") as fh:
            fh.write(recorder.to_json())
        with paths.open_private(sdir / "recorder.err", "a") as err:
            proc = subprocess.Popen(
                # -P: the user's current directory is not searched first (a folder named
                # `supervisor` there, such as a supervisord checkout, must not replace ours).
                [sys.executable, "-P", "-m", "supervisor.run.recorder", str(told), str(frames_r), str(back_w)],
                pass_fds=(frames_r, back_w, *([] if recorder.hook_fd is None else [recorder.hook_fd])),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
    except OSError as exc:
        for fd in (frames_r, frames_w, back_r, back_w):
            os.close(fd)
        raise SuperviseError(
            f"cannot start the recorder: {exc.strerror or exc}; the agent was stopped",
            f"check free space in {sdir.parent} and free memory, then run it again",
        ) from exc
    os.close(frames_r)
    os.close(back_w)
    return Outbox(frames_w), Inbox(back_r), proc
