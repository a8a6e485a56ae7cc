"""One compaction, one pair of events, whoever saw it.

A compaction is seen by up to three witnesses: the screen (a banner, then a result line, each
perhaps twice), the agent's own record (stamped by the agent's clock, and read a moment after it
is written) and its hook. They arrive in any order: an agent's database may say a compaction
finished 30 ms before its screen says it started. Each sighting is matched here to the
compaction it belongs to, and a compaction is recorded as one `compaction_started` and one
`compaction_finished` (or `compaction_failed`): the first sighting of each is recorded, the
others join it (their source and patterns added to its detail). A compaction first seen
finished gets its start recorded with it, at the same moment.

A session that carries on another of the same agent first shows its history again, old
compactions' signs among them: what the screen shows before the agent is first given
something (supervise's context typed in, or HISTORY seconds) is history, not a compaction.

Plain decisions over data; the event sink acts on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

STARTED = "compaction_started"
ENDS = frozenset({"compaction_finished", "compaction_failed"})
KINDS = ENDS | {STARTED}

RUNNING = 600.0  # seconds a compaction may take: an end within it belongs to the one under way
LATE = 30.0  # seconds after its end within which another witness may still report a compaction
REPEAT = 10.0  # seconds within which one witness saying it again is the same compaction (two lines)
HISTORY = 60.0  # seconds a resumed agent may take to draw its history again
SCREEN = "regex"  # the witness that reads the screen


@dataclass
class Compaction:
    """What has been recorded of one compaction: each event's key (its id, once written)."""

    started_t: float
    started: object = None
    start_sources: set[str] = field(default_factory=set)
    end_kind: str | None = None
    end_t: float = 0.0
    end: object = None
    end_sources: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Decision:
    """`record`: the kinds to write as new events, in order (a start, an end, or both), at
    `at` (an end is never before its start, whatever the witness's clock said); `join`: which
    of the compaction's events this sighting is one more witness of ("started", "end"), if any."""

    record: tuple[str, ...] = ()
    join: str | None = None
    at: float = 0.0


class Compactions:
    def __init__(self, history: bool = False) -> None:
        """`history`: the session carries on another of the same agent, which draws it again."""
        self.last: Compaction | None = None
        self.history = history

    def given(self) -> None:
        """The agent was typed something (a context, a continue): what it shows now is new."""
        self.history = False

    def sight(self, kind: str, t: float, source: str) -> Decision:
        """Where a sighting of `kind` at `t` by `source` belongs; the state follows it."""
        if self.history and source == SCREEN and t <= HISTORY:
            return Decision()  # an old compaction's sign, drawn again with the history
        last = self.last
        if kind == STARTED:
            if last is not None and last.end_kind is None and abs(t - last.started_t) <= RUNNING:
                last.start_sources.add(source)
                return Decision(join="started")
            if last is not None and last.end_kind is not None and source not in last.start_sources and abs(t - last.end_t) <= LATE:
                last.start_sources.add(source)  # the end was seen first (a record read before the screen)
                return Decision(join="started")
            self.last = Compaction(t, start_sources={source})
            return Decision(record=(STARTED,), at=t)
        if last is not None and last.end_kind is None and abs(t - last.started_t) <= RUNNING:
            last.end_kind, last.end_t, last.end_sources = kind, max(t, last.started_t), {source}
            return Decision(record=(kind,), at=last.end_t)
        if last is not None and last.end_kind is not None and self._late(last, t, source, last.end_sources):
            last.end_sources.add(source)
            return Decision(join="end")
        self.last = Compaction(t, start_sources={source}, end_kind=kind, end_t=t, end_sources={source})
        return Decision(record=(STARTED, kind), at=t)

    @staticmethod
    def _late(last: Compaction, t: float, source: str, sources: set[str]) -> bool:
        """One more witness of a compaction that has ended: another source within LATE of its
        end, or the same one again within REPEAT (a banner and its result line)."""
        window = REPEAT if source in sources else LATE
        return abs(t - last.end_t) <= window

    def keys(self, decision: Decision, made: list[object]) -> None:
        """The ids of the events recorded for `decision`, in its order."""
        last = self.last
        if last is None or not decision.record:
            return  # nothing recorded (a sign of history drawn again)
        for kind, key in zip(decision.record, made):
            if kind == STARTED:
                last.started = key
            else:
                last.end = key

    def joined(self, decision: Decision) -> object:
        """The id of the event a joining sighting adds to."""
        assert self.last is not None
        return self.last.started if decision.join == "started" else self.last.end
