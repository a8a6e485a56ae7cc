#!/usr/bin/env python3
"""What supervise remembers: how fast `supervise search` answers over many sessions' logs,
and whether search (the command and the MCP server's tool) finds the session a question
is about.

- search: for each of --sizes (SESSIONS:TOTAL_MB), a fresh data directory: its database
  opened by the product's Store (migrations run), the sessions inserted with sqlite3 (20
  projects, several agents, started over six months), each one's text log written to
  sessions/ID/session.log (generated noise and a few planted lines: a word of its own, an
  error's name, a file it touched; "kestrel" in one session of a hundred) and put into the
  search index by recording/logindex.py, as a session's end does (timed: MB/s). Reported:
  the database's size beside the logs', then `supervise search QUERY --all -n 20` from a
  new process, median of --runs after one untimed, for a word of one session, a word of 1%
  of them, a word of nearly every chunk (the noise's "cache"), a file name (1% of them),
  two words (the 1% word and an error's name), and the common word project-scoped (from a
  project's folder, no --all): one of the 20 and one whose sessions are the oldest 1% (few
  of the word's newest matches are its own); beside `supervise version` (the CLI's start-up
  alone). Target: < 200 ms at 10,000 sessions / 10 GB. Each size's data directory is
  deleted once measured, unless --keep names a folder to keep it in (and to take it from
  on the next run: indexing 10 GB takes about half an hour).
- recall: --sessions sessions across 6 project folders and 4 agents, each with planted
  facts among noise: its request, a decision ("decided to use X for the A B because Z"), an
  error and its fix, a file it changed, a step still open; a third of them with a context
  (the prompt as a round renders it). Each fact's words are in three other sessions' logs
  too, in passing and each on a line of its own (the topic's two words apart, the file's
  words in another file, the error seen once, the verb of something else): the
  distractors. Queries as one types them, never the planted sentence: the topic ("importer
  backlog"), the file ("net_client.py"), the error's name ("ECONNRESET"), the thing with
  another form of the planted verb ("importer migration" for "migrated").
  Recall@5 (the planted session among the first five hits' sessions) of `supervise search
  --json` from the fact's project folder and with --all (each a new process), and of the MCP
  `search` tool (the real `supervise mcp` on stdio, one server per project, started in its
  folder); tokens per MCP answer (estimate_tokens) and the time of each call. Targets:
  recall@5 >= 90%, every answer < 1,500 tokens.

Usage: scripts/bench_memory.py [--sizes 10:10,1000:1000,10000:10000] [--runs 7]
                               [--sessions 60] [--kb 64] [--only search|recall] [--json]
                               [--keep DIR]
(--json: the figures as one JSON object on the last line of stdout)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import sessiongen  # noqa: E402
from supervisor import project  # noqa: E402
from supervisor.contexts import schema  # noqa: E402
from supervisor.contexts.digest import estimate_tokens  # noqa: E402
from supervisor.paths import DB_NAME  # noqa: E402
from supervisor.recording import logindex  # noqa: E402
from supervisor.store.database import Store  # noqa: E402

# the supervise of the environment measured (the one beside this Python), else the PATH's
BESIDE = Path(sys.executable).parent / "supervise"
SUPERVISE = str(BESIDE) if BESIDE.exists() else shutil.which("supervise")
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
AGENTS = ("toy", "demo", "sh", "bash")
BEGAN = datetime(2026, 1, 1, tzinfo=timezone.utc)
MONTHS = timedelta(days=180)  # sessions started over this span

# --- search: generated data at scale ----------------------------------------------------

NOISE_BYTES = 8 << 20  # one buffer of noise, sliced differently for each session
PROJECTS = 20
SYLLABLES = "ka zo mi tu ve ra no shi pe lu da fo gi xa be yo".split()  # 16: 5 of them make 2**20 words
ERRNOS = "ECONNRESET ETIMEDOUT EADDRINUSE ECONNREFUSED ENOSPC EPIPE EACCES EMFILE ENOENT EHOSTUNREACH EAGAIN EBUSY".split()
FILE_A = "net http db io cli job feed auth blob mail".split()
FILE_B = "client server loader handler utils models views routes tasks codec".split()
FILES = [f"{a}_{b}.py" for a in FILE_A for b in FILE_B]  # net_client.py first
ONE_PERCENT = "kestrel"
COMMON = "cache"  # in nearly every line of sessiongen's noise that names a word


def rare_word(k: int) -> str:
    """A word of session k's own: five syllables, a different mix for each k (up to 2**20)."""
    n = (k * 7919 + 12345) % (1 << 20)  # an odd multiplier: one k, one n
    return "".join(SYLLABLES[n >> (4 * i) & 15] for i in range(5))


