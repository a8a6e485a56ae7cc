"""One place for settings. A flag wins over an environment variable, which wins over the
config file (`~/.config/supervise/config.toml`, or `$SUPERVISE_CONFIG/config.toml`), which
wins over the default here. `load()` resolves them once into a frozen `Settings` that is
passed down; nothing else reads the environment for a setting. What each key and variable
must be is said once, in configcheck.py, which checks them all before they are read here.

The recorder process loads its own from the environment it inherits (the API key must not
travel on a command line, where `ps` shows it).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .errors import SuperviseError
from .paths import user_dir
from .valueforms import is_local_url

DEFAULT_MODEL = "claude-haiku-4-5"
# The backends that are no agent CLI's: `auto` chooses, the API, and no model at all.
BUILT_IN_BACKENDS = ("auto", "api", "heuristic")
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
    # An agent CLI backend's own model, by its key (`[summary] NAME_model`, or the variable
    # SUPERVISE_SUMMARY_NAME_MODEL); which keys there are, its profile says (MODEL_KEY).
    cli_models: Mapping[str, str] = field(default_factory=dict)
    base_url: str | None = None
    api_key: str | None = None
    auth_token: str | None = None
    # The base URL is supervise's own setting, not the agents' ANTHROPIC_BASE_URL (which may
    # be a local proxy that wants the agent's own login).
    own_base_url: bool = False
    timeout: float = 60.0
    max_retries: int = 2
    budget: int = DEFAULT_BUDGET

    @property
    def has_key(self) -> bool:
        return bool(self.api_key or self.auth_token)

    @property
    def local(self) -> bool:
        """Our base URL is a server on this machine (Ollama, LM Studio, llama-server, vLLM
        serve the Messages API): it needs no key, and nothing leaves the machine."""
        return self.own_base_url and is_local_url(self.base_url)

    @property
    def uses_api(self) -> bool:
        """The API can be asked: with a key, or a local server without one."""
        return self.has_key or self.local


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
OTLP_PROTOCOLS = ("http/protobuf", "grpc")
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
class Memory:
    """What an agent is given of earlier sessions (the `[memory]` table)."""

    mcp: bool = True  # supervise's MCP server, for the run's agent (where it has a per-run MCP config)
    brief: bool = False  # a new session starts with a brief of the project's last sessions
    # the MCP server answers for every project, not only its own (an agent's arguments never widen it)
    mcp_all_projects: bool = False
    # an OpenAI-compatible embeddings endpoint (`/v1` or `/v1/embeddings`): search by meaning too
    embeddings: str | None = None
    embeddings_model: str | None = None  # its model's name (most servers need one)
    embeddings_key: str | None = None  # sent as a bearer token, if any


@dataclass(frozen=True)
class Telemetry:
    """Where supervise sends its metrics and events over OTLP (the `[telemetry]` table, or the OTEL_* variables)."""

    endpoint: str | None = None  # the collector's base URL (HTTP: /v1/logs and /v1/metrics are added)
    logs_endpoint: str | None = None  # a signal's own full URL, used as it is
    metrics_endpoint: str | None = None
    protocol: str = "http/protobuf"  # or grpc (with the gRPC exporter installed)
    headers: str = ""  # key=value,key=value, as OTEL_EXPORTER_OTLP_HEADERS
    resource_attributes: str = ""  # key=value,key=value, as OTEL_RESOURCE_ATTRIBUTES
    service_name: str = "supervise"
    export_interval: float = 60.0  # seconds between two exports of the metrics
    timeout: float = 10.0  # seconds an export may take
    content: bool = False  # the user's requests, contexts and text-log lines too (redacted)
    enabled: bool = True  # SUPERVISE_TELEMETRY=off: none of ours, with the variables left for the agents'

    @property
    def on(self) -> bool:
        return self.enabled and bool(self.endpoint or self.logs_endpoint or self.metrics_endpoint)


@dataclass(frozen=True)
class Settings:
    """Every setting, from the config file, the environment and the command line."""

    summary: Summary = Summary()
    notify: Notify = Notify()
    limits: Limits = Limits()
    memory: Memory = Memory()
    telemetry: Telemetry = Telemetry()
    every_seconds: float = 600.0  # a periodic context after this long with new output (0: never)
    every_chars: int = 256 * 1024  # ... or after this much new output (0: never)
    # Each context reads what is new on the GIL the renderer and the detector share: under
    # heavy output the KB trigger alone would fire at every check and delay detection
    # (scripts/bench_detect.py). Not more often than this.
    min_seconds: float = 60.0
    hook_wait: float = 20.0  # how long an agent's hook waits for a context
    recorder_grace: float = 300.0  # how long the recorder may finish after its supervisor is gone
    recorder_priority: str = "0"  # a nice value, or "idle" (SCHED_IDLE)
    template: str | None = None  # the user's context prompt template, if any


# Where a process supervise starts (the recorder) finds the settings its parent resolved: in
# its environment, which only the user can read (a command line is every user's; a notify
# command or a key has no place there).
SETTINGS_ENV = "SUPERVISE_RESOLVED_SETTINGS"


def passed_on(settings: Settings) -> dict[str, str]:
    """The environment that carries the resolved settings to a process `passed_down` reads them in."""
    return {SETTINGS_ENV: json.dumps(asdict(settings))}


def passed_down(env: Mapping[str, str]) -> Settings | None:
    """The settings `passed_on` put in `env`, if any."""
    raw = env.get(SETTINGS_ENV)
    if not raw:
        return None
    data = json.loads(raw)
    summary = Summary(**data["summary"])
    return Settings(
        **{
            **data,
            "summary": summary,
            "notify": Notify(**data["notify"]),
            "limits": Limits(**data["limits"]),
            "memory": Memory(**data["memory"]),
            "telemetry": Telemetry(**data["telemetry"]),
        }
    )


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("SUPERVISE_CONFIG"):
        return Path(env["SUPERVISE_CONFIG"]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]) / "supervise"
    return user_dir("config")


def config_file(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "config.toml"


def load(
    env: Mapping[str, str] | None = None,
    on_limit: str | None = None,
    notify: str | None = None,
    warn: Callable[[str], None] | None = None,
    mcp: bool | None = None,
    brief: bool | None = None,
    mcp_all_projects: bool | None = None,
    **flags,
) -> Settings:
    """The settings in force. `flags`: Summary fields given on the command line (None: not
    given); `on_limit`: --on-limit; `notify`: --notify; `mcp`: --no-mcp; `brief`: --brief;
    `mcp_all_projects`: `supervise mcp --all`. A setting that is wrong (configcheck.py
    says which) raises; `warn` is given each warning's line (an unknown key), if any."""
    from . import configcheck

    flags_on_limit, flags_notify = on_limit, notify
    env = os.environ if env is None else env
    tables, findings = configcheck.read(config_file(env))
    findings += configcheck.check_env(env)
    for finding in findings:
        if finding.level == "error":
            raise finding.error()
    if warn:
        for finding in findings:
            warn(finding.line)
    table, told, limits, memory, sent = (tables.get(name, {}) for name in ("summary", "notify", "limits", "memory", "telemetry"))
    key_env = table.get("api_key_env")
    summary = Summary(
        backend=env.get("SUPERVISE_SUMMARY_BACKEND") or table.get("backend") or "auto",
        model=env.get("SUPERVISE_SUMMARY_MODEL") or table.get("model") or DEFAULT_MODEL,
        cli_models=_cli_models(table, env),
        base_url=env.get("SUPERVISE_SUMMARY_BASE_URL") or table.get("base_url") or env.get("ANTHROPIC_BASE_URL"),
        api_key=env.get("SUPERVISE_SUMMARY_API_KEY") or (env.get(key_env) if key_env else None) or env.get("ANTHROPIC_API_KEY"),
        auth_token=env.get("ANTHROPIC_AUTH_TOKEN"),
        timeout=_number(env, "SUPERVISE_SUMMARY_TIMEOUT", table, "timeout", Summary.timeout),
        budget=int(_number(env, "SUPERVISE_DIGEST_BUDGET", table, "budget", DEFAULT_BUDGET)),
    )
    summary = replace(summary, **{k: v for k, v in flags.items() if v is not None})
    summary = replace(summary, own_base_url=bool(flags.get("base_url") or env.get("SUPERVISE_SUMMARY_BASE_URL") or table.get("base_url")))
    from_env = flags.get("backend") is None and env.get("SUPERVISE_SUMMARY_BACKEND")
    check_backend(summary.backend, "SUPERVISE_SUMMARY_BACKEND" if from_env else None)
    return Settings(
        summary=summary,
        notify=Notify(
            command=env.get("SUPERVISE_NOTIFY_COMMAND") or told.get("command") or None,
            done_after=_number(env, "SUPERVISE_NOTIFY_DONE_AFTER", told, "done_after_seconds", Notify.done_after),
            terminal=configcheck.check_choice(
                flags_notify or env.get("SUPERVISE_NOTIFY") or told.get("terminal") or "off",
                NOTIFY_TERMINAL,
                "--notify",
                "SUPERVISE_NOTIFY or [notify] terminal",
            ),
        ),
        limits=Limits(
            on_limit=configcheck.check_choice(
                flags_on_limit or env.get("SUPERVISE_ON_LIMIT") or limits.get("on_limit") or "notify",
                ON_LIMIT,
                "--on-limit",
                "SUPERVISE_ON_LIMIT or [limits] on_limit",
            ),
            margin=_number(env, "SUPERVISE_LIMIT_MARGIN", limits, "margin_seconds", Limits.margin),
            continue_text=limits.get("continue_text") or Limits.continue_text,
            max_continues=int(limits.get("max_continues") or Limits.max_continues),
        ),
        memory=Memory(
            mcp=_switch(mcp, env, "SUPERVISE_MCP", memory, "mcp", Memory.mcp),
            brief=_switch(brief, env, "SUPERVISE_BRIEF", memory, "brief", Memory.brief),
            mcp_all_projects=_switch(
                mcp_all_projects, env, "SUPERVISE_MCP_ALL_PROJECTS", memory, "mcp_all_projects", Memory.mcp_all_projects
            ),
            embeddings=env.get("SUPERVISE_EMBEDDINGS") or memory.get("embeddings") or None,
            embeddings_model=env.get("SUPERVISE_EMBEDDINGS_MODEL") or memory.get("embeddings_model") or None,
            embeddings_key=env.get("SUPERVISE_EMBEDDINGS_API_KEY") or env.get(memory.get("embeddings_api_key_env") or "") or None,
        ),
        telemetry=_telemetry(env, sent),
        every_seconds=_number(env, "SUPERVISE_SUMMARY_EVERY_MINUTES", {}, "", 10) * 60,
        every_chars=int(_number(env, "SUPERVISE_SUMMARY_EVERY_KB", {}, "", 256) * 1024),
        min_seconds=_number(env, "SUPERVISE_SUMMARY_MIN_SECONDS", {}, "", Settings.min_seconds),
        hook_wait=_number(env, "SUPERVISE_HOOK_WAIT", {}, "", Settings.hook_wait),
        recorder_grace=_number(env, "SUPERVISE_RECORDER_GRACE", {}, "", Settings.recorder_grace),
        recorder_priority=env.get("SUPERVISE_RECORDER_PRIORITY") or Settings.recorder_priority,
        template=_template(config_dir(env) / "context_prompt.txt"),
    )


