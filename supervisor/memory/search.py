"""Full-text search over what was recorded: every session's text log (its chunks in the
index, store/migrations.py) and the contexts made of it (the user's requests verbatim, the
decisions, the errors). Hits ranked by bm25, newest first among equals (and for words in
very many chunks of the logs, the newest), each shown as its best line; scoped to a project,
an agent, a time.

With the question embedded (an embeddings endpoint set), the lines nearest its meaning are
fused in (similar.py). Reads only: the index is kept by the recorder and the context keeper
as logs grow (recording/logindex.py), and made again from the logs by `reindex`."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from .. import bigrams
from ..store import damage, grams, searched
from ..store.database import Store
from . import named, query, tally
from .query import CLOSE, OPEN, Line

if TYPE_CHECKING:  # (search by meaning, opt-in: its modules are loaded by a search that asks)
    from . import similar

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
PER_SESSION = 3  # hits shown of one session to a person (how many more it holds is counted) unless one session is searched
POOL = 4  # candidates read per hit wanted, past OVERFETCH: a long session's chunks leave room for other sessions
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

    id: str  # "SESSION@OFFSET" (a text log's line), "SESSION#ROUND" (a context) or "SESSION" (its name)
    session_id: str
    agent: str | None
    project: str | None  # the folder it ran in (its git top-level)
    branch: str | None
    project_key: str | None  # what its project is known by (project.py)
    when: str  # UTC ISO: the session's start, or the context's making
    source: str  # log | context | session (its name, agent, branch or id)
    offset: int | None  # where in the text log its line's first match is, in bytes (log hits)
    round: int | None  # the context's round (context hits)
    line: Line
    rank: float
    matches: int = 0  # lines of its session that match (log, contexts, name); tally.py
    matches_more: bool = False  # the session has more matching chunks than were counted: at least `matches`

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


@dataclass(frozen=True)
class Index:
    """Which of the two full-text indexes a query asks (store/grams.py), and how."""

    logs: str  # its table over the logs' chunks
    contexts: str  # its table over the contexts
    expression: str  # the query in its syntax
    words: tuple[str, ...] | None  # the query's terms, to mark in a hit's text (None: the index marks them)


def search(
    store: Store,
    text: str,
    scope: Scope = Scope(),
    limit: int = LIMIT,
    per_session: int = PER_SESSION,
    meaning: similar.Meaning | None = None,
) -> list[Hit]:
    """The best `limit` hits for `text` (query.BadQuery when it has no words): the sessions
    whose names hold every word first, then the lines of logs and contexts; with `meaning`
    (the question embedded: similar.asked), the lines nearest to it too, the two fused."""
    indexes = _indexes(text, every=True)  # (BadQuery before anything is read)
    sessions = _named(store, query.terms(text), scope, limit)
    most = limit if scope.session else per_session  # hits of one session
    hits = _search(store, indexes, scope, limit, most)
    loose = not hits and not sessions and len(query.terms(text)) > 1
    if loose:
        indexes = _indexes(text, every=False)
        hits = _search(store, indexes, scope, limit, most)
    if meaning is not None:
        from . import similar

        where, params = _where(scope)
        near = _readable(store, lambda: similar.nearest(store, meaning, where, params, limit * POOL), [])
        found = _readable(store, lambda: similar.hits(store, near, query.terms(text), Hit), [])
        hits = similar.fused(hits, found, loose)
    shown = _grouped(sessions + hits, most)[:limit]
    return _readable(store, lambda: _counted(store, indexes, shown), shown)


def more_after(hits: list[Hit], i: int) -> str:
    """After hit `i`, the last shown of its session: how many more lines of it match ("97",
    "12+" where it holds more than were counted); "" after any other, or with none more."""
    h = hits[i]
    if i + 1 < len(hits) and hits[i + 1].session_id == h.session_id:
        return ""
    more = max(0, h.matches - sum(x.session_id == h.session_id for x in hits))
    return f"{more:,}{'+' if h.matches_more else ''}" if more or h.matches_more else ""


def _grouped(hits: list[Hit], most: int) -> list[Hit]:
    """Each session's hits together, at most `most` of them, the session of the best hit first."""
    order: dict[str, int] = {}
    kept: list[Hit] = []
    for hit in hits:
        order.setdefault(hit.session_id, len(order))
        if sum(h.session_id == hit.session_id for h in kept) < most:
            kept.append(hit)
    return sorted(kept, key=lambda h: order[h.session_id])


