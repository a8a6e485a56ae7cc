"""Giving the context back, in the recorder process: the injection rules (injection.py) put
to work. Owns the tick thread (awake only while a delivery is due or under way) and the
server that answers Claude Code's SessionStart hook; feeds the rules what the recorder sees
(events, frames, the transcript's user turns, new contexts, the loop's notes).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .channel import Inject, Note
from .detector import Detector
from .injection import Context, Injector

TICK = 0.1  # seconds between ticks while a delivery is due or under way


class GiveBack:
    def __init__(
        self,
        mode: str,
        *,
        hook_socket: str | None,
        hook_wait: float,
        send: Callable[[Inject], None],
        record: Callable[[float, dict], None],
        compaction_seen: Callable[[float], None],
        now: Callable[[], float],
        paste_mode: Callable[[], bool],
        fail: Callable[[str, BaseException], None],
    ):
        self.injector = Injector(mode, send=send, record=record)
        self._hook_wait = hook_wait
        self._compaction_seen = compaction_seen
        self._now = now
        self._paste_mode = paste_mode
        self._fail = fail
        self._stopping = threading.Event()
        self._hooks = None
        if hook_socket:
            from .hookserver import HookServer

            try:
                self._hooks = HookServer(hook_socket, self._hook_answer, fail)
                self._hooks.start()
            except OSError as exc:
                fail("context hook", exc)
        self._ticker = threading.Thread(target=self._tick, name="supervise-inject", daemon=True)
        self._ticker.start()

    # -- what the recorder sees ------------------------------------------------------------------

    def on_event(self, kind: str, t: float, detail: dict) -> None:
        if kind == "idle_prompt":
            self.injector.on_idle_event(t)
        else:
            self.injector.on_event(kind, t)

    def on_frame(self, t: float, screen: list[str], detector: Detector) -> None:
        self.injector.on_frame(t, screen, detector.idle, detector.busy, detector.dialog_up(screen), self._paste_mode())

    def on_context(self, row: dict, session_id: str) -> None:
        self.injector.on_context(Context(session_id, row["round"], row["prompt"], self._now()))

    def on_user_turn(self, text: str) -> None:
        self.injector.on_user_turn(text)

    def on_note(self, note: Note) -> None:
        self.injector.on_note(note, self._now())

    def resume(self) -> None:
        self.injector.resume()

    def close(self) -> None:
        """The child is gone: nothing more to type or hand over."""
        self._stopping.set()
        self.injector.close()
        if self._hooks is not None:
            self._hooks.close()

    # -- threads -----------------------------------------------------------------------------

    def _tick(self) -> None:
        inj = self.injector
        # Ten ticks a second only while a delivery is due or under way; otherwise asleep.
        while inj.wait_for_work() and not self._stopping.wait(TICK):
            try:
                inj.tick(self._now())
            except Exception as exc:
                self._fail("context injection", exc)

    def _hook_answer(self, request: dict) -> str | None:
        source = str(request.get("source", ""))
        if source == "compact":  # the hook is one more witness that a compaction finished
            self._compaction_seen(self._now())
        return self.injector.hook(source, self._now, self._hook_wait)
