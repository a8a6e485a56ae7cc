"""Checking the settings before they are used: config.toml's tables and keys, and the
environment variables, against one schema (`tables()`, `ENV`: every key, what it must be, an
example). `validate` and `check_env` are plain functions over data that return findings: an
error (a file that does not parse, a wrong type, a value out of range) stops a run; a warning
(an unknown table or key, with the nearest known one) is said and the run goes on.
`config.load` and `supervise doctor` use the same ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from .config import DEFAULT_BUDGET, DEFAULT_MODEL, NOTIFY_TERMINAL, ON_LIMIT, OTLP_PROTOCOLS, backends, cli_model_settings
from .config import Limits, Memory, Notify, Summary, Telemetry
from .errors import SuperviseError
from .plaintext import plain
from .valueforms import pairs_problem, shown as _shown, url_ok


# Plain classes: a dataclass costs a run's start-up most of a millisecond more.
class Finding:
    __slots__ = ("level", "message", "hint")

    def __init__(self, level: str, message: str, hint: str | None = None):
        self.level = level  # error | warning
        self.message = message
        self.hint = hint

    @property
    def line(self) -> str:
        """As the user sees it on stderr."""
        head = "supervise: warning: " if self.level == "warning" else "supervise: "
        return head + self.message + (f" (hint: {self.hint})" if self.hint else "")

    def error(self) -> SuperviseError:
        return SuperviseError(self.message, self.hint, exit_code=2)


class Key:
    """What a value must be. kind: number, whole, text, url, choice, switch (true or false),
    variable (the name of an environment variable), priority (a nice value, or idle), pairs
    (key=value,...) or headers (pairs, secret: never shown); `least`: the smallest value
    allowed; `above`: values must be more than this; `empty_ok`: text where "" means none."""

    __slots__ = ("kind", "example", "unit", "least", "above", "choices", "empty_ok")

    def __init__(
        self,
        kind: str,
        example: object,
        unit: str = "",
        least: float | None = None,
        above: float | None = None,
        choices: tuple[str, ...] = (),
        empty_ok: bool = False,
    ):
        self.kind, self.example, self.unit, self.least, self.above = kind, example, unit, least, above
        self.choices, self.empty_ok = choices, empty_ok


SECONDS = "seconds"


@cache
def tables() -> dict[str, dict[str, Key]]:
    """Every table of config.toml and its keys. Made when a file is first checked: the agent
    CLIs' summary backends and their model keys are their profiles' (loading them is kept off
    the start of a run with no config file)."""
    return {
        "summary": {
            "backend": Key("choice", "auto", choices=backends()),
            "model": Key("text", DEFAULT_MODEL),
            **{key: Key("text", default) for key, default in cli_model_settings().items()},
            "base_url": Key("url", "https://api.anthropic.com"),
            "api_key_env": Key("variable", "MY_ANTHROPIC_KEY"),
            "timeout": Key("number", Summary.timeout, SECONDS, above=0),
            "budget": Key("whole", DEFAULT_BUDGET, "tokens", least=1),
        },
        "notify": {
            "command": Key("text", "notify-send supervise {name}:{state}", empty_ok=True),
            "done_after_seconds": Key("number", Notify.done_after, SECONDS, least=0),
            "terminal": Key("choice", "bell", choices=NOTIFY_TERMINAL),
        },
        "limits": {
            "on_limit": Key("choice", "wait", choices=ON_LIMIT),
            "margin_seconds": Key("number", Limits.margin, SECONDS, least=0),
            "continue_text": Key("text", Limits.continue_text),
            "max_continues": Key("whole", Limits.max_continues, least=1),
        },
        "memory": {
            "mcp": Key("switch", Memory.mcp),
            "brief": Key("switch", True),
            "mcp_all_projects": Key("switch", True),
            "embeddings": Key("url", "http://localhost:11434/v1"),
            "embeddings_model": Key("text", "nomic-embed-text"),
            "embeddings_api_key_env": Key("variable", "MY_EMBEDDINGS_KEY"),
        },
        "telemetry": {
            "endpoint": Key("url", "http://localhost:4318"),
            "protocol": Key("choice", "grpc", choices=OTLP_PROTOCOLS),
            "headers": Key("headers", "authorization=Bearer%20TOKEN", empty_ok=True),
            "resource_attributes": Key("pairs", "deployment.environment.name=dev", empty_ok=True),
            "service_name": Key("text", Telemetry.service_name),
            "export_interval_seconds": Key("number", Telemetry.export_interval, SECONDS, above=0),
            "timeout_seconds": Key("number", Telemetry.timeout, SECONDS, above=0),
            "content": Key("switch", True),
        },
    }


# The variables whose values are read as more than text (SUPERVISE_SUMMARY_BACKEND is
# checked where it is resolved, with the flag).
ENV: dict[str, Key] = {
    "SUPERVISE_SUMMARY_TIMEOUT": Key("number", Summary.timeout, SECONDS, above=0),
    "SUPERVISE_DIGEST_BUDGET": Key("whole", DEFAULT_BUDGET, "tokens", least=1),
    "SUPERVISE_SUMMARY_BASE_URL": Key("url", "https://api.anthropic.com"),
    "SUPERVISE_NOTIFY": Key("choice", "bell", choices=NOTIFY_TERMINAL),
    "SUPERVISE_NOTIFY_DONE_AFTER": Key("number", Notify.done_after, SECONDS, least=0),
    "SUPERVISE_ON_LIMIT": Key("choice", "wait", choices=ON_LIMIT),
    "SUPERVISE_LIMIT_MARGIN": Key("number", Limits.margin, SECONDS, least=0),
    "SUPERVISE_SUMMARY_EVERY_MINUTES": Key("number", 10, "minutes", least=0),
    "SUPERVISE_SUMMARY_EVERY_KB": Key("number", 256, "KB", least=0),
    "SUPERVISE_SUMMARY_MIN_SECONDS": Key("number", 60, SECONDS, least=0),
    "SUPERVISE_HOOK_WAIT": Key("number", 20, SECONDS, least=0),
    "SUPERVISE_RECORDER_GRACE": Key("number", 300, SECONDS, least=0),
    "SUPERVISE_RECORDER_PRIORITY": Key("priority", "idle"),
    "SUPERVISE_MCP": Key("switch", True),
    "SUPERVISE_BRIEF": Key("switch", True),
    "SUPERVISE_MCP_ALL_PROJECTS": Key("switch", True),
    "SUPERVISE_EMBEDDINGS": Key("url", "http://localhost:11434/v1"),
    "SUPERVISE_TELEMETRY": Key("switch", False),
    "SUPERVISE_TELEMETRY_CONTENT": Key("switch", True),
    "OTEL_EXPORTER_OTLP_ENDPOINT": Key("url", "http://localhost:4318"),  # (the SDK reads the other OTEL_* itself)
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": Key("url", "http://localhost:4318/v1/logs"),
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": Key("url", "http://localhost:4318/v1/metrics"),
    "OTEL_EXPORTER_OTLP_PROTOCOL": Key("choice", "grpc", choices=(*OTLP_PROTOCOLS, "http/json")),
    "OTEL_EXPORTER_OTLP_HEADERS": Key("headers", "authorization=Bearer%20TOKEN"),
    "OTEL_RESOURCE_ATTRIBUTES": Key("pairs", "team=parsers"),
    "OTEL_METRIC_EXPORT_INTERVAL": Key("whole", 60000, "milliseconds", least=1),
    "OTEL_EXPORTER_OTLP_TIMEOUT": Key("whole", 10000, "milliseconds", least=1),
}

# A switch's value in a variable, as the words people write it.
SWITCH_WORDS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
AT_LINE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


# -- reading the file (the one effect here) -----------------------------------------------------


def read(path: Path) -> tuple[dict, list[Finding]]:
    """The file's tables and what is wrong in it; nothing if there is no file. The TOML parser
    is loaded only when there is a file (8 ms of every command otherwise)."""
    where = plain(str(path), newlines=False)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}, []
    except NotADirectoryError:
        return {}, [
            Finding(
                "error",
                f"cannot read {where}: {plain(str(path.parent), newlines=False)} is not a directory",
                "SUPERVISE_CONFIG names the folder that holds config.toml, not the file",
            )
        ]
    except IsADirectoryError:
        return {}, [Finding("error", f"cannot read {where}: it is a folder", "config.toml must be a file: move the folder aside")]
    except OSError as exc:
        return {}, [Finding("error", f"cannot read {where}: {exc.strerror or exc}", "make it readable (chmod 600 it), or move it aside")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return {}, [Finding("error", f"{where}: not UTF-8 text at line {line}", "save it as UTF-8")]
    import tomllib

    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return {}, [parse_error(where, str(exc))]
    return parsed, validate(parsed, where)


def parse_error(where: str, said: str) -> Finding:
    """tomllib's `Expected ']' at the end of a table declaration (at line 1, column 8)`, said
    with the line first."""
    m = AT_LINE.search(said)
    what = said[: m.start()] if m else said
    what = what[:1].lower() + what[1:]
    at = f" at line {m.group(1)}, column {m.group(2)}" if m else ""
    fix = f"fix line {m.group(1)}" if m else "fix it"
    return Finding(
        "error",
        f"{where}: not valid TOML{at}: {plain(what, newlines=False)}",
        f'{fix}: TOML has [table] lines and key = value lines, with text in "double quotes"',
    )


# -- the decisions --------------------------------------------------------------------------------


def validate(parsed: Mapping, where: str) -> list[Finding]:
    """Everything wrong in the parsed file `where`, in the file's order."""
    found: list[Finding] = []
    for name, value in parsed.items():
        shown = plain(name, newlines=False)
        if name in tables():
            if not isinstance(value, dict):
                found.append(
                    Finding(
                        "error",
                        f"{where}: {shown} must be a table, not {_shown(value)}",
                        f"write [{shown}] on a line of its own, with its keys below it",
                    )
                )
                continue
            for key, item in value.items():
                found.extend(_check_key(where, name, key, item))
        elif isinstance(value, dict):
            near = _near(name, tables())
            found.append(
                Finding(
                    "warning",
                    f"{where}: unknown table [{shown}], ignored",
                    f"did you mean [{near}]?" if near else f"the tables are {_tables_said()}",
                )
            )
        else:
            home = _table_of(name)
            near = home or next((t for t in tables() if _near(name, tables()[t])), None)
            hint = (
                f"{shown} goes under [{home}]"
                if home
                else f"did you mean [{near}] {_near(name, tables()[near])}?"
                if near
                else f"settings go under {_tables_said()}"
            )
            found.append(Finding("warning", f"{where}: unknown key {shown} at the top of the file, ignored", hint))
    return found


