"""The real Claude Code (pinned in tests/agents) under supervise, against the fake API."""

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from agentdriver import CLAUDE_IDLE as IDLE, CLAUDE_MODEL, Screen, claude_bin, claude_env
from conftest import SUPERVISE
from helpers import latest, recorder_done, session, wait_for
from fakeapi import FakeAnthropic, default_reply
from procs import cpu_seconds, recorder_pid

HEAD = "[supervise] You are continuing earlier work"


def typed_ours(request):
    """Our context typed as the user's turn (2.1.330 sends a long paste inside
    <pasted_content> tags), not handed over by the hook."""
    if is_summary_request(request):  # supervise's own summary reads the session, our context included
        return False
    text = request.last_user_text()
    return text.startswith(HEAD) or ("<pasted_content" in text and HEAD in text)


TASK = "answering numbered turns for the fake cheap model"  # only the fake summary says this
SUMMARY = {
    "tool_use": {
        "name": "record_session_context",
        "input": {
            "original_request": "turn 1: please say hello",
            "current_task": TASK,
            "completed_steps": ["turns 1 to 3"],
            "pending_steps": [],
            "key_decisions": [],
            "relevant_files": [],
            "errors_and_resolutions": [],
        },
    }
}


def is_summary_request(r):
    return (r.body.get("tool_choice") or {}).get("name") == "record_session_context"


COMPACTION_KINDS = {"compaction_started", "compaction_finished", "compaction_failed", "context_low", "context_overflow"}


@pytest.fixture
def start_claude(tmp_path, home):
    """start(supervise_args, env, summary_delay) -> (screen, api): Claude Code under supervise,
    idle at its prompt; everything is quit at the end."""
    claude_bin()
    project = tmp_path / "work"
    project.mkdir()
    api = FakeAnthropic().start()
    base_env = claude_env(tmp_path / "claude-home", project, api.url)
    base_env["SUPERVISE_HOME"] = str(home)
    screens = []

    def start(supervise_args=(), env=None, summary_delay=0.0, args=None):
        if not screens:
            # A real summary takes seconds; answered at once, Claude Code may finish compacting
            # before it ever draws its "Compacting conversation…" spinner (seen: 1 run in 4).
            api.add(lambda r: {**default_reply(r), "delay": 0.8}, match=lambda r: r.is_compaction, times=None)
            # supervise's own summaries (the cheap model) go to the same fake API
            api.add({**SUMMARY, "delay": summary_delay}, match=is_summary_request, times=None)
        if args is None:
            args = [*supervise_args, "--", claude_bin(), "--model", CLAUDE_MODEL]
        screen = Screen(args, {**base_env, **(env or {})}, project)
        screens.append(screen)
        screen.wait(IDLE, 60)
        return screen, api

    yield start
    for screen in screens:
        if screen.child.isalive():
            quit_claude(screen)
    api.stop()


@pytest.fixture
def claude(start_claude):
    return start_claude()


def quit_claude(screen):
    screen.child.sendcontrol("c")
    time.sleep(0.3)
    screen.child.sendcontrol("c")
    screen.close()


def turns(screen, numbers):
    for i in numbers:
        screen.type(f"turn {i}: please say hello")
        screen.wait(rf"Reply to: turn {i}", 60)
        screen.wait(IDLE, 60)


def finished_session(screen):
    quit_claude(screen)
    return wait_for(lambda: (lambda s: s if s["status"] != "active" else None)(session(latest()["id"])), 20)


def kinds(s, wanted=COMPACTION_KINDS):
    return [e for e in s["events"] if e["kind"] in wanted]


def assert_one_compaction(s, trigger):
    compaction = kinds(s)
    assert [e["kind"] for e in compaction] == ["compaction_started", "compaction_finished"], compaction
    started, finished = compaction[0]["detail"], compaction[1]["detail"]
    assert started["sources"] == ["regex"] and "claude/compacting-spinner" in started["patterns"]
    # Its end: the transcript always; the screen where it says so (2.1.330's fullscreen UI
    # prints "⎿ Compacted" after /compact and nothing after an automatic compaction).
    assert "transcript" in finished["sources"] and set(finished["sources"]) <= {"regex", "transcript", "hook"}
    assert finished["trigger"] == trigger and finished["pre_tokens"] > 0
    if "regex" in finished["sources"]:
        assert {"claude/conversation-compacted", "claude/compacted-result"} & set(finished["patterns"])
    assert s["agent"] == "claude" and s["agent_session_id"]
    # the same moments are marked in the recording
    cast = Path(s["cast_path"]).read_text()
    assert '"m", "compaction_started"' in cast and '"m", "compaction_finished"' in cast


