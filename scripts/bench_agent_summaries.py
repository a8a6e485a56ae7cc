#!/usr/bin/env python3
"""The agents' own compactions, scored beside supervise's contexts on the same facts.

Each agent CLI that speaks the Anthropic Messages API runs for real (its kit in tests/kits,
the pinned release) under `supervise --inject off` (its compactions are its own: nothing of
supervise's is typed into it), against its fake model API. The user types four turns that
plant facts (the request, files, a decision with its reason, an error and its fix), the
agent compacts after each of the first three (its own command, or by itself), and the
session ends (an agent that fails is reported and the others run). Scored per compaction:
the summary it made (where its own record keeps one supervise reads), and its context after
compacting (what it sent its model with the next turn: its summary and the messages it kept
beside it). The fake model answers a compaction request with a summary that drops nothing
that matters here (each line of the request that carries one of the user's turns, verbatim):
the agent's score is what its compaction carried to its model, an upper bound of what a real
model's summary keeps.
supervise's context of the same compaction (the round made when it began, the heuristic
backend, no model) is scored on the same facts with the same test
(supervisor/contexts/compare.kept: the file names and most of the words of each fact).

Usage: scripts/bench_agent_summaries.py [--agents claude,pi,...] [--json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from agentdriver import Screen, send_turn  # noqa: E402
from helpers import latest, recorder_done, wait_for  # noqa: E402
from supervisor.contexts import compare  # noqa: E402

# The agents on the fake Anthropic API (its request and reply shapes are what is read and
# replaced here; Codex's and Gemini CLI's fakes answer a compaction in their own way) that
# compact when told to (Aider summarizes once its history outgrows a budget, and keeps no
# summary in its record).
AGENTS = ("claude", "pi", "qwen", "opencode", "kilo", "copilot", "continue_cli", "cline")
TURNS = [
    "turn 1: write src/totals.py that adds up the amount column of data.csv",
    "turn 2: keep amounts in integer cents because floats lost a cent on the March invoices",
    "turn 3: the KeyError amount in tests/test_totals.py came from a missing header row, so read the header first",
    "turn 4: next add a --csv flag to src/export_csv.py",
]
# (the turn that plants it, what it is, its words)
FACTS = [
    (1, "file src/totals.py", "src/totals.py"),
    (1, "file data.csv", "data.csv"),
    (2, "decision", "amounts in integer cents because floats lost a cent"),
    (3, "error", "KeyError amount in tests/test_totals.py"),
    (3, "fix", "missing header row: read the header first"),
]
PHRASE = "Summary of the conversation so far"  # in each kit's own summary
LEAD = f"{PHRASE} (each of the user's turns it was sent, verbatim):"
TURN = re.compile(r"\bturn \d: ")


def faithful(req, canned: str | None) -> str:
    """A summary that drops nothing that matters here: each line of the request that carries
    one of the user's turns, verbatim, once (an agent may throw away a summary no shorter than
    what it summarized, so nothing else is repeated); set inside the kit's own summary where it
    has one in the format its agent asks for."""
    lines = "\n".join(dict.fromkeys(line.strip() for text in req.texts() for line in text.splitlines() if TURN.search(line)))
    if canned and PHRASE in canned:
        return canned.replace(PHRASE, f"{LEAD}\n{lines}\n", 1)
    return f"{LEAD}\n{lines}"


def is_compaction(kit, req, reply) -> bool:
    """Whether the kit's model answered `req` as the agent's request to summarize."""
    canned, mark, test = getattr(kit, "SUMMARY", None), getattr(kit, "SUMMARIZE", None), getattr(kit, "is_compaction", None)
    return bool(
        req.is_compaction
        or (canned and isinstance(reply, dict) and reply.get("text") == canned)
        or (mark and mark in req.all_text())
        or (test and test(req))
    )


def faithful_model(kit):
    """The kit's fake model, its compaction answers replaced by faithful ones."""
    api = kit.Model()
    choose = api._choose

    def chosen(req):
        reply = choose(req)
        if isinstance(reply, dict) and "text" in reply and is_compaction(kit, req, reply):
            reply = {**reply, "text": faithful(req, getattr(kit, "SUMMARY", None))}
        return reply

    api._choose = chosen
    return api


def scored(text: str, upto: int) -> dict[str, bool]:
    """Which facts planted by turn `upto` `text` holds; the two requests verbatim."""
    out = {"request": TURNS[0] in text, "latest request": TURNS[upto - 1] in text}
    for turn, name, words in FACTS:
        if turn <= upto:
            out[name] = compare.kept(words, text)
    return out


def compaction_rounds(sid: str) -> int:
    from supervisor.store.database import Store

    store = Store.open_default()
    try:
        return len([r for r in store.contexts(sid) if str(r["trigger"]).startswith("compaction")])
    finally:
        store.close()


def compact(kit, screen, sid: str) -> None:
    """Its own compaction, seen begun by supervise (its round of it made: a sign on screen may
    be the last compaction's), then the agent idle again."""
    made = compaction_rounds(sid)
    if hasattr(kit, "compact"):
        kit.compact(screen)
    else:
        screen.type(kit.COMPACT)
    wait_for(lambda: screen.pump(0.1) or compaction_rounds(sid) > made, 120, interval=0)
    kit.idle(screen, 120)