def check_env(env: Mapping[str, str]) -> list[Finding]:
    """Every variable of `ENV` that is set (not empty) to a value it cannot take."""
    found = []
    for var, key in ENV.items():
        raw = env.get(var)
        if not raw:
            continue
        expected = _wrong(key, _from_text(key, raw))
        if expected:
            hint = _hint(key, lambda example: f"e.g. {var}={_text(example)}, or unset it", raw)
            found.append(Finding("error", f"{var} must be {expected}{'' if key.kind == 'headers' else ', not ' + _shown(raw)}", hint))
    return found


def _check_key(where: str, table: str, key: str, value: object) -> list[Finding]:
    known = tables()[table]
    shown = plain(key, newlines=False)
    name = f"[{table}] {shown}"
    if key not in known:
        near = _near(key, known)
        home = _table_of(key)
        hint = (
            "keep the key out of this file: set ANTHROPIC_API_KEY, or name the variable that holds it with api_key_env"
            if key == "api_key"
            else f"did you mean {near}?"
            if near
            else f"{shown} goes under [{home}]"
            if home
            else f"[{table}] takes {', '.join(known)}"
        )
        return [Finding("warning", f"{where}: unknown key {name}, ignored", hint)]
    spec = known[key]
    expected = _wrong(spec, value)
    if not expected:
        return []
    if spec.kind == "variable":  # it may be the key itself: never shown
        return [
            Finding(
                "error", f"{where}: {name} must be {expected}, not a value", f'e.g. {key} = "{spec.example}", with the key in that variable'
            )
        ]
    if spec.kind == "text" and value == "":
        return [Finding("error", f"{where}: {name} must not be empty", f"remove the line to use the default, {_toml(spec.example)}")]
    return [
        Finding(
            "error",
            f"{where}: {name} must be {expected}{'' if spec.kind == 'headers' else ', not ' + _shown(value)}",
            _hint(spec, lambda example: f"e.g. {key} = {_toml(example)}", value),
        )
    ]