def test_supervise_costs_nothing_while_claude_code_sits_idle(claude):
    """After a few turns (transcript written, hook server up, injection armed), an idle
    Claude Code costs supervise next to no CPU. (The follower reading on its own opens
    burnt a whole core: 3 s of CPU in these 3 s.)"""
    screen, api = claude
    turns(screen, [1, 2])
    time.sleep(1.0)
    pids = [screen.child.pid, recorder_pid(screen.child.pid)]
    before = [cpu_seconds(p) for p in pids]
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        screen.pump(0.2)
    used = sum(cpu_seconds(p) - b for p, b in zip(pids, before))
    assert used < 0.15, f"supervise used {used:.2f} s of CPU in 3 s while Claude Code was idle"


def test_manual_compact_is_one_compaction_and_the_hook_gives_the_context_once(claude):
    screen, api = claude
    turns(screen, [1, 2, 3])
    screen.type("/compact")
    screen.wait("Compacted", 90)
    screen.wait(IDLE, 60)
    turns(screen, [4, 5])
    s = finished_session(screen)
    assert any(r.is_compaction for r in api.messages())
    assert_one_compaction(s, "manual")
    assert "hook" in kinds(s)[1]["detail"]["sources"]  # Claude Code's SessionStart:compact hook ran
    assert len(kinds(s, {"idle_prompt"})) >= 6  # at start and after each turn
    # the state before compaction was captured by the cheap model, and again at the end
    from supervisor.store.database import Store

    store = Store.open_default()
    rows = wait_for(
        lambda: (lambda r: r if {"compaction_started", "session_end"} <= {x["trigger"] for x in r} else None)(store.contexts(s["id"])), 30
    )
    first = rows[0]
    assert first["trigger"] == "compaction_started" and first["source"] == "model" and first["model"] == "claude-haiku-4-5"
    assert first["prompt"].startswith(HEAD)
    summary_requests = [r for r in api.messages() if is_summary_request(r)]
    assert "turn 3: please say hello" in summary_requests[0].last_user_text()
    # ...and given back through the hook: the conversation holds it once from turn 4 on
    assert_given_once(api, "turn 4")
    assert ours_in(turn_requests(api, "turn 3")[-1]) == 0
    [given] = injections(s)
    assert given["channel"] == "hook" and given["source"] == "compact" and given["reason"] == "compaction"
    assert given["round"] == first["round"] and given["context_session"] == s["id"]
    assert not [r for r in api.messages() if typed_ours(r)]  # nothing was typed
    # its own summary of what it compacted, kept beside the context supervise made then
    shown = subprocess.run([*SUPERVISE, "show", s["id"]], capture_output=True, text=True, check=True).stdout
    assert "the agent's own compaction summaries (1), beside supervise's context:" in shown, shown
    assert "| 1. Primary Request: continue the test conversation." in shown
    assert re.search(r"only supervise's round \d+:\s+request: turn 1", shown), shown
    [compared] = json.loads(subprocess.run([*SUPERVISE, "show", s["id"], "--json"], capture_output=True, text=True, check=True).stdout)[
        "compactions"
    ]
    assert compared["round"] == first["round"] and "Primary Request" in compared["agent_summary"]


def test_plain_conversation_fires_no_compaction_event(claude):
    screen, api = claude
    turns(screen, [1, 2, 3])
    s = finished_session(screen)
    assert kinds(s) == []
    assert not kinds(s, {"unrecognized"})
    assert len(kinds(s, {"idle_prompt"})) >= 4
    assert s["agent_session_id"]  # learned from the transcript, needed by `claude --resume`
    assert not injections(s)  # nothing was lost, so nothing is given


# -- giving the context back ---------------------------------------------------------------------


def ours_in(request) -> int:
    """How many times a request carries our context prompt."""
    return json.dumps(request.body).count(json.dumps(HEAD)[1:-1])


def turn_requests(api, text):
    return [r for r in api.messages() if r.last_user_text().startswith(text) and not r.is_compaction]


def injections(s):
    return [e["detail"] for e in s["events"] if e["kind"] == "injection"]


