"""Exports of a recorded session: the text log, the raw .cast, or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from . import asciicast
from .emulator import DEFAULT_EMULATOR, make
from .errors import SuperviseError
from .store import COMPLETED, FAILED, Store
from .textlog import TextLog

FORMATS = ("text", "cast", "json")


def render_cast(path: Path, emulator: str = DEFAULT_EMULATOR) -> Iterator[str]:
    """Render a recording into text-log lines, as the live renderer would have."""
    header, events = asciicast.read(path)
    log = TextLog(make(emulator, int(header.get("width", 80)), int(header.get("height", 24))))
    for t, code, data in events:
        if code == "o":
            yield from log.feed(t, data).logged
        elif code == "r":
            try:
                cols, rows = (int(x) for x in data.split("x"))
            except ValueError:
                continue
            yield from log.resize(t, cols, rows).logged
    yield from log.finish()


def text_lines(session: dict) -> Iterator[str]:
    """The session's text log. The live log is complete only if the supervisor ended cleanly;
    otherwise (killed, still running) it is rendered again from the recording."""
    log_path = Path(session["log_path"]) if session.get("log_path") else None
    cast_path = Path(session["cast_path"]) if session.get("cast_path") else None
    if session["status"] in (COMPLETED, FAILED) and log_path and log_path.exists():
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                yield line.rstrip("\n")
        return
    if cast_path and cast_path.exists():
        yield from render_cast(cast_path)
        return
    raise SuperviseError(f"session {session['id']} has no recording", "it may have failed before starting")


def session_json(store: Store, session: dict) -> dict:
    out = dict(session)
    out["events"] = store.events(session["id"])
    out["children"] = [c["id"] for c in store.children(session["id"])]
    return out


def export(store: Store, session: dict, fmt: str) -> Iterator[str]:
    if fmt == "text":
        for line in text_lines(session):
            yield line + "\n"
    elif fmt == "cast":
        cast_path = Path(session.get("cast_path") or "")
        if not cast_path.is_file():
            raise SuperviseError(f"session {session['id']} has no recording", "it may have failed before starting")
        with open(cast_path, encoding="utf-8", errors="replace") as fh:
            yield from fh
    elif fmt == "json":
        data = session_json(store, session)
        try:
            data["text"] = "\n".join(text_lines(session))
        except SuperviseError:
            data["text"] = ""
        yield json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        raise SuperviseError(f"unknown format '{fmt}'", f"use one of: {', '.join(FORMATS)}", exit_code=2)
