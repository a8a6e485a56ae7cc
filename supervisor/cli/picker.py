"""A keyboard picker over the sessions, for `resume`, `show` and `context` given no id at a
terminal: type to filter (every word somewhere in a session's id, name, agent, branch, the
user's request or its last lines, case aside), the arrows to move, Enter to take one, Esc or
Ctrl-C to leave. Built on prompt_toolkit, imported only here. With no terminal, which
session is asked for in one line, as before."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import typer

from ..errors import SuperviseError
from ..plaintext import clip, plain
from ..redact import redact
from ..store.database import Store
from .shared import local_time

MOST = 500  # the newest sessions offered
TAIL = 4096  # bytes of a session's text log read for its last lines


@dataclass(frozen=True)
class Choice:
    """One session as the picker shows it and filters it."""

    id: str
    label: str  # its line
    words: str  # what typing filters, casefolded


def picked(store: Store, everywhere: bool, what: str) -> str:
    """The id of the session picked among this folder's project's sessions (--all: every project's)."""
    from .. import project
    from ..store import projects

    folder = None if everywhere else project.scope(None, False)  # (the current folder's project)
    return pick(store, projects.key_for(store, folder) if folder else None, what)


def pick(store: Store, project_key: str | None, what: str) -> str:
    """The id of the session picked among the project's (every project's: None)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        last = " or --last" if what == "resume" else ""
        raise SuperviseError("which session?", f"give an id (`supervise sessions` lists them){last}", exit_code=2)
    offered = choices(store, project_key)
    if not offered:
        where = "in this project (--all: every project)" if project_key else "yet"
        raise SuperviseError(f"{what}: no session recorded {where}", "start one with: supervise -- COMMAND")
    picked = _run(offered, f"supervise {what}: type to filter, ↑↓ to move, Enter to take, Esc to leave")
    if picked is None:
        raise typer.Exit(130)
    return picked


def choices(store: Store, project_key: str | None) -> list[Choice]:
    """The newest MOST sessions, each with its request and its log's last lines."""
    rows = store.sessions(MOST, project_key)
    ids = [r["id"] for r in rows]
    listed = ",".join("?" * len(ids))
    requests = dict(  # each listed session's latest round's request (not every session's)
        store.conn.execute(
            "select c.session_id, json_extract(c.context, '$.original_request') from contexts c"
            f" join (select session_id, max(round) as last from contexts where session_id in ({listed}) group by session_id) m"
            " on m.session_id = c.session_id and m.last = c.round",
            ids,
        ).fetchall()
    )
    out = []
    for r in rows:
        request = plain(str(requests.get(r["id"]) or ""), newlines=False)
        last = _last_lines(store.located(r["log_path"]) if r.get("log_path") else None)
        name = plain(r["name"] or "", newlines=False)
        about = " — ".join(p for p in (name, clip(request, 80), clip(last, 80)) if p) or plain(r["command"] or "", newlines=False)
        label = f"{r['id']:<7} {local_time(r['started']):<16} {(r['agent'] or '-')[:10]:<10} {about}"
        words = " ".join((r["id"], name, r["agent"] or "", r.get("branch") or "", request, last, r["command"] or "")).casefold()
        out.append(Choice(r["id"], label, words))
    return out


def _last_lines(path: str | None, most: int = 2) -> str:
    """The last lines of a text log that say something, masked and plain, joined."""
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            cut = max(0, fh.seek(0, os.SEEK_END) - TAIL)
            fh.seek(cut)
            tail = fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in redact(tail).splitlines()[1 if cut else 0 :] if line.strip()]  # (a line cut: not shown)
    return plain(" · ".join(lines[-most:]), newlines=False)


def matching(offered: list[Choice], typed: str) -> list[Choice]:
    words = typed.casefold().split()
    return [c for c in offered if all(w in c.words for w in words)]


def _run(offered: list[Choice], title: str) -> str | None:
    from prompt_toolkit.application import Application
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl

    typed = Buffer()
    at = [0]  # the row chosen among those that match

    def rows():
        found = matching(offered, typed.text)
        at[0] = max(0, min(at[0], len(found) - 1))
        room = max(1, app.output.get_size().rows - 3)
        top = max(0, at[0] - room + 1)
        shown = [
            ("reverse" if top + i == at[0] else "", clip(c.label, app.output.get_size().columns - 1) + "\n")
            for i, c in enumerate(found[top : top + room])
        ]
        return shown or [("", "(no session matches)")]

    keys = KeyBindings()

    @keys.add("up")
    def _up(event) -> None:
        at[0] -= 1

    @keys.add("down")
    def _down(event) -> None:
        at[0] += 1

    @keys.add("enter")
    def _take(event) -> None:
        found = matching(offered, typed.text)
        event.app.exit(result=found[at[0]].id if found else None)

    @keys.add("escape", eager=True)
    @keys.add("c-c")
    def _leave(event) -> None:
        event.app.exit(result=None)

    typed.on_text_changed += lambda _: at.__setitem__(0, 0)
    layout = Layout(
        HSplit(
            [
                Window(FormattedTextControl(title), height=1, style="bold"),
                Window(BufferControl(typed), height=1),
                Window(FormattedTextControl(rows)),
            ]
        ),
        focused_element=typed,
    )
    app: Application = Application(layout=layout, key_bindings=keys, full_screen=True)
    return app.run()
