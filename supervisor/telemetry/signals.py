"""What supervise exports, named once: the metrics and the log records a session's events,
states and context rounds become. Plain functions over data; export.py sends what they make.
docs/teams.md tables every name and attribute here (a test holds the two together).

Names follow the OpenTelemetry semantic conventions where one applies (`host.name`,
`service.*` on the resource, `gen_ai.token.type` on tokens), `supervise.` otherwise. Metrics
carry the few attributes a dashboard groups by (agent, its release, project, and what is
counted); a log record carries the session's id as well, and what happened.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..status.states import STATES

# name -> (instrument, unit, description)
METRICS: dict[str, tuple[str, str, str]] = {
    "supervise.session.started": ("counter", "{session}", "Sessions started, by kind (new, resume, handoff)"),
    "supervise.session.ended": ("counter", "{session}", "Sessions ended, by outcome (exited, failed, signal)"),
    "supervise.compactions": ("counter", "{compaction}", "Compactions the agent finished or failed, by trigger"),
    "supervise.context.rounds": ("counter", "{round}", "Session contexts made, by backend, source and trigger"),
    "supervise.context.tokens": ("counter", "{token}", "Tokens the contexts' summaries took, by backend and gen_ai.token.type"),
    "supervise.context.cost": ("counter", "USD", "What the contexts' summaries cost, by backend"),
    "supervise.context.given_back": ("counter", "{context}", "Contexts given back to the agent, by channel and reason"),
    "supervise.state.time": ("observable_counter", "s", "Time the agents spent in each state"),
    "supervise.sessions.active": ("observable_updowncounter", "{session}", "Sessions running now, by state"),
    "supervise.limit.reached": ("counter", "{limit}", "Usage limits reached"),
    "supervise.limit.continues": ("counter", "{continue}", "Continues after a limit, by whether supervise typed one"),
    "supervise.handoffs": ("counter", "{handoff}", "Sessions that took over another agent's work, by the agent they took it from"),
    "supervise.lookups": ("counter", "{lookup}", "Lookups in what supervise recorded, by way (mcp, cli) and tool"),
    "supervise.telemetry.dropped": ("counter", "{log_record}", "Log records not sent (the endpoint down or the queue full)"),
}

# event kind -> (the log record's event name, its body without content); only these are exported
EVENTS = {
    "start": ("supervise.session.start", "session started"),
    "exit": ("supervise.session.end", "session ended"),
    "compaction_started": ("supervise.compaction.started", "compaction started"),
    "compaction_finished": ("supervise.compaction.finished", "compaction finished"),
    "compaction_failed": ("supervise.compaction.failed", "compaction failed"),
    "injection": ("supervise.context.given_back", "context given back"),
    "limit_reached": ("supervise.limit.reached", "usage limit reached"),
    "limit_wait": ("supervise.limit.wait", "waiting out the usage limit"),
    "limit_cleared": ("supervise.limit.cleared", "usage limit cleared"),
    "limit_continue": ("supervise.continue.typed", "continue after the limit"),
    "brief": ("supervise.brief.given", "brief given"),
    "agent_summary": ("supervise.agent.summary", "the agent summarized its session"),
}
CONTEXT_MADE = "supervise.context.made"
HANDOFF = "supervise.handoff"
USER_REQUEST = "supervise.user.request"  # content: with the opt-in only
LOG_LINES = "supervise.log.lines"  # content: with the opt-in only
WARN_KINDS = ("compaction_failed", "limit_reached")

# a detail's key -> its attribute, for the records that carry it (the rest are left out)
DETAIL_ATTRIBUTES = {
    "trigger": "supervise.compaction.trigger",
    "pre_tokens": "supervise.compaction.tokens_before",
    "post_tokens": "supervise.compaction.tokens_after",
    "sources": "supervise.sources",
    "channel": "supervise.giveback.channel",
    "reason": "supervise.giveback.reason",
    "confirmed": "supervise.giveback.confirmed",
    "round": "supervise.context.round",
    "chars": "supervise.context.chars",
    "reset_at": "supervise.limit.reset_at",
    "continue_at": "supervise.limit.continue_at",
    "typed": "supervise.continue.typed",
    "why": "supervise.continue.why",
    "exit_code": "process.exit.code",
    "signal": "supervise.signal",
    "tokens": "supervise.tokens",
    "sessions": "supervise.brief.sessions",
}
# what is text the user or the agent wrote: a record's body, with the opt-in only
CONTENT_KEYS = {"brief": "text", "agent_summary": "text"}


@dataclass(frozen=True)
class Session:
    """What every record of a session carries."""

    id: str
    agent: str
    release: str | None = None
    project: str | None = None
    project_id: str | None = None
    kind: str = "new"  # new, resume, handoff
    parent: str | None = None
    handoff_from: str | None = None

    def metric_attributes(self) -> dict[str, str]:
        found = {
            "supervise.agent": self.agent,
            "supervise.agent.version": self.release,
            "supervise.project": self.project,
            "supervise.project.id": self.project_id,
        }
        return {k: v for k, v in found.items() if v}

    def record_attributes(self) -> dict[str, str]:
        return {"supervise.session.id": self.id, **self.metric_attributes()}


@dataclass(frozen=True)
class Count:
    """A metric's value to export."""

    metric: str
    value: float
    attributes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Record:
    """A log record to export."""

    event: str
    body: str
    attributes: dict
    warn: bool = False


