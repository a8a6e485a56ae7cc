"""`supervise browse`: the database in Datasette, with a title, every table and column
described, sensible sorts and facets, and the queries people want, served on a socket bound
before its URL is announced. The same metadata works
with a plain `datasette "$(supervise db-path)" -m FILE` (`supervise browse --print-metadata`).
How cells look (prompts as text, JSON pretty-printed) is datasette_plugin.py's."""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from pathlib import Path

from ..errors import SuperviseError
from ..plaintext import plain
from . import grams

TIMELINE_KINDS = (
    "compaction_started",
    "compaction_finished",
    "compaction_failed",
    "context_low",
    "context_overflow",
    "injection",
    "agent_compaction",
    "agent_summary",
)

QUERIES = {
    "latest_contexts": {
        "title": "The latest context of each session",
        "sql": "select s.id as session, s.name, s.agent, s.command, c.round, c.trigger, c.source, c.created, c.prompt "
        "from sessions s join contexts c on c.session_id = s.id "
        "where c.round = (select max(round) from contexts where session_id = s.id) order by c.created desc",
    },
    "timeline": {
        "title": "A session's compaction timeline: compactions, contexts and injections in order",
        "sql": "select time, kind as what, detail from events where session_id = :session and kind in ("
        + ", ".join(f"'{k}'" for k in TIMELINE_KINDS)
        + ") "
        "union all select created, 'context round ' || round, trigger || ' · ' || source || coalesce(' · ' || backend, '') || coalesce(' · ' || model, '') "
        "from contexts where session_id = :session order by time",
    },
    "compaction_summaries": {
        "title": "Each compaction: the agent's own summary beside supervise's context of it (`supervise show` says what each kept)",
        # the nearest round of a compaction (SQLite's min() takes the other columns from its row)
        "sql": "select session, time, agents_summary, round, supervise_context from (select e.session_id as session, e.time, "
        "json_extract(e.detail, '$.text') as agents_summary, c.round, c.prompt as supervise_context, "
        "min((c.trigger not like 'compaction%') * 1e6 + abs(julianday(c.created) - julianday(e.time))) "
        "from events e left join contexts c on c.session_id = e.session_id where e.kind = 'agent_summary' group by e.id) "
        "order by time desc",
    },
    "summary_costs_by_session": {
        "title": "Summaries and their cost, per session",
        "sql": "select session_id as session, count(*) as rounds, sum(source = 'model') as by_model, sum(input_tokens) as input_tokens, "
        "sum(output_tokens) as output_tokens, round(coalesce(sum(cost_usd), 0), 4) as cost_usd "
        "from contexts group by session_id order by cost_usd desc",
    },
    "summary_costs_by_day": {
        "title": "Summaries and their cost, per day",
        "sql": "select substr(created, 1, 10) as day, count(*) as rounds, sum(input_tokens) as input_tokens, "
        "sum(output_tokens) as output_tokens, round(coalesce(sum(cost_usd), 0), 4) as cost_usd "
        "from contexts group by day order by day desc",
    },
    "resumed_sessions": {
        "title": "Sessions resumed from one another, or handed to another agent",
        "sql": "select child.id as session, child.agent, child.started, child.status, parent.id as resumed_from, parent.agent as from_agent, "
        "parent.started as parent_started, child.command "
        "from sessions child join sessions parent on child.parent_id = parent.id order by child.started desc",
    },
    "unconfirmed_injections": {
        "title": "Contexts typed into an agent that it was not seen to take",
        "sql": "select session_id as session, time, detail from events "
        "where kind = 'injection' and json_extract(detail, '$.confirmed') = 0 order by time desc",
    },
}

