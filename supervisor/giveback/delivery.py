"""Giving the context back, in the recorder process: the injection rules (injection.py) put
to work. Owns the tick thread (awake only while a delivery is due or under way, or a usage
limit is waited out) and the server that answers an agent's hook; feeds the
rules what the recorder sees (events, frames, the transcript's user turns, new contexts, the
loop's notes). With `--on-limit wait`, types a continue once a limit has reset
(limitwait.py), the wait shown in the terminal's title meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .. import paths
from ..channel import Inject, Note, Terminal
from ..config import Limits
from ..detection.detector import Seen
from .given import Context, Continue
from .injection import Injector
from .limitwait import LimitWait

if TYPE_CHECKING:
    import socket

TICK = 0.1  # seconds between ticks while a delivery is due or under way
WAIT_CHECK = 30.0  # seconds: the most a usage limit's continue may be late (by the wall clock)
PRECOMPACT = "precompact"  # the source a door asks with as its agent starts compacting: a witness only
# what a door's ask witnesses, by its source
WITNESSED = {"compact": "compaction_finished", PRECOMPACT: "compaction_started"}


def witnessed(request: dict) -> tuple[str, dict] | None:
    """The compaction event a door's ask is a witness of (its kind, and the trigger it names), if any."""
    kind = WITNESSED.get(str(request.get("source", "")))
    if kind is None:
        return None
    trigger = request.get("trigger")
    return kind, ({"trigger": trigger} if isinstance(trigger, str) and trigger else {})


def session_of(request: dict) -> str | None:
    """The agent's own session id, as its door's request names it."""
    sid = request.get("session_id") or request.get("sessionId")
    return sid if isinstance(sid, str) and sid.strip() else None


def summary_of(request: dict) -> str | None:
    """The agent's own summary of its compaction, where its door's request carries it."""
    text = request.get("summary") or request.get("compact_summary")
    return text if isinstance(text, str) and text.strip() else None


