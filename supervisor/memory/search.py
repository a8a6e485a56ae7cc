"""Full-text search over what was recorded: every session's text log (its chunks in the
index, store/migrations.py) and the contexts made of it (the user's requests verbatim, the
decisions, the errors). Hits ranked by bm25, newest first among equals (and for words in
very many chunks of the logs, the newest), each shown as its best line; scoped to a project,
an agent, a time.

Reads only: the index is kept by the recorder and the context keeper as logs grow
(recording/logindex.py), and made again from the logs by `reindex`."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from pathlib import Path

from ..recording import logindex
from ..store import damage
from ..store.database import Store
from . import query
from .query import CLOSE, OPEN, Line

LIMIT = 10
# Candidates read per hit wanted: several chunks of one session may say the same line.
OVERFETCH = 4
# Two scores this close are equals (the newer session first).
RANK_STEP = 0.05
RANKED = 20_000  # the most matching chunks a query ranks; words in more are found newest first
# A scope with few of such a word's newest matches is searched through its own chunks while
# they are at most SCOPED, in at most RUNS runs of consecutive ids (a query each).
SCOPED = 200_000
RUNS = 2_000
LINES_PER_CHUNK = 3  # matching lines shown from one chunk of a log (the others: `excerpt`)
RERANKED = 10  # the fewest chunks whose lines are ranked by the words they hold


@dataclass(frozen=True)
class Scope:
    """Which sessions a search looks in."""

    project: str | None = None  # a project's key (project.py); None: every project
    agent: str | None = None
    since: str | None = None  # UTC ISO time
    session: str | None = None


@dataclass(frozen=True)
class Hit:
    """One line found, and the session it is from."""

    id: str  # "SESSION@OFFSET" (a text log's line) or "SESSION#ROUND" (a context)
    session_id: str
    agent: str | None
    project: str | None  # the folder it ran in (its git top-level)
    branch: str | None
    project_key: str | None  # what its project is known by (project.py)
    when: str  # UTC ISO: the session's start, or the context's making
    source: str  # log | context
    offset: int | None  # where in the text log its line's first match is, in bytes (log hits)
    round: int | None  # the context's round (context hits)
    line: Line
    rank: float

    def as_json(self) -> dict:
        out = asdict(self)
        out["line"], out["marks"] = self.line.text, [list(m) for m in self.line.marks]
        del out["rank"]
        return out


_SCOPE_SQL = {
    "project": "s.project_key = :project",
    "agent": "s.agent = :agent",
    "since": "s.started >= :since",
    "session": "s.id = :session",
}


def _where(scope: Scope) -> tuple[str, dict]:
    params = {k: v for k, v in asdict(scope).items() if v is not None}
    return "".join(f" and {_SCOPE_SQL[k]}" for k in params), params


def search(store: Store, text: str, scope: Scope = Scope(), limit: int = LIMIT) -> list[Hit]:
    """The best `limit` hits for `text` (query.BadQuery when it has no words)."""
    hits = _search(store, query.match(text), scope, limit)
    if not hits and len(query.terms(text)) > 1:
        hits = _search(store, query.match(text, every=False), scope, limit)
    return hits


def _search(store: Store, expression: str, scope: Scope, limit: int) -> list[Hit]:
    where, params = _where(scope)
    params = {**params, "q": expression, "n": limit * OVERFETCH}
    conn = store.conn
    found: list[tuple[float, str, str, int, dict]] = []  # (rank, when, source, key, session)
    logs = _readable(store, lambda: _logs(conn, where, params), [])
    contexts = _readable(
        store,
        lambda: conn.execute(
            "select c.id, f.rank, s.id, s.agent, s.project, s.branch, s.project_key, c.created from contexts_fts f"
            " join contexts c on c.id = f.rowid join sessions s on s.id = c.session_id"
            f" where contexts_fts match :q{where} order by f.rank limit :n",
            params,
        ).fetchall(),
        [],
    )
    for source, rows in (("log", logs), ("context", contexts)):
        for key, rank, sid, agent, proj, branch, proj_key, when in rows:
            session = {"session_id": sid, "agent": agent, "project": proj, "branch": branch, "project_key": proj_key}
            found.append((rank, when or "", source, key, session))
    # bm25 is negative, lower better; equals (to a step) newest first
    found.sort(key=lambda f: f[1], reverse=True)
    found.sort(key=lambda f: round(f[0] / RANK_STEP))  # stable: the newer first among equals
    # a line that holds more of the words first (the index matched them in a chunk, maybe
    # lines apart), among the best chunks: each one's lines cost a query
    best = found[: max(limit, RERANKED)]
    candidates = [
        hit
        for rank, when, source, key, session in best
        for hit in _readable(store, lambda: _hits(conn, expression, source, key, rank, when, session), [])
    ]
    candidates.sort(key=lambda hit: -hit.line.terms)
    hits: list[Hit] = []
    seen: set[tuple[str, str]] = set()
    for hit in candidates:
        if (hit.session_id, hit.line.text) not in seen:
            seen.add((hit.session_id, hit.line.text))
            hits.append(hit)
    return hits[:limit]


def _readable(store: Store, read, unread: list) -> list:
    """What `read` finds; `unread` where it meets a bad page of the index or the tables (the
    answer is then said to be incomplete: store/damage.py)."""
    try:
        return read()
    except sqlite3.DatabaseError as exc:
        if not damage.is_damage(exc):
            raise
    store.incomplete = True
    damage.met(store.path)
    return unread


def _logs(conn: sqlite3.Connection, where: str, params: dict) -> list[tuple]:
    """The best chunks of the logs: ranked by bm25 while the words are in at most RANKED
    chunks; past that, the newest (bm25 would walk every match for the words' weight and score
    each, a cost that grows with the logs; a word that common carries next to no weight)."""
    select = (
        "select c.id, {rank}, s.id, s.agent, s.project, s.branch, s.project_key, s.started from log_chunks_fts f"
        " join log_chunks c on c.id = f.rowid join sessions s on s.id = c.session_id"
        f" where log_chunks_fts match :q{where}{{floor}} order by {{order}} limit :n"
    )
    floor = conn.execute(
        "select rowid from log_chunks_fts where log_chunks_fts match :q order by rowid desc limit 1 offset :cap",
        {"q": params["q"], "cap": RANKED},
    ).fetchone()
    if floor is None:
        return conn.execute(select.format(rank="f.rank", floor="", order="f.rank"), params).fetchall()
    newest = select.format(rank="0.0", floor="{floor}", order="f.rowid desc")
    rows = conn.execute(newest.format(floor=" and f.rowid > :floor"), {**params, "floor": floor[0]}).fetchall()
    if len(rows) >= params["n"]:
        return rows
    # a scope with few of the newest matches: its own chunks' matches, the newest first
    runs = _runs(conn, where, params)
    if runs is None:
        return conn.execute(newest.format(floor=""), params).fetchall()
    found: list[int] = []
    for low, high in runs:
        found += [
            rowid
            for (rowid,) in conn.execute(
                "select rowid from log_chunks_fts where log_chunks_fts match :q and rowid between :low and :high"
                " order by rowid desc limit :n",
                {"q": params["q"], "low": low, "high": high, "n": params["n"] - len(found)},
            )
        ]
        if len(found) >= params["n"]:
            break
    marks = ",".join("?" * len(found))
    return conn.execute(
        "select c.id, 0.0, s.id, s.agent, s.project, s.branch, s.project_key, s.started from log_chunks c"
        f" join sessions s on s.id = c.session_id where c.id in ({marks}) order by c.id desc",
        found,
    ).fetchall()


def _runs(conn: sqlite3.Connection, where: str, params: dict) -> list[tuple[int, int]] | None:
    """The scope's chunks as runs of consecutive ids, the newest first; None when it has more
    than SCOPED chunks or they lie in more than RUNS runs (each run costs a query; walking
    every match of the words is then the cheaper way)."""
    ids = [
        cid
        for (cid,) in conn.execute(
            f"select c.id from sessions s cross join log_chunks c where c.session_id = s.id{where} limit :cap",
            {**params, "cap": SCOPED + 1},  # (the query's own :q and :n are not named here)
        )
    ]
    if len(ids) > SCOPED:
        return None
    runs: list[list[int]] = []
    for cid in sorted(ids):
        if runs and runs[-1][1] == cid - 1:
            runs[-1][1] = cid
        else:
            runs.append([cid, cid])
    return None if len(runs) > RUNS else [(low, high) for low, high in reversed(runs)]


def _hits(conn: sqlite3.Connection, expression: str, source: str, key: int, rank: float, when: str, session: dict) -> list[Hit]:
    """One candidate as hits: its best lines, marked by the index itself."""
    if source == "log":
        row = conn.execute(
            "select highlight(log_chunks_fts, 0, char(1), char(2)), c.start from log_chunks_fts f join log_chunks c on c.id = f.rowid"
            " where log_chunks_fts match ? and f.rowid = ?",
            [expression, key],
        ).fetchone()
    else:
        row = conn.execute(
            "select highlight(contexts_fts, 0, char(1), char(2)), c.round from contexts_fts f join contexts c on c.id = f.rowid"
            " where contexts_fts match ? and f.rowid = ?",
            [expression, key],
        ).fetchone()
    if row is None:
        return []
    marked, where = row
    sid = session["session_id"]
    facts = (session["agent"], session["project"], session["branch"], session["project_key"], when, source)
    out = []
    for line in query.lines(marked, LINES_PER_CHUNK):
        if source == "log":
            offset = where + _bytes_before(marked, line.at + line.first)  # the match: in a very long line, far from its start
            out.append(Hit(f"{sid}@{offset}", sid, *facts, offset, None, line, rank))
        else:
            out.append(Hit(f"{sid}#{where}", sid, *facts, None, where, line, rank))
    return out


def _bytes_before(marked: str, at: int) -> int:
    """Bytes of the chunk before character `at` (its marks not counted)."""
    return len(marked.replace(OPEN, "").replace(CLOSE, "")[:at].encode("utf-8"))


def caught_up(store: Store) -> int:
    """The end of each session whose recorder was stopped before it indexed it, indexed now
    (where the data folder can be written); how many."""
    if store.read_only or not logindex.behind(store):
        return 0
    return logindex.catch_up(store)


def reindex(store: Store, report=None) -> tuple[int, int]:
    """The search index made again from every session's text log (a running one's up to
    where it is: its recorder adds the rest) and every context: for an index lost or damaged
    (the logs are the record; the index is made from them). Returns (sessions, chunks)."""
    conn = store.conn
    store.mark_dead_sessions()
    with conn:
        # made to match its chunks first: deleting them from an index that lost them fails
        conn.execute("insert into log_chunks_fts(log_chunks_fts) values ('rebuild')")
        conn.execute("delete from log_chunks")
        conn.execute("insert into log_chunks_fts(log_chunks_fts) values ('rebuild')")
        conn.execute("insert into contexts_fts(contexts_fts) values ('rebuild')")
    sessions = chunks = 0
    for sid, log_path, status in conn.execute(
        "select id, log_path, status from sessions where log_path is not null order by started"
    ).fetchall():
        path = Path(store.located(log_path) or log_path)
        if not path.exists():
            continue
        index = logindex.index_new if status == "active" else logindex.finish
        chunks += index(store, sid, path)
        sessions += 1
        if report is not None:
            report(sessions)
    return sessions, chunks
