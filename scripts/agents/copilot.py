#!/usr/bin/env python3
"""Record GitHub Copilot CLI (npm @github/copilot) fixtures: tests/fixtures/copilot/VERSION/*.cast.gz.

    python scripts/agents/copilot.py                          # the kit's release, every scenario
    python scripts/agents/copilot.py --version 1.0.102 --out /tmp/try compact-manual

The kit (tests/kits/copilot.py) says how it runs offline: a private HOME, XDG dirs and TMPDIR
under one temp folder (removed after), its "bring your own key" provider pointed at the fake
Messages API (kit.Model, tests/fakeapi.py) on 127.0.0.1 with COPILOT_OFFLINE=true, the project
(an empty git repository) already trusted. The kit's binary is used for its pinned release;
another `--version` is installed into the agent cache. Each scenario runs it under supervise in
a 120x40 PTY with `--inject off` (common.recording), except `chained`: three /compact with a
turn after each, supervise typing its context back after each one. What is typed, and the
fake's answers, are in the fixtures' README.md.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

from common import install_npm, keep_record, main, recording, save_given, wanted  # noqa: E402

from kits import copilot as kit  # noqa: E402  (tests/ is on sys.path via common)

LONG_LINE = (
    "please read this long single line message carefully: it describes a refactoring of the "
    "configuration loader so that every option has one default, one environment variable and "
    "one documented place, and it must wrap on a 120 column screen"
)
PASTE = "pasted line one: alpha\npasted line two: beta\npasted line three: gamma"


# records of its own debugging that quote the whole request (its system prompt, 26 kB, in each)
BULKY = ("system.message", "model.messages_snapshot", "model.model_call_success")


def _cut(value, keep: int = 200):
    if isinstance(value, str):
        return value if len(value) <= keep else value[:keep] + " [trimmed]"
    if isinstance(value, list):
        return [_cut(v, keep) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v, keep) for k, v in value.items()}
    return value


def trim_record(folder: Path) -> None:
    """Its record as kept, each long text of its bulky records cut to its start."""
    for path in folder.rglob("*.jsonl"):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        records = [{**r, "data": _cut(r.get("data"))} if r.get("type") in BULKY else r for r in records]
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def executable(version: str) -> Path:
    if version == kit.VERSION and kit.binary().exists():
        return kit.binary()
    return install_npm(kit.PACKAGE, version, kit.BINARY)


def compactions(screen) -> int:
    return len(re.findall(kit.COMPACTED, kit.view(screen)))


def idle_startup(screen, api) -> None:
    kit.hold(screen, 8.0)
    kit.quit(screen)


def compact_manual(screen, api) -> None:
    screen.type(kit.COMPACT)  # nothing to compact yet
    kit.hold(screen, 4.0)
    kit.idle(screen)
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    kit.send(screen, "turn 2 what next", r"Reply to: turn 2")
    screen.type(kit.COMPACT)
    kit.wait(screen, kit.COMPACTED, 30)
    kit.idle(screen)
    kit.send(screen, "turn 3 after compact", r"Reply to: turn 3")
    kit.quit(screen)


def compact_auto(screen, api) -> None:
    """`big N` reports N input tokens; past its threshold (80% of the prompt limit, 136,000 for
    this model) it compacts in the background while the next turn runs."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    kit.send(screen, "big 100000 tokens reported for this turn", r"Reply to: big 100000")
    kit.send(screen, "big 150000 tokens reported for this turn", r"Reply to: big 150000")
    screen.type("turn 4 after the big one")
    kit.wait(screen, kit.COMPACTED, 60)
    kit.idle(screen)
    kit.send(screen, "turn 5 after auto compact", r"Reply to: turn 5")
    kit.quit(screen)


def overflow(screen, api) -> None:
    """HTTP 400 "prompt is too long": it compacts and sends the turn again."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    screen.type("overflow please (the fake answers 400 prompt is too long)")
    kit.wait(screen, r"exceeded the model's context limit", 30)
    kit.wait(screen, kit.COMPACTED, 60)
    kit.idle(screen)
    kit.hold(screen, 3.0)
    kit.send(screen, "turn 3 after overflow", r"Reply to: turn 3")
    kit.quit(screen)


def limit(screen, api) -> None:
    """Every `limit` turn is answered 429 rate_limit_error: it retries five times, then gives up."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    screen.type("limit turn 2 (the fake answers 429 rate limit)")
    kit.wait(screen, r"Failed to get response from the AI model", 120)
    kit.idle(screen)
    kit.hold(screen, 3.0)
    kit.quit(screen)


def long_line(screen, api) -> None:
    kit.send(screen, LONG_LINE, r"Reply to: please read")
    kit.send(screen, "short one after", r"Reply to: short one after")
    kit.quit(screen)


def multiline(screen, api) -> None:
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    screen.child.send("\x1b[200~" + PASTE + "\x1b[201~")  # a bracketed paste, as a terminal sends one
    kit.hold(screen, 1.0)
    screen.child.send("\r")
    kit.wait(screen, r"Reply to: pasted line three", 60)
    kit.idle(screen)
    kit.send(screen, "short one after", r"Reply to: short one after")
    kit.quit(screen)


def permission(screen, api) -> None:
    """Its shell tool asks first ("Do you want to run this command?"); Enter picks "1. Yes"."""
    kit.send(screen, "turn 1 hello", r"Reply to: turn 1")
    screen.type("run make the build folder")
    kit.wait(screen, kit.PERMISSION, 30)
    kit.hold(screen, 2.0)
    screen.child.send("\r")
    kit.wait(screen, r"The command finished", 30)
    kit.idle(screen)
    kit.send(screen, "short one after", r"Reply to: short one after")
    kit.quit(screen)


def given_answered(api) -> int:
    """How many of supervise's contexts it has sent the model as a turn (after its date block)."""
    return sum(1 for r in api.messages() if r.has_tools and "\n[supervise]" in "\n" + kit.said(r))


def chained(screen, api) -> None:
    common.chained(screen, api, kit, given_answered)


SCENARIOS = {
    "idle-startup": idle_startup,
    "compact-manual": compact_manual,
    "compact-auto": compact_auto,
    "overflow": overflow,
    "limit": limit,
    "long-line": long_line,
    "multiline": multiline,
    "permission": permission,
    "chained": chained,
}


def record(version: str, out: Path) -> None:
    exe = executable(version)
    for name, drive in SCENARIOS.items():
        if not wanted(name):
            continue
        base = Path(tempfile.mkdtemp(prefix="cop-"))  # no scenario name: "compact" in a path on screen would be a finding
        given: list | None = [] if name == "chained" else None
        try:
            with kit.Model() as api:
                env, proj = kit.environment(base, api.url)
                with recording(name, [str(exe), *kit.ARGV], env, proj, out, given=given) as screen:
                    kit.ready(screen)
                    drive(screen, api)
                keep_record(out, name, kit.NAME, env, proj)
                trim_record(out / "record" / name)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        if given is not None:
            save_given(out, kit.NAME, version, name, given)


if __name__ == "__main__":
    main(record, lambda: kit.VERSION, kit.NAME)
