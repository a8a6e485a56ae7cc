"""--brief is never silent: a program that is no agent, an agent with no earlier context to
brief from, or injection turned off each get one line as the session ends."""

from __future__ import annotations

import os

from conftest import run_cli
from test_injection import toy  # noqa: F401 (the fixture)
from test_memory import repo

NOT_AN_AGENT = "supervise: no brief: sh is not an agent supervise knows (see: supervise patterns list)"


def test_brief_for_a_program_that_is_no_agent_says_so_once_and_only_when_asked(tmp_path):
    a = repo(tmp_path / "a")
    asked = run_cli("--brief", "--", "sh", "-c", "echo hi", cwd=a)
    assert asked.returncode == 0 and asked.stderr.splitlines().count(NOT_AN_AGENT) == 1
    by_setting = run_cli("--", "sh", "-c", "echo hi", cwd=a, env={**os.environ, "SUPERVISE_BRIEF": "1"})
    assert by_setting.returncode == 0 and "no brief" not in by_setting.stderr and "session" in by_setting.stderr


def exit_notes(toy, *options) -> str:
    """The toy agent under supervise with `options`, quit at once: what supervise said at its end."""
    screen, _ = toy(supervise_args=options)
    screen.type("/exit")
    screen.wait(r"supervise: session \w+ completed", 30)
    return "\n".join(line.rstrip() for line in screen.vt.text())  # (the main screen, with what scrolled off)


def test_brief_with_no_earlier_context_says_there_was_none(toy):
    said = exit_notes(toy, "--brief")
    assert said.count("supervise: no brief: no earlier session of this project has a context yet") == 1


def test_brief_with_injection_off_says_so(toy):
    said = exit_notes(toy, "--brief", "--inject", "off")
    assert said.count("supervise: no brief: context injection was off (--inject off)") == 1
