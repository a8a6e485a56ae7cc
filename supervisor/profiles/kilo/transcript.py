"""Kilo Code CLI's database, read: OpenCode's (see ../opencode/transcript.py) under its own
name, `<data dir>/kilo.db` (`$XDG_DATA_HOME/kilo`, else ~/.local/share/kilo)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..opencode.transcript import Database, as_lines, claims, compaction, data_dir, session_id, summary, timestamp, user_messages, user_text
from ..opencode.transcript import locate as _locate

__all__ = [
    "SOURCE",
    "folder",
    "locate",
    "as_lines",
    "claims",
    "compaction",
    "session_id",
    "summary",
    "timestamp",
    "user_messages",
    "user_text",
]

SOURCE = Database("kilo.db")


def folder(env: Mapping[str, str], cwd: str) -> Path:
    """The folder of its database (every project's sessions are in it)."""
    return data_dir(env, "kilo")


def locate(top: Path, agent_session_id: str) -> Path | None:
    return _locate(top, agent_session_id, SOURCE.file_name)
