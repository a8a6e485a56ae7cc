#!/usr/bin/env python3
"""Fidelity benchmark: what of a session survives into its contexts, compaction after compaction.

For the demo agent and for each agent whose drawing we know (claude, codex, gemini,
opencode, aider), a session with planted facts: the original request, the user's latest
request, five files touched, two decisions with their reasons, an error and its fix, two
pending steps; three compactions with a user turn between each, and after each the context
supervise made given back and echoed the way that agent draws a typed context (wrapped,
quoted, bulleted, collapsed to a paste placeholder).

- demo: the real thing, `supervise run --agent demo --inject type -- python -m
  supervisor.cli.demo_agent --more` under a PTY; the user types the turns (the demo agent shows
  a turn's notes, "decided: ..." and the like, as an agent would).
- the others: the session's text log written in that agent's drawing, among build, test
  and file-reading noise, stored as a real session; a round made with
  supervisor.contexts.rounds.make where each compaction starts and at the end, each
  round's prompt echoed into what follows.

Each case runs offline (the heuristic backend) and with a fake cheap model (the api backend
against tests/fakeapi.FakeAnthropic on 127.0.0.1): a faithful reader that fills each field
from the lines of its input that say so, and keeps the previous context, so the score is
what the digest carried. Every round's stored context is scored per fact planted so far
(in the right field; the two requests exactly), and for echoes: no piece of supervise's own
wording (its template, its echo mark) anywhere in it. Targets: the original request
verbatim in 100% of rounds, >= 95% of the facts, 0 echoes.

Usage: scripts/bench_fidelity.py [--noise-kb 60] [--agents demo,claude,...] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import fidelity_records  # noqa: E402  (beside this script)
from fakeapi import FakeAnthropic  # noqa: E402
from supervisor import config  # noqa: E402
from supervisor.detection import echoes, patterns  # noqa: E402
from supervisor.contexts import rounds, schema  # noqa: E402
from supervisor.store.database import Store  # noqa: E402

AGENTS = ("demo", "claude", "codex", "gemini", "opencode", "aider")
BACKENDS = ("heuristic", "api")
WIDTH = 100


# --- the planted facts ----------------------------------------------------------------------
# (name, field, what must be in one item of that field, lowercased); the two requests are
# compared whole. A decision counts only with its reason in the same item.


class Facts:
    def __init__(
        self,
        request: str,
        turns: list[str],
        files: list[str],
        decisions: list[tuple[str, str]],
        error: str,
        fix: str,
        pending: list[str],
        segment_of: dict[str, int],
    ):
        self.request, self.turns = request, turns
        self.items = [
            *((f"file {i + 1}", "relevant_files", (f,)) for i, f in enumerate(files)),
            *((f"decision {i + 1}", "key_decisions", keys) for i, keys in enumerate(decisions)),
            ("error", "errors_and_resolutions", (error,)),
            ("fix", "errors_and_resolutions", (fix,)),
            *((f"pending {i + 1}", "pending_steps", (p,)) for i, p in enumerate(pending)),
        ]
        self.segment_of = segment_of  # fact name: the segment (1..3) it is planted in

    def latest(self, segment: int) -> str:
        """The user's latest request by the end of `segment` (1: the original)."""
        return ([self.request, *self.turns])[segment - 1]


SYNTH = Facts(
    request="add CSV export to the invoice report and keep the PDF export working",
    turns=[
        "now stream the rows to the file instead of building the whole list in memory",
        "add a --since filter to the export command",
        "write the docs for the CSV format",
    ],
    files=[
        "src/invoices/export_csv.py",
        "src/invoices/report.py",
        "tests/test_export_csv.py",
        "src/invoices/stream.py",
        "docs/csv_format.md",
    ],
    decisions=[("csv.dictwriter", "new dependency"), ("batches of 500", "past 2 gb")],
    error="keyerror: 'currency'",
    fix="default to the account's currency",
    pending=["validate the currency codes against iso 4217", "progress bar for exports over 10,000 rows"],
    segment_of={
        "file 1": 1,
        "file 2": 1,
        "file 3": 1,
        "decision 1": 1,
        "error": 1,
        "fix": 1,
        "file 4": 2,
        "decision 2": 2,
        "pending 1": 2,
        "file 5": 3,
        "pending 2": 3,
    },
)

