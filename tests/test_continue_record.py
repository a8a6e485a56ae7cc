"""Continue CLI's own record of a session, read: its session files (real ones, recorded by
scripts/agents/continue_cli.py against the fake model), one JSON document per session that it
rewrites whole at every change and replaces with its summary when it compacts, and one written
here as it writes them, followed by the recorder's follower while another session's file is
written beside it."""

import json
from pathlib import Path

from fixtureset import FIXTURES
from helpers import wait_for
from kits import continue_cli as kit
from supervisor.detection import transcript
from supervisor.profiles import get
from supervisor.profiles.continue_cli import transcript as session

RECORDS = FIXTURES / "continue-cli" / "1.5.47" / "record"


def real(name):
    [path] = (RECORDS / name).glob("*.json")
    return path


def test_its_session_file_after_a_compaction_holds_its_summary_and_what_came_after():
    path = real("compact-manual")
    records, end = session.SOURCE.read(path)
    assert {session.session_id(r) for r in records} == {path.stem}
    # /compact replaced turns 1 and 2 with the summary the model made: only the screen still has them
    assert session.user_messages(records) == ["turn 3 after compact"]
    assert session.as_lines(records) == ["> turn 3 after compact", "● Reply to: turn 3 after compact"]
    [compacted] = [r for r in records if session.compaction(r) is not None]
    assert session.compaction(compacted) == {"trigger": None}
    assert session.summary(compacted) == kit.SUMMARY
    assert [session.summary(r) for r in records].count(None) == len(records) - 1
    assert session.timestamp(compacted) is None  # its items are not dated
    assert session.SOURCE.read(path, end) == ([], end)  # nothing new past the offset
    assert session.SOURCE.end(path) == end


def test_the_context_supervise_typed_is_a_users_message_in_it():
    records, _ = session.SOURCE.read(real("chained"))
    said = session.user_messages(records)
    assert said[0].startswith("[supervise] You are continuing earlier work") and "(round 3)" in said[0]
    assert said[-1] == "turn 4: make the tests in tests/test_csv.py cover empty reports"


