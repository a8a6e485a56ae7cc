"""Our own words, found again however an agent draws them back, and nothing else.

Each form below is how a real agent showed a typed context again (see supervisor/detection/echoes.py):
Claude Code's history, Gemini CLI's `> ` quote of the first paragraph, Codex's input box
with `↑` and `•`, Aider's wrap at the window's width, collapsed pastes, a reply quoting it.
"""

import textwrap

import pytest

from supervisor.detection import echoes, userturns
from supervisor.contexts import schema
from supervisor.detection.detector import Detector
from supervisor.detection.patterns import load_all, select

CONTEXT = {
    "original_request": "build the flashcard app, put the code in flashcards_sm2.py",
    "latest_request": "now add a review queue sorted by due date",
    "current_task": "adding the review queue to flashcards_sm2.py",
    "completed_steps": ["● Update(flashcards_sm2.py): the SM-2 scheduler", "tests in test_sm2.py pass"],
    "pending_steps": ["the review queue", "a CLI to run a review"],
    "key_decisions": ["decided: store cards in SQLite because the deck outgrows JSON"],
    "relevant_files": ["flashcards_sm2.py", "test_sm2.py"],
    "errors_and_resolutions": ["⎿ Error: KeyError: 'interval' in flashcards_sm2.py line 40 (fixed: default 1)"],
}
PROMPT = schema.render(CONTEXT, 2)
GIVEN = echoes.Given.of([(PROMPT, schema.quoted(CONTEXT))])
BEFORE = ["❯ now add a review queue sorted by due date", "● Update(flashcards_sm2.py)", "  ⎿ Added 12 lines"]
AFTER = ["● Read(flashcards_sm2.py)", "❯ also export the deck as CSV"]


def wrapped(width: int, prefix: str = "", indent: str = "") -> list[str]:
    out = []
    for paragraph in PROMPT.split("\n"):
        out.extend(textwrap.wrap(paragraph, width, initial_indent=prefix if not out else indent, subsequent_indent=indent) or [""])
    return out


FORMS = {
    "typed one line, wrapped by the terminal": textwrap.wrap("› " + " ".join(PROMPT.split()), 80),
    "Claude Code's history": wrapped(118, "❯ ", "  "),
    "Gemini's quote of the first paragraph": [" > " + line for line in textwrap.wrap(PROMPT.split("\n\n")[0], 100)],
    "Codex's input box, scrolled": ["│ ↑ " + line.ljust(76) + " │" for line in wrapped(76)[6:20]],
    "Codex's bullets": ["  • " + line if line.startswith("- ") else "    " + line for line in wrapped(90)[8:]],
    "Aider at 60 columns": wrapped(60),
    "a reply quoting it": ["● Reply to: " + line for line in wrapped(100)[:3]],
    # Aider's --verbose prints each message it sends, each line after its role
    "Aider's --verbose dump": [f"USER {line}".rstrip() for line in PROMPT.split("\n")],
    # rows caught half drawn as Codex scrolled its history: too short for pieces
    "Codex's half-drawn rows before it": ["  build the fla", "  Latest r", "  Relevant", *wrapped(100)],
}


@pytest.mark.parametrize("form", FORMS)
def test_every_echo_form_is_taken_out_and_nothing_around_it(form):
    text = "\n".join([*BEFORE, *FORMS[form], *AFTER])
    out = echoes.strip(text, GIVEN).split("\n")
    assert out == [*BEFORE, echoes.MARK, *AFTER], form


@pytest.mark.parametrize(
    "placeholder,size",
    [
        ("❯ [Pasted text #1 +{lines} lines]", "lines"),
        ("› [Pasted Content {chars} chars]", "chars"),
        ("┃  [Pasted ~{lines} lines]", "lines"),
        (" > [Pasted Text: {lines} lines]", "lines"),  # Gemini CLI 0.61.0
        (" ❯ [[supervise] You are continuing earlier work in t... Pasted +{lines} lines]", "lines"),  # Cline CLI 3.0.65
    ],
)
def test_a_collapsed_paste_of_our_size_is_ours_and_another_is_the_users(placeholder, size):
    ours = placeholder.format(lines=PROMPT.count("\n") + 1, chars=len(PROMPT))
    theirs = placeholder.format(lines=PROMPT.count("\n") + 30, chars=len(PROMPT) * 3)
    assert echoes.strip("\n".join([ours, theirs]), GIVEN).split("\n") == [echoes.MARK, theirs]


def test_the_sessions_own_lines_quoted_by_the_context_stay():
    """A context quotes the session: the request, an edit, an error. Those lines were the
    session's first, and the agent may print them again as new work."""
    session = [
        "❯ build the flashcard app, put the code in flashcards_sm2.py",
        "● Update(flashcards_sm2.py): the SM-2 scheduler",
        "  ⎿ Error: KeyError: 'interval' in flashcards_sm2.py line 40 (fixed: default 1)",
        "  decided: store cards in SQLite because the deck outgrows JSON",
        "❯ now add a review queue sorted by due date",
    ]
    assert echoes.strip("\n".join(session), GIVEN) == "\n".join(session)