# The demo agent's scripted first part plants the first segment's facts (supervisor/cli/demo_agent.py).
DEMO_TURNS = [
    "stream the report rows from src/report_stream.py"
    " | decided: write rows in batches of 500 because memory grew past 2 GB"
    " | todo: validate the currency codes against ISO 4217",
    "add a --since filter in src/cli_since.py | todo: add a progress bar for reports over 10,000 rows",
    "write the docs for the json format",
]
DEMO = Facts(
    request="add a --json flag to the report command",
    turns=DEMO_TURNS,
    files=["src/report.py", "tests/test_report.py", "tests/test_report_json.py", "src/report_stream.py", "src/cli_since.py"],
    decisions=[("json.dumps", "ci job diffs"), ("batches of 500", "past 2 gb")],
    error="keyerror: 'total'",
    fix="tests/test_report.py now passes",
    pending=["validate the currency codes against iso 4217", "progress bar for reports over 10,000 rows"],
    segment_of=SYNTH.segment_of,
)


# --- scoring ----------------------------------------------------------------------------------

# supervise's own wording: the template's sentences and headings, and the line an echo becomes
OWN_LINES = [l for l in re.sub(r"\$\w+", "\n", schema.DEFAULT_TEMPLATE).splitlines() if len(echoes.normalize(l)) >= 8]
OWN_PIECES = {
    p
    for l in [*OWN_LINES, echoes.MARK]
    for n in [echoes.normalize(l)]
    for p in ({n} if len(n) < 16 else {n[i : i + 16] for i in range(len(n) - 15)})
}


def echoed(context: dict) -> list[str]:
    """The values of a context that hold supervise's own wording."""
    out = []
    for value in schema.quoted(context).splitlines():
        n = echoes.normalize(value)
        if any(p in n for p in OWN_PIECES):
            out.append(value)
    return out


def score(context: dict, facts: Facts, segment: int) -> dict:
    """Each fact planted by `segment`: kept in its field or not; and the echoes."""
    out = {"request": context.get("original_request") == facts.request, "latest": context.get("latest_request") == facts.latest(segment)}
    for name, field, keys in facts.items:
        if facts.segment_of[name] <= segment:
            out[name] = any(all(k in item.lower() for k in keys) for item in context.get(field, []))
    return {"facts": out, "echoes": echoed(context)}


# --- the fake cheap model: a faithful reader ------------------------------------------------

READ = {
    "relevant_files": re.compile(r"[\w./-]+/[\w.-]+\.\w+|\b[\w-]+\.(?:py|md|toml|json|csv|txt)\b"),
    "key_decisions": re.compile(r"\b(?:decided|decision|chose|going with|instead of|because|i'll use|we'll use)\b", re.I),
    "errors_and_resolutions": re.compile(r"error|exception|traceback|\bfail(?:ed|s)?\b|\bfixed\b|resolved|now pass", re.I),
    "pending_steps": re.compile(r"☐|□|\[ \]|\btodo\b|still to do|next step|remaining", re.I),
    "completed_steps": re.compile(r"\b(?:edit(?:ed)?|update|write|wrote|applied edit|ran|bash|shell)\b|☒|✔|\[✓\]", re.I),
}
GLYPHS = re.compile(r"^[\s●•✦│┃⎿└>›❯☒☐□✔✓\[\]-]*")