def project_name(root: str | None) -> str | None:
    """A project as a dashboard names it: its folder's name (its path is the user's)."""
    return os.path.basename(root.rstrip("/")) or root if root else None


def project_id(key: str | None) -> str | None:
    """What tells apart two projects whose folders share a name, and follows one that moves:
    its key, hashed (a key may hold a path, and the path is the user's)."""
    return hashlib.sha256(key.encode()).hexdigest()[:16] if key else None


def of_event(kind: str, detail: Mapping, session: Session, content: bool) -> tuple[list[Count], list[Record]]:
    """What one recorded event exports."""
    if kind not in EVENTS:
        return [], []
    event = EVENTS[kind][0]
    base = session.metric_attributes()
    attributes = {**session.record_attributes(), **_detail_attributes(detail)}
    counts: list[Count] = []
    records = [Record(event, _said(kind, detail, content), attributes, kind in WARN_KINDS)]
    if kind == "start":
        counts.append(Count("supervise.session.started", 1, {**base, "supervise.session.kind": session.kind}))
        attributes["supervise.session.kind"] = session.kind
        if session.parent:
            attributes["supervise.session.parent"] = session.parent
        if session.handoff_from:
            counts.append(Count("supervise.handoffs", 1, {**base, "supervise.handoff.from": session.handoff_from}))
            records.append(
                Record(
                    HANDOFF,
                    f"{session.agent} took over {session.handoff_from}'s work",
                    {**attributes, "supervise.handoff.from": session.handoff_from},
                )
            )
    elif kind == "exit":
        attributes["supervise.session.outcome"] = outcome = _outcome(detail)
        counts.append(Count("supervise.session.ended", 1, {**base, "supervise.session.outcome": outcome}))
    elif kind in ("compaction_finished", "compaction_failed"):
        outcome = "finished" if kind == "compaction_finished" else "failed"
        trigger = str(detail.get("trigger") or "unknown")
        counts.append(
            Count("supervise.compactions", 1, {**base, "supervise.compaction.trigger": trigger, "supervise.compaction.outcome": outcome})
        )
    elif kind == "injection":
        counts.append(
            Count(
                "supervise.context.given_back",
                1,
                {
                    **base,
                    "supervise.giveback.channel": str(detail.get("channel") or "unknown"),
                    "supervise.giveback.reason": str(detail.get("reason") or "unknown"),
                },
            )
        )
    elif kind == "limit_reached":
        counts.append(Count("supervise.limit.reached", 1, base))
    elif kind == "limit_continue":
        counts.append(Count("supervise.limit.continues", 1, {**base, "supervise.continue.typed": bool(detail.get("typed", True))}))
    return counts, records


