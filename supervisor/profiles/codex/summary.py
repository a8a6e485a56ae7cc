"""Codex CLI headless on the user's own login: `codex exec` with our instructions in place of
Codex's, the context schema as its output schema, nothing saved, no tools.

supervise never reads or sends the login's token itself: Codex does, from its own CODEX_HOME,
as it would for the user. How it is run, and why (observed with Codex CLI 0.169.0 on a ChatGPT
login, against a fake Responses API):

    --json                   events as JSON lines: the answer, `turn.failed` with the reason
                             (e.g. "You've hit your usage limit ..."), and the tokens used
    --output-schema FILE     sent as a strict `json_schema` text format: every property
                             required and `additionalProperties: false` (the context schema plus that)
    -c model_instructions_file=FILE
                             ours replace Codex's base instructions (~20,000 characters)
    --ephemeral              no rollout file: the call is not a session, and not in `codex resume`
    --sandbox read-only, --skip-git-repo-check
                             it runs in a private empty folder (headless.run), never a project,
                             so no project AGENTS.md or .codex/ config is read
    --disable FEATURE ...    the tools it would offer (shell, code mode, images, browser, goals,
                             sleep), the user's hooks, ChatGPT apps (an MCP connection to
                             chatgpt.com), plugins, memories, and request compression (zstd: a
                             summary is ~30 KB, and a plain body can be checked)
    -c include_*_instructions=false, skills.include_instructions=false
                             no skills list, permissions, apps or collaboration-mode text, and no
                             environment context (the private folder, the date, the shell)
    -c analytics.enabled=false, check_for_update_on_startup=false
                             no calls besides the summary's own
    -c mcp_servers.NAME.enabled=false
                             for each MCP server in the user's config.toml: none is started
                             (`-c mcp_servers={}` does not clear them). `-c` splits its path at
                             every dot, quoted or not: a server whose name is not a bare key
                             cannot be switched off, so the backend does not run at all then
    -m, model_reasoning_effort
                             a small model (`codex_model`, see MODEL_KEY) at low effort

What cannot be turned off (0.169.0): the user's global `$CODEX_HOME/AGENTS.md` still reaches
the model as a user message (`project_doc_max_bytes` only limits project files), and models
whose catalog entry says `multi_agent_version: v2` (the current ones) still get the
`<multi_agent_role>` instructions and the collaboration tools (spawn_agent, ...) whatever the
feature flags say. Our instructions tell the model to call no tool, and an answer in which it
did is not used. `supervise doctor` says so.

It reports tokens (`turn.completed.usage`) but no cost: a login's use is not priced per call.
"""

from __future__ import annotations

import json
import re
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path

from .. import headless
from ..headless import DROPPED_ENV, Answer, Failed, Settings, first_line as _line, whole as _int

LABEL = "codex exec"
LOGIN = "`codex login`"
# Its model, set with `codex_model` under [summary] (or SUPERVISE_SUMMARY_CODEX_MODEL). On a
# ChatGPT login: the small model 0.169.0 lists ("Fast and affordable model for easier tasks"),
# with no upgrade offered over it.
MODEL_KEY = "codex_model"
DEFAULT_MODEL = "gpt-6-luna"
HELP = ["exec", "--help"]
NEEDS = ("--output-schema", "--ephemeral", "--json", "--skip-git-repo-check", "--disable")
NO_TOOLS = "Answer with the JSON object only. Do not call any tool, function or agent: everything you need is in the message."
FEATURES_OFF = (
    "shell_tool",
    "unified_exec",
    "code_mode_host",
    "view_image",
    "image_generation",
    "browser_use",
    "computer_use",
    "goals",
    "sleep_tool",
    "tool_suggest",
    "skill_search",
    "multi_agent",
    "multi_agent_v2",
    "hooks",
    "apps",
    "plugins",
    "memories",
    "enable_request_compression",
)
SETTINGS_OFF = (
    "include_apps_instructions",
    "include_collaboration_mode_instructions",
    "include_environment_context",
    "include_permissions_instructions",
    "skills.include_instructions",
    "analytics.enabled",
    "check_for_update_on_startup",
)
# What cannot be kept out, for `supervise doctor`.
CAVEAT = "its global AGENTS.md and multi-agent instructions still reach the model"
# Items an answer may hold; any other (a command run, a tool or agent called) means a tool was used.
ANSWER_ITEMS = {"agent_message", "reasoning", "error"}
# Codex's own log lines on stderr (a timestamp first), and its warning about helper binaries.
BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
NOISE = re.compile(r"^\d{4}-\d\d-\d\dT\S+\s+(?:ERROR|WARN|INFO|DEBUG|TRACE)\b|^WARNING: proceeding, even though")


def strict(schema: dict) -> dict:
    """The context schema as its strict structured output needs it."""
    return {**schema, "additionalProperties": False}


