#!/usr/bin/env python3
"""Digest benchmark: generated sessions with planted facts (tests/sessiongen.py).

For each size: time to build the digest, its size against the budget, the share of
planted facts it kept, and the model input and cost of one summary with the default model
(the digest plus the system prompt and tool schema; 1,000 output tokens assumed). Targets:
100 MB in < 2 s, within budget, recall >= 95%, cost < $0.01.

Then a growing session: ROUNDS x 5 MB of log appended, a context round (heuristic, as
the recorder makes it) after each; each round's time against the log's length, beside a
digest of the whole log so far (what a round cost before rounds read only what was new).
Target: flat.

Usage: scripts/bench_digest.py [--sizes 1,10,100] [--budget 24000] [--rounds 12] [--json]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import sessiongen  # noqa: E402
from supervisor import config  # noqa: E402
from supervisor.contexts import digest, rounds, schema, summarizer  # noqa: E402
from supervisor.contexts.pricing import cost_usd  # noqa: E402
from supervisor.store.database import Store  # noqa: E402

OUTPUT_TOKENS = 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,10,100", help="MB, comma-separated")
    ap.add_argument("--budget", type=int, default=digest.DEFAULT_BUDGET)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    overhead = digest.estimate_tokens(summarizer.SYSTEM + json.dumps(schema.TOOL))
    model = config.DEFAULT_MODEL
    print(f"budget {args.budget} tokens; model {model}; summary = digest + {overhead} tokens of instructions, {OUTPUT_TOKENS} out")
    print(f"{'log':>7} {'build':>7} {'digest':>14} {'recall':>7} {'input':>7} {'cost':>8}")
    results = {"budget": args.budget, "model": model, "instructions_tokens": overhead, "output_tokens": OUTPUT_TOKENS, "sizes": []}
    for mb in (float(x) for x in args.sizes.split(",")):
        text, planted = sessiongen.generate(int(mb * 1_000_000))
        start = time.perf_counter()
        d = digest.build(text, args.budget)
        elapsed = time.perf_counter() - start
        kept = sum(1 for kind, line in planted if line in d.text or (kind == "request" and line in d.original_request))
        tokens_in = d.tokens + overhead
        cost = cost_usd(model, tokens_in, OUTPUT_TOKENS)
        print(f"{mb:>5g}MB {elapsed:>6.2f}s {d.tokens:>6}/{args.budget:<7} {kept / len(planted):>6.0%} {tokens_in:>7} ${cost:.4f}")
        results["sizes"].append(
            {
                "mb": mb,
                "build_s": elapsed,
                "tokens": d.tokens,
                "facts": len(planted),
                "recall": kept / len(planted),
                "input_tokens": tokens_in,
                "cost_usd": cost,
            }
        )
    full = cost_usd(model, args.budget + overhead, OUTPUT_TOKENS)
    print(f"worst case (a digest filling the whole budget): ${full:.4f} per summary")
    results["worst_case_cost_usd"] = full
    results["growing"] = growing(args.rounds, args.budget)
    if args.json:
        print(json.dumps(results))


def growing(count: int, budget: int) -> list[dict]:
    """The rounds' figures: log size (MB), round time, whole-log digest time (some rounds)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s.db")
        log = Path(tmp) / "session.log"
        s = store.create_session(
            name=None, command="claude", argv=["claude"], agent="claude", cwd=tmp, pid=os.getpid(), parent_id=None, options={}
        )
        store.update_session(s["id"], log_path=str(log), cast_path=str(Path(tmp) / "none.cast"))
        settings = config.Settings(summary=config.Summary(budget=budget))
        print(f"\ngrowing session, a round after each 5 MB:\n{'log':>7} {'round':>7} {'whole-log digest':>17}")
        for n in range(1, count + 1):
            text, _ = sessiongen.generate(5_000_000, seed=n)
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
            start = time.perf_counter()
            rounds.make(store, store.get_session(s["id"]), "periodic", settings, env={}, live=True)
            took = time.perf_counter() - start
            whole = ""
            whole_s = None
            if n in (1, count // 2, count):
                start = time.perf_counter()
                digest.build(log.read_text(encoding="utf-8"), budget)
                whole_s = time.perf_counter() - start
                whole = f"{whole_s:.2f}s"
            print(f"{log.stat().st_size / 1e6:>5.0f}MB {took:>6.2f}s {whole:>17}", flush=True)
            out.append({"log_mb": log.stat().st_size / 1e6, "round_s": took, "whole_log_digest_s": whole_s})
    return out


if __name__ == "__main__":
    main()