def noise(size: int, words: list[str], seed: int = 7) -> bytes:
    """About `size` bytes of the lines a session's log is full of (tests/sessiongen.py's)."""
    rnd = random.Random(seed)
    lines, total = [], 0
    while total < size:
        line = rnd.choice(sessiongen.NOISE).format(w=rnd.choice(words), n=rnd.randint(1, 99), m=rnd.randint(100, 9999))
        lines.append(line)
        total += len(line.encode()) + 1
    return ("\n".join(lines) + "\n").encode()


def take(buffer: bytes, at: int, size: int) -> bytes:
    """`size` bytes or so of whole lines of `buffer` (taken twice over: it wraps), from the line after `at`."""
    half = len(buffer) // 2
    start = buffer.find(b"\n", at % half) + 1
    piece = buffer[start : start + min(size, half)]
    return piece[: piece.rfind(b"\n") + 1]


def scale_log(k: int, size: int, project: str, buffer: bytes) -> bytes:
    """Session k's text log: the noise, with its planted lines a third of the way in."""
    rare, err, name = rare_word(k), ERRNOS[k % len(ERRNOS)], FILES[(k * 31 + 7) % len(FILES)]
    planted = [
        f"❯ look at the {rare} adapter again; it dropped rows overnight",
        f"● Update(src/{Path(project).name}/{name})",
        f"Error: {err} while the {rare} adapter synced src/{Path(project).name}/{name}",
    ]
    if k % 100 == 0:
        planted.append(f"● Decided to move the {ONE_PERCENT} shard off the shared host")
    middle = ("\n".join(planted) + "\n").encode()
    first = take(buffer, k * 104_729, size // 3)
    rest = size - len(first) - len(middle)
    parts = [first, middle]
    while rest > 0:  # a log longer than the buffer takes it again
        piece = take(buffer, k * 7_919 + rest, rest)
        if not piece:  # less than a line left
            break
        parts.append(piece)
        rest -= len(piece)
    return b"".join(parts)


def session_ids(count: int, seed: int) -> list[str]:
    """`count` distinct ids of six letters and digits, as supervise makes them."""
    return ["".join(ALPHABET[k // 36**i % 36] for i in range(6)) for k in random.Random(seed).sample(range(36**6), count)]


def build_scale(base: Path, count: int, total_mb: float, buffer: bytes) -> tuple[Path, list[str], dict]:
    """A data directory of `count` sessions whose logs hold `total_mb` MB, indexed."""
    home, folders = base / "home", [base / "projects" / f"p{i:02}" for i in range(PROJECTS)] + [base / "projects" / "old"]
    for f in folders:
        f.mkdir(parents=True)
    projects = [os.path.realpath(f) for f in folders]
    keys = [project.identify(project.of(f)) for f in projects]  # what a scoped search looks for (project.py)
    old = max(1, count // 100)  # the oldest sessions: a project last worked on months ago

    def of(k: int) -> int:
        return PROJECTS if k < old else k % PROJECTS

    ids = session_ids(count, count)
    rows = []
    for k, sid in enumerate(ids):
        started = BEGAN + MONTHS * k / count
        log = home / "sessions" / sid / "session.log"
        agent = AGENTS[k % len(AGENTS)]
        rows.append(
            (sid, agent, json.dumps([agent]), agent, projects[of(k)], projects[of(k)], keys[of(k)],
             started.isoformat(timespec="milliseconds"), (started + timedelta(minutes=20)).isoformat(timespec="milliseconds"),
             0, "completed", 0, str(log))
        )  # fmt: skip
    store = Store(home / DB_NAME)
    with store.conn:
        store.conn.executemany(
            "insert into sessions (id, command, argv, agent, cwd, project, project_key, started, ended, exit_code, status, pid, log_path)"
            " values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    size = int(total_mb * 1e6 / count)
    began, said, written = time.perf_counter(), time.perf_counter(), 0
    for k, sid in enumerate(ids):
        log = home / "sessions" / sid / "session.log"
        log.parent.mkdir(parents=True)
        written += log.write_bytes(scale_log(k, size, projects[of(k)], buffer))
        if time.perf_counter() - said > 10:
            said = time.perf_counter()
            print(f"  generated {k + 1:,}/{count:,} logs, {written / 1e6:,.0f} MB", file=sys.stderr, flush=True)
    made_s = time.perf_counter() - began
    began = said = time.perf_counter()
    for k, sid in enumerate(ids):
        logindex.index_new(store, sid, home / "sessions" / sid / "session.log")
        if time.perf_counter() - said > 10:
            said = time.perf_counter()
            done = (k + 1) * size / 1e6
            print(f"  indexed {k + 1:,}/{count:,} logs, {done:,.0f} MB, {done / (said - began):.1f} MB/s", file=sys.stderr, flush=True)
    index_s = time.perf_counter() - began
    store.conn.execute("pragma wal_checkpoint(truncate)")
    store.close()
    db = sum(p.stat().st_size for p in home.glob(DB_NAME + "*"))
    figures = {"sessions": count, "logs_mb": written / 1e6, "db_mb": db / 1e6, "generate_s": made_s, "index_s": index_s}
    figures["index_mb_s"] = written / 1e6 / index_s
    return home, projects, figures | {"rare": rare_word(count // 2)}


def median_ms_of(argv: list[str], cwd: str | Path, env: dict, runs: int, ok: tuple[int, ...] = (0,)) -> float:
    """The median wall time (ms) of `argv` from a new process, after one untimed (the files it
    reads in the page cache)."""
    times = []
    for i in range(runs + 1):
        began = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        if i:
            times.append((time.perf_counter() - began) * 1000)
        if proc.returncode not in ok:
            sys.exit(f"{' '.join(argv[-4:])} failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
    return statistics.median(times)


def median_ms(args: list[str], cwd: str | Path, env: dict, runs: int) -> float:
    """`supervise ARGS`'s (search: 1 when nothing is found)."""
    return median_ms_of([SUPERVISE, *args], cwd, env, runs, ok=(0, 1))


def search_ms(words: list[str], cwd: str | Path, env: dict, runs: int) -> tuple[float, int]:
    """`supervise search WORDS`'s median time (ms), and how many sessions its hits come from."""
    ms = median_ms(["search", *words], cwd, env, runs)
    found = subprocess.run([SUPERVISE, "search", *words, "--json"], cwd=cwd, env=env, capture_output=True, text=True)
    if found.returncode not in (0, 1):  # 1: nothing found (`[]`)
        sys.exit(f"supervise search {' '.join(words)} --json failed (exit {found.returncode}): {found.stderr.strip()[-300:]}")
    return ms, len({h["session_id"] for h in json.loads(found.stdout)})


def search(base: Path, env: dict, sizes: list[tuple[int, float]], runs: int, keep: Path | None) -> dict:
    buffer = noise(NOISE_BYTES, sessiongen.WORDS)
    buffer += buffer  # taken twice over: a slice may wrap
    out = {"runs": runs, "sizes": []}
    for count, total_mb in sizes:
        where = (keep or base) / f"search-{count}-{total_mb:g}"
        made = where / "made.json"  # a kept data directory's figures, and its projects
        if made.exists():
            print(f"search: {count:,} sessions, {total_mb:,.0f} MB of logs, as kept in {where}", file=sys.stderr, flush=True)
            kept = json.loads(made.read_text())
            home, projects, fig = where / "home", kept["projects"], kept["figures"]
        else:
            print(f"search: {count:,} sessions, {total_mb:,.0f} MB of logs ...", file=sys.stderr, flush=True)
            shutil.rmtree(where, ignore_errors=True)
            home, projects, fig = build_scale(where, count, total_mb, buffer)
            made.write_text(json.dumps({"projects": projects, "figures": fig}))
        home_env = {**env, "SUPERVISE_HOME": str(home)}
        queries = {
            "a rare word": [fig["rare"]],  # of one session
            "a 1% word": [ONE_PERCENT],
            "a common word": [COMMON],  # of nearly every chunk
            "a file name": [FILES[0]],  # of 1% of sessions
            "two words": [ONE_PERCENT, ERRNOS[0]],
        }
        fig["startup_ms"] = median_ms(["version"], where, home_env, runs)
        fig["queries"] = {}
        for label, words in queries.items():
            ms, found = search_ms([*words, "--all", "-n", "20"], where, home_env, runs)
            fig["queries"][label] = {"query": " ".join(words), "ms": ms, "sessions_found": found}
        for label, folder in (("the common word, project-scoped", projects[0]), ("  in a project of old sessions", projects[-1])):
            ms, found = search_ms([COMMON, "-n", "20"], folder, home_env, runs)
            fig["queries"][label] = {"query": COMMON, "ms": ms, "sessions_found": found}
        if not all(q["sessions_found"] for q in fig["queries"].values()):
            sys.exit(f"bench_memory: a query that must find something found nothing: {fig['queries']}")
        if not keep:
            shutil.rmtree(where)
        out["sizes"].append(fig)
        print(
            f"\n{count:,} sessions, {fig['logs_mb']:,.0f} MB of logs: database {fig['db_mb']:,.0f} MB ({fig['db_mb'] / fig['logs_mb']:.2f}x); "
            f"generated in {fig['generate_s']:.1f} s, indexed in {fig['index_s']:.1f} s ({fig['index_mb_s']:.1f} MB/s); "
            f"`supervise version` {fig['startup_ms']:.0f} ms"
        )
        print(f"{'query':<32} {'text':<20} {'ms':>7} {'x start-up':>10} {'sessions in 20 hits':>20}")
        for label, q in fig["queries"].items():
            print(
                f"{label:<32} {q['query']:<20} {q['ms']:>7.0f} {q['ms'] / fig['startup_ms']:>10.2f} {q['sessions_found']:>20}", flush=True
            )
    return out


# --- recall: planted facts among distractors ---------------------------------------------

PROJECT_NAMES = "shop billing crawler mobile infra docs".split()
THINGS = (
    "importer ledger invoice webhook scheduler mailer thumbnail crawler router gateway uploader "
    "notifier exporter checkout payment report audit backup inventory catalog sitemap"
).split()
# none a word of the noise, nor of another list here once stemmed ("batches" and "batched" would be one word)
PARTS = "backlog cursors schema mappings pool client store timeouts locks quotas shards tenants".split()
TOOLS = "redis sqlite kafka celery asyncio postgres rabbitmq nats duckdb zstd protobuf grpc httpx tenacity".split()
REASONS = (
    "it survives a restart",
    "the old one lost messages under load",
    "we already run it in production",
    "it keeps the tests under a minute",
    "the vendor library leaked file handles",
    "it needs no extra service",
)
GOALS = ("speed up", "fix the flaky tests of", "add metrics to", "make restartable", "clean up", "document")
ERRORS = (
    "ECONNRESET ETIMEDOUT EADDRINUSE ECONNREFUSED ENOSPC EPIPE EACCES EMFILE ENOENT EHOSTUNREACH ENETUNREACH EAGAIN "
    "EBUSY EEXIST EISDIR ENOTDIR EROFS ENOMEM EPERM ENOTEMPTY ECONNABORTED EPROTO KeyError IndexError ValueError "
    "AttributeError RecursionError ZeroDivisionError UnicodeDecodeError ConnectionResetError BrokenPipeError "
    "IntegrityError OperationalError ValidationError JSONDecodeError ModuleNotFoundError PermissionError "
    "FileExistsError NotADirectoryError OverflowError MemoryError StopIteration AssertionError ImportError "
    "ERR_REQUIRE_ESM ERR_MODULE_NOT_FOUND SIGSEGV SIGKILL OOMKilled CrashLoopBackOff ImagePullBackOff "
    "DeadlineExceeded NullPointerException ConcurrentModificationException ClassCastException StackOverflowError "
    "SQLITE_BUSY SQLITE_CORRUPT E0382 E0502 TS2345 TS2322"
).split()
FIXES = (
    "added backoff between attempts",
    "closed the file handles",
    "pinned the dependency",
    "raised the connection cap",
    "guarded the empty row",
)
# (the form planted, the form a query uses, the sentence it is planted in)
VERBS = (
    ("migrated", "migration", "the {t} rows still have to be migrated to the new layout"),
    ("retrying", "retried", "the {t} job keeps retrying after a 503; cap it"),
    ("throttled", "throttling", "the {t} calls must be throttled to 5 per second"),
    ("normalized", "normalization", "the {t} headers are not normalized yet"),
    ("paginated", "pagination", "the {t} listing should be paginated, 100 rows a page"),
    ("validated", "validation", "the {t} payloads are not validated on input yet"),
    ("compressed", "compression", "the {t} archives should be compressed before they are sent"),
    ("encrypted", "encryption", "the {t} secrets must be encrypted at rest"),
    ("rotated", "rotation", "the {t} keys have to be rotated every 30 days"),
    ("deduplicated", "deduplication", "the {t} events must be deduplicated by id"),
    ("batched", "batching", "the {t} writes should be batched, 500 at a time"),
    ("serialized", "serialization", "the {t} records are serialized twice; drop one"),
)
DISTRACTED = 3  # other sessions whose facts each log mentions in passing
KINDS = ("topic", "file", "error", "word form")


def plan(count: int, seed: int = 11) -> list[dict]:
    """Each session's facts: a topic, a file, an error and a verb of its own (distinct pairs)."""
    rnd = random.Random(seed)
    topics = [(t, p) for t in THINGS for p in PARTS]
    rnd.shuffle(topics)
    topics.remove(("importer", "backlog"))
    topics.insert(0, ("importer", "backlog"))
    files = FILES[1:]
    rnd.shuffle(files)
    files.insert(0, FILES[0])
    forms, facts = set(), []
    for i in range(count):
        thing, part = topics[i % len(topics)]
        turns = [VERBS[(i + j) % len(VERBS)] for j in range(len(VERBS))]
        verb = next((v for v in turns if (thing, v[0]) not in forms), turns[0])  # the thing with this verb in one session only
        forms.add((thing, verb[0]))
        facts.append(
            {
                "thing": thing, "part": part, "file": files[i % len(files)], "error": ERRORS[i % len(ERRORS)],
                "unique_error": i < len(ERRORS), "verb": verb, "tool": rnd.choice(TOOLS), "reason": rnd.choice(REASONS),
                "goal": rnd.choice(GOALS), "fix": rnd.choice(FIXES), "project": i % len(PROJECT_NAMES), "agent": AGENTS[i % len(AGENTS)],
            }
        )  # fmt: skip
    return facts


def fact_lines(f: dict) -> dict[str, str]:
    path = f"src/{f['thing']}/{f['file']}"
    return {
        "request": f"❯ {f['goal']} the {f['thing']} {f['part']}; the nightly run stalls on big files",
        "file": f"● Update({path})",
        "decision": f"● Decided to use {f['tool']} for the {f['thing']} {f['part']} because {f['reason']}",
        "error": f"Error: {f['error']} in {path} line {40 + len(f['thing'])}",
        "fix": f"● Fixed {f['error']}: {f['fix']}; tests pass again",
        "pending": "● Next: " + f["verb"][2].format(t=f["thing"]),
    }


def passing(f: dict, rnd: random.Random) -> list[str]:
    """Lines of another session that name this one's fact words in passing, each on its own."""
    a, b = f["file"].removesuffix(".py").split("_")
    n, m = rnd.randint(2, 99), rnd.randint(100, 9999)
    return [
        f"DEBUG {f['thing']}: cache hit for key {n}-{m}",
        f"WARNING: {f['part']} at {n}% of the budget",
        f"● Read(src/{a}/{b}.rs)",
        f"WARNING: saw {f['error']} once; it went away on its own",
        f"  {m} rows {f['verb'][0]} in {n} ms",
    ]


def recall_log(i: int, facts: list[dict], kb: int, words: list[str], extra: tuple[str, ...] = ()) -> str:
    """Session i's log: noise, its own facts in order, other sessions' words in passing (and
    `extra` lines, each at a place of its own)."""
    rnd = random.Random(i)
    own = fact_lines(facts[i])
    others = [o for o in rnd.sample(range(len(facts)), min(len(facts), DISTRACTED + 1)) if o != i][:DISTRACTED]
    lines = noise(kb * 1000, words, seed=100 + i).decode().splitlines()
    for line in (line for o in others for line in passing(facts[o], rnd)):
        lines.insert(rnd.randrange(len(lines)), line)
    for line in extra:
        lines.insert(rnd.randrange(1, len(lines)), line)
    # its facts at their places: the request first, the fix after its error, the open step late
    at = sorted(rnd.sample(range(1, len(lines)), 4))
    for place, keys in reversed(list(zip(at, (("file",), ("decision",), ("error", "fix"), ("pending",))))):
        lines[place:place] = [own[k] for k in keys]
    return "\n".join([own["request"], *lines]) + "\n"


def build_recall(base: Path, count: int, kb: int, planted: dict[int, str] | None = None) -> tuple[Path, list[str], list[dict], list[str]]:
    """`planted`: a line more in some sessions' logs, by their number."""
    home = base / "home"
    folders = [base / "projects" / name for name in PROJECT_NAMES]
    for f in folders:
        f.mkdir(parents=True)
    projects = [os.path.realpath(f) for f in folders]
    facts = plan(count)
    words = [w for w in sessiongen.WORDS if w not in THINGS + PARTS]
    ids = session_ids(count, 1000 + count)
    store = Store(home / DB_NAME)
    for i, (sid, f) in enumerate(zip(ids, facts)):
        log = home / "sessions" / sid / "session.log"
        log.parent.mkdir(parents=True)
        log.write_text(recall_log(i, facts, kb, words, tuple(filter(None, [(planted or {}).get(i)]))))
        started = BEGAN + MONTHS * i / count
        where = projects[f["project"]]
        store.create_session(
            sid, command=f["agent"], argv=[f["agent"]], agent=f["agent"], cwd=where, project=where, log_path=str(log),
            started=started.isoformat(timespec="milliseconds"), ended=(started + timedelta(hours=1)).isoformat(timespec="milliseconds"),
            status="completed", exit_code=0,
        )  # fmt: skip
        logindex.index_new(store, sid, log)
        if i % 3 == 0:
            lines = fact_lines(f)
            context = {
                "original_request": lines["request"].removeprefix("❯ "),
                "current_task": lines["pending"].removeprefix("● Next: "),
                "completed_steps": [f"changed src/{f['thing']}/{f['file']}"],
                "pending_steps": [lines["pending"].removeprefix("● Next: ")],
                "key_decisions": [lines["decision"].removeprefix("● ")],
                "relevant_files": [f"src/{f['thing']}/{f['file']}"],
                "errors_and_resolutions": [f"{f['error']}: {f['fix']}"],
            }
            store.add_context(sid, lambda r, c=context: schema.render(c, r), trigger="end", source="heuristic", context=context)
    store.close()
    return home, projects, facts, ids


def queries(facts: list[dict], ids: list[str]) -> list[dict]:
    out = []
    for sid, f in zip(ids, facts):
        asked = {"topic": f"{f['thing']} {f['part']}", "file": f["file"], "error": f["error"], "word form": f"{f['thing']} {f['verb'][1]}"}
        for kind in KINDS:
            if kind != "error" or f["unique_error"]:
                out.append({"session": sid, "project": f["project"], "kind": kind, "query": asked[kind]})
    return out


class Mcp:
    """`supervise mcp` as an agent runs it: JSON-RPC lines on its stdin and stdout."""

    def __init__(self, cwd: str, env: dict):
        began = time.perf_counter()
        self.proc = subprocess.Popen(
            [SUPERVISE, "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.ids = 0
        self.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        self.start_ms = (time.perf_counter() - began) * 1000  # launched until it answered `initialize`
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.definitions = json.dumps(self.ask("tools/list")["tools"])  # what every request of an agent carries

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict | None = None) -> dict:
        self.ids += 1
        self.send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit(f"supervise mcp ended (exit {self.proc.wait()}) before answering {method}")
            answer = json.loads(line)
            if answer.get("id") == self.ids:  # not a notification
                return answer["result"]

    def call(self, tool: str, **args) -> str:
        return "".join(c["text"] for c in self.ask("tools/call", {"name": tool, "arguments": args})["content"])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(10)


MCP_HIT = re.compile(r"^([0-9a-z]+)(?:@\d+|#\d+) · ", re.M)


def recall(base: Path, env: dict, count: int, kb: int) -> dict:
    where = base / "recall"
    home, projects, facts, ids = build_recall(where, count, kb)
    home_env = {**env, "SUPERVISE_HOME": str(home)}
    asked = queries(facts, ids)
    cli_ms, mcp_ms, tokens, misses = [], [], [], []
    found = {"project": 0, "all": 0, "mcp": 0}
    kinds = {k: {"asked": 0, "project": 0, "all": 0, "mcp": 0} for k in KINDS}
    servers = [Mcp(p, home_env) for p in projects]
    try:
        for q in asked:
            kinds[q["kind"]]["asked"] += 1
            for mode, cwd, flags in (("project", projects[q["project"]], []), ("all", where, ["--all"])):
                began = time.perf_counter()
                out = subprocess.run(
                    [SUPERVISE, "search", *q["query"].split(), "--json", *flags], cwd=cwd, env=home_env, capture_output=True, text=True
                )
                cli_ms.append((time.perf_counter() - began) * 1000)
                if out.returncode not in (0, 1):  # 1: nothing found (`[]`), a miss
                    sys.exit(f"supervise search {q['query']} failed (exit {out.returncode}): {out.stderr.strip()[-300:]}")
                hits = json.loads(out.stdout)
                top = [h["session_id"] for h in hits[:5]]
                if q["session"] in top:
                    found[mode] += 1
                    kinds[q["kind"]][mode] += 1
                else:
                    misses.append({**q, "mode": mode, "top": [f"{h['session_id']}: {h['line'][:90]}" for h in hits[:5]]})
            began = time.perf_counter()
            answer = servers[q["project"]].call("search", query=q["query"])
            mcp_ms.append((time.perf_counter() - began) * 1000)
            tokens.append(estimate_tokens(answer))
            if q["session"] in MCP_HIT.findall(answer)[:5]:
                found["mcp"] += 1
                kinds[q["kind"]]["mcp"] += 1
            else:
                misses.append({**q, "mode": "mcp", "top": [line[:110] for line in answer.splitlines()[2:7]]})
        server = {
            "start_ms": statistics.median(x.start_ms for x in servers),
            "rss_mb": statistics.median(x.rss_mb() for x in servers),
            "definitions_chars": len(servers[0].definitions),
            "definitions_tokens": estimate_tokens(servers[0].definitions),
            "python_ms": median_ms_of([sys.executable, "-c", "pass"], where, home_env, 5),
        }
    finally:
        for s in servers:
            s.close()
    shutil.rmtree(where)
    n = len(asked)
    out = {
        "sessions": count, "projects": len(projects), "agents": len(AGENTS), "kb": kb, "queries": n,
        "recall": {mode: hits / n for mode, hits in found.items()}, "kinds": kinds,
        "tokens_max": max(tokens), "tokens_median": statistics.median(tokens),
        "cli_ms_median": statistics.median(cli_ms), "mcp_ms_median": statistics.median(mcp_ms), "mcp_ms_max": max(mcp_ms),
        "misses": misses, "server": server,
    }  # fmt: skip
    print(f"\nrecall@5: {count} sessions ({kb} KB logs) in {len(projects)} projects, {n} queries")
    print(f"{'kind':<10} {'asked':>6} {'search':>8} {'--all':>8} {'mcp':>8}")
    for kind, k in kinds.items():
        print(f"{kind:<10} {k['asked']:>6} " + " ".join(f"{k[m] / max(1, k['asked']):>8.0%}" for m in ("project", "all", "mcp")))
    print(f"{'all':<10} {n:>6} " + " ".join(f"{out['recall'][m]:>8.0%}" for m in ("project", "all", "mcp")))
    print(
        f"MCP answers: {out['tokens_max']} tokens at most, {out['tokens_median']:.0f} median; "
        f"a call {out['mcp_ms_median']:.1f} ms median ({out['mcp_ms_max']:.1f} ms max); `supervise search --json` {out['cli_ms_median']:.0f} ms median"
    )
    print(
        f"MCP server: answers `initialize` {server['start_ms']:.0f} ms after launch (median of {len(projects)}; a bare Python "
        f"{server['python_ms']:.0f} ms), {server['rss_mb']:.0f} MB resident; tool definitions {server['definitions_chars']:,} characters "
        f"(~{server['definitions_tokens']} tokens)"
    )
    for m in misses:
        print(f"missed ({m['mode']}, {m['kind']}): {m['query']!r} for {m['session']}; top: " + " | ".join(m["top"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10:10,1000:1000,10000:10000", help="SESSIONS:TOTAL_MB of logs, comma-separated")
    ap.add_argument("--runs", type=int, default=7, help="runs of each search (the median is kept)")
    ap.add_argument("--sessions", type=int, default=60, help="sessions of the recall part")
    ap.add_argument("--kb", type=int, default=64, help="KB of noise in each recall session's log")
    ap.add_argument("--only", choices=["search", "recall"])
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    ap.add_argument("--keep", type=Path, help="keep each size's data directory in this folder, and use the one kept there")
    args = ap.parse_args()
    if not SUPERVISE:
        sys.exit(f"no supervise beside {sys.executable} nor on the PATH")
    sizes = [(int(n), float(mb)) for n, mb in (pair.split(":") for pair in args.sizes.split(","))]
    base = Path(os.path.realpath(tempfile.mkdtemp(prefix="bench-memory-")))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SUPERVISE_"))}
    results = {}
    try:
        if args.only in (None, "search"):
            results["search"] = search(base, env, sizes, args.runs, args.keep and args.keep.resolve())
        if args.only in (None, "recall"):
            results["recall"] = recall(base, env, args.sessions, args.kb)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
