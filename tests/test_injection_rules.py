"""The injection rules (supervisor/giveback/injection.py) on their own: which context, when, how often.
Time is passed in, so the rules are checked at exact moments."""

from supervisor.channel import Note
from supervisor.giveback.given import PASTE_END, PASTE_START, Context, Continue, prepare
from supervisor.giveback.injection import CONFIRM_WAIT, Injector

PROMPT = "[supervise] You are continuing earlier work.\n\nCurrent task: the parser"
IDLE_SCREEN = ["> ", "toy: ready"]


def injector(mode="auto"):
    sent, recorded = [], []
    inj = Injector(mode, send=sent.append, record=lambda kind, t, d: recorded.append(d))
    return inj, sent, recorded


def idle_at(inj, t, screen=IDLE_SCREEN, paste=True):
    inj.on_frame(t, list(screen), idle=True, busy=False, dialog=False, paste=paste)


def typing_on_resume():
    """An injector that has just asked the loop to type a resumed session's context."""
    inj, sent, recorded = injector()
    inj.resume()
    inj.on_context(Context("parent", 3, PROMPT, made=1.0))
    idle_at(inj, 1.0)
    inj.tick(2.0)
    return inj, sent, recorded, sent[0].id


def test_a_context_made_before_the_compaction_began_is_not_given():
    inj, sent, _ = injector()
    inj.on_context(Context("s1", 1, "old " + PROMPT, made=5.0))  # a periodic one, before
    inj.on_event("compaction_started", 10.0)
    inj.on_event("compaction_finished", 12.0)
    idle_at(inj, 12.5)
    inj.tick(20.0)
    assert sent == []
    inj.on_context(Context("s1", 2, PROMPT, made=14.0))
    inj.tick(20.1)
    assert [m.data for m in sent] == [PASTE_START + PROMPT + PASTE_END]


def test_a_resumed_agent_drawing_an_old_compaction_again_still_gets_the_resumed_context():
    inj, _, _ = injector()
    inj.resume()
    inj.on_event("compaction_finished", 2.0)  # its history on screen: no start of it seen
    assert inj.due.reason == "resume"
    inj.on_event("compaction_started", 5.0)  # a compaction of this run
    inj.on_event("compaction_finished", 8.0)
    assert inj.due.reason == "compaction" and inj.due.since == 5.0


def test_nothing_is_typed_mid_output_in_a_dialog_or_after_the_hook_gave_it():
    inj, sent, recorded = injector()
    inj.on_event("compaction_started", 1.0)
    inj.on_context(Context("s1", 1, PROMPT, made=2.0))
    assert inj.hook("compact", lambda: 3.0, wait=0) == PROMPT
    inj.on_event("compaction_finished", 3.5)  # the screen says so after the hook: not due again
    idle_at(inj, 4.0)
    inj.tick(4.2)  # output 0.2 s ago
    inj.on_frame(4.0, IDLE_SCREEN, idle=True, busy=False, dialog=True, paste=True)
    inj.tick(9.0)
    idle_at(inj, 9.0)
    inj.tick(20.0)
    assert sent == [] and [r["channel"] for r in recorded] == ["hook"]
    assert inj.hook("compact", lambda: 21.0, wait=0) is None  # and the hook never gives it twice


def test_unconfirmed_typing_is_retried_once_then_recorded_as_not_confirmed():
    inj, sent, recorded, rid = typing_on_resume()
    [first] = sent
    inj.on_note(Note(rid, "typed", t=2.5), 2.5)
    inj.tick(2.5 + CONFIRM_WAIT + 0.1)  # not taken; the screen is as before: nothing arrived
    assert sent[-1].data == first.data
    inj.on_note(Note(rid, "typed", t=12.0), 12.0)
    inj.tick(12.0 + CONFIRM_WAIT + 0.1)
    assert len(sent) == 2
    assert recorded[-1]["confirmed"] is False and recorded[-1]["tries"] == 2 and recorded[-1]["reason"] == "resume"
    inj.tick(40.0)
    assert len(sent) == 2  # given up: never typed a third time


