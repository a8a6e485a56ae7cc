"""pi (npm @mariozechner/pi-coding-agent): its session files, resume by session id.

Read off its screen and its session files (transcript.py: the user's words are only there,
its screen draws them as it draws replies), given its context by typing. It has no MCP
client (by design: its tools are CLI programs with READMEs, or extensions) and no
permission dialogs."""

from __future__ import annotations

from collections.abc import Mapping

from ..base import Profile, Resumed, by_session_or_continue, without_options
from . import transcript

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

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        return by_session_or_continue(argv, session, fresh, without_session)


PROFILE = Pi("pi")
