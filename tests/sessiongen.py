"""Generated agent sessions with planted facts, for testing and measuring the digest.

The noise is what real logs are full of: build and test output, progress lines, spinner
frames, repeated warnings, the same failing test over and over. The planted facts are what
a summary must keep: the original request, the files touched, decisions, errors and fixes.
"""

from __future__ import annotations

import random

REQUEST = (
    "❯ Build a CSV importer for the billing service: read invoices from data/invoices.csv, "
    "validate amounts and currencies, and write them to the ledger table. Keep the old XML path working."
)

# A context a model could make of such a session: what the summarizer tests have it answer.
CONTEXT = {
    "original_request": REQUEST,
    "current_task": "Handle empty currency columns",
    "completed_steps": ["Parser for data/invoices.csv"],
    "pending_steps": ["Report rejected rows"],
    "key_decisions": ["decimal.Decimal instead of float, because rounding lost cents"],
    "relevant_files": ["src/billing/importer.py"],
    "errors_and_resolutions": ["KeyError 'amount' — headers normalized"],
}

NOISE = [
    "   Compiling {w}-{n} v0.{n}.{m}",
    "test tests/test_{w}.py::test_{w}_{n} PASSED",
    "[{n:>3}%] ████████░░░░ downloading {w}",
    "✻ Thinking… ({n}s · ↓ {m} tokens)",
    "  {w} {w} {w} {w} {w} {w} {w} {w}",
    "WARNING: {w} is deprecated and will be removed in a future release",
    "DEBUG {w}: cache hit for key {n}-{m}",
    "● Read(src/{w}/{w}_{n}.rs)",
    "  ⎿  Read {n} lines",
    "────────────────────────────────────────────",
    "FAILED tests/test_legacy.py::test_flaky_network - TimeoutError",
]
WORDS = "alpha beta gamma delta parser module cache index token stream buffer queue worker".split()


def facts(n: int = 60) -> list[tuple[str, str]]:
    """(kind, line) facts; each line is unique and names something specific."""
    rnd = random.Random(42)
    out = [("request", REQUEST)]
    for i in range(n):
        kind = ["file", "decision", "error", "fix", "command", "user"][i % 6]
        tag = f"{rnd.choice(WORDS)}{i}"
        out.append(
            (
                kind,
                {
                    "file": f"● Update(src/billing/{tag}_importer.py)",
                    "decision": f"● Decided to use decimal.Decimal for {tag} amounts instead of float, because rounding lost cents",
                    "error": f"Error: KeyError '{tag}_amount' in src/billing/{tag}.py line {100 + i}",
                    "fix": f"● Fixed the {tag} header mapping; tests/test_{tag}.py now passes",
                    "command": f"● Bash(pytest tests/test_{tag}.py -x --maxfail=1)",
                    "user": f"❯ also handle the {tag} currency column when it is empty",
                }[kind],
            )
        )
    return out


def generate(size_bytes: int, n_facts: int = 60, seed: int = 7) -> tuple[str, list[tuple[str, str]]]:
    """A session log of about `size_bytes` with the facts spread through it, in order."""
    rnd = random.Random(seed)
    planted = facts(n_facts)
    chunks: list[str] = [planted[0][1], "  and report rejected rows in a summary at the end", ""]
    size = sum(len(c) + 1 for c in chunks)
    step = max(1, size_bytes // max(1, len(planted)))
    next_fact = 1
    while size < size_bytes:
        block = []
        for _ in range(200):
            t = rnd.choice(NOISE)
            block.append(t.format(w=rnd.choice(WORDS), n=rnd.randint(1, 99), m=rnd.randint(100, 9999)))
        text = "\n".join(block)
        chunks.append(text)
        size += len(text) + 1
        while next_fact < len(planted) and size >= next_fact * step:
            chunks.append(planted[next_fact][1])
            size += len(planted[next_fact][1]) + 1
            next_fact += 1
    chunks.extend(line for _, line in planted[next_fact:])
    chunks.append("❯ ")
    return "\n".join(chunks) + "\n", planted
