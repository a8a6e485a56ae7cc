"""What supervise knows, within reach: does the search index hold every text log, does the MCP
server start and list its tools, and which agents are given it for a run."""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import time
from collections.abc import Mapping

from pathlib import Path

from .. import config, profiles
from ..errors import SuperviseError
from ..memory import launch
from .report import REINSTALL, Check

TIMEOUT = 15.0  # seconds for the server to start and answer (its SDK takes a while to import)
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "doctor", "version": "1"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


REINDEX = "supervise search --reindex"


def search_index(db_path: Path) -> Check:
    from ..recording import logindex
    from ..store.database import Store

    if not db_path.exists():
        return Check("search index", "ok", "no sessions yet")
    try:
        store = Store(db_path, write=False)
    except SuperviseError:
        return Check("search index", "warn", "not looked at: the database cannot be opened (see above)")
    try:
        sessions, missing = logindex.short_of_logs(store)
        lost = logindex.unindexed_chunks(store)
    except sqlite3.DatabaseError:
        return Check("search index", "warn", "not looked at: the database cannot be read whole (see above)")
    finally:
        store.close()
    return search_index_verdict(sessions, missing, lost)


def search_index_verdict(sessions: int, missing: int, lost: int) -> Check:
    if lost:
        chunks = f"{lost:,} chunk{'s' if lost != 1 else ''}"
        return Check("search index", "problem", f"the full-text index lacks {chunks} of the text logs: search misses them", REINDEX)
    if sessions:
        whose = "the text log of 1 session is" if sessions == 1 else f"the text logs of {sessions:,} sessions are"
        return Check("search index", "warn", f"{whose} not all in the search index ({missing / 1e6:,.1f} MB not searchable)", REINDEX)
    return Check("search index", "ok", "every ended session's text log is searchable")


def meaning(memory: config.Memory, db_path: Path) -> Check:
    """Search by meaning: off, or its endpoint asked for one vector, and how much is embedded."""
    from ..memory import embedclient
    from ..memory.similar import NUMPY
    from ..store import vectors
    from ..store.database import Store

    made = embedclient.client(memory, timeout=embedclient.QUERY_TIMEOUT)
    if made is None:
        return Check("meaning", "ok", "off: search is by words (set [memory] embeddings to an embeddings endpoint for meaning too)")
    try:
        import numpy  # noqa: F401
    except ImportError:
        return Check("meaning", "problem", *NUMPY)
    try:
        (vector,) = made.embed(["supervise doctor"])
    except embedclient.Unavailable as exc:
        return Check("meaning", "problem", exc.line, "start the model server, or fix [memory] embeddings and embeddings_model")
    left = "no sessions yet"
    if db_path.exists():
        store = Store(db_path, write=False)
        try:
            todo = vectors.unembedded(store.conn, vectors.embedder(store.conn, made.name))
            left = f"not embedded yet: {todo:,} chunks and contexts (`supervise search --embed`)" if todo else "everything embedded"
        finally:
            store.close()
    return Check("meaning", "ok", f"{made.name} answers at {made.endpoint} ({len(vector)} dimensions); {left}")


def mcp_server(env: Mapping[str, str]) -> Check:
    server = launch.server(env)
    try:
        settings = config.load(env)
    except Exception:  # a settings error is the config check's to say
        settings = config.Settings()
    given = [p.name for p in map(profiles.get, profiles.clis()) if p.mcp_note is None]
    not_given = "; ".join(f"not {p.name}: {p.mcp_note}" for p in map(profiles.get, profiles.clis()) if p.mcp_note is not None)
    tools, error = _tools([server.command, *server.args], {**env, **server.env})
    if error is not None:
        return Check("mcp", "problem", f"supervise's MCP server did not answer: {error}", REINSTALL)
    if not settings.memory.mcp:
        return Check("mcp", "ok", f"the server answers ({', '.join(tools)}); given to no agent: [memory] mcp = false")
    return Check("mcp", "ok", f"the server answers ({', '.join(tools)}); given for each run to {', '.join(given)}; {not_given}")


def _tools(argv: list[str], env: Mapping[str, str]) -> tuple[list[str], str | None]:
    """The server's tools, by name; or why it gave none. Its stdin stays open until it has
    answered (at the end of its input it stops, answered or not)."""
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env), cwd="/")
    except OSError as exc:
        return [], str(exc.strerror or exc)
    assert proc.stdin is not None and proc.stdout is not None  # both piped above
    deadline = time.monotonic() + TIMEOUT
    try:
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
        proc.stdin.flush()
        buffer = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(proc.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                break
            buffer += chunk
            for line in buffer.splitlines():
                answer = _json(line)
                if answer.get("id") == 2 and "result" in answer:
                    return [t.get("name", "?") for t in answer["result"].get("tools", [])], None
        if time.monotonic() >= deadline:
            return [], f"no answer in {TIMEOUT:g} s"
    except OSError as exc:
        return [], str(exc.strerror or exc)
    finally:
        proc.kill()
        _, err = proc.communicate()
    said = (err.decode(errors="replace").strip().splitlines() or [f"exit {proc.returncode}"])[-1][:160]
    return [], said


def _json(line: bytes) -> dict:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
