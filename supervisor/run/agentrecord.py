"""The agent's own record of the session (its transcript or rollout files), followed by the
recorder: the agent's session id, the user's turns (which confirm a context typed in), its
compactions and the summaries it made of them, as events. Each record is handed to the
events thread (store/events.py) in the order it was read, and understood there, in turn with
the events. What a record means is the profile's `transcript` module's to say."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

from ..channel import RecorderConfig
from ..contexts.digest import estimate_tokens
from ..detection import transcript
from ..giveback.delivery import GiveBack
from ..redact import redact
from ..store.events import EventSink

EARLIER = 2.0  # seconds before the run began: a record dated earlier is an earlier run's


class AgentRecord:
    def __init__(
        self,
        reader: ModuleType,
        cfg: RecorderConfig,
        sink: EventSink,
        giveback: GiveBack | None,
        now: Callable[[], float],
        summarized: Iterable[str] = (),
        gave: Callable[[str], bool] = lambda text: False,
    ):
        """`summarized`: the summaries the agent made in the session this one carries on (its
        history, written again as it resumes, is no new compaction); `gave`: is a text one
        supervise typed in (a context, a continue), not the user's own words?"""
        self.reader, self.cfg, self.sink, self.giveback, self.now = reader, cfg, sink, giveback, now
        self.gave = gave
        # told each turn of the user's own, with its session time by the record (None if it has none)
        self.heard: list[Callable[[str, float | None], None]] = []
        self.agent_session_id: str | None = None
        self.summarized = set(summarized)
        self.from_door: set[str] = set()  # summaries its door gave this run (its record's copy is no history)
        cwd, carried_on = cfg.cwd or "", cfg.agent_session_id
        self.follower = transcript.TranscriptFollower(
            Path(cfg.transcript_dir or "."),
            lambda record, path: sink.call("the agent's record", self.on_record, record, path),
            source=reader.SOURCE,
            claims=lambda record, path: reader.claims(record, path, cwd, carried_on),
        )
        if carried_on:  # its record of the thread it carries on may not say the id again
            sink.call("the agent's record", self._known, carried_on)

    def start(self) -> None:
        # Taking the offsets of what the files hold now reads them (a JSON document whole): off the recorder's way.
        self._starting = threading.Thread(target=self.follower.start, name="supervise-record-start", daemon=True)
        self._starting.start()

    def stop(self) -> None:
        self._starting.join(10)
        self.follower.stop()

    def door_said(self, sid: str | None, summary: str | None, t: float) -> None:
        """On the events thread: what the agent's door said. Its session id is taken where its
        record has not (yet) said one; its summary of a compaction is kept once, whichever of
        the two says it first."""
        if sid and self.agent_session_id is None:
            self._known(sid)
        if summary is not None:
            self._summary(redact(summary), t, "hook")

    def _known(self, sid: str) -> None:
        if sid != self.agent_session_id:
            self.agent_session_id = sid
            self.sink.set_agent_session_id(sid)

    def on_record(self, record: dict, path: Path) -> None:
        """On the events thread."""
        reader = self.reader
        sid = reader.session_id(record)
        if sid:
            self._known(sid)
        wall = reader.timestamp(record)
        earlier = bool(wall and self.cfg.started_wall and wall < self.cfg.started_wall - EARLIER)
        said = reader.user_text(record)
        if self.giveback is not None and said:
            self.giveback.on_user_turn(said)
        if said and self.heard and not earlier and not self.gave(said):
            dated = self._t(wall) if wall and self.cfg.started_wall else None
            for listener in self.heard:
                listener(said, dated)
        detail = reader.compaction(record)
        summary = reader.summary(record)
        if detail is None and summary is None:
            return
        if summary is not None:
            summary = redact(summary)  # kept to be set beside ours: masked as everything we show is
            if summary in self.summarized and summary not in self.from_door:
                return  # a summary it made before, in a history it set again
            self.from_door.discard(summary)  # its door's, now in its record: any later copy is history
        if earlier:
            return  # an earlier run's, written again (a resumed session's history)
        t = self._t(wall)
        if detail is not None:
            self.sink.emit("compaction_finished", t, {**detail, "transcript": path.name}, "transcript")
        if summary is not None:
            self._summary(summary, t, "transcript")

    def _t(self, wall: float | None) -> float:
        """A record's session time: by its own date where it has one, else when it was read;
        never later than now, whatever the agent's clock says (one running ahead)."""
        t = max(0.0, wall - self.cfg.started_wall if wall and self.cfg.started_wall else self.now())
        return min(t, self.now())

    def _summary(self, summary: str, t: float, source: str) -> None:
        if summary in self.summarized:
            return  # said already (its door and its record each say it once)
        self.summarized.add(summary)
        if source == "hook":
            self.from_door.add(summary)
        self.sink.emit("agent_summary", t, {"text": summary, "tokens": estimate_tokens(summary)}, source)
