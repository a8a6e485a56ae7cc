"""Recordings of real agent CLIs and what each must yield: tests/fixtures/AGENT/VERSION/.

Each version folder holds the recordings (`*.cast`, `*.cast.gz`, made with supervise) and an
`expected.json`:

    {"agent": "codex", "version": "0.169.0", "fixtures": {
        "compact-manual.cast": {
            "events": [["compaction_started", "codex/compacting"], ...],   # every kind but idle_prompt and unrecognized, in order
            "idle_turns": 3,                  # optional: at least this many turns end idle (idle_prompt >= turns + 1)
            "user_turns": ["hello there", ...]  # optional: the user's messages, verbatim, in order
        }}}

A recording in which supervise typed its context back (`--inject type`, the `chained`
scenarios) also has:

    "given": ["[supervise] You are continuing ...", ...],  # the context prompts it typed, in order
    "given_contexts": [{"original_request": ...}, ...],     # the context of each (what each quotes)
    "live_events": [...]  # the events that really happened: what a live session reports, its
                          # detector told what was given (`events` is what `patterns check`
                          # reports, knowing nothing of it); `user_turns` are read with the
                          # echoes of `given` taken out, as a session reads them
    "requests": [...]     # what the user typed, for an agent whose screen does not tell it
                          # apart (its own record does)

Where the agent keeps its own record of a session, `record/NAME/` beside a recording holds
what it wrote during it, laid out as under the folder its profile's `transcript.folder` names.

Old versions stay: the shipped patterns must keep matching every recording here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# the events an expected.json lists (`events`, `live_events`): every kind but idle_prompt and unrecognized
NOT_IDLE = frozenset(
    {
        "compaction_started",
        "compaction_finished",
        "compaction_failed",
        "context_low",
        "context_overflow",
        "permission_prompt",
        "limit_reached",
    }
)


@dataclass(frozen=True)
class Fixture:
    agent: str
    version: str
    path: Path
    expected: dict

    @property
    def id(self) -> str:
        return f"{self.path.parent.parent.name}/{self.version}/{self.path.name}"

    @property
    def record(self) -> Path | None:
        """The agent's own record of the recorded session, if it was kept."""
        folder = self.path.parent / "record" / self.path.name.split(".cast")[0]
        return folder if folder.is_dir() else None


def load(root: Path = FIXTURES) -> list[Fixture]:
    out = []
    for spec in sorted(root.glob("*/*/expected.json")):
        data = json.loads(spec.read_text(encoding="utf-8"))
        for name, expected in data["fixtures"].items():
            out.append(Fixture(data["agent"], data["version"], spec.parent / name, expected))
    return out


def write(folder: Path, agent: str, version: str, fixtures: dict) -> None:
    """expected.json with one line per event pair, so a diff shows what changed."""
    lines = ["{", f' "agent": {json.dumps(agent)},', f' "version": {json.dumps(version)},', ' "fixtures": {']
    names = list(fixtures)
    for i, name in enumerate(names):
        entry = fixtures[name]
        lines.append(f"  {json.dumps(name)}: {{")
        keys = list(entry)
        for j, key in enumerate(keys):
            value = entry[key]
            comma = "," if j < len(keys) - 1 else ""
            if isinstance(value, list) and value:
                items = [json.dumps(v, ensure_ascii=False) for v in value]
                lines.append(f"   {json.dumps(key)}: [")
                lines.extend(f"    {item}{',' if k < len(items) - 1 else ''}" for k, item in enumerate(items))
                lines.append(f"   ]{comma}")
            else:
                lines.append(f"   {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
        lines.append("  }" + ("," if i < len(names) - 1 else ""))
    lines += [" }", "}"]
    (folder / "expected.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
