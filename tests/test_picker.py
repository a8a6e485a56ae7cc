"""`supervise show`, `context` and `resume` with no id, at a terminal: a keyboard picker over
this project's sessions (every project's with --all), filtered by what is typed."""

from __future__ import annotations

import os

from agentdriver import Screen
from conftest import run_cli
from helpers import latest
from test_memory import record, repo


def named(folder, name: str, *lines: str) -> str:
    run_cli("--name", name, "--", "sh", "-c", "; ".join(f"echo {line}" for line in lines), cwd=folder, check=True)
    return latest()["id"]


def picker(folder, *args) -> Screen:
    return Screen(list(args), {**os.environ, "TERM": "xterm-256color"}, folder, rows=30)


def test_typing_filters_the_sessions_and_enter_shows_the_one_chosen(tmp_path, home):
    a, b = repo(tmp_path / "a"), repo(tmp_path / "b")
    alpha = named(a, "alpha work", "the importer is done")
    beta = named(a, "beta work", "kestrel queue drained")
    gamma = named(a, "gamma", "nothing here")
    elsewhere = named(b, "other project", "kestrel too")
    screen = picker(a, "show")
    try:
        screen.wait("type to filter")
        screen.wait(alpha)  # this project's three, newest first
        assert [line.split()[0] for line in screen.shown().splitlines()[2:5]] == [gamma, beta, alpha]
        assert elsewhere not in screen.shown()
        screen.type("kestrel", enter=False)  # the last lines of a log are searched too
        screen.wait(r"beta work — kestrel queue drained\s*\n\s*\n")
        assert alpha not in screen.shown() and gamma not in screen.shown()
        screen.type("", enter=True)
        screen.wait(f"id: +{beta}")
    finally:
        assert screen.close() == 0
    screen = picker(a, "show", "--all")
    try:
        screen.wait("type to filter")
        screen.type("other", enter=True)
        screen.wait(f"id: +{elsewhere}")
    finally:
        screen.close()


def test_escape_leaves_the_picker_with_nothing_done_and_an_empty_project_says_so(tmp_path, home):
    a = repo(tmp_path / "a")
    record(a, "one line")
    screen = picker(a, "context")
    screen.wait("type to filter")
    screen.child.send("\x1b")
    assert screen.close() == 130
    screen = picker(repo(tmp_path / "empty"), "resume")
    screen.wait("no session recorded in this project")
    assert screen.close() == 1
