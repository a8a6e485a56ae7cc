"""Every agent CLI with a kit (tests/kits/NAME.py), the real program at its pinned release
under supervise against its fake model API: two turns with a compaction between, supervise's
context given back and confirmed, the user's words (and none of ours) in the session's last
context, its states in the events `ps` reads, `supervise resume` with its own resume flag
and the context given again, and `doctor` naming its version as verified."""

import importlib
import json
import os
import pkgutil
import re
from pathlib import Path

import pytest

import kits
from agentdriver import Screen, send_turn
from conftest import require
from helpers import latest, recorder_done, session, wait_for
from supervisor import profiles
from supervisor.detection import patterns
from supervisor.doctor import agents as doctor_agents

KITS = [importlib.import_module(f"kits.{m.name}") for m in pkgutil.iter_modules(kits.__path__)]
FIRST = "turn 1: write src/totals.py to sum data.csv amounts"
SECOND = "turn 2: rename the total column in src/totals.py"
THIRD = "turn 3: add a test for src/totals.py"
HEAD = "[supervise] You are continuing earlier work"
TAIL = "check the files before changing them."  # the last words of a context


@pytest.fixture(params=KITS, ids=lambda kit: kit.NAME)
def agent(request, tmp_path, home):
    """(kit, start, api): start(args) runs supervise ARGS in the kit's project and environment."""
    kit = request.param
    exe = kit.binary()
    require(exe.exists(), f"{kit.PACKAGE} {kit.VERSION} is not installed in tests/agents (scripts/test installs it)")
    api = kit.Model().start()
    env, project = kit.environment(tmp_path / "agent", api.url)
    env.update(SUPERVISE_HOME=str(home), PATH=f"{exe.parent}:{os.environ['PATH']}")
    env = {k: v for k, v in env.items() if not k.startswith("SUPERVISE_SUMMARY_")}
    env["SUPERVISE_SUMMARY_BACKEND"] = "heuristic"  # no model of supervise's own is asked here
    if hasattr(kit, "install"):  # a door its user installs once
        kit.install(env)
    screens = []

    def start(args):
        screen = getattr(kit, "SCREEN", Screen)(args, env, project)
        screens.append(screen)
        kit.ready(screen)
        return screen

    yield kit, start, api, env
    for screen in screens:
        if screen.child.isalive():
            kit.quit(screen)
        screen.close()
    api.stop()


def until(screen, predicate, timeout):
    """Wait for `predicate()` reading the screen meanwhile (an agent that redraws its whole
    screen fills the terminal unless someone reads it, and then waits)."""
    return wait_for(lambda: screen.pump(0.1) or predicate(), timeout, interval=0)


def turn(kit, screen, text, sid=None):
    """Type `text`, see the reply and the agent idle; with `sid`, `ps` showed it working (or asking), then waiting."""
    send_turn(kit, screen, text)
    if sid and getattr(kit, "SHOWS_WORKING", True):
        until(screen, lambda: session(sid)["state"] in ("working", "permission"), 60)
    screen.wait("(?i)reply to: " + re.escape(text[:30]), 90)
    kit.idle(screen)
    if sid:
        until(screen, lambda: session(sid)["state"] == "waiting", 60)


def injections(sid):
    return [e["detail"] for e in session(sid)["events"] if e["kind"] == "injection"]


def confirmed(sid):
    return [i for i in injections(sid) if i.get("confirmed")] or None


def with_next_prompt(kit, command: bool) -> bool:
    """Its door asks only as the user's turn starts, and its compaction here ends no turn (a
    command, not one it makes by itself within a turn): the context goes with the user's next words."""
    return profiles.get(kit.NAME).door_at_prompt and (command or not hasattr(kit, "compact"))


def words(kit, request) -> str:
    """The user's words of `request`, as the agent sent them (its own wrapping taken off)."""
    return kit.said(request) if hasattr(kit, "said") else request.last_user_text()


