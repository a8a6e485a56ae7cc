#!/usr/bin/env python3
"""Move to the agents' newest releases: one command, then a look at what changed.

    scripts/bump_agents.py                 # every agent with a newer release
    scripts/bump_agents.py codex gemini    # only these
    scripts/bump_agents.py --check         # only say which agents have a newer release

For each agent whose newest release (npm / PyPI) is newer than its newest recorded version
under tests/fixtures/AGENT/: record every scenario with the real program
(scripts/agents/AGENT.py, into tests/fixtures/AGENT/NEW/), replay the recordings through the
shipped patterns, and print, fixture by fixture, what is detected now against what the
previous release's expected.json says. A draft expected.json is written for the new
release (review it: a difference is either a pattern to fix in patterns/AGENT.toml or a
real change of the program), and an agent pinned in tests/agents/package.json (whose
end-to-end tests run the real program) has its pin moved too, the new release installed,
and its door re-checked: its end-to-end test (the context back through its own hook, plugin
or extension, nothing typed) and its door's own test (tests/test_AGENT_hook.py), if any.
Old releases' recordings stay: the patterns must keep matching them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import fixtureset  # noqa: E402
from supervisor.detection import patterns  # noqa: E402
from supervisor.recording.patterncheck import check, log_lines  # noqa: E402
from supervisor.detection.userturns import user_turns  # noqa: E402
from supervisor.contexts import schema  # noqa: E402
from supervisor.detection import echoes  # noqa: E402
from supervisor.detection.detector import Detector  # noqa: E402
from supervisor.recording.export import replay  # noqa: E402

RECORDERS = ROOT / "scripts" / "agents"
# every agent with a recorder (scripts/agents/NAME.py, `-` for `_`), but supervise's own
AGENTS = tuple(sorted(p.stem.replace("_", "-") for p in RECORDERS.glob("*.py") if p.stem not in ("common", "supervise_agent")))
PINS = ROOT / "tests" / "agents" / "package.json"
NOT_IDLE = fixtureset.NOT_IDLE
# what a recorder writes itself into an entry (common.save_given): kept in the draft
RECORDERS_OWN = ("given", "given_contexts", "requests")


def version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in v.replace("-", ".").split("."))


def recorded(agent: str) -> list[str]:
    folder = fixtureset.FIXTURES / agent
    return sorted((p.name for p in folder.iterdir() if (p / "expected.json").exists()), key=version_key) if folder.is_dir() else []


def recorder(agent: str, *args: str, capture: bool = False) -> str:
    proc = subprocess.run(
        [sys.executable, str(RECORDERS / f"{agent.replace('-', '_')}.py"), *args], capture_output=capture, text=True, check=True
    )
    return proc.stdout.strip() if capture else ""


def observed(path: Path, agent: str, own: dict) -> dict:
    """What the shipped patterns read in a recording, as tests/test_patterns.py and (for one
    where supervise typed its context back, `own["given"]`) tests/test_chained_fixtures.py do."""
    shipped = patterns.load_all(env={})[agent]
    found = list(check(path, shipped)[1])
    lines = log_lines(path)
    live = []
    if "given" in own:
        pairs = list(zip(own["given"], map(schema.quoted, own["given_contexts"])))
        lines = echoes.strip("\n".join(lines), echoes.Given.of(pairs)).split("\n")
        detector = Detector(shipped)
        for prompt, quoted in pairs:
            detector.add_given(prompt, quoted)
        log, frames = replay(path)
        live = [
            [d.kind, d.pattern] for t, f in frames for d in detector.feed(t, f.appeared, [r.text for r in log.rows]) if d.kind in NOT_IDLE
        ]
    return {
        "events": [[d.kind, d.pattern] for d in found if d.kind in NOT_IDLE],
        "live_events": live,
        "idle_prompts": sum(1 for d in found if d.kind == "idle_prompt"),
        "user_turns": user_turns(lines, shipped),
    }


def folded(turns: list[str]) -> list[str]:
    """Messages as tests/test_patterns.py compares them: white space folded (a message the
    agent wrapped cannot be told from one with a line break), each once, in order."""
    return list(dict.fromkeys(" ".join(t.split()) for t in turns))


def pinned_package(agent: str) -> str | None:
    """The agent's npm package, if the end-to-end tests pin it (the PACKAGE of its recorder or its test kit)."""
    import re

    module = agent.replace("-", "_")
    sources = [RECORDERS / f"{module}.py", ROOT / "tests" / "kits" / f"{module}.py"]
    said = [m.group(1) for p in sources if p.exists() for m in [re.search(r'^PACKAGE = "([^"]+)"', p.read_text(), re.M)] if m]
    return next((p for p in said if p in json.loads(PINS.read_text())["dependencies"]), None)


