"""Codex CLI (npm @openai/codex): read off its screen, given its context by typing, a summary backend.

`codex exec` summarizes on the user's own login (summary.py)."""

from __future__ import annotations

from ..base import Profile
from . import summary


class Codex(Profile):
    summary = summary
    summary_rank = 1


PROFILE = Codex("codex")
