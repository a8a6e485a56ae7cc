"""What is given to the agent: a context or a continue, the attempt to type one, and the keys
that type it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..plaintext import plain

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
# The most we ever type: a context prompt is ~2,000 tokens (context.PROMPT_BUDGET), ~8 KB.
MAX_TYPED = 16_000


@dataclass
class Context:
    """A context ready to be given."""

    session_id: str  # whose context it is (the parent's, on resume)
    round: int
    prompt: str
    made: float  # loop time


@dataclass
class Continue:
    """A text to type that is no context: a continue once a usage limit has reset."""

    wait: int  # the limit wait that asked for it
    prompt: str


@dataclass
class Due:
    """A context owed to the agent, and why."""

    reason: str  # compaction | resume
    since: float  # contexts made before this are too old


@dataclass
class Attempt:
    """One try at giving: what was typed, when, and the screen before it."""

    id: int
    context: Context | Continue  # what is typed
    asked: float
    snapshot: list[str]  # the screen before typing: to tell "nothing arrived" from "not taken"
    paste: bool
    reason: str
    typed: float | None = None  # when the loop pressed Enter
    tries: int = 1
    taken: bool = False  # the agent got busy (or idle again) after Enter
    held: int = 0
    evidence: list[str] = field(default_factory=list)


def prepare(prompt: str, paste: bool) -> str:
    """The keys to type: one bracketed paste; or, for an agent without bracketed paste, one
    line (a newline would submit each line on its own). Text only, whatever the prompt holds:
    with no escape character left, nothing inside can end the paste early, and with no
    control character, nothing is a key (contexts are cleaned when stored; this is the last
    line of defence, for rows stored before that)."""
    text = plain(prompt).strip()[:MAX_TYPED]
    if paste:
        return PASTE_START + text + PASTE_END
    return " ".join(text.split())


def head(prompt: str) -> str:
    """What identifies our prompt in a transcript or on screen: its first line, shortened."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return first[:60]