TABLES = {
    "sessions": (
        "One row per supervised run of an agent.",
        {
            "id": "Six characters; `supervise show ID`.",
            "name": "Given with --name.",
            "command": "The command line.",
            "argv": "The command as a JSON list.",
            "agent": "The pattern set it was detected with.",
            "cwd": "Where it ran.",
            "started": "UTC.",
            "ended": "UTC.",
            "exit_code": "The agent's exit status (128+N: signal N).",
            "status": "active, completed, failed or interrupted (the supervisor died).",
            "pid": "The supervisor's pid.",
            "child_pid": "The pid of the agent's job shell (the agent is its one child).",
            "cast_path": "The asciicast recording (kept relative to the database's folder, shown whole).",
            "log_path": "The text log (kept relative to the database's folder, shown whole).",
            "parent_id": "The session this one resumed.",
            "agent_session_id": "The agent's own session id (for an agent that keeps one), which resuming it needs.",
            "options": "How it was run (JSON), for `supervise resume`.",
            "state": "What its screen shows now: starting, working, waiting, permission, compacting or limited (`supervise ps`).",
            "state_since": "UTC: when it went into that state.",
            "state_detail": "JSON: the context left; a limit's reset time and when a continue will be typed (--on-limit wait).",
            "project": "Its project's folder: the git top-level of where it ran, else that folder.",
            "project_key": "What its project is known by, wherever its folder is: git:ROOT-COMMIT, remote:ORIGIN, else the folder "
            "(`supervise search` looks in one).",
            "branch": "The git branch checked out there as it started.",
            "log_indexed": "1 once its whole text log is in the search index (its recorder's last pass, or a catch-up).",
        },
        {"sort_desc": "started", "facets": ["status", "agent", "state", "project", "project_key"]},
    ),
    "events": (
        "What happened in a session: compactions, contexts given back, signals, start and exit.",
        {
            "session_id": "The session.",
            "time": "UTC.",
            "offset": "Seconds since the session started.",
            "kind": "compaction_started, compaction_finished, injection, idle_prompt, ...",
            "detail": "JSON: patterns, sources, text, tokens.",
        },
        {"sort_desc": "id", "facets": ["kind", "session_id"]},
    ),
    "contexts": (
        "Session contexts: what an agent needs after it compacted, one round at a time.",
        {
            "session_id": "The session.",
            "round": "1, 2, ... within the session.",
            "created": "UTC.",
            "trigger": "compaction_started, compaction_finished, periodic, session_end, manual, resume, handoff (another agent took the work over).",
            "source": "model, or heuristic (then `error` says why).",
            "backend": "Who was asked: api (an API key), an agent CLI by name (on the user's login), or heuristic (nobody).",
            "model": "The summary model.",
            "error": "Why the model was not used.",
            "digest_tokens": "The digest the summary read.",
            "input_tokens": "Billed input.",
            "output_tokens": "Billed output.",
            "cost_usd": "What the summary cost (through a CLI: as it reports it, at list price even on a subscription).",
            "context": "The structured context (JSON).",
            "prompt": "The text given to the agent.",
            "log_offset": "How far into the text log this round read (bytes).",
            "transcript_offset": "The same in the agent's own transcript.",
            "duration_ms": "How long the round took.",
        },
        {"sort_desc": "created", "facets": ["trigger", "source", "backend"]},
    ),
    "messages": (
        "`supervise agent`'s conversation, in order.",
        {
            "session_id": "The session.",
            "seq": "1, 2, ... within the session.",
            "role": "user, assistant, tool (a tool result) or summary.",
            "content": "JSON content blocks.",
            "tokens": "Estimated size.",
            "usage": "The step's usage from the API (JSON).",
            "interrupted": "A partial answer kept after Ctrl-C.",
            "compacted": "Summarized away.",
            "pruned": "A tool output sent as a placeholder.",
            "created": "UTC.",
        },
        {"sort": "seq", "facets": ["role", "session_id"]},
    ),
    "log_chunks": (
        "The text logs in chunks of whole lines, for search.",
        {
            "session_id": "The session.",
            "start": "Byte offset in the text log.",
            "end": "Where the chunk ends.",
            "text": "What a person saw.",
        },
        {"sort": "id", "facets": ["session_id"]},
    ),
}


