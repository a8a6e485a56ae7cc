"""Codex's door: the SessionStart hook supervise adds for one run with `-c`, and its trust entry,
checked against the pinned `codex` itself (its app server's `hooks/list`, no login, no model
call): a release that hashes or keys hooks differently fails here, not in a user's session
(there, Codex would stop at its "Hooks need review" dialog)."""

import json
import os
import select
import signal
import subprocess
import time

import pytest

from conftest import require
from kits import codex as kit
from supervisor.doctor import machine
from supervisor.profiles import codex, hook
from supervisor.profiles.codex import hooktrust


def hooks_listed(argv: list[str], codex_home, cwd) -> list[dict]:
    """The hooks `codex app-server` (run with `argv`'s options) lists for `cwd`; asked of a
    second one when the first never answers (a start that hangs, now and then, on a loaded machine)."""
    try:
        return _hooks_listed(argv, codex_home, cwd)
    except TimeoutError:
        return _hooks_listed(argv, codex_home, cwd)


def _hooks_listed(argv: list[str], codex_home, cwd) -> list[dict]:
    exe = kit.binary()
    require(exe.exists(), f"{kit.PACKAGE} {kit.VERSION} is not installed in tests/agents (scripts/test installs it)")
    env = {"PATH": os.environ["PATH"], "HOME": str(codex_home.parent), "CODEX_HOME": str(codex_home), "LANG": "C.UTF-8"}
    proc = subprocess.Popen(
        [str(exe), *argv[1:], "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        requests = [
            {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "supervise-tests", "version": "0"}}},
            {"method": "initialized"},
            {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
        ]
        proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        proc.stdin.flush()
        deadline = time.monotonic() + 15  # it answers within a second or two, loaded; longer is a hang (asked again)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1)
            line = proc.stdout.readline() if ready else b""
            if ready and not line:
                break
            message = json.loads(line) if line.strip() else {}
            if message.get("id") == 2:
                assert "result" in message, message
                [listed] = message["result"]["data"]
                assert listed["errors"] == [], listed
                return listed["hooks"]
        raise TimeoutError("codex app-server never answered hooks/list")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture
def homes(tmp_path):
    codex_home, work = tmp_path / "home" / ".codex", tmp_path / "work"
    codex_home.mkdir(parents=True)
    work.mkdir()
    return codex_home, work


@pytest.mark.parametrize("at_start", [False, True], ids=["plain", "at-start"])
def test_our_hook_is_listed_trusted_beside_the_users_own(homes, at_start):
    codex_home, work = homes
    # the user's own hook, trusted in their config.toml as Codex's review records it, and
    # settings of theirs in the same tables our overrides add to
    theirs = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo theirs", "timeout": 5, "async": False}]}
    (codex_home / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [theirs]}}))
    their_key = f"{codex_home / 'hooks.json'}:session_start:0:0"
    (codex_home / "config.toml").write_text(f'[hooks.state."{their_key}"]\ntrusted_hash = "{hooktrust.trusted_hash(theirs)}"\n')
    hooked = codex.PROFILE.with_hook(["codex", "--model", "x"], work, str(work / "h.sock"), at_start=at_start)
    assert hooked.argv[0] == "codex" and hooked.argv[-2:] == ["--model", "x"] and hooked.env == {hook.SOCKET_ENV: str(work / "h.sock")}

    listed = {h["key"]: h for h in hooks_listed(hooked.argv, codex_home, work)}

    witness = listed.pop(hooktrust.key(hooktrust.WITNESS))  # it sees each compaction start; it gives nothing
    assert (witness["eventName"], witness["command"], witness["matcher"]) == (
        "preCompact",
        hook.command("source=precompact"),
        "manual|auto",
    )
    assert (witness["trustStatus"], witness["enabled"]) == ("trusted", True), witness
    ours = listed.pop(hooktrust.KEY)
    assert (ours["source"], ours["eventName"], ours["command"]) == ("sessionFlags", "sessionStart", hook.command())
    assert ours["matcher"] == ("compact|resume|startup" if at_start else "compact|resume")
    assert (ours["timeoutSec"], ours["additionalContextLimit"]) == (hooktrust.TIMEOUT, hooktrust.CONTEXT_LIMIT)
    assert (ours["trustStatus"], ours["enabled"]) == ("trusted", True), ours  # Codex runs it without asking
    assert ours["currentHash"] == hooktrust.trusted_hash(hooktrust.group(hook.command(), ours["matcher"]))
    assert [(h["source"], h["command"], h["trustStatus"]) for h in listed.values()] == [("user", "echo theirs", "trusted")]


def test_a_hook_command_with_quotes_and_non_ascii_in_its_path_is_trusted_as_given(homes):
    codex_home, work = homes
    command = "'/opt/ünïcode dir/🐍 python' -I -S \"/x/hook.py\" \\ tail"
    argv = ["codex", *codex.hook_overrides(command, at_start=False)]
    [ours] = hooks_listed(argv, codex_home, work)
    assert (ours["command"], ours["trustStatus"]) == (command, "trusted"), ours


def test_without_its_trust_entry_our_hook_would_not_run(homes):
    """What the trust entry is for: the same hook without it is listed untrusted."""
    codex_home, work = homes
    overrides = codex.hook_overrides(hook.command(), at_start=False)
    [ours] = hooks_listed(["codex", *overrides[:2]], codex_home, work)
    assert ours["trustStatus"] == "untrusted"


def test_a_users_own_hooks_by_c_a_remote_server_or_hooks_turned_off_are_left_alone():
    for argv in (
        ["codex", "-c", 'hooks.SessionStart=[{hooks=[{type="command",command="x"}]}]'],
        ["codex", "--config=hooks.state={}"],
        ["codex", "-chooks={}"],
        ["codex", "resume", "abc", "-c", "features.hooks=false"],
        ["codex", "--disable", "hooks"],
        ["codex", "--remote", "ws://127.0.0.1:9"],
    ):
        assert not codex.PROFILE.hooks(argv), argv
    for argv in (
        ["codex"],
        ["codex", "-c", "model=o3", "--enable", "hooks"],
        ["codex", "resume", "--last"],
        ["codex", "--", "-c", "hooks={}", "--remote"],  # its prompt's words
    ):
        assert codex.PROFILE.hooks(argv), argv


def test_the_hook_goes_before_a_resume_subcommand(tmp_path):
    hooked = codex.PROFILE.with_hook(["codex", "resume", "abc", "-m", "x"], tmp_path, "s", at_start=True)
    assert [hooked.argv[i] for i in (0, 1, 3, 5)] == ["codex", "-c", "-c", "-c"] and hooked.argv[7:] == ["resume", "abc", "-m", "x"]
    assert hooked.files == {}  # nothing written: the overrides are the whole door


def test_doctor_runs_codexs_hook_as_codex_would_and_gets_the_context_back():
    [check] = machine.hook_script(codex.PROFILE)
    assert check.status == "ok", check
    assert codex.PROFILE.door and codex.PROFILE.door_at_prompt
