"""One place for settings. A flag wins over an environment variable, which wins over the
config file (`~/.config/supervise/config.toml`, or `$SUPERVISE_CONFIG/config.toml`), which
wins over the default here. `load()` resolves them once into a frozen `Settings` that is
passed down; nothing else reads the environment for a setting.

The recorder process loads its own from the environment it inherits (the API key must not
travel on a command line, where `ps` shows it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import platformdirs

from .errors import SuperviseError

DEFAULT_MODEL = "claude-haiku-4-5"
# For `codex exec` on a ChatGPT login: the small model Codex 0.169.0 lists ("Fast and affordable
# model for easier tasks"), with no upgrade offered over it.
DEFAULT_CODEX_MODEL = "gpt-6-luna"
# Who makes a session context: `auto` picks one per session (see contexts/backends/choose.py);
# `api` is the Anthropic API with a key; `claude` and `codex` run those CLIs headless on the
# user's own login; `gemini` is accepted but its releases so far cannot summarize (the backend
# says why); `heuristic` never calls a model.
BACKENDS = ("auto", "api", "claude", "codex", "gemini", "heuristic")
DEFAULT_BUDGET = 24_000  # tokens of digest
# The terminal emulator that renders the text log (`--emulator`): avt, or pyte (slower).
DEFAULT_EMULATOR = "avt"
# A context made this long before a compaction finished still covers it (the hook, the typed
# channel and the context keeper all use it); a compaction lasting longer than COMPACTION_MAX
# is taken for a missed end.
CONTEXT_FRESH = 120.0
COMPACTION_MAX = 600.0


@dataclass(frozen=True)
class Summary:
    """How session contexts are summarized (the `[summary]` table)."""

    backend: str = "auto"
    model: str = DEFAULT_MODEL
    codex_model: str = DEFAULT_CODEX_MODEL
    base_url: str | None = None
    api_key: str | None = None
    auth_token: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    budget: int = DEFAULT_BUDGET

    @property
    def has_key(self) -> bool:
        return bool(self.api_key or self.auth_token)


@dataclass(frozen=True)
class Notify:
    """Who is told when an agent needs the user (the `[notify]` table)."""

    # a shell command, its placeholders {id} {name} {agent} {state} {reset_at} filled in,
    # each quoted for the shell (so written outside quotes): `notify-send supervise
    # {name}:{state}`, an ntfy or Slack webhook through curl
    command: str | None = None
    done_after: float = 30.0  # "done": waiting at its prompt after working at least this long
    debounce: float = 10.0  # one notice per session and state within this many seconds
    timeout: float = 30.0  # a command still running then is killed
    # also on the user's terminal: off, bell (BEL), or osc (a desktop notification through
    # the terminal: OSC 9, or OSC 777 for the rxvt line)
    terminal: str = "off"


ON_LIMIT = ("notify", "wait", "off")
NOTIFY_TERMINAL = ("bell", "osc", "off")


@dataclass(frozen=True)
class Limits:
    """What to do when the agent hits a usage limit (the `[limits]` table)."""

    # notify: an event, a notice, the state in `ps`; wait: also type a continue once the
    # limit has reset; off: nothing beyond the event
    on_limit: str = "notify"
    margin: float = 60.0  # seconds after the reset before the continue is typed
    continue_text: str = "continue"
    max_continues: int = 5  # per session


@dataclass(frozen=True)
class Settings:
    summary: Summary = Summary()
    notify: Notify = Notify()
    limits: Limits = Limits()
    every_seconds: float = 600.0  # a periodic context after this long with new output (0: never)
    every_chars: int = 256 * 1024  # ... or after this much new output (0: never)
    # Each context reads what is new on the GIL the renderer and the detector share: under
    # heavy output the KB trigger alone fired at every check (5 s) and detection lagged by up
    # to a second (scripts/bench_detect.py). Not more often than this.
    min_seconds: float = 60.0
    hook_wait: float = 20.0  # how long Claude Code's SessionStart hook waits for a context
    recorder_grace: float = 300.0  # how long the recorder may finish after its supervisor is gone
    recorder_priority: str = "0"  # a nice value, or "idle" (SCHED_IDLE)
    template: str | None = None  # the user's context prompt template, if any


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("SUPERVISE_CONFIG"):
        return Path(env["SUPERVISE_CONFIG"]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]) / "supervise"
    return Path(platformdirs.user_config_dir("supervise", appauthor=False))


def config_file(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "config.toml"


def _tables(path: Path) -> dict:
    """The config file's tables; none if it is missing or unreadable. The TOML parser is
    loaded only when there is a file (8 ms of every command otherwise)."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def load(env: Mapping[str, str] | None = None, on_limit: str | None = None, notify: str | None = None, **flags) -> Settings:
    """The settings in force. `flags`: Summary fields given on the command line (None: not
    given); `on_limit`: --on-limit; `notify`: --notify."""
    flags_on_limit, flags_notify = on_limit, notify
    env = os.environ if env is None else env
    tables = _tables(config_file(env))
    table = tables.get("summary", {})
    told = tables.get("notify", {})
    limits = tables.get("limits", {})
    key_env = table.get("api_key_env")
    summary = Summary(
        backend=env.get("SUPERVISE_SUMMARY_BACKEND") or table.get("backend") or "auto",
        model=env.get("SUPERVISE_SUMMARY_MODEL") or table.get("model") or DEFAULT_MODEL,
        codex_model=env.get("SUPERVISE_SUMMARY_CODEX_MODEL") or table.get("codex_model") or DEFAULT_CODEX_MODEL,
        base_url=env.get("SUPERVISE_SUMMARY_BASE_URL") or table.get("base_url") or env.get("ANTHROPIC_BASE_URL"),
        api_key=env.get("SUPERVISE_SUMMARY_API_KEY") or (env.get(key_env) if key_env else None) or env.get("ANTHROPIC_API_KEY"),
        auth_token=env.get("ANTHROPIC_AUTH_TOKEN"),
        timeout=float(env.get("SUPERVISE_SUMMARY_TIMEOUT") or table.get("timeout") or 60.0),
        budget=int(env.get("SUPERVISE_DIGEST_BUDGET") or table.get("budget") or DEFAULT_BUDGET),
    )
    summary = replace(summary, **{k: v for k, v in flags.items() if v is not None})
    check_backend(summary.backend)
    template_path = config_dir(env) / "context_prompt.txt"
    return Settings(
        summary=summary,
        notify=Notify(
            command=env.get("SUPERVISE_NOTIFY_COMMAND") or told.get("command") or None,
            done_after=float(env.get("SUPERVISE_NOTIFY_DONE_AFTER") or told.get("done_after_seconds") or 30.0),
            terminal=check_choice(flags_notify or env.get("SUPERVISE_NOTIFY") or told.get("terminal") or "off",
                                  NOTIFY_TERMINAL, "--notify", "SUPERVISE_NOTIFY or [notify] terminal"),
        ),
        limits=Limits(
            on_limit=check_choice(flags_on_limit or env.get("SUPERVISE_ON_LIMIT") or limits.get("on_limit") or "notify",
                                  ON_LIMIT, "--on-limit", "SUPERVISE_ON_LIMIT or [limits] on_limit"),
            margin=float(env.get("SUPERVISE_LIMIT_MARGIN") or limits.get("margin_seconds") or 60.0),
            continue_text=str(limits.get("continue_text") or "continue"),
            max_continues=int(limits.get("max_continues") or 5),
        ),
        every_seconds=float(env.get("SUPERVISE_SUMMARY_EVERY_MINUTES", "10")) * 60,
        every_chars=int(float(env.get("SUPERVISE_SUMMARY_EVERY_KB", "256")) * 1024),
        min_seconds=float(env.get("SUPERVISE_SUMMARY_MIN_SECONDS", "60")),
        hook_wait=float(env.get("SUPERVISE_HOOK_WAIT", "20")),
        recorder_grace=float(env.get("SUPERVISE_RECORDER_GRACE", "300")),
        recorder_priority=env.get("SUPERVISE_RECORDER_PRIORITY", "0"),
        template=template_path.read_text(encoding="utf-8") if template_path.is_file() else None,
    )


def check_backend(name: str) -> str:
    if name not in BACKENDS:
        raise SuperviseError(f"unknown summary backend '{name}'",
                             f"use one of: {', '.join(BACKENDS)} (--summary-backend, SUPERVISE_SUMMARY_BACKEND or [summary] backend)",
                             exit_code=2)
    return name


def check_choice(name: str, choices: tuple[str, ...], flag: str, elsewhere: str) -> str:
    if name not in choices:
        raise SuperviseError(f"unknown {flag} '{name}'", f"use one of: {', '.join(choices)} ({flag}, {elsewhere})", exit_code=2)
    return name
