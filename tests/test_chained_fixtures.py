"""Real agents, several compactions, supervise typing its context back after each: read
back, the session must never take that echo for the user's words, the agent's output, an
error or a compaction.

Each fixture with `given` (tests/fixtures/AGENT/VERSION/chained.cast.gz, recorded by
scripts/agents/AGENT.py with typing on) holds what supervise gave the agent during the
recording. Here the recording is replayed into a text log, stored as a finished session whose
context rounds are those prompts, and one more round is made over the whole log: offline
(the heuristic), and with a fake cheap model that copies whatever looks like the user's last
line and every bracketed line, so that any echo reaching it would be stored.
"""

import json
import re
from pathlib import Path

import pytest

import fixtureset
from fakeapi import FakeAnthropic
from supervisor import config
from supervisor import profiles
from supervisor.detection import echoes, patterns
from supervisor.contexts import rounds, schema
from supervisor.detection.detector import Detector
from supervisor.recording.export import render_cast, replay
from supervisor.store.database import COMPLETED, Store

SHIPPED = patterns.load_all(env={})
CHAINED = [f for f in fixtureset.load() if "given" in f.expected]
PROMPT_ONLY = ("[supervise]", "You are continuing earlier work", "Continue from the current task")
NOT_IDLE = {"compaction_started", "compaction_finished", "compaction_failed", "context_low", "context_overflow", "permission_prompt"}
# A line an unsure model could take for the user's: a prompt marker, or the digest's "User:".
PROMPT_LIKE = re.compile(r"^\s*(?:User:|>|›|❯|┃|[\w-]*>)\s")


def given_pairs(fixture) -> list[tuple[str, dict]]:
    return list(zip(fixture.expected["given"], fixture.expected["given_contexts"], strict=True))


def requests(fixture) -> tuple[str, str]:
    """The user's first message and their last one (a slash command is no request)."""
    turns = [t for t in fixture.expected.get("requests") or fixture.expected["user_turns"] if not t.startswith("/")]
    return turns[0], turns[-1]


def stored_session(fixture, home: Path) -> tuple[Store, dict]:
    """The recording as a finished session of its agent, with what was given as its rounds."""
    store = Store.open_default()
    log = home / f"{fixture.agent}.log"
    log.write_text("".join(line + "\n" for line in render_cast(fixture.path)), encoding="utf-8")
    session = store.create_session(
        command=fixture.agent, argv=[fixture.agent], cwd=str(home), agent=fixture.agent, log_path=str(log), cast_path=str(fixture.path)
    )
    store.finish_session(session["id"], COMPLETED, 0)
    if fixture.record is not None:  # the agent's own record of it, where it keeps one
        reader = profiles.get(fixture.agent).transcript
        files = sorted({f for f in map(reader.SOURCE.followed, fixture.record.rglob("*")) if f is not None and f.is_file()})
        records = [r for f in files for r in reader.SOURCE.read(f)[0]]
        store.update_session(session["id"], agent_session_id=next(filter(None, map(reader.session_id, records))))
    for prompt, context in given_pairs(fixture):
        # no log offset: the new round reads the whole log, echoes and all
        store.add_context(session["id"], lambda _round, p=prompt: p, trigger="compaction", source="heuristic", context=context)
    return store, store.get_session(session["id"])


def own_lines(fixture) -> set[str]:
    """The lines of what was given that are supervise's own: not a value the context quotes."""
    out = set()
    for prompt, context in given_pairs(fixture):
        quoted = set(schema.quoted(context).splitlines())
        for line in prompt.splitlines():
            line = line.strip()
            if line and line not in quoted and line.removeprefix("- ") not in quoted:
                out.add(line)
    return out


def assert_no_echo(fixture, context: dict) -> None:
    first, last = requests(fixture)
    assert context["original_request"] == first, context
    assert context["latest_request"] == last, context
    ours = own_lines(fixture)
    values = [v for value in context.values() for v in (value if isinstance(value, list) else [value])]
    for value in values:
        for words in PROMPT_ONLY:
            assert words not in value, f"{fixture.id}: the round reads back supervise's own words ({words!r}): {value!r}"
        assert value.strip() not in ours, f"{fixture.id}: a line of supervise's prompt came back as the session's: {value!r}"
        long_ours = [line for line in ours if len(line) >= 10 and line in value]
        assert not long_ours, f"{fixture.id}: {value!r} holds supervise's prompt line(s) {long_ours}"


