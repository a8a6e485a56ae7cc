"""The command line: a thin layer over the library.

`supervise -- CMD` is the common case. Typer cannot route a bare `--` once the app has
several commands, so `main` rewrites a leading `--` (or options, or a word that is not a
command) into `run ...` before Typer sees it.
"""

from __future__ import annotations

import inspect
import sys

import typer

from . import patterns, running, sessions, tools
from .entry import guarded
from .shared import usage_no_command

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    help="Run a coding agent under a supervisor that records it and keeps its context across compaction.",
    subcommand_metavar="-- AGENT [ARGS]... | COMMAND [ARGS]...",
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Registered here, in the order `supervise --help` lists them.
app.command(context_settings=running.RUN_CONTEXT)(running.run)
app.command()(running.resume)
app.command("agent", context_settings={"allow_interspersed_args": True})(running.agent_cmd)
app.command()(sessions.sessions)
app.command()(sessions.ps)
app.command()(sessions.show)
app.command()(sessions.export)
app.command()(sessions.summarize)
app.command("context")(sessions.context_cmd)
app.add_typer(patterns.app, name="patterns")
app.command()(running.demo)
app.command()(tools.browse)
app.command()(tools.doctor)
app.command("db-path")(tools.db_path)
app.command()(tools.version)


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
        usage_no_command()
    # standalone mode: Typer prints usage errors itself and exits 2; ours come to `guarded`.
    guarded(lambda: app(args=route(argv), prog_name="supervise"))