def test_the_agent_getting_busy_after_enter_confirms_and_a_changed_screen_gets_enter_alone():
    inj, sent, recorded, rid = typing_on_resume()
    inj.on_note(Note(rid, "typed", t=2.5), 2.5)
    idle_at(inj, 2.6, screen=["> [pasted 60 bytes]", "toy: ready"])  # there, but not taken
    inj.tick(2.6 + CONFIRM_WAIT)
    assert sent[-1].data == ""  # Enter alone
    inj.on_note(Note(rid, "typed", t=11.0), 11.0)
    inj.on_frame(11.2, ["working... (esc to interrupt)"], idle=False, busy=True, dialog=False, paste=True)
    inj.tick(11.3)
    assert recorded[-1]["confirmed"] is True and recorded[-1]["tries"] == 2 and recorded[-1]["evidence"] == ["screen"]


def test_without_bracketed_paste_the_prompt_is_one_line():
    assert prepare("a\n\nb  c\n", paste=False) == "a b c"
    assert prepare("a\x1b[201~b", paste=True) == PASTE_START + "ab" + PASTE_END  # the text cannot end the paste early


def test_with_injection_off_nothing_is_given():
    inj, sent, _ = injector("off")
    inj.resume()
    inj.on_context(Context("parent", 1, PROMPT, made=1.0))
    idle_at(inj, 1.0)
    inj.tick(5.0)
    assert sent == [] and inj.hook("resume", lambda: 5.0, wait=0) is None


def test_typed_text_is_plain_text_whatever_the_context_holds():
    from supervisor.giveback.given import MAX_TYPED, PASTE_END, PASTE_START, prepare

    hostile = "a\x03b\x04c\r!touch /tmp/x\r\x1b[20\x1b[201~1~d\x1b]0;t\x07e\x1b[2Jf\x9b31mg"
    pasted = prepare(hostile, paste=True)
    body = pasted[len(PASTE_START) : -len(PASTE_END)]
    assert pasted.startswith(PASTE_START) and pasted.endswith(PASTE_END)
    assert body == "abc\n!touch /tmp/x\n1~defg"  # a nested marker cannot end the paste: no escape is left
    assert prepare(hostile, paste=False) == "abc !touch /tmp/x 1~defg"
    assert len(prepare("x" * 100_000, paste=True)) == MAX_TYPED + len(PASTE_START) + len(PASTE_END)


def test_what_the_rules_decide_is_done_after_the_lock_is_released():
    """Recording an injection writes to SQLite, the .cast file and a pipe; asking the loop to
    type writes to a pipe. Neither may run while the lock is held: a slow disk or a full pipe
    would stall the render thread and every hook waiting on it."""
    held = []
    inj = None

    def effect(*args):
        free = inj._cond.acquire(blocking=False)  # a plain lock: False if this thread holds it
        held.append(not free)
        if free:
            inj._cond.release()

    inj = Injector("auto", send=effect, record=effect)
    inj.on_event("compaction_started", 1.0)
    inj.on_event("compaction_finished", 2.0)
    inj.on_context(Context("s1", 1, PROMPT, made=1.5))
    idle_at(inj, 2.0)
    inj.tick(3.0)  # asks the loop to type
    rid = inj.attempt.id
    inj.on_note(Note(rid, "typed", t=3.5), 3.5)
    inj.on_idle_event(4.0)
    inj.tick(4.1)  # confirmed: records the injection
    assert inj.hook("compact", lambda: 5.0, wait=0) is None  # given already
    inj.on_event("compaction_started", 25.0)  # a second compaction
    inj.on_event("compaction_finished", 30.0)
    inj.on_context(Context("s1", 2, PROMPT, made=29.0))
    assert inj.hook("compact", lambda: 31.0, wait=0) == PROMPT  # records the hook's delivery
    assert held == [False, False, False]


# -- a continue after a usage limit is no context -------------------------------------------------


def test_the_hook_never_gives_a_pending_continue_as_the_context():
    """A compaction with no fresh context yet, and a continue waiting: the hook hands over
    nothing (the typed channel gives the context once it is made), the compaction stays
    unserved, and the continue is typed as itself."""
    inj, sent, recorded = injector()
    inj.give_continue(Continue(7, "continue"))
    inj.on_event("compaction_started", 1.0)
    assert inj.hook("compact", lambda: 2.0, wait=0) is None
    assert recorded == [] and inj.due is not None and inj.due.reason == "compaction"
    inj.on_context(Context("s1", 1, PROMPT, made=2.5))
    idle_at(inj, 3.0)
    inj.tick(4.0)
    assert [m.data for m in sent] == [PASTE_START + PROMPT + PASTE_END]  # the context first


