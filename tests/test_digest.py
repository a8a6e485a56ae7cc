"""The digest: a long session squeezed into a budget without losing what matters."""

import os

import pytest

import fixtureset
import sessiongen
from fakeapi import FakeAnthropic
from supervisor import config
from supervisor.detection import patterns, userturns
from supervisor.contexts import digest, rounds, schema as ctx, summarizer
from supervisor.profiles.claude import transcript as claude_transcript
from supervisor.recording.patterncheck import log_lines
from supervisor.store.database import Store


@pytest.mark.parametrize("size", [200_000, 5_000_000])
def test_planted_facts_survive_within_budget(size):
    text, planted = sessiongen.generate(size)
    d = digest.build(text, budget=24_000)
    assert d.tokens <= 24_000
    assert d.original_request.startswith(sessiongen.REQUEST)
    missing = [line for kind, line in planted if kind != "request" and line not in d.text]
    assert not missing, missing[:5]
    assert "src/billing/" in " ".join(d.files)


def test_a_small_budget_is_kept_and_keeps_the_request_and_the_latest():
    text, planted = sessiongen.generate(2_000_000)
    d = digest.build(text, budget=3_000)
    assert d.tokens <= 3_000
    assert sessiongen.REQUEST[:80] in d.text
    assert planted[-1][1] in d.text  # the latest fact is recent activity


def test_noise_and_repeats_are_dropped():
    text = "\n".join(["✻ Thinking… (3s · ↓ 120 tokens)", "────────────", "   ", "same line"] * 500 + ["❯ do the thing"])
    d = digest.build(text)
    assert d.text.count("same line") == 1
    assert "Thinking" not in d.text and "────" not in d.text


def test_every_keyword_line_is_found_where_it_first_stands_across_pieces(monkeypatch):
    """The scan reads each piece's distinct lines once: every line holding a keyword must
    still come at its first place in each piece, also when it is part of a longer line
    first, or the last line without a newline."""
    monkeypatch.setattr(digest, "SCAN_PIECE", 50)  # pieces of a few lines
    lines = [
        "make: all tests passed",
        "an Error",
        "an Error",
        "Error",
        "plain output",
        "an Error",
        "Error",
        "FAILED test_x",
        "  Error",
        "Error",
        "all tests passed",
        "FAILED test_x",
        "tail without newline Error",
    ]
    text = "\n".join(lines)
    found = digest._candidate_lines(text)
    assert all(text[offset : offset + len(line)] == line for offset, line in found)
    assert all(offset == 0 or text[offset - 1] == "\n" for offset, _ in found)
    firsts = {}
    for offset, line in found:
        firsts.setdefault(line, offset)
    offsets = [sum(len(l) + 1 for l in lines[:i]) for i in range(len(lines))]
    expected = {}
    for i, line in enumerate(lines):
        if digest.KEYWORDS.search(line):
            expected.setdefault(line, offsets[i])
    assert firsts == expected


def test_token_estimate_weighs_non_ascii_more():
    assert digest.estimate_tokens("a" * 400) == 100
    assert digest.estimate_tokens("日本語のテキスト" * 10) > 80


def test_the_transcript_gives_the_exact_request_and_tool_calls():
    records = [
        {"type": "user", "message": {"role": "user", "content": "Refactor the parser.\nKeep the public API."}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "I'll split it into a lexer and a parser."},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q tests/test_parser.py"}},
                ],
            },
        },
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "is_error": True, "content": "E   AssertionError: 3 != 4"}]},
        },
    ]
    told = digest.Told(claude_transcript.user_messages(records), claude_transcript.as_lines(records))
    d = digest.build("screen text\n", told=told)
    assert d.original_request == "Refactor the parser.\nKeep the public API."
    assert "● Bash(pytest -q tests/test_parser.py)" in d.text
    assert "Error: E   AssertionError: 3 != 4" in d.text


RECORDINGS = [f for f in fixtureset.load() if f.expected.get("user_turns")]


@pytest.mark.parametrize("fixture", RECORDINGS, ids=lambda f: f.id)
def test_the_original_request_of_every_real_agent_is_found_verbatim(fixture):
    """Each agent draws the user's messages its own way: its pattern file says how. The
    request is in the digest, in the offline (heuristic) context, and in what a summary
    request sends the cheap model."""

    def folded(text):  # a message the agent wrapped itself reads as lines: the screen cannot tell
        return " ".join(text.split())

    sets = patterns.load_all(env={})
    text = "\n".join(log_lines(fixture.path))
    wanted = userturns.original_request(fixture.expected.get("requests") or fixture.expected["user_turns"])
    d = digest.build(text, patterns=sets[fixture.agent])
    assert folded(d.original_request) == folded(wanted)
    assert f"## Original request (verbatim)\n{d.original_request or '(not found in the log)'}\n" in d.text
    assert ctx.heuristic(d)["original_request"] == d.original_request
    with FakeAnthropic() as api:
        api.add({"tool_use": {"name": ctx.TOOL["name"], "input": ctx.heuristic(d)}})
        summarizer.summarize(d, None, config.Summary(base_url=api.url, api_key="test-key", max_retries=0, timeout=10.0))
        [sent] = api.messages()
    assert folded(wanted) in folded(sent.last_user_text())