def assert_given_once(api, first_turn_after):
    """From the first request after the compaction on, the conversation holds our context
    exactly once (the hook's or a typed turn), with what the fake cheap model summarized."""
    before = [r for r in api.messages() if not r.is_compaction and not is_summary_request(r)]
    carrying = [r for r in before if ours_in(r)]
    assert carrying, "the context never reached the model"
    assert all(ours_in(r) == 1 for r in carrying), [ours_in(r) for r in carrying]
    assert TASK in json.dumps(carrying[0].body)
    assert turn_requests(api, first_turn_after) and all(ours_in(r) == 1 for r in turn_requests(api, first_turn_after))


def test_automatic_compaction_gets_the_context_in_the_retried_turn(claude):
    screen, api = claude
    turns(screen, [1, 2])
    api.add(
        {"status": 400, "message": "prompt is too long: 204858 tokens > 200000 maximum"},
        match=lambda r: r.last_user_text().startswith("turn 3") and not r.is_compaction,
    )
    screen.type("turn 3: please say hello")
    screen.wait("Reply to: turn 3", 120)
    screen.wait(IDLE, 60)
    s = finished_session(screen)
    assert_one_compaction(s, "auto")
    retried = turn_requests(api, "turn 3")[-1]
    assert ours_in(retried) == 1 and TASK in json.dumps(retried.body)
    assert [g["channel"] for g in injections(s)] == ["hook"]


def test_typed_injection_is_one_pasted_user_turn(start_claude):
    screen, api = start_claude(["--inject", "type"])
    turns(screen, [1, 2])
    screen.type("/compact")
    screen.wait("Compacted", 90)
    screen.wait(r"Reply to: .*", 60)
    wait_for(lambda: [r for r in api.messages() if typed_ours(r)], 30)
    screen.wait(IDLE, 60)
    turns(screen, [3])
    s = finished_session(screen)
    typed = [r for r in api.messages() if typed_ours(r)]
    assert len(typed) == 1 and TASK in typed[0].last_user_text()
    assert_given_once(api, "turn 3")
    [given] = injections(s)
    assert given["channel"] == "typed" and given["paste"] is True and given["confirmed"] is True


def test_a_pending_injection_waits_out_a_permission_dialog(start_claude):
    # The hook gives up after 1 s and the cheap model takes 6 s: the context is typed later,
    # and by then Claude Code is asking for permission to run a command.
    screen, api = start_claude(env={"SUPERVISE_HOOK_WAIT": "1"}, summary_delay=6.0)
    turns(screen, [1, 2])
    screen.type("/compact")
    screen.wait("Compacted", 90)
    screen.wait(IDLE, 60)
    api.add(
        {
            "text": "I will clean the build.",
            "tool_use": {"name": "Bash", "input": {"command": "rm -rf build && ls", "description": "Clean the build"}},
        },
        match=lambda r: r.last_user_text().startswith("please clean the build"),
    )
    screen.type("please clean the build")
    screen.wait("Do you want to proceed", 60)
    from supervisor.store.database import Store

    store = Store.open_default()
    sid = latest()["id"]
    wait_for(lambda: store.latest_context(sid), 30)  # the context is ready now...
    time.sleep(3)
    screen.pump()
    assert "Do you want to proceed" in screen.text()  # ...and the dialog is still waiting
    assert not any(ours_in(r) for r in api.messages())
    assert not injections(session(sid))
    screen.child.send("\x1b")  # the user cancels the command
    screen.wait("Interrupted", 30)
    wait_for(lambda: [r for r in api.messages() if typed_ours(r)], 30)
    screen.wait(IDLE, 60)
    s = finished_session(screen)
    assert len([r for r in api.messages() if typed_ours(r)]) == 1
    [given] = injections(s)
    assert given["channel"] == "typed" and given["confirmed"] is True


def test_resume_restarts_claude_with_its_session_and_gives_it_the_context(start_claude, tmp_path):
    screen, api = start_claude()
    turns(screen, [1, 2])
    first = finished_session(screen)
    from supervisor.store.database import Store

    wait_for(lambda: Store.open_default().latest_context(first["id"]), 30)  # made at the end, in the background
    n = len(api.messages())
    screen, _ = start_claude(args=["resume", first["id"]])
    turns(screen, [3])
    second = finished_session(screen)
    assert second["parent_id"] == first["id"]
    assert second["argv"][1:3] == ["--resume", first["agent_session_id"]]
    request = turn_requests(api, "turn 3")[-1]
    assert api.messages().index(request) >= n
    assert "turn 2: please say hello" in json.dumps(request.body)  # Claude's own conversation, resumed
    assert ours_in(request) == 1 and TASK in json.dumps(request.body)  # and ours, once
    [given] = injections(second)
    assert given["channel"] == "hook" and given["source"] == "resume" and given["context_session"] == first["id"]


