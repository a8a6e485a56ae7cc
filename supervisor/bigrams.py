"""Text in scripts written without spaces between words (Chinese, Japanese, Thai, Lao,
Khmer, Myanmar, Tibetan; Korean too, whose particles join the word before them), as the
search index's second index holds it, and a query's words as that index finds them. Pure:
text in, text out.

The word index (unicode61) takes a run of such characters as one word: `部署` in
`部署失败了` was never found. Here a run is its overlapping pairs of characters (`部署失败` →
`部署 署失 失败`), and its last character apart (so that one character is found wherever it
stands): any stretch of a run is the phrase of its pairs, one character the prefix of a pair
or a run's last. The rest of the text stays as it is, for the words beside it.
"""

from __future__ import annotations

import re
from functools import cache

# The scripts' blocks (their combining marks inside them: Thai vowels are marks).
CHARS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u0f00-\u0fff"  # Tibetan
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3005-\u3007\u3041-\u30ff"  # ideographic marks, Hiragana, Katakana
    "\u3100-\u318f"  # Bopomofo, Hangul compatibility Jamo
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"  # Katakana extension, CJK ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff\uff66-\uff9f"  # CJK compatibility ideographs, halfwidth Katakana
    "\U00020000-\U0003134f"  # CJK ideographs, extensions B-G
)
# The second index's columns: the text with its runs as pairs, and each run's last character.
COLUMNS = ("text", "ends")
# Its tokenizer: the word index's, with combining marks kept inside a word (Thai vowels).
TOKENIZER = "porter unicode61 categories 'L* N* Co M*'"


@cache
def _run() -> re.Pattern:
    """A run of such characters (compiled when first asked: every process that opens the
    database imports this module, few of them meet such text)."""
    return re.compile(f"[{CHARS}]+")


def holds(text: str) -> bool:
    """Whether `text` has any character of these scripts (only such rows are in the second index)."""
    return not text.isascii() and _run().search(text) is not None  # (most text is ASCII: told at once)


def indexed(text: str) -> tuple[str, str]:
    """`text` as the second index holds it: (its runs as pairs, each run's last character)."""
    ends: list[str] = []

    def pairs(m: re.Match) -> str:
        run = m.group()
        if len(run) == 1:
            return f" {run} "
        ends.append(run[-1])
        return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "

    return _run().sub(pairs, text), " ".join(ends)


def phrase(term: str) -> str:
    """The second index's expression for a query's term (its words separated by spaces,
    no quote inside): one character alone is found as a pair's first or a run's last."""
    if _run().fullmatch(term) and len(term) == 1:
        return f'("{term}" * OR ends : "{term}")'
    return '"' + " ".join(indexed(term)[0].split()) + '"'


def places(text: str, term: str) -> list[tuple[int, int]]:
    """Where a query's term (words separated by spaces) stands in `text`: its runs exactly,
    its other words as whole words, whatever their case and the spaces between them."""
    parts = []
    for word in term.split():
        pieces = [p for p in re.split(f"([{CHARS}]+)", word) if p]
        for n, piece in enumerate(pieces):
            if _run().fullmatch(piece):
                parts.append(re.escape(piece))
            else:  # a whole word where it does not touch a run
                parts.append(("" if n else r"(?<!\w)") + re.escape(piece) + ("" if n < len(pieces) - 1 else r"(?!\w)"))
    pattern = r"[^\w\n]*".join(parts)  # (within a line: a hit is shown by its lines)
    return [m.span() for m in re.finditer(pattern, text, re.IGNORECASE)] if pattern else []
