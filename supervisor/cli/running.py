"""Starting sessions: `run` (also `supervise -- AGENT`), `resume`, `agent` and `demo`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from .. import commandline
from ..config import DEFAULT_EMULATOR
from ..errors import SuperviseError
from ..plaintext import plain
from .shared import BACKEND_HELP, PICK_HELP, open_store, usage_no_command

RUN_CONTEXT = {"allow_interspersed_args": False, "ignore_unknown_options": True}
INJECT_MODES = ("auto", "type", "off")
ON_LIMIT_HELP = (
    "When the agent hits a usage limit: notify (an event, a notice, the state in `supervise ps`), wait (also type a "
    "continue once the limit has reset and the agent is idle at its prompt, unless you typed meanwhile), or off. "
    "Default: \\[limits] on_limit in config.toml, else notify."
)
NOTIFY_HELP = (
    "Also tell your terminal when the agent needs you (a dialog, done, a limit, compacting): bell, osc (a desktop "
    "notification, OSC 9 or 777), or off. Default: \\[notify] terminal in config.toml, else off."
)
MCP_HELP = "Give the agent supervise's MCP server (search earlier sessions) for this run. Default: [memory] mcp, else on."
BRIEF_HELP = (
    "Start with a brief of what this project's last sessions knew (requests, decisions, open work). Default: [memory] brief, else off."
)
INJECT_HELP = (
    "Give the agent its session context back after compaction and on resume: auto (through the agent's "
    "own hook where it has one, else typed at the idle prompt), type (always typed), off."
)


def _check_inject(inject: str) -> str:
    if inject not in INJECT_MODES:
        raise SuperviseError(f"unknown --inject mode '{inject}'", f"use one of: {', '.join(INJECT_MODES)}", exit_code=2)
    return inject


def run(
    command: Optional[List[str]] = typer.Argument(None, help="The command to supervise, after `--`."),
    name: Optional[str] = typer.Option(None, "--name", "-n", help="A name for this session."),
    agent: Optional[str] = typer.Option(None, "--agent", help="Pattern set to use (default: the command's name)."),
    record_input: bool = typer.Option(False, "--record-input", help="Also record keystrokes (may capture secrets)."),
    emulator: str = typer.Option(DEFAULT_EMULATOR, "--emulator", help="Terminal emulator for the text log: avt or pyte."),
    pattern_files: Optional[List[Path]] = typer.Option(
        None, "--patterns", readable=False, help="An extra pattern file (repeatable); overrides by agent name."
    ),
    inject: str = typer.Option("auto", "--inject", help=INJECT_HELP),
    summary_backend: Optional[str] = typer.Option(None, "--summary-backend", help=BACKEND_HELP),
    on_limit: Optional[str] = typer.Option(None, "--on-limit", help=ON_LIMIT_HELP),
    notify: Optional[str] = typer.Option(None, "--notify", help=NOTIFY_HELP),
    mcp: Optional[bool] = typer.Option(None, "--mcp/--no-mcp", help=MCP_HELP),
    brief: Optional[bool] = typer.Option(None, "--brief/--no-brief", help=BRIEF_HELP),
) -> None:
    """Run COMMAND under the supervisor: `supervise run [OPTIONS] -- COMMAND [ARGS]...`"""
    from .. import config
    from ..recording.emulator import EMULATORS
    from ..run.session import RunOptions, run as run_session

    if not command:
        usage_no_command()
    if emulator not in EMULATORS:
        raise SuperviseError(f"unknown emulator '{emulator}'", f"use one of: {', '.join(EMULATORS)}", exit_code=2)
    opts = RunOptions(
        argv=list(command),
        name=name,
        agent=agent,
        record_input=record_input,
        emulator=emulator,
        pattern_files=[str(p) for p in pattern_files or []],
        inject=_check_inject(inject),
        brief=brief,
        # a setting that is wrong stops here, before the agent starts
        settings=config.load(backend=summary_backend, on_limit=on_limit, notify=notify, mcp=mcp, brief=brief, warn=config.to_stderr),
    )
    raise typer.Exit(run_session(opts))


def resume(
    session_id: Optional[str] = typer.Argument(None, help="Session id (any unique prefix)."),
    extra: Optional[List[str]] = typer.Argument(None, help="Extra arguments for the command, after `--`."),
    last: bool = typer.Option(False, "--last", help="Resume the most recent session."),
    fresh: bool = typer.Option(
        False, "--fresh", help="Start the agent's conversation anew (not its own resume); the context is still given."
    ),
    with_agent: Optional[str] = typer.Option(
        None,
        "--with",
        metavar="AGENT",
        help="Hand the work to another agent CLI (any command; its arguments after `--`; "
        "`supervise patterns list` shows the agents supervise knows), told that another agent did it.",
    ),
    agent_name: Optional[str] = typer.Option(None, "--agent", help="With --with: the pattern set to use (default: the command's name)."),
    inject: Optional[str] = typer.Option(None, "--inject", help=INJECT_HELP + " Default: as the session was run."),
    summary_backend: Optional[str] = typer.Option(None, "--summary-backend", help=BACKEND_HELP),
    on_limit: Optional[str] = typer.Option(None, "--on-limit", help=ON_LIMIT_HELP),
    notify: Optional[str] = typer.Option(None, "--notify", help=NOTIFY_HELP),
    force: bool = typer.Option(False, "--force", help="Resume it even while another supervise runs it or resumes it."),
    mcp: Optional[bool] = typer.Option(None, "--mcp/--no-mcp", help=MCP_HELP),
    everywhere: bool = typer.Option(False, "--all", "-a", help=PICK_HELP),
) -> None:
    """Start a new session linked to an earlier one: same command, directory, agent and
    options; the agent's own conversation carried on where its profile knows how; or, with --with, another agent
    in the same directory. The earlier session's context (summarized first if it is out of
    date) is given to the agent once it is ready."""
    from .. import config, profiles
    from ..run.session import RunOptions, run as run_session

    # a setting that is wrong stops here, before the agent starts
    settings = config.load(backend=summary_backend, on_limit=on_limit, notify=notify, mcp=mcp, warn=config.to_stderr)
    if agent_name and not with_agent:
        raise SuperviseError("--agent goes with --with", "a session resumed as it was keeps its pattern set", exit_code=2)
    store = open_store()
    if last:
        if session_id:  # with --last, a positional word is an extra argument
            extra = [session_id, *(extra or [])]
        old = store.latest()
    elif session_id:
        old = store.resolve(session_id)
    else:  # none given: picked at a terminal
        from .picker import picked

        old = store.resolve(picked(store, everywhere, "resume"))
    store.close()
    if not old["cwd"]:  # brought back from its recording, which does not say where it ran
        old["cwd"] = str(Path.cwd())
        print(
            f"supervise: the directory session {old['id']} ran in is not known (it was brought back from its recording): "
            f"resuming it here, in {plain(old['cwd'], newlines=False)}",
            file=sys.stderr,
        )
    if not Path(old["cwd"]).is_dir():
        raise SuperviseError(f"the session's directory {old['cwd']} no longer exists", "recreate it or cd elsewhere and run anew")
    options = old.get("options") or {}
    # The stored agent is what was in use; pass it on only if the command alone would not choose it.
    agent = old["agent"] if old["agent"] not in (None, Path(old["argv"][0]).name) else None
    argv = commandline.as_run(old) + list(extra or [])
    handoff_from = None
    if with_agent:  # another agent: a conversation of its own, told whose work it takes over
        argv, agent = [with_agent, *(extra or [])], agent_name
        handoff_from = plain(old["agent"] or Path(old["argv"][0]).name, newlines=False)
    else:  # its own conversation carried on, as its profile says
        resumed = profiles.get(old["agent"]).resume(argv, old, fresh)
        argv, inject = resumed.argv, inject or resumed.inject
        if resumed.note:
            print(resumed.note, file=sys.stderr)
    opts = RunOptions(
        argv=argv,
        name=old["name"],
        agent=agent,
        cwd=old["cwd"],
        parent_id=old["id"],
        handoff_from=handoff_from,
        agent_session_id=None if with_agent or fresh else old.get("agent_session_id"),
        record_input=bool(options.get("record_input", False)),
        emulator=options.get("emulator", DEFAULT_EMULATOR),
        pattern_files=[p for p in options.get("pattern_files", []) if Path(p).exists()],
        # a hand-off is for giving the context: as the earlier session was run or not
        inject=_check_inject(inject or ("auto" if with_agent else options.get("inject", "auto"))),
        force=force,
        settings=settings,
    )
    raise typer.Exit(run_session(opts))


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
    compaction: Optional[str] = typer.Option(
        None, "--compaction", help="auto (default): mask old tool outputs, then summarize, past --compact-at of the window; off."
    ),
    compact_at: Optional[float] = typer.Option(
        None, "--compact-at", help="Share of the usable window at which compaction starts (default 0.8)."
    ),
    summary_model: Optional[str] = typer.Option(
        None, "--summary-model", help="Model for the compaction's summaries (default: the agent's)."
    ),
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
        task or [],
        print=once,
        model=model,
        base_url=base_url,
        context_limit=context_limit,
        max_steps=max_steps,
        image=image,
        network=network,
        workspace=workspace.resolve() if workspace else None,
        scratch=scratch,
        timeout=timeout,
        confirm=confirm,
        compaction=compaction,
        compact_at=compact_at,
        summary_model=summary_model,
        keep_last=keep_last,
    )
    # It keeps its own context (it compacts itself): nothing is typed into it.
    raise typer.Exit(run_session(RunOptions(argv=argv, name=name, agent=agents.AGENT, inject="off")))


def demo() -> None:
    """The whole idea in a minute: a demo agent works, compacts, and is given its context back."""
    from .. import config
    from ..run.session import RunOptions, run as run_session

    argv = [sys.executable, "-P", "-m", "supervisor.cli.demo_agent"]
    # a demo of compaction: a brief of earlier demos would wait for a prompt it never reads
    code = run_session(RunOptions(argv=argv, name="demo", agent="demo", inject="type", settings=config.load(brief=False)))
    sid = open_store().latest()["id"]
    typer.echo(
        f"\nsupervise demo: session {sid}. Look at it with:\n"
        f"  supervise show {sid}              # its events: the compaction, the context given back\n"
        f"  supervise context {sid}           # the session context the agent was given\n"
        f"  supervise export {sid}            # the text log (--format cast: the recording)\n"
        f"  supervise resume {sid}            # run it again, linked, with its context\n"
        f"  supervise browse --open           # everything in Datasette",
        err=True,
    )
    raise typer.Exit(code)
