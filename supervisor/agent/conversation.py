"""The agent's conversation, kept in the `messages` table of the session's database.

Persisted in the order things happen, always: the user's turn, the assistant's message as
soon as its step's answer is complete (or cut short: kept and marked interrupted), then
each tool result as it completes, each in its own transaction. A crash loses at most the
step in flight. Read back for the model (`for_api`), consecutive tool results and the
lines the user queued meanwhile become one user turn, and a tool call whose result was
never recorded (a crash mid-tool) gets an error result, so every request is valid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..redact import redact_data
from ..contexts.digest import estimate_tokens
from ..store.database import Event, Store, utcnow

SUMMARY_HEAD = "[The conversation so far was compacted into this summary. Continue the task from its current state.]\n\n"
PREVIEW = 200  # characters of a pruned output's head and of its tail the model still sees


@dataclass
class Message:
    """One message of the conversation, as the Messages API takes it, in its order."""

    seq: int
    role: str  # user | assistant | tool
    content: list[dict]
    usage: dict | None = None
    interrupted: bool = False
    pruned: bool = False  # a tool output sent as a placeholder (kept whole here: recall_output)
    compacted: bool = False  # summarized away: not sent any more

    @property
    def tokens(self) -> int:
        return estimate_tokens(json.dumps(self.content, ensure_ascii=False))


class Conversation:
    def __init__(self, store: Store, session_id: str):
        self.store = store
        self.session_id = session_id
        self.messages: list[Message] = [
            Message(
                r["seq"],
                r["role"],
                json.loads(r["content"]),
                json.loads(r["usage"]) if r["usage"] else None,
                bool(r["interrupted"]),
                bool(r["pruned"]),
                bool(r["compacted"]),
            )
            for r in store.db.query("select * from messages where session_id = ? order by seq", [session_id])
        ]
        self.preview = PREVIEW

    def carry_on(self, from_session: str) -> None:
        """Start this (new, empty) session's conversation as a copy of `from_session`'s: a
        resumed session has its whole conversation, and the old one stays as it was."""
        if self.messages:
            return
        with self.store.db.conn:
            self.store.db.execute(
                "insert into messages (session_id, seq, role, content, tokens, usage, interrupted, compacted, pruned, created) "
                "select ?, seq, role, content, tokens, usage, interrupted, compacted, pruned, created from messages "
                "where session_id = ? order by seq",
                [self.session_id, from_session],
            )
        Conversation.__init__(self, self.store, self.session_id)

    def add(self, role: str, content: list[dict], usage: dict | None = None, interrupted: bool = False) -> Message:
        message = Message((self.messages[-1].seq + 1) if self.messages else 1, role, content, usage, interrupted)
        text = json.dumps(redact_data(content), ensure_ascii=False)  # stored masked, as every door shows it
        with self.store.db.conn:
            self.store.db.table("messages").insert(
                {
                    "session_id": self.session_id,
                    "seq": message.seq,
                    "role": role,
                    "content": text,
                    "tokens": estimate_tokens(text),
                    "usage": json.dumps(usage) if usage else None,
                    "interrupted": int(interrupted),
                    "created": utcnow(),
                }
            )
        self.messages.append(message)
        return message

    def user(self, text: str) -> Message:
        return self.add("user", [{"type": "text", "text": text}])

    def tool_result(self, tool_use_id: str, text: str, is_error: bool) -> Message:
        return self.add("tool", [{"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": is_error}])

    def prune(self, seqs: list[int], event: tuple[str, dict] | None = None) -> None:
        """Mark tool outputs pruned (sent as placeholders from now on), and record the event,
        in one transaction."""
        wanted = set(seqs)
        with self.store.db.conn:
            self.store.db.execute(
                f"update messages set pruned = 1 where session_id = ? and seq in ({','.join('?' * len(wanted))})",
                [self.session_id, *sorted(wanted)],
            )
            if event is not None:
                self._event(*event)
        for m in self.messages:
            if m.seq in wanted:
                m.pruned = True

    def pivot(self, first_kept: int | None, summary: str, event: tuple[str, dict]) -> None:
        """Everything before `first_kept` (all of it if None), and earlier summaries, is
        compacted; `summary` stands in for it. One transaction, with the event."""
        seq = (self.messages[-1].seq + 1) if self.messages else 1
        content = [{"type": "text", "text": summary}]
        with self.store.db.conn:
            self.store.db.execute(
                "update messages set compacted = 1 where session_id = ? and (role = 'summary' or seq < ?)",
                [self.session_id, first_kept if first_kept is not None else seq],
            )
            self.store.db.table("messages").insert(
                {
                    "session_id": self.session_id,
                    "seq": seq,
                    "role": "summary",
                    "content": json.dumps(redact_data(content), ensure_ascii=False),
                    "tokens": estimate_tokens(summary),
                    "created": utcnow(),
                }
            )
            self._event(*event)
        for m in self.messages:
            if m.role == "summary" or first_kept is None or m.seq < first_kept:
                m.compacted = True
        self.messages.append(Message(seq, "summary", content))

    def latest_summary(self) -> str:
        for m in reversed(self.messages):
            if m.role == "summary" and not m.compacted:
                return m.content[0]["text"]
        return ""

    def original_request(self) -> str:
        """The first thing the user asked, verbatim (compacted or not)."""
        for m in self.messages:
            if m.role == "user":
                text = "\n".join(b.get("text", "") for b in m.content if b.get("type") == "text").strip()
                if text:
                    return text
        return ""

    def _event(self, kind: str, detail: dict) -> None:
        self.store.add_event(self.session_id, Event(kind, detail, 0.0, utcnow()))

    def recall(self, handle: int) -> str | None:
        """A pruned tool output, whole (None if there is no such output)."""
        for m in self.messages:
            if m.seq == handle and m.role == "tool":
                return _result_text(m.content)
        return None

    def sent(self, m: Message) -> list[dict]:
        """A message's content as the model is sent it: a pruned output as a placeholder."""
        if not m.pruned:
            return list(m.content)
        return [
            {**b, "content": placeholder(_result_text([b]), m.seq, self.preview)} if b.get("type") == "tool_result" else b
            for b in m.content
        ]

    def for_api(self) -> list[dict]:
        """The messages as the Messages API wants them: roles alternating, every tool call
        answered in the next user turn."""
        out: list[dict] = []
        pending: list[str] = []  # tool calls of the last assistant message still unanswered
        summary = self.latest_summary()
        if summary:  # first: it stands in for everything before the kept messages
            out.append({"role": "user", "content": [{"type": "text", "text": SUMMARY_HEAD + summary}]})
        for m in self.messages:
            if m.compacted or m.role == "summary":
                continue
            if m.role == "assistant":
                _answer_missing(out, pending)
                blocks = [b for b in m.content if b.get("type") in ("text", "tool_use") and (b.get("type") != "text" or b.get("text"))]
                if not blocks:
                    continue
                out.append({"role": "assistant", "content": blocks})
                pending = [b["id"] for b in blocks if b["type"] == "tool_use"]
                continue
            blocks = self.sent(m)
            if m.role == "tool":
                pending = [p for p in pending if p not in {b.get("tool_use_id") for b in blocks}]
            else:
                _answer_missing(out, pending)
                pending = []
            if out and out[-1]["role"] == "user":
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": "user", "content": blocks})
        _answer_missing(out, pending)
        return out


def _answer_missing(out: list[dict], pending: list[str]) -> None:
    if not pending:
        return
    missing = [{"type": "tool_result", "tool_use_id": p, "content": "no result recorded (interrupted)", "is_error": True} for p in pending]
    if out and out[-1]["role"] == "user":
        out[-1]["content"][:0] = missing  # tool results come first in their turn
    else:
        out.append({"role": "user", "content": missing})
    pending.clear()


def _result_text(content: list[dict]) -> str:
    out = []
    for b in content:
        inner = b.get("content")
        if isinstance(inner, str):
            out.append(inner)
        elif isinstance(inner, list):
            out.extend(x.get("text", "") for x in inner if isinstance(x, dict))
    return "\n".join(out)


def placeholder(text: str, handle: int, preview: int = PREVIEW) -> str:
    """What the model sees of a pruned output: its size, a short head and tail, the handle."""
    if len(text) <= 2 * preview:
        head, tail = text, ""
    else:
        head, tail = text[:preview], text[-preview:]
    return (
        f"[output pruned to save context: {len(text)} characters; recall_output(handle={handle}) gives it back]\n"
        + head
        + (f"\n[...]\n{tail}" if tail else "")
    )
