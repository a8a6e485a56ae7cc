"""Giving the context back to the agent: the injection rules, typing it, the server an agent's hook asks, waiting out limits."""
