"""What a check found, and how it is told: ok, warn (an optional part is missing or unverified) or problem
(broken: `doctor` exits 1), with the fix; printed made plain, as versions and errors come from
other programs."""

from __future__ import annotations

from dataclasses import dataclass

from ..plaintext import plain

REINSTALL = "reinstall supervise-agents (e.g. `pipx reinstall supervise-agents`)"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    name: str
    status: str  # ok | warn | problem
    detail: str
    fix: str | None = None


def broken(checks: list[Check]) -> bool:
    return any(c.status == "problem" for c in checks)


def lines(check: Check) -> list[str]:
    """How a check is printed: status, name, detail; then the fix, indented, unless it is ok."""
    out = [f"{check.status:<8} {check.name:<10} {plain(check.detail, newlines=False)}"]
    if check.fix and check.status != "ok":
        out.append(f"{'':<20}fix: {plain(check.fix, newlines=False)}")
    return out


def as_dict(check: Check) -> dict:
    return {
        "name": check.name,
        "status": check.status,
        "detail": plain(check.detail, newlines=False),
        "fix": plain(check.fix, newlines=False) if check.fix else None,
    }


def summary(checks: list[Check]) -> str:
    problems, warnings = (sum(c.status == s for c in checks) for s in ("problem", "warn"))
    if not problems and not warnings:
        return "supervise doctor: all ok"
    return f"supervise doctor: {problems} problem{'s' * (problems != 1)}, {warnings} warning{'s' * (warnings != 1)}"
