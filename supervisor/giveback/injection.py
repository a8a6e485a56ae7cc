"""When and how to give the agent its session context back. Pure: no I/O, a clock passed in.
Decisions are made under the lock; what they lead to (a request to type, an injection
event to record) is done after it is released, so a slow disk or a full pipe never holds
up the render thread or a hook.

Lives in the recorder process, which sees everything this needs: detection events, new
contexts, the rendered screen, the transcript and the terminal modes. It never types
itself: it asks the PTY loop to (`send`), and the loop, which sees the user's keys, has the
last word (it declines while the user is typing and holds their keys back meanwhile).

Two channels:
- hook: an agent's own door (its profile's hook, plugin or extension: after a compaction, on
  resume, at start-up, before a prompt of the user's) asks us over a socket, and we answer with
  the context, or a new session's brief. Nothing is typed. A door that says it is open (a
  plugin or extension loaded, which asks before each of the user's prompts) takes every
  context from then on; until one does, the typed channel stays the fallback. A door that asks
  only as a turn of the user's starts (a hook its agent runs then) cannot say so before: it is
  taken for open from the start, and a user's turn that leaves a ready context behind has that
  one typed.
- file: an agent that reads a file of ours before each model request (its profile's door):
  the context is written there as soon as it is due and ready. Nothing is typed.
- typed: once the context is due and ready, the agent idle at its prompt (idle pattern, no
  busy line, no dialog on screen) and its output quiet, the prompt is typed in: as one
  bracketed paste if the agent enabled it, else as one line; Enter goes separately. It is
  confirmed when the transcript records it as a user turn, or after Enter the agent shows
  its busy line or comes back to idle having left it; if neither happens it is retried once (Enter alone if the screen
  changed since, as the text is there but was not taken; the whole text if not).

A context is given at most once, by whichever channel gets there first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..channel import Inject, Note
from ..config import COMPACTION_MAX, CONTEXT_FRESH
from ..plaintext import plain
from .given import Attempt, Context, Continue, Due, head, prepare

QUIET = 0.6  # seconds of no output before typing: the agent has finished drawing
CONFIRM_WAIT = 8.0  # after Enter, how long the agent has to take the text
DECLINED_PAUSE = 1.0  # after the loop declined (the user was typing), wait this long
START_REASONS = ("resume", "brief")  # what an agent's hook may be given as it starts
OPENED = "open"  # the source a door asks with once loaded: it will ask before the user's prompts
PROMPT = "prompt"  # the source a door asks with before the user's prompt: whatever is due, no wait


class Injector:
    """Thread-safe: told things by the recorder's threads, acts on `tick`."""

    def __init__(
        self,
        mode: str,
        *,
        send: Callable[[Inject], None],
        record: Callable[[str, float, dict], None],
        write: Callable[[str], None] | None = None,
        door_at_prompt: bool = False,
    ):
        self.mode = mode  # contexts: auto | type | off
        self.closed = False
        self._write = write  # puts a context where the agent reads it before each request (its door)
        self._at_prompt = door_at_prompt  # its door asks as the user's turns start (open by its profile's word)
        self.door_open = write is not None or door_at_prompt  # the agent's own door takes every context: nothing to type
        self._woken = False
        self._send = send
        self._record = record  # (event kind, t, detail)
        # A plain lock, not re-entrant: nothing called while holding it may call back in.
        self._cond = threading.Condition(threading.Lock())
        self._effects: list[tuple[Callable, tuple]] = []  # decided under the lock, done after
        self.due: Due | None = None
        self.pending_continue: Continue | None = None
        self.latest: Context | None = None
        self.delivered: set[tuple[str, int]] = set()
        self.attempt: Attempt | None = None
        self._ids = 0
        self._compaction_began: float | None = None
        self._declined_at: float | None = None
        self._last_delivery: float | None = None
        # the screen, as the render thread last saw it
        self.idle = False
        self.dialog = False
        self.screen: list[str] = []
        self.last_output = 0.0
        self.paste = False
        self.fresh_prompt = 0.0  # when the agent last closed a dialog (keys before went to it, not to a draft)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the lock to decide; on the way out, release it, then do what was decided."""
        with self._cond:
            yield
            effects, self._effects = self._effects, []
        for act, args in effects:
            act(*args)

    def _later(self, act: Callable, *args) -> None:
        self._effects.append((act, args))

    def _has_work(self) -> bool:
        """A delivery under way, or a context or a continue due and ready: then `tick` has something to do."""
        written = self._write is not None and self.ready() is not None
        return not self.closed and (self.attempt is not None or written or self._next() is not None)

    def wait_for_work(self, timeout: float | None = None) -> bool:
        """Sleep until there is something to tick for (an idle agent with nothing due costs
        no wake-ups at all), or `timeout` passes; False once closed."""
        with self._locked():
            self._cond.wait_for(lambda: self.closed or self._woken or self._has_work(), timeout)
            self._woken = False
            return not self.closed

    def wake(self) -> None:
        """Have `wait_for_work` return (its timeout has changed)."""
        with self._locked():
            self._woken = True
            self._cond.notify_all()

    def close(self) -> None:
        """The child is gone: nothing more to type or hand over."""
        with self._locked():
            self.closed = True
            self._cond.notify_all()

    def give_continue(self, text: Continue) -> None:
        """Type `text` once it is safe, through the same confirmed channel; after any context
        that is due."""
        with self._locked():
            self.pending_continue = text
            self._cond.notify_all()

    def drop_continue(self, wait: int) -> None:
        """The continue asked for by `wait` is no longer wanted (not if it is being typed)."""
        with self._locked():
            c = self.pending_continue
            if c is not None and c.wait == wait and (self.attempt is None or self.attempt.context is not c):
                self.pending_continue = None

    # -- what happens ------------------------------------------------------------------------

    def on_event(self, kind: str, t: float) -> None:
        with self._locked():
            if kind == "compaction_started":
                self._compaction_began = t
            elif kind == "compaction_finished":
                self._compaction_due(t)

    def _compaction_due(self, t: float) -> None:
        """A compaction finished at `t`: a context made since it began (or lately, if its
        start was not seen) is due, unless one was given for it already."""
        began = self._compaction_began
        since = began if began is not None and t - began < COMPACTION_MAX else t - CONTEXT_FRESH
        if self._last_delivery is not None and self._last_delivery >= since:
            return  # e.g. the hook gave it, and now the screen says the compaction is done
        if began is None and self.due is not None and self.due.reason == "resume":
            return  # a resumed agent drawing its history again: the resumed context is still the one due
        self.due = Due("compaction", since)
        self._cond.notify_all()

    def resume(self) -> None:
        """A resumed session: the parent's context is due from the start."""
        with self._locked():
            self.due = Due("resume", float("-inf"))
            self._cond.notify_all()

    def brief(self, brief: Context) -> None:
        """A new session that starts with a brief of earlier ones: due from the start."""
        with self._locked():
            self.due = Due("brief", float("-inf"))
            self.latest = brief
            self._cond.notify_all()

    def on_context(self, context: Context) -> None:
        with self._locked():
            if self.latest is None or context.made >= self.latest.made:
                self.latest = context
            self._cond.notify_all()

    def on_frame(self, t: float, screen: list[str], idle: bool, busy: bool, dialog: bool, paste: bool) -> None:
        with self._locked():
            self.last_output = t
            if self.dialog and not dialog:
                self.fresh_prompt = t
            self.screen, self.idle, self.dialog, self.paste = screen, idle, dialog, paste
            a = self.attempt
            # Not merely "not idle": an agent's footer may read "paste again to expand" while a
            # paste waits for Enter, and that must not pass for taken.
            if a is not None and a.typed is not None and t >= a.typed and busy:
                a.taken = True

    def on_idle_event(self, t: float) -> None:
        """The agent became idle again (it was busy in between). Keys typed meanwhile stay a
        draft: an agent at work keeps them in its input line (only a dialog takes them)."""
        with self._locked():
            a = self.attempt
            if a is not None and a.typed is not None and t >= a.typed:
                a.taken = True

    def on_user_turn(self, text: str) -> None:
        """The transcript recorded a user turn."""
        with self._locked():
            a = self.attempt
            if a is not None and head(a.context.prompt) and head(a.context.prompt) in text:
                a.evidence.append("transcript")
                self._confirmed(a, None)
            elif self._at_prompt and self.door_open and a is None and self.ready() is not None:
                # its turn began and the door did not take the context (it never asks, or gave
                # up waiting): typed instead, until the door asks again
                self.door_open = False
                self._cond.notify_all()

    def on_note(self, note: Note, now: float) -> None:
        """What the loop did with a request: declined it, or typed it."""
        with self._locked():
            a = self.attempt
            if a is None or note.id != a.id:
                return
            if note.state == "declined":
                self.attempt = None
                self._declined_at = now
                if isinstance(a.context, Continue) and (note.why or "").startswith("user"):
                    # the user is at the keyboard: a continue they did not type is not wanted
                    self.pending_continue = None
                    self._later(self._record, "limit_continue", now, {"channel": "typed", "typed": False, "why": "the user was typing"})
            elif note.state == "typed":
                a.typed = note.t if note.t is not None else now
                a.held += note.held

    # -- deciding ------------------------------------------------------------------------------

    def ready(self) -> Context | None:
        """The context to give now, if one is due and made recently enough."""
        due, c = self.due, self.latest
        if self.mode == "off" or due is None or c is None or (c.session_id, c.round) in self.delivered or c.made < due.since:
            return None
        return c

    def _next(self) -> Context | Continue | None:
        """What to type next: a context that is ready (unless the agent's door takes it),
        else a continue that waits."""
        return (None if self.door_open else self.ready()) or self.pending_continue

    def tick(self, now: float) -> None:
        with self._locked():
            if self.closed:
                return
            if self._write is not None and self.ready() is not None:
                self._handed(self._write_door(), now, "file", {"evidence": ["written"]})
            a = self.attempt
            if a is not None:
                self._follow(a, now)
                return
            c = self._next()
            if c is None or not self._safe(now):
                return
            if self._declined_at is not None and now - self._declined_at < DECLINED_PAUSE:
                return
            if isinstance(c, Continue):
                reason = "limit"
            else:
                assert self.due is not None  # ready() gives a context only while one is due
                reason = self.due.reason
            self._ids += 1
            a = Attempt(self._ids, c, now, list(self.screen), self.paste, reason)
            self.attempt = a
            self._later(self._send, Inject(a.id, prepare(c.prompt, a.paste), self.fresh_prompt))

    def _safe(self, now: float) -> bool:
        return self.idle and not self.dialog and now - self.last_output >= QUIET

    def _follow(self, a: Attempt, now: float) -> None:
        if a.typed is None:
            return  # the loop has not answered yet
        if a.taken:
            a.evidence.append("screen")
            self._confirmed(a, now)
            return
        if now - a.typed < CONFIRM_WAIT:
            return
        if a.tries >= 2:
            self._give_up(a, now)
            return
        if not self._safe(now):
            return  # retry only when it is safe to type again
        a.tries += 1
        changed = _visible(self.screen) != _visible(a.snapshot)
        a.typed = None
        a.asked = now
        data = "" if changed else prepare(a.context.prompt, a.paste)
        self._later(self._send, Inject(a.id, data, self.fresh_prompt))

    def _confirmed(self, a: Attempt, now: float | None) -> None:
        self._finish(a, a.typed if a.typed is not None else (now or a.asked), True)

    def _give_up(self, a: Attempt, now: float) -> None:
        self._finish(a, now, False)

    def _finish(self, a: Attempt, t: float, confirmed: bool) -> None:
        c = a.context
        self.attempt = None
        typed = {"confirmed": confirmed, "evidence": sorted(set(a.evidence)), "tries": a.tries, "paste": a.paste}
        if isinstance(c, Continue):
            if self.pending_continue is c:
                self.pending_continue = None
            detail = {"channel": "typed", "typed": True, **typed, "wait": c.wait, "text": c.prompt, "held_keys": a.held}
            self._later(self._record, "limit_continue", t, detail)
            self._cond.notify_all()
            return
        self.delivered.add((c.session_id, c.round))
        self.due = None
        self._last_delivery = t
        self._later(
            self._record,
            "injection",
            t,
            {
                "channel": "typed",
                "reason": a.reason,
                **typed,
                "context_session": c.session_id,
                "round": c.round,
                "chars": len(c.prompt),
                "held_keys": a.held,
            },
        )
        self._cond.notify_all()

    # -- the hook channel -----------------------------------------------------------------------

    def hook(self, source: str, now: Callable[[], float], wait: float) -> str | None:
        """The agent's door asks for context as `source` says (blocks up to `wait` seconds).
        Returns the prompt to hand over, or None (nothing due, or not ready in time: the
        typed channel, or an open door's next ask, gives it once it is)."""
        with self._locked():
            if self.mode == "off" or self.closed:
                return None
            if (source in (OPENED, PROMPT) or self._at_prompt) and not self.door_open:
                self.door_open = True
                self._cond.notify_all()
            if source == OPENED:
                return None
            if source == "compact":
                if self.due is None or self.due.reason != "compaction":
                    self._compaction_due(now())
            elif source == PROMPT:
                wait = 0  # the user's prompt goes now, with whatever is ready
            elif self.due is None or self.due.reason not in START_REASONS:
                return None  # a plain start (or /resume of another session): nothing to give
            deadline = now() + wait
            while True:
                if self.attempt is not None and not isinstance(self.attempt.context, Continue):
                    return None  # already being typed
                c = self.ready()
                if c is not None:
                    break
                left = deadline - now()
                if left <= 0 or self.due is None:
                    return None
                self._cond.wait(min(left, 0.5))
            self._handed(c, now(), "hook", {"source": source, "evidence": ["hook"]})
            return plain(c.prompt)

    def _handed(self, c: Context, t: float, channel: str, detail: dict) -> None:
        """`c` went through the agent's own door at `t` (under the lock): given, once."""
        self.delivered.add((c.session_id, c.round))
        self._last_delivery = t
        assert self.due is not None  # ready() gave c under this lock: one is due
        reason = self.due.reason
        self.due = None
        self._later(
            self._record,
            "injection",
            t,
            {
                "channel": channel,
                "reason": reason,
                **detail,
                "confirmed": True,
                "context_session": c.session_id,
                "round": c.round,
                "chars": len(c.prompt),
            },
        )
        self._cond.notify_all()

    def _write_door(self) -> Context:
        c = self.ready()
        assert c is not None and self._write is not None
        self._later(self._write, plain(c.prompt))
        return c


def _visible(screen: list[str]) -> list[str]:
    return [line.rstrip() for line in screen if line.strip()]
