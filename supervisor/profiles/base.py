"""What a profile says about an agent CLI beyond its pattern file, and what an agent with no
profile module gets: its name, and nothing done for it in particular."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from . import hook


def without_options(argv: list[str], valued: tuple[str, ...] = (), flags: tuple[str, ...] = ()) -> list[str]:
    """`argv` without the options named (those a resumed run's own replace): each of `valued`
    with its value (`--x V`, `--x=V`; a next word that is an option is no value), each of
    `flags` alone."""
    out, rest = argv[:1], list(argv[1:])
    while rest:
        arg = rest.pop(0)
        name = arg.split("=", 1)[0]
        if name in valued:
            if "=" not in arg and rest and not rest[0].startswith("-"):
                rest.pop(0)
        elif arg not in flags:
            out.append(arg)
    return out


@dataclass(frozen=True)
class Resumed:
    """How an agent's session is carried on by `supervise resume`."""

    argv: list[str]
    inject: str | None = None  # the injection mode it needs when the user gives none (None: as it was run)
    note: str | None = None  # a line for the user before it starts


@dataclass(frozen=True)
class Hooked:
    """An agent that asks for its context itself (a hook of its own): its command line and
    environment for this run."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[Path, str] = field(default_factory=dict)  # to be written (private) before it starts
    door_file: Path | None = None  # a file it reads before each request, which supervise writes the context into


@dataclass(frozen=True)
class DoorInstall:
    """An agent whose door is read from its own configuration only: supervise's folder that
    holds the door (an extension), and the agent's own commands that add it and take it out
    (`supervise hooks install` / `uninstall`)."""

    files: dict[Path, str]  # the door's files, in supervise's own folder
    install: list[str]
    uninstall: list[str]
    env: dict[str, str] = field(default_factory=dict)  # for those commands, over the user's own
    exists: str | None = None  # what its install answers (a regex) when it has one of that name
    absent: str | None = None  # what its uninstall answers (a regex) when it has none


@dataclass(frozen=True)
class McpServer:
    """supervise's MCP server, as an agent's MCP configuration starts it (stdio)."""

    name: str
    command: str
    args: tuple[str, ...]
    env: dict[str, str]  # what it needs of supervise's environment (an agent may pass it no other)
    tools: tuple[str, ...]  # all read-only: an agent may run them without asking


ASK_JS = Path(__file__).with_name("supervise-ask.js")  # how a door in JavaScript asks supervise


def js_door(path: Path, door: Path) -> dict[Path, str]:
    """The files of a door in JavaScript (`door`'s text at `path`), with the module it asks
    supervise by beside it."""
    return {path: door.read_text(encoding="utf-8"), path.with_name(ASK_JS.name): ASK_JS.read_text(encoding="utf-8")}


def by_session_or_continue(argv: list[str], session: Mapping, fresh: bool, without: Callable[[list[str]], list[str]]) -> Resumed:
    """For an agent whose `--session ID` carries its own session on and whose `--continue`
    opens the folder's latest one (when none was read); `without` strips the options the
    resumed run's replace."""
    argv = without(argv)
    if fresh:
        return Resumed(argv)
    if session.get("agent_session_id"):
        return Resumed([argv[0], "--session", session["agent_session_id"], *argv[1:]])
    return Resumed([argv[0], "--continue", *argv[1:]])


class Profile:
    """An agent CLI as supervise knows it. The data (how it is recognised, its patterns, its
    one-shot flags) is its pattern file's; a subclass in `supervisor/profiles/NAME` adds what
    data cannot say. Every method's default is what a plain terminal program gets."""

    # Its own record of the conversation (a module with the transcript reader's functions:
    # folder, SOURCE, locate, claims, user_text, compaction, session_id, timestamp,
    # user_messages, as_lines), or None.
    transcript: ModuleType | None = None
    # Its headless summary backend (a module: LABEL, HELP, NEEDS, ask; UNABLE when it cannot), or None.
    summary: ModuleType | None = None
    # Seconds `CMD --version` may take, and what keeps it (and `--help`) from looking for
    # updates or phoning home.
    version_timeout: float = 5.0
    quiet_env: Mapping[str, str] = {}
    # Its own door for the context (a hook, a plugin, an extension), in a few words for the
    # README's table and `doctor`; None: the context is typed at its prompt.
    door: str | None = None
    # Its door (a hook) asks only as a turn of the user's starts, and cannot say it is open
    # before: taken for open from the start of a run given it (nothing typed meanwhile).
    door_at_prompt: bool = False
    # One of supervise's own (its coding agent), not a CLI installed beside it.
    own: bool = False
    # Among the agents that can summarize, the order `auto` tries them in (lower first).
    summary_rank: int = 100
    # Why it is not given supervise's MCP server for a run (None: it is, by `with_mcp`).
    mcp_note: str | None = "it has no MCP configuration of its own for one run"
    # Why `mcp_add` gives no command, where `mcp_note` does not say it (`supervise mcp install`).
    mcp_add_note: str | None = None
    # What its `mcp add` answers (a regex) when its config has a server of that name already.
    mcp_add_exists: str | None = None

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<profile {self.name}>"

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        """The command line that carries `session` on (`fresh`: its own conversation anew)."""
        return Resumed(argv)

    def hooks(self, argv: list[str]) -> bool:
        """Whether, run as `argv`, it asks for its context through a hook of its own."""
        return False

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked | None:
        """The command line and environment that give it our hook, asking over `socket`
        (files it needs go in the session's private `folder`); `at_start`: it has something
        to be given as it starts (a resumed session's context, a brief); `env`: the agent's
        environment as it is. None: no door this run (the context is typed)."""
        return Hooked(argv)

    def door_here(self, env: Mapping[str, str]) -> str | None:
        """Its door as `env` has it (`doctor`): `door`, unless it must be installed and is not."""
        return self.door

    def door_install(self, folder: Path) -> DoorInstall | None:
        """Its door as installed in its own configuration from supervise's `folder`, for an
        agent whose door cannot be given for one run; None: given per run, or none."""
        return None

    def with_mcp(self, argv: list[str], folder: Path, server: McpServer, env: Mapping[str, str]) -> Hooked | None:
        """The command line, environment and files that give it `server` for this run only
        (`env`: the agent's environment as it is), its tools allowed without a dialog; None
        when it cannot be given one (`mcp_note`)."""
        return None

    def mcp_add(self, server: McpServer) -> list[str] | None:
        """Its own command that adds `server` to its own configuration (`supervise mcp install`)."""
        return None

    def hook_command(self) -> str | None:
        """The shell command its hook runs, if it has one (`supervise doctor` runs it as the
        agent would, with `hook_request()` on stdin and `hook_env(socket)`, where a context
        waits as the request's source `doctor`: it must print `hook_reply(context)`)."""
        return None

    def hook_env(self, socket: str) -> dict[str, str]:
        return {}

    def hook_reply(self, context: str) -> str:
        return context

    def hook_request(self) -> str:
        return "{}"

    def transcript_dir(self, env: Mapping[str, str], cwd: str) -> Path | None:
        """The folder its transcript files for a session in `cwd` are written to."""
        return self.transcript.folder(env, cwd) if self.transcript else None


class HookScript(Profile):
    """An agent whose door is a hook that runs a command and reads `additionalContext` from
    its output: the shared hook script (hook.py) is that command."""

    def hook_command(self) -> str | None:
        return hook.command()

    def hook_env(self, socket: str) -> dict[str, str]:
        return {hook.SOCKET_ENV: socket}

    def hook_reply(self, context: str) -> str:
        return hook.output(context)

    def hook_request(self) -> str:
        return '{"hook_event_name": "SessionStart", "source": "doctor"}'
