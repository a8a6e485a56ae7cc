"""`supervise hooks install|uninstall AGENT`: the door of an agent that reads hooks only from
its own configuration, added and taken out by the agent's own commands."""

from __future__ import annotations

import os
import shlex

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Give an agent that reads hooks only from its own configuration supervise's door (its context back through its own hooks).",
)

DRY_RUN = typer.Option(False, "--dry-run", help="Print what it would write and run, and change nothing.")


def _dry(files: list, command: list[str]) -> None:
    for path in files:
        typer.echo(f"write {path}")
    typer.echo(shlex.join(command))


@app.command("install")
def install(
    agent: str = typer.Argument(..., help="The agent CLI (one whose hooks come from its own configuration only)."),
    dry_run: bool = DRY_RUN,
) -> None:
    """Write supervise's door for AGENT (an extension, in supervise's data folder) and have the
    agent add it with its own command; your own settings files are not written. Outside
    supervise its hooks do nothing."""
    from .. import profiles
    from ..giveback import doorinstall

    door = doorinstall.door(agent)
    if dry_run:
        _dry(list(door.install.files), door.install.install)
        return
    there = doorinstall.install(door)
    if there is None:
        typer.echo(f"supervise: {agent} now gets its context back through its own hooks (`{shlex.join(door.install.install)}`)", err=True)
    elif profiles.get(agent).door_here(os.environ):
        typer.echo(f"supervise: {agent} had supervise's door already: brought up to date", err=True)
    else:
        typer.echo(
            f"supervise: {agent} has another door of that name, not linked from {door.folder}: left as it is ({there}); "
            f"`supervise hooks uninstall {agent}` takes it out, then install again",
            err=True,
        )
        raise typer.Exit(1)


@app.command("uninstall")
def uninstall(
    agent: str = typer.Argument(..., help="The agent CLI (one whose hooks come from its own configuration only)."),
    dry_run: bool = DRY_RUN,
) -> None:
    """Have AGENT take supervise's door out with its own command, and remove its files; its
    context is typed again."""
    from ..giveback import doorinstall

    door = doorinstall.door(agent)
    if dry_run:
        typer.echo(shlex.join(door.install.uninstall))
        typer.echo(f"remove {door.folder}")
        return
    if doorinstall.uninstall(door) is None:
        typer.echo(f"supervise: {agent} no longer has supervise's door: its context is typed again", err=True)
    else:
        typer.echo(f"supervise: {agent} had no door of supervise's to take out", err=True)