class GiveBack:
    def __init__(
        self,
        mode: str,
        *,
        hook_socket: str | None,
        hook_listener: socket.socket | None = None,
        hook_wait: float,
        door_file: str | None = None,
        door_at_prompt: bool = False,
        send: Callable[[Inject | Terminal], None],
        record: Callable[[str, float, dict], object],  # (what they return is not used)
        compaction_seen: Callable[[str, float, dict], object],
        now: Callable[[], float],
        paste_mode: Callable[[], bool],
        fail: Callable[[str, BaseException], None],
        limits: Limits = Limits(),
        name: str | None = None,
        door_said: Callable[[str | None, str | None, float], object] = lambda sid, summary, t: None,
    ):
        """`compaction_seen(kind, t, detail)`: the agent's door saw its compaction start or end;
        `door_said(session id, summary, t)`: what else its door said (its own session's id, its
        own summary of the compaction), where it did."""
        self._send = send
        self._record = record
        self._limits = limits
        self._name = name
        self.waits = LimitWait(limits)
        self._waits_lock = threading.Lock()
        self._door_file = door_file
        self.injector = Injector(
            mode, send=send, record=self._recorded, write=self._write_door if door_file else None, door_at_prompt=door_at_prompt
        )
        self._hook_wait = hook_wait
        self._compaction_seen = compaction_seen
        self._door_said = door_said
        self._now = now
        self._paste_mode = paste_mode
        self._fail = fail
        self._stopping = threading.Event()
        self._hooks = None
        if hook_socket:
            from .hookserver import HookServer

            try:
                self._hooks = HookServer(hook_socket, self._hook_answer, fail, hook_listener)
            except OSError as exc:
                fail("context hook", exc)
        self._ticker = threading.Thread(target=self._tick, name="supervise-inject", daemon=True)
        self._ticker.start()

    # -- what the recorder sees ------------------------------------------------------------------

    def on_event(self, kind: str, t: float, detail: dict) -> None:
        if kind == "idle_prompt":
            self.injector.on_idle_event(t)
        elif kind == "limit_reached":
            self._limit_reached(t, detail)
        elif kind == "limit_cleared":  # working again by itself: no continue of ours
            self._call_off()
        else:
            self.injector.on_event(kind, t)

    def on_frame(self, t: float, screen: list[str], seen: Seen) -> None:
        self.injector.on_frame(t, screen, seen.idle, seen.busy, seen.dialog, self._paste_mode())

    def on_context(self, row: dict, session_id: str) -> None:
        self.injector.on_context(Context(session_id, row["round"], row["prompt"], self._now()))

    def on_user_turn(self, text: str) -> None:
        self.injector.on_user_turn(text)

    def on_note(self, note: Note) -> None:
        if note.state == "cancelled":  # the user typed while a continue waited
            self._call_off(note.id, "the user typed")
            return
        self.injector.on_note(note, self._now())

    # -- usage limits ----------------------------------------------------------------------------

    def _limit_reached(self, t: float, detail: dict) -> None:
        with self._waits_lock:
            earlier = self.waits.cancel()
            wait, why = self.waits.reached(detail, datetime.now().astimezone())
        if earlier is not None:
            self.injector.drop_continue(earlier.id)
        if wait is not None:
            self._send(Terminal("title", wait.title(self._name), wait.id))
            self._record(
                "limit_wait",
                t,
                {"wait": wait.id, "continue_at": datetime.fromtimestamp(wait.due).astimezone().isoformat(timespec="seconds")},
            )
            self.injector.wake()
        elif why is not None:
            self._record("limit_wait", t, {"no_wait": why})

    def _call_off(self, wait_id: int | None = None, why: str = "the agent works again") -> None:
        with self._waits_lock:
            current = self.waits.pending or self.waits.typing
            if current is None or (wait_id is not None and current.id != wait_id):
                return
            self.waits.cancel()
        self.injector.drop_continue(current.id)
        self._send(Terminal("title", None, current.id))
        self._record("limit_wait", self._now(), {"wait": current.id, "called_off": why})

    def _continue_if_due(self) -> None:
        with self._waits_lock:
            wait = self.waits.due(time.time())
        if wait is not None:
            self.injector.give_continue(Continue(wait.id, self._limits.continue_text))

    def _recorded(self, kind: str, t: float, detail: dict) -> None:
        """What the injection rules did, recorded; a continue typed (or not) ends its wait."""
        if kind == "limit_continue":
            with self._waits_lock:
                done = self.waits.finished(detail.get("typed", False))
            if done is not None:
                self._send(Terminal("title", None, done.id))
        self._record(kind, t, detail)

    def resume(self) -> None:
        self.injector.resume()

    def brief(self, session_id: str, text: str) -> None:
        """The session's brief (round 0 of its own: no context of its has that round) is due."""
        self.injector.brief(Context(session_id, 0, text, self._now()))

    def answer_hooks(self) -> None:
        """What is due at the start is known: answer the agent's hook (an ask made before waits in the socket's backlog)."""
        if self._hooks is not None and self._hooks.ident is None:
            self._hooks.start()

    def close(self) -> None:
        """The child is gone: nothing more to type or hand over."""
        with self._waits_lock:
            self.waits.cancel()
        self._stopping.set()
        self.injector.close()
        if self._hooks is not None:
            self._hooks.close()

    # -- threads -----------------------------------------------------------------------------

    def _tick(self) -> None:
        inj = self.injector
        # Ten ticks a second only while a delivery is due or under way; otherwise asleep, but
        # for a continue's time: looked at by the wall clock at least every WAIT_CHECK seconds
        # (a laptop that slept through the reset continues when it wakes).
        while inj.wait_for_work(self._until_due()) and not self._stopping.wait(TICK):
            try:
                self._continue_if_due()
                inj.tick(self._now())
            except Exception as exc:
                self._fail("context injection", exc)

    def _until_due(self) -> float | None:
        with self._waits_lock:
            left = self.waits.until_due(time.time())
        return None if left is None else min(left, WAIT_CHECK)

    def _write_door(self, text: str) -> None:
        """The context where the agent reads it before its next request (replacing the last)."""
        assert self._door_file is not None
        try:
            paths.write_private(Path(self._door_file), text)
        except OSError as exc:
            self._fail("context file", exc)

    def _hook_answer(self, request: dict) -> str | None:
        source = str(request.get("source", ""))
        seen = witnessed(request)
        if seen is not None:  # one more witness of its compaction, beside the screen and its record
            self._compaction_seen(seen[0], self._now(), seen[1])
        sid, summary = session_of(request), summary_of(request)
        if sid is not None or summary is not None:
            self._door_said(sid, summary, self._now())
        if source == PRECOMPACT:
            return None
        return self.injector.hook(source, self._now, self._hook_wait)
