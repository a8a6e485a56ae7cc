"""What an agent is doing, from what its screen shows: the states `supervise ps` lists."""

from supervisor.status.states import Tracker


def run(tracker: Tracker, steps) -> list[str]:
    """Feed frames ('idle', 'busy', 'dialog', 'none') and events ('!kind'); the states it changed to."""
    seen = []
    for t, step in enumerate(steps):
        if step.startswith("!"):
            kind, _, reset = step[1:].partition("@")
            detail = {"reset_at": reset, "text": "limit"} if reset else {}
            if kind == "limit_continue":  # typed by supervise, and the agent took it
                detail = {"channel": "typed", "typed": True, "confirmed": True}
            state, events = tracker.event(kind, float(t), detail)
        else:
            state, events = tracker.frame(float(t), idle=step == "idle", busy=step == "busy", dialog=step == "dialog")
        seen += [f"!{kind}" for kind, _ in events]
        if state is not None:
            seen.append(state.name)
    return seen


def test_a_turn_goes_from_waiting_to_working_and_back():
    assert run(Tracker(), ["none", "idle", "idle", "busy", "busy", "idle"]) == ["waiting", "working", "waiting"]


def test_nothing_known_is_starting_and_a_frame_that_shows_nothing_keeps_the_state():
    tracker = Tracker()
    assert run(tracker, ["none", "none"]) == []
    assert tracker.state.name == "starting"
    assert run(tracker, ["busy", "none", "none"]) == ["working"]


def test_a_dialog_is_permission_until_it_is_answered():
    assert run(Tracker(), ["idle", "busy", "dialog", "dialog", "busy", "idle"]) == [
        "waiting",
        "working",
        "permission",
        "working",
        "waiting",
    ]


def test_a_compaction_is_compacting_from_its_start_to_its_end_busy_or_not():
    steps = ["idle", "!compaction_started", "busy", "idle", "busy", "!compaction_finished", "busy", "idle"]
    assert run(Tracker(), steps) == ["waiting", "compacting", "working", "waiting"]


def test_a_limit_holds_at_the_prompt_until_the_agent_works_again():
    tracker = Tracker()
    steps = ["busy", "!limit_reached@2026-11-24T07:45:00+00:00", "busy", "idle", "idle"]
    assert run(tracker, steps) == ["working", "limited"]
    assert tracker.state.detail["reset_at"] == "2026-11-24T07:45:00+00:00"
    # the frame the limit shows on may still be busy: working again means after an idle frame
    assert run(tracker, ["busy", "idle"]) == ["!limit_cleared", "working", "waiting"]


def test_a_limit_reached_again_limits_again():
    steps = ["idle", "!limit_reached@a", "idle", "busy", "!limit_reached@b", "idle"]
    assert run(Tracker(), steps) == ["waiting", "limited", "!limit_cleared", "working", "limited"]


def test_a_continue_the_agent_took_clears_the_limit_though_no_frame_showed_it_busy():
    # a short turn under load: the frames before and after it are both idle
    steps = ["idle", "!limit_reached@a", "idle", "!limit_continue", "idle"]
    assert run(Tracker(), steps) == ["waiting", "limited", "!limit_cleared", "working", "waiting"]


def test_a_continue_that_was_not_taken_leaves_the_limit():
    t = Tracker()
    t.frame(0.0, idle=True, busy=False, dialog=False)
    t.event("limit_reached", 1.0, {"reset_at": "a"})
    t.frame(1.1, idle=True, busy=False, dialog=False)
    for detail in ({"typed": True, "confirmed": False}, {"typed": False, "why": "the user was typing"}):
        assert t.event("limit_continue", 2.0, detail) == (None, [])
    assert t.state.name == "limited"


def test_a_turn_of_the_users_dated_after_the_limit_clears_it_and_one_dated_before_does_not():
    t = Tracker()
    t.frame(0.0, idle=True, busy=False, dialog=False)
    assert t.user_turn(0.5) == (None, [])  # no limit: nothing to clear
    t.event("limit_reached", 2.0, {"reset_at": "a", "text": "limit"})
    t.frame(2.1, idle=True, busy=False, dialog=False)
    assert t.user_turn(1.9) == (None, [])  # the turn the limit stopped, read after it
    assert t.state.name == "limited"
    state, events = t.user_turn(3.0)
    assert (state.name, state.since, events) == ("working", 3.0, [("limit_cleared", {"reset_at": "a", "text": "limit"})])
    assert t.user_turn(4.0) == (None, [])  # cleared once
    assert t.frame(4.1, idle=True, busy=False, dialog=False)[0].name == "waiting"


def test_the_context_left_is_part_of_the_state_as_the_agent_shows_it():
    tracker = Tracker()
    state, _ = tracker.frame(0.0, idle=True, busy=False, dialog=False, context_left=40)
    assert (state.name, state.detail) == ("waiting", {"context_left": 40})
    state, _ = tracker.frame(1.0, idle=True, busy=False, dialog=False, context_left=35)
    assert (state.name, state.since, state.detail) == ("waiting", 0.0, {"context_left": 35})  # same state, since kept


def test_a_continue_waiting_for_the_reset_is_part_of_the_limited_state():
    t = Tracker()
    t.frame(0.0, idle=True, busy=False, dialog=False)
    t.event("limit_reached", 1.0, {"reset_at": "2026-11-24T18:00:00+00:00"})
    assert t.frame(1.1, idle=True, busy=False, dialog=False)[0].name == "limited"
    state, _ = t.event("limit_wait", 1.2, {"wait": 1, "continue_at": "2026-11-24T18:01:00+00:00"})
    assert state.name == "limited" and state.since == 1.1 and state.detail["continue_at"] == "2026-11-24T18:01:00+00:00"
    state, _ = t.event("limit_wait", 5.0, {"wait": 1, "called_off": "the user typed"})
    assert "continue_at" not in state.detail and t.event("limit_wait", 6.0, {"wait": 1, "called_off": "again"}) == (None, [])