def test_a_session_file_is_found_by_its_id_and_claimed_by_its_folder(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert session.folder(env, "/p") == tmp_path / ".continue" / "sessions"
    assert session.folder({**env, "CONTINUE_GLOBAL_DIR": str(tmp_path / "c")}, "/p") == tmp_path / "c" / "sessions"
    assert session.folder({**env, "CONTINUE_GLOBAL_DIR": "rel"}, "/p") == Path("/p/rel/sessions")  # as it resolves it
    path = real("compact-manual")
    assert session.locate(path.parent, path.stem) == path
    assert session.locate(path.parent, "00000000-0000-0000-0000-000000000000") is None
    first = session.SOURCE.read(path)[0][0]
    assert session.claims(first, path, first["cwd"], None) is True
    assert session.claims(first, path, "/elsewhere", None) is False
    assert session.claims(first, path, "/elsewhere", path.stem) is True  # the session it carries on
    assert session.SOURCE.followed(path.parent / "sessions.json") is None  # the index of every session


def test_continue_is_resumed_by_forking_its_session():
    profile = get("continue-cli")
    assert profile.transcript is session
    assert profile.resume(["cn", "--resume"], {"agent_session_id": "abc"}, False).argv == ["cn", "--fork", "abc"]
    assert profile.resume(["cn", "--fork", "old"], {}, False).argv == ["cn"]


# ---- a session file written as Continue writes it ------------------------------------------

SID = "11111111-2222-3333-4444-555555555555"


def said(text):
    return {"message": {"role": "user", "content": text}, "contextItems": [], "editorState": text}


def reply(text):
    return {"message": {"role": "assistant", "content": text}, "contextItems": []}


def bash(command, status, output=None):
    call = {"id": f"toolu_{command}", "type": "function", "function": {"name": "Bash", "arguments": json.dumps({"command": command})}}
    state = {"toolCallId": call["id"], "toolCall": call, "status": status, "parsedArgs": {"command": command}}
    if output is not None:
        state["output"] = [{"content": output, "name": "Tool Result", "description": "Tool execution result"}]
    return {"message": {"role": "assistant", "content": "", "toolCalls": [call]}, "contextItems": [], "toolCallStates": [state]}


def summarized(text):
    return {"message": {"role": "assistant", "content": text}, "contextItems": [], "conversationSummary": text}


def write(path, history, cwd, sid=SID):
    """The whole file, as it rewrites it at every change."""
    path.write_text(json.dumps({"sessionId": sid, "title": "t", "workspaceDirectory": str(cwd), "history": history}, indent=2))


def test_a_tool_call_waits_until_it_has_finished_and_a_compaction_is_read_from_its_summary(tmp_path):
    path = tmp_path / f"{SID}.json"
    history = [said("list the files")]
    write(path, history, tmp_path)
    records, offset = session.SOURCE.read(path)
    history.append(bash("ls", "calling"))
    write(path, history, tmp_path)
    more, offset = session.SOURCE.read(path, offset)
    assert session.as_lines(records + more) == ["> list the files"]  # the call it is still running waits
    path.write_text("")  # caught mid-write
    assert session.SOURCE.read(path, offset) == ([], offset)
    history[-1] = bash("ls", "errored", "Error executing tool Bash: no such directory")
    history.append(reply("It failed."))
    write(path, history, tmp_path)
    more, offset = session.SOURCE.read(path, offset)
    assert session.as_lines(more) == ["● Bash(ls)", "  ⎿ Error: Error executing tool Bash: no such directory", "● It failed."]
    before = offset
    # a compaction: the history is its summary, then what comes after (fewer messages than were read)
    write(path, [summarized("the summary"), said("after")], tmp_path)
    more, offset = session.SOURCE.read(path, offset)
    assert [session.summary(r) for r in more] == ["the summary", None] and session.user_messages(more) == ["after"]
    # a reader that last read before it (a context round), now that the history is as long again
    write(path, [summarized("the summary"), said("after"), reply("ok"), said("more"), reply("ok again")], tmp_path)
    more, _ = session.SOURCE.read(path, before)
    assert session.summary(more[0]) == "the summary" and session.user_messages(more) == ["after", "more"]
    again, end = session.SOURCE.read(path, offset)
    assert session.as_lines(again) == ["● ok", "> more", "● ok again"]  # nothing read twice
    assert session.SOURCE.read(path, end) == ([], end)


def test_the_follower_reads_this_runs_session_file_only_as_it_is_rewritten(tmp_path):
    project, elsewhere, top = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "sessions"
    for d in (project, elsewhere, top):
        d.mkdir()
    older = top / "99999999-2222-3333-4444-555555555555.json"
    write(older, [said("an earlier run's")], project, older.stem)
    got = []
    follower = transcript.TranscriptFollower(
        top,
        lambda record, path: got.append(record),
        source=session.SOURCE,
        claims=lambda record, path: session.claims(record, path, str(project), None),
    )
    follower.start()
    ours, theirs = top / f"{SID}.json", top / "aaaaaaaa-2222-3333-4444-555555555555.json"
    try:
        history = [said("hello")]
        write(ours, history, project)
        write(theirs, [said("another project's words")], elsewhere, theirs.stem)
        wait_for(lambda: session.user_messages(got) == ["hello"])
        history += [reply("hi"), bash("ls", "generated")]
        write(ours, history, project)
        write(theirs, [said("another project's words"), reply("theirs")], elsewhere, theirs.stem)
        wait_for(lambda: "● hi" in session.as_lines(got))
        history[-1] = bash("ls", "done", "a\nb\n")
        write(ours, history, project)
        wait_for(lambda: "● Bash(ls)" in session.as_lines(got))
        write(ours, [summarized("what went before"), said("after the compaction")], project)
        wait_for(lambda: "after the compaction" in session.user_messages(got))
    finally:
        follower.stop()
    assert {session.session_id(r) for r in got} == {SID}
    assert session.as_lines(got) == ["> hello", "● hi", "● Bash(ls)", "> after the compaction"]
    assert [session.summary(r) for r in got if session.summary(r)] == ["what went before"]