def garbling(request) -> dict:
    """A cheap model that copies the wrong lines: the last prompt-like line of its input as the
    task, every line with a bracket as an error. Given an echo of our prompt, it stores it."""
    digest = request.last_user_text().split("## Session digest", 1)[-1]
    lines = digest.splitlines()
    prompt_lines = [line.strip() for line in lines if PROMPT_LIKE.match(line)]
    return {
        "tool_use": {
            "name": "record_session_context",
            "input": {
                "original_request": "Make the totals script",
                "current_task": prompt_lines[-1] if prompt_lines else "(none)",
                "completed_steps": [],
                "pending_steps": [],
                "key_decisions": [],
                "relevant_files": [],
                "errors_and_resolutions": [line.strip() for line in lines if "[" in line][-20:],
            },
        }
    }


@pytest.mark.parametrize("fixture", CHAINED, ids=lambda f: f.id)
def test_a_round_made_offline_over_the_whole_session_holds_no_echo(fixture, home):
    store, session = stored_session(fixture, home)
    env = {"SUPERVISE_HOME": str(home), "SUPERVISE_CONFIG": str(home / "config")}
    row = rounds.make(store, session, "test", config.load(env, backend="heuristic"), env=env, transcript_dir=fixture.record)
    assert row["source"] == "heuristic"
    assert_no_echo(fixture, row["context"])


@pytest.mark.parametrize("fixture", CHAINED, ids=lambda f: f.id)
def test_a_round_made_by_a_careless_model_holds_no_echo(fixture, home):
    store, session = stored_session(fixture, home)
    with FakeAnthropic() as api:
        api.add(garbling, match=lambda r: (r.body.get("tool_choice") or {}).get("name") == "record_session_context", times=None)
        env = {
            "SUPERVISE_HOME": str(home),
            "SUPERVISE_CONFIG": str(home / "config"),
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": api.url,
        }
        row = rounds.make(store, session, "test", config.load(env, backend="api"), env=env, transcript_dir=fixture.record)
        sent = [r for r in api.messages() if r.body.get("tools")]
    assert row["source"] == "model", row["error"]
    assert sent
    for r in sent:  # the model was never sent our prompt as the session's
        digest = r.last_user_text().split("## Session digest", 1)[-1]
        for words in PROMPT_ONLY:
            assert words not in digest, f"{fixture.id}: the model was sent supervise's own words ({words!r}) as the session's"
    assert_no_echo(fixture, row["context"])


@pytest.mark.parametrize("fixture", CHAINED, ids=lambda f: f.id)
def test_the_detector_takes_no_echo_for_a_compaction_or_an_unknown_line(fixture):
    """As a live session's detector, told what was given: the events are exactly the real
    ones (`live_events`: the compactions, and the dialogs the user answered), and no line of
    our echo is reported as unrecognized."""
    detector = Detector(SHIPPED[fixture.agent])
    for prompt, context in given_pairs(fixture):
        detector.add_given(prompt, schema.quoted(context))
    log, frames = replay(fixture.path)
    found = [d for t, frame in frames for d in detector.feed(t, frame.appeared, [r.text for r in log.rows])]
    events = [d for d in found if d.kind in NOT_IDLE]
    assert [[d.kind, d.pattern] for d in events] == fixture.expected["live_events"], (
        f"{fixture.id}: the detector, told what was given, reported:\n"
        + "\n".join(f"  {d.t:7.3f}s {d.kind} {d.text[:160]!r}" for d in events)
    )
    given = echoes.Given.of((p, schema.quoted(c)) for p, c in given_pairs(fixture))
    echoed = [
        d.text
        for d in found
        if d.kind == "unrecognized"
        and (any(w in d.text for w in PROMPT_ONLY) or given.echo_line(d.text) or d.text.strip() in own_lines(fixture))
    ]
    assert not echoed, f"{fixture.id}: supervise's typed context reported as unrecognized lines: {echoed}"


@pytest.mark.parametrize("fixture", CHAINED, ids=lambda f: f.id)
def test_each_fixture_gave_a_context_after_each_of_its_compactions(fixture):
    finished = [e for e in fixture.expected["live_events"] if e[0] == "compaction_finished"]
    assert len(finished) >= 3 and len(fixture.expected["given"]) >= 3, fixture.id
    assert all(p.startswith("[supervise]") for p in fixture.expected["given"])
    assert json.dumps(fixture.expected["given_contexts"])  # stored with the prompts: what each quotes
