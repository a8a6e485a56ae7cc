"""The commands around the sessions: `browse`, `doctor`, `db-path`, `version`."""

from __future__ import annotations

import json

import typer

from .. import __version__, paths
from ..plaintext import json_text, plain
from .shared import open_store


def browse(
    port: int = typer.Option(8001, "--port", help="Port to serve on (0: any free port)."),
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
    browsing.check_port(port)
    with browsing.listen(host, port) as sock:  # before anything is written: a refused browse changes nothing
        open_store().close()  # created and up to date before Datasette reads it
        path = paths.db_path().with_name("supervise.metadata.json")
        with paths.open_private(path, "w", encoding="utf-8") as fh:  # next to the database, for plain `datasette` too
            json.dump(meta, fh, indent=2, ensure_ascii=False)
        ds = browsing.datasette(paths.db_path(), meta)
        url = browsing.sign_in(browsing.url(host, sock), ds)
        said = (
            f"supervise: serving {plain(str(paths.db_path()), newlines=False)} to you only: open {url} "
            f"to sign in ({'opening it now; ' if open_browser else ''}it works once; Ctrl-C to stop)"
        )
        browsing.serve(sock, ds, lambda: typer.echo(said, err=True), open_url=url if open_browser else None)


def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array (with --repair: what was done, as an object)."),
    repair: bool = typer.Option(
        False,
        "--repair",
        help="Repair the database instead of checking: a damaged one is moved "
        "aside and what is readable kept; every recording it does not list is brought back.",
    ),
) -> None:
    """Check the terminal, data directory, database, settings, pattern files, agent CLIs, hook,
    notify command, API key, Docker and Datasette: each ok, warn or problem (with the fix);
    exit 1 on a problem. With --repair, repair the database and bring back every recording."""
    from ..doctor import report
    from ..doctor.checks import run_all

    if repair:
        _repair(as_json)
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


def _repair(as_json: bool) -> None:
    from ..doctor.repair import repair, said

    done = repair()
    if as_json:
        back = done.reimported
        typer.echo(
            json_text(
                {
                    "database": str(done.database),
                    "moved_to": str(done.moved_to) if done.moved_to else None,
                    "kept": done.kept,
                    "reimported": back.ids,
                    "logs_rendered": back.logs_rendered,
                    "unreadable": back.unreadable,
                }
            )
        )
    else:
        for line in said(done):
            typer.echo(plain(line, newlines=False), err=True)
    raise typer.Exit(0 if done.complete else 1)


def db_path() -> None:
    """Print the database path, e.g. for `datasette "$(supervise db-path)"`."""
    typer.echo(str(paths.db_path()))


def version() -> None:
    """Print the version."""
    typer.echo(f"supervise {__version__}")
