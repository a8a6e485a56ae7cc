"""What supervise knows, from the terminal: `search`, and `mcp` (the server an agent asks,
and `mcp install AGENT`)."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Optional

import typer

from .. import project
from ..store import projects
from ..store.database import Store
from ..errors import SuperviseError
from ..plaintext import clip, json_rows, plain
from .shared import local_time, open_store

if TYPE_CHECKING:
    from ..config import Telemetry

PROJECT_HELP = "Only this folder's project (its git repository, wherever it was; default: the current folder's)."
ALL_HELP = "Every project, not only the current folder's."
PROJECT_SHOWN = 16  # characters of a project's name in a hit's line
QUERY_SHOWN = 80  # characters of a query echoed in a line (a pasted page would be one line of it)
UNEMBEDDED_SAID = 100  # chunks and contexts not embedded past which a search says so
LOOKUP_WAIT = 1.0  # seconds a search may wait for its count to go out (an endpoint that never answers)


def project_key(store: Store, folder: Optional[str]) -> Optional[str]:
    """What the project of `folder` (project.scope's) is known by; an error for a folder
    that is neither there nor one sessions were recorded in."""
    if folder is None:
        return None
    key = projects.key_for(store, folder)
    if key is None:
        raise SuperviseError(f"--project: no folder {plain(folder, newlines=False)!r}", "give a folder of the project", exit_code=2)
    return key


def search(
    words: list[str] = typer.Argument(..., help='What to look for: words, a file name, an error, a "phrase".'),
    agent: Optional[str] = typer.Option(None, "--agent", help="Only this agent's sessions."),
    since: Optional[str] = typer.Option(None, "--since", help="Only sessions started since a date (2026-11-20) or an age (12h, 7d, 2w)."),
    folder: Optional[str] = typer.Option(None, "--project", metavar="DIR", help=PROJECT_HELP),
    everywhere: bool = typer.Option(False, "--all", "-a", help=ALL_HELP),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=1000, help="Show the best N hits."),
    session: Optional[str] = typer.Option(
        None, "--session", "-s", metavar="ID", help="Only this session (any unique prefix of its id): every hit it holds."
    ),
    context: int = typer.Option(
        0, "--context", "-C", min=0, max=100, metavar="N", help="Show N lines of the log before and after each hit."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array."),
    reindex: bool = typer.Option(False, "--reindex", help="Make the search index again from every session's text log, then search."),
    embed: bool = typer.Option(False, "--embed", help="Embed what is not embedded yet ([memory] embeddings), then search."),
) -> None:
    """Search every recorded session of this project (--all: of every project): the text logs,
    the user's requests, the contexts and the sessions' names. One line a hit, grouped by
    session, the best first: session, agent, project, when, where, and the line, its matches
    marked; how many more lines each session holds. Secrets are masked. With an embeddings
    endpoint set ([memory] embeddings), lines near the question's meaning are found too."""
    from .. import config
    from ..memory import embedclient, query, reindex as reindexing, search as searching

    text = " ".join(words)
    scope_project = project.scope(folder, everywhere)
    try:
        query.match(text)
    except query.BadQuery as exc:
        raise SuperviseError(f"search: {exc}", 'give the words to look for: `supervise search retry`, "a phrase"', exit_code=2) from None
    try:
        scope = searching.Scope(project=scope_project, agent=agent, since=query.since(since) if since else None)
    except query.BadQuery as exc:
        raise SuperviseError(f"search: --since {exc}", "give a date (2026-11-20) or an age (90m, 12h, 7d, 2w)", exit_code=2) from None
    settings = config.load(warn=config.to_stderr)
    client = embedclient.client(settings.memory)
    if embed and client is None:
        raise SuperviseError(
            "search: --embed needs an embeddings endpoint", "set [memory] embeddings in config.toml, or SUPERVISE_EMBEDDINGS", exit_code=2
        )
    store = open_store(write=reindex or embed)
    if session is not None:  # the session says where: its own project, whichever that is
        scope_project = None
        scope = replace(scope, session=store.resolve(session)["id"])
    scope = replace(scope, project=project_key(store, scope_project))
    if reindex:
        done, chunks = reindexing.reindex(store)
        typer.echo(f"supervise: the search index was made again from {done:,} sessions' text logs ({chunks:,} chunks)", err=True)
    elif caught := reindexing.caught_up(store):
        typer.echo(f"supervise: indexed the end of {caught} session(s) for search (their recorder was stopped)", err=True)
    meaning = None
    if client is not None:
        from ..memory import similar

        _embedded(store, client, everything=reindex or embed)
        meaning = similar.prepared(store, client, text, lambda line: typer.echo(f"supervise: {line}", err=True))
    hits = searching.search(store, text, scope, limit, meaning=meaning)
    try:
        _print_hits(hits, text, scope_project, as_json)
        if not as_json:
            _print_grouped(store, hits, context, one_session=session is not None)
    finally:  # after the answer is out: an endpoint that is slow keeps nobody from it
        _count_lookup("search", scope_project, settings.telemetry)


def _embedded(store: Store, client, everything: bool) -> None:
    """With `everything`, what is not embedded yet embedded now (said as it goes); else how
    much is not, said when it is more than a few rows."""
    from ..memory import embedder
    from ..memory.embedclient import Unavailable
    from ..store import vectors

    model = vectors.embedder(store.conn, client.name)
    if not everything:
        if (left := vectors.unembedded(store.conn, model)) > UNEMBEDDED_SAID:
            typer.echo(
                f"supervise: {left:,} chunks and contexts are not embedded yet (hint: `supervise search --embed` embeds them)", err=True
            )
        return
    said = sys.stderr.isatty()

    def progress(n: int, of: int) -> None:
        if said:
            typer.echo(f"\rsupervise: embedding: {n:,} of {of:,} sessions", err=True, nl=False)

    try:
        lines = embedder.embed_all(store, client, progress)
    except Unavailable as exc:
        typer.echo(
            f"{chr(10) if said else ''}supervise: {exc.line}; what was embedded is kept (hint: `supervise search --embed` goes on)",
            err=True,
        )
        return
    typer.echo(f"{chr(10) if said else ''}supervise: embedded {lines:,} lines for search by meaning", err=True)


def _print_hits(hits: list, text: str, scope_project: Optional[str], as_json: bool) -> None:
    """The JSON form; nothing found said in one line, exit 1."""
    if as_json:
        typer.echo(json_rows([h.as_json() for h in hits]))
    if not hits:  # as grep: nothing found is exit 1, in either form
        where = "in any project" if scope_project is None else f"in {plain(scope_project, newlines=False)} (--all: every project)"
        typer.echo(f"supervise: nothing found for {clip(plain(text, newlines=False), QUERY_SHOWN)!r} {where}", err=True)
        raise typer.Exit(1)


def _print_grouped(store: Store, hits: list, context: int, one_session: bool) -> None:
    """One line a hit, each session's together; with `context`, the lines around each; after
    a session's hits, how many more lines of it match."""
    from ..memory import query, search as searching

    bold = sys.stdout.isatty()
    names = projects.shown(store, (h.project_key for h in hits))
    logs: dict[str, str] = {}  # each session's text log, looked up once
    for i, h in enumerate(hits):
        name = _name(plain(names.get(h.project_key or "") or os.path.basename(h.project or "") or "-", newlines=False))
        typer.echo(
            f"{h.session_id:<7} {(h.agent or '-')[:10]:<10} {name:<{PROJECT_SHOWN}} {local_time(h.when):<16} {h.source:<7} {query.shown(h.line, bold)}"
        )
        if context:
            for line in _around(store, h, context, logs):
                typer.echo(f"{'':<8}{line}")
        if more := searching.more_after(hits, i):
            typer.echo(
                f"{'':<8}… {more} more matching lines in {h.session_id} ({'--limit' if one_session else f'--session {h.session_id}'})"
            )


def _around(store: Store, hit, lines: int, logs: dict[str, str]) -> list[str]:
    """The lines before and after a hit (`>` marks its own), of its log or its context."""
    from ..memory import excerpts
    from ..memory.query import LINE_SHOWN
    from ..redact import redact

    if hit.source == "log":
        if hit.session_id not in logs:
            logs[hit.session_id] = store.resolve(hit.session_id).get("log_path") or ""
        try:
            _, shown, at = excerpts.log_lines(logs[hit.session_id], hit.offset, 2 * lines + 1, lines, LINE_SHOWN)
        except OSError:
            return ["(its text log cannot be read: the recording may have been removed)"]
    elif hit.source == "context":
        prompt = next((c["prompt"] for c in store.contexts(hit.session_id) if c["round"] == hit.round), "")
        every = prompt.split("\n")
        index = prompt[: hit.line.at].count("\n")
        shown = [plain(redact(line), newlines=False) for line in every[max(0, index - lines) : index + lines + 1]]
        at = index - max(0, index - lines)
    else:
        return []
    return excerpts.pointed([clip(line, LINE_SHOWN) for line in shown], at)


def _name(shown: str) -> str:
    """A project's name in a hit's line: `work/app` clipped at its start, where it tells two apart."""
    if "/" in shown and len(shown) > PROJECT_SHOWN:
        return "…" + shown[-(PROJECT_SHOWN - 1) :]
    return clip(shown, PROJECT_SHOWN)


def _count_lookup(tool: str, project_root: Optional[str], telemetry: Telemetry) -> None:
    """A lookup counted where telemetry is on: sent before the command ends, within LOOKUP_WAIT."""
    from ..telemetry.lookups import Lookups

    lookups = Lookups(telemetry, "cli", project_root)
    lookups.count(tool)
    lookups.close(LOOKUP_WAIT)


mcp_app = typer.Typer(
    add_completion=False,
    invoke_without_command=True,
    no_args_is_help=False,
    help="The MCP server an agent asks about earlier sessions (stdio; read-only), and its install into an agent's own config.",
)


@mcp_app.callback()
def mcp(
    ctx: typer.Context,
    folder: Optional[str] = typer.Option(None, "--project", metavar="DIR", help="Its default project (default: the current folder's)."),
    everywhere: bool = typer.Option(
        False, "--all", "-a", help="Answer for every project, searching them all by default (else: [memory] mcp_all_projects)."
    ),
) -> None:
    """Serve supervise's MCP server on stdio: tools search, session, excerpt and brief over
    the sessions of its project (every project's with [memory] mcp_all_projects = true),
    read-only, answers masked and bounded. Agents run under supervise are given it by
    themselves; `supervise mcp install AGENT` adds it to an agent's own config."""
    if ctx.invoked_subcommand is not None:
        return
    from ..memory import mcpentry

    raise typer.Exit(mcpentry.main(folder, everywhere))


@mcp_app.command("install")
def mcp_install(
    agent: str = typer.Argument(..., help="The agent CLI whose own config gets supervise's MCP server."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the command that would add it, and add nothing."),
) -> None:
    """Add supervise's MCP server to an agent CLI's own config, through the agent's own
    `mcp add` command, for its sessions outside supervise too."""
    from ..memory import install, launch

    command = install.command(agent)
    if dry_run:
        typer.echo(shlex.join(command))
        return
    there = install.run(agent, command)
    if there is not None:
        typer.echo(
            f"supervise: {agent} already has an MCP server named {launch.NAME}: left as it is ({command[0]} said: {there})", err=True
        )
        return
    typer.echo(f"supervise: {agent} now has supervise's MCP server (`{shlex.join(command)}`)", err=True)
