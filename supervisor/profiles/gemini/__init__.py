"""Gemini CLI (npm @google/gemini-cli): read off its screen, given its context by typing.

A summary backend by name only: its `summary` says why it cannot be one."""

from __future__ import annotations

from ..base import Profile
from . import summary


class Gemini(Profile):
    summary = summary
    summary_rank = 2


PROFILE = Gemini("gemini")