def model(cfg: Settings) -> str:
    return cfg.cli_models.get(MODEL_KEY) or DEFAULT_MODEL


def command(executable: str, folder: Path, cfg: Settings, mcp_servers: list[str]) -> list[str]:
    argv = [
        executable,
        "exec",
        "--json",
        "--ephemeral",
        "--skip-git-repo-check",
        "--sandbox",
        "read-only",
        "-m",
        model(cfg),
        "-c",
        'model_reasoning_effort="low"',
        "-c",
        f"model_instructions_file={json.dumps(str(folder / 'instructions.md'))}",
        "--output-schema",
        str(folder / "schema.json"),
    ]
    for feature in FEATURES_OFF:
        argv += ["--disable", feature]
    for setting in SETTINGS_OFF:
        argv += ["-c", f"{setting}=false"]
    for name in mcp_servers:
        argv += ["-c", f"mcp_servers.{name}.enabled=false"]
    return [*argv, "-"]  # the input on stdin


def codex_home(env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else Path(env.get("HOME") or "~").expanduser() / ".codex"


def mcp_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP servers the user's config.toml names (to switch each off); none if unreadable."""
    try:
        servers = tomllib.loads((codex_home(env) / "config.toml").read_text()).get("mcp_servers")
    except (OSError, ValueError):
        return []
    return sorted(servers) if isinstance(servers, dict) else []


def environment(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k not in DROPPED_ENV}


def ask(text: str, system: str, schema: dict, cfg: Settings, ends: float, executable: str, env: Mapping[str, str]) -> Answer:
    servers = mcp_servers(env)
    odd = [name for name in servers if not BARE_KEY.fullmatch(name)]
    if odd:
        raise Failed(
            f"{LABEL} not run: the MCP server {odd[0]!r} in {codex_home(env) / 'config.toml'} cannot be switched off "
            "for a summary (`-c` cannot name it); rename it to letters, digits, - and _"
        )
    with tempfile.TemporaryDirectory(prefix="supervise-codex-") as folder:
        (Path(folder) / "instructions.md").write_text(f"{system}\n\n{NO_TOOLS}\n", encoding="utf-8")
        (Path(folder) / "schema.json").write_text(json.dumps(strict(schema)), encoding="utf-8")
        argv = command(executable, Path(folder), cfg, servers)
        done = headless.run(argv, text, ends, environment(env), LABEL, cfg.timeout)
    return parse(done.stdout, done.stderr, done.returncode, model(cfg))


def parse(stdout: str, stderr: str, returncode: int, model: str) -> Answer:
    """What `codex exec --json` printed, as an Answer; Failed if the turn failed (a refused
    login, a usage limit, an API error), a tool was used, or it is not Codex's events at all."""
    events = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("type"), str):
            events.append(event)
    said = _said(stderr) or _line(stdout) or "nothing"
    if not any(e["type"] in ("turn.completed", "turn.failed", "error") for e in events):
        if returncode != 0:
            raise Failed(f"{LABEL} failed (exit {returncode}): {said}")
        raise Failed(f"{LABEL} printed no JSON events: {said}")
    failed = next((e for e in events if e["type"] == "turn.failed"), None)
    done = next((e for e in reversed(events) if e["type"] == "turn.completed"), None)
    if failed is not None or done is None or returncode != 0:
        # e.g. "You've hit your usage limit. ... try again at 11:33 AM.", "stream disconnected ..."
        errors = [e.get("message") for e in events if e["type"] == "error" and isinstance(e.get("message"), str)]
        reason = _message(failed) or (errors[-1] if errors else "") or said
        raise Failed(f"{LABEL} failed: {_line(reason)}")
    items = [e["item"] for e in events if e["type"] == "item.completed" and isinstance(e.get("item"), dict)]
    used = sorted({str(i.get("type")) for i in items} - ANSWER_ITEMS)
    if used:
        raise Failed(f"{LABEL}: the model used a tool ({', '.join(used)}); its answer is not used")
    usage = done["usage"] if isinstance(done.get("usage"), dict) else {}
    message = next((i.get("text") for i in reversed(items) if i.get("type") == "agent_message" and isinstance(i.get("text"), str)), "")
    try:
        data = json.loads(message)
    except ValueError:
        data = None
    return Answer(
        data if isinstance(data, dict) else None,
        model,
        _int(usage.get("input_tokens")),  # cached input tokens are part of it
        _int(usage.get("output_tokens")),  # reasoning tokens are part of it
        None,
        missing=f"no JSON object; the model said: {_line(message, 160)}" if message.strip() else "no answer",
    )


def _message(event: dict | None) -> str:
    error = (event or {}).get("error")
    return (error.get("message") or "") if isinstance(error, dict) else ""


def _said(stderr: str) -> str:
    """Codex's own words on stderr, without its log lines."""
    return _line("\n".join(l for l in (stderr or "").splitlines() if not NOISE.match(l.strip())))
