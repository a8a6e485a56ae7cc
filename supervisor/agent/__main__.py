"""The agent program: `python -m supervisor.agent [OPTIONS] [TASK]`, spawned by
`supervise agent` under the supervisor like any other agent (recording, detection with
patterns/supervise-agent.toml, contexts). It needs the session's id (SUPERVISE_SESSION_ID,
set by the supervisor) to keep its conversation with the session."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from .. import config, project
from ..errors import SuperviseError
from ..memory import embedclient
from ..memory.mcpserver import Memory
from ..store.database import ACTIVE, Store, supervisor_alive
from . import RESUME_FLAG, sandbox as sandboxes, tools
from .budget import TRIGGER
from .compaction import KEEP_LAST
from .conversation import Conversation
from .loop import Agent
from .model import Cancelled, Model, context_limit
from .terminal import Lines

PROMPT = "agent› "


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="supervise agent")
    ap.add_argument("task", nargs=argparse.REMAINDER)
    ap.add_argument("-p", "--print", dest="once", action="store_true")
    ap.add_argument("--model")
    ap.add_argument("--base-url")
    ap.add_argument("--context-limit", type=int)
    ap.add_argument("--max-steps", type=int, default=50)
    ap.add_argument("--image", default=sandboxes.DEFAULT_IMAGE)
    ap.add_argument("--network", choices=["bridge", "none"], default="bridge")
    ap.add_argument("--workspace", type=Path)
    ap.add_argument("--scratch", action="store_true")
    ap.add_argument("--timeout", type=float, default=tools.DEFAULT_TIMEOUT)
    ap.add_argument("--confirm", action="store_true")
    ap.add_argument(RESUME_FLAG, dest="resume_from")
    ap.add_argument("--compaction", choices=["auto", "off"], default="auto")
    ap.add_argument("--compact-at", type=float, default=TRIGGER)
    ap.add_argument("--summary-model")
    ap.add_argument("--keep-last", type=int, default=KEEP_LAST)
    return ap.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    out = sys.stdout

    def write(text: str) -> None:
        out.write(text)
        out.flush()

    session_id = os.environ.get("SUPERVISE_SESSION_ID")
    if not session_id:
        raise SuperviseError("the agent runs under the supervisor", "start it with: supervise agent [TASK]", exit_code=2)
    settings = config.load()
    model = Model.from_settings(settings.summary, args.model, args.base_url)  # no key: one line, before anything
    store = Store.open_default()
    client = sandboxes.connect()
    key = sandboxes.store_key(store.path)
    sandboxes.sweep(client, key, lambda sid: _running(store, sid, session_id))
    scratch = Path(tempfile.mkdtemp(prefix="supervise-scratch-")) if args.scratch else None
    workspace = (scratch or args.workspace or Path.cwd()).resolve()
    box = sandboxes.Sandbox.start(
        session_id, workspace, key, args.image, args.network, client=client, progress=lambda line: write(line + "\n")
    )
    # SIGTERM and SIGHUP end the program through `finally`, so the container always goes.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    try:
        agent = None
        asking = [False]  # a confirmation's answer is no queued line
        lines = Lines(busy=lambda: agent is not None and agent.state != "idle" and not asking[0], say=write)

        def ask(question: str) -> str:
            asking[0] = True
            try:
                write(question)
                return lines.message() or ""
            finally:
                asking[0] = False

        conversation = Conversation(store, session_id)
        if args.resume_from:
            conversation.carry_on(args.resume_from)
            write(f"resumed session {args.resume_from}: {len(conversation.messages)} messages\n")
        agent = Agent(
            conversation,
            model,
            box,
            workspace,
            write=write,
            ask=ask if args.confirm else None,
            queued=lines.queued,
            max_steps=args.max_steps,
            timeout=args.timeout,
            context_limit=context_limit(model.name, args.context_limit),
            compaction=args.compaction,
            compact_at=args.compact_at,
            summary_model=args.summary_model,
            keep_last=args.keep_last,
            memory=Memory(
                store.path,
                project.root(workspace),
                session_id,
                everywhere=settings.memory.mcp_all_projects,
                embeddings=embedclient.client(settings.memory),
            )
            if settings.memory.mcp
            else None,
        )
        task = " ".join(t for t in args.task if t != "--").strip()
        if args.once:
            if not task:
                raise SuperviseError("-p needs a task", "supervise agent -p 'what to do'", exit_code=2)
            write(PROMPT + _indented(task) + "\n")  # on screen as if typed: the record shows what was asked
            return 0 if agent.run(task) == "done" else 1
        write(f"supervise agent · workspace {workspace} · sandbox {args.image} · model {model.name}\n")
        if task:
            write(PROMPT + _indented(task) + "\n")
            agent.run(task)
        while True:
            write(PROMPT)
            try:
                line = lines.message()
            except KeyboardInterrupt:
                write("\n")
                continue
            if line is None:
                write("\n")
                return 0
            if line.strip() in ("/exit", "/quit"):
                return 0
            if line.strip() == "/compact":  # compacts now, then waits for the user
                try:
                    agent.compact_now()
                except Cancelled:
                    write("\n(compaction interrupted)\n")
                continue
            if line.strip():
                agent.run(line)
    finally:
        box.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _indented(text: str) -> str:
    """A message's further lines, indented under the prompt as a paste is echoed."""
    return text.replace("\n", "\n" + " " * len(PROMPT))


def _running(store: Store, session_id: str, ours: str) -> bool:
    """Is that session still running (so its sandbox must stay)?"""
    if session_id == ours:
        return True
    try:
        s = store.get_session(session_id)
    except Exception:
        return False
    return s["status"] == ACTIVE and supervisor_alive(s.get("pid"))


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SuperviseError as exc:
        print(str(exc), file=sys.stderr)
        sys.exit(exc.exit_code or 1)
