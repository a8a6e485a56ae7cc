"""Pattern files: which lines of an agent's screen mean what.

One TOML file per agent (`patterns/*.toml` ship with supervise; files in the user's config
dir and `--patterns FILE` add to or override them, by agent name). A broken file is refused
whole with the file, the pattern and the regex error: a session never starts with half its
patterns.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..config import config_dir
from ..errors import SuperviseError
from . import saferegex

EVENT_KINDS = (
    "compaction_started",
    "compaction_finished",
    "compaction_failed",
    "context_low",
    "context_overflow",
    "idle_prompt",
    "permission_prompt",
    "limit",  # a usage limit reached: the event `limit_reached`, its reset time read from named groups (limits.py)
    "busy",  # not stored: while a busy line is on screen, the agent is not idle
    "user_input",  # not stored: a line of the conversation that is what the user typed
    "user_input_continued",  # not stored: a further line of the same user message
    "tool_output",  # not stored: starts a tool's output drawn like the user's messages (the lines after it are not theirs)
)
# Kinds that describe the screen rather than happen on it: the detector fires no event for them.
STATE_KINDS = ("idle_prompt", "busy", "user_input", "user_input_continued", "tool_output")
USER_KINDS = ("user_input", "user_input_continued")
# A pattern kind whose event is named otherwise: what happened, not what the line is.
EVENT_OF = {"limit": "limit_reached"}
DEFAULT_CONTEXT_LOW_AT = 30  # percent of context left at or below which context_low fires
STATUSES = ("verified", "sourced", "spec")


@dataclass(frozen=True)
class Pattern:
    """One pattern of an agent's pattern file: the event its lines tell."""

    agent: str
    name: str
    event: str
    regex: saferegex.Guarded
    seen_on: str
    status: str

    @property
    def qualified(self) -> str:
        return f"{self.agent}/{self.name}"


@dataclass
class PatternSet:
    """An agent's patterns and the commands it is known by."""

    agent: str
    title: str
    commands: list[str]
    _patterns: list[Pattern] | None  # None: a shipped file's, read when first asked for
    source: Path
    overrides: list[Path] = field(default_factory=list)
    context_low_at: int = DEFAULT_CONTEXT_LOW_AT
    # With one of these on its command line the agent reads its input from stdin when that is
    # not a terminal (a one-shot mode); under supervise it then gets supervise's stdin as such.
    stdin_args: list[str] = field(default_factory=list)

    @property
    def patterns(self) -> list[Pattern]:
        if self._patterns is None:
            self._patterns = load_file(self.source, check=False).patterns
        return self._patterns

    def reads_stdin(self, argv: list[str]) -> bool:
        """Whether this command line has the agent read its input from a stdin that is not a terminal."""
        return bool(set(self.stdin_args) & set(argv[1:]))

    def of(self, *events: str) -> list[Pattern]:
        return [p for p in self.patterns if p.event in events]

    def turned_off(self) -> list[str]:
        """Why each pattern that hit its time limit was turned off."""
        return [p.regex.slow for p in self.patterns if p.regex.slow]


