"""Exports of a recorded session: the text log, the raw .cast, or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from . import asciicast
from .contexts.redact import redact as _redact
from .emulator import DEFAULT_EMULATOR, make
from .errors import SuperviseError
from .store import COMPLETED, FAILED, Store
from .textlog import Frame, TextLog

FORMATS = ("text", "cast", "json")


def replay(path: Path, emulator: str = DEFAULT_EMULATOR) -> tuple[TextLog, Iterator[tuple[float, Frame]]]:
    """A recording fed through the text-log renderer as the live one was: the renderer, and
    the frame each output or resize event produced."""
    header, events = asciicast.read(path)
    log = TextLog(make(emulator, int(header.get("width", 80)), int(header.get("height", 24))))

    def frames() -> Iterator[tuple[float, Frame]]:
        for t, code, data in events:
            if code == "o":
                yield t, log.feed(t, data)
            elif code == "r":
                try:
                    cols, rows = (int(x) for x in data.split("x"))
                except ValueError:
                    continue
                yield t, log.resize(t, cols, rows)

    return log, frames()


def render_cast(path: Path, emulator: str = DEFAULT_EMULATOR) -> Iterator[str]:
    """Render a recording into text-log lines, as the live renderer would have."""
    log, frames = replay(path, emulator)
    for _, frame in frames:
        yield from frame.logged
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


def _mask_strings(value, mask):
    """Mask every string in a JSON-like structure (before encoding: escapes would hide secrets)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: _mask_strings(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_strings(v, mask) for v in value]
    return value


def export(store: Store, session: dict, fmt: str, redact: bool = False) -> Iterator[str]:
    """The session in `fmt`; with `redact`, secrets masked as the summarizer masks them."""
    mask = _redact if redact else (lambda text: text)
    if fmt == "text":
        # whole text at once: a secret (a private key block) may span lines
        yield mask("".join(line + "\n" for line in text_lines(session)))
    elif fmt == "cast":
        cast_path = Path(session.get("cast_path") or "")
        if not cast_path.is_file():
            raise SuperviseError(f"session {session['id']} has no recording", "it may have failed before starting")
        header, events = asciicast.read(cast_path)
        if redact:  # the command line in the header can hold a secret too
            header = {k: mask(v) if isinstance(v, str) else v for k, v in header.items()}
        yield json.dumps(header, ensure_ascii=False) + "\n"
        if not redact:
            for t, code, data in events:
                yield asciicast.event_line(t, code, data)
            return
        # mask the output as one text, then cut it back into the events it came in
        events = list(events)
        for code in ("o", "i"):
            joined = "\x00".join(d for _, c, d in events if c == code)
            masked = iter(mask(joined).split("\x00"))
            events = [(t, c, next(masked) if c == code else d) for t, c, d in events]
        for t, code, data in events:
            yield asciicast.event_line(t, code, data)
    elif fmt == "json":
        data = session_json(store, session)
        try:
            data["text"] = "\n".join(text_lines(session))
        except SuperviseError:
            data["text"] = ""
        yield json.dumps(_mask_strings(data, mask), indent=2, ensure_ascii=False) + "\n"
    else:
        raise SuperviseError(f"unknown format '{fmt}'", f"use one of: {', '.join(FORMATS)}", exit_code=2)
