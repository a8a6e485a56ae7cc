"""How much of the model's context the agent may use, and how much it uses now. Pure.

usable = context limit - output reserve - system prompt and tool definitions - a safety
buffer (an open-source agent's overflow rule, seed 000). What the context holds is the last step's real
usage (input + cache read + cache write + output: what that call's context held, per step,
never a running total) plus an estimate of what was appended since (chars/4, non-ASCII
heavier). Compaction is considered before every model call, from `trigger` x usable on.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..contexts.digest import estimate_tokens

TRIGGER = 0.8  # compact at this share of the usable context
SAFETY = 0.02  # of the limit, for the estimate's error


@dataclass(frozen=True)
class Budget:
    """The model's window and what a call takes of it: when the conversation is compacted."""

    limit: int  # the model's context window, tokens
    output_reserve: int  # max_tokens of a call
    overhead: int  # system prompt and tool definitions
    trigger: float = TRIGGER

    @property
    def usable(self) -> int:
        return max(1_000, self.limit - self.output_reserve - self.overhead - int(self.limit * SAFETY))

    @property
    def target(self) -> int:
        """Compaction starts above this, and must bring the context back under it."""
        return int(self.usable * self.trigger)

    @property
    def protect(self) -> int:
        """The newest tool outputs kept whole: ~40k tokens, at most a quarter of usable (so a
        32k-token model works as a 200k one does)."""
        return min(40_000, self.usable // 4)

    @property
    def min_prune(self) -> int:
        """Masking is worth it only if at least this much can go: ~20k, at most an eighth."""
        return min(20_000, self.usable // 8)


def overhead(system: str, tool_defs: list[dict]) -> int:
    import json

    return estimate_tokens(system) + estimate_tokens(json.dumps(tool_defs))


def size(last_usage: int, appended: int) -> int:
    """What the next request holds: the last call's real context plus what came since."""
    return last_usage + appended
