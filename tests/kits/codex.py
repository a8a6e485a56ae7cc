"""Codex CLI (npm @openai/codex), run offline: the fake Responses API answering `Reply to:
<the user's last line>`, a private HOME whose config.toml uses the default model on an
API-key provider at the fake, and how to tell from its screen that it is idle. Used by
tests/test_agents_e2e.py (the recordings' own set-up is scripts/agents/codex.py's).

It compacts by itself inside a turn (`compact`): its hook, supervise's door, runs at once
there; after `/compact` it runs only as the user's next turn starts."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from pathlib import Path

from fake_responses import FakeResponses, completed, message_events
from supervisor.profiles.codex import hooktrust

NAME = "codex"
PACKAGE = "@openai/codex"
VERSION = "0.171.0"
BINARY = "codex"
MODEL = "gpt-6.1-sol"  # of its bundled catalog (0.169.0, 0.171.0): no upgrade offered over it
ARGV: list[str] = []
IDLE = r"› Ask Codex to do anything"
BUSY = "esc to interrupt"
COMPACT = "/compact"
COMPACTED = r"Context compacted"
AUTO_COMPACT_LIMIT = 180_000  # tokens: over it, Codex compacts (config.toml)
AUTO_COMPACT = "turn 1b: run a command and AUTOCOMPACT"  # answered with a command and usage over the limit


def binary() -> Path:
    return Path(__file__).resolve().parent.parent / "agents" / "node_modules" / ".bin" / BINARY


class Model(FakeResponses):
    """A plain turn is answered `Reply to: <its last line>`; AUTO_COMPACT (once) with a call of
    its shell tool and usage over the limit, so that Codex runs it and compacts before it goes
    on; the rest as FakeResponses scripts it."""

    def __init__(self) -> None:
        super().__init__(compact_delay=0.5)
        self.auto_compacted = 0

    def events(self, req, reply=None):
        text = req.last_user_text().strip()
        if reply is not None or req.is_compaction or req.wanted_schema() is not None or req.ends_with_tool_output() or not text:
            return super().events(req, reply)
        rid = f"resp_fake{next(self._ids):04d}"
        created = {"type": "response.created", "response": {"id": rid, "object": "response", "status": "in_progress", "model": MODEL}}
        if AUTO_COMPACT in text and not self.auto_compacted:
            self.auto_compacted += 1
            return [created, *command_events(rid, req.tool_names()), completed(rid, AUTO_COMPACT_LIMIT + 6_000)]
        return [created, *message_events(rid, f"Reply to: {text.splitlines()[-1][:60]}"), completed(rid, 4_000)]


def command_events(rid: str, tools: list[str]) -> list[dict]:
    """A call of its shell tool running a harmless command inside its sandbox."""
    name, args = ("shell_command", {"command": "echo done"}) if "shell_command" in tools else ("exec_command", {"cmd": "echo done"})
    item = {
        "type": "function_call",
        "id": f"fc_{rid}",
        "call_id": f"call_{rid}",
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "arguments": "", "status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
    ]


def environment(base: Path, api_url: str) -> tuple[dict[str, str], Path]:
    """A private HOME (config.toml: MODEL on a provider at `api_url`, the project trusted; no
    MCP server of the user's: supervise gives its own per run), XDG dirs and TMPDIR under
    `base`; returns (env, project: an empty git repository)."""
    home, project = base / "user-home", base / "work"
    for d in (home / ".codex", project):
        d.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (home / ".codex" / "config.toml").write_text(
        "\n".join(
            [
                f'model = "{MODEL}"',
                'model_provider = "fake"',
                "model_context_window = 200000",
                f"model_auto_compact_token_limit = {AUTO_COMPACT_LIMIT}",
                "check_for_update_on_startup = false",
                "",
                "[model_providers.fake]",
                'name = "fake"',
                f'base_url = "{api_url}/v1"',
                'wire_api = "responses"',
                'env_key = "FAKE_API_KEY"',
                "request_max_retries = 0",
                "stream_max_retries = 0",
                "",
                "[analytics]",
                "enabled = false",
                "",
                f'[projects."{project}"]',
                'trust_level = "trusted"',
            ]
        )
        + "\n"
    )
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    for d in dirs.values():
        d.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_", "ANTHROPIC_", "SUPERVISE_SUMMARY_"))}
    env.update({k: str(v) for k, v in dirs.items()}, HOME=str(home), FAKE_API_KEY="fake-key", TERM="xterm-256color", LANG="C.UTF-8")
    env["NO_UPDATE_NOTIFIER"] = "1"
    return env, project


def pump_until(screen, done, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen.pump(0.2)
        if done():
            return
        if not screen.child.isalive():
            break
    raise AssertionError(f"{what}; the screen shows:\n{screen.text()[-3000:]}")


def _in_input_box(screen, text: str) -> bool:
    """Is `text` in its input box (the last "› " line on screen), not sent yet?"""
    boxes = [line for line in screen.text().splitlines() if line.startswith("› ")]
    return bool(boxes) and text[:20] in boxes[-1]


def typed(screen, text: str) -> None:
    """The text, once it is in its input box (Enter is the caller's)."""
    screen.type(text, enter=False)
    pump_until(screen, lambda: _in_input_box(screen, text), 30, "the message never reached Codex's input box")
    screen.pump(0.5)


def say(screen, text: str) -> None:
    """Type a message and send it: Enter once the text is in its input box, again while it
    stays there (a busy machine can let Codex take an Enter for the end of a paste)."""
    typed(screen, text)
    for _ in range(3):
        screen.child.send("\r")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _in_input_box(screen, text):
            screen.pump(0.2)
        if not _in_input_box(screen, text):
            return
    raise AssertionError(f"Codex never took the message; the screen shows:\n{screen.text()[-3000:]}")


def idle(screen, timeout: float = 90.0) -> None:
    """Codex shows its input placeholder and no line says it is working."""
    pump_until(screen, lambda: IDLE in screen.text() and BUSY not in screen.text(), timeout, "Codex never became idle")


def ready(screen) -> None:
    """Codex has started its session: it says "idle" in an OSC 7501 sequence once it can take
    a message (its input box is drawn earlier, and an Enter before this is lost)."""
    pump_until(screen, lambda: any("7501;state=idle" in chunk for chunk in screen.raw), 120, "Codex never started")
    idle(screen)


def quit(screen) -> None:
    """Ctrl-C until it exits (the first may only arm it)."""
    for _ in range(4):
        screen.child.send("\x03")
        deadline = time.monotonic() + 5
        while screen.child.isalive() and time.monotonic() < deadline:
            screen.pump(0.2)
        if not screen.child.isalive():
            break


def compact(screen) -> None:
    """A turn in which it runs a command and compacts by itself before it goes on."""
    say(screen, AUTO_COMPACT)
    pump_until(screen, lambda: COMPACTED in screen.text(), 90, "Codex never compacted by itself")
    idle(screen)


def user_hook(env: dict[str, str], marker: Path) -> None:
    """The user's own SessionStart hook in ~/.codex/hooks.json, trusted in their config.toml
    (as Codex's hook review records it): it writes `marker` as it runs."""
    codex_home = Path(env["HOME"]) / ".codex"
    group = {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": f"touch {shlex.quote(str(marker))}", "timeout": 10, "async": False}],
    }
    (codex_home / "hooks.json").write_text(json.dumps({"hooks": {"SessionStart": [group]}}))
    key = f"{codex_home / 'hooks.json'}:session_start:0:0"
    with open(codex_home / "config.toml", "a") as fh:
        fh.write(f'\n[hooks.state."{key}"]\ntrusted_hash = "{hooktrust.trusted_hash(group)}"\n')


HALF_LINE = True  # a half line typed while it compacts is kept (tests/test_agents_e2e.py)