def test_an_agent_compacts_gets_its_context_back_and_is_resumed_with_its_own_flag(agent):
    kit, start, api, env = agent
    marker = Path(env["HOME"]) / "their-own-hook-ran"
    if hasattr(kit, "user_hook"):  # the user's own hook (plugin, extension) of the kind our door is
        kit.user_hook(env, marker)
    screen = start(["--", str(kit.binary()), *kit.ARGV])
    sid = latest()["id"]
    turn(kit, screen, FIRST, sid)
    if hasattr(kit, "compact"):  # an agent with no command for it compacts by itself
        kit.compact(screen)
    else:
        screen.type(kit.COMPACT)
        screen.wait(kit.COMPACTED if isinstance(kit.COMPACTED, str) else kit.COMPACTED.pattern, 90)
    door = profiles.get(kit.NAME).door
    if not with_next_prompt(
        kit, command=not hasattr(kit, "compact")
    ):  # supervise types its context back once the agent is idle again, and sees it taken
        until(screen, lambda: confirmed(sid), 120)
    kit.idle(screen)
    turn(kit, screen, SECOND)
    given, *later = until(screen, lambda: confirmed(sid), 120)  # (later: an agent that compacts after each turn)
    assert len({i["round"] for i in [given, *later]}) == 1 + len(later)  # each context given once
    assert given["reason"] == "compaction" and given["context_session"] == sid
    assert (given["channel"] != "typed") == bool(door), given  # its own door where it has one
    # with the next turn at the latest (a hook's context goes with it)
    assert [r for r in api.requests if HEAD in json.dumps(r.body)], "the agent never sent our context to its model"
    kit.quit(screen)
    recorder_done(sid, 240)
    assert marker.exists() or not hasattr(kit, "user_hook"), "the user's own hook did not run beside ours"

    s = session(sid)
    if profiles.get(kit.NAME).transcript is not None:  # its own record of the run was found and followed
        assert s.get("agent_session_id"), "its own record of the session was never read"
    kinds = [e["kind"] for e in s["events"]]
    # one compaction, one pair, however many witnesses saw it (the screen, its record, a hook)
    compactions = [(e["kind"], e["offset"], e["detail"]) for e in s["events"] if e["kind"].startswith("compaction_")]
    made = kit.compactions(api) if hasattr(kit, "compactions") else 1  # (Aider summarizes after every turn here)
    assert (kinds.count("compaction_started"), kinds.count("compaction_finished")) == (made, made), compactions
    summaries = [e["detail"]["text"] for e in s["events"] if e["kind"] == "agent_summary"]
    assert len(set(summaries)) == len(summaries) <= made, summaries  # its own summary (door or record), kept once
    # its door saw it start (where it can: a command its plugins never hear), beside the screen: the same one
    if given["channel"] == "hook" and getattr(kit, "DOOR_SEES_COMPACT", True):
        [started] = [e["detail"] for e in s["events"] if e["kind"] == "compaction_started"]
        [finished] = [e["detail"] for e in s["events"] if e["kind"] == "compaction_finished"]
        assert "hook" in started["sources"] and "regex" in started["sources"] + finished["sources"], compactions
    from supervisor.store.database import Store

    store = Store.open_default()
    try:
        last = store.latest_context(sid)
    finally:
        store.close()
    # the user's words, read off its screen or its own record; never what supervise typed
    assert last["trigger"] == "session_end"
    assert last["context"]["original_request"] == FIRST, last["context"]
    assert last["context"]["latest_request"] == SECOND, last["context"]

    resumed = start(["resume", sid])
    child = until(resumed, lambda: (lambda c: c if c["id"] != sid else None)(latest()), 30)
    if door and not injections(child["id"]):  # a door that asks before the user's prompt: it goes with the first
        asked = len(api.requests)
        turn(kit, resumed, THIRD)
        assert [r for r in api.requests[asked:] if HEAD in json.dumps(r.body)], "the resumed context never reached its model"
    until(resumed, lambda: injections(child["id"]) or None, 120)
    kit.idle(resumed)
    kit.quit(resumed)
    recorder_done(child["id"], 240)
    child = session(child["id"])
    assert child["parent_id"] == sid
    redrawn = [(e["kind"], e["offset"], e["detail"]) for e in child["events"] if e["kind"].startswith("compaction_")]
    assert not redrawn, redrawn  # its history drawn again as it resumes is no new compaction
    expected = profiles.get(kit.NAME).resume(list(s["argv"]), s, fresh=False).argv
    assert child["argv"] == expected  # its own resume flag, where its profile knows one
    assert injections(child["id"])[0]["reason"] == "resume"
    if door:  # nothing typed into it, in either run
        assert [i["channel"] for i in injections(sid) + injections(child["id"])] == [given["channel"]] * 2