def test_the_users_next_message_stays_though_the_next_context_quotes_it():
    """Each context names the user's latest request: the message typed right after an echo
    is quoted by the context given after it. Read over the whole session, with both given,
    it is still the user's: an echo is of one text, and that message is not in it."""
    later = {**CONTEXT, "latest_request": "also export the deck as CSV", "current_task": "exporting the deck as CSV"}
    both = echoes.Given.of([(PROMPT, schema.quoted(CONTEXT)), (schema.render(later, 3), schema.quoted(later))])
    for form in ("Claude Code's history", "Gemini's quote of the first paragraph", "Aider at 60 columns"):
        text = "\n".join([*BEFORE, *FORMS[form], "", "❯ also export the deck as CSV", "● Read(flashcards_sm2.py)"])
        assert echoes.strip(text, both).split("\n") == [*BEFORE, echoes.MARK, "", *AFTER[::-1]], form


def test_the_users_next_message_stays_after_a_leftover_row_of_the_template():
    """A redraw can leave one row of an echo behind ("  Original request (verbatim):", in
    every round's template) right above the user's next message (Codex 0.171.0). That row
    tells no round apart: the message, which only the next context quotes, stays."""
    later = {**CONTEXT, "latest_request": "also export the deck as CSV", "current_task": "exporting the deck as CSV"}
    both = echoes.Given.of([(PROMPT, schema.quoted(CONTEXT)), (schema.render(later, 3), schema.quoted(later))])
    text = "\n".join([*BEFORE, "  Original request (verbatim):", "› also export the deck as CSV", "● Read(flashcards_sm2.py)"])
    assert echoes.strip(text, both).split("\n") == [*BEFORE, echoes.MARK, "› also export the deck as CSV", "● Read(flashcards_sm2.py)"]


def test_the_users_turns_around_an_echo_are_theirs():
    claude = select(load_all([]), "claude")
    text = "\n".join([*BEFORE, *FORMS["Claude Code's history"], *AFTER])
    assert [t.text for t in userturns.find(echoes.strip(text, GIVEN), claude)] == [
        "now add a review queue sorted by due date",
        "also export the deck as CSV",
    ]
    # without the stripping, our prompt would be the latest thing "the user" said
    assert "[supervise]" in userturns.find(text, claude)[1].text


def test_pieces_of_its_own_wording_left_alone_by_a_redraw_are_taken_out_and_a_users_word_stays():
    """A full-screen agent redrawing its session view can leave rows of an echo on their own,
    far from the rest of it: "- (none)" under headings no longer shown. Read as messages, they
    would be the user's latest words; a user's own "none" is theirs."""
    empty = {**CONTEXT, "errors_and_resolutions": [], "key_decisions": []}
    given = echoes.Given.of([(schema.render(empty, 3), schema.quoted(empty))])
    assert "- (none)" in schema.render(empty, 3)
    opencode = select(load_all([]), "opencode")
    rows = [
        "  ┃  turn 2: rename the column",
        "  ┃",
        "  ┃  - (none)",
        "  ┃",
        "  ┃  - test_sm2.py",
        "  ┃",
        "  ┃  none",
        "  ┃",
        "  ┃  test_sm2.py",
    ]
    assert [t.text for t in userturns.find(echoes.strip("\n".join(rows), given), opencode)] == [
        "turn 2: rename the column",
        "none",
        "test_sm2.py",
    ]


def test_a_transcript_turn_of_ours_is_known_whole():
    assert echoes.is_echo_text(PROMPT, GIVEN)
    assert echoes.is_echo_text("[Pasted text #1 +%d lines]" % (PROMPT.count("\n") + 1), GIVEN)
    assert not echoes.is_echo_text(CONTEXT["latest_request"], GIVEN)
    assert not echoes.is_echo_text(CONTEXT["original_request"], GIVEN)


def test_the_detector_ignores_our_echo_but_not_a_real_compaction_it_quotes():
    """The prompt says "compacted"; a context may quote a real compaction line too."""
    context = {**CONTEXT, "completed_steps": [*CONTEXT["completed_steps"], "✻ Conversation compacted (ctrl+o for history)"]}
    prompt = schema.render(context, 3)
    d = Detector(select(load_all([]), "claude"))
    d.add_given(prompt, schema.quoted(context))
    echo = list(enumerate(textwrap.wrap("❯ " + " ".join(prompt.split()), 118)))
    found = d.feed(1.0, echo, [line for _, line in echo])
    assert not [f for f in found if f.kind != "idle_prompt"], found
    real = [(0, "✻ Conversation compacted (ctrl+o for history)")]
    assert [f.kind for f in d.feed(2.0, real, [real[0][1]])] == ["compaction_finished"]


def test_nothing_given_nothing_taken():
    text = "\n".join(FORMS["Claude Code's history"])
    assert echoes.strip(text, echoes.Given.of([])) == text
