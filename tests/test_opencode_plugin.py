"""OpenCode's and Kilo's door: our plugin, given for the run in their config variable beside the
user's own plugins and supervise's MCP server, and the plugin itself run by Node against the
recorder's real hook server, as OpenCode calls its hooks (its live run: test_agents_e2e.py)."""

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import require
from supervisor.giveback.hookserver import HookServer
from supervisor.profiles import get, hook, kilo, opencode
from supervisor.profiles.base import ASK_JS, McpServer, js_door

SERVER = McpServer("supervise", "/usr/bin/python3", ("-m", "supervisor.memory.mcp"), {"SUPERVISE_HOME": "/h"}, ("search",))
THEIRS = """{
  // theirs: a plugin of their own and every tool asking
  "plugin": ["file:///home/me/mine.js"],
  "permission": "ask",
}"""


def given(agent, argv, env, folder):
    """The agent's environment as a run gives it both (the hook first, then the MCP server)."""
    env = dict(env)
    hooked = get(agent).with_hook(argv, folder, str(folder / "h.sock"), at_start=False, env=env)
    env.update(hooked.env)
    env.update(get(agent).with_mcp(hooked.argv, folder, SERVER, env).env)
    return hooked, env


@pytest.mark.parametrize("agent, variable", [("opencode", "OPENCODE_CONFIG_CONTENT"), ("kilo", "KILO_CONFIG_CONTENT")])
def test_the_plugin_joins_the_users_own_and_supervises_mcp_server_in_one_config(tmp_path, agent, variable):
    hooked, env = given(agent, [agent, "-m", "x"], {variable: THEIRS}, tmp_path)
    config = json.loads(env[variable])
    ours = tmp_path / "supervise.js"
    assert config["plugin"] == ["file:///home/me/mine.js", ours.as_uri()]  # theirs still load, ours after
    assert config["mcp"]["supervise"]["command"] == [SERVER.command, *SERVER.args]
    assert config["permission"] == {"*": "ask", "supervise_*": "allow"}
    assert hooked.argv == [agent, "-m", "x"] and env[hook.SOCKET_ENV] == str(tmp_path / "h.sock")
    assert hooked.files == {ours: opencode.PLUGIN.read_text(), tmp_path / "supervise-ask.js": ASK_JS.read_text()}
    if agent == "kilo":  # a daemon of its own would serve the run with its own config, not ours
        assert env[kilo.NO_DAEMON_ENV] == "1"


def test_its_offline_start_does_not_wait_out_npms_retries_unless_the_user_set_them(tmp_path):
    hooked, _ = given("opencode", ["opencode"], {}, tmp_path)
    assert hooked.env[opencode.NPM_RETRIES] == "0" and hooked.env[opencode.UNSET_ENV] == opencode.NPM_RETRIES
    hooked, _ = given("opencode", ["opencode"], {"NPM_CONFIG_FETCH_RETRIES": "5"}, tmp_path)
    assert opencode.NPM_RETRIES not in hooked.env and opencode.UNSET_ENV not in hooked.env
    hooked, _ = given("kilo", ["kilo"], {}, tmp_path)  # its start waits for no install of ours
    assert opencode.NPM_RETRIES not in hooked.env


@pytest.mark.parametrize("agent, pure", [("opencode", "OPENCODE_PURE"), ("kilo", "KILO_PURE")])
def test_without_external_plugins_or_with_a_config_it_cannot_read_the_context_is_typed(tmp_path, agent, pure):
    profile = get(agent)
    assert profile.hooks([agent]) and not profile.hooks([agent, "--pure"])
    variable = "KILO_CONFIG_CONTENT" if agent == "kilo" else "OPENCODE_CONFIG_CONTENT"
    for env in ({pure: "1"}, {pure: "TRUE"}, {variable: "{ not json"}, {variable: '{"plugin": "x.js"}'}):
        assert profile.with_hook([agent], tmp_path, "s", at_start=False, env=env) is None, env
    assert profile.with_hook([agent], tmp_path, "s", at_start=False, env={pure: "0"}).env


DRIVER = textwrap.dedent(
    """
    const { SupervisePlugin } = await import(process.argv[2]);
    const out = {};
    const hooks = await SupervisePlugin({});
    await new Promise((r) => setTimeout(r, 300)); // its `open` goes out as it loads
    const user = (session, text) => ({ info: { id: "msg_1", sessionID: session, role: "user" },
      parts: [{ id: "prt_2220959b6001lC4PAwNQURzJcp", sessionID: session, messageID: "msg_1", type: "text", text }] });
    // a compaction of the user's session; its context waits while another compaction makes its
    // own request; then the user's next message
    await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "ses_main" } } });
    await new Promise((r) => setTimeout(r, 300)); // (the event is not awaited: the answer comes meanwhile)
    await hooks["experimental.session.compacting"]({ sessionID: "ses_main" }, { context: [] });
    const clone = [user("ses_main", "turn 1")];
    await hooks["experimental.chat.messages.transform"]({}, { messages: clone });
    out.compactionCopy = clone[0].parts.map((p) => p.text);
    const sent = user("ses_main", "turn 2");
    await hooks["chat.message"]({ sessionID: "ses_main" }, { message: sent.info, parts: sent.parts });
    out.sent = sent.parts;
    // a subagent's session is not the user's: nothing asked, nothing added
    await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_child", parentID: "ses_main" } } } });
    const child = user("ses_child", "find the file");
    await hooks["chat.message"]({ sessionID: "ses_child" }, { message: child.info, parts: child.parts });
    out.child = child.parts.map((p) => p.text);
    console.log(JSON.stringify(out));
    process.exit(0);
    """
)


def run_plugin(folder: Path, socket: str | None) -> dict:
    node = shutil.which("node")
    require(node is not None, "node is not installed")
    driver = folder / "driver.mjs"
    driver.write_text(DRIVER)
    plugin = folder / "door" / "supervise.js"  # as a run has it: the module it asks by beside it
    for path, text in js_door(plugin, opencode.PLUGIN).items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    env = {"PATH": os.environ["PATH"], **({hook.SOCKET_ENV: socket} if socket else {})}
    done = subprocess.run([node, str(driver), plugin.as_uri()], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_plugin_asks_after_a_compaction_and_puts_the_context_before_the_users_next_words(tmp_path):
    asked = []

    def answer(request):
        asked.append((request.get("source"), request.get("session_id")))
        return {"compact": "CONTEXT AFTER COMPACTION", "prompt": "CONTEXT DUE NOW"}.get(request.get("source"))

    server = HookServer(str(tmp_path / "h.sock"), answer, lambda where, exc: None)
    server.start()
    try:
        out = run_plugin(tmp_path, server.path)
    finally:
        server.close()
    assert asked == [("open", None), ("compact", "ses_main"), ("precompact", "ses_main"), ("prompt", "ses_main")]
    assert out["compactionCopy"] == ["turn 1"]  # the compaction's own request: its summary stays its own
    ours, theirs = out["sent"]
    assert ours["text"] == "CONTEXT AFTER COMPACTION\n\nCONTEXT DUE NOW" and ours["synthetic"] is True
    assert theirs["text"] == "turn 2" and ours["id"] < theirs["id"]  # read back before their words
    assert out["child"] == ["find the file"]


def test_the_plugin_adds_nothing_and_breaks_nothing_when_supervise_cannot_be_asked(tmp_path):
    out = run_plugin(tmp_path, str(tmp_path / "nobody-listens.sock"))
    assert out["compactionCopy"] == ["turn 1"] and [p["text"] for p in out["sent"]] == ["turn 2"]