def test_resume_fresh_starts_a_new_claude_conversation_that_still_gets_the_context(start_claude):
    screen, api = start_claude()
    turns(screen, [1, 2])
    first = finished_session(screen)
    from supervisor.store.database import Store

    wait_for(lambda: Store.open_default().latest_context(first["id"]), 30)
    screen, _ = start_claude(args=["resume", "--last", "--fresh"])
    turns(screen, [3])
    second = finished_session(screen)
    assert "--resume" not in second["argv"] and second["parent_id"] == first["id"]
    assert second["agent_session_id"] != first["agent_session_id"]
    request = turn_requests(api, "turn 3")[-1]
    assert "Reply to: turn 2" not in json.dumps(request.body)  # not Claude's old conversation...
    assert ours_in(request) == 1 and TASK in json.dumps(request.body)  # ...but our context of it
    [given] = injections(second)
    assert given["channel"] == "hook" and given["source"] == "startup" and given["reason"] == "resume"


def test_ctrl_z_suspends_claude_code_to_the_shell_and_fg_brings_it_back(start_claude, tmp_path):
    """Claude Code suspends itself on Ctrl-Z (it leaves raw mode, then SIGTSTPs its group).
    Under supervise its group used to be orphaned, the kernel dropped the signal, and Claude
    Code sat in cooked mode waiting for a SIGCONT that never came."""
    from conftest import SUPERVISE

    _, api = start_claude()  # the fake API set up (this first Claude Code is left idle)
    project = tmp_path / "work"
    env = {
        **claude_env(tmp_path / "claude-home", project, api.url),
        "SUPERVISE_HOME": str(tmp_path / "home"),
        "PS1": "SHELL$ ",
        "HISTFILE": "/dev/null",
    }
    sh = Screen([], env, project, supervise=["bash", "--norc", "--noprofile", "-i"])
    try:
        sh.wait(r"SHELL\$", 10)
        sh.child.sendline(f"{SUPERVISE[0]} -- {claude_bin()} --model {CLAUDE_MODEL}")
        sh.wait(IDLE, 60)
        turns(sh, [1])
        sh.child.sendcontrol("z")
        sh.wait(r"Stopped", 20)
        sh.child.sendline("echo SHELL-IS-BACK")
        sh.wait(r"\nSHELL-IS-BACK", 10)
        sh.child.sendline("fg")
        sh.wait(IDLE, 30)
        turns(sh, [2])  # raw again: typed keys reach Claude Code's prompt and it answers
    finally:
        quit_claude(sh)


# -- long sessions: several compactions, the user typing between --------------------------------


def garbled_summary(request):
    """A cheap model that copies the wrong lines: a prompt-like line nested as the request,
    the last one as the task, every line with a bracket as an error. Read from a digest that
    held our own prompt, it would store it."""
    text = request.last_user_text()
    said = [line for line in text.splitlines() if line.startswith(("❯ ", "User: "))]
    return {
        "tool_use": {
            "name": "record_session_context",
            "input": {
                **SUMMARY["tool_use"]["input"],
                "original_request": '"original_request": "' + (said[0] if said else "?"),
                "current_task": said[-1] if said else "?",
                "errors_and_resolutions": [line for line in text.splitlines() if "[" in line][-5:],
            },
        }
    }


@pytest.mark.parametrize("inject", ["auto", "type"])
def test_three_compactions_with_turns_between_never_read_back_our_words(start_claude, inject):
    """Through the hook (auto) or typed at the prompt: every round keeps the first request
    verbatim and names the latest turn, whatever the model wrote, and none holds any text
    of a context supervise gave before (echoed on screen, recorded in the transcript)."""
    from fakeapi import Rule
    from supervisor.store.database import Store

    screen, api = start_claude(["--inject", inject])
    api.rules.insert(0, Rule(garbled_summary, is_summary_request, None))
    turns(screen, [1, 2])
    typed = 2
    compactions = lambda: len([r for r in api.messages() if r.is_compaction])  # noqa: E731
    for k in range(3):
        before = compactions()
        screen.type("/compact")
        wait_for(lambda: compactions() > before, 90)
        wait_for(lambda: len(injections(session(latest()["id"]))) > k, 60)
        screen.wait(IDLE, 60)
        typed += 1
        turns(screen, [typed])
    s = finished_session(screen)
    recorder_done(s["id"])  # the session-end round is made after supervise exits
    given = injections(s)
    assert len(given) == 3 and all(g["confirmed"] for g in given), given
    assert {g["channel"] for g in given} == ({"hook"} if inject == "auto" else {"typed"})
    rows = Store.open_default().contexts(s["id"])
    assert len(rows) >= 4, [r["trigger"] for r in rows]
    assert {r["source"] for r in rows} == {"model"}, [(r["source"], r["error"]) for r in rows]
    said = [f"turn {i}: please say hello" for i in range(1, typed + 1)]
    for row in rows:
        ctx = row["context"]
        assert ctx["original_request"] == said[0], (row["round"], ctx)
        assert ctx["latest_request"] in said, (row["round"], ctx)
        text = json.dumps(ctx, ensure_ascii=False)
        assert "[supervise]" not in text and "You are continuing" not in text and "Continue from the current task" not in text, (
            row["round"],
            ctx,
        )
    assert rows[-1]["context"]["latest_request"] == said[-1]
    # the cheap model was never sent one of our prompts as the session's
    for r in api.messages():
        if is_summary_request(r):
            digest = r.last_user_text().split("## Session digest", 1)[1]
            assert HEAD not in digest and "Continue from the current task" not in digest
    assert not [e for e in s["events"] if e["kind"] == "unrecognized" and "supervise" in e["detail"]["text"]]