def test_the_hook_just_after_a_delivery_with_a_continue_pending_hands_over_nothing():
    inj, sent, recorded = injector()
    inj.on_event("compaction_started", 1.0)
    inj.on_context(Context("s1", 1, PROMPT, made=2.0))
    assert inj.hook("compact", lambda: 3.0, wait=0) == PROMPT
    inj.give_continue(Continue(8, "continue"))
    assert inj.hook("resume", lambda: 3.1, wait=0) is None  # nothing due: no context, and no continue either
    assert inj.hook("compact", lambda: 3.2, wait=0) is None  # the context was given; a continue is not one
    assert [r["channel"] for r in recorded] == ["hook"]
    idle_at(inj, 3.5)
    inj.tick(5.0)
    assert [m.data for m in sent] == [PASTE_START + "continue" + PASTE_END]


def test_with_a_context_ready_and_a_continue_pending_the_hook_gives_the_context_and_the_continue_still_comes():
    inj, sent, recorded = injector()
    inj.give_continue(Continue(9, "continue"))
    inj.on_event("compaction_started", 1.0)
    inj.on_context(Context("s1", 1, PROMPT, made=2.0))
    assert inj.hook("compact", lambda: 3.0, wait=0) == PROMPT
    assert recorded[0]["channel"] == "hook" and recorded[0]["round"] == 1
    idle_at(inj, 3.5)
    inj.tick(5.0)
    assert [m.data for m in sent] == [PASTE_START + "continue" + PASTE_END]
    inj.on_note(Note(sent[0].id, "typed", t=5.1), 5.1)
    inj.on_idle_event(6.0)
    inj.tick(6.1)
    assert recorded[-1]["wait"] == 9 and recorded[-1]["typed"] is True and inj.pending_continue is None


# -- a door that asks before the user's prompts (a plugin, an extension) ----------------------------


def test_once_the_agents_door_is_open_nothing_is_typed_and_it_takes_the_context_before_the_next_prompt():
    """A context not ready when the compaction ended: the door's compaction ask gets nothing,
    nothing is typed while the agent idles, and the user's next prompt takes it, once."""
    inj, sent, recorded = injector()
    assert inj.hook("open", lambda: 0.5, wait=5) is None and recorded == []
    inj.on_event("compaction_started", 1.0)
    assert inj.hook("compact", lambda: 2.0, wait=0) is None
    inj.on_context(Context("s1", 1, PROMPT, made=3.0))
    idle_at(inj, 3.5)
    inj.tick(10.0)
    assert sent == [] and not inj._has_work()  # the door will take it: no typing, no ticking
    assert inj.hook("prompt", lambda: 11.0, wait=30) == PROMPT
    assert [(r["channel"], r["reason"], r["source"]) for r in recorded] == [("hook", "compaction", "prompt")]
    assert inj.hook("prompt", lambda: 12.0, wait=30) is None  # given once


def test_a_door_gives_a_resumed_sessions_context_with_the_first_prompt_and_a_continue_is_still_typed():
    inj, sent, recorded = injector()
    inj.hook("open", lambda: 0.1, wait=0)
    inj.resume()
    inj.on_context(Context("parent", 4, PROMPT, made=0.5))
    inj.give_continue(Continue(3, "continue"))
    idle_at(inj, 1.0)
    inj.tick(2.0)
    assert [m.data for m in sent] == [PASTE_START + "continue" + PASTE_END]  # no door for a continue
    assert inj.hook("prompt", lambda: 3.0, wait=0) == PROMPT
    assert recorded[-1]["reason"] == "resume" and recorded[-1]["channel"] == "hook"


