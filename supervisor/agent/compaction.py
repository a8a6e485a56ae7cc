"""Which parts of the agent's conversation compaction takes. Pure: messages in, decisions out.

The soft layer, masking (first, and alone when it is enough): walking back from the newest
message, tool outputs beyond the newest `protect` tokens are marked pruned, not deleted, if
together at least `min_gain` tokens can go. The newest turns are never pruned. A pruned
output is sent as a placeholder with a short head and tail and a handle; `recall_output`
gives it back whole (The Complexity Trap: masking alone halves cost at the same solve rate).
"""

from __future__ import annotations

from .conversation import Conversation, Message


def sent_tokens(conversation: Conversation, m: Message) -> int:
    from ..contexts.digest import estimate_tokens
    import json

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
