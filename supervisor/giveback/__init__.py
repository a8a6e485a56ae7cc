"""Giving the context back to the agent: the injection rules, typing it, Claude Code's hook and its server, waiting out limits."""
