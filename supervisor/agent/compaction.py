"""Which parts of the agent's conversation compaction takes. Pure: messages in, decisions out.

The hard layer, a summary pivot (only when masking cannot bring the context under the
target): everything before a cut point (the newest KEEP_LAST messages stay, never a tool
result without its call) becomes one structured summary, which integrates the previous
round's and carries the original request verbatim (put there by the agent, not the model);
it is validated (every section, smaller than what it replaces). The next request is the
system prompt, the summary and the kept messages, nothing from before the pivot.

The soft layer, masking (first, and alone when it is enough): walking back from the newest
message, tool outputs beyond the newest `protect` tokens are marked pruned, not deleted, if
together at least `min_gain` tokens can go. The newest turns are never pruned. A pruned
output is sent as a placeholder with a short head and tail and a handle; `recall_output`
gives it back whole (The Complexity Trap: masking alone halves cost at the same solve rate).
"""

from __future__ import annotations

import json

from .conversation import Conversation, Message


def sent_tokens(conversation: Conversation, m: Message) -> int:
    from ..contexts.digest import estimate_tokens

    return m.tokens if not m.pruned else estimate_tokens(json.dumps(conversation.sent(m), ensure_ascii=False))


def maskable(conversation: Conversation, protect: int, min_gain: int) -> tuple[list[int], int]:
    """(the seqs of the tool outputs to prune, the tokens that saves), or ([], 0) if it would
    save less than `min_gain`."""
    from ..contexts.digest import estimate_tokens
    from .conversation import placeholder

    newest = 0
    picks: list[int] = []
    gain = 0
    for m in reversed(conversation.messages):
        if m.compacted:
            continue
        cost = sent_tokens(conversation, m)
        if m.role == "tool" and not m.pruned and newest >= protect:
            saved = cost - estimate_tokens(placeholder("x" * conversation.preview * 2, m.seq, conversation.preview)) - 20
            if saved > 0:
                picks.append(m.seq)
                gain += saved
        newest += cost
    return (sorted(picks), gain) if gain >= min_gain else ([], 0)


# -- the hard layer: a summary pivot ----------------------------------------------------------

KEEP_LAST = 10  # messages kept as they are after a summary
SECTIONS = (
    "Original request",
    "Constraints and preferences",
    "Completed work",
    "Key decisions",
    "Current state",
    "Pending",
    "Errors and fixes",
    "Next step",
)
SUMMARY_SYSTEM = (
    "You compact the conversation of a coding agent. Write a structured summary that lets the agent carry "
    "on without the conversation: under each of these headings, in this order, as '## Heading' lines: "
    + ", ".join(SECTIONS)
    + ". Be specific: exact file paths, commands, names, numbers. Integrate the previous "
    "summary if there is one (keep what still holds). Plain text only; no tool calls."
)


def cut(conversation: Conversation, keep: int = KEEP_LAST) -> int | None:
    """The seq of the first message kept after a pivot: the newest `keep` messages, moved
    back so no tool result is kept without its call. None: nothing to summarize."""
    active = [m for m in conversation.messages if not m.compacted and m.role != "summary"]
    if len(active) <= keep:
        return None
    i = len(active) - keep
    while i > 0 and active[i].role == "tool":
        i -= 1
    return active[i].seq if i > 0 else None


def summary_input(conversation: Conversation, first_kept: int, budget_tokens: int) -> str:
    """What the summary call reads: the previous summary and the messages before the cut, as
    text, the newest kept whole within `budget_tokens` (the oldest are cut first)."""
    from ..contexts.digest import estimate_tokens

    lines = []
    previous = conversation.latest_summary()
    for m in conversation.messages:
        if m.compacted or m.role == "summary" or m.seq >= first_kept:
            continue
        for b in conversation.sent(m):
            if b.get("type") == "text" and b.get("text"):
                lines.append(f"{'User' if m.role == 'user' else 'Assistant'}: {b['text']}")
            elif b.get("type") == "tool_use":
                lines.append(f"Tool call: {b['name']}({json.dumps(b.get('input', {}), ensure_ascii=False)[:400]})")
            elif b.get("type") == "tool_result":
                content = b.get("content")
                text = content if isinstance(content, str) else ""
                lines.append(f"Result{' (error)' if b.get('is_error') else ''}: {text[:1500]}")
    body = "\n".join(lines)
    while estimate_tokens(body) > budget_tokens and len(body) > 1000:
        body = body[len(body) // 4 :]  # the oldest go first
    head = f"## Previous summary\n{previous}\n\n" if previous else ""
    return head + "## Conversation to summarize\n" + body


def valid(summary: str, replaced_tokens: int) -> str | None:
    """Why the summary will not do (None: it will): a heading missing, or not smaller than
    what it replaces."""
    from ..contexts.digest import estimate_tokens

    missing = [s for s in SECTIONS if f"## {s}" not in summary]
    if missing:
        return f"missing sections: {', '.join(missing)}"
    if estimate_tokens(summary) >= replaced_tokens:
        return "not smaller than what it replaces"
    return None


def with_request(summary: str, request: str) -> str:
    """The summary with its original request section replaced by the request itself,
    verbatim: carried by the agent, not left to the model to copy."""
    import re

    section = f"## Original request\n{request.strip()}\n\n"
    return re.sub(r"## Original request\n.*?(?=\n## |\Z)", lambda m: section.rstrip("\n"), summary, count=1, flags=re.S)
