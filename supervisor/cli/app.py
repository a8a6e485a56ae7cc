"""The command line: a thin layer over the library.

`supervise -- CMD` is the common case. Typer cannot route a bare `--` once the app has
several commands, so `main` rewrites a leading `--` (or options, or a word that is not a
command) into `run ...` before Typer sees it.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import List, Optional

import typer

from .. import __version__, paths
from .entry import guarded
from ..config import DEFAULT_EMULATOR
from ..errors import SuperviseError
from ..plaintext import json_rows, json_text, plain
from ..store.database import Store

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    help="Run a coding agent under a supervisor that records it and keeps its context across compaction.",
    subcommand_metavar="-- AGENT [ARGS]... | COMMAND [ARGS]...",
    context_settings={"help_option_names": ["-h", "--help"]},
)

RUN_CONTEXT = {"allow_interspersed_args": False, "ignore_unknown_options": True}
INJECT_MODES = ("auto", "type", "off")
BACKEND_HELP = ("Who makes the session contexts: auto (default: the API with a key, else Claude Code or Codex on your own "
                "login (the session's own agent first), else the heuristic), api, claude, codex, gemini, heuristic.")
ON_LIMIT_HELP = ("When the agent hits a usage limit: notify (an event, a notice, the state in `supervise ps`), wait (also type a "
                 "continue once the limit has reset and the agent is idle at its prompt, unless you typed meanwhile), or off. "
                 "Default: \\[limits] on_limit in config.toml, else notify.")
NOTIFY_HELP = ("Also tell your terminal when the agent needs you (a dialog, done, a limit, compacting): bell, osc (a desktop "
               "notification, OSC 9 or 777), or off. Default: \\[notify] terminal in config.toml, else off.")
INJECT_HELP = ("Give the agent its session context back after compaction and on resume: auto (Claude Code: "
               "its SessionStart hook, else typed at the idle prompt), type (always typed), off.")


def _check_inject(inject: str) -> str:
    if inject not in INJECT_MODES:
        raise SuperviseError(f"unknown --inject mode '{inject}'", f"use one of: {', '.join(INJECT_MODES)}", exit_code=2)
    return inject


def _store() -> Store:
    return Store.open_default()


SESSIONS_SHOWN = 50  # `supervise sessions` without --all: a screenful or two, not thousands of lines

MOST_USED = (
    ("supervise -- claude", "run an agent (claude, codex, gemini, opencode, aider, ...) under the supervisor"),
    ("supervise ps", "what each running agent is doing"),
    ("supervise sessions", "the recorded sessions, newest first"),
    ("supervise resume ID", "carry on a session (--with AGENT: hand it to another agent)"),
    ("supervise context ID", "the latest context prompt of a session"),
)


def _usage_no_command() -> None:
    print("Usage: supervise [OPTIONS] -- AGENT [ARGS]...  |  supervise COMMAND [ARGS]...\n\nMost used:", file=sys.stderr)
    for command, what in MOST_USED:
        print(f"  {command:<22} {what}", file=sys.stderr)
    print("\nsupervise: no command given (hint: `supervise -- claude`, or `supervise --help` for every command)", file=sys.stderr)
    sys.exit(2)


@app.command(context_settings=RUN_CONTEXT)
def run(
    command: Optional[List[str]] = typer.Argument(None, help="The command to supervise, after `--`."),
    name: Optional[str] = typer.Option(None, "--name", "-n", help="A name for this session."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Pattern set to use (default: the command's name)."),
    record_input: bool = typer.Option(False, "--record-input", help="Also record keystrokes (may capture secrets)."),
    emulator: str = typer.Option(DEFAULT_EMULATOR, "--emulator", help="Terminal emulator for the text log: avt or pyte."),
    pattern_files: Optional[List[Path]] = typer.Option(None, "--patterns", help="An extra pattern file (repeatable); overrides by agent name."),
    inject: str = typer.Option("auto", "--inject", help=INJECT_HELP),
    summary_backend: Optional[str] = typer.Option(None, "--summary-backend", help=BACKEND_HELP),
    on_limit: Optional[str] = typer.Option(None, "--on-limit", help=ON_LIMIT_HELP),
    notify: Optional[str] = typer.Option(None, "--notify", help=NOTIFY_HELP),
) -> None:
    """Run COMMAND under the supervisor: `supervise run [OPTIONS] -- COMMAND [ARGS]...`"""
    from .. import config
    from ..recording.emulator import EMULATORS
    from ..run.session import RunOptions, run as run_session

    if not command:
        _usage_no_command()
    if emulator not in EMULATORS:
        raise SuperviseError(f"unknown emulator '{emulator}'", f"use one of: {', '.join(EMULATORS)}", exit_code=2)
    opts = RunOptions(
        argv=list(command), name=name, agent=agent, record_input=record_input, emulator=emulator,
        pattern_files=[str(p) for p in pattern_files or []], inject=_check_inject(inject),
        summary_backend=summary_backend, on_limit=on_limit, notify=notify,
    )
    config.load(backend=summary_backend, on_limit=on_limit, notify=notify)  # a setting that is wrong stops here, not in the recorder
    raise typer.Exit(run_session(opts))


@app.command()
def resume(
    session_id: Optional[str] = typer.Argument(None, help="Session id (any unique prefix)."),
    extra: Optional[List[str]] = typer.Argument(None, help="Extra arguments for the command, after `--`."),
    last: bool = typer.Option(False, "--last", help="Resume the most recent session."),
    fresh: bool = typer.Option(False, "--fresh", help="Start the agent's conversation anew (no `claude --resume`); the context is still given."),
    with_agent: Optional[str] = typer.Option(None, "--with", metavar="AGENT",
                                             help="Hand the work to another agent CLI (claude, codex, gemini, opencode, aider or any "
                                                  "command; its arguments after `--`), told that another agent did it."),
    agent_name: Optional[str] = typer.Option(None, "--agent", help="With --with: the pattern set to use (default: the command's name)."),
    inject: Optional[str] = typer.Option(None, "--inject", help=INJECT_HELP + " Default: as the session was run."),
    summary_backend: Optional[str] = typer.Option(None, "--summary-backend", help=BACKEND_HELP),
    on_limit: Optional[str] = typer.Option(None, "--on-limit", help=ON_LIMIT_HELP),
    notify: Optional[str] = typer.Option(None, "--notify", help=NOTIFY_HELP),
) -> None:
    """Start a new session linked to an earlier one: same command, directory, agent and
    options; for Claude Code with `--resume <its session id>`; or, with --with, another agent
    in the same directory. The earlier session's context (summarized first if it is out of
    date) is given to the agent once it is ready."""
    from .. import agent as agents, config
    from ..giveback import claude
    from ..run.session import RunOptions, run as run_session

    config.load(backend=summary_backend, on_limit=on_limit, notify=notify)  # a setting that is wrong stops here, not in the recorder
    if agent_name and not with_agent:
        raise SuperviseError("--agent goes with --with", "a session resumed as it was keeps its pattern set", exit_code=2)
    store = _store()
    if last:
        if session_id:  # with --last, a positional word is an extra argument
            extra = [session_id, *(extra or [])]
        old = store.latest()
    elif session_id:
        old = store.resolve(session_id)
    else:
        raise SuperviseError("which session?", "give an id (`supervise sessions` lists them) or --last", exit_code=2)
    store.close()
    if not Path(old["cwd"]).is_dir():
        raise SuperviseError(f"the session's directory {old['cwd']} no longer exists", "recreate it or cd elsewhere and run anew")
    options = old.get("options") or {}
    # The stored agent is what was in use; pass it on only if the command alone would not choose it.
    agent = old["agent"] if old["agent"] not in (None, Path(old["argv"][0]).name) else None
    argv = list(old["argv"]) + list(extra or [])
    handoff_from = None
    if with_agent:  # another agent: a conversation of its own, told whose work it takes over
        argv, agent = [with_agent, *(extra or [])], agent_name
        handoff_from = plain(old["agent"] or Path(old["argv"][0]).name, newlines=False)
    elif old["agent"] == "claude":
        if not fresh and not old.get("agent_session_id"):
            print(f"supervise: no Claude Code session id was recorded for {old['id']}; starting a new conversation "
                  "and giving it the context", file=sys.stderr)
        argv = claude.resume_argv(argv, None if fresh else old.get("agent_session_id"))
    elif old["agent"] == agents.AGENT:
        argv = agents.resume_argv(argv, None if fresh else old["id"])
        if inject is None:  # its own conversation carries on, or a fresh one is given the context
            inject = "off" if not fresh else "auto"
    opts = RunOptions(
        argv=argv,
        name=old["name"],
        agent=agent,
        cwd=old["cwd"],
        parent_id=old["id"],
        handoff_from=handoff_from,
        record_input=bool(options.get("record_input", False)),
        emulator=options.get("emulator", DEFAULT_EMULATOR),
        pattern_files=[p for p in options.get("pattern_files", []) if Path(p).exists()],
        # a hand-off is for giving the context: as the earlier session was run or not
        inject=_check_inject(inject or ("auto" if with_agent else options.get("inject", "auto"))),
        summary_backend=summary_backend, on_limit=on_limit, notify=notify,
    )
    raise typer.Exit(run_session(opts))


@app.command("agent", context_settings={"allow_interspersed_args": True})
def agent_cmd(
    task: Optional[List[str]] = typer.Argument(None, help="What to do (else asked at the agent› prompt)."),
    once: bool = typer.Option(False, "-p", "--print", help="Run TASK without a prompt, then exit (0: done)."),
    model: Optional[str] = typer.Option(None, "--model", help="The agent's model (default claude-sonnet-5-5)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Anthropic API base URL."),
    context_limit: Optional[int] = typer.Option(None, "--context-limit", help="Tokens (default: the model's)."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Model calls per task (default 50)."),
    image: Optional[str] = typer.Option(None, "--image", help="Sandbox image (default python:3.12-slim, pulled on first use)."),
    network: Optional[str] = typer.Option(None, "--network", help="The sandbox's network: bridge (default) or none."),
    workspace: Optional[Path] = typer.Option(None, "--workspace", help="Mounted at /workspace (default: this directory)."),
    scratch: bool = typer.Option(False, "--scratch", help="A throwaway workspace instead."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per command before it is killed (default 60)."),
    confirm: bool = typer.Option(False, "--confirm", help="Ask before each command."),
    compaction: Optional[str] = typer.Option(None, "--compaction", help="auto (default): mask old tool outputs, then summarize, past --compact-at of the window; off."),
    compact_at: Optional[float] = typer.Option(None, "--compact-at", help="Share of the usable window at which compaction starts (default 0.8)."),
    summary_model: Optional[str] = typer.Option(None, "--summary-model", help="Model for the compaction's summaries (default: the agent's)."),
    keep_last: Optional[int] = typer.Option(None, "--keep-last", help="Messages a summary keeps as they are (default 10)."),
    name: Optional[str] = typer.Option(None, "--name", "-n", help="A name for this session."),
) -> None:
    """supervise's own coding agent, every command in a hardened Docker sandbox, run under the supervisor."""
    from .. import agent as agents, config
    from ..run.session import RunOptions, run as run_session

    if network not in (None, "bridge", "none"):
        raise SuperviseError(f"unknown --network '{network}'", "use bridge or none", exit_code=2)
    if compaction not in (None, "auto", "off") or not 0.1 <= (compact_at or 0.8) <= 0.99:
        raise SuperviseError("--compaction takes auto or off, --compact-at a share from 0.1 to 0.99", exit_code=2)
    if not config.load(model=model, base_url=base_url).summary.has_key:
        raise SuperviseError("no API key for the agent's model", "set ANTHROPIC_API_KEY (or SUPERVISE_SUMMARY_API_KEY)", exit_code=2)
    if workspace is not None and not workspace.is_dir():
        raise SuperviseError(f"no such directory: {workspace}", "give --workspace an existing directory, or --scratch", exit_code=2)
    argv = agents.command_line(
        task or [], print=once, model=model, base_url=base_url, context_limit=context_limit, max_steps=max_steps, image=image,
        network=network, workspace=workspace.resolve() if workspace else None, scratch=scratch, timeout=timeout, confirm=confirm,
        compaction=compaction, compact_at=compact_at, summary_model=summary_model, keep_last=keep_last,
    )
    # It keeps its own context (it compacts itself): nothing is typed into it.
    raise typer.Exit(run_session(RunOptions(argv=argv, name=name, agent=agents.AGENT, inject="off")))


