"""Exports of a recorded session: the text log, the raw .cast, or JSON.

What cannot be read is said, never passed off as an empty export: a file gone or
unreadable is one line (why, and what is left); damaged lines of a recording are skipped
and counted, and the rest is exported."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from ..config import DEFAULT_EMULATOR
from ..errors import SuperviseError
from ..plaintext import plain
from ..store.database import ACTIVE, COMPLETED, FAILED, Store
from . import asciicast
from .emulator import make
from .textlog import Frame, TextLog

FORMATS = ("text", "cast", "json")
BLOCK = 1 << 20  # characters of the text log read at a time: a 1 GB log exports in constant memory

Warn = Callable[[str], None]  # one line to the user: a file gone, damaged lines skipped
T = TypeVar("T")


def _quiet(_: str) -> None:
    pass


def replay(
    path: Path, emulator: str = DEFAULT_EMULATOR, warn: Warn = _quiet, live: bool = False
) -> tuple[TextLog, Iterator[tuple[float, Frame]]]:
    """A recording fed through the text-log renderer as the live one was: the renderer, and
    the frame each output or resize event produced. Damaged lines are skipped and, once all
    is read, said through `warn` (`live`: the recording is still written, its last line may
    be on its way)."""
    header, events = asciicast.read(path)
    return _replay(path, header, events, emulator, warn, live)


def _replay(
    path: Path, header: dict, events: asciicast.Events, emulator: str, warn: Warn, live: bool
) -> tuple[TextLog, Iterator[tuple[float, Frame]]]:
    log = TextLog(make(emulator, *asciicast.header_size(header)))

    def frames() -> Iterator[tuple[float, Frame]]:
        for t, code, data in events:
            if code == "o":
                yield t, log.feed(t, data)
            elif code == "r" and (size := asciicast.resize_size(data)):
                yield t, log.resize(t, *size)
        if note := damage_note(path, events, live):
            warn(note)

    return log, frames()


def render_cast(path: Path, emulator: str = DEFAULT_EMULATOR, warn: Warn = _quiet, live: bool = False) -> Iterator[str]:
    """Render a recording into text-log lines, as the live renderer would have."""
    yield from _rendered(replay(path, emulator, warn, live))


def _rendered(replayed: tuple[TextLog, Iterator[tuple[float, Frame]]]) -> Iterator[str]:
    log, frames = replayed
    for _, frame in frames:
        yield from frame.logged
    yield from log.finish()


def damage_note(path: Path, events: asciicast.Events, live: bool = False) -> str | None:
    """The line that says how many damaged lines of a recording were skipped, if any."""
    n = events.skipped + (1 if events.torn and not live else 0)
    if not n:
        return None
    return f"supervise: skipped {n} damaged line{'s' if n > 1 else ''} of {_shown(path)} (the rest was read)"


def text_lines(session: dict, warn: Warn = _quiet) -> Iterator[str]:
    """The session's text log, line by line."""
    rest = ""
    for block in text_blocks(session, warn):
        lines = (rest + block).split("\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def text_blocks(session: dict, warn: Warn = _quiet) -> Iterator[str]:
    """The session's text log in pieces of any length, each line ended by a newline. The live
    log is complete only if the supervisor ended cleanly; otherwise (killed, still running)
    it is rendered again from the recording. If one of the two is gone the other is used,
    and `warn` says so."""
    log_path = Path(session["log_path"]) if session.get("log_path") else None
    cast_path = Path(session["cast_path"]) if session.get("cast_path") else None
    ended = session["status"] in (COMPLETED, FAILED)
    log_there = log_path is not None and log_path.exists()
    cast_there = cast_path is not None and cast_path.exists()
    if log_there and (ended or not cast_there):
        if not ended and cast_path is not None:
            warn(f"supervise: the recording {_shown(cast_path)} is gone: exported the text log as it was last written")
        assert log_path is not None  # it is there
        yield from _log_blocks(log_path)
        return
    if not cast_there:
        raise gone(session, [p for p in (cast_path, log_path) if p is not None])
    assert cast_path is not None  # it is there
    header, events = open_cast(session, cast_path)
    if ended and log_path is not None:
        warn(f"supervise: the text log {_shown(log_path)} is gone: rendered again from {_shown(cast_path)}")
    replayed = _replay(cast_path, header, events, DEFAULT_EMULATOR, warn, live=session["status"] == ACTIVE)
    for line in _reading(cast_path, _rendered(replayed)):
        yield line + "\n"


def _log_blocks(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            ended = True
            while block := fh.read(BLOCK):
                ended = block.endswith("\n")
                yield block
            if not ended:
                yield "\n"
    except OSError as exc:
        raise _unreadable("the text log", path, exc) from exc


def open_cast(session: dict, path: Path) -> tuple[dict, asciicast.Events]:
    """The session's recording opened, or one line on why it cannot be."""
    try:
        return asciicast.read(path)
    except FileNotFoundError:
        raise gone(session, [path]) from None
    except OSError as exc:
        raise _unreadable("the recording", path, exc) from exc
    except ValueError as exc:
        raise SuperviseError(
            f"the recording {_shown(path)} is damaged: its first line is not an asciicast v2 header",
            f"its events are still in the database: `supervise show {session['id']}`",
        ) from exc


def _reading(path: Path, items: Iterator[T]) -> Iterator[T]:
    """`items` read from the recording at `path`, a failure to read it said in one line."""
    try:
        yield from items
    except OSError as exc:
        raise _unreadable("the recording", path, exc) from exc


def _unreadable(what: str, path: Path, exc: OSError) -> SuperviseError:
    return SuperviseError(f"cannot read {what} {_shown(path)}: {exc.strerror or exc}", "check that it is a file you can read")


def started(session: dict) -> bool:
    """Was there ever a recording? Not if the agent failed before it started."""
    return bool(session.get("cast_path")) and not (session.get("child_pid") is None and session["status"] == FAILED)


def gone(session: dict, files: list[Path]) -> SuperviseError:
    """Why a session has no recording to export: it failed before starting, its recorder
    said why, or its files were removed outside supervise."""
    sid = session["id"]
    if not started(session):
        return SuperviseError(f"session {sid} has no recording", f"it failed before starting: `supervise show {sid}` says why")
    folder = Path(session["cast_path"]).parent
    if not folder.is_dir():
        return SuperviseError(
            f"the recording of session {sid} is gone: its folder {_shown(folder)} was removed outside supervise",
            f"its events are still in the database: `supervise show {sid}`",
        )
    named = " and ".join(_shown(p) for p in files)
    err = folder / "recorder.err"
    if err.is_file() and err.stat().st_size:  # the recorder may never have written it
        return SuperviseError(
            f"session {sid} has no recording: {named} {'is' if len(files) == 1 else 'are'} missing",
            f"its recorder reported an error: see {_shown(err)}",
        )
    return SuperviseError(
        f"the recording of session {sid} is gone: {named} {'was' if len(files) == 1 else 'were'} removed outside supervise",
        f"its events are still in the database: `supervise show {sid}`",
    )


def _shown(path: Path | None) -> str:
    return plain(str(path), newlines=False)


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


def export(store: Store, session: dict, fmt: str, redact: bool = False, warn: Warn = _quiet) -> Iterator[str]:
    """The session in `fmt`; with `redact`, secrets masked as the summarizer masks them.
    What could not be read (a file gone, damaged lines skipped) is said through `warn`."""
    mask: Callable[[str], str] | None
    redact_data: Callable[[object], object] | None
    if redact:  # (its patterns take a while to load: only when asked for)
        from ..redact import redact as mask, redact_data
    else:
        mask = redact_data = None
    if fmt == "text" and mask is not None:
        # whole text at once: a secret (a private key block) may span lines
        yield mask("".join(text_blocks(session, warn)))
    elif fmt == "text":
        yield from text_blocks(session, warn)
    elif fmt == "cast":
        yield from _reading(Path(session.get("cast_path") or ""), _cast(session, mask, warn))
    elif fmt == "json":
        data = session_json(store, session)
        try:
            data["text"] = "\n".join(text_lines(session, warn))
        except SuperviseError as exc:
            data["text"] = ""
            if started(session):  # (one that failed before starting has no text to miss)
                warn(f"supervise: the export has no text: {exc.message}")
        yield json.dumps(redact_data(data) if redact_data is not None else data, indent=2, ensure_ascii=False) + "\n"
    else:
        raise SuperviseError(f"unknown format '{fmt}'", f"use one of: {', '.join(FORMATS)}", exit_code=2)


def _cast(session: dict, mask: Callable[[str], str] | None, warn: Warn) -> Iterator[str]:
    """The recording as it is (whole lines only), or with its secrets masked."""
    if not session.get("cast_path"):
        raise gone(session, [])
    cast_path = Path(session["cast_path"])
    header, events = open_cast(session, cast_path)
    if mask:  # the command line in the header can hold a secret too
        header = {k: mask(v) if isinstance(v, str) else v for k, v in header.items()}
    yield json.dumps(header, ensure_ascii=False) + "\n"
    read: Iterable[tuple[float, str, str]]
    if mask:
        # mask the output as one text (a secret may come in two writes), then cut it back
        # into the events it came in: each keeps its own part, the mask where a secret starts
        read = list(events)
        for code in ("o", "i"):
            pieces = _masked_pieces([d for _, c, d in read if c == code])
            read = [(t, c, next(pieces) if c == code else d) for t, c, d in read]
    else:
        read = events
    for t, code, data in read:
        yield asciicast.event_line(t, code, data)
    if note := damage_note(cast_path, events, live=session["status"] == ACTIVE):
        warn(note)
