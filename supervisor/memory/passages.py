"""What of a text is embedded for search by meaning: its lines, each one a passage.

A chunk of a log (about 8 KB) is too long to embed whole: a small model reads its first few
hundred tokens only, and a line's meaning is lost in the average of a screenful (measured
with a real model: a question found its answer among the first five 6 times in 30 with
passages of 600 characters, 20 with lines; docs/benchmarks.md). So each line is embedded,
cut at PASSAGE characters; one with fewer than WORDS words (a frame of a box, a progress
bar, a prompt) is left out, and so is one its session already holds word for word (a screen
drawn again). Plain functions over text."""

from __future__ import annotations

import hashlib
import re

PASSAGE = 500  # characters: a longer line is cut (a small model reads about 256 tokens)
WORDS = 3  # fewer words of two letters or more than this: nothing to embed
_WORD = re.compile(r"[^\W\d_]{2,}", re.U)


def split(text: str) -> list[tuple[int, int]]:
    """The passages of `text` as (start, end) character offsets, in order."""
    out: list[tuple[int, int]] = []
    start = 0
    for line in text.split("\n"):
        for at in range(start, start + len(line), PASSAGE):
            end = min(at + PASSAGE, start + len(line))
            if worth(text[at:end]):
                out.append((at, end))
        start += len(line) + 1
    return out


def worth(text: str) -> bool:
    """Whether `text` holds enough words to embed."""
    found = 0
    for _ in _WORD.finditer(text):
        found += 1
        if found >= WORDS:
            return True
    return False


def key(text: str) -> bytes:
    """What two passages that say the same thing share (spaces aside)."""
    return hashlib.blake2b(" ".join(text.split()).encode("utf-8"), digest_size=12).digest()


def new(text: str, seen: set[bytes]) -> list[tuple[int, int]]:
    """The passages of `text` not in `seen` (which gains them)."""
    out = []
    for start, end in split(text):
        k = key(text[start:end])
        if k not in seen:
            seen.add(k)
            out.append((start, end))
    return out
