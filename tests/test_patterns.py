"""Pattern files and the detector: recorded real output in, expected events out."""

import json
import os
import time
from pathlib import Path

import pytest

from conftest import run_cli
from supervisor.detection import echoes, patterns
from supervisor.contexts import schema
from supervisor.detection.detector import Detector
from supervisor.errors import SuperviseError
from supervisor.recording.patterncheck import check, log_lines
from supervisor.detection.userturns import user_turns

import fixtureset

SHIPPED = patterns.load_all(env={})


NOT_IDLE = fixtureset.NOT_IDLE
RECORDINGS = fixtureset.load()


def test_every_known_agent_has_recordings_of_its_real_program():
    assert {f.agent for f in RECORDINGS} >= {"claude", "codex", "gemini", "opencode", "aider"}
    for f in RECORDINGS:
        assert f.path.is_file(), f.id


@pytest.mark.parametrize("fixture", RECORDINGS, ids=lambda f: f.id)
def test_recorded_real_output_yields_the_expected_events(fixture):
    found = check(fixture.path, SHIPPED[fixture.agent])[1]
    assert [[d.kind, d.pattern] for d in found if d.kind in NOT_IDLE] == fixture.expected["events"]


@pytest.mark.parametrize("fixture", [f for f in RECORDINGS if "idle_turns" in f.expected], ids=lambda f: f.id)
def test_the_idle_prompt_is_recognized_after_each_turn(fixture):
    idle = [d for d in check(fixture.path, SHIPPED[fixture.agent])[1] if d.kind == "idle_prompt"]
    assert len(idle) >= fixture.expected["idle_turns"] + 1


@pytest.mark.parametrize("fixture", [f for f in RECORDINGS if "user_turns" in f.expected], ids=lambda f: f.id)
def test_the_users_messages_are_read_verbatim_from_the_screen(fixture):
    """Every message the user sent, in order, and nothing else (no placeholder, menu,
    dialog option or output). Compared as distinct messages in order of first appearance,
    with white space folded: an agent that draws the input box like its history (Gemini
    CLI) shows a slowly typed message twice, and a message the agent wrapped itself cannot
    be told from one with a line break (the digest folds both the same way). What supervise
    typed itself (`given`) is taken out first, as a session does before it reads the turns."""

    def messages(turns):
        return list(dict.fromkeys(" ".join(t.split()) for t in turns))

    lines = log_lines(fixture.path)
    if "given" in fixture.expected:
        given = echoes.Given.of(zip(fixture.expected["given"], map(schema.quoted, fixture.expected["given_contexts"])))
        lines = echoes.strip("\n".join(lines), given).split("\n")
    assert messages(user_turns(lines, SHIPPED[fixture.agent])) == messages(fixture.expected["user_turns"])


def test_a_long_message_read_again_as_its_beginning_is_one_message():
    """Gemini CLI's input box keeps a long message's first row, logged apart from the rest:
    read again later, it is that message, not a new one. A short message that begins an
    earlier one ("fix the tests") is the user's own."""
    long = "please read this long single-line message that goes on past the right edge of the terminal"
    lines = [f" > {long}", "✦ Fake reply", " > fix the tests", "✦ Fake reply", f" > {long[:70]}", " > fix the", "✦ Fake reply"]
    assert user_turns(lines, SHIPPED["gemini"]) == [long, "fix the tests", "fix the"]


@pytest.mark.parametrize(
    "footer, idle",
    [  # as Claude Code 2.1.330 draws them (modes, modes-narrow at 60 columns, context-low), and 2.1.197
        ("  ⏸ manual mode on · ? for shortcuts · ← for agents", True),
        ("  ⏸ manual mode on · esc to interrupt · ← for agents", False),
        ("  ⏵⏵ accept edits on (shift+tab to cycle) · ← for agents", True),
        ("  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt · ← for agents", False),
        ("  ⏵⏵ accept edits on · esc to interrupt · ← for agents", False),
        ("  ⏸ plan mode on (shift+tab to cycle) · ← for agents", True),
        ("  ⏸ plan mode on (shift+tab to cycle) · esc to interrupt …", False),
        ("  ⏵⏵ auto mode on (shift+tab to cycle) · ← for agents", True),
        ("  ⏵⏵ auto mode on (shift+tab to cycle) · esc to interrupt · ← for agents", False),
        ("  ? for shortcuts · ← for agents", True),
    ],
)
def test_claude_codes_footer_tells_idle_from_busy_in_every_permission_mode(footer, idle):
    detector = Detector(SHIPPED["claude"])
    detector.feed(0.0, [(1, footer)], ["❯", footer])
    assert (detector.idle, detector.busy) == (idle, not idle)


