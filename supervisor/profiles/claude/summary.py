"""Claude Code headless on the user's own login: `claude -p` with our system prompt, the
context schema as its structured output, nothing saved, no tools.

supervise never reads or sends the login's token itself: Claude Code does, as it would for
the user. How it is run, and why:

    --json-schema            the answer is the schema's object (`structured_output`); Claude
                             Code carries it out as a tool call and checks it against the schema
    --system-prompt          ours replaces Claude Code's, which is ~15,000 tokens per call
    --tools ""               nothing to run, read or fetch: a summary only reads its input
    --no-session-persistence no transcript: the call is not a session, and not in `claude --resume`
    --setting-sources user   the user's own settings only (their login may be configured there:
                             an `env` block, an apiKeyHelper); never a project's, which could run
                             code (hooks, helpers) for a directory nobody trusted for this
    --settings {"disableAllHooks": true}
                             not even the user's hooks: a summary is not a session of theirs
                             (and never our SessionStart hook)
    --strict-mcp-config      no MCP servers started (the user's are configured globally)
    CLAUDE_CODE_DISABLE_CLAUDE_MDS=1
                             the user's ~/.claude/CLAUDE.md stays out of the summary's input
    --bare is not used: it never reads OAuth credentials, the login this backend is for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .. import headless
from ..headless import DROPPED_ENV, Answer, Failed, Settings, first_line as _line, whole as _int
from ..hook import SOCKET_ENV

LABEL = "claude -p"
LOGIN = "`claude`, then /login"
# Not ours to pass on: the supervised session's ids and hook socket.
DROPPED = (*DROPPED_ENV, SOCKET_ENV)
QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
    # No telemetry, update checks or other calls besides the summary's own.
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
}
# What `claude --help` must offer for this backend (older releases lack some).
HELP = ["--help"]
NEEDS = ("--json-schema", "--no-session-persistence", "--system-prompt", "--setting-sources", "--strict-mcp-config")


def command(executable: str, system: str, schema: dict, cfg: Settings) -> list[str]:
    return [
        executable,
        "-p",
        "--model",
        cfg.model,
        "--output-format",
        "json",
        "--json-schema",
        json.dumps(schema),
        "--no-session-persistence",
        "--tools",
        "",
        "--system-prompt",
        system,
        "--setting-sources",
        "user",
        "--settings",
        json.dumps({"disableAllHooks": True}),
        "--strict-mcp-config",
    ]


def environment(env: Mapping[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in env.items() if k not in DROPPED}, **QUIET_ENV}


def model(cfg: Settings) -> str:
    return cfg.model


def ask(text: str, system: str, schema: dict, cfg: Settings, ends: float, executable: str, env: Mapping[str, str]) -> Answer:
    done = headless.run(command(executable, system, schema, cfg), text, ends, environment(env), LABEL, cfg.timeout)
    return parse(done.stdout, done.stderr, done.returncode, cfg.model)


def parse(stdout: str, stderr: str, returncode: int, model: str) -> Answer:
    """What `claude -p --output-format json` printed, as an Answer; Failed if it is an error
    (a refused login, a usage limit, an API error) or not Claude Code's JSON at all."""
    try:
        out = json.loads(stdout)
    except ValueError:
        out = None
    if not isinstance(out, dict) or "is_error" not in out and "result" not in out:
        said = _line(stderr) or _line(stdout) or "nothing"
        if returncode != 0:
            raise Failed(f"{LABEL} failed (exit {returncode}): {said}")
        raise Failed(f"{LABEL} printed no JSON result: {said}")
    result = out["result"] if isinstance(out.get("result"), str) else ""
    if out.get("is_error") or returncode != 0:
        # e.g. "You've hit your 5-hour limit · resets 9:18am (UTC)", "Failed to authenticate. API Error: 401 ..."
        raise Failed(f"{LABEL} failed: {_line(result) or _line(stderr) or out.get('subtype') or f'exit {returncode}'}")
    usage = out["usage"] if isinstance(out.get("usage"), dict) else {}
    used_in = sum(_int(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    cost = out.get("total_cost_usd")
    models = out["modelUsage"] if isinstance(out.get("modelUsage"), dict) else {}
    return Answer(
        out.get("structured_output"),
        next(iter(models), None) or model,
        used_in,
        _int(usage.get("output_tokens")),
        float(cost) if isinstance(cost, (int, float)) else None,
        missing=f"no structured output; the model said: {_line(result, 160)}" if result.strip() else "no structured output",
    )