def _telemetry(env: Mapping[str, str], table: Mapping) -> Telemetry:
    """The standard OTEL_* variables (the agents' own exporters read them too), else the table.
    http/json is sent as http/protobuf: a collector's HTTP port takes both."""
    protocol = env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or table.get("protocol") or Telemetry.protocol
    interval, timeout = (env.get(v) for v in ("OTEL_METRIC_EXPORT_INTERVAL", "OTEL_EXPORTER_OTLP_TIMEOUT"))  # milliseconds
    return Telemetry(
        endpoint=env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or table.get("endpoint") or None,
        logs_endpoint=env.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") or None,
        metrics_endpoint=env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or None,
        protocol="http/protobuf" if protocol == "http/json" else protocol,
        headers=env.get("OTEL_EXPORTER_OTLP_HEADERS") or table.get("headers") or "",
        resource_attributes=env.get("OTEL_RESOURCE_ATTRIBUTES") or table.get("resource_attributes") or "",
        service_name=env.get("OTEL_SERVICE_NAME") or table.get("service_name") or Telemetry.service_name,
        export_interval=float(interval) / 1000 if interval else float(table.get("export_interval_seconds", Telemetry.export_interval)),
        timeout=float(timeout) / 1000 if timeout else float(table.get("timeout_seconds", Telemetry.timeout)),
        content=_switch(None, env, "SUPERVISE_TELEMETRY_CONTENT", table, "content", Telemetry.content),
        enabled=(env.get("OTEL_SDK_DISABLED") or "").strip().lower() != "true" and _switch(None, env, "SUPERVISE_TELEMETRY", {}, "", True),
    )


