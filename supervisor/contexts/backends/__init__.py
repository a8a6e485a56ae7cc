"""Who fills a session context: the Anthropic API, or an agent CLI headless on the user's login.

Each backend takes the redacted model input and gives back an `Answer`
(what the model filled in, unvalidated, and what it cost) or raises `Failed` with the reason;
the dispatcher (summarizer.py) validates, asks once more, and falls back to the heuristic.

    api       the Anthropic Messages API, with a key (any compatible base URL); messagesapi
              and messageshttp speak it, the call in a process of its own
    choose    which backend `auto` uses for a session, and which CLIs can be used here
    an agent CLI headless on the user's own login: its profile's `summary` module
              (supervisor/profiles/), run by profiles/headless.py
"""

from __future__ import annotations

from ...profiles.headless import Answer, Failed

__all__ = ["Answer", "Failed"]
