"""`supervise patterns`: the pattern files in use, and checking one against a recording."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import SuperviseError

app = typer.Typer(help="Pattern files: which screen lines mean compaction, idle, a dialog...", no_args_is_help=True)


@app.command("list")
def list_sets(
    pattern_files: Optional[List[Path]] = typer.Option(None, "--patterns", readable=False, help="An extra pattern file to include."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the pattern sets in use (shipped, yours, extra) and their patterns."""
    from ..detection import patterns

    sets = patterns.load_all(pattern_files or [])
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "agent": s.agent,
                        "title": s.title,
                        "commands": s.commands,
                        "source": str(s.source),
                        "overrides": [str(o) for o in s.overrides],
                        "patterns": [
                            {"name": p.name, "event": p.event, "regex": p.regex.pattern, "seen_on": p.seen_on, "status": p.status}
                            for p in s.patterns
                        ],
                    }
                    for s in sets.values()
                ],
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    typer.echo(f"shipped: {patterns.builtin_dir()}\nyours:   {patterns.user_dir()}")
    for s in sets.values():
        typer.echo(f"\n{s.agent} ({s.title}) — commands: {', '.join(s.commands)} — {s.source}")
        for o in s.overrides:
            typer.echo(f"  overrides {o}")
        for p in s.patterns:
            typer.echo(f"  {p.event:<20} {p.name:<32} {p.status:<9} {p.seen_on:<8} {p.regex.pattern}")


@app.command("check")
def check_file(
    file: Path = typer.Argument(..., readable=False, help="A session.cast or a text log."),  # (its own line says why not)
    agent: Optional[str] = typer.Option(None, "--agent", help="Pattern set (default: from the recording's command)."),
    pattern_files: Optional[List[Path]] = typer.Option(
        None, "--patterns", readable=False, help="An extra pattern file (e.g. the one you are writing)."
    ),
) -> None:
    """Print every pattern match in a recording or text log, with its time or line; a pattern
    that goes over its time limit is turned off and said, as in a live session (exit 1)."""
    from ..detection import patterns
    from ..detection.userturns import user_turns
    from ..plaintext import plain
    from ..recording.patterncheck import cast_command, check, examine, log_lines

    kind = examine(file)  # what the file is comes first: a missing file is not a missing pattern set
    sets = patterns.load_all(pattern_files or [])
    name = agent or (cast_command(file) if kind == "cast" else None)
    chosen = patterns.select(sets, name) if name else None
    if chosen is None:
        raise SuperviseError(
            f"no pattern set for {'agent ' + repr(plain(name, newlines=False)) if name else plain(str(file), newlines=False)}",
            f"pass --agent (one of: {', '.join(sorted(sets))})",
            exit_code=2,
        )
    turned_off: list[str] = []

    def told(line: str) -> None:
        turned_off.append(line)
        typer.echo(line, err=True)

    kind, found = check(file, chosen, told)
    count = 0
    for d in found:
        where = f"{d.t:>9.3f}s" if kind == "cast" else f"line {int(d.t):>5}"
        values = plain(" ".join(f"{k}={v}" for k, v in d.values.items()), newlines=False)
        typer.echo(
            f"{where}  {d.kind:<20} {(d.pattern or '-'):<36} {plain(d.text, newlines=False)}{'  [' + values + ']' if values else ''}"
        )
        count += 1
    off = f", {len(turned_off)} pattern{'s' if len(turned_off) != 1 else ''} turned off" if turned_off else ""
    typer.echo(f"{count} match{'es' if count != 1 else ''}{off} ({chosen.agent} patterns, {plain(file.name, newlines=False)})", err=True)
    if chosen.of("user_input"):
        turns = user_turns(log_lines(file), chosen)
        for turn in turns:
            typer.echo("user input: " + plain(turn).replace("\n", "\n            "))
        typer.echo(f"{len(turns)} user message{'s' if len(turns) != 1 else ''} (user_input patterns)", err=True)
    if turned_off:
        raise typer.Exit(1)  # the pattern file has a regex to fix
