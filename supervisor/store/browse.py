"""`supervise browse`: the database in Datasette, with a title, every table and column
described, sensible sorts and facets, and the queries people want. The same metadata works
with a plain `datasette "$(supervise db-path)" -m FILE` (`supervise browse --print-metadata`).
How cells look (prompts as text, JSON pretty-printed) is datasette_plugin.py's."""

from __future__ import annotations

TIMELINE_KINDS = ("compaction_started", "compaction_finished", "compaction_failed", "context_low", "context_overflow", "injection", "agent_compaction")

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
               + ", ".join(f"'{k}'" for k in TIMELINE_KINDS) + ") "
               "union all select created, 'context round ' || round, trigger || ' · ' || source || coalesce(' · ' || backend, '') || coalesce(' · ' || model, '') "
               "from contexts where session_id = :session order by time",
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
    "sessions": ("One row per supervised run of an agent.", {
        "id": "Six characters; `supervise show ID`.", "name": "Given with --name.", "command": "The command line.",
        "argv": "The command as a JSON list.", "agent": "The pattern set it was detected with.", "cwd": "Where it ran.",
        "started": "UTC.", "ended": "UTC.", "exit_code": "The agent's exit status (128+N: signal N).",
        "status": "active, completed, failed or interrupted (the supervisor died).", "pid": "The supervisor's pid.",
        "child_pid": "The pid of the agent's job shell (the agent is its one child).", "cast_path": "The asciicast recording.", "log_path": "The text log.",
        "parent_id": "The session this one resumed.", "agent_session_id": "The agent's own session id (Claude Code's).",
        "options": "How it was run (JSON), for `supervise resume`.",
        "state": "What its screen shows now: starting, working, waiting, permission, compacting or limited (`supervise ps`).",
        "state_since": "UTC: when it went into that state.", "state_detail": "JSON: the context left; a limit's reset time and when a continue will be typed (--on-limit wait).",
    }, {"sort_desc": "started", "facets": ["status", "agent", "state"]}),
    "events": ("What happened in a session: compactions, contexts given back, signals, start and exit.", {
        "session_id": "The session.", "time": "UTC.", "offset": "Seconds since the session started.",
        "kind": "compaction_started, compaction_finished, injection, idle_prompt, ...", "detail": "JSON: patterns, sources, text, tokens.",
    }, {"sort_desc": "id", "facets": ["kind", "session_id"]}),
    "contexts": ("Session contexts: what an agent needs after it compacted, one round at a time.", {
        "session_id": "The session.", "round": "1, 2, ... within the session.", "created": "UTC.",
        "trigger": "compaction_started, compaction_finished, periodic, session_end, manual, resume, handoff (another agent took the work over).",
        "source": "model, or heuristic (then `error` says why).",
        "backend": "Who was asked: api (an API key), claude, codex or gemini (that CLI on the user's login), or heuristic (nobody).",
        "model": "The summary model.", "error": "Why the model was not used.",
        "digest_tokens": "The digest the summary read.", "input_tokens": "Billed input.", "output_tokens": "Billed output.",
        "cost_usd": "What the summary cost (through a CLI: as it reports it, at list price even on a subscription).", "context": "The structured context (JSON).", "prompt": "The text given to the agent.",
        "log_offset": "How far into the text log this round read (bytes).", "transcript_offset": "The same in Claude Code's transcript.",
        "duration_ms": "How long the round took.",
    }, {"sort_desc": "created", "facets": ["trigger", "source", "backend"]}),
    "messages": ("`supervise agent`'s conversation, in order.", {
        "session_id": "The session.", "seq": "1, 2, ... within the session.", "role": "user, assistant, tool (a tool result) or summary.",
        "content": "JSON content blocks.", "tokens": "Estimated size.", "usage": "The step's usage from the API (JSON).",
        "interrupted": "A partial answer kept after Ctrl-C.", "compacted": "Summarized away.", "pruned": "A tool output sent as a placeholder.",
        "created": "UTC.",
    }, {"sort": "seq", "facets": ["role", "session_id"]}),
    "log_chunks": ("The text logs in chunks of whole lines, for search.", {
        "session_id": "The session.", "start": "Byte offset in the text log.", "end": "Where the chunk ends.", "text": "What a person saw.",
    }, {"sort": "id", "facets": ["session_id"]}),
}


def metadata() -> dict:
    """A fresh copy each time (Datasette adds to the dict it is given)."""
    import copy

    tables = {}
    for name, (description, columns, options) in TABLES.items():
        tables[name] = {"description": description, "columns": columns, **options}
    tables["log_chunks"]["searchmode"] = "raw"
    return {
        "title": "supervise",
        "description": "Agent sessions recorded by supervise: events, session contexts, the built-in agent's conversations, "
                       "and the text logs (search them). See the queries below.",
        "databases": {"supervise": {"tables": copy.deepcopy(tables), "queries": copy.deepcopy(QUERIES)}},
    }