def say(kit, screen, text: str) -> None:
    send_turn(kit, screen, text)
    screen.wait("(?i)reply to: " + re.escape(text[:30]), 120)
    kit.idle(screen, 120)


def run(name: str, base: Path) -> list[dict]:
    kit = importlib.import_module(f"kits.{name}")
    exe = kit.binary()
    if not exe.exists():
        raise SystemExit(f"{kit.PACKAGE} {kit.VERSION} is not installed in tests/agents (scripts/test installs it)")
    home = base / "home"
    os.environ["SUPERVISE_HOME"] = str(home)  # the store the helpers read
    with faithful_model(kit) as api:
        env, project = kit.environment(base / "agent", api.url)
        env = {k: v for k, v in env.items() if not k.startswith("SUPERVISE_")}
        env.update(SUPERVISE_HOME=str(home), SUPERVISE_SUMMARY_BACKEND="heuristic", PATH=f"{exe.parent}:{os.environ['PATH']}")
        typed: list[float] = []  # when each turn was typed
        screen = getattr(kit, "SCREEN", Screen)(["--inject", "off", "--", str(exe), *kit.ARGV], env, project)
        try:
            kit.ready(screen)
            sid = latest()["id"]
            for n, text in enumerate(TURNS, 1):
                typed.append(time.time())
                say(kit, screen, text)
                if n < len(TURNS):
                    compact(kit, screen, sid)
            kit.quit(screen)
        finally:
            screen.close()
        recorder_done(sid, 240)
        carried = [after(api.messages(), TURNS[k], TURNS[k + 1 :]) for k in range(1, len(TURNS))]
    from supervisor.store.database import Store

    store = Store.open_default()
    try:
        events, rounds = store.events(sid), store.contexts(sid)
    finally:
        store.close()
    if os.environ.get("BENCH_DEBUG"):
        for r in rounds:
            print(r["round"], r["trigger"], r.get("transcript_offset"), r.get("log_offset"), json.dumps(r["context"])[:1500], flush=True)
    summaries = [e for e in events if e["kind"] == "agent_summary"]
    out = []
    for k in range(1, len(TURNS)):
        made = [e for e in summaries if typed[k - 1] <= compare.when(e["time"]) <= typed[k]]
        summary = made[-1]["detail"]["text"] if made else None
        row = of_compaction(rounds, typed[k - 1], typed[k])
        out.append(
            {
                "agent": name,
                "compaction": k,
                "summary": scored(summary, k) if summary is not None else None,
                "context": scored(carried[k - 1], k),
                "ours": scored(row["prompt"], k) if row is not None else {f: False for f in scored("", k)},
            }
        )
    return out


def of_compaction(rounds: list[dict], since: float, until: float) -> dict | None:
    """supervise's round of the compaction between two turns: the last one made for it."""
    made = [r for r in rounds if str(r["trigger"]).startswith("compaction") and since <= compare.when(r["created"]) <= until]
    return made[-1] if made else None


def after(requests, turn: str, later: list[str]) -> str:
    """What the agent sent its model with the user's `turn`, that turn left out: its context
    after the compaction before it (its summary, and what it kept beside it). Of the requests
    that carry the turn and none typed `later` (a summary may quote it again), the turn's own:
    the longest (a title, a side question may carry it too)."""
    carrying = [
        req
        for req in requests
        if any(turn in text for text in req.texts("user")) and not any(t in text for text in req.texts() for t in later)
    ]
    if not carrying:
        return ""
    texts = max(carrying, key=lambda req: len(req.body.get("messages") or [])).texts()
    return "\n".join(t for t in texts if turn not in t)


def share(rows: list[dict], side: str) -> str:
    facts = [kept for r in rows if r[side] is not None for kept in r[side].values()]
    return f"{sum(facts) / len(facts):.0%}" if facts else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    began = time.monotonic()
    rows: list[dict] = []
    failed: dict[str, str] = {}
    for name in [a.strip() for a in args.agents.split(",") if a.strip()]:
        with tempfile.TemporaryDirectory(prefix=f"bench-summaries-{name}-") as tmp:
            try:
                got = run(name, Path(tmp))
            except (AssertionError, OSError) as e:
                failed[name] = str(e).splitlines()[0]
                print(f"{name}: failed: {failed[name]}", flush=True)
                continue
        rows += got
        print(f"{name}: {len(got)} compactions", flush=True)
    print(f"\n{'agent':<9} {'compaction':>10}  {'facts':<5}  lost by its summary / its context after / supervise's context")
    for r in rows:
        lost = lambda side: "n/a" if r[side] is None else ", ".join(f for f, kept in r[side].items() if not kept) or "-"  # noqa: E731
        print(f"{r['agent']:<9} {r['compaction']:>10}  {len(r['ours']):<5}  {lost('summary')} / {lost('context')} / {lost('ours')}")
    print("\nper agent (facts kept over its three compactions; the two requests verbatim):")
    for name in dict.fromkeys(r["agent"] for r in rows):
        mine = [r for r in rows if r["agent"] == name]
        print(
            f"  {name:<12} its own summary {share(mine, 'summary'):>4}   its context after compacting {share(mine, 'context'):>4}"
            f"   supervise's context {share(mine, 'ours'):>4}"
        )
    print(f"({time.monotonic() - began:.0f} s)")
    if args.json:
        print(json.dumps({"rows": rows, "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
