"""Who hears what in the recorder process, and on which thread: the one place it is written.

Two fan-outs (fanout.py: named subscribers, each call guarded on its own: one that raises is
reported by its name, which the recorder says once, and the others still hear). Each runs
on the caller's thread; nothing is handed to another thread on the way.

Events (store/events.py), after their row and their `m` marker, in this order (a part the
run does not have is left out):
  the exit note              injection, compaction_finished: a message to the PTY loop
  agent states               each event: the state `supervise ps` shows (status/statewatch.py)
  giving the context back    idle, limits, compactions: the injection rules (giveback/delivery.py)
  context keeper             compactions: a context round is wanted (contexts/keeper.py)
  telemetry                  each event: queued to be exported (telemetry/export.py)
An event is emitted on these threads, and its subscribers hear it there:
  recorder main thread       the PTY loop's events (start, exit, signals); a continue the
                             loop declined (limit_continue)
  render                     the detector's events; then each frame's, from its subscribers
  pattern watcher            patterns_reloaded, patterns_error
  transcript follower        compaction_finished (source transcript); an injection it confirms
  injection tick             injection, limit_continue
  hook server                compaction_finished (source hook); an injection through the hook
A subscriber that emits while it hears an event (giving the context back records its
limit_wait) has its event recorded and told on the same thread once every subscriber has
heard the first.

Frames (recording/detect.py), on the render thread, after the detector's events, in this
order, each with the screen and what the detector made of it (`Seen`):
  agent states               idle, busy, a dialog, context left: returns the events they
                             mean (limit_cleared), recorded once both have heard the frame
  giving the context back    the screen, for the injection rules

Telemetry hears the rest where it happens, each an append to its queue: the state changes
(on the thread that changed it), each context made (the keeper's thread), the text log's lines
(render) and the user's turns (transcript follower), those two with the content opt-in only.

Calls across threads besides: the context keeper's thread hands each context it makes to
the detector (`add_given`, under the detector's lock) and to the injection rules, and asks
the render thread for the screen (queued; after SNAPSHOT_WAIT it reads the rows under the
text log's lock instead); the transcript follower hands the user's turns to the injection
rules; the main thread hands them the loop's notes.
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


def connect(
    sink: EventSink,
    renderer: Renderer,
    *,
    exit_note: Callable[[str, float, dict], None],
    states: StateWatch | None,
    giveback: GiveBack | None,
    keeper: ContextKeeper | None,
    telemetry: SessionTelemetry | None = None,
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