def metadata() -> dict:
    """A fresh copy each time (Datasette adds to the dict it is given)."""
    import copy

    tables: dict[str, dict] = {}
    for name, (description, columns, options) in TABLES.items():
        tables[name] = {"description": description, "columns": columns, **options}
    tables["log_chunks"]["searchmode"] = "raw"
    # the search's second index holds no text to show, its vectors none to read
    for second in (*(name for name, _ in grams.TABLES.values()), "embedders", "passage_vectors"):
        tables[second] = {"hidden": True}
    return {
        # only its user: the one who opened the sign-in URL `supervise browse` printed (or
        # `datasette --root`'s) is Datasette's root; nobody else sees a page, a row or a query
        "allow": {"id": "root"},
        "allow_sql": {"id": "root"},
        "title": "supervise",
        "description": "Agent sessions recorded by supervise: events, session contexts, the built-in agent's conversations, "
        "and the text logs (search them). See the queries below.",
        "databases": {"supervise": {"tables": copy.deepcopy(tables), "queries": copy.deepcopy(QUERIES)}},
    }


# Serving: the socket is bound before anything is said or written, so the URL announced is
# the one that answers (`--port 0`: the port the system chose), and a port already taken
# is said in one line instead of a Datasette that starts, fails and opens the other page.

HOST_HINT = "use 127.0.0.1 for this machine only, or 0.0.0.0 for every network it is on"
PORTS_TRIED = 100  # after a taken port, how far up to look for a free one to suggest


def check_port(port: int) -> None:
    if not 0 <= port <= 65535:
        raise SuperviseError(f"--port {port} is not a port", "use 1 to 65535, or 0 for any free port", exit_code=2)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port and listening, or a SuperviseError that says why not."""
    shown = plain(host, newlines=False)
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError) as exc:
        raise SuperviseError(f"cannot serve on {shown}: no such host or address", HOST_HINT) from exc
    try:
        return _bound(family, address)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            free = _next_free(family, address)
            hint = f"try --port {free}" if free else "try --port 0 for any free port"
            raise SuperviseError(f"port {port} on {shown} is in use", hint) from exc
        if exc.errno == errno.EADDRNOTAVAIL:
            raise SuperviseError(f"cannot serve on {shown}: it is not an address of this machine", HOST_HINT) from exc
        if exc.errno == errno.EACCES:
            raise SuperviseError(f"port {port} on {shown} is reserved for root", "use a port from 1024 up, e.g. --port 8001") from exc
        raise SuperviseError(f"cannot serve on {shown} port {port}: {exc.strerror or exc}", HOST_HINT) from exc


def url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def sign_in(base: str, ds) -> str:
    """The URL that signs its user in (Datasette's root token: it works once, in one browser;
    a new `supervise browse` gives a new one)."""
    return f"{base}-/auth-token?token={ds._root_token}"


def datasette(db: Path, meta: dict):
    """Datasette over the database, as `datasette serve DB -m FILE` makes it (the plugin comes
    from its entry point)."""
    from datasette.app import Datasette

    return Datasette([str(db)], metadata=meta)


def serve(sock: socket.socket, ds, announce: Callable[[], None], open_url: str | None = None) -> None:
    """Serve `ds` on the bound socket until Ctrl-C or SIGTERM, which end it quietly (from
    `announce` on, called once they would). `open_url`: opened in a browser once the server
    accepts connections."""
    import asyncio
    import signal

    import uvicorn

    # quiet: the announcement was the one line; errors still show
    server = uvicorn.Server(uvicorn.Config(ds.app(), log_level="warning", access_log=False, lifespan="on"))

    def stop(*_):
        server.should_exit = True

    # uvicorn takes the signals while it serves and raises them again once done; with these
    # handlers that ends here, instead of in a KeyboardInterrupt or a death by SIGTERM
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    announce()

    async def main() -> None:
        await ds.invoke_startup()
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        if open_url:
            while not (server.started or serving.done()):
                await asyncio.sleep(0.05)
            if server.started:
                import webbrowser

                asyncio.get_running_loop().run_in_executor(None, webbrowser.open, open_url)
        await serving

    asyncio.run(main())


def _bound(family: int, address: tuple) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port the last browse left in TIME_WAIT is free (as uvicorn does)
        sock.bind(address)
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    return sock


def _next_free(family: int, address: tuple) -> int | None:
    for port in range(address[1] + 1, min(address[1] + PORTS_TRIED, 65535) + 1):
        try:
            _bound(family, (address[0], port, *address[2:])).close()
        except OSError:
            continue
        return port
    return None