def test_a_later_round_reads_only_what_came_since_and_keeps_the_request(tmp_path, monkeypatch):
    """A context round must not cost more as the session grows: round 2 digests the log
    from where round 1 stopped (with a little overlap), chained with round 1's context."""
    store = Store(tmp_path / "s.db")
    log = tmp_path / "session.log"
    s = store.create_session(
        name=None, command="claude", argv=["claude"], agent="claude", cwd=str(tmp_path), pid=os.getpid(), parent_id=None, options={}
    )
    store.update_session(s["id"], log_path=str(log), cast_path=str(tmp_path / "none.cast"))
    early = "\n".join(f"early build step {i} of the lexer module" for i in range(20_000))
    log.write_text("❯ write a lexer for the config language\n" + early + "\n")
    settings = config.Settings()
    read = []
    build = digest.build
    monkeypatch.setattr(digest, "build", lambda text, *a, **kw: read.append(len(text)) or build(text, *a, **kw))
    first = rounds.make(store, store.get_session(s["id"]), "periodic", settings, env={}, live=True)
    assert first["log_offset"] == log.stat().st_size
    with open(log, "a") as fh:
        fh.write("❯ now add error recovery to the parser\nError: ParseError in parser.py line 12\nFixed: ParseError in parser.py\n")
    second = rounds.make(
        store, store.get_session(s["id"]), "periodic", settings, env={}, live=True, pattern_set=patterns.load_all(env={})["claude"]
    )
    assert second["round"] == 2 and second["log_offset"] == log.stat().st_size
    assert second["context"]["original_request"] == "write a lexer for the config language"  # carried by round 1
    assert second["context"]["current_task"] == "now add error recovery to the parser"
    assert read[0] > len(early) and read[-1] < rounds.OVERLAP + 500  # what came since, and the overlap


def test_a_continue_supervise_typed_is_not_the_users_latest_message():
    claude = patterns.select(patterns.load_all([]), "claude")
    log = "❯ continue\n● Sure.\n❯ fix the parser\n● Limit hit.\n❯ continue\n● Back at it.\n"
    marked = userturns.mark_typed(log, claude, ["continue"], rounds.CONTINUED)
    # the user's own "continue" (the first) stays theirs; the one typed after the limit is ours
    assert [t.text for t in userturns.find(marked, claude)] == ["continue", "fix the parser"]
    assert marked.splitlines()[4] == rounds.CONTINUED and marked.endswith("● Back at it.\n")
    records = [{"type": "user", "message": {"content": c}} for c in ("continue", "fix the parser", "continue")]
    assert [r["message"]["content"] for r in rounds.without_typed(records, ["continue"], claude_transcript.user_text)] == [
        "continue",
        "fix the parser",
    ]


def test_a_message_drawn_again_is_not_the_latest_request():
    """A full-screen agent redraws its history (at exit, after a resize): the first message
    read again after the last is a redraw, not what the user asked last."""
    assert digest.latest_request(None, ["turn 1: write it", "turn 2: rename it", "turn 1: write it"]) == "turn 2: rename it"
    assert digest.latest_request(None, ["turn 1: write it", "/compact", "turn 2: rename it"]) == "turn 2: rename it"
    told = digest.Told(["yes", "do X", "yes"], [])  # its own record says what was sent, repeats included
    assert digest.latest_request(told, ["do X"]) == "yes"


def test_a_half_line_left_in_the_input_box_is_not_the_current_task_where_the_record_says_what_was_sent():
    """Gemini CLI draws its input box as it draws a sent message (" > text"): a half line the
    user left there while it compacted is read off the screen like one. Its own record says
    what was sent; the heuristic context takes its current task from there."""
    gemini = patterns.load_all(env={})["gemini"]
    text = " > turn 1: write src/totals.py\n✦ Fake reply to: turn 1\n > turn 2: rename the"
    told = digest.Told(["turn 1: write src/totals.py"], [])
    made = ctx.heuristic(digest.build(text, told=told, patterns=gemini))
    assert made["current_task"] == "turn 1: write src/totals.py"
    assert ctx.heuristic(digest.build(text, patterns=gemini))["current_task"] == "turn 2: rename the"  # no record: the screen's
