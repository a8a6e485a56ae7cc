"""Make a session's next context round: its log (and transcript) → digest → summary → store.

Used on demand (`supervise summarize`) and by the recorder when a compaction starts or
ends, periodically, and at the end of a session.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from ..config import Settings, Summary
from .. import profiles
from ..detection import echoes, patterns, userturns
from ..detection.patterns import PatternSet
from ..errors import SuperviseError
from ..recording.export import text_lines
from ..redact import redact, redact_data
from ..store.database import COMPLETED, FAILED, Store
from . import digest, lastround, schema, summarizer

# Bytes of the previous round's text read again: the recent activity keeps its lead-in.
OVERLAP = 16_384
# A round digests at most this much of the log: its start (where a first round finds the
# request) and its end (the latest work).
ROUND_MAX = 32 << 20
ROUND_HEAD = 4 << 20
CONTINUED = "[supervise typed a continue here: the usage limit had reset]"


def read_since(path: Path, offset: int) -> tuple[str, int]:
    """What was appended to `path` since byte `offset` (whole lines, with OVERLAP bytes of
    what came before), and the byte offset it reaches. Past ROUND_MAX bytes (a flood since
    the last round), its first ROUND_HEAD bytes and its last ones, with a line saying how
    much was left out between: a round's memory stays bounded (a 133 MB round read whole
    peaked at 284 MB before the digest began)."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        start = max(0, min(offset, end) - OVERLAP)
        if end - start <= ROUND_MAX:
            return _read_lines(fh, start, end, skip_partial=start > 0), end
        head = _read_lines(fh, start, start + ROUND_HEAD, skip_partial=start > 0)
        tail_start = end - (ROUND_MAX - ROUND_HEAD)
        skipped = tail_start - start - ROUND_HEAD
        tail = _read_lines(fh, tail_start, end, skip_partial=True)
    gap = f"\n[supervise: {skipped / 1e6:.0f} MB of output here were not digested]\n"
    return head.rpartition("\n")[0] + gap + tail, end


def _read_lines(fh, start: int, end: int, skip_partial: bool) -> str:
    fh.seek(start)
    data = fh.read(end - start)
    if skip_partial:
        data = data[data.find(b"\n") + 1 :]
    return data.decode("utf-8", errors="replace")


def session_text(session: dict, screen: list[str] | None = None, since: int = 0, live: bool = False) -> tuple[str, int | None]:
    """What the session showed since byte `since` of its text log, plus the screen as it is
    now, if given; and the log offset reached. The text log is complete while the session
    runs (`live`: the recorder reads its own log) and once it ended cleanly; otherwise
    (killed) it is rendered again from the recording, whole (offset None)."""
    log_path = Path(session["log_path"]) if session.get("log_path") else None
    text, end = "", None
    if log_path and log_path.exists() and (live or session["status"] in (COMPLETED, FAILED)):
        text, end = read_since(log_path, since)
    else:
        try:
            text = "\n".join(text_lines(session))
        except SuperviseError:
            text = ""
    if screen:
        text += "\n" + "\n".join(line for line in screen if line.strip())
    return text, end


def transcript_records(session: dict, env: Mapping[str, str], folder: Path | None = None, since: int = 0) -> tuple[list[dict], int]:
    """The records of the agent's own record since offset `since` (for an agent whose profile
    reads one and a session whose id in it is known), and the offset reached."""
    reader = profiles.get(session.get("agent")).transcript
    if reader is None or not session.get("agent_session_id"):
        return [], 0
    path = reader.locate(folder or reader.folder(env, session["cwd"]), session["agent_session_id"])
    return reader.SOURCE.read(path, since, session["agent_session_id"]) if path is not None else ([], since)


def header(session: dict) -> str:
    return (
        f"Session {session['id']}: `{session['command']}` in {session['cwd']}, agent {session.get('agent') or '?'}, "
        f"started {session['started']}, status {session['status']}."
    )


