"""An agent's own command run for the user (`mcp add`, `extensions link`): found on PATH, given
a minute, its refusal told in one line; what it answers when it has that already is no error."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping

from .errors import SuperviseError
from .plaintext import clip, plain

TIMEOUT = 60  # seconds the agent's command may take


def run(argv: list[str], what: str, exists: str | None = None, env: Mapping[str, str] | None = None, cwd: str | None = None) -> str | None:
    """Run `argv` to `what` (words for a message: "add the server"); None when it did, or what
    it said that matches `exists` (done before: nothing to do)."""
    if shutil.which(argv[0]) is None:
        raise SuperviseError(f"{argv[0]} is not installed here (not on PATH)", "install it first, or add it to PATH")
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT, env={**os.environ, **(env or {})}, cwd=cwd
        )
    except subprocess.TimeoutExpired:
        raise SuperviseError(f"{argv[0]} did not {what} within {TIMEOUT} s", "run the command yourself: see --dry-run") from None
    if done.returncode == 0:
        return None
    said = plain(" ".join(f"{done.stderr} {done.stdout}".split()), newlines=False)
    if exists is not None and (m := re.search(exists, said)):
        return m.group()
    raise SuperviseError(f"{argv[0]} refused to {what}: {clip(said, 300)}", "run the command yourself: see --dry-run")