def _fixture(agent: str, name: str) -> Path:
    return next(f.path for f in RECORDINGS if f.agent == agent and f.path.name == name)


def test_context_low_carries_the_percentage_left():
    found = [d for d in check(_fixture("claude", "context-low.cast"), SHIPPED["claude"])[1] if d.kind == "context_low"]
    assert found[0].values == {"pct_left": 6}  # "94% context used"
    codex = [d.values["pct_left"] for d in check(_fixture("codex", "compact-auto.cast"), SHIPPED["codex"])[1] if d.kind == "context_low"]
    assert codex == [22, 2]  # "Context 100% left" and "94% left" are above the 30% threshold


@pytest.mark.parametrize(
    "fixture", [f for f in RECORDINGS if any(k == "limit_reached" for k, _ in f.expected["events"])], ids=lambda f: f.id
)
def test_a_recorded_usage_limit_says_when_it_resets(fixture):
    """Every limit an agent was recorded showing is read into a reset time (that a continue
    can wait for), unless the agent's own words name none (then its pattern has no groups)."""
    from datetime import datetime, timezone

    from supervisor.detection import limits

    seen = datetime.now(timezone.utc)
    found = [d for d in check(fixture.path, SHIPPED[fixture.agent])[1] if d.kind == "limit_reached"]
    assert found
    for d in found:
        told = {k: v for k, v in d.values.items() if k in ("clock", "zone", "date", "delay") and v}
        assert not told or limits.reset_at(d.values, seen) is not None, (d.pattern, d.values)


def test_unrecognized_lines_are_reported_once_each():
    found = [d.text for d in check(_fixture("claude", "manual-compact.cast"), SHIPPED["claude"])[1] if d.kind == "unrecognized"]
    assert any(line.startswith("/compact") and "Free up context" in line for line in found)  # the command menu
    assert "❯ /compact" not in found  # the user's own words are not the agent's output
    assert len(found) == len(set(found))
    plain = check(_fixture("claude", "plain.cast"), SHIPPED["claude"])[1]
    assert [d for d in plain if d.kind == "unrecognized"] == []


def test_every_shipped_file_names_its_commands_and_marks_its_patterns():
    assert set(SHIPPED) >= {"claude", "codex", "gemini", "opencode", "aider", "supervise-agent"}
    for s in SHIPPED.values():
        assert s.commands and s.patterns
        for p in s.patterns:
            assert p.status in ("verified", "sourced", "spec") and p.seen_on
    for agent in ("claude", "codex", "gemini", "opencode", "aider"):
        verified = {p.event for p in SHIPPED[agent].patterns if p.status == "verified"}
        assert {"compaction_started", "compaction_finished", "idle_prompt", "permission_prompt"} <= verified, agent


def test_every_shipped_regex_passes_the_checks_a_users_file_gets():
    """Start-up leaves the shipped regexes unchecked (each compiles when first used): so
    each must pass here what a user's file is checked for as it loads."""
    for path in sorted(patterns.builtin_dir().glob("*.toml")):
        checked = patterns.load_file(path, check=True)
        assert [p.regex.groupindex for p in checked.patterns] == [p.regex.groupindex for p in SHIPPED[checked.agent].patterns]
        for p in checked.patterns:
            assert p.regex._rx.pattern == p.regex.pattern  # and compiles in the engine that matches


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = """
[agent]
name = "claude"
commands = ["claude"]
[[patterns]]
name = "custom"
event = "compaction_finished"
regex = 'all squeezed'
seen_on = "9.9"
status = "verified"
"""


