"""Drive a real agent CLI under `supervise` in a real PTY, reading the screen as a person would."""

from __future__ import annotations

import json
from collections.abc import Callable
import os
import re
import subprocess
import time
from pathlib import Path

import avt
import pexpect

from conftest import ROOT, SUPERVISE, require

AGENTS = ROOT / "tests" / "agents" / "node_modules"
CLAUDE_VERSION = json.loads((ROOT / "tests" / "agents" / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]
# The model the tests run Claude Code with: a 200k window, and one that neither Claude Code
# 2.1.330 nor the SDK marks as retiring (claude-sonnet-4-5 retires on 2026-11-30). With it
# Claude Code starts in manual mode; newer models start it in auto mode.
CLAUDE_MODEL = "claude-haiku-4-5"
# Claude Code idle at its prompt, in every permission mode (shift+tab cycles them):
# "⏸ manual mode on · ? for shortcuts", "⏵⏵ accept edits on (shift+tab to cycle)", "⏸ plan mode
# on (shift+tab to cycle)", "⏵⏵ auto mode on (shift+tab to cycle)" (busy, each gains " · esc
# to interrupt"). As the shipped idle patterns read it.
CLAUDE_IDLE = r"\? for shortcuts|(?:⏸|⏵⏵) [a-z ]+ on \(shift\+tab to cycle\)(?!.*esc to interrupt)"


def claude_bin() -> str:
    path = AGENTS / ".bin" / "claude"
    require(path.exists(), f"Claude Code is not installed (run: npm install --prefix {AGENTS.parent})")
    return str(path)


NEWEST = ROOT / "tests" / "agents" / "newest" / "node_modules"


def claude_newest_bin() -> str:
    """Claude Code's newest release (tests/agents/newest), beside the pinned one."""
    path = NEWEST / ".bin" / "claude"
    require(path.exists(), f"Claude Code's newest release is not installed (run: npm install --prefix {NEWEST.parent})")
    return str(path)


def claude_env(home: Path, project: Path, api_url: str) -> dict:
    """A HOME where Claude Code is onboarded and trusts `project`, talking to `api_url`."""
    home.mkdir(parents=True, exist_ok=True)
    (home / ".claude.json").write_text(
        json.dumps(
            {
                "hasCompletedOnboarding": True,
                "theme": "dark",
                "projects": {str(project): {"hasTrustDialogAccepted": True}},
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
    env.update(
        HOME=str(home),
        ANTHROPIC_BASE_URL=api_url,
        ANTHROPIC_AUTH_TOKEN="fake-token",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        TERM="xterm-256color",
    )
    return env


LOGIN_TOKEN = "sk-ant-oat01-login-token-for-tests"


def claude_login(home: Path, api_url: str) -> None:
    """Make `home` a subscription login's: `~/.claude/.credentials.json` with an OAuth entry
    (what `claude` writes at /login) and `~/.claude/settings.json` pointing it at `api_url`
    (the one stand-in: the endpoint). Claude Code then sends `Authorization: Bearer <token>`."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": api_url}}))
    expires = int((time.time() + 3600) * 1000)
    (home / ".claude" / ".credentials.json").write_text(
        json.dumps(
            {
                "claudeAiOauth": {
                    "accessToken": LOGIN_TOKEN,
                    "refreshToken": "sk-ant-ort01-refresh",
                    "expiresAt": expires,
                    "scopes": ["user:inference", "user:profile"],
                    "subscriptionType": "max",
                }
            }
        )
    )


def claude_login_env(home: Path, project: Path, api_url: str) -> dict:
    """`claude_env` on a subscription login instead of a key: no ANTHROPIC_* variable at all."""
    env = {k: v for k, v in claude_env(home, project, api_url).items() if not k.startswith("ANTHROPIC_")}
    claude_login(home, api_url)
    return env


OPENCODE_MODEL = "claude-sonnet-4-5"  # what the recordings ran (the tests pass CLAUDE_MODEL)
OPENCODE_IDLE = r"ctrl\+p commands"  # its footer at the prompt (busy: "esc interrupt")


def opencode_bin() -> str:
    path = AGENTS / ".bin" / "opencode"
    require(path.exists(), f"OpenCode is not installed (run: npm install --prefix {AGENTS.parent})")
    return str(path)


def opencode_env(base: Path, api_url: str, model: str = OPENCODE_MODEL) -> tuple[dict, Path]:
    """(env, project): a private HOME, XDG dirs and TMPDIR under `base` where OpenCode uses
    `anthropic/<model>` at `api_url` (opencode.json) and fetches and installs nothing, and an
    empty git repository as its project."""
    home, proj = base / "home", base / "proj"
    dirs = {name: base / name.lower() for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "TMPDIR")}
    for d in (home, proj, *dirs.values()):
        d.mkdir(parents=True, exist_ok=True)
    config = dirs["XDG_CONFIG_HOME"] / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    (config / "opencode.json").write_text(
        json.dumps(
            {
                "$schema": "https://opencode.ai/config.json",
                "model": f"anthropic/{model}",
                "small_model": f"anthropic/{model}",
                "autoupdate": False,
                "share": "disabled",
                "provider": {"anthropic": {"options": {"baseURL": f"{api_url}/v1", "apiKey": "fake-key"}}},
            },
            indent=2,
        )
    )
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env = {
        **keep,
        "HOME": str(home),
        **{k: str(v) for k, v in dirs.items()},
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "ANTHROPIC_API_KEY": "fake-key",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "npm_config_registry": "http://127.0.0.1:9/",  # nothing listens: no plugin installs
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
    }
    return env, proj


class Screen:
    """A supervised program in a PTY, with its screen kept by an emulator."""

    def __init__(self, args: list[str], env: dict, cwd: Path, cols: int = 120, rows: int = 40, supervise: list[str] | None = None):
        command = supervise or SUPERVISE
        self.child = pexpect.spawn(
            command[0],
            [*command[1:], *args],
            env=env,
            cwd=str(cwd),
            dimensions=(rows, cols),
            encoding="utf-8",
            codec_errors="replace",
            timeout=30,
        )
        self.vt = avt.Vt(cols, rows)
        self.raw = []

    def pump(self, timeout: float = 0.1) -> None:
        try:
            while True:
                data = self.child.read_nonblocking(65536, timeout=timeout)
                self.raw.append(data)
                self.vt.feed_str(data)
                timeout = 0.02
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            pass

    def text(self) -> str:
        """The main screen's lines (with what scrolled off), then the screen as shown: the
        alternate one while a program draws there (Claude Code 2.1.330's fullscreen UI)."""
        main = "\n".join(line.rstrip() for line in self.vt.text())
        return main + "\n" + "\n".join(line.text.rstrip() for line in self.vt.view())

    def wait(self, pattern: str, timeout: float = 30.0) -> re.Match:
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            self.pump()
            m = rx.search(self.text())
            if m:
                return m
            if not self.child.isalive():
                self.pump()
                m = rx.search(self.text())
                if m:
                    return m
                break
        raise AssertionError(f"screen never showed {pattern!r} {self.state()}; it shows:\n{self.text()[-3000:]}")

    def state(self) -> str:
        """Whether the program still runs and what it wrote last: a blank screen says neither."""
        written = "".join(self.raw)
        alive = "running" if self.child.isalive() else f"ended ({self.child.exitstatus or self.child.signalstatus})"
        return f"(supervise {alive}, {len(written)} characters written, the last: {written[-300:]!r})"

    def shown(self) -> str:
        """The screen as shown now (the alternate one while a program draws there), no scrollback."""
        return "\n".join(line.text.rstrip() for line in self.vt.view())

    def hold(self, seconds: float) -> None:
        """Keep reading the screen for `seconds` (a spinner keeps `pump` from waiting that long)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.pump(0.2)

    def wait_shown(self, pattern: str | re.Pattern, timeout: float = 30.0) -> re.Match:
        """Until the screen as shown (not its scrollback) matches `pattern`."""
        deadline = time.monotonic() + timeout
        rx = re.compile(pattern)
        while time.monotonic() < deadline:
            self.pump(0.2)
            m = rx.search(self.shown())
            if m:
                return m
        raise AssertionError(f"screen never showed {rx.pattern!r}; it shows:\n{self.shown()}")

    def settled(self, idle: Callable[[str], object], timeout: float = 60.0, settle: float = 1.0) -> None:
        """Until `idle(what is shown)` holds for `settle` seconds on end."""
        deadline = time.monotonic() + timeout
        since = None
        while time.monotonic() < deadline:
            self.pump(0.2)
            if idle(self.shown()):
                since = since or time.monotonic()
                if time.monotonic() - since >= settle:
                    return
            else:
                since = None
        raise AssertionError(f"never idle; the screen shows:\n{self.shown()}")

    def type(self, text: str, enter: bool = True) -> None:
        """Text first, Enter on its own a moment later (an Enter inside a burst is taken as paste)."""
        self.child.send(text)
        self.pump(0.4)
        if enter:
            self.child.send("\r")
            self.pump(0.1)

    def type_keys(self, text: str) -> None:
        """Key by key, as a person types (an agent may take a burst for a paste), then Enter."""
        for ch in text:
            self.child.send(ch)
            self.pump(0.03)
        self.pump(0.4)
        self.child.send("\r")

    def quit_with_ctrl_c(self) -> None:
        """Ctrl-C, and once more if it is still running (the first may only clear its input), then closed."""
        self.child.sendcontrol("c")
        time.sleep(0.5)
        if self.child.isalive():
            self.child.sendcontrol("c")
        self.close()

    def close(self) -> int | None:
        deadline = time.monotonic() + 15
        while self.child.isalive() and time.monotonic() < deadline:
            self.pump()
        self.child.close(force=True)
        return self.child.exitstatus


def send_turn(kit, screen: Screen, text: str) -> None:
    """Type a user's turn into the agent of `kit` and send it: key by key where its kit says
    so (an agent that takes a burst for a paste), else as a burst, Enter a moment later."""
    if hasattr(kit, "typed"):
        kit.typed(screen, text)
        screen.pump(0.4)
        screen.child.send("\r")
    else:
        screen.type(text)