def make(
    store: Store,
    session: dict,
    trigger: str,
    settings: Settings,
    env: Mapping[str, str] | None = None,
    screen: list[str] | None = None,
    transcript_dir: Path | None = None,
    pattern_set: PatternSet | None = None,
    live: bool = False,
) -> dict:
    """The session's next context round. It digests only what the session showed since the
    previous round (its log and transcript offsets), chained with that round's context, so
    a round costs the same however long the session has run. `live`: made by the recorder of
    a running session (its log is current; `screen` is what is on screen now)."""
    env = os.environ if env is None else env
    cfg: Summary = settings.summary
    began = time.monotonic()
    previous_row = store.latest_context(session["id"])
    # A resumed session's first context carries on from the one it resumed.
    chained = previous_row or (store.latest_context(session["parent_id"]) if session.get("parent_id") else None)
    previous = chained["context"] if chained else None
    text, log_end = session_text(session, screen, (previous_row or {}).get("log_offset") or 0, live)
    records, transcript_end = transcript_records(session, env, transcript_dir, (previous_row or {}).get("transcript_offset") or 0)
    # Secrets masked before the digest picks lines: it drops a repeated line, and a secret
    # that spans lines (a key) could lose the line its rule starts from; and the heuristic
    # context, made without a model, is typed into the agent.
    text, records = redact(text), redact_data(records)
    # What supervise itself gave the agent is not the session's: its echoes are neither the
    # user's words, nor the agent's output, nor errors or files to carry on.
    given = echoes.Given.of(given_texts(store, session))
    text = echoes.strip(text, given)
    reader = profiles.get(session.get("agent")).transcript
    if reader is not None:
        records = [r for r in records if not echoes.is_echo_text(reader.user_text(r), given)]
    if pattern_set is None:
        pattern_set = session_patterns(session, env)
    # Nor are the continues it typed after a usage limit: they are too short to be told by
    # their words, so the latest messages saying just that are taken for them.
    continues = continue_texts(store, session, settings)
    text = userturns.mark_typed(text, pattern_set, continues, CONTINUED)
    told = None
    if reader is not None and records:
        records = without_typed(records, continues, reader.user_text)
        # its replies may quote what was given, as its screen does: taken out the same way
        told = digest.Told(reader.user_messages(records), echoes.strip("\n".join(reader.as_lines(records)), given).split("\n"))
    known = (previous or {}).get("original_request", "")

    def build(budget: int) -> digest.Digest:
        return digest.build(text, budget, told, redact(header(session)), pattern_set, known)

    d = build(cfg.budget)
    # The estimate is a heuristic; where the API can count, believe it and shrink to fit.
    counted = summarizer.count_tokens(d, previous, cfg)
    if counted and counted > cfg.budget:
        d = build(max(1000, int(cfg.budget * d.tokens / counted * 0.95)))
        counted = summarizer.count_tokens(d, previous, cfg) or counted
    result = summarizer.summarize(d, previous, cfg, session, env)
    # The user's words as read, whatever the model wrote: the first request and the latest.
    context = schema.with_user_words(result.context, d.original_request, d.latest_request or (previous or {}).get("latest_request", ""))
    # The round is decided once, where the row is written: the prompt names the same round.
    return store.add_context(
        session["id"],
        lambda round_no: schema.render(context, round_no, settings.template),
        trigger=trigger,
        source=result.source,
        backend=result.backend,
        model=result.model,
        error=result.error,
        digest_tokens=counted or d.tokens,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        cost_usd=result.cost_usd,
        context=context,
        log_offset=log_end,
        transcript_offset=transcript_end,
        duration_ms=round((time.monotonic() - began) * 1000),
    )


def given_texts(store: Store, session: dict) -> list[tuple[str, str]]:
    """What supervise may have given this session's agent, with the session's words each
    quotes: the prompts of its rounds, the brief it started with, and, for a resumed
    session, the one of its parent it started with."""
    parent = store.prompts(session["parent_id"], 1) if session.get("parent_id") else []
    briefs = [(e["detail"].get("text") or "", e["detail"].get("quoted") or "") for e in store.events(session["id"], "brief")]
    return briefs + [(prompt, schema.quoted(context)) for prompt, context in parent + store.prompts(session["id"], echoes.GIVEN_MAX)]


def handed_over(store: Store, row: dict, session_id: str, agent: str, settings: Settings) -> dict:
    """Another agent takes the work over: the context `row` (the earlier session's) becomes the
    new session's first round, its prompt saying another agent did the work. It reads none of
    the new session's log yet (offsets 0); its summary's cost stays the earlier session's."""
    return store.add_context(
        session_id,
        lambda round_no: schema.render(row["context"], round_no, settings.template, handoff_from=agent),
        trigger="handoff",
        source=row["source"],
        backend=row.get("backend"),
        model=row.get("model"),
        error=row.get("error"),
        context=row["context"],
        log_offset=0,
        transcript_offset=0,
        duration_ms=0,
    )


def continue_texts(store: Store, session: dict, settings: Settings) -> list[str]:
    """The continues supervise typed into the session's agent after a usage limit."""
    return [
        e["detail"].get("text") or settings.limits.continue_text
        for e in store.events(session["id"], "limit_continue")
        if e["detail"].get("typed")
    ]


def without_typed(records: list[dict], typed: list[str], user_text) -> list[dict]:
    """A transcript without the user turns supervise typed: for each text, the latest turn
    that says exactly it (`user_text`: the profile's reading of a record)."""
    said = [user_text(r) for r in records]
    drop = userturns.latest_saying(said, typed)
    return [r for i, r in enumerate(records) if i not in drop]


def session_patterns(session: dict, env: Mapping[str, str]) -> PatternSet | None:
    """The pattern set the session was run with (its agent's, with its own pattern files)."""
    if not session.get("agent"):
        return None
    try:
        options = session.get("options") or {}
        files = [Path(p) for p in options.get("pattern_files", []) if Path(p).exists()]
        return patterns.select(patterns.load_all(files, env), session["agent"])
    except (SuperviseError, ValueError, AttributeError):
        return None


def latest_or_new(store: Store, session: dict, settings: Settings, env: Mapping[str, str]) -> dict:
    """The session's latest context, once its recorder is done (an ended session's last round
    is made after the user has their shell back); made anew first if there is none, or if
    the session showed more after it (it ended without its last round: its recorder killed)."""
    lastround.wait(session, settings.recorder_grace)
    row = store.latest_context(session["id"])
    if row is not None and not lastround.stale(row, session):
        return row
    return make(store, session, "resume", settings, env)