def compare(agent: str, old: str | None, new: str) -> dict:
    """Print what the new recordings show against the previous release's expectations;
    returns the draft expectations."""
    before = {}
    if old:
        before = json.loads((fixtureset.FIXTURES / agent / old / "expected.json").read_text())["fixtures"]
    spec = fixtureset.FIXTURES / agent / new / "expected.json"
    written = json.loads(spec.read_text())["fixtures"] if spec.exists() else {}
    draft = {}
    for path in sorted((fixtureset.FIXTURES / agent / new).glob("*.cast*")):
        own = {k: v for k, v in written.get(path.name, {}).items() if k in RECORDERS_OWN}
        now = observed(path, agent, own)
        stem = path.name.split(".cast")[0]
        was = before.get(path.name) or next((v for k, v in before.items() if k.split(".cast")[0] == stem), None)
        entry = {"events": now["events"], "user_turns": now["user_turns"], **own}
        if "given" in own:  # a live session's detector, told what was given
            entry["live_events"] = now["live_events"]
        if was and "idle_turns" in was:
            entry["idle_turns"] = was["idle_turns"]
        draft[path.name] = entry
        if was is None:
            print(f"  {path.name}: new scenario: {len(now['events'])} events, {len(now['user_turns'])} user messages")
        elif was["events"] == now["events"] and folded(was.get("user_turns", now["user_turns"])) == folded(now["user_turns"]):
            print(f"  {path.name}: same as {old}")
        else:
            print(f"  {path.name}: CHANGED since {old}")
            print(f"    events then: {was['events']}\n    events now:  {now['events']}")
            if folded(was.get("user_turns", [])) != folded(now["user_turns"]):
                print(f"    user messages then: {was.get('user_turns')}\n    user messages now:  {now['user_turns']}")
        if "idle_turns" in entry and now["idle_prompts"] < entry["idle_turns"] + 1:
            print(f"    idle prompt seen {now['idle_prompts']} times for {entry['idle_turns']} turns: check the idle pattern")
    return draft


def door_check(agent: str) -> bool:
    """Run the agent's end-to-end test and its door's own test against the installed release."""
    module = agent.replace("-", "_")
    tests = [f"tests/test_agents_e2e.py::test_an_agent_compacts_gets_its_context_back_and_is_resumed_with_its_own_flag[{agent}]"]
    tests += [str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob(f"test_{module}_hook.py")]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly", *tests], cwd=ROOT, env={**os.environ, "CI": "true"}
    )
    print(
        f"  its door {'answers as before' if done.returncode == 0 else 'FAILED: see above (the profile falls back to typing only where it knows)'}"
    )
    return done.returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="*", choices=[[], *AGENTS] and AGENTS, metavar="AGENT")
    ap.add_argument("--check", action="store_true", help="only say which agents have a newer release")
    args = ap.parse_args()
    for agent in args.agents or AGENTS:
        versions = recorded(agent)
        old = versions[-1] if versions else None
        newest = recorder(agent, "--newest", capture=True)
        if old and version_key(newest) <= version_key(old):
            print(f"{agent}: {old} is the newest release")
            continue
        print(f"{agent}: {old} -> {newest}")
        if args.check:
            continue
        recorder(agent, "--version", newest)
        draft = compare(agent, old, newest)
        fixtureset.write(fixtureset.FIXTURES / agent / newest, agent, newest, draft)
        print(
            f"  wrote tests/fixtures/{agent}/{newest}/expected.json: review it, fix patterns/{agent}.toml "
            f"(add {newest} to seen_on of what still matches), then run scripts/test"
        )
        package = pinned_package(agent)
        if package:
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--prefix",
                    str(ROOT / "tests" / "agents"),
                    "--save-exact",
                    "--no-audit",
                    "--no-fund",
                    f"{package}@{newest}",
                ],
                check=True,
            )
            print(f"  tests/agents/package.json now pins {package} {newest} for the end-to-end tests")
            door_check(agent)


if __name__ == "__main__":
    main()
