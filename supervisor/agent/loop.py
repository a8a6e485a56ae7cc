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

from ..errors import SuperviseError
from . import tools
from .budget import TRIGGER, Budget, overhead
from .compaction import KEEP_LAST, SUMMARY_SYSTEM, cut, maskable, sent_tokens, summary_input, valid, with_request
from .conversation import Conversation
from .model import Cancelled, Model, Step, TooLong, summarize
from .sandbox import Sandbox

SYSTEM = (
    "You are a coding agent. The user's project is at /workspace, inside a Linux container that is "
    "yours: run commands there with execute_command, and read, write and list files with the file "
    "tools (paths are relative to /workspace); what earlier sessions in the project did is found "
    "with the supervise_ tools. Work step by step, check what you did, and when the "
    "task is done, answer with a short summary and no tool call."
)
SHOWN_LINES = 3  # lines of a tool's result shown under its call
ESCALATIONS = 3  # at most this many further attempts in one compaction (then the model call goes ahead)
SHORT_PREVIEW = 40  # characters of head and tail once previews are shortened


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
        compact_at: float = TRIGGER,
        summary_model: str | None = None,
        layers: tuple[str, ...] = ("mask", "summary"),
        keep_last: int = KEEP_LAST,
        memory=None,
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
        self.memory = memory  # earlier sessions, looked up by the memory tools (memory.mcpserver.Memory), if given
        self.tools = tools.TOOLS + (tools.MEMORY_TOOLS if memory is not None else [])
        self.budget = Budget(context_limit, reserve, overhead(SYSTEM, self.tools), compact_at) if compaction == "auto" else None
        if self.budget is None:  # /compact still works with automatic compaction off
            self._manual_budget = Budget(context_limit, reserve, overhead(SYSTEM, self.tools), compact_at)
        self.summary_model = summary_model
        self.layers = set(layers)  # both, unless a benchmark compares them
        self.keep_last = keep_last
        self.last_real = 0  # the last step's real context size (tokens, from the API); 0: estimate
        self.appended = 0  # estimated tokens added since that step
        self.correction = 1.0  # real / estimated, learnt from "prompt is too long"
        self.round = 0  # compactions so far
        self.refused = 0  # summaries refused (they did not shrink the context)
        self._summary_failed = False  # the last summary did not shrink: do not ask for another at once
        self.state = "idle"  # idle | streaming | tools | compacting
        self.cancelled = False
        self._last_interrupt = 0.0

    def on_interrupt(self, signum, frame) -> None:
        """SIGINT: what Ctrl-C means depends on what the agent is doing."""
        now = time.monotonic()
        if now - self._last_interrupt < 1.0:
            raise SystemExit(130)  # twice within a second: quit at once
        self._last_interrupt = now
        if self.state in ("streaming", "compacting"):
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
            try:
                self.compact_if_needed()
            except Cancelled:  # nothing of an unfinished compaction was written
                self.write("\n(compaction interrupted)\n")
                return "cancelled"
            try:
                step = self._ask_with_recovery()
            except Cancelled:  # while a "prompt is too long" recovery compacted
                self.write("\n(compaction interrupted)\n")
                return "cancelled"
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

    def _ask_with_recovery(self) -> Step:
        """The model call; on "prompt is too long": correct the estimate by the API's count,
        compact, retry once; then reset to the summary, the request and the last turn, and
        retry; only then fail. Nothing is deleted from the database on the way."""
        for attempt in range(3):
            try:
                return self._ask_model()
            except TooLong as exc:
                self.write(f"✗ Context overflow: {exc}\n")
                if exc.actual:
                    self.correction *= exc.actual / max(1, self._estimate())
                self.last_real = self.appended = 0
                if attempt == 0:
                    self.compact_if_needed(force=True)
                elif attempt == 1:
                    self._reset()
        raise SuperviseError(
            "the conversation does not fit the model's context, even reset to its summary and the last turn",
            "start anew with `supervise resume ID --fresh`, or pass a larger --context-limit",
        )

    def _ask_model(self) -> Step:
        self.state = "streaming"
        try:
            return self.model.step(SYSTEM, self.tools, self.conversation.for_api(), self.write)
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
            text, is_error = (
                (tools.cap(whole, 2 * tools.OUTPUT_CAP), False) if whole is not None else ("no pruned output has that handle", True)
            )
        else:
            text, is_error = tools.run(self.sandbox, self.workspace, call["name"], args, self.timeout, self.memory)
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

    def _estimate(self) -> int:
        budget = self.budget or self._manual_budget
        return budget.overhead + sum(sent_tokens(self.conversation, m) for m in self.conversation.messages if not m.compacted)

    def context_size(self) -> int:
        """What the next request holds: the last step's real size plus what came since
        (after a compaction or before the first step: our estimate, corrected by what the
        API once said)."""
        if self.last_real:
            return self.last_real + self.appended
        return int(self._estimate() * self.correction)

    def compact_now(self) -> None:
        """`/compact` at the prompt: summarize now, then wait for the user."""
        signal.signal(signal.SIGINT, self.on_interrupt)  # (also when no turn has run yet)
        self.compact_if_needed(force=True)

    def compact_if_needed(self, force: bool = False) -> None:
        """Before a model call: past the target, mask old tool outputs; if that is not
        enough, a summary pivot; if still not, escalate (harder masking, shorter previews,
        the oldest kept turns dropped in pairs), a bounded number of times."""
        budget = self.budget or (self._manual_budget if force else None)
        if budget is None:
            return
        before = self.context_size()
        if not force and before <= budget.target:
            return
        self.state = "compacting"  # Ctrl-C abandons it (also one that answers the line below); what is written is written whole
        try:
            self.write("⟳ Compacting context\n")
            self._compact(budget, before, force)
        finally:
            self.state = "idle"

    def _compact(self, budget: Budget, before: int, force: bool) -> None:
        layers = []
        if not force and "mask" in self.layers:
            picks, _ = maskable(self.conversation, budget.protect, budget.min_prune)
            if picks:
                self._record_mask(picks, before, "mask")
                layers.append(f"masked {len(picks)} tool outputs")
        if (force or self.context_size() > budget.target) and "summary" in self.layers:
            if self._summary_failed and not force:
                self._summary_failed = False  # not twice in a row: escalate instead this time
            elif self._summarize(budget, before):
                layers.append("summarized")
        for attempt in range(ESCALATIONS):
            if self.context_size() <= budget.target:
                break
            if attempt == 0 and "mask" in self.layers:
                picks, _ = maskable(self.conversation, budget.protect // 4, 1)
                if picks:
                    self._record_mask(picks, before, "mask-harder")
                    layers.append(f"masked {len(picks)} more")
            elif attempt == 1 and "mask" in self.layers:
                self.conversation.preview = SHORT_PREVIEW
                self.last_real = self.appended = 0
                layers.append("shorter previews")
            elif attempt == 2 and self._drop_oldest_pair():
                layers.append("dropped the oldest turns")
        self.last_real = self.appended = 0
        after = self.context_size()
        self.write(f"✓ Context compacted: {before} → {after} tokens ({', '.join(layers) or 'nothing could go'})\n")

    def _record_mask(self, picks: list[int], before: int, layer: str) -> None:
        self.round += 1
        self.conversation.prune(picks, ("agent_compaction", {"round": self.round, "layer": layer, "before": before, "pruned": len(picks)}))
        self.last_real = self.appended = 0

    def _summarize(self, budget: Budget, before: int) -> bool:
        first = cut(self.conversation, self.keep_last)
        if first is None:
            return False
        conv = self.conversation
        replaced = sum(sent_tokens(conv, m) for m in conv.messages if not m.compacted and m.seq < first)
        text = summary_input(conv, first, budget.usable // 2)
        for attempt in range(2):
            try:
                summary, _ = summarize(self.model, SUMMARY_SYSTEM, text, self.summary_model)
            except TooLong:
                text = text[len(text) // 2 :]
                continue
            summary = with_request(summary, conv.original_request())
            why = valid(summary, replaced)
            if why is None:
                self.round += 1
                conv.pivot(
                    first,
                    summary,
                    (
                        "agent_compaction",
                        {"round": self.round, "layer": "summary", "before": before, "replaced": replaced, "summary": summary},
                    ),
                )
                self.last_real = self.appended = 0
                self._summary_failed = False
                return True
            if why.startswith("not smaller"):
                break  # asking again costs a second call that would not shrink it either
        self.refused += 1
        self._summary_failed = True
        self.write("(the summary would not shrink the context: refused)\n")
        return False

    def _drop_oldest_pair(self) -> bool:
        """Drop the two oldest kept messages (a call and its results together), never the
        summary and never the last user turn."""
        conv = self.conversation
        active = [m for m in conv.messages if not m.compacted and m.role != "summary"]
        if len(active) <= 3:
            return False
        first_kept = active[2].seq
        i = 2
        while i < len(active) - 1 and active[i].role == "tool":
            i += 1
        first_kept = active[i].seq
        summary = conv.latest_summary() or f"## Original request\n{conv.original_request()}"
        self.round += 1
        conv.pivot(first_kept, summary, ("agent_compaction", {"round": self.round, "layer": "drop", "dropped": i}))
        return True

    def _reset(self) -> None:
        """The last resort before failing: the summary (or the request), the last user turn."""
        conv = self.conversation
        last_user = next((m for m in reversed(conv.messages) if m.role == "user" and not m.compacted), None)
        summary = conv.latest_summary() or f"## Original request\n{conv.original_request()}"
        self.round += 1
        conv.pivot(last_user.seq if last_user else None, summary, ("agent_compaction", {"round": self.round, "layer": "reset"}))
        self.last_real = self.appended = 0

    def _footer(self, step: Step) -> None:
        used = step.context_tokens
        left = max(0, 100 - used * 100 // self.context_limit)
        self.write(f"Context: {left}% left ({used:,} of {self.context_limit:,} tokens)\n")
