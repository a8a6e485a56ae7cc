"""The user's settings: config.toml and the variables (every error and unknown key, as a run
would find them), and the program of the notify command they name."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Mapping

from .. import config, configcheck
from ..errors import SuperviseError
from .report import Check

# Words the shell runs itself: nothing to look for on PATH.
SHELL_WORDS = {
    "if",
    "for",
    "while",
    "until",
    "case",
    "{",
    "(",
    "!",
    "[",
    ".",
    ":",
    "eval",
    "exec",
    "command",
    "echo",
    "printf",
    "test",
    "true",
    "false",
    "cd",
    "set",
    "export",
    "trap",
    "wait",
}
INSTALL = {"notify-send": " (Debian/Ubuntu: sudo apt install libnotify-bin)", "curl": " (sudo apt install curl)"}
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def settings(env: Mapping[str, str]) -> list[Check]:
    """A row per error (a problem: a run would not start) and per unknown key (a warning);
    else one ok row."""
    path = config.config_file(env)
    _, found = configcheck.read(path)
    found += configcheck.check_env(env)
    checks = [Check("config", "problem" if f.level == "error" else "warn", f.message, f.hint) for f in found]
    if not any(c.status == "problem" for c in checks):
        try:
            config.load(env)  # what only resolving finds: a backend named by its variable, the context prompt template
        except SuperviseError as exc:
            checks.append(Check("config", "problem", exc.message, exc.hint))
    if not checks:
        checks.append(Check("config", "ok", f"{path}" if path.is_file() else f"no {path}: the defaults"))
    return checks


def notify_program(command: str) -> str | None:
    """The program the shell would run first for `command` (after any VAR=value words), or
    None if it runs none. Raises ValueError for a command the shell cannot parse."""
    words = shlex.split(command)
    while words and ASSIGNMENT.match(words[0]):
        words.pop(0)
    return words[0] if words else None


def notify_verdict(source: str, program: str | None, found: str | None, why: str | None) -> Check:
    """`program`: what the command runs; `found`: where it is; `why`: why it is not runnable."""
    if program is None:
        return Check("notify", "problem", f"{source} runs no program", "give a command, e.g. notify-send supervise {name}:{state}")
    if found:
        return Check("notify", "ok", f"{source} runs {found}")
    if why:
        return Check("notify", "problem", f"{source}: {why}: no notice would be sent", f"fix the path, or change {source}")
    return Check(
        "notify",
        "problem",
        f"{source}: {program} is not on PATH: no notice would be sent",
        f"install it{INSTALL.get(program, '')}, give its full path, or change {source}",
    )


def notify_command(notify: config.Notify, env: Mapping[str, str]) -> Check:
    """The command's program, as /bin/sh would find it when a notice is due (the command itself
    is never printed: a webhook URL in it can be a secret)."""
    source = "SUPERVISE_NOTIFY_COMMAND" if env.get("SUPERVISE_NOTIFY_COMMAND") else "[notify] command"
    if not notify.command or not notify.command.strip():
        return Check("notify", "ok", "no command: notices are not sent (see [notify] command)")
    try:
        program = notify_program(notify.command)
    except ValueError as exc:
        return Check(
            "notify", "problem", f"{source} is not a shell command the shell can read: {exc}", "close the quote, or change the command"
        )
    if program is None:
        return notify_verdict(source, None, None, None)
    if program in SHELL_WORDS or any(c in program for c in "$`*?"):
        return Check("notify", "ok", f"{source} runs a shell word or expansion ({program}): not checked here")
    if "/" in program:
        path = os.path.expanduser(program)
        if not os.path.exists(path):
            return notify_verdict(source, program, None, f"{path} does not exist")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            return notify_verdict(source, program, None, f"{path} is not an executable file")
        return notify_verdict(source, program, path, None)
    return notify_verdict(source, program, shutil.which(program, path=env.get("PATH")), None)
