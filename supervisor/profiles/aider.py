"""Aider (PyPI aider-chat): read off its screen and given its context by typing; its pattern
file says the rest."""

from .base import Profile


class Aider(Profile):
    version_timeout = 15.0  # it imports a lot before it prints its version
    quiet_env = {"AIDER_CHECK_UPDATE": "false"}
    mcp_note = "it has no MCP client"


PROFILE = Aider("aider")
