"""The docs stay true: every `supervise ...` line shown in the README and docs/ names a
command that exists, and every --flag it gives is one that command's --help lists. A renamed
command or flag fails here."""

import os
import re
import shlex

from conftest import ROOT, run_cli

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shown_commands() -> list[tuple[str, str]]:
    """(file, command line) of each `supervise` line in an indented code block, its
    continuation lines joined and its comment cut."""
    out = []
    for path in DOCS:
        text = re.sub(r"\\\n\s+", " ", path.read_text())
        for line in text.splitlines():
            if line.startswith("    supervise ") or line.startswith("    supervise\n"):
                out.append((path.name, line.split(" #")[0].strip()))
    return out


def flags_of(line: str) -> tuple[list[str], list[str]]:
    """(the command and subcommand words, the --flags given to supervise, not to the agent
    after a bare `--`)."""
    words = shlex.split(line.replace("[", " ").replace("]", " ").replace("|", " "))[1:]
    if "--" in words:
        words = words[: words.index("--")]
    flags = [w.split("=")[0] for w in words if w.startswith("--")]
    plain = [w for w in words if not w.startswith("-")]
    return plain, flags


SUBCOMMANDS = (["list"], ["check"], ["install"], ["uninstall"])


def test_every_command_and_flag_the_docs_show_exists():
    lines = shown_commands()
    assert len(lines) > 20 and {"README.md", "states-limits-handoffs.md"} <= {f for f, _ in lines}
    from supervisor.cli.app import app

    commands = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert {"run", "resume", "ps", "patterns"} <= commands
    helps: dict[str, str] = {}
    wrong = []
    for where, line in lines:
        words, flags = flags_of(line)
        command = words[:1] if words and words[0] in commands else ["run"]
        if command in (["patterns"], ["mcp"], ["hooks"]) and words[1:2] in SUBCOMMANDS:  # a group's subcommand
            command = words[:2]
        key = " ".join(command)
        if key not in helps:
            p = run_cli(*command, "--help", env={**os.environ, "COLUMNS": "300"})
            helps[key] = p.stdout if p.returncode == 0 else ""
            if p.returncode != 0:
                wrong.append(f"{where}: `supervise {key}` does not exist ({line})")
        for flag in flags:
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", helps[key]):
                wrong.append(f"{where}: `supervise {key}` has no {flag} ({line})")
    assert not wrong, "\n".join(wrong)


def test_the_readme_names_each_agents_door_as_its_profile_gives_it():
    """The agent table's "context back" column: typed exactly where the profile has no door."""
    from supervisor import profiles
    from supervisor.detection import patterns as pattern_sets

    names = {s.title: s.agent for s in pattern_sets.load_all(env={}).values()}
    rows = [line.split("|")[1:-1] for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| ")]
    header = [c.strip() for c in rows[0]]
    door = header.index("context back")
    table = {row[0].strip(): row[door].strip() for row in rows[2:] if len(row) == len(header)}
    checked = 0
    for shown, agent in names.items():
        if shown in table:
            checked += 1
            assert (table[shown] == "typed") == (profiles.get(agent).door is None), (shown, table[shown])
    assert checked >= 10, table