def _switch(flag: bool | None, env: Mapping[str, str], var: str, table: Mapping, key: str, default: bool) -> bool:
    """A switch: the flag, else the variable (checked by configcheck), else the file, else the default."""
    from .configcheck import SWITCH_WORDS

    if flag is not None:
        return flag
    if env.get(var):
        return SWITCH_WORDS[env[var].strip().lower()]
    return bool(table.get(key, default))


def _number(env: Mapping[str, str], var: str, table: Mapping, key: str, default: float) -> float:
    """The variable if set, else the table's key if there, else the default (0 is a value).
    Both were checked by configcheck."""
    if env.get(var):
        return float(env[var])
    return float(table[key]) if key in table else float(default)


def _template(path: Path) -> str | None:
    """The user's context prompt template, if there is one."""
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        from .plaintext import plain

        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise SuperviseError(
            f"cannot read {plain(str(path), newlines=False)}: {why}", "make it a readable UTF-8 file, or move it aside", exit_code=2
        ) from None


def to_stderr(line: str) -> None:
    """`load`'s `warn` for a command the user runs: the warning on stderr."""
    print(line, file=sys.stderr)


def _cli_models(table: Mapping, env: Mapping[str, str]) -> dict[str, str]:
    """Every `NAME_model` of [summary], its variable winning (read as text: the profiles, and
    what each key must be, are not needed to start an agent; configcheck knows them)."""
    found = {k: v for k, v in table.items() if k.endswith("_model") and k != "model" and isinstance(v, str) and v}
    prefix = "SUPERVISE_SUMMARY_"
    for var, value in env.items():
        if var.startswith(prefix) and var.endswith("_MODEL") and var != "SUPERVISE_SUMMARY_MODEL" and value:
            found[var[len(prefix) :].lower()] = value
    return found