@pytest.mark.parametrize("kit", KITS, ids=lambda kit: kit.NAME)
def test_doctor_names_the_installed_release_as_the_one_its_patterns_were_verified_on(kit):
    exe = kit.binary()
    require(exe.exists(), f"{kit.PACKAGE} {kit.VERSION} is not installed in tests/agents (scripts/test installs it)")
    env = {"PATH": f"{Path(exe).parent}:{os.environ['PATH']}", "HOME": os.environ.get("HOME", "/")}
    check = doctor_agents.agent(kit.BINARY, patterns.load_all(env={}), env)
    assert check.status == "ok" and kit.VERSION in check.detail, check


@pytest.mark.parametrize("agent", [k for k in KITS if getattr(k, "HALF_LINE", False)], indirect=True, ids=lambda kit: kit.NAME)
def test_half_a_line_typed_while_it_compacts_is_sent_whole_as_the_users_own(agent):
    """The user types half a line while the agent compacts and finishes it once the context is
    given (or, where it is typed, whenever they like): the model gets their line as they typed
    it, and supervise's context on its own, never inside it."""
    kit, start, api, env = agent
    screen = start(["--", str(kit.binary()), *kit.ARGV])
    sid = latest()["id"]
    turn(kit, screen, FIRST, sid)
    head, rest = SECOND[:22], SECOND[22:]
    if hasattr(kit, "COMPACT"):
        screen.type(kit.COMPACT)
    else:  # it compacts by itself after the turn: the half line goes once its summary is asked for
        until(screen, lambda: kit.compacting(api), 60)
    screen.child.send(head)  # while it compacts
    if hasattr(kit, "COMPACT"):
        screen.wait(kit.COMPACTED if isinstance(kit.COMPACTED, str) else kit.COMPACTED.pattern, 90)
    else:
        kit.compact(screen)
    door = profiles.get(kit.NAME).door
    if door and not with_next_prompt(kit, command=True):  # given through its door meanwhile, the half line untouched
        until(screen, lambda: confirmed(sid), 120)
    screen.type(rest)
    screen.wait("(?i)reply to: " + re.escape(SECOND[:30]), 90)
    kit.idle(screen)
    given, *later = until(screen, lambda: confirmed(sid), 120)  # (later: an agent that compacts after each turn)
    assert (given["channel"] != "typed") == bool(door), given
    assert len({i["round"] for i in [given, *later]}) == 1 + len(later)  # each context given once
    said = [words(kit, r).strip() for r in api.requests]
    # the user's line, whole and on its own (after what the agent itself puts first, a date, say)
    assert [s for s in said if s == SECOND or s.endswith("\n" + SECOND)], said[-3:]
    # ours whole in a message of its own (it may quote their line), never their keys around it
    ours = [s for s in said if HEAD in s]
    assert all(s.startswith(HEAD) and s.endswith(TAIL) for s in ours), "our context was mixed into the user's words"
    assert [r for r in api.requests if HEAD in json.dumps(r.body)], "the agent never sent our context to its model"
    kit.idle(screen)
