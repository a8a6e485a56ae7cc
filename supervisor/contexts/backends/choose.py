"""Which backend makes a session's context.

`auto` decides with `choose`, a plain function: the API when a key is set; else the
session's own agent CLI when its profile has a headless summary backend and it answers here;
else another such CLI that does (in the profiles' order); else the heuristic. What it decides
over (is there a key, which CLIs answer) is looked at by `resolve`, at the edge: a CLI answers
when its help prints within a few seconds and offers every flag its backend needs (an older
release may not). A backend that says it cannot summarize (`UNABLE`) is one by name only:
`auto` passes it over.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ... import profiles
from ...config import Summary

PROBE_TIMEOUT = 5.0


def backends() -> dict[str, ModuleType]:
    """Every agent CLI's summary backend by name, the ones that cannot summarize (yet)
    included, in the order `auto` tries them."""
    return {p.name: p.summary for p in profiles.summarizers() if p.summary is not None}


def able() -> list[str]:
    """The CLI backends that can summarize, in the order `auto` tries them."""
    return [name for name, backend in backends().items() if unable(name) is None]


def unable(name: str) -> str | None:
    """Why the backend `name` cannot summarize (None: it can)."""
    return getattr(backends()[name], "UNABLE", None)


@dataclass(frozen=True)
class Choice:
    """The backend that makes contexts, and why it was chosen."""

    backend: str  # api | an agent CLI's name | heuristic
    executable: str | None
    why: str


def choose(has_key: bool, agent: str | None, usable: Mapping[str, str], local: str | None = None) -> Choice:
    """`auto`'s choice. `usable`: CLI name -> executable, for the CLIs that answer here (the
    session's own agent's being the one the session ran); `local`: the base URL of a model
    server on this machine, asked without a key."""
    if has_key:
        return Choice("api", None, "an API key is set")
    if local:
        return Choice("api", None, f"a local model server at {local}")
    if agent is not None and agent in usable:
        return Choice(agent, usable[agent], f"no API key; {agent}, the session's own agent CLI, answers")
    for name in able():
        if name in usable:
            return Choice(name, usable[name], f"no API key; {name} answers here")
    return Choice("heuristic", None, f"no API key, and no agent CLI that can summarize ({', '.join(able())}) answers here")


def resolve(cfg: Summary, session: Mapping | None, env: Mapping[str, str]) -> Choice:
    """The backend for this session's summary, as configured (`auto`: chosen now)."""
    agent = (session or {}).get("agent")
    if cfg.backend == "api":
        return Choice("api", None, "summary backend api")
    if cfg.backend in backends():
        exe = executable(cfg.backend, session, env)
        return Choice(cfg.backend, exe, f"summary backend {cfg.backend}" if exe else f"{cfg.backend} not found on PATH")
    if cfg.backend != "auto":
        return Choice("heuristic", None, f"summary backend {cfg.backend}")
    if cfg.uses_api:
        return choose(cfg.has_key, agent, {}, cfg.base_url if cfg.local else None)
    return choose(False, agent, usable(session, env))


def usable(session: Mapping | None, env: Mapping[str, str]) -> dict[str, str]:
    """CLI name -> executable, for each CLI found that answers and can summarize."""
    out = {}
    for name in able():
        exe = executable(name, session, env)
        if exe and probe(name, exe, env) is None:
            out[name] = exe
    return out


def executable(name: str, session: Mapping | None, env: Mapping[str, str]) -> str | None:
    """The CLI's program: the very one the session ran when it is that agent's (a test's or a
    project's own install), else the one on PATH."""
    session = session or {}
    argv = session.get("argv") or []
    if session.get("agent") == name and argv and Path(argv[0]).name == name:
        first = argv[0]
        path = os.path.join(session.get("cwd") or "/", first) if "/" in first else shutil.which(first, path=env.get("PATH"))
        if path and os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return shutil.which(name, path=env.get("PATH"))


_probed: dict[tuple, str | None] = {}


def probe(name: str, exe: str, env: Mapping[str, str]) -> str | None:
    """None if `exe` answers and offers what its backend needs; else what is wrong. Kept for
    as long as the program file is unchanged (the recorder makes many rounds)."""
    backend = backends()[name]
    try:
        st = os.stat(exe)
    except OSError as exc:
        return f"cannot run {exe}: {exc.strerror or exc}"
    key = (exe, st.st_mtime_ns, st.st_size)
    if key not in _probed:
        quiet = profiles.get(name).quiet_env
        _probed[key] = _missing(help_output([exe, *backend.HELP], {**env, **quiet}), getattr(backend, "NEEDS", ()), name) or unable(name)
    return _probed[key]


def _missing(output: tuple[str | None, str | None], needs: tuple[str, ...], name: str) -> str | None:
    text, error = output
    if error:
        return error
    assert text is not None  # help_output gives its text or why not
    lacking = [flag for flag in needs if flag not in text]
    if lacking:
        return f"this {name} release has no {', '.join(lacking)} (headless structured output): upgrade it"
    return None


def help_output(argv: list[str], env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(what `argv` printed, None), or (None, what went wrong); within PROBE_TIMEOUT."""
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**env, "NO_COLOR": "1"},
            start_new_session=True,
        )
    except OSError as exc:
        return None, f"cannot run {argv[0]}: {exc.strerror or exc}"
    try:
        out, _ = proc.communicate(timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        out = None
    try:  # with whatever it started (node, a helper)
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    shown = " ".join([Path(argv[0]).name, *argv[1:]])
    if out is None:
        proc.communicate()
        return None, f"`{shown}` did not answer in {PROBE_TIMEOUT:g} s"
    if proc.returncode != 0:
        return None, f"`{shown}` failed (exit {proc.returncode})"
    return out.decode(errors="replace"), None
