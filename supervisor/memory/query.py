"""What a search asks, as SQLite's full-text index reads it, and what a hit shows. Pure: text
in, text out.

A query is what a person or an agent types: words, a file name, an error's name, a
"quoted phrase". Every word is matched as a word (the index stems them: "fixing" finds
"fixed"), never as the index's own syntax (`NOT`, `col:`, `*` are words here); a word with
punctuation inside (`src/net.py`, `ECONNRESET:`) is the phrase of its parts. All words must
match; when nothing has all of them, any of them will do (bm25 ranks hits with more first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from .. import bigrams
from ..plaintext import clip, plain
from ..redact import by_line, redact

# The index's marks around a matched word (highlight()): characters no log line holds.
OPEN, CLOSE = "\x01", "\x02"
LINE_SHOWN = 240  # characters of a hit's line, around its first match
_WORD = re.compile(rf"(?:\w|[{bigrams.CHARS}])+")  # (a Thai vowel is a mark, not a \w)
_TERM = re.compile(r'"([^"]*)"|(\S+)')
_RELATIVE = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
OLDEST = 100  # years: the farthest back an age reaches (no session is older; a larger one overflows a date)


class BadQuery(ValueError):
    pass


def terms(text: str) -> list[str]:
    """The query's terms: each "quoted phrase" or word, as the words the index holds."""
    out = []
    for m in _TERM.finditer(plain(text, newlines=False)):
        words = _WORD.findall(m.group(1) if m.group(1) is not None else m.group(2))
        if words:
            out.append(" ".join(words))
    return out


def match(text: str, every: bool = True) -> str:
    """The FTS5 expression for `text` in the word index: all its terms (`every`), else any of them."""
    quoted = [f'"{t}"' for t in dict.fromkeys(_found(text))]  # a term is letters, digits and spaces: no quote inside
    return (" AND " if every else " OR ").join(quoted)


def unspaced(text: str) -> bool:
    """Does the query hold a script written without spaces? Then the second index answers it
    (store/grams.py: it holds the whole text of every row that has such a script)."""
    return any(bigrams.holds(t) for t in terms(text))


def grams_match(text: str, every: bool = True) -> str:
    """The FTS5 expression for `text` in the second index (bigrams.py)."""
    return (" AND " if every else " OR ").join(bigrams.phrase(t) for t in dict.fromkeys(_found(text)))


def _found(text: str) -> list[str]:
    found = terms(text)
    if not found:
        raise BadQuery("the query has no words to search for")
    return found


def marked(text: str, words: tuple[str, ...]) -> str:
    """`text` with the index's marks around each place a query's term stands (bigrams.places):
    what highlight() gives for the word index, made here for the second (it holds no text)."""
    spans: list[tuple[int, int]] = []
    for term in words:
        for a, b in bigrams.places(text, term):
            if b > a and not any(x < b and a < y for x, y in spans):
                spans.append((a, b))
    out, done = [], 0
    for a, b in sorted(spans):
        out += [text[done:a], OPEN, text[a:b], CLOSE]
        done = b
    return "".join(out) + text[done:]


def since(text: str, now: datetime | None = None) -> str:
    """`--since`: a date (2026-11-20), a time (2026-11-20T14:00), or an age (90m, 12h, 7d,
    2w), as the UTC ISO time the store compares with."""
    now = now or datetime.now(timezone.utc)
    text = text.strip()
    shown = clip(plain(text, newlines=False), 40)
    m = _RELATIVE.match(text.lower())
    if m:
        unit = timedelta(**{_UNITS[m.group(2)]: 1})
        most = timedelta(days=365 * OLDEST) // unit
        if int(m.group(1)) > most:
            raise BadQuery(f"'{shown}' is too far back: an age is at most {most}{m.group(2)} ({OLDEST} years)")
        return (now - int(m.group(1)) * unit).isoformat(timespec="milliseconds")
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise BadQuery(f"'{shown}' is not a date or an age") from None
    try:
        if when.tzinfo is None:
            when = when.astimezone()  # the user's own clock
        when = when.astimezone(timezone.utc)
    except (OverflowError, ValueError):  # its time zone takes it past year 1 or 9999: the calendar's end
        when = (datetime.min if when.year == 1 else datetime.max).replace(tzinfo=timezone.utc)
    return when.isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Line:
    """A line of a hit, with its matched words marked."""

    text: str  # one line, plain, secrets masked
    marks: tuple[tuple[int, int], ...]  # the matched words in it (start, end)
    at: int  # where it starts in the marked text (characters, markers not counted)
    terms: int = 0  # how many of the query's words it holds (the index matched them in its chunk, maybe lines apart)
    first: int = 0  # where its first match is, in characters from its start (in the indexed line, before it was cut)


def lines(marked: str, most: int) -> list[Line]:
    """The lines of `marked` (text with the index's marks) that match, the ones with more of
    the query's words first (then in order), at most `most`; each shown as `Line`: cut
    around its first match, control characters and secrets taken out."""
    found: list[tuple[int, int, int, str]] = []  # (distinct words, position, line number, the line)
    at = 0
    raws = marked.split("\n")
    for n, raw in enumerate(raws):
        words = {w.lower() for w in _marked(raw)}
        if words:
            found.append((len(words), at, n, raw))
        at += len(raw.replace(OPEN, "").replace(CLOSE, "")) + 1
    found.sort(key=lambda f: (-f[0], f[1]))
    # masked as a whole first: a secret a terminal wrapped is masked on each of its lines
    masked = by_line(marked.replace(OPEN, "").replace(CLOSE, "")) if found else []
    out = []
    for terms, start, n, raw in found[:most]:
        first = raw.find(OPEN)  # (no mark before it: a position in the indexed text)
        out.append(replace(mark(around(masked[n], first), set(_marked(raw)), start), terms=terms, first=first))
    return out


def _marked(raw: str) -> list[str]:
    return [w for w in re.findall(f"{OPEN}(.*?){CLOSE}", raw, re.S) if w.strip()]


def mark(text: str, words: set[str], at: int = 0) -> Line:
    """`text` as a hit shows it, with `words` marked wherever they stand whole (a stretch of a
    script written without spaces wherever it stands): secrets are
    masked first, and a word that was part of one is not found again."""
    shown = " ".join(plain(redact(text), newlines=False).split())
    marks: list[tuple[int, int]] = []
    for word in sorted(words, key=len, reverse=True):
        # (a stretch of a script written without spaces stands inside its run)
        before, after = ("", "") if bigrams.holds(word) else (r"(?<!\w)", r"(?!\w)")
        for m in re.finditer(rf"{before}{re.escape(word)}{after}", shown):
            if not any(a < m.end() and m.start() < b for a, b in marks):
                marks.append((m.start(), m.end()))
    return Line(shown, tuple(sorted(marks)), at)


def around(line: str, first: int, most: int = LINE_SHOWN) -> str:
    """At most `most` characters of `line`, from a little before character `first` (its
    first match), an ellipsis at each end that was cut."""
    if len(line) <= most:
        return line
    begin = max(0, min(first - most // 4, len(line) - most))
    cut = line[begin : begin + most]
    return ("…" if begin else "") + cut + ("…" if begin + most < len(line) else "")


def shown(line: Line, bold: bool) -> str:
    """The line for a terminal (its matches in bold) or a pipe (plain)."""
    if not bold:
        return line.text
    out, done = [], 0
    for a, b in line.marks:
        out += [line.text[done:a], "\x1b[1m", line.text[a:b], "\x1b[22m"]
        done = b
    out.append(line.text[done:])
    return "".join(out)