def builtin_dir() -> Path:
    """The shipped pattern files: installed inside the package as `builtin_patterns` (a wheel,
    pipx, `pip install .`), else `patterns/` beside the package (a source checkout or an
    editable install)."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "builtin_patterns"
    if any(packaged.glob("*.toml")):
        return packaged
    return package.parent / "patterns"


def user_dir(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "patterns"


# A file's [agent] table: its header line and the lines up to the next table's.
_AGENT_TABLE = re.compile(r"^\[agent\][ \t]*(?:#.*)?\n(?:(?!\[).*(?:\n|$))*", re.M)


def load_file(path: Path, check: bool = True, whole: bool = True) -> PatternSet:
    """One pattern file. `check`: each regex is checked now (else when first used: the
    shipped files, which the tests and `supervise doctor` check). Not `whole`: its [agent]
    table alone, its patterns read when first asked for (what picks a session's set; parsing
    every shipped file whole was most of the time a session took to choose)."""
    try:
        text = path.read_text(encoding="utf-8")
        table = None if whole or check else _AGENT_TABLE.search(text)
        data = tomllib.loads(table.group() if table else text)
    except OSError as exc:
        raise SuperviseError(f"cannot read pattern file {path}: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SuperviseError(f"pattern file {path} is not valid TOML: {exc}", "fix the file or remove it") from exc
    agent = data.get("agent")
    if not isinstance(agent, dict) or not agent.get("name"):
        raise SuperviseError(f"pattern file {path} has no [agent] table with a name", 'add [agent] name = "..." commands = ["..."]')
    name = str(agent["name"])
    commands = agent.get("commands", [name])
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise SuperviseError(f"pattern file {path}: [agent] commands must be a list of strings")
    stdin_args = agent.get("stdin_args", [])
    if not isinstance(stdin_args, list) or not all(isinstance(a, str) for a in stdin_args):
        raise SuperviseError(f"pattern file {path}: [agent] stdin_args must be a list of strings")
    patterns: list[Pattern] = []
    seen = set()
    for i, raw in enumerate(data.get("patterns", [])):
        label = raw.get("name") or f"#{i + 1}"
        where = f"pattern file {path}, pattern '{label}'"
        missing = [k for k in ("name", "event", "regex") if not raw.get(k)]
        if missing:
            raise SuperviseError(f"{where}: missing {', '.join(missing)}")
        if raw["event"] not in EVENT_KINDS:
            raise SuperviseError(f"{where}: unknown event '{raw['event']}'", f"use one of: {', '.join(EVENT_KINDS)}")
        if raw["name"] in seen:
            raise SuperviseError(f"{where}: the name is used twice in this file")
        seen.add(raw["name"])
        status = raw.get("status", "sourced")
        if status not in STATUSES:
            raise SuperviseError(f"{where}: unknown status '{status}'", f"use one of: {', '.join(STATUSES)}")
        flags = re.IGNORECASE if "i" in str(raw.get("flags", "")) else 0
        try:
            regex = saferegex.compile(raw["regex"], flags, name=f"{name}/{raw['name']}", check=check)
        except saferegex.error as exc:
            raise SuperviseError(f"{where}: bad regex {raw['regex']!r}: {exc}", "fix the regex (Python `re` syntax)") from exc
        if check and raw["event"] == "context_low" and not ({"pct", "used"} & set(regex.groupindex)):
            raise SuperviseError(f"{where}: a context_low regex must capture (?P<pct>...) or (?P<used>...)")
        if check and raw["event"] in USER_KINDS and "text" not in regex.groupindex:
            raise SuperviseError(f"{where}: a {raw['event']} regex must capture the user's words as (?P<text>...)")
        patterns.append(Pattern(name, raw["name"], raw["event"], regex, str(raw.get("seen_on", "")), status))
    low_at = agent.get("context_low_at", DEFAULT_CONTEXT_LOW_AT)
    if not isinstance(low_at, int) or not 0 <= low_at <= 100:
        raise SuperviseError(f"pattern file {path}: [agent] context_low_at must be a whole number from 0 to 100")
    return PatternSet(
        name,
        str(agent.get("title", name)),
        list(commands),
        None if table else patterns,
        path,
        context_low_at=low_at,
        stdin_args=list(stdin_args),
    )


def _files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.toml")) if directory.is_dir() else []


def load_all(extra: Iterable[Path] = (), env: Mapping[str, str] | None = None) -> dict[str, PatternSet]:
    """Every pattern set by agent name: shipped, then the user's, then `extra` (later wins)."""
    sets: dict[str, PatternSet] = {}
    shipped = _files(builtin_dir())
    for path in [*shipped, *_files(user_dir(env)), *[Path(p) for p in extra]]:
        loaded = load_file(path, check=path not in shipped, whole=path not in shipped)
        previous = sets.get(loaded.agent)
        if previous is not None:
            loaded.overrides = [*previous.overrides, previous.source]
        sets[loaded.agent] = loaded
    return sets


def select(sets: Mapping[str, PatternSet], agent: str) -> PatternSet | None:
    """The set for an agent name or a command name (`AGENT`, `/usr/bin/AGENT`)."""
    if agent in sets:
        return sets[agent]
    base = Path(agent).name
    for s in sets.values():
        if base in s.commands:
            return s
    return None


# Interpreters whose program is the script they run (`python3 -m pkg.tool` runs `tool.py`).
_INTERPRETERS = re.compile(r"(python|pypy)[0-9.]*|node|bun|deno")


def program(argv: list[str]) -> str:
    """The name of the program a command runs: its own, or the script an interpreter runs."""
    name = Path(argv[0]).name if argv else ""
    if not _INTERPRETERS.fullmatch(name):
        return name
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "-m":
            return next(rest, "").rpartition(".")[2] + ".py"
        if arg in ("-c", "-e", "--eval", "-p", "--print"):  # (a one-liner: no script)
            return name
        if not arg.startswith("-"):
            return Path(arg).name
    return name


def agent_for(sets: Mapping[str, PatternSet], argv: list[str], asked: str | None = None) -> tuple[str, PatternSet | None]:
    """The agent a command runs, and its pattern set: `asked` (--agent), else the set whose
    commands include the command's name or the program it runs, else the command's name."""
    if asked:
        chosen = select(sets, asked)
        return (chosen.agent if chosen else asked), chosen
    name = Path(argv[0]).name if argv else ""
    chosen = select(sets, name) or select(sets, program(argv)) if name else None
    return (chosen.agent if chosen else name), chosen


def watched_paths(extra: Iterable[Path] = (), env: Mapping[str, str] | None = None) -> list[Path]:
    return [builtin_dir(), user_dir(env), *[Path(p) for p in extra]]