def test_until_a_door_says_it_is_open_the_context_is_typed():
    inj, sent, _ = injector()
    inj.on_event("compaction_started", 1.0)
    inj.on_event("compaction_finished", 2.0)
    inj.on_context(Context("s1", 1, PROMPT, made=1.5))
    idle_at(inj, 2.5)
    inj.tick(4.0)
    assert [m.data for m in sent] == [PASTE_START + PROMPT + PASTE_END]


def door_at_prompt():
    """An injector for a door that asks only as a turn of the user's starts (Codex's hook)."""
    sent, recorded = [], []
    inj = Injector("auto", send=sent.append, record=lambda kind, t, d: recorded.append(d), door_at_prompt=True)
    return inj, sent, recorded


def test_a_door_that_asks_as_the_users_turn_starts_is_open_from_the_start():
    """Nothing says it is open before the user's first turn: a resumed context and, after
    `/compact`, the compaction's are not typed while the agent idles, and the door's asks as
    the next turns start take them, once each."""
    inj, sent, recorded = door_at_prompt()
    inj.resume()
    inj.on_context(Context("parent", 3, PROMPT, made=0.5))
    idle_at(inj, 1.0)
    inj.tick(5.0)
    assert sent == [] and not inj._has_work()
    assert inj.hook("resume", lambda: 6.0, wait=0) == PROMPT
    inj.on_user_turn("turn 3: the user's words")  # recorded after its hook ran: nothing left behind
    inj.on_event("compaction_started", 7.0)
    inj.on_event("compaction_finished", 8.0)
    inj.on_context(Context("s1", 1, "compacted " + PROMPT, made=8.5))
    idle_at(inj, 9.0)
    inj.tick(30.0)
    assert sent == []
    assert inj.hook("compact", lambda: 31.0, wait=5) == "compacted " + PROMPT
    assert [(r["channel"], r["reason"], r["source"]) for r in recorded] == [("hook", "resume", "resume"), ("hook", "compaction", "compact")]


def test_a_users_turn_that_leaves_a_ready_context_behind_has_it_typed_until_the_door_asks_again():
    """Its hook did not run (hooks turned off, or not trusted): the context is typed once the
    user's turn is over; a door that asks after all is open again."""
    inj, sent, recorded = door_at_prompt()
    inj.on_event("compaction_started", 1.0)
    inj.on_event("compaction_finished", 2.0)
    inj.on_context(Context("s1", 1, PROMPT, made=2.5))
    inj.on_user_turn("turn 2: the user's words")
    idle_at(inj, 10.0)
    inj.tick(11.0)
    assert [m.data for m in sent] == [PASTE_START + PROMPT + PASTE_END]
    inj.on_note(Note(sent[0].id, "typed", t=11.1), 11.1)
    inj.on_user_turn(PROMPT)
    assert [(r["channel"], r["reason"]) for r in recorded] == [("typed", "compaction")]
    assert inj.hook("compact", lambda: 19.0, wait=0) is None  # nothing due: but it asks, so it is open
    inj.on_event("compaction_started", 20.0)
    inj.on_event("compaction_finished", 21.0)
    inj.on_context(Context("s1", 2, "round 2 " + PROMPT, made=21.5))
    idle_at(inj, 22.0)
    inj.tick(30.0)
    assert len(sent) == 1 and inj.hook("compact", lambda: 31.0, wait=0) == "round 2 " + PROMPT


def test_a_file_door_is_written_once_a_context_is_due_and_ready_and_nothing_is_typed():
    sent, recorded, written = [], [], []
    inj = Injector("auto", send=sent.append, record=lambda kind, t, d: recorded.append(d), write=written.append)
    inj.on_context(Context("s1", 1, "old " + PROMPT, made=0.5))  # made before the compaction: not for it
    inj.on_event("compaction_started", 1.0)
    inj.on_event("compaction_finished", 2.0)
    idle_at(inj, 2.5)
    inj.tick(3.0)
    assert written == [] and sent == []
    inj.on_context(Context("s1", 2, PROMPT, made=3.5))
    assert inj._has_work()
    inj.tick(4.0)
    inj.tick(5.0)
    assert written == [PROMPT] and sent == []  # once, and nothing typed
    assert [(r["channel"], r["reason"], r["round"]) for r in recorded] == [("file", "compaction", 2)]
    assert not inj._has_work()