def _from_text(key: Key, raw: str) -> object:
    """An environment variable's text as the value it stands for (unchanged if it is none)."""
    if key.kind == "switch":
        return SWITCH_WORDS.get(raw.strip().lower(), raw)
    try:
        if key.kind == "number":
            return float(raw)
        if key.kind == "whole":
            return int(raw)
    except ValueError:
        pass
    return raw


def _wrong(key: Key, value: object) -> str | None:
    """What `value` should have been, or None if it is fine."""
    if key.kind in ("number", "whole"):
        kind = (int, float) if key.kind == "number" else int
        expected = (
            f"a number of {key.unit}" if key.kind == "number" else f"a whole number{' of ' + key.unit if key.unit else ''}"
        ) + _range(key)
        if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value):
            return expected
        if (key.least is not None and value < key.least) or (key.above is not None and value <= key.above):
            return expected
        return None
    if key.kind == "choice":
        return None if value in key.choices else "one of " + ", ".join(key.choices)
    if key.kind == "switch":
        return None if isinstance(value, bool) else "true or false"
    if key.kind == "priority":
        ok = value == "idle" or (isinstance(value, str) and re.fullmatch(r"-?\d+", value) and -20 <= int(value) <= 19)
        return None if ok else "a nice value (a whole number from -20 to 19) or idle"
    if not isinstance(value, str):
        return 'text in "double quotes"'
    if key.kind == "url" and value and not url_ok(value):
        scheme = value.startswith(("http://", "https://"))
        return "an http:// or https:// URL" + (" with a host (and a port from 1 to 65535)" if scheme else "")
    if key.kind in ("pairs", "headers") and value and (wrong := pairs_problem(value, key.kind == "headers")):
        return f"key=value pairs separated by commas ({wrong})"
    if key.kind == "variable" and not VARIABLE.fullmatch(value):
        return "the name of an environment variable (letters, digits and _)"
    if key.kind == "text" and not value and not key.empty_ok:
        return "text"
    return None


def _range(key: Key) -> str:
    if key.above is not None:
        return f", more than {key.above:g}"
    if key.least is not None:
        return f", {key.least:g} or more"
    return ""


def _hint(key: Key, example, value: object) -> str:
    """Did you mean (a near choice), else an example."""
    if key.kind == "choice" and isinstance(value, str):
        near = _near(value, key.choices)
        if near:
            return f"did you mean {near}?"
    return example(key.example)


def _near(word: str, known) -> str | None:
    import difflib

    found = difflib.get_close_matches(str(word).lower(), list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def _table_of(key: str) -> str | None:
    return next((t for t, keys in tables().items() if key in keys), None)


def _tables_said() -> str:
    names = [f"[{t}]" for t in tables()]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return _text(value)


def check_choice(name: str, choices: tuple[str, ...], flag: str, elsewhere: str) -> str:
    if name not in choices:
        raise SuperviseError(
            f"unknown {flag} '{plain(name, newlines=False)}'", f"use one of: {', '.join(choices)} ({flag}, {elsewhere})", exit_code=2
        )
    return name