@app.command()
def sessions(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
    limit: int = typer.Option(SESSIONS_SHOWN, "--limit", "-n", min=1, help="Show the newest N sessions."),
    show_all: bool = typer.Option(False, "--all", "-a", help="Show every session."),
) -> None:
    """List sessions, newest first."""
    store = _store()
    rows = store.sessions(None if show_all else limit)
    if as_json:
        typer.echo(json_rows(rows))
    elif not rows:
        typer.echo("No sessions yet. Start one with: supervise -- COMMAND")
    else:
        lines = [f"{'ID':<8} {'STATUS':<12} {'STARTED':<17} {'EXIT':>4}  {'AGENT':<10} COMMAND"]
        for r in rows:
            exit_code = "" if r["exit_code"] is None else str(r["exit_code"])
            label = plain(r["command"] if not r["name"] else f"{r['name']}: {r['command']}", newlines=False)
            lines.append(f"{r['id']:<8} {r['status']:<12} {_local(r['started']):<17} {exit_code:>4}  {(r['agent'] or '')[:10]:<10} {label}")
        typer.echo("\n".join(lines))
    if not show_all and len(rows) == limit and (total := store.count_sessions()) > limit:
        typer.echo(f"supervise: the newest {limit:,} of {total:,} sessions (--all for every one, --limit N for more)", err=True)


