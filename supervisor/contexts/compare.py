"""What an agent's own compaction summary kept beside supervise's context of the same moment:
each request, file, decision, error and pending step of the context found in the summary or
not, and the files the summary names that the context does not. Plain functions over data;
`supervise show` and the fidelity benchmark print them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

# (field of a context, what one item of it is called)
FIELDS = (
    ("original_request", "request"),
    ("latest_request", "latest request"),
    ("relevant_files", "file"),
    ("key_decisions", "decision"),
    ("errors_and_resolutions", "error"),
    ("pending_steps", "pending"),
    ("completed_steps", "done"),
)
KEPT = 0.75  # share of an item's words a summary must hold to have kept it
_WORD = re.compile(r"[a-z0-9][a-z0-9_]+")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[a-z][a-z0-9]{0,5})(?![\w/-])", re.I)
_STOP = frozenset(
    "the a an and or of to in on for with from into that this these those is are was were be been it its as at by "
    "not no but so then than use used using should would could will can after before over under about which what".split()
)


@dataclass(frozen=True)
class Item:
    """One item of a context: its field and its text."""

    kind: str
    text: str


@dataclass
class Compared:
    """Two contexts' items: the ones both hold, and each one's own."""

    both: list[Item] = field(default_factory=list)
    only_ours: list[Item] = field(default_factory=list)
    only_theirs: list[Item] = field(default_factory=list)


def _stems(text: str) -> set[str]:
    """Its words, crudely stemmed (adds/added/adding -> add): enough to tell a fact kept."""
    return {_ENDING.sub("", w)[:6] for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


_ENDING = re.compile(r"(?:ing|ed|es|s)$")


def _file(item: str) -> str:
    """A relevant_files item's path ("src/a.py: what it does" -> "src/a.py")."""
    return item.split(":", 1)[0].strip().strip("`")


def kept(item: str, summary: str, stems: set[str] | None = None) -> bool:
    """Whether `summary` holds `item`: the file names it mentions, and most of its other words."""
    paths = _PATH.findall(item)
    if any(p.rsplit("/", 1)[-1] not in summary for p in paths):
        return False
    words = _stems(_PATH.sub(" ", item))
    if not words:
        return True
    held = stems if stems is not None else _stems(summary)
    return len(words & held) / len(words) >= KEPT


def items(context: Mapping) -> list[Item]:
    out, seen = [], set()
    for key, kind in FIELDS:
        value = context.get(key)
        values = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for v in values:
            text = (_file(v) if kind == "file" else v.strip()) if isinstance(v, str) else ""
            if text and text not in seen:  # the latest request is often the original one
                seen.add(text)
                out.append(Item(kind, text))
    return out


def compare(context: Mapping, summary: str) -> Compared:
    stems = _stems(summary)
    out = Compared()
    for item in items(context):
        found = (item.text.rsplit("/", 1)[-1] in summary) if item.kind == "file" else kept(item.text, summary, stems)
        (out.both if found else out.only_ours).append(item)
    ours = {i.text.rsplit("/", 1)[-1] for i in items(context) if i.kind == "file"}
    ours_text = " ".join(i.text for i in items(context))
    for path in dict.fromkeys(_PATH.findall(summary)):
        if path.rsplit("/", 1)[-1] not in ours and path not in ours_text:
            out.only_theirs.append(Item("file", path))
    return out


def when(text: str) -> float:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except (TypeError, ValueError):
        return 0.0


def paired(summaries: Sequence[Mapping], rounds: Sequence[Mapping]) -> list[tuple[Mapping, Mapping | None]]:
    """Each of the agent's summaries (events) with supervise's round of the same compaction:
    the compaction round made nearest to it in time, else the nearest round at all."""
    out = []
    for s in summaries:
        at = when(s["time"])
        pool = [r for r in rounds if str(r.get("trigger", "")).startswith("compaction")] or list(rounds)
        out.append((s, min(pool, key=lambda r: abs(when(r["created"]) - at)) if pool else None))
    return out


def report(events: Sequence[Mapping], rounds: Sequence[Mapping]) -> list[dict]:
    """Per compaction the agent summarized: its summary, supervise's round, and what each kept."""
    out = []
    for event, row in paired([e for e in events if e["kind"] == "agent_summary"], rounds):
        summary = (event.get("detail") or {}).get("text") or ""
        entry: dict = {"offset": event.get("offset"), "agent_summary": summary, "agent_tokens": (event.get("detail") or {}).get("tokens")}
        if row is not None:
            c = compare(row["context"], summary)
            entry.update(
                round=row["round"],
                both=[vars(i) for i in c.both],
                only_ours=[vars(i) for i in c.only_ours],
                only_theirs=[vars(i) for i in c.only_theirs],
            )
        out.append(entry)
    return out
