"""Aider (PyPI aider-chat): its chat history file, no resume of its own, no MCP client.

Read off its screen and its chat history file (transcript.py), given its context by typing;
its pattern file says the rest."""

from ..base import Profile
from . import transcript


class Aider(Profile):
    transcript = transcript
    version_timeout = 15.0  # it imports a lot before it prints its version
    quiet_env = {"AIDER_CHECK_UPDATE": "false"}
    mcp_note = "it has no MCP client"


PROFILE = Aider("aider")