def faithful(request) -> dict:
    """The context a careful model would write from this input: the previous context kept,
    each line of the digest that names a file, a decision, an error or fix, a step left, in
    its field (without the agent's glyphs), the request as the digest gives it."""
    text = request.last_user_text()
    previous: dict = {}
    if text.startswith("## Previous context"):
        head, _, text = text.partition("\n\n## Session digest\n")
        previous = json.loads(head.split("\n", 1)[1])
    else:
        text = text.split("## Session digest\n", 1)[-1]
    sections = dict(re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    lines = [l for name, body in sections.items() if not name.startswith("Original") for l in body.splitlines()]
    ctx = {k: list(previous.get(k, [])) for k in schema.LIST_FIELDS}
    users = []
    for line in lines:
        said = GLYPHS.sub("", line).strip()
        if not said or said.startswith("Session "):
            continue
        if line.startswith("User: "):
            users.append(line[6:])
            continue
        for field, rx in READ.items():
            found = rx.findall(said) if field == "relevant_files" else [said] if rx.search(line) else []
            ctx[field].extend(x for x in found if x not in ctx[field])
    request_text = sections.get("Original request (verbatim)", "").strip()
    ctx["original_request"] = previous.get("original_request") or request_text
    ctx["current_task"] = users[-1] if users else previous.get("current_task") or "carry on"
    return {"tool_use": {"name": schema.TOOL["name"], "input": ctx}}


# --- the agents' drawing ----------------------------------------------------------------------


def wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    out: list[str] = []
    for paragraph in text.split("\n"):
        out.extend(
            textwrap.wrap(paragraph, width - len(rest), initial_indent=first if not out else rest, subsequent_indent=rest)
            or [rest.rstrip()]
        )
    return out


class Claude:
    name = "claude"

    def user(self, t):
        return ["", "❯ " + t]

    def read(self, p, n):
        return [f"● Read({p})", f"  ⎿  Read {n} lines"]

    def edit(self, p):
        return [f"● Update({p})", f"  ⎿  Updated {p} with 14 additions and 3 removals"]

    def write(self, p):
        return [f"● Write({p})", f"  ⎿  Wrote 48 lines to {p}"]

    def run(self, cmd, out):
        return [f"● Bash({cmd})", *(("  ⎿  " if i == 0 else "     ") + l for i, l in enumerate(out))]

    def say(self, t):
        return wrap(t, WIDTH, "● ", "  ")

    def todo(self, done, pending):
        return [
            "● Update Todos",
            *(("  ⎿  " if i == 0 else "     ") + l for i, l in enumerate([f"☒ {d}" for d in done] + [f"☐ {p}" for p in pending])),
        ]

    def compaction(self):
        return ["✻ Compacting conversation… (14s · ↓ 3.1k tokens)", "⎿  Compacted (ctrl+o to see full summary)"]

    def echo(self, prompt):
        lines = prompt.count("\n") + 1
        return [
            f"❯ [Pasted text #1 +{lines} lines]",
            *wrap(prompt, WIDTH, "❯ ", "  "),
            *wrap("Reply to: " + prompt.split("\n")[0], WIDTH, "● ", "  ")[:2],
        ]


class Codex:
    name = "codex"

    def user(self, t):
        return ["› " + t]

    def read(self, p, n):
        return ["• Explored", f"  └ Read {Path(p).name}"]

    def edit(self, p):
        return [f"• Edited {p} (+14 -3)"]

    def write(self, p):
        return [f"• Added {p} (+48 -0)"]

    def run(self, cmd, out):
        return [f"• Ran {cmd}", *(("  └ " if i == 0 else "    ") + l for i, l in enumerate(out))]

    def say(self, t):
        return wrap(t, WIDTH, "• ", "  ")

    def todo(self, done, pending):
        return [
            "• Updated Plan",
            *(("  └ " if i == 0 else "    ") + l for i, l in enumerate([f"✔ {d}" for d in done] + [f"□ {p}" for p in pending])),
        ]

    def compaction(self):
        return ["• Compacting context (5s • esc to interrupt)", "• Context compacted"]

    def echo(self, prompt):
        history = wrap(prompt, WIDTH, "› ", "  ")
        bullets = ["  • " + l[2:] if l.startswith("- ") else "    " + l for l in wrap(prompt, 90)[8:]]
        return [f"› [Pasted Content {len(prompt)} chars]", *history, "• Picking up where the context leaves off:", *bullets]


class Gemini:
    name = "gemini"

    def box(self, lines):
        return ["╭" + "─" * (WIDTH - 2) + "╮", *("│ " + l.ljust(WIDTH - 4) + " │" for l in lines), "╰" + "─" * (WIDTH - 2) + "╯"]

    def user(self, t):
        return ["▄" * WIDTH, " > " + t, "▀" * WIDTH]

    def read(self, p, n):
        return self.box([f"✓  ReadFile {p}"])

    def edit(self, p):
        return self.box([f"✓  Edit {p}: 14 lines changed"])

    def write(self, p):
        return self.box([f"✓  WriteFile Writing to {p}"])

    def run(self, cmd, out):
        return self.box([f"✓  Shell {cmd}", "", *out])

    def say(self, t):
        return wrap(t, WIDTH, "✦ ", "  ")

    def todo(self, done, pending):
        return self.box(["✓  WriteTodos", *(f"  ✓ {d}" for d in done), *(f"  ☐ {p}" for p in pending)])

    def compaction(self):
        return [" ⠼ Compressing chat history", "✦ Chat history compressed from 52120 to 4201 tokens."]

    def echo(self, prompt):
        return [
            "▄" * WIDTH,
            *wrap(prompt, WIDTH, " > ", "   "),
            "▀" * WIDTH,
            *wrap("Reply to: " + prompt.split("\n")[0], WIDTH, "✦ ", "  ")[:2],
        ]


class OpenCode:
    name = "opencode"

    def user(self, t):
        return ["  ┃", "  ┃  " + t, "  ┃"]

    def read(self, p, n):
        return [f"     → Read {p}"]

    def edit(self, p):
        return [f"     ← Edit {p}"]

    def write(self, p):
        return [f"     ← Write {p}"]

    # as recorded (tests/fixtures/opencode/1.18.33/permission-bash): the output right under the command
    def run(self, cmd, out):
        return ["  ┃", f"  ┃  $ {cmd}", *("  ┃  " + l for l in out), "  ┃"]

    def say(self, t):
        return wrap(t, WIDTH, "     ", "     ")

    def todo(self, done, pending):
        return ["     # Todos", *(f"     [✓] {d}" for d in done), *(f"     [ ] {p}" for p in pending)]

    def compaction(self):
        return ["     Goal", "     Continue the invoice export work.", "     ▣  Compaction · Claude Sonnet 4.5 (latest) · 3.5s"]

    def echo(self, prompt):
        lines = prompt.count("\n") + 1
        return [
            f"  ┃  [Pasted ~{lines} lines]",
            "  ┃",
            *("  ┃  " + l for l in wrap(prompt, WIDTH - 5)),
            "  ┃",
            "     Reply to: " + prompt.split("\n")[-1],
            "     ▣  Build · Claude Sonnet 4.5 (latest) · 3.1s",
        ]


class Aider:
    name = "aider"

    def user(self, t):
        return ["─" * WIDTH, "> " + t, ""]

    def read(self, p, n):
        return [f"Added {p} to the chat"]

    def edit(self, p):
        return [f"Applied edit to {p}"]

    def write(self, p):
        return [f"Applied edit to {p}", f"Commit 3f2a9c1 feat: add {Path(p).name}"]

    def run(self, cmd, out):
        return ["```bash", cmd, "```", "Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y", f"Running {cmd}", *out]

    def say(self, t):
        return wrap(t, WIDTH)

    def todo(self, done, pending):
        return [f"TODO: {p}" for p in pending]

    def compaction(self):
        return ["Starting to summarize chat history.", "> Finished summarizing chat history."]

    def echo(self, prompt):
        # prompt_toolkit wraps a long line by characters at the window's width, each row "> "
        rows = []
        for line in prompt.split("\n"):
            rows.extend(["> " + line[i : i + WIDTH - 2] for i in range(0, max(1, len(line)), WIDTH - 2)])
        return ["─" * WIDTH, *rows, "", "Reply to: " + prompt.split("\n")[0][:80], ""]


DRAWERS = {d.name: d for d in (Claude(), Codex(), Gemini(), OpenCode(), Aider())}

NOISE_FILES = [f"src/invoices/{w}.py" for w in ("models", "db", "pdf", "totals", "currency", "templates", "settings", "cli")] + [
    f"tests/test_{w}.py" for w in ("models", "pdf", "totals", "cli")
]
WORDS = "alpha beta gamma delta ledger batch queue worker cache index token stream buffer parser".split()


def noise(a, kb: int, rnd: random.Random) -> list[str]:
    """About `kb` KB of what fills a real session between the facts: files read, test runs
    (a flaky failure among them), prose."""
    out: list[str] = []
    size = 0
    while size < kb * 1000:
        kind = rnd.randrange(4)
        if kind == 0:
            block = a.read(rnd.choice(NOISE_FILES), rnd.randint(20, 400))
        elif kind == 1:
            tests = [
                f"tests/test_{rnd.choice(WORDS)}.py::test_{rnd.choice(WORDS)}_{rnd.randint(1, 99)} PASSED"
                for _ in range(rnd.randint(5, 25))
            ]
            if rnd.random() < 0.2:
                tests.append("FAILED tests/test_legacy.py::test_flaky_network - TimeoutError")
            block = a.run(
                "pytest -q -k " + rnd.choice(WORDS), tests + [f"{len(tests)} passed in {rnd.randint(1, 9)}.{rnd.randint(10, 99)}s"]
            )
        elif kind == 2:
            block = a.say(" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 30))))
        else:
            block = a.run(
                f"python -m invoices.cli report --customer {rnd.randint(100, 999)}",
                [f"{rnd.choice(WORDS)} {rnd.randint(1, 9999)} rows {rnd.choice(WORDS)} ok" for _ in range(rnd.randint(3, 12))],
            )
        out.extend(block)
        size += sum(len(l) + 1 for l in block)
    return out


def segments(a, kb: int, rnd: random.Random) -> list[list[str]]:
    """The session's four parts: up to each compaction's start, then after the last."""
    f = SYNTH
    half = max(1, kb // 2)
    one = [
        *a.user(f.request),
        *noise(a, half, rnd),
        *a.write("src/invoices/export_csv.py"),
        *a.say("I'll use csv.DictWriter instead of pandas because the service must not gain a new dependency."),
        *noise(a, half, rnd),
        *a.edit("src/invoices/report.py"),
        *a.write("tests/test_export_csv.py"),
        *a.run(
            "pytest -q tests/test_export_csv.py",
            ["F..", "KeyError: 'currency' in src/invoices/export_csv.py line 42", "1 failed, 2 passed in 0.41s"],
        ),
        *a.edit("src/invoices/export_csv.py"),
        *a.say("Fixed: rows without a currency now default to the account's currency; tests/test_export_csv.py now passes."),
        *noise(a, half, rnd),
    ]
    two = [
        *a.user(f.turns[0]),
        *noise(a, half, rnd),
        *a.write("src/invoices/stream.py"),
        *a.say("Decided to write the rows in batches of 500 because memory grew past 2 GB on the largest customer."),
        *noise(a, half, rnd),
        *a.todo(["stream the rows to the file"], ["validate the currency codes against ISO 4217"]),
        *noise(a, half // 2, rnd),
    ]
    three = [
        *a.user(f.turns[1]),
        *noise(a, half, rnd),
        *a.edit("src/invoices/report.py"),
        *a.write("docs/csv_format.md"),
        *a.todo(
            ["the --since filter"], ["validate the currency codes against ISO 4217", "show a progress bar for exports over 10,000 rows"]
        ),
        *noise(a, half, rnd),
    ]
    four = [*a.user(f.turns[2]), *noise(a, half // 2, rnd), *a.edit("docs/csv_format.md")]
    return [one, two, three, four]


# --- running the cases -------------------------------------------------------------------------


def settings_for(backend: str, url: str | None) -> config.Settings:
    if backend == "heuristic":
        return config.Settings(summary=config.Summary(backend="heuristic"))
    return config.Settings(summary=config.Summary(backend="api", base_url=url, api_key="sk-ant-test", max_retries=0, timeout=20.0))


def synthetic(agent: str, backend: str, url: str | None, kb: int, home: Path, with_record: bool = False) -> list[dict]:
    """One agent's session written as its text log, a round where each compaction starts
    and one at the end, each given context echoed into what follows; `with_record`: and as
    the agent's own record of it, which the rounds read too."""
    source = "record" if with_record else "screen"
    record = fidelity_records.RECORDS[agent](str(home)) if with_record else None
    a = fidelity_records.Recorded(DRAWERS[agent], record) if record is not None else DRAWERS[agent]
    top = home / f"{agent}-{backend}-record"
    store = Store(home / f"{agent}-{backend}-{source}.db")
    log = home / f"{agent}-{backend}-{source}.log"
    log.write_text("")
    s = store.create_session(
        name=None, command=agent, argv=[agent], agent=agent, cwd=str(home), pid=os.getpid(), parent_id=None, options={}
    )
    store.update_session(s["id"], log_path=str(log), cast_path=str(home / "none.cast"))
    if record is not None:
        store.update_session(s["id"], agent_session_id=record.session_id)
    pattern_set = patterns.select(patterns.load_all([], env={}), agent)
    settings = settings_for(backend, url)
    parts = segments(a, kb, random.Random(f"{agent}"))
    out = []
    given = None
    for n, part in enumerate(parts, 1):
        lines = ([*a.echo(given)] if given else []) + part + (a.compaction()[:1] if n <= 3 else [])
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        if record is not None:
            if given:  # what supervise typed is in the agent's record too
                record.part = n
                record.user(given)
            record.write(top, n)
        trigger = "compaction_started" if n <= 3 else "session_end"
        row = rounds.make(
            store, store.get_session(s["id"]), trigger, settings, env={}, pattern_set=pattern_set, live=True, transcript_dir=top
        )
        if n <= 3:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write("\n".join(a.compaction()[1:]) + "\n")
        given = row["prompt"]
        out.append({**result(agent, backend, row, SYNTH, min(n, 3), n), "source_read": source})
    store.close()
    return out


def result(agent: str, backend: str, row: dict, facts: Facts, segment: int, latest_of: int) -> dict:
    scored = score(row["context"], facts, segment)
    scored["facts"]["latest"] = row["context"].get("latest_request") == facts.latest(latest_of)
    return {
        "agent": agent,
        "backend": backend,
        "round": row["round"],
        "trigger": row["trigger"],
        "source": row["source"],
        "error": row["error"],
        **scored,
    }


def demo(backend: str, url: str | None, home: Path) -> list[dict]:
    """The demo agent, run for real under supervise; the user types the turns."""
    import pexpect

    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_"))}
    env.update(SUPERVISE_HOME=str(home), TERM="xterm-256color", SUPERVISE_SUMMARY_BACKEND=backend)
    if backend == "api":
        env.update(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=url)
    supervise = str(Path(sys.executable).parent / "supervise")
    argv = ["run", "--agent", "demo", "--inject", "type", "--", sys.executable, "-P", "-m", "supervisor.cli.demo_agent", "--more"]
    child = pexpect.spawn(supervise, argv, env=env, encoding="utf-8", timeout=60, dimensions=(40, 120), cwd=str(home))
    try:
        child.expect_exact("demo: done: --json added and tested.")
        for turn in DEMO_TURNS[:2]:
            child.expect_exact("demo› ")
            child.send(turn + "\r")
            child.expect_exact("all tests passed")
            child.expect_exact("demo› ")
            child.send("/compact\r")
            child.expect_exact("demo: my task:")
        child.expect_exact("demo› ")
        child.send(DEMO_TURNS[2] + "\r")
        child.expect_exact("all tests passed")
        child.expect_exact("demo› ")
        child.send("/exit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    store = Store.open_default({"SUPERVISE_HOME": str(home)})
    sid = store.db.execute("select id from sessions order by started desc limit 1").fetchone()[0]
    deadline = time.monotonic() + 30  # the session-end round is made after the shell is back
    while time.monotonic() < deadline and not any(r["trigger"] == "session_end" for r in store.contexts(sid)):
        time.sleep(0.2)
    out = []
    compactions = 0
    for row in store.contexts(sid):
        if row["trigger"] == "compaction_started":
            compactions += 1
        ended = row["trigger"] == "session_end"
        segment = min(max(compactions, 1), 3)
        out.append(result("demo", backend, row, DEMO, segment, 4 if ended else segment))
    store.close()
    return out


# --- the table --------------------------------------------------------------------------------

COLUMNS = [
    ("req", ("request",)),
    ("latest", ("latest",)),
    ("files", tuple(f"file {i}" for i in range(1, 6))),
    ("decisions", ("decision 1", "decision 2")),
    ("error", ("error",)),
    ("fix", ("fix",)),
    ("pending", ("pending 1", "pending 2")),
]


def cell(facts: dict, names: tuple) -> str:
    present = [n for n in names if n in facts]
    if not present:
        return "-"
    kept = sum(facts[n] for n in present)
    return ("ok" if kept else "LOST") if len(names) == 1 else f"{kept}/{len(present)}"


def summary(results: list[dict]) -> dict:
    out = {}
    for backend in BACKENDS:
        rows = [r for r in results if r["backend"] == backend]
        if not rows:
            continue
        facts = [(r["agent"], r["round"], name, kept) for r in rows for name, kept in r["facts"].items()]
        lost: dict[str, int] = {}
        for agent, _, name, kept in facts:
            if not kept:
                lost[f"{agent}: {name}"] = lost.get(f"{agent}: {name}", 0) + 1
        out[backend] = {
            "rounds": len(rows),
            "request_pct": sum(r["facts"]["request"] for r in rows) / len(rows),
            "facts_pct": sum(k for *_, k in facts) / len(facts),
            "facts": len(facts),
            "echoes": sum(len(r["echoes"]) for r in rows),
            "sources": sorted({r["source"] for r in rows}),
            "lost": lost,
        }
    return out


def sources(screen: list[dict], read: list[dict]) -> dict:
    """(agent, backend) -> the share of facts kept reading the screen alone, and with the agent's record."""
    out = {}
    for agent, backend in dict.fromkeys((r["agent"], r["backend"]) for r in read):
        row: dict = {}
        for name, rows in (("screen", screen), ("record", read)):
            mine = [r for r in rows if r["agent"] == agent and r["backend"] == backend]
            facts = [k for r in mine for k in r["facts"].values()]
            row[name] = sum(facts) / len(facts) if facts else 0.0
            row[f"{name}_lost"] = sorted({f"{f} (round {r['round']})" for r in mine for f, k in r["facts"].items() if not k})
        out[(agent, backend)] = row
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--noise-kb", type=int, default=60, help="KB of noise around each part's facts (synthetic agents)")
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    began = time.monotonic()
    results: list[dict] = []
    read: list[dict] = []  # the same sessions read through the agents' own records as well
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as api:
        api.add(faithful, match=lambda r: (r.body.get("tool_choice") or {}).get("name") == schema.TOOL["name"], times=None)
        home = Path(tmp)
        demos: dict[str, list[dict]] = {}
        failures: list[BaseException] = []

        def run_demo(backend: str) -> None:
            try:
                demos[backend] = demo(backend, api.url, home / f"demo-{backend}")
            except BaseException as e:  # reported below, after the others ran
                failures.append(e)

        # The demo runs at a human pace, mostly asleep: both backends at once, beside the rest.
        threads = [threading.Thread(target=run_demo, args=(b,)) for b in BACKENDS] if "demo" in agents else []
        for t in threads:
            t.start()
        for agent in agents:
            if agent != "demo":
                for backend in BACKENDS:
                    results += synthetic(agent, backend, api.url, args.noise_kb, home)
                    if agent in fidelity_records.RECORDS:
                        read += synthetic(agent, backend, api.url, args.noise_kb, home, with_record=True)
        for t in threads:
            t.join()
        if failures:
            raise failures[0]
        results = [r for b in BACKENDS for r in demos.get(b, [])] + results
    took = time.monotonic() - began

    header = (
        f"{'agent':<9} {'round':>5} {'trigger':<19} {'backend':<9} "
        + " ".join(f"{c:>9}" for c, _ in COLUMNS)
        + f" {'echoes':>6} {'score':>6}"
    )
    print(header)
    for agent in agents:
        for r in sorted((r for r in results if r["agent"] == agent), key=lambda r: (r["round"], BACKENDS.index(r["backend"]))):
            kept = sum(r["facts"].values())
            backend = r["backend"] if r["source"] == "model" or r["backend"] == "heuristic" else f"{r['backend']}!"
            print(
                f"{agent:<9} {r['round']:>5} {r['trigger']:<19} {backend:<9} "
                + " ".join(f"{cell(r['facts'], names):>9}" for _, names in COLUMNS)
                + f" {len(r['echoes']):>6} {kept / len(r['facts']):>6.0%}"
            )
    figures = summary(results)
    print()
    for backend, s in figures.items():
        met = s["request_pct"] == 1 and s["facts_pct"] >= 0.95 and s["echoes"] == 0
        print(
            f"{backend}: request verbatim {s['request_pct']:.0%} (target 100%), facts {s['facts_pct']:.1%} of {s['facts']} "
            f"(target >= 95%), echoes {s['echoes']} (target 0), {s['rounds']} rounds: {'met' if met else 'NOT MET'}"
        )
        if s["lost"]:
            print("  lost (rounds): " + ", ".join(f"{k} ({v})" for k, v in sorted(s["lost"].items())))
    by_source = sources(results, read)
    if by_source:
        print("\nper agent, the screen alone beside its own record too (facts kept; the two requests verbatim):")
        for (agent, backend), row in by_source.items():
            lost = "; lost with its record: " + ", ".join(row["record_lost"]) if row["record_lost"] else ""
            print(f"  {agent:<9} {backend:<9} screen {row['screen']:.1%}   with its record {row['record']:.1%}{lost}")
    print(f"({took:.0f} s; '!' marks a round the api backend gave to the heuristic)")
    for r in results:
        if r["echoes"]:
            print(f"echo in {r['agent']} round {r['round']} ({r['backend']}): {r['echoes'][:2]}")
    if args.json:
        sourced = [{"agent": a, "backend": b, **row} for (a, b), row in by_source.items()]
        print(
            json.dumps(
                {"agents": agents, "noise_kb": args.noise_kb, "seconds": took, "backends": figures, "rounds": results, "sources": sourced}
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
