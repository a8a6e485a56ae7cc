"""An agent CLI's release, as its `CMD --version` says it (for `doctor`, and for the
telemetry of a session)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Mapping

from . import profiles
from .plaintext import plain

# `CMD --version` must not look for updates or phone home (and each profile adds its own).
QUIET_ENV = {"NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1"}

VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)(?!\w)")


def parse_version(output: str) -> str | None:
    """The version in what `CMD --version` printed: `2.1.330 (Some Agent)`, `some-cli
    0.169.0`, `0.61.0`."""
    m = VERSION.search(plain(output))
    return m.group(1) if m else None


def version_output(path: str, profile: profiles.Profile, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(what `PATH --version` printed, None), or (None, what went wrong)."""
    timeout = profile.version_timeout
    try:
        proc = subprocess.Popen(
            [path, "--version"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**env, **QUIET_ENV, **profile.quiet_env},
            start_new_session=True,
        )
    except OSError as exc:
        return None, f"cannot run: {exc.strerror or exc}"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # with whatever it started (node, a Python)
        proc.communicate()
        return None, f"did not answer in {timeout:g} s"
    except BaseException:  # Ctrl-C: its own session is out of the terminal's reach, so we end it
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    text = (out or err).decode(errors="replace")
    if proc.returncode != 0:
        reason = (plain(err.decode(errors="replace")).strip().splitlines() or [""])[-1][:120]
        return None, f"failed (exit {proc.returncode}){': ' + reason if reason else ''}"
    return text, None


def release(path: str, profile: profiles.Profile, env: Mapping[str, str]) -> str | None:
    """The release the agent at `path` says it is, or None (it said none, or failed)."""
    output, _ = version_output(path, profile, env)
    return parse_version(output) if output else None
