#!/usr/bin/env python3
"""An agent that runs its SessionStart hooks the moment it starts, as Claude Code does (about
0.2 s in), only sooner: it reads the `--settings FILE` supervise gives it, runs each hook
whose matcher takes `startup` as Claude Code runs it (`sh -c`, the event's JSON on stdin),
and shows the first line of what the hook added. Then it waits at a prompt, showing each line
it is sent, until `/exit`.

    hookfirst.py --settings FILE [...]
"""

import json
import subprocess
import sys


def hooks(settings: str) -> list[str]:
    with open(settings, encoding="utf-8") as fh:
        groups = json.load(fh).get("hooks", {}).get("SessionStart", [])
    return [h["command"] for g in groups if "startup" in g.get("matcher", "").split("|") for h in g["hooks"]]


def main(argv: list[str]) -> int:
    settings = argv[argv.index("--settings") + 1]
    request = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "hookfirst-1"})
    for command in hooks(settings):
        done = subprocess.run(["sh", "-c", command], input=request, capture_output=True, text=True, timeout=60)
        added = json.loads(done.stdout or "{}").get("hookSpecificOutput", {}).get("additionalContext", "")
        print(f"hook gave: {added.splitlines()[0] if added else 'nothing'}", flush=True)
    while True:
        print("? for shortcuts", flush=True)
        line = sys.stdin.readline()
        if not line or line.strip() == "/exit":
            return 0
        print(f"got: {line.strip()}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
