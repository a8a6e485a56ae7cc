"""A command line as supervise stores it for showing (sessions, show, ps, Datasette, the
`start` event, telemetry): every secret masked. A key may be a token of a known shape
(`sk-ant-...`) anywhere in an argument, or anything given to an option that names a secret
(`--api-key VALUE`, `--token=VALUE`, `-p VALUE` after `--password`...). The command as run is
kept in the session's private folder, for `resume`."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from . import paths
from .redact import redact, redact_data

# an option whose value is a secret, whatever its shape: its last word names one
# (`--api-key`, `--github-token`, `--db-password`; not `--max-tokens` or `--monkey`)
SECRET_OPTION = re.compile(
    r"^--?(?:[A-Za-z0-9]+[_.-])*(?:api[_-]?key|apikey|key|token|secret|password|passwd|passphrase|pwd|credentials?|cookie|auth)$",
    re.IGNORECASE,
)
MASK = "[REDACTED:option-value]"


def masked(argv: list[str]) -> list[str]:
    out: list[str] = []
    secret_next = False
    for arg in argv:
        if secret_next and not arg.startswith("-"):
            out.append(MASK)
            secret_next = False
            continue
        secret_next = False
        name, eq, value = arg.partition("=")
        if SECRET_OPTION.match(name):
            if eq:
                out.append(f"{name}={MASK}" if value else arg)
                continue
            secret_next = True
        out.append(redact(arg))
    return out


def shown(argv: list[str]) -> str:
    """The masked command line as one string (quoted as a shell would need it)."""
    return shlex.join(masked(argv))


KEPT = "command.json"  # in the session's folder: the command as run


def keep(folder: Path, argv: list[str]) -> None:
    with paths.open_private(folder / KEPT, "w", encoding="utf-8") as fh:
        json.dump(argv, fh)


def as_run(session: Mapping) -> list[str]:
    """The session's command as it was run (for `resume`): kept in its folder; else (an older
    session, a folder gone) as stored, masked."""
    cast = session.get("cast_path")
    if cast:
        try:
            with open(Path(cast).parent / KEPT, encoding="utf-8") as fh:
                argv = json.load(fh)
            if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
                return argv
        except (OSError, ValueError):
            pass
    return list(session.get("argv") or [])


def masked_data(value):
    """A JSON-like value as stored: every string masked, and a command in it (`argv`) too."""
    out = redact_data(value)
    if isinstance(value, dict) and isinstance(value.get("argv"), list) and all(isinstance(a, str) for a in value["argv"]):
        out["argv"] = masked(value["argv"])
    return out
