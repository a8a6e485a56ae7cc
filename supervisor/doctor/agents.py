"""The agent CLIs: each one's version against the versions its pattern file was verified on."""

from __future__ import annotations

import dataclasses

import re
import shutil
from collections.abc import Mapping

from .. import profiles
from ..detection import patterns
from ..plaintext import plain
from ..releases import parse_version, version_output
from .report import Check

SEEN_VERSION = re.compile(r"\d+(?:\.(?:\d+|x))+")


def _key(version: str) -> tuple[int, ...]:
    m = re.match(r"[\dx.]*", version)
    assert m is not None  # the pattern matches the empty string too
    return tuple(int(p) if p.isdigit() else 0 for p in m.group().strip(".").split("."))


def verified_versions(pattern_set: patterns.PatternSet) -> list[str]:
    """Every version the set's patterns were seen on (`2.1.197, 2.1.330`, `2.1.330 binary`, `1.0.x`), oldest first."""
    found = {v for p in pattern_set.patterns for v in SEEN_VERSION.findall(p.seen_on)}
    return sorted(found, key=_key)


def version_matches(installed: str, seen: str) -> bool:
    """`2.1.330` matches `2.1.330`; `1.0.7` matches `1.0.x`; a pre-release suffix is ignored."""
    m = re.match(r"\d+(?:\.\d+)*", installed)
    assert m is not None  # `installed` is what parse_version read: it starts with a digit
    have = m.group().split(".")
    want = seen.split(".")
    return len(have) == len(want) and all(w in ("x", h) for h, w in zip(have, want))


def agent_verdict(command: str, path: str | None, output: str | None, error: str | None, verified: list[str] | None) -> Check:
    """`output`: what `CMD --version` printed; `error`: why it printed nothing usable."""
    if path is None:
        return Check(command, "warn", "not found on PATH")
    if error is not None:
        return Check(command, "warn", f"{path}: `{command} --version` {error}", f"check that `{command}` runs on its own")
    version = parse_version(output or "")
    if version is None:
        first = (plain(output or "").strip().splitlines() or ["nothing"])[0][:80]
        return Check(command, "warn", f"{path}: no version in `{command} --version` ({first})")
    if not verified:
        return Check(
            command, "warn", f"{version} at {path}: no pattern set says which versions it was verified on", "see `supervise patterns list`"
        )
    seen = ", ".join(verified)
    if any(version_matches(version, v) for v in verified):
        return Check(command, "ok", f"{version} at {path} (patterns verified on {seen})")
    return Check(
        command,
        "warn",
        f"{path}: patterns verified on {seen}; you have {version}",
        "run `supervise patterns check` on a recording of it (sessions/ID/session.cast) to see what is detected, or report it",
    )


def agent(command: str, sets: Mapping[str, patterns.PatternSet], env: Mapping[str, str]) -> Check:
    path = shutil.which(command, path=env.get("PATH"))
    chosen = patterns.select(sets, command)
    verified = verified_versions(chosen) if chosen else None
    if path is None:
        return agent_verdict(command, None, None, None, verified)
    profile = profiles.get(chosen.agent if chosen else command)
    output, error = version_output(path, profile, env)
    check = agent_verdict(command, path, output, error, verified)
    if check.status == "ok" and chosen is not None:  # the door its context goes back through
        check = dataclasses.replace(check, detail=f"{check.detail}; context back: {door(profile, env)}")
    return check


def door(profile: profiles.Profile, env: Mapping[str, str]) -> str:
    here = profile.door_here(env)
    if here:
        return here
    if profile.door:  # one the user installs, not installed
        return f"typed at its prompt (`supervise hooks install {profile.name}` gives it its own door)"
    return "typed at its prompt"