def _counted(store: Store, indexes: list[Index], hits: list[Hit]) -> list[Hit]:
    """Each hit with how many lines of its session match (tally.py)."""
    counts = {}
    for sid in dict.fromkeys(h.session_id for h in hits):
        lines, more = tally.matching_lines(store.conn, indexes, sid)
        counts[sid] = (lines + any(h.source == "session" and h.session_id == sid for h in hits), more)
    return [replace(h, matches=counts[h.session_id][0], matches_more=counts[h.session_id][1]) for h in hits]


def _named(store: Store, terms: list[str], scope: Scope, limit: int) -> list[Hit]:
    where, params = _where(scope)
    found = _readable(store, lambda: named.sessions(store.conn, terms, where, params, limit), [])
    return [
        Hit(
            s["session_id"],
            s["session_id"],
            s["agent"],
            s["project"],
            s["branch"],
            s["project_key"],
            s["when"] or "",
            "session",
            None,
            None,
            line,
            0.0,
        )
        for s, line in found
    ]


def _indexes(text: str, every: bool) -> list[Index]:
    """The index that answers `text`: the second where it holds a script written without
    spaces (every word of it is in rows that do); for any of its words, the word index too
    for the words in other scripts."""
    words = Index("log_chunks_fts", "contexts_fts", "", None)
    if not query.unspaced(text):
        return [replace(words, expression=query.match(text, every))]
    (logs, _), (contexts, _) = grams.TABLES["log_chunks"], grams.TABLES["contexts"]
    out = [Index(logs, contexts, query.grams_match(text, every), tuple(query.terms(text)))]
    spaced = [t for t in query.terms(text) if not bigrams.holds(t)]
    if spaced and not every:
        out.append(replace(words, expression=query.match(" ".join(f'"{t}"' for t in spaced), every)))
    return out


def _search(store: Store, indexes: list[Index], scope: Scope, limit: int, most: int) -> list[Hit]:
    conn = store.conn
    per_chunk = limit if scope.session else LINES_PER_CHUNK  # one session's: every line of each chunk
    found = _found(store, indexes, scope, limit)
    # a line that holds more of the words first (the index matched them in a chunk, maybe
    # lines apart), among the best chunks: each one's lines cost a query
    best: list[tuple[float, str, str, int, dict, Index]] = []
    chunks: dict[str, int] = {}  # of each session among them
    for f in found:
        sid = f[4]["session_id"]
        if chunks.get(sid, 0) < most:
            chunks[sid] = chunks.get(sid, 0) + 1
            best.append(f)
    best = best[: max(limit, RERANKED)]
    candidates = [
        hit
        for rank, when, source, key, session, index in best
        for hit in _readable(store, lambda: _hits(conn, index, source, key, rank, when, session, per_chunk), [])
    ]
    candidates.sort(key=lambda hit: -hit.line.terms)
    hits: list[Hit] = []
    seen: set[tuple[str, str]] = set()
    for hit in candidates:
        if (hit.session_id, hit.line.text) not in seen:
            seen.add((hit.session_id, hit.line.text))
            hits.append(hit)
    return hits  # (more than `limit`: a session's hits past `most` give way to others')