@app.command()
def ps(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
    watch: bool = typer.Option(False, "--watch", help="Show it again every --interval seconds until Ctrl-C."),
    interval: float = typer.Option(1.0, "--interval", min=0.1, help="Seconds between two views with --watch."),
) -> None:
    """Every running session and what its agent is doing, newest first: working, waiting at its prompt, permission (a dialog waits for you), compacting, limited until a time, or starting."""
    from ..status import ps as listing
    import time

    store = _store()
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


@app.command()
def show(
    session_id: str = typer.Argument(..., help="Session id (any unique prefix)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show one session with its events, its context rounds and related sessions."""
    from ..recording.export import session_json

    store = _store()
    data = session_json(store, store.resolve(session_id))
    data["contexts"] = [{k: c[k] for k in CONTEXT_KEYS} for c in store.contexts(data["id"])]
    if as_json:
        typer.echo(json_text(data))
        return
    for key in ("id", "name", "status", "command", "agent", "agent_session_id", "cwd", "started", "ended", "exit_code", "cast_path", "log_path"):
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
            typer.echo(f"  round {c['round']:<3} {_local(c['created'])}  {c['trigger']:<20} {_context_origin(c)}")


# What `show` tells of each context round (the prompt itself: `supervise context`).
CONTEXT_KEYS = ("round", "created", "trigger", "source", "backend", "model", "error", "input_tokens", "output_tokens", "cost_usd")


def _context_origin(c: dict) -> str:
    """`model via claude (claude-haiku-4-5), 3400+420 tokens, $0.0055`, or the heuristic and why."""
    via = f" via {c['backend']}" if c.get("backend") and c["backend"] != c["source"] else ""
    if c["source"] != "model":
        return plain(f"{c['source']}{via}" + (f": {c['error']}" if c.get("error") else ""), newlines=False)
    used = f", {c['input_tokens'] or 0}+{c['output_tokens'] or 0} tokens" if c.get("input_tokens") or c.get("output_tokens") else ""
    cost = f", ${c['cost_usd']:.4f}" if c.get("cost_usd") is not None else ""
    return plain(f"model{via} ({c['model'] or '?'}){used}{cost}", newlines=False)


@app.command()
def export(
    session_id: str = typer.Argument(..., help="Session id (any unique prefix)."),
    fmt: str = typer.Option("text", "--format", "-f", help="text (the text log), cast (the asciicast recording) or json."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to FILE instead of stdout."),
    redact: bool = typer.Option(False, "--redact", help="Mask secrets (API keys, tokens, passwords, private keys)."),
) -> None:
    """Export a session as a text log, the raw asciicast recording, or JSON."""
    from ..recording.export import FORMATS, export as export_session

    if fmt not in FORMATS:
        raise SuperviseError(f"unknown format '{fmt}'", f"use one of: {', '.join(FORMATS)}", exit_code=2)
    store = _store()
    chunks = export_session(store, store.resolve(session_id), fmt, redact=redact)
    if output is None:
        for chunk in chunks:
            sys.stdout.write(chunk)
        return
    first = next(chunks, "")  # resolve errors before creating the file
    try:
        with paths.open_private(output, "w", encoding="utf-8") as fh:
            fh.write(first)
            for chunk in chunks:
                fh.write(chunk)
    except OSError as exc:
        raise SuperviseError(f"cannot write {output}: {exc.strerror or exc}") from exc


@app.command()
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
    store = _store()
    session = store.resolve(session_id)
    row = rounds.make(store, session, "manual", settings)
    how = row["source"] + (f" ({row['error']})" if row["error"] else f" ({row['model']})")
    cost = f", ${row['cost_usd']:.4f}" if row["cost_usd"] is not None else ""
    typer.echo(f"supervise: round {row['round']} for session {session['id']} from the {how}, backend {row['backend']}; "
               f"digest {row['digest_tokens']} tokens{cost}", err=True)
    typer.echo(plain(row["prompt"]))


@app.command("context")
def context_cmd(
    session_id: str = typer.Argument(..., help="Session id (any unique prefix)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole context record as JSON."),
) -> None:
    """Print the latest context prompt of a session."""
    store = _store()
    session = store.resolve(session_id)
    row = store.latest_context(session["id"])
    if row is None:
        raise SuperviseError(f"session {session['id']} has no context yet", f"make one with `supervise summarize {session['id']}`")
    if as_json:
        typer.echo(json_text(row))
        return
    typer.echo(f"supervise: round {row['round']} of session {session['id']} ({row['trigger']}): {_context_origin(row)}", err=True)
    typer.echo(plain(row["prompt"]))


patterns_app = typer.Typer(help="Pattern files: which screen lines mean compaction, idle, a dialog...", no_args_is_help=True)
app.add_typer(patterns_app, name="patterns")


@patterns_app.command("list")
def patterns_list(
    pattern_files: Optional[List[Path]] = typer.Option(None, "--patterns", help="An extra pattern file to include."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the pattern sets in use (shipped, yours, extra) and their patterns."""
    from ..detection import patterns

    sets = patterns.load_all(pattern_files or [])
    if as_json:
        typer.echo(json.dumps([
            {"agent": s.agent, "title": s.title, "commands": s.commands, "source": str(s.source), "overrides": [str(o) for o in s.overrides],
             "patterns": [{"name": p.name, "event": p.event, "regex": p.regex.pattern, "seen_on": p.seen_on, "status": p.status} for p in s.patterns]}
            for s in sets.values()
        ], indent=2, ensure_ascii=False))
        return
    typer.echo(f"shipped: {patterns.builtin_dir()}\nyours:   {patterns.user_dir()}")
    for s in sets.values():
        typer.echo(f"\n{s.agent} ({s.title}) — commands: {', '.join(s.commands)} — {s.source}")
        for o in s.overrides:
            typer.echo(f"  overrides {o}")
        for p in s.patterns:
            typer.echo(f"  {p.event:<20} {p.name:<32} {p.status:<9} {p.seen_on:<8} {p.regex.pattern}")


@patterns_app.command("check")
def patterns_check(
    file: Path = typer.Argument(..., help="A session.cast or a text log."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Pattern set (default: from the recording's command)."),
    pattern_files: Optional[List[Path]] = typer.Option(None, "--patterns", help="An extra pattern file (e.g. the one you are writing)."),
) -> None:
    """Print every pattern match in a recording or text log, with its time or line."""
    from ..detection import patterns
    from ..recording.patterncheck import cast_command, check, is_cast, log_lines
    from ..detection.userturns import user_turns

    sets = patterns.load_all(pattern_files or [])
    name = agent or (cast_command(file) if file.is_file() and is_cast(file) else None)
    chosen = patterns.select(sets, name) if name else None
    if chosen is None:
        raise SuperviseError(
            f"no pattern set for {'agent ' + repr(name) if name else file}",
            f"pass --agent (one of: {', '.join(sorted(sets))})",
            exit_code=2,
        )
    kind, found = check(file, chosen)
    count = 0
    for d in found:
        where = f"{d.t:>9.3f}s" if kind == "cast" else f"line {int(d.t):>5}"
        values = " ".join(f"{k}={v}" for k, v in d.values.items())
        typer.echo(f"{where}  {d.kind:<20} {(d.pattern or '-'):<36} {d.text}{'  [' + values + ']' if values else ''}")
        count += 1
    typer.echo(f"{count} match{'es' if count != 1 else ''} ({chosen.agent} patterns, {file.name})", err=True)
    if chosen.of("user_input"):
        turns = user_turns(log_lines(file), chosen)
        for turn in turns:
            typer.echo("user input: " + turn.replace("\n", "\n            "))
        typer.echo(f"{len(turns)} user message{'s' if len(turns) != 1 else ''} (user_input patterns)", err=True)


@app.command()
def demo() -> None:
    """The whole idea in a minute: a demo agent works, compacts, and is given its context back."""
    from ..run.session import RunOptions, run as run_session

    argv = [sys.executable, "-P", "-m", "supervisor.cli.demo_agent"]
    code = run_session(RunOptions(argv=argv, name="demo", agent="demo", inject="type"))
    sid = Store.open_default().latest()["id"]
    typer.echo(f"\nsupervise demo: session {sid}. Look at it with:\n"
               f"  supervise show {sid}              # its events: the compaction, the context given back\n"
               f"  supervise context {sid}           # the session context the agent was given\n"
               f"  supervise export {sid}            # the text log (--format cast: the recording)\n"
               f"  supervise resume {sid}            # run it again, linked, with its context\n"
               f"  supervise browse --open           # everything in Datasette", err=True)
    raise typer.Exit(code)


@app.command()
def browse(
    port: int = typer.Option(8001, "--port", help="Port to serve on."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (this machine only by default)."),
    open_browser: bool = typer.Option(False, "--open", help="Open it in a browser."),
    print_metadata: bool = typer.Option(False, "--print-metadata", help="Print the Datasette metadata and exit."),
) -> None:
    """Browse sessions, events, contexts and the text logs (searchable) with Datasette."""
    from ..store import browse as browsing

    meta = browsing.metadata()
    if print_metadata:
        typer.echo(json.dumps(meta, indent=2, ensure_ascii=False))
        return
    _store().close()  # created and up to date before Datasette reads it
    path = paths.db_path().with_name("supervise.metadata.json")
    with paths.open_private(path, "w", encoding="utf-8") as fh:  # next to the database, for plain `datasette` too
        json.dump(meta, fh, indent=2, ensure_ascii=False)
    argv = [sys.executable, "-m", "datasette", "serve", str(paths.db_path()), "--metadata", str(path), "--host", host, "--port", str(port)]
    if open_browser:
        argv.append("--open")
    typer.echo(f"supervise: serving {paths.db_path()} at http://{host}:{port}/ (Ctrl-C to stop)", err=True)
    os.execv(sys.executable, argv)


@app.command()
def doctor(as_json: bool = typer.Option(False, "--json", help="Print a JSON array.")) -> None:
    """Check the terminal, data directory, database, pattern files, agent CLIs, hook, API key,
    Docker and Datasette: each ok, warn or problem (with the fix); exit 1 on a problem."""
    from ..doctor import checks as checkup

    checks = []
    for check in checkup.run_all():
        checks.append(check)
        if not as_json:
            for line in checkup.lines(check):
                typer.echo(line)
    if as_json:
        typer.echo(json_text([checkup.as_dict(c) for c in checks]))
    else:
        typer.echo(checkup.summary(checks), err=True)
    raise typer.Exit(1 if checkup.broken(checks) else 0)


@app.command("db-path")
def db_path() -> None:
    """Print the database path, e.g. for `datasette "$(supervise db-path)"`."""
    typer.echo(str(paths.db_path()))


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(f"supervise {__version__}")


def _local(iso: str | None) -> str:
    if not iso:
        return ""
    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def _flowing(doc: str | None) -> str | None:
    """A docstring as help text: each paragraph one flowing sentence run (Typer would keep
    the docstring's line breaks and break lines mid-sentence)."""
    if not doc:
        return doc
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(doc).split("\n\n"))


def _flowing_help(typer_app: typer.Typer) -> None:
    for command in typer_app.registered_commands:
        if command.help is None and command.callback is not None:
            command.help = _flowing(command.callback.__doc__)
    for group in typer_app.registered_groups:
        _flowing_help(group.typer_instance)


_flowing_help(app)


def route(argv: list[str]) -> list[str]:
    """Send `supervise -- CMD`, `supervise --name x -- CMD` and `supervise CMD` to `run`
    (and `--version` to `version`)."""
    if not argv:
        return argv
    first = argv[0]
    commands = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands}
    commands |= {g.name for g in app.registered_groups}
    if first in commands or first in ("-h", "--help"):
        return argv
    if first in ("--version", "-V"):
        return ["version"]
    return ["run", *argv]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        _usage_no_command()
    # standalone mode: Typer prints usage errors itself and exits 2; ours come to `guarded`.
    guarded(lambda: app(args=route(argv), prog_name="supervise"))
