"""Cline CLI's door, installed as a user installs it: `supervise hooks install cline` writes
supervise's plugin and has the real Cline CLI install it (`cline plugin install` copies it into
~/.cline/plugins; the user's own plugins untouched), `uninstall` takes it out; and the plugin
itself run by Node against the recorder's real hook server, as Cline calls its hooks (its live
run: test_agents_e2e.py)."""

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import SUPERVISE, require
from kits import cline as kit
from supervisor.detection import patterns
from supervisor.doctor import agents as doctor_agents
from supervisor.giveback.hookserver import HookServer
from supervisor.profiles import cline
from supervisor.profiles.base import ASK_JS

MINE = 'export default { name: "mine", manifest: { capabilities: ["hooks"] }, hooks: {} };\n'


@pytest.fixture
def user(tmp_path):
    exe = kit.binary()
    require(exe.exists(), f"{kit.PACKAGE} {kit.VERSION} is not installed in tests/agents (scripts/test installs it)")
    home = tmp_path / "home"
    (home / ".cline" / "plugins").mkdir(parents=True)
    (home / ".cline" / "plugins" / "mine.js").write_text(MINE)
    return {"HOME": str(home), "PATH": f"{exe.parent}:{os.environ['PATH']}", "SUPERVISE_HOME": str(tmp_path / "data")}


def supervise(env, *args):
    return subprocess.run([*SUPERVISE, *args], env=env, capture_output=True, text=True, timeout=120, cwd=env["HOME"])


def copies(env) -> list[Path]:
    """The plugins Cline installed (its copy of each entry file)."""
    return sorted(cline.plugins_dir(env).glob(f"*/package/{cline.PLUGIN.name}"))


def test_install_has_cline_copy_our_plugin_in_and_uninstall_takes_it_out_leaving_the_users_own(user, tmp_path):
    dry = supervise(user, "hooks", "install", "cline", "--dry-run")
    folder = tmp_path / "data" / "doors" / "cline"
    assert dry.returncode == 0 and f"cline plugin install {folder / 'supervise'} --force" in dry.stdout, dry
    assert not folder.exists() and not copies(user) and cline.PROFILE.door_here(user) is None  # a dry run changes nothing

    done = supervise(user, "hooks", "install", "cline")
    assert done.returncode == 0 and "now gets its context back through its own hooks" in done.stderr, done
    [copy] = copies(user)
    assert copy.read_text() == cline.PLUGIN.read_text() and copy.parent.parent.name.startswith("supervise-")
    assert copy.with_name(ASK_JS.name).read_text() == ASK_JS.read_text()  # the module it asks by, beside it
    assert cline.PROFILE.door_here(user) == cline.PROFILE.door
    assert cline.PROFILE.with_hook(["cline"], tmp_path, "s", at_start=False, env=user).env == {"SUPERVISE_HOOK_SOCKET": "s"}
    check = doctor_agents.agent("cline", patterns.load_all(env={}), user)
    assert check.detail.endswith(f"context back: {cline.PROFILE.door}"), check
    assert os.stat(folder).st_mode & 0o077 == 0  # ours alone

    again = supervise(user, "hooks", "install", "cline")  # replaced by this supervise's, not added twice
    assert again.returncode == 0 and len(copies(user)) == 1, again

    copy.write_text("// an older supervise's\n")  # one this supervise did not write is not its door
    assert cline.PROFILE.door_here(user) is None and cline.PROFILE.with_hook(["cline"], tmp_path, "s", False, user) is None

    gone = supervise(user, "hooks", "uninstall", "cline")
    assert gone.returncode == 0 and "no longer has supervise's door" in gone.stderr, gone
    assert not copies(user) and not folder.exists()
    assert cline.PROFILE.with_hook(["cline"], tmp_path, "s", at_start=False, env=user) is None  # typed again
    twice = supervise(user, "hooks", "uninstall", "cline")
    assert twice.returncode == 0 and "had no door of supervise's" in twice.stderr, twice
    assert (Path(user["HOME"]) / ".cline" / "plugins" / "mine.js").read_text() == MINE


def test_its_plugins_stay_on_with_yolo():
    assert cline.PROFILE.hooks(["cline"]) and cline.PROFILE.hooks(["cline", "--yolo"])


