"""The recorder process's life beside its work: the priority it runs at, and its end once
the supervisor is gone (a grace to finish, then out, whatever its threads are doing)."""

from __future__ import annotations

import os
import select
import sys
import threading
import time


def background_priority(policy: str) -> None:
    """SUPERVISE_RECORDER_PRIORITY: a nice value, or "idle" for SCHED_IDLE. The default is
    normal priority: SCHED_IDLE made detection lag under steady output and did not help
    passthrough of a flood either (docs/benchmarks.md); the recorder's work has to be done
    anyway."""
    try:
        if policy == "idle" and hasattr(os, "SCHED_IDLE"):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        elif policy.lstrip("-").isdigit() and int(policy):
            os.nice(int(policy))
    except OSError:
        pass


def exit_after_supervisor(grace: float) -> None:
    """Once the supervisor is gone (the user has their shell back, or it was killed), this
    process has `grace` seconds to finish the text log and the session-end context; then it
    exits whatever its threads are doing (a stuck model call, a wedged render): no recorder
    lingers for good."""
    ppid = os.getppid()

    def watch() -> None:
        try:  # sleeps until the parent exits: no polling
            fd = os.pidfd_open(ppid)
            select.select([fd], [], [])
        except (AttributeError, OSError):
            while os.getppid() == ppid:
                time.sleep(2.0)
        time.sleep(grace)
        print(
            f"supervise: recorder exited {grace:g} s after the supervisor was gone (unfinished work was dropped)",
            file=sys.stderr,
            flush=True,
        )
        os._exit(3)

    threading.Thread(target=watch, name="supervise-watchdog", daemon=True).start()
