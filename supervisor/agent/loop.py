"""The agent's loop (seed 001): one streamed model call per step, tools declared but run
by us, several tool calls of one step run in order; persisted as it happens (the assistant
message, then each tool result). It stops on a text-only answer, the step limit, Ctrl-C, or
a fatal error.

Lines the user types meanwhile are handed over at the next step, after that step's tool
results, in the same user turn. Ctrl-C while the answer streams keeps what arrived (marked interrupted); Ctrl-C while a
tool runs lets that tool finish, records its result and stops before the next step; a
second Ctrl-C within a second quits at once.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path

from . import tools
from .budget import Budget, overhead
from .compaction import maskable, sent_tokens
from .conversation import Conversation
from .model import Cancelled, Model, Step
from .sandbox import Sandbox

SYSTEM = (
    "You are a coding agent. The user's project is at /workspace, inside a Linux container that is "
    "yours: run commands there with execute_command, and read, write and list files with the file "
    "tools (paths are relative to /workspace). Work step by step, check what you did, and when the "
    "task is done, answer with a short summary and no tool call."
)
SHOWN_LINES = 3  # lines of a tool's result shown under its call


class Agent:
    def __init__(
        self,
        conversation: Conversation,
        model: Model,
        sandbox: Sandbox,
        workspace: Path,
        *,
        write: Callable[[str], None],
        ask: Callable[[str], str] | None = None,
        queued: Callable[[], list[str]] = lambda: [],
        max_steps: int = 50,
        timeout: float = tools.DEFAULT_TIMEOUT,
        context_limit: int = 200_000,
        compaction: str = "auto",
        compact_at: float = 0.8,
    ):
        self.conversation = conversation
        self.model = model
        self.sandbox = sandbox
        self.workspace = workspace
        self.write = write
        self.ask = ask  # --confirm: asks before each command
        self.queued = queued  # lines the user typed while the agent worked
        self.max_steps = max_steps
        self.timeout = timeout
        self.context_limit = context_limit
        reserve = min(getattr(model, "max_tokens", 8192), context_limit // 4)  # a call's output, at most
        self.budget = Budget(context_limit, reserve, overhead(SYSTEM, tools.TOOLS), compact_at) if compaction == "auto" else None
        self.last_real = 0  # the last step's real context size (tokens, from the API)
        self.appended = 0  # estimated tokens added since that step
        self.round = 0  # compactions so far
        self.state = "idle"  # idle | streaming | tools
        self.cancelled = False
        self._last_interrupt = 0.0

    def on_interrupt(self, signum, frame) -> None:
        """SIGINT: what Ctrl-C means depends on what the agent is doing."""
        now = time.monotonic()
        if now - self._last_interrupt < 1.0:
            raise SystemExit(130)  # twice within a second: quit at once
        self._last_interrupt = now
        if self.state == "streaming":
            raise Cancelled()
        if self.state == "tools":
            self.cancelled = True
            self.write("\n(Ctrl-C: stopping after this command; press it again to quit now)\n")
            return
        raise KeyboardInterrupt

    def run(self, task: str) -> str:
        """Work on `task` until done: "done", "max_steps" or "cancelled"."""
        signal.signal(signal.SIGINT, self.on_interrupt)
        self.cancelled = False
        self._added(self.conversation.user(task))
        for _ in range(self.max_steps):
            self.compact_if_needed()
            step = self._ask_model()
            self.conversation.add("assistant", step.content, step.usage or None, step.interrupted)
            self.last_real, self.appended = step.context_tokens, 0
            if step.interrupted:
                self.write("\n(interrupted)\n")
                return "cancelled"
            self.write("\n")
            self._footer(step)
            if not step.tool_calls:
                return "done"
            self._run_tools(step)
            if self.cancelled:
                return "cancelled"
            lines = self.queued()
            if lines:  # in the same user turn as the tool results, so tool pairs stay valid
                self.write(f"(giving the agent {len(lines)} queued line(s))\n")
                self._added(self.conversation.user("\n".join(lines)))
        self.write(f"stopped after {self.max_steps} steps (--max-steps)\n")
        return "max_steps"

    def _ask_model(self) -> Step:
        self.state = "streaming"
        try:
            return self.model.step(SYSTEM, tools.TOOLS, self.conversation.for_api(), self.write)
        finally:
            self.state = "idle"

    def _run_tools(self, step: Step) -> None:
        self.state = "tools"
        try:
            for call in step.tool_calls:
                if self.cancelled:  # not started: answered anyway, so the call has its result
                    self._added(self.conversation.tool_result(call["id"], "not run: the user stopped the agent", True))
                    continue
                text, is_error = self._run_tool(call)
                self._added(self.conversation.tool_result(call["id"], text, is_error))
        finally:
            self.state = "idle"

    def _run_tool(self, call: dict) -> tuple[str, bool]:
        args = call.get("input") or {}
        shown = args.get("command") or args.get("path") or ""
        self.write(f"● {call['name']}({shown})\n")
        if self.ask is not None and call["name"] == "execute_command":
            if self.ask("Run this command? [y/N] ").strip().lower() not in ("y", "yes"):
                self.write("  ⎿ declined\n")
                return "the user declined to run this command", True
        if call["name"] == "recall_output":
            whole = self.conversation.recall(int(args.get("handle") or 0))
            text, is_error = (tools.cap(whole, 2 * tools.OUTPUT_CAP), False) if whole is not None else ("no pruned output has that handle", True)
        else:
            text, is_error = tools.run(self.sandbox, self.workspace, call["name"], args, self.timeout)
        lines = [line for line in text.splitlines() if line.strip()]
        for line in lines[:SHOWN_LINES]:
            self.write(f"  ⎿ {line[:200]}\n")
        if len(lines) > SHOWN_LINES:
            more = len(lines) - SHOWN_LINES
            self.write(f"  ⎿ … {more} more line{'s' if more > 1 else ''}\n")
        return text, is_error

    # -- compaction ----------------------------------------------------------------------------

    def _added(self, message) -> None:
        self.appended += sent_tokens(self.conversation, message)

    def context_size(self) -> int:
        """What the next request holds: the last step's real size plus what came since (before
        the first step: our estimate of it all)."""
        if self.last_real:
            return self.last_real + self.appended
        active = [m for m in self.conversation.messages if not m.compacted]
        return self.budget.overhead + sum(sent_tokens(self.conversation, m) for m in active)

    def compact_if_needed(self) -> None:
        """Before a model call: past the target, mask old tool outputs."""
        if self.budget is None:
            return
        before = self.context_size()
        if before <= self.budget.target:
            return
        picks, saved = maskable(self.conversation, self.budget.protect, self.budget.min_prune)
        if not picks:
            return
        self.write("⟳ Compacting context (masking old tool outputs)\n")
        self.round += 1
        after = before - saved
        self.conversation.prune(picks, ("agent_compaction", {"round": self.round, "layer": "mask", "before": before, "after": after, "pruned": len(picks)}))
        if self.last_real:
            self.last_real -= saved
        else:
            self.appended = 0
        self.write(f"✓ Context compacted: {before} → {self.context_size()} tokens (masked {len(picks)} tool outputs)\n")

    def _footer(self, step: Step) -> None:
        used = step.context_tokens
        left = max(0, 100 - used * 100 // self.context_limit)
        self.write(f"Context: {left}% left ({used:,} of {self.context_limit:,} tokens)\n")