def _found(store: Store, indexes: list[Index], scope: Scope, limit: int) -> list[tuple[float, str, str, int, dict, Index]]:
    """The best chunks and contexts, sorted: (rank, when, source, key, session, index); POOL
    times as many as one session's hits need, so that a few long sessions (a common word's
    newest matches) leave room for others: hits show at most PER_SESSION of each."""
    where, params = _where(scope)
    n = limit * OVERFETCH * (1 if scope.session else POOL)
    found: list[tuple[float, str, str, int, dict, Index]] = []
    for index in indexes:
        found += _candidates(store, index, where, {**params, "q": index.expression, "n": n})
    if len(indexes) > 1:  # a row both found: its best rank once
        found = list({(f[2], f[3]): f for f in sorted(found, key=lambda f: -f[0])}.values())
    # bm25 is negative, lower better; equals (to a step) newest first
    found.sort(key=lambda f: f[1], reverse=True)
    found.sort(key=lambda f: round(f[0] / RANK_STEP))  # stable: the newer first among equals
    return found


def _candidates(store: Store, index: Index, where: str, params: dict) -> list[tuple[float, str, str, int, dict, Index]]:
    """The best chunks of the logs and the best contexts one index finds."""
    conn = store.conn
    logs = _readable(store, lambda: _logs(conn, index.logs, where, params), [])
    contexts = _readable(
        store,
        lambda: conn.execute(
            f"select c.id, f.rank, s.id, s.agent, s.project, s.branch, s.project_key, c.created from {index.contexts} f"
            " join contexts c on c.id = f.rowid join sessions s on s.id = c.session_id"
            f" where {index.contexts} match :q{where} order by f.rank limit :n",
            params,
        ).fetchall(),
        [],
    )
    out = []
    for source, rows in (("log", logs), ("context", contexts)):
        for key, rank, sid, agent, proj, branch, proj_key, when in rows:
            session = {"session_id": sid, "agent": agent, "project": proj, "branch": branch, "project_key": proj_key}
            out.append((rank, when or "", source, key, session, index))
    return out


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


def _logs(conn: sqlite3.Connection, fts: str, where: str, params: dict) -> list[tuple]:
    """The best chunks of the logs: ranked by bm25 while the words are in at most RANKED
    chunks; past that, the newest (bm25 would walk every match for the words' weight and score
    each, a cost that grows with the logs; a word that common carries next to no weight)."""
    select = (
        f"select c.id, {{rank}}, s.id, s.agent, s.project, s.branch, s.project_key, s.started from {fts} f"
        " join log_chunks c on c.id = f.rowid join sessions s on s.id = c.session_id"
        f" where {fts} match :q{where}{{floor}} order by {{order}} limit :n"
    )
    floor = conn.execute(
        f"select rowid from {fts} where {fts} match :q order by rowid desc limit 1 offset :cap",
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
                f"select rowid from {fts} where {fts} match :q and rowid between :low and :high order by rowid desc limit :n",
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


def _hits(
    conn: sqlite3.Connection, index: Index, source: str, key: int, rank: float, when: str, session: dict, per_chunk: int
) -> list[Hit]:
    """One candidate as hits: its best lines, marked by the index itself (the word index), or
    here (the second, which holds no text)."""
    expression = index.expression
    if index.words is not None:
        row = searched.text_of(conn, source, key)
        row = row and (query.marked(row[0], index.words), row[1])
    elif source == "log":
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
    for line in query.lines(marked, per_chunk):
        if source == "log":
            offset = where + _bytes_before(marked, line.at + line.first)  # the match: in a very long line, far from its start
            out.append(Hit(f"{sid}@{offset}", sid, *facts, offset, None, line, rank))
        else:
            out.append(Hit(f"{sid}#{where}", sid, *facts, None, where, line, rank))
    return out


def _bytes_before(marked: str, at: int) -> int:
    """Bytes of the chunk before character `at` (its marks not counted)."""
    return len(marked.replace(OPEN, "").replace(CLOSE, "")[:at].encode("utf-8"))
