"""Search by meaning's share of the database: each chunk of a log and each context as the
vectors of its passages (memory/passages.py), kept beside the row they were made of.

One row of `passage_vectors` per chunk or context and embedding model: where its passages
are (character offsets, as int32 pairs) and their vectors, each as bytes (int8, one after
another) and the scale that makes them floats again (float32): a quarter of the floats'
size, read and compared the fastest (numpy turns bytes into floats far faster than halves). A
row with no passages says the row was read and held nothing to embed. Vectors of one model
are compared only with that model's (`embedders`): a new model embeds again, beside the old
vectors. Written with no vector library (`struct`); read into numpy by memory/similar.py."""

from __future__ import annotations

import sqlite3
import struct

from .searched import SOURCES

SCHEMA = (
    "create table if not exists embedders (id integer primary key, name text not null unique, dims integer not null)",
    "create table if not exists passage_vectors (id integer primary key, embedder integer not null references embedders(id),"
    " source text not null, row integer not null, session_id text not null, spans blob not null, scales blob not null,"
    " vectors blob not null,"
    " unique (embedder, source, row))",
    "create index if not exists passage_vectors_session on passage_vectors(embedder, session_id)",
)


def create(conn: sqlite3.Connection) -> None:
    for statement in SCHEMA:
        conn.execute(statement)


def embedder(conn: sqlite3.Connection, name: str, add: bool = False) -> int | None:
    """The id of the model `name`'s vectors (added if new, with `add`); None: none of it yet
    (nor of any: a database an older supervise made, read where it cannot be brought up to date)."""
    try:
        row = conn.execute("select id from embedders where name = ?", [name]).fetchone()
    except sqlite3.OperationalError:
        if add:
            raise
        return None
    if row is not None or not add:
        return row and row[0]
    with conn:
        return conn.execute("insert into embedders (name, dims) values (?, 0)", [name]).lastrowid


def agreed(conn: sqlite3.Connection, model: int, dims: int) -> None:
    """The model's vectors are `dims` long from now: set once; a model whose length changed
    (another one behind the same name) has its old vectors dropped."""
    (known,) = conn.execute("select dims from embedders where id = ?", [model]).fetchone()
    if known != dims:
        with conn:
            if known:
                conn.execute("delete from passage_vectors where embedder = ?", [model])
            conn.execute("update embedders set dims = ? where id = ?", [dims, model])


def dims(conn: sqlite3.Connection, model: int) -> int:
    return conn.execute("select dims from embedders where id = ?", [model]).fetchone()[0]


def pack(spans: list[tuple[int, int]], vectors: list[list[float]]) -> tuple[bytes, bytes, bytes]:
    """Each vector as bytes scaled to its largest part (127), and that scale."""
    scales = [max(map(abs, v)) / 127 or 1.0 for v in vectors]
    flat = [round(x / scale) for v, scale in zip(vectors, scales) for x in v]
    return (
        struct.pack(f"<{2 * len(spans)}i", *(n for span in spans for n in span)),
        struct.pack(f"<{len(scales)}f", *scales),
        struct.pack(f"<{len(flat)}b", *flat),
    )


def spans_of(blob: bytes) -> list[tuple[int, int]]:
    numbers = struct.unpack(f"<{len(blob) // 4}i", blob)
    return list(zip(numbers[::2], numbers[1::2]))


def put(conn: sqlite3.Connection, model: int, source: str, row: int, session_id: str, spans, vectors) -> None:
    """One row's passages and their vectors (in the caller's transaction)."""
    conn.execute(
        "insert or replace into passage_vectors (embedder, source, row, session_id, spans, scales, vectors) values (?, ?, ?, ?, ?, ?, ?)",
        [model, source, row, session_id, *pack(spans, vectors)],
    )


def missing(conn: sqlite3.Connection, model: int | None, source: str, session_id: str, limit: int) -> list[tuple[int, str]]:
    """(id, text) of at most `limit` of a session's chunks or contexts the model has no row for, oldest first."""
    table, column, _ = SOURCES[source]
    return conn.execute(
        f"select t.id, t.{column} from {table} t where t.session_id = ? and not exists (select 1 from passage_vectors v"
        " where v.embedder = ? and v.source = ? and v.row = t.id) order by t.id limit ?",
        [session_id, model if model is not None else -1, source, limit],
    ).fetchall()


def behind(conn: sqlite3.Connection, model: int | None) -> list[str]:
    """The sessions with a chunk or a context the model has no row for, oldest first."""
    found: dict[str, None] = {}
    for source, (table, _, _) in SOURCES.items():
        rows = conn.execute(
            f"select distinct t.session_id from {table} t where not exists (select 1 from passage_vectors v"
            " where v.embedder = ? and v.source = ? and v.row = t.id)",
            [model if model is not None else -1, source],
        )
        found.update((sid, None) for (sid,) in rows)
    ordered = conn.execute("select id from sessions order by started").fetchall()
    return [sid for (sid,) in ordered if sid in found]


def unembedded(conn: sqlite3.Connection, model: int | None) -> int:
    """How many chunks and contexts the model has no row for (counts, not a walk of them)."""
    rows = sum(conn.execute(f"select count(*) from {table}").fetchone()[0] for table, _, _ in SOURCES.values())
    done = 0 if model is None else conn.execute("select count(*) from passage_vectors where embedder = ?", [model]).fetchone()[0]
    return max(0, rows - done)


def forget(conn: sqlite3.Connection, source: str) -> None:
    """Every vector of one source (its rows are being made again: their ids change)."""
    conn.execute("delete from passage_vectors where source = ?", [source])
