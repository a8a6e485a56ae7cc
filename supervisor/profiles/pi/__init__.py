"""pi (npm @mariozechner/pi-coding-agent): its session files, resume by session id.

Read off its screen and its session files (transcript.py: the user's words are only there,
its screen draws them as it draws replies). It is given its context through an extension of
ours (supervise.js), loaded for the run with `-e` beside the user's own: after a compaction,
and before each of the user's prompts (a resumed or briefed session's context), it asks the
recorder's hook socket and adds the context to pi's next request; nothing typed. It has no
MCP client (by design: its tools are CLI programs with READMEs, or extensions) and no
permission dialogs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .. import hook
from ..base import Hooked, Profile, Resumed, by_session_or_continue, js_door, without_options
from . import transcript

EXTENSION = Path(__file__).with_name("supervise.js")

# Options that pick which session it opens (the one given replaces them), with a value or not.
_SESSION_VALUE = ("--session", "--fork", "--session-dir")
_SESSION_FLAG = ("-c", "--continue", "-r", "--resume", "--no-session")


def without_session(argv: list[str]) -> list[str]:
    """`argv` without the options it was run with that choose a session."""
    return without_options(argv, _SESSION_VALUE, _SESSION_FLAG)


class Pi(Profile):
    transcript = transcript
    # `--version` makes no network call; PI_OFFLINE keeps a start-up from checking for updates
    quiet_env = {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"}
    version_timeout = 10.0
    mcp_note = "it has no MCP client of its own (an extension would have to add one)"
    door = "an extension loaded for the run (-e)"

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        return by_session_or_continue(argv, session, fresh, without_session)

    def hooks(self, argv: list[str]) -> bool:
        return True

    def with_hook(self, argv: list[str], folder: Path, socket: str, at_start: bool, env: Mapping[str, str] | None = None) -> Hooked:
        # the extension as shipped, copied into the run's private folder; as `supervise/index.js`
        # pi lists it as "supervise" (a file name on its screen would pass for one of the project's)
        path = folder / "supervise" / "index.js"
        return Hooked([argv[0], "-e", str(path), *argv[1:]], {hook.SOCKET_ENV: socket}, js_door(path, EXTENSION))


PROFILE = Pi("pi")
