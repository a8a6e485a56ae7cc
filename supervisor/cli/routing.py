"""Where a command line goes, and which command lines are typos.

`supervise -- CMD`, `supervise --name x -- CMD` and `supervise CMD` run CMD; a word that is
neither one of our commands nor a program, and an option before `--` that `run` does not
have, are typos: refused before anything runs or is recorded, with the nearest right word.
"""

from __future__ import annotations

import difflib
import inspect
import shutil
from collections.abc import Callable, Iterable, Mapping

from ..errors import SuperviseError
from ..plaintext import clip, quoted

TOP_LEVEL = ("-h", "--help", "--version", "-V")
# Options whose value may be left out, and what they then mean (Typer has no such option).
OPTIONAL_VALUES = {"--project": "."}


def run_options(command: Callable) -> dict[str, bool]:
    """Each option of a Typer command (every spelling) and whether it takes a value."""
    options = {}
    for param in inspect.signature(command).parameters.values():
        for decl in getattr(param.default, "param_decls", None) or ():
            for spelling in decl.split("/"):  # `--mcp/--no-mcp`: a switch, either way
                options[spelling] = str(param.annotation) not in ("bool", "Optional[bool]")
    return {**options, "-h": False, "--help": False}


def option_names(command: Callable) -> list[str]:
    """The options of a Typer command as its help names them: `--name/-n`."""
    return [
        "/".join(param.default.param_decls)
        for param in inspect.signature(command).parameters.values()
        if getattr(param.default, "param_decls", None)
    ]


def route(
    argv: list[str], commands: Iterable[str], options: Mapping[str, bool], options_of: Callable[[str], Mapping[str, bool]] | None = None
) -> list[str]:
    """The command line Typer is to see (`options_of`: a command's own options, for the hint
    when one of ours is typed after run options)."""
    first = argv[0]
    if first == "run":
        check_options(argv[1:], options)
        return argv
    if first in commands:
        return with_optional_values(argv)
    if first in TOP_LEVEL:
        return argv
    if first == "help":
        return ["--help", *argv[1:]]
    if first.startswith("-") and first != "-":
        at = check_options(argv, options)
        if at is not None and argv[at] in commands and shutil.which(argv[at]) is None:
            raise _ours_after_options(argv[:at], argv[at], argv[at + 1 :], options, options_of)
        return ["run", *argv]
    if "/" not in first and shutil.which(first) is None:
        raise SuperviseError(
            f"unknown command '{quoted(first)}'",
            _nearest(first, commands, "supervise ") or "`supervise --help` lists the commands; a program to run goes after `--`",
            exit_code=2,
        )
    return ["run", *argv]


def with_optional_values(argv: list[str]) -> list[str]:
    """A command's arguments with the value of each OPTIONAL_VALUES option that was left
    out (nothing after it, or another option) put in. Arguments after `--` are not ours."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        if arg == "--":
            return out + argv[i:]
        out.append(arg)
        following = argv[i + 1] if i + 1 < len(argv) else None
        if arg in OPTIONAL_VALUES and (following is None or (following.startswith("-") and following != "-")):
            out.append(OPTIONAL_VALUES[arg])
    return out


def _option(arg: str, options: Mapping[str, bool]) -> tuple[str, int]:
    """An option word's name, and how many words it spans (2: its value is the next word)."""
    name = arg.split("=", 1)[0] if arg.startswith("--") else arg[:2]
    return name, 2 if options.get(name) and "=" not in arg and (arg.startswith("--") or len(arg) == 2) else 1


def check_options(args: list[str], options: Mapping[str, bool]) -> int | None:
    """Every option before the command (`--` or the first plain word) is one of `options`;
    where the command's first plain word is (None: after `--`, or none)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return None
        if not arg.startswith("-") or arg == "-":
            return i
        name, width = _option(arg, options)
        if name not in options:
            raise SuperviseError(
                f"unknown option '{quoted(name)}'", _nearest(name, options, "") or "`supervise run --help` lists the options", exit_code=2
            )
        i += width
    return None


def _ours_after_options(
    given: list[str], command: str, rest: list[str], options: Mapping[str, bool], options_of: Callable[[str], Mapping[str, bool]] | None
) -> SuperviseError:
    """`supervise --name x demo`: `demo` is a command of ours, and no program of that name
    would run; the command as it would be typed, and the options it does not take."""
    own = options_of(command) if options_of else {}
    kept: list[str] = []
    dropped: list[str] = []
    i = 0
    while i < len(given):
        name, width = _option(given[i], options)
        if name in own:
            kept += given[i : i + width]
        else:
            dropped.append(name)
        i += width
    typed = clip(" ".join(["supervise", command, *(quoted(a) for a in (*kept, *rest))]), 120)
    hint = f"did you mean `{typed}`?"
    if dropped:
        hint += f" It takes no {', '.join(dict.fromkeys(dropped))}"
    return SuperviseError(
        f"'{quoted(command)}' is one of supervise's own commands, and no program of that name is on PATH to run",
        f"{hint}; a program to run goes after `--`",
        exit_code=2,
    )


def _nearest(word: str, choices: Iterable[str], prefix: str) -> str | None:
    near = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f"did you mean `{prefix}{near[0]}`?" if near else None