@pytest.mark.parametrize(
    "text, message",
    [
        ("[agent\nname=", "is not valid TOML"),
        ("[[patterns]]\nname='x'", "has no [agent] table"),
        (
            '[agent]\nname="a"\n[[patterns]]\nname="p1"\nevent="compaction_started"\nregex="(unclosed"',
            "pattern 'p1': bad regex '(unclosed': missing ), unterminated subpattern",
        ),
        ('[agent]\nname="a"\n[[patterns]]\nname="p2"\nevent="exploded"\nregex="x"', "pattern 'p2': unknown event 'exploded'"),
        (
            '[agent]\nname="a"\n[[patterns]]\nname="p3"\nevent="context_low"\nregex="\\\\d+%"',
            "pattern 'p3': a context_low regex must capture",
        ),
        ('[agent]\nname="a"\n[[patterns]]\nname="p4"\nevent="idle_prompt"', "pattern 'p4': missing regex"),
    ],
)
def test_a_broken_pattern_file_is_refused_with_file_pattern_and_error(tmp_path, text, message):
    path = write(tmp_path, "broken.toml", text)
    with pytest.raises(SuperviseError) as err:
        patterns.load_file(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_a_broken_pattern_file_stops_the_session_before_it_starts(tmp_path):
    bad = write(tmp_path, "bad.toml", '[agent]\nname="claude"\n[[patterns]]\nname="oops"\nevent="idle_prompt"\nregex="[unclosed"')
    p = run_cli("--patterns", str(bad), "--", "echo", "should-not-run")
    assert p.returncode == 1
    assert "should-not-run" not in p.stdout
    assert p.stderr.strip().startswith(f"supervise: pattern file {bad}, pattern 'oops': bad regex")
    assert json.loads(run_cli("sessions", "--json", check=True).stdout) == []


def test_user_files_and_the_patterns_flag_override_by_agent_name(tmp_path, monkeypatch):
    config = tmp_path / "config"
    (config / "patterns").mkdir(parents=True)
    write(config / "patterns", "mine.toml", GOOD)
    monkeypatch.setenv("SUPERVISE_CONFIG", str(config))
    sets = patterns.load_all()
    assert [p.name for p in sets["claude"].patterns] == ["custom"]
    assert sets["claude"].overrides == [patterns.builtin_dir() / "claude.toml"]
    extra = write(tmp_path, "extra.toml", GOOD.replace("custom", "from-flag"))
    assert [p.name for p in patterns.load_all([extra])["claude"].patterns] == ["from-flag"]
    listed = run_cli("patterns", "list", "--json", check=True, env={**os.environ, "SUPERVISE_CONFIG": str(config)}).stdout
    claude = next(s for s in json.loads(listed) if s["agent"] == "claude")
    assert claude["source"].endswith("mine.toml") and claude["patterns"][0]["name"] == "custom"


def test_patterns_check_prints_each_match_with_its_time_or_line(tmp_path):
    p = run_cli("patterns", "check", str(_fixture("claude", "manual-compact.cast")), check=True)
    lines = [l for l in p.stdout.splitlines() if "compaction" in l]
    assert len(lines) == 2
    assert lines[0].split()[1:3] == ["compaction_started", "claude/compacting-spinner"] and lines[0].split()[0].endswith("s")
    log = write(tmp_path, "session.log", "hello\n✻ Conversation compacted (ctrl+o for history)\nbye\n")
    p = run_cli("patterns", "check", str(log), "--agent", "claude", check=True)
    assert p.stdout.split()[:4] == ["line", "2", "compaction_finished", "claude/conversation-compacted"]
    p = run_cli("patterns", "check", str(log))
    assert p.returncode == 2 and "pass --agent" in p.stderr


SCREEN_SCRIPT = r"""
import sys, time
for line in sys.argv[1:]:
    if line == "-":
        time.sleep(0.5)
        continue
    print(line, flush=True)
time.sleep(0.3)
"""


def test_pattern_files_reload_when_edited_without_restarting(tmp_path):
    import sys

    import pexpect

    from helpers import latest, session, spawn, wait_for

    # permission_prompt: unlike compaction events, repeats are not merged into one
    toy = (
        GOOD.replace('name = "claude"', 'name = "toy"')
        .replace('commands = ["claude"]', 'commands = ["toy"]')
        .replace("compaction_finished", "permission_prompt")
    )
    mine = write(tmp_path, "mine.toml", toy.replace("all squeezed", "first marker"))
    # typed "first_marker" (the terminal echo does not match) comes back as "GOT first marker"
    reader = write(
        tmp_path,
        "reader.py",
        "import sys\nfor line in sys.stdin:\n    print('\\x1b[2J\\x1b[H' if line.strip() == 'CLEAR' else 'GOT ' + line.strip().replace('_', ' '), flush=True)\n",
    )

    def seen():
        return [e["detail"]["text"] for e in session(latest()["id"])["events"] if e["kind"] == "permission_prompt"]

    def kinds():
        return [e["kind"] for e in session(latest()["id"])["events"]]

    c = spawn(["--agent", "toy", "--patterns", str(mine), "--", sys.executable, str(reader)])
    time.sleep(1.5)
    c.sendline("first_marker")
    wait_for(lambda: seen() == ["GOT first marker"])
    mine.write_text(toy.replace("all squeezed", "second marker"))
    wait_for(lambda: "patterns_reloaded" in kinds())
    c.sendline("first_marker_once_more")
    c.sendline("second_marker")
    c.expect_exact("GOT second marker")
    wait_for(lambda: seen() == ["GOT first marker", "GOT second marker"])
    mine.write_text("[agent\nbroken")  # a broken edit keeps the patterns that worked
    wait_for(lambda: "patterns_error" in kinds())
    c.sendline("second_marker_still_detected")
    c.expect_exact("GOT second marker still detected")
    wait_for(lambda: seen() == ["GOT first marker", "GOT second marker", "GOT second marker still detected"])
    c.sendeof()
    c.expect(pexpect.EOF)


def test_the_shipped_pattern_files_come_with_the_installed_package():
    """`pip install .`, a wheel, pipx: the pattern files are package data (scripts/test runs
    this suite against a wheel in a fresh environment)."""
    where = patterns.builtin_dir()
    assert {p.stem for p in where.glob("*.toml")} >= {"claude", "codex", "gemini", "opencode", "aider", "supervise-agent"}
    listed = run_cli("patterns", "list", cwd="/", check=True).stdout
    assert f"shipped: {where}" in listed and "claude (Claude Code)" in listed


def test_a_known_agent_without_patterns_is_said_at_start(tmp_path, monkeypatch):
    """An install that lost its pattern files would otherwise detect nothing, silently."""
    import io

    from supervisor.run import session

    empty = tmp_path / "no-patterns"
    empty.mkdir()
    monkeypatch.setattr(patterns, "builtin_dir", lambda: empty)
    claude = tmp_path / "claude"
    claude.write_text("#!/bin/sh\nexit 0\n")
    claude.chmod(0o755)
    err = io.StringIO()
    code = session.run(
        session.RunOptions([str(claude)], cwd=str(tmp_path)),
        env={**os.environ, "SUPERVISE_CONFIG": str(tmp_path / "cfg")},
        stdin_fd=None,
        stdout_fd=None,
        stderr=err,
    )
    assert code == 0
    first = err.getvalue().splitlines()[0]
    assert first.startswith("supervise: no pattern set for claude: its compactions will not be detected")


def test_a_shipped_set_read_by_its_agent_table_first_is_the_whole_file_once_its_patterns_are_asked_for():
    """load_all reads a shipped file's [agent] table alone (what picks a session's set) and
    its patterns when first asked for: the same set as the file read whole."""
    sets = patterns.load_all()
    shipped = sorted(patterns.builtin_dir().glob("*.toml"))
    assert len(shipped) == len(sets) > 10
    for path in shipped:
        whole = patterns.load_file(path, check=False)
        first = sets[whole.agent]
        assert first._patterns is None  # not read yet
        assert (first.title, first.commands, first.context_low_at, first.stdin_args) == (
            whole.title,
            whole.commands,
            whole.context_low_at,
            whole.stdin_args,
        )
        assert [(p.qualified, p.event, p.regex.pattern) for p in first.patterns] == [
            (p.qualified, p.event, p.regex.pattern) for p in whole.patterns
        ]
        assert first.patterns
