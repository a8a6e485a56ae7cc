"""Agent profiles: everything supervise knows of one agent CLI, in one place.

A profile is the agent's pattern file (`patterns/NAME.toml`: how it is recognised, what its
screen says, its one-shot flags) and, for what data cannot say, a module here named for it:
how it is resumed, its own door for a context (a hook, a plugin, an extension), where its own transcript
lives and how to read it, and its headless summary command. The generic modules take a
profile (`get`) and name no agent; an agent with no module is a plain terminal program to
them.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .base import DoorInstall, Hooked, McpServer, Profile, Resumed

__all__ = ["DoorInstall", "Hooked", "McpServer", "Profile", "Resumed", "clis", "get", "shipped", "summarizers"]

# The modules here that are no agent's: what every profile is built from.
_NOT_AGENTS = {"base", "headless", "hook", "recordfiles"}


def _module_name(name: str) -> str:
    return name.replace("-", "_")


@cache
def shipped() -> tuple[str, ...]:
    """The agents supervise ships a profile for, by name: their modules' names, not imported
    (a session of a program with no pattern set asks, before it starts)."""
    return tuple(sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__) if m.name not in _NOT_AGENTS))


@cache
def get(name: str | None) -> Profile:
    """The profile of the agent named `name` (a pattern set's name); a plain one for an agent
    supervise has no module for, or for no agent."""
    module_name = _module_name(name or "")
    if not module_name.isidentifier() or module_name in _NOT_AGENTS:
        return Profile(name or "")
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{module_name}":
            raise
        return Profile(name or "")
    return module.PROFILE


def clis() -> list[str]:
    """The agent CLIs supervise ships a profile for that are not its own (those it checks the
    install of), by name: those it summarizes with first, in `auto`'s order, then the rest."""
    return [p.name for p in sorted(map(get, shipped()), key=lambda p: (p.summary_rank, p.name)) if not p.own]


def summarizers() -> list[Profile]:
    """The agents with a headless summary backend, in the order `auto` tries them."""
    return sorted((p for p in map(get, shipped()) if p.summary is not None), key=lambda p: (p.summary_rank, p.name))
