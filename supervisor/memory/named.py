"""Sessions found by what they are called: their name, id, agent and branch hold every word
of a search (a word whole, a stretch of a script written without spaces anywhere; case
aside). Such a session is a hit of its own, above the lines of the logs: a user who named a
session "payments rework" and searches `payments` wants that session first."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from .. import bigrams
from ..plaintext import plain
from . import query
from .query import Line

SEP = " · "
WORDS_IN_SQL = 16  # of a query's words, those SQLite looks for (a pasted page has thousands)


def sessions(conn: sqlite3.Connection, terms: list[str], where: str, params: dict, limit: int) -> list[tuple[dict, Line]]:
    """The newest `limit` sessions in scope whose names hold every term: (its row, its line)."""
    folded = [t.casefold() for t in terms]
    # an ASCII word is looked for by SQLite first (its lower() folds ASCII alone): the rows
    # read here are the few that may match, not every session
    ascii_words = [w for t in folded for w in t.split() if w.isascii()][:WORDS_IN_SQL]
    facts = "lower(coalesce(s.name, '') || ' ' || coalesce(s.agent, '') || ' ' || coalesce(s.branch, '') || ' ' || s.id)"
    held = "".join(f" and instr({facts}, :w{i}) > 0" for i in range(len(ascii_words)))
    out = []
    rows = conn.execute(
        "select s.id, s.name, s.agent, s.branch, s.project, s.project_key, s.started from sessions s"
        f" where 1{where}{held} order by s.started desc",
        {**params, **{f"w{i}": w for i, w in enumerate(ascii_words)}},
    )
    for sid, name, agent, branch, proj, proj_key, started in rows:
        raw = " ".join(p for p in (name, agent, branch, sid) if p).casefold()
        if not all(w in raw for t in folded for w in t.split()):  # the cheap test first
            continue
        text = SEP.join(plain(p, newlines=False) for p in (name, agent, branch, sid) if p)
        if all(bigrams.places(text, t) for t in terms):
            row = {"session_id": sid, "agent": agent, "project": proj, "branch": branch, "project_key": proj_key, "when": started}
            [line] = query.lines(query.marked(text, tuple(terms)), 1)  # (one line: the marks as a hit's line has them)
            out.append((row, replace(line, terms=len(terms))))
            if len(out) == limit:
                break
    return out
