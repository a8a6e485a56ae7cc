"""Exports of a recorded session: the text log, the raw .cast, or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ..config import DEFAULT_EMULATOR
from ..errors import SuperviseError
from ..store.database import COMPLETED, FAILED, Store
from . import asciicast
from .emulator import make
from .textlog import Frame, TextLog

FORMATS = ("text", "cast", "json")
BLOCK = 1 << 20  # characters of the text log read at a time: a 1 GB log exports in constant memory


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
    """The session's text log, line by line."""
    rest = ""
    for block in text_blocks(session):
        lines = (rest + block).split("\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def text_blocks(session: dict) -> Iterator[str]:
    """The session's text log in pieces of any length, each line ended by a newline. The live
    log is complete only if the supervisor ended cleanly; otherwise (killed, still running)
    it is rendered again from the recording."""
    log_path = Path(session["log_path"]) if session.get("log_path") else None
    cast_path = Path(session["cast_path"]) if session.get("cast_path") else None
    if session["status"] in (COMPLETED, FAILED) and log_path and log_path.exists():
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            ended = True
            while block := fh.read(BLOCK):
                ended = block.endswith("\n")
                yield block
            if not ended:
                yield "\n"
        return
    if cast_path and cast_path.exists():
        for line in render_cast(cast_path):
            yield line + "\n"
        return
    raise SuperviseError(f"session {session['id']} has no recording", "it may have failed before starting")


def session_json(store: Store, session: dict) -> dict:
    out = dict(session)
    out["events"] = store.events(session["id"])
    out["children"] = [c["id"] for c in store.children(session["id"])]
    return out


def _masked_pieces(datas: list[str]) -> Iterator[str]:
    """`datas` with the secrets in their joined text masked, piece by piece."""
    from ..redact import spans

    found = spans("".join(datas))
    k, at = 0, 0
    for data in datas:
        end = at + len(data)
        out, done = [], at
        while k < len(found) and found[k][0] < end:
            start, stop, token = found[k]
            if start >= at:
                out += [data[done - at : start - at], token]
            done = max(done, min(stop, end))
            if stop > end:
                break  # the rest of this secret is in the next pieces
            k += 1
        out.append(data[done - at :])
        yield "".join(out)
        at = end


def export(store: Store, session: dict, fmt: str, redact: bool = False) -> Iterator[str]:
    """The session in `fmt`; with `redact`, secrets masked as the summarizer masks them."""
    if redact:  # (its patterns cost 8 ms to load: only when asked for)
        from ..redact import redact as mask, redact_data
    else:
        mask = redact_data = None
    if fmt == "text" and redact:
        # whole text at once: a secret (a private key block) may span lines
        yield mask("".join(text_blocks(session)))
    elif fmt == "text":
        yield from text_blocks(session)
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
        # mask the output as one text (a secret may come in two writes), then cut it back
        # into the events it came in: each keeps its own part, the mask where a secret starts
        events = list(events)
        for code in ("o", "i"):
            pieces = _masked_pieces([d for _, c, d in events if c == code])
            events = [(t, c, next(pieces) if c == code else d) for t, c, d in events]
        for t, code, data in events:
            yield asciicast.event_line(t, code, data)
    elif fmt == "json":
        data = session_json(store, session)
        try:
            data["text"] = "\n".join(text_lines(session))
        except SuperviseError:
            data["text"] = ""
        yield json.dumps(redact_data(data) if redact else data, indent=2, ensure_ascii=False) + "\n"
    else:
        raise SuperviseError(f"unknown format '{fmt}'", f"use one of: {', '.join(FORMATS)}", exit_code=2)
