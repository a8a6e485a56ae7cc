"""Reading what was recorded: `sessions`, `ps`, `show`, `export`, `summarize`, `context`."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Optional

import typer

from ..contexts import compare, lastround
from ..errors import SuperviseError
from ..plaintext import clip, json_rows, json_text, plain
from .shared import BACKEND_HELP, PICK_HELP, local_time, open_store

SESSIONS_SHOWN = 50  # `supervise sessions` without --all: a screenful or two, not thousands of lines
# A row of `supervise sessions` stays one line: its name and command clipped (--json has them whole).
NAME_SHOWN = 40
LABEL_SHOWN = 200  # the name and command, written to a pipe or a file
LABEL_MIN = 20  # however narrow the terminal


def sessions(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
    limit: int = typer.Option(SESSIONS_SHOWN, "--limit", "-n", min=1, help="Show the newest N sessions."),
    show_all: bool = typer.Option(False, "--all", "-a", help="Show every session."),
    folder: Optional[str] = typer.Option(
        None,
        "--project",
        metavar="[DIR]",
        help="Only the sessions of DIR's project (its git repository, wherever it was; no DIR: the current folder's).",
    ),
) -> None:
    """List sessions, newest first (--project: of one project)."""
    from .. import project
    from .memory import project_key

    where = project.scope(folder, False) if folder is not None else None
    store = open_store(write=False)
    scope = project_key(store, where)
    rows = store.sessions(None if show_all else limit, scope)
    if as_json:
        typer.echo(json_rows(rows))
    elif not rows:
        typer.echo("No sessions yet. Start one with: supervise -- COMMAND")
    else:
        lines = [f"{'ID':<8} {'STATUS':<12} {'STARTED':<17} {'EXIT':>4}  {'AGENT':<10} COMMAND"]
        room = _label_room(len(lines[0]) - len("COMMAND"))
        for r in rows:
            exit_code = "" if r["exit_code"] is None else str(r["exit_code"])
            command = plain(r["command"], newlines=False)
            label = clip(f"{clip(plain(r['name'], newlines=False), NAME_SHOWN)}: {command}" if r["name"] else command, room)
            lines.append(
                f"{r['id']:<8} {r['status']:<12} {local_time(r['started']):<17} {exit_code:>4}  {(r['agent'] or '')[:10]:<10} {label}"
            )
        typer.echo("\n".join(lines))
    if not show_all and len(rows) == limit and (total := store.count_sessions(scope)) > limit:
        typer.echo(f"supervise: the newest {limit:,} of {total:,} sessions (--all for every one, --limit N for more)", err=True)


def _label_room(used: int) -> int:
    """Characters left for a row's name and command: the terminal's width past the other
    columns, or LABEL_SHOWN where there is no terminal (a pipe, a file)."""
    columns = shutil.get_terminal_size((0, 0)).columns
    return max(LABEL_MIN, columns - used) if columns else LABEL_SHOWN


def ps(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
    watch: bool = typer.Option(False, "--watch", help="Show it again every --interval seconds until Ctrl-C."),
    interval: float = typer.Option(1.0, "--interval", min=0.1, help="Seconds between two views with --watch."),
) -> None:
    """Every running session and what its agent is doing, newest first: working, waiting at its prompt, permission (a dialog waits for you), compacting, limited until a time, or starting."""
    import time

    from ..status import ps as listing

    store = open_store(write=False)
    try:
        while True:
            items = listing.rows(store)
            text = json_text(items) if as_json else "\n".join(listing.table(items))
            if watch and not as_json and sys.stdout.isatty():
                text = "\x1b[H\x1b[2J" + text  # the view redrawn in place
            typer.echo(text)
            if not watch:
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        return
    finally:
        store.close()


def _show_at(store, session_id: str, at, lines: int) -> None:
    """`show ID --at OFFSET`: the log's lines around the byte, `>` on the one that holds it."""
    from ..memory import excerpts
    from ..memory.query import LINE_SHOWN

    if isinstance(at, str) and not at.isdigit():
        raise SuperviseError(
            f"show: {plain(at, newlines=False)[:40]!r} is no byte offset", "give a hit's id as search prints it: ID@OFFSET", exit_code=2
        )
    s = store.resolve(session_id)
    try:
        _, shown, hit = excerpts.log_lines(s.get("log_path") or "", int(at), lines, lines // 2, LINE_SHOWN)
    except OSError as exc:
        raise SuperviseError(
            f"show: session {s['id']} has no text log to read ({exc.strerror or exc})", "its recording may have been removed"
        ) from None
    typer.echo("\n".join(excerpts.pointed(shown, hit)))


def show(
    session_id: Optional[str] = typer.Argument(
        None, help="Session id (any unique prefix), or a search hit's id (ID@OFFSET); none: pick one."
    ),
    everywhere: bool = typer.Option(False, "--all", "-a", help=PICK_HELP),
    at: Optional[int] = typer.Option(
        None, "--at", min=0, metavar="OFFSET", help="Print its text log around this byte (a search hit's offset)."
    ),
    lines: int = typer.Option(20, "--lines", min=1, max=1000, metavar="N", help="With --at: how many lines."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one session with its events, its context rounds and related sessions; with --at
    (or a hit's id), the lines of its text log around a place instead."""
    from ..recording.export import session_json

    store = open_store(write=False)
    if session_id is None:  # at a terminal: picked
        from .picker import picked

        session_id = picked(store, everywhere, "show")
    session_id, _, offset = session_id.partition("@")
    if at is not None or offset:
        return _show_at(store, session_id, at if at is not None else offset, lines)
    data = session_json(store, store.resolve(session_id))
    rounds = store.contexts(data["id"])
    data["contexts"] = [{k: c[k] for k in CONTEXT_KEYS} for c in rounds]
    data["compactions"] = compare.report(data["events"], rounds)
    if as_json:
        typer.echo(json_text(data))
        return
    for key in (
        "id",
        "name",
        "status",
        "command",
        "agent",
        "agent_session_id",
        "cwd",
        "started",
        "ended",
        "exit_code",
        "cast_path",
        "log_path",
    ):
        if data.get(key) is not None:
            typer.echo(f"{key + ':':<18}{plain(str(data[key]), newlines=False)}")
    if data.get("parent_id"):
        typer.echo(f"{'parent:':<18}{data['parent_id']}")
    if data["children"]:
        typer.echo(f"{'children:':<18}{', '.join(data['children'])}")
    typer.echo(f"events ({len(data['events'])}):")
    for e in data["events"]:
        detail = json_text(e["detail"], indent=None) if e["detail"] else ""
        typer.echo(f"  {e['offset']:>9.3f}s  {e['kind']:<20} {detail}")
    if data["contexts"]:
        typer.echo(f"contexts ({len(data['contexts'])}):")
        for c in data["contexts"]:
            typer.echo(f"  round {c['round']:<3} {local_time(c['created'])}  {c['trigger']:<20} {_context_origin(c)}")
    if data["compactions"]:
        typer.echo(f"the agent's own compaction summaries ({len(data['compactions'])}), beside supervise's context:")
        for k in data["compactions"]:
            _show_compaction(k)


def _show_compaction(k: dict) -> None:
    """One compaction: the agent's summary, then what it and supervise's round each kept."""
    typer.echo(f"  at {k['offset'] or 0:.1f}s: its summary, {k['agent_tokens'] or 0} tokens")
    for line in plain(k["agent_summary"]).splitlines()[:12]:
        typer.echo(f"    | {clip(line, 110)}")
    if "round" not in k:
        typer.echo("    (supervise made no context round to set beside it)")
        return
    for key, label in (
        ("both", "both kept"),
        ("only_ours", "only supervise's round " + str(k["round"])),
        ("only_theirs", "only the agent's"),
    ):
        for item in k[key]:
            typer.echo(f"    {label + ':':<30} {item['kind']}: {clip(plain(item['text'], newlines=False), 90)}")


def _last_round(store, session: dict) -> dict | None:
    """The session's latest round. Once it ended, that is its last: its recorder makes it after
    the user has their shell back (waited for here while at work), or this command makes it
    if the session ended without it (its recorder killed)."""
    row = store.latest_context(session["id"])
    if (row is not None and row["trigger"] == "session_end") or not lastround.ended(session):
        return row
    from .. import config
    from ..contexts import rounds

    if rounds.session_patterns(session, os.environ) is None:
        return row  # an agent without a pattern set: no round was coming
    settings = config.load()
    if lastround.at_work(session):
        print(f"supervise: session {session['id']} has ended; waiting for its recorder to make its last context", file=sys.stderr)
        lastround.wait(session, settings.recorder_grace)
    row = store.latest_context(session["id"])  # read again once the recorder is done: it may have made it meanwhile
    due = lastround.stale(row, session) if row is not None else lastround.showed(session)
    if not due or store.read_only:
        return row
    print(f"supervise: session {session['id']} ended without its last context; making it now", file=sys.stderr)
    return rounds.make(store, session, "session_end", settings)


# What `show` tells of each context round (the prompt itself: `supervise context`).
CONTEXT_KEYS = ("round", "created", "trigger", "source", "backend", "model", "error", "input_tokens", "output_tokens", "cost_usd")


def _context_origin(c: dict) -> str:
    """`model via AGENT (claude-haiku-4-5), 3400+420 tokens, $0.0055`, or the heuristic and why."""
    via = f" via {c['backend']}" if c.get("backend") and c["backend"] != c["source"] else ""
    if c["source"] != "model":
        return plain(f"{c['source']}{via}" + (f": {c['error']}" if c.get("error") else ""), newlines=False)
    used = f", {c['input_tokens'] or 0}+{c['output_tokens'] or 0} tokens" if c.get("input_tokens") or c.get("output_tokens") else ""
    cost = f", ${c['cost_usd']:.4f}" if c.get("cost_usd") is not None else ""
    return plain(f"model{via} ({c['model'] or '?'}){used}{cost}", newlines=False)


def export(
    session_id: str = typer.Argument(..., help="Session id (any unique prefix)."),
    fmt: str = typer.Option("text", "--format", "-f", help="text (the text log), cast (the asciicast recording) or json."),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="Write to FILE (- for stdout, the default); never over supervise's own files."
    ),
    force: bool = typer.Option(False, "--force", help="Replace FILE if it exists (its mode is kept)."),
    redact: bool = typer.Option(False, "--redact", help="Mask secrets (API keys, tokens, passwords, private keys)."),
) -> None:
    """Export a session as a text log, the raw asciicast recording, or JSON."""
    from ..recording import exportfile
    from ..recording.export import FORMATS, export as export_session

    if fmt not in FORMATS:
        raise SuperviseError(f"unknown format '{fmt}'", f"use one of: {', '.join(FORMATS)}", exit_code=2)
    to_stdout = output is None or str(output) == "-"
    where = None if to_stdout or output is None else exportfile.target(output, force)  # refused before anything is read
    store = open_store(write=False)
    chunks = export_session(store, store.resolve(session_id), fmt, redact=redact, warn=lambda line: typer.echo(line, err=True))
    if where is None:
        for chunk in chunks:
            sys.stdout.write(chunk)
        return
    exportfile.write(where, chunks)


def summarize(
    session_id: str = typer.Argument(..., help="Session id (any unique prefix)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for the summary (default claude-haiku-4-5)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Anthropic API base URL."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Digest budget in tokens (default 24000)."),
    summary_backend: Optional[str] = typer.Option(None, "--summary-backend", help=BACKEND_HELP),
) -> None:
    """Summarize a session now into its next context round, and print the context prompt."""
    from .. import config
    from ..contexts import rounds

    settings = config.load(model=model, base_url=base_url, budget=budget, backend=summary_backend)
    store = open_store()
    session = store.resolve(session_id)
    row = rounds.make(store, session, "manual", settings)
    how = row["source"] + (f" ({row['error']})" if row["error"] else f" ({row['model']})")
    cost = f", ${row['cost_usd']:.4f}" if row["cost_usd"] is not None else ""
    typer.echo(
        f"supervise: round {row['round']} for session {session['id']} from the {how}, backend {row['backend']}; "
        f"digest {row['digest_tokens']} tokens{cost}",
        err=True,
    )
    typer.echo(plain(row["prompt"]))


def context_cmd(
    session_id: Optional[str] = typer.Argument(None, help="Session id (any unique prefix); none: pick one."),
    everywhere: bool = typer.Option(False, "--all", "-a", help=PICK_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the whole context record as JSON."),
) -> None:
    """Print the latest context prompt of a session."""
    store = open_store(write=False)
    if session_id is None:  # at a terminal: picked
        from .picker import picked

        session_id = picked(store, everywhere, "context")
    session = store.resolve(session_id)
    row = _last_round(store, session)
    if row is None:
        raise SuperviseError(f"session {session['id']} has no context yet", f"make one with `supervise summarize {session['id']}`")
    if as_json:
        typer.echo(json_text(row))
        return
    typer.echo(f"supervise: round {row['round']} of session {session['id']} ({row['trigger']}): {_context_origin(row)}", err=True)
    typer.echo(plain(row["prompt"]))
