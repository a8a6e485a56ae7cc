"""Make a session's next context round: its log (and transcript) → digest → summary → store.

Used on demand (`supervise summarize`) and by the recorder when a compaction starts or
ends, periodically, and at the end of a session.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from . import context as ctx, digest, summarizer, transcript
from .errors import SuperviseError
from .export import text_lines
from .store import Store


def session_text(session: dict, screen: list[str] | None = None) -> str:
    """What the session showed so far: its text log (rendered again from the recording when
    the supervisor did not finish it), plus the screen as it is now, if given."""
    try:
        text = "\n".join(text_lines(session))
    except SuperviseError:
        text = ""
    if screen:
        text += "\n" + "\n".join(line for line in screen if line.strip())
    return text


def transcript_records(session: dict, env: Mapping[str, str], folder: Path | None = None) -> list[dict]:
    if session.get("agent") != "claude" or not session.get("agent_session_id"):
        return []
    folder = folder or transcript.project_dir(env, session["cwd"])
    return digest.read_transcript([folder / f"{session['agent_session_id']}.jsonl"])


def header(session: dict) -> str:
    return (
        f"Session {session['id']}: `{session['command']}` in {session['cwd']}, agent {session.get('agent') or '?'}, "
        f"started {session['started']}, status {session['status']}."
    )


def make(
    store: Store,
    session: dict,
    trigger: str,
    cfg: summarizer.Config,
    env: Mapping[str, str] | None = None,
    screen: list[str] | None = None,
    template: str | None = None,
    text: str | None = None,
    transcript_dir: Path | None = None,
) -> dict:
    """`text`: what the session showed so far, if the caller has it (a live session: its log
    so far and its screen); else it is read from the session's files."""
    env = os.environ if env is None else env
    previous_row = store.latest_context(session["id"])
    # A resumed session's first context carries on from the one it resumed.
    chained = previous_row or (store.latest_context(session["parent_id"]) if session.get("parent_id") else None)
    previous = chained["context"] if chained else None
    text = session_text(session, screen) if text is None else text
    records = transcript_records(session, env, transcript_dir)
    d = digest.build(text, cfg.budget, records, header(session))
    # The estimate is a heuristic; where the API can count, believe it and shrink to fit.
    counted = summarizer.count_tokens(d, previous, cfg)
    if counted and counted > cfg.budget:
        d = digest.build(text, max(1000, int(cfg.budget * d.tokens / counted * 0.95)), records, header(session))
        counted = summarizer.count_tokens(d, previous, cfg) or counted
    result = summarizer.summarize(d, previous, cfg)
    round_no = (previous_row["round"] + 1) if previous_row else 1
    return store.add_context(
        session["id"],
        trigger=trigger,
        source=result.source,
        model=result.model,
        error=result.error,
        digest_tokens=counted or d.tokens,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        cost_usd=result.cost_usd,
        context=result.context,
        prompt=ctx.render(result.context, round_no, template),
    )


def latest_or_new(store: Store, session: dict, cfg: summarizer.Config, env: Mapping[str, str]) -> dict:
    """The session's latest context; made anew first if there is none, or if the session
    showed more after it was made (a supervisor killed before its session-end context)."""
    row = store.latest_context(session["id"])
    if row is not None and not _stale(row, session):
        return row
    return make(store, session, "resume", cfg, env, template=load_template(env))


def _stale(row: dict, session: dict) -> bool:
    made = datetime.fromisoformat(row["created"]).timestamp()
    last_output = 0.0
    for key in ("cast_path", "log_path"):
        try:
            last_output = max(last_output, os.stat(session[key]).st_mtime)
        except (OSError, KeyError, TypeError):
            pass
    return last_output > made + 1.0  # a second's grace: the log is closed just before the last context


def load_template(env: Mapping[str, str]) -> str | None:
    """The user's context prompt template (~/.config/supervise/context_prompt.txt), if any."""
    path = summarizer.config_file(env).parent / "context_prompt.txt"
    return path.read_text(encoding="utf-8") if path.is_file() else None
