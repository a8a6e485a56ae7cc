"""supervise's own coding agent (supervisor/agent): it keeps its conversation in supervise's
own store, so a resumed session carries it on with nothing typed into it; started anew, it is
given the context like any agent."""

from __future__ import annotations

from collections.abc import Mapping

from .base import Profile, Resumed

AGENT = "supervise-agent"  # its pattern set, and the agent name its sessions are stored with
RESUME_FLAG = "--resume-from"


def resume_argv(argv: list[str], from_session: str | None) -> list[str]:
    """The agent's command line to resume a session: its options without the task (it asks
    at its prompt) nor -p; with `--resume-from ID` to carry on that session's conversation
    (None: a fresh conversation, which is given the session's context instead)."""
    options = argv[: argv.index("--")] if "--" in argv else list(argv)
    out, skip = [], False
    for arg in options:
        if skip:
            skip = False
            continue
        if arg == RESUME_FLAG:
            skip = True
            continue
        if arg not in ("-p", "--print"):
            out.append(arg)
    if from_session:
        out += [RESUME_FLAG, from_session]
    return [*out, "--"]


class SuperviseAgent(Profile):
    own = True
    mcp_add_note = "it is supervise's own agent: supervise's tools are built into it"

    def resume(self, argv: list[str], session: Mapping, fresh: bool) -> Resumed:
        return Resumed(resume_argv(argv, None if fresh else session["id"]), inject="auto" if fresh else "off")


PROFILE = SuperviseAgent(AGENT)