def backends() -> tuple[str, ...]:
    """Who can make a session context: `auto` picks one per session (contexts/backends/choose.py);
    `api` is the Anthropic API with a key; each agent CLI whose profile has a summary backend
    runs headless on the user's own login (one that cannot summarize yet says why); `heuristic`
    never calls a model."""
    from . import profiles

    return (*BUILT_IN_BACKENDS[:2], *(p.name for p in profiles.summarizers()), BUILT_IN_BACKENDS[2])


def cli_model_settings() -> dict[str, str]:
    """The agent CLI backends' model settings: each key in [summary] -> its default."""
    from . import profiles

    backends = [p.summary for p in profiles.summarizers() if p.summary is not None]
    return {b.MODEL_KEY: b.DEFAULT_MODEL for b in backends if getattr(b, "MODEL_KEY", None)}


def check_backend(name: str, source: str | None = None) -> str:
    """`source`: the variable it came from, if not a flag or the (checked) file."""
    from .plaintext import plain

    if name in BUILT_IN_BACKENDS:  # (the agent CLIs' are their profiles': loaded only when named)
        return name
    known = backends()
    if name not in known:
        raise SuperviseError(
            f"unknown summary backend '{plain(name, newlines=False)}'{' in ' + source if source else ''}",
            f"use one of: {', '.join(known)} (--summary-backend, SUPERVISE_SUMMARY_BACKEND or [summary] backend)",
            exit_code=2,
        )
    return name
