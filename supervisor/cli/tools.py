"""The commands around the sessions: `browse`, `doctor`, `db-path`, `version`."""

from __future__ import annotations

import json
import os
import sys

import typer

from .. import __version__, paths
from ..plaintext import json_text
from .shared import open_store


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
    open_store().close()  # created and up to date before Datasette reads it
    path = paths.db_path().with_name("supervise.metadata.json")
    with paths.open_private(path, "w", encoding="utf-8") as fh:  # next to the database, for plain `datasette` too
        json.dump(meta, fh, indent=2, ensure_ascii=False)
    argv = [sys.executable, "-m", "datasette", "serve", str(paths.db_path()), "--metadata", str(path), "--host", host, "--port", str(port)]
    if open_browser:
        argv.append("--open")
    typer.echo(f"supervise: serving {paths.db_path()} at http://{host}:{port}/ (Ctrl-C to stop)", err=True)
    os.execv(sys.executable, argv)


def doctor(as_json: bool = typer.Option(False, "--json", help="Print a JSON array.")) -> None:
    """Check the terminal, data directory, database, pattern files, agent CLIs, hook, API key,
    Docker and Datasette: each ok, warn or problem (with the fix); exit 1 on a problem."""
    from ..doctor import report
    from ..doctor.checks import run_all

    checks = []
    for check in run_all():
        checks.append(check)
        if not as_json:
            for line in report.lines(check):
                typer.echo(line)
    if as_json:
        typer.echo(json_text([report.as_dict(c) for c in checks]))
    else:
        typer.echo(report.summary(checks), err=True)
    raise typer.Exit(1 if report.broken(checks) else 0)


def db_path() -> None:
    """Print the database path, e.g. for `datasette "$(supervise db-path)"`."""
    typer.echo(str(paths.db_path()))


def version() -> None:
    """Print the version."""
    typer.echo(f"supervise {__version__}")