def of_context(row: Mapping, session: Session, content: bool) -> tuple[list[Count], list[Record]]:
    """What one context round exports: counted by backend, its tokens and cost; its text with the opt-in."""
    backend = str(row.get("backend") or row.get("source") or "unknown")
    base = {**session.metric_attributes(), "supervise.context.backend": backend}
    counts = [
        Count(
            "supervise.context.rounds",
            1,
            {
                **base,
                "supervise.context.source": str(row.get("source") or "unknown"),
                "supervise.context.trigger": str(row.get("trigger") or "unknown"),
            },
        )
    ]
    for key, kind in (("input_tokens", "input"), ("output_tokens", "output")):
        if row.get(key):
            counts.append(Count("supervise.context.tokens", int(row[key]), {**base, "gen_ai.token.type": kind}))
    if row.get("cost_usd"):
        counts.append(Count("supervise.context.cost", float(row["cost_usd"]), base))
    found = {
        "supervise.context.round": row.get("round"),
        "supervise.context.trigger": row.get("trigger"),
        "supervise.context.source": row.get("source"),
        "supervise.context.backend": backend,
        "gen_ai.request.model": row.get("model"),
        "gen_ai.usage.input_tokens": row.get("input_tokens"),
        "gen_ai.usage.output_tokens": row.get("output_tokens"),
        "supervise.context.cost_usd": row.get("cost_usd"),
    }
    attributes = {**session.record_attributes(), **{k: v for k, v in found.items() if v is not None}}
    body = str(row.get("prompt") or "") if content else f"context round {row.get('round')} made ({row.get('trigger')})"
    return counts, [Record(CONTEXT_MADE, body, attributes)]


def of_user_request(text: str, session: Session) -> Record:
    return Record(USER_REQUEST, text, session.record_attributes())


def of_log_lines(lines: list[str], session: Session) -> Record:
    return Record(LOG_LINES, "\n".join(lines), session.record_attributes())


def _said(kind: str, detail: Mapping, content: bool) -> str:
    key = CONTENT_KEYS.get(kind)
    if key and content and detail.get(key):
        return str(detail[key])
    return EVENTS[kind][1]


def _detail_attributes(detail: Mapping) -> dict:
    found = {}
    for key, name in DETAIL_ATTRIBUTES.items():
        value = detail.get(key)
        if value is None or isinstance(value, dict):
            continue
        if isinstance(value, (list, tuple)):
            value = [str(v) for v in value]
        found[name] = value
    return found


def _outcome(detail: Mapping) -> str:
    if detail.get("signal"):
        return "signal"
    return "exited" if detail.get("exit_code") == 0 else "failed"


class StateClock:
    """Time in each state, from the changes `supervise ps` is told of (session seconds)."""

    def __init__(self) -> None:
        self.state = STATES[0]
        self.since = 0.0
        self.spent: dict[str, float] = {}
        self.ended = False

    def change(self, name: str, since: float) -> None:
        if self.ended:
            return
        self.spent[self.state] = self.spent.get(self.state, 0.0) + max(0.0, since - self.since)
        self.state, self.since = name, max(since, self.since)

    def end(self, t: float) -> None:
        self.change(self.state, t)
        self.ended = True

    def totals(self, now: float) -> dict[str, float]:
        """Seconds in each state so far, the one under way counted to `now`."""
        spent = dict(self.spent)
        if not self.ended:
            spent[self.state] = spent.get(self.state, 0.0) + max(0.0, now - self.since)
        return spent

    def current(self) -> str | None:
        return None if self.ended else self.state