# -- on a subscription login: no API key anywhere supervise can see -------------------------------

LOGIN_TOKEN = "sk-ant-oat01-login-token-for-e2e"


def login_home(home: Path, project: Path, api_url: str) -> dict:
    """Claude Code logged in as `/login` leaves it (an OAuth entry in .credentials.json), its
    endpoint set in its own settings (the one stand-in), and supervise's environment holding
    nothing of Anthropic's: no key, no token, no base URL."""
    import os

    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
            }
        )
    )
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ANTHROPIC_BASE_URL": api_url, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}})
    )
    (home / ".claude" / ".credentials.json").write_text(
        json.dumps(
            {
                "claudeAiOauth": {
                    "accessToken": LOGIN_TOKEN,
                    "refreshToken": "sk-ant-ort01-refresh",
                    "expiresAt": int((time.time() + 3600) * 1000),
                    "scopes": ["user:inference", "user:profile"],
                    "subscriptionType": "max",
                }
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "SUPERVISE_SUMMARY_"))}
    return {**env, "HOME": str(home), "TERM": "xterm-256color"}


def test_on_a_login_the_compaction_gets_a_context_made_by_claude_p_through_the_hook(tmp_path, home):
    """The summary backend auto, with no API key: the session's own Claude Code, headless on
    the user's login, makes the context, and the SessionStart hook gives it back."""
    from fakeapi import STRUCTURED_OUTPUT, structured
    from supervisor.store.database import Store

    claude = claude_bin()
    project = tmp_path / "work"
    project.mkdir()
    made = {**SUMMARY["tool_use"]["input"], "current_task": "carrying on with the numbered turns (made by claude -p)"}
    with FakeAnthropic() as api:
        api.add(lambda r: {**default_reply(r), "delay": 0.8}, match=lambda r: r.is_compaction, times=None)
        api.add(structured(made), match=lambda r: r.tool(STRUCTURED_OUTPUT) is not None and not r.has_tool_result, times=None)
        env = {**login_home(tmp_path / "claude-home", project, api.url), "SUPERVISE_HOME": str(home)}
        screen = Screen(["--", claude, "--model", CLAUDE_MODEL], env, project)
        try:
            screen.wait(IDLE, 60)
            turns(screen, [1, 2, 3])
            screen.type("/compact")
            screen.wait("Compacted", 90)
            screen.wait(IDLE, 60)
            turns(screen, [4])
        finally:
            s = finished_session(screen) if screen.child.isalive() else session(latest()["id"])
        summaries = [r for r in api.messages() if r.tool(STRUCTURED_OUTPUT) is not None]
        after = turn_requests(api, "turn 4")
    assert summaries, "claude -p was never asked for a context"
    assert all(r.headers.get("authorization") == f"Bearer {LOGIN_TOKEN}" for r in summaries)
    rows = Store.open_default().contexts(s["id"])
    first = rows[0]
    assert first["trigger"].startswith("compaction") and first["backend"] == "claude" and first["source"] == "model", first
    assert first["context"]["current_task"] == made["current_task"]
    assert first["context"]["original_request"] == "turn 1: please say hello"  # read, not the model's
    [given] = injections(s)
    assert given["channel"] == "hook" and given["round"] == first["round"] and given["confirmed"]
    assert after and all(ours_in(r) == 1 for r in after) and made["current_task"] in json.dumps(after[0].body)
