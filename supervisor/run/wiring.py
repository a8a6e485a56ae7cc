"""Who hears what in the recorder process: the one place it is written.

Everything a subscriber hears reaches it on one thread, the events thread (store/events.py),
in the order it was handed over: events from whatever thread saw them, the frames the render
thread has seen, the agent's own records. The events thread starts once this wiring is done,
so nothing emitted before (a new session's brief) is missed. Each call is guarded on its own
(fanout.py): one that raises is reported by its name, each time, and the others still hear.

Events, after their row and their `m` marker, in this order (a part the run does not have is
left out):
  the exit note              injection, compaction_finished: a message to the PTY loop
  agent states               each event: the state `supervise ps` shows (status/statewatch.py)
  giving the context back    idle, limits, compactions: the injection rules (giveback/delivery.py)
  context keeper             compactions: a context round is wanted (contexts/keeper.py)
  telemetry                  each event: queued to be exported (telemetry/export.py)
Who emits them (each only queues):
  recorder main thread       the PTY loop's events (start, exit, signals); a continue the
                             loop declined (limit_continue)
  render                     the detector's events
  events thread              what a subscriber's hearing means (limit_wait, limit_cleared)
  pattern watcher            patterns_reloaded, patterns_error
  the agent's record         compaction_finished (source transcript), agent_summary: read by
                             the record follower, understood on the events thread
  injection tick             injection, limit_continue
  hook server                compaction_finished (source hook); an injection through the hook
One compaction's sightings (the screen's, the record's, the hook's) are one pair of events
(store/occurrences.py).

Frames (recording/detect.py), each with the screen and what the detector made of it (`Seen`):
the last frame of each batch the render thread rendered, and each frame in which the detector
found something, after its events; a frame still waiting when a newer one comes with no
event between them is told as the newer one. In this order:
  agent states               idle, busy, a dialog, context left: returns the events they
                             mean (limit_cleared), emitted once both have heard the frame
  giving the context back    the screen, for the injection rules

The user's own turns, as the agent's record dates them (events thread), in this order:
  agent states               a turn after a usage limit clears it (limit_cleared): a short
                             turn may render no busy frame
  telemetry                  with the content opt-in only

Telemetry hears the rest where it happens, each an append to its queue: the state changes
(events thread), each context made (the keeper's thread) and the text log's lines (render),
those with the content opt-in only.

Calls across threads besides: the context keeper's thread hands each context it makes to
the detector (`add_given`, under the detector's lock) and to the injection rules (under
theirs: its tick and hook threads use them too), and asks the render thread for the screen
(queued; after SNAPSHOT_WAIT it reads the rows under the text log's lock instead); the main
thread hands the injection rules the loop's notes; the render thread tells the search
indexer (recording/logindex.py) that the text log grew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..contexts.keeper import ContextKeeper
    from ..giveback.delivery import GiveBack
    from ..recording.render import Renderer
    from ..status.statewatch import StateWatch
    from ..store.events import EventSink
    from ..telemetry.export import SessionTelemetry
    from .agentrecord import AgentRecord


def connect(
    sink: EventSink,
    renderer: Renderer,
    *,
    exit_note: Callable[[str, float, dict], None],
    states: StateWatch | None,
    giveback: GiveBack | None,
    keeper: ContextKeeper | None,
    telemetry: SessionTelemetry | None = None,
    record: AgentRecord | None = None,
) -> None:
    """Subscribe each part to what it hears, in the order above."""
    sink.subscribe("the exit note", exit_note)
    if states is not None:
        sink.subscribe("agent states", states.on_event)
        renderer.subscribe("agent states", states.on_frame)
    if giveback is not None:
        sink.subscribe("giving the context back", giveback.on_event)
        renderer.subscribe("giving the context back", giveback.on_frame)
    if keeper is not None:
        sink.subscribe("context keeper", keeper.on_event)
    if telemetry is not None:
        sink.subscribe("telemetry", telemetry.on_event)
        if telemetry.settings.content:  # the text log's lines are content: with the opt-in only
            renderer.lines_to = telemetry.on_lines
        if states is not None:
            states.heard.append(telemetry.on_state)
    if record is not None:
        if states is not None:
            record.heard.append(states.on_user_turn)
        if telemetry is not None and telemetry.settings.content:  # the user's words are content too
            record.heard.append(lambda text, t: telemetry.on_user_turn(text))
