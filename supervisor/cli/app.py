"""The command line: a thin layer over the library.

`supervise -- CMD` is the common case. Typer cannot route a bare `--` once the app has
several commands, so `main` rewrites a leading `--` (or options, or a program's name) into
`run ...` before Typer sees it; what is neither a command nor a program, nor an option of
`run`, is a typo (routing.py).
"""

from __future__ import annotations

import inspect
import sys

import typer

from .. import __version__
from ..errors import SuperviseError
from . import hooks, memory, patterns, routing, running, sessions, tools
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
app.command()(memory.search)
app.add_typer(memory.mcp_app, name="mcp")
app.add_typer(hooks.app, name="hooks")
app.add_typer(patterns.app, name="patterns")
app.command()(running.demo)
app.command()(tools.browse)
app.command()(tools.doctor)
app.command("db-path")(tools.db_path)
app.command()(tools.version)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"supervise {__version__}")
        raise typer.Exit()


@app.callback()
def _top(
    version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_print_version, help="Print the version and exit."),
) -> None:
    pass


assert app.info.help is not None  # given to typer.Typer above
app.info.help += (
    f"\n\nTo run an agent: supervise [RUN OPTIONS] -- AGENT [ARGS]. The run options are those of "
    f"`supervise run --help`: {', '.join(routing.option_names(running.run))}."
)


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
        assert group.typer_instance is not None  # add_typer registers the Typer it is given
        _flowing_help(group.typer_instance)


_flowing_help(app)


def route(argv: list[str]) -> list[str]:
    """Send `supervise -- CMD`, `supervise --name x -- CMD` and `supervise CMD` to `run`;
    refuse a typo before anything runs."""
    commands: set[str] = set()
    for c in app.registered_commands:
        assert c.callback is not None  # each command above is registered with its function
        commands.add(c.name or c.callback.__name__.replace("_", "-"))
    commands |= {g.name for g in app.registered_groups if g.name is not None}  # each is added with its name
    return routing.route(argv, commands, routing.run_options(running.run), _options_of)


def _options_of(name: str) -> dict[str, bool]:
    """The options of our command `name` (of a group: its own, before its subcommand's)."""
    for c in app.registered_commands:
        if c.callback is not None and (c.name or c.callback.__name__.replace("_", "-")) == name:
            return routing.run_options(c.callback)
    for g in app.registered_groups:
        if g.name == name and g.typer_instance is not None and g.typer_instance.registered_callback is not None:
            callback = g.typer_instance.registered_callback.callback
            return routing.run_options(callback) if callback is not None else {}
    return {}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        usage_no_command()
    guarded(lambda: _invoke(route(argv)))


def _invoke(args: list[str]) -> None:
    """Run the command as Click's own `main` would, but with its usage errors as our one line
    and a closed pipe left to `guarded` (Click makes both exit 1)."""
    try:  # Typer 0.2x carries its own Click; earlier ones use Click itself
        from typer._click import exceptions as click
    except ImportError:
        from click import exceptions as click  # type: ignore[no-redef]  # the same module, by Click's own name

    command = typer.main.get_command(app)
    try:
        with command.make_context("supervise", args) as ctx:
            command.invoke(ctx)
    except (typer.Exit, getattr(click, "Exit", typer.Exit)) as done:
        sys.exit(done.exit_code)
    except click.UsageError as exc:
        where = exc.ctx.command_path.removeprefix("supervise").strip() if exc.ctx else ""
        raise SuperviseError(
            f"{where + ': ' if where else ''}{' '.join(exc.format_message().split())}",
            f"`supervise {where + ' ' if where else ''}--help` lists what it takes",
            exit_code=2,
        ) from exc
    except (typer.Abort, getattr(click, "Abort", typer.Abort)):
        sys.exit(130)