DRIVER = textwrap.dedent(
    """
    const plugin = (await import(process.argv[2])).default;
    const hooks = plugin.hooks;
    const out = {};
    plugin.setup({}, {});
    await new Promise((r) => setTimeout(r, 300)); // its `open` goes out as it is set up
    const said = { id: "m1", role: "user", content: [{ type: "text", text: "<user_input>rename it</user_input>" }] };
    out.run = (await hooks.beforeRun({ snapshot: { conversationId: "conv_1", messages: [said] } })) ?? null;
    // a compaction inside the run: its notice as it starts, then a request whose first message is its summary
    hooks.onEvent({ type: "status-notice", message: "auto-compacting", metadata: { phase: "started", reason: "auto_compaction" } });
    await new Promise((r) => setTimeout(r, 300));
    const summary = { id: "m9", role: "user", content: [{ type: "text", text: "Context summary" }], metadata: { kind: "compaction", reason: "auto_compaction" } };
    const next = { id: "m10", role: "user", content: [{ type: "text", text: "tool result" }] };
    const first = await hooks.beforeModel({ snapshot: { conversationId: "conv_1" }, request: { messages: [summary, next] } });
    const again = await hooks.beforeModel({ snapshot: { conversationId: "conv_1" }, request: { messages: [summary, next, next] } });
    const texts = (result) => (result ? result.messages.map((m) => m.content[0].text) : null);
    out.first = texts(first);
    out.again = texts(again);
    out.plain = (await hooks.beforeModel({ snapshot: {}, request: { messages: [said] } })) ?? null;
    console.log(JSON.stringify(out));
    """
)


def drive(tmp_path, env):
    require(shutil.which("node") is not None, "node is not installed")
    for path, text in cline.plugin_files(tmp_path).items():  # as installed: the module it asks by beside it
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    plugin = tmp_path / cline.PLUGIN_NAME / cline.PLUGIN.name
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    done = subprocess.run(
        ["node", str(driver), str(plugin)], env={"PATH": os.environ["PATH"], **env}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_plugin_asks_as_a_run_starts_and_after_a_compaction_inside_it(tmp_path):
    asked = []

    def answer(request):
        asked.append(request)
        return f"[supervise] context for {request['source']}" if request["source"] in ("prompt", "compact") else None

    sock = str(tmp_path / "h.sock")
    server = HookServer(sock, answer, lambda where, exc: None)
    server.start()
    try:
        out = drive(tmp_path, {"SUPERVISE_HOOK_SOCKET": sock})
    finally:
        server.close()
    assert [(a["source"], a.get("session_id"), a.get("trigger")) for a in asked] == [
        ("open", None, None),
        ("startup", "conv_1", None),  # once: a resumed session's context, or a brief
        ("prompt", "conv_1", None),
        ("precompact", None, "auto"),
        ("compact", "conv_1", "auto"),
    ]
    # Cline adds it after the user's words, as a <hook_context> message of its own
    assert out["run"] == {"appendContext": "[supervise] context for prompt"}
    # after the compaction's summary, in every request of the run while that summary leads
    assert out["first"] == ["Context summary", "[supervise] context for compact", "tool result"]
    assert out["again"] == ["Context summary", "[supervise] context for compact", "tool result", "tool result"]
    assert out["plain"] is None


@pytest.mark.parametrize("env", [{}, {"SUPERVISE_HOOK_SOCKET": "/nonexistent/h.sock"}], ids=["outside", "broken"])
def test_outside_supervise_or_with_a_broken_socket_it_adds_nothing_and_throws_nothing(tmp_path, env):
    out = drive(tmp_path, env)
    assert out == {"run": None, "first": None, "again": None, "plain": None}


def test_its_record_of_our_context_is_never_read_back_as_the_users_words():
    """Two messages as Cline 3.0.65 kept them: the user's words, then what a plugin's
    beforeRun gave (a `<hook_context>` message of its own, shown as a system line)."""
    record = {
        "sessionId": "1795878784255_hm78t",
        "messages": [
            {"id": "f4a8", "role": "user", "content": [{"type": "text", "text": '<user_input mode="act">hello one</user_input>'}]},
            {
                "id": "msg_nXBokRas",
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": '<hook_context source="RunStart">\n[supervise] You are continuing earlier work\n</hook_context>',
                    }
                ],
                "metadata": {"userRunSpan": 0, "displayRole": "system"},
            },
        ],
    }
    records = cline.transcript.items(record)
    assert cline.transcript.user_messages(records) == ["hello one"]
    assert not [line for line in cline.transcript.as_lines(records) if "[supervise]" in line]
