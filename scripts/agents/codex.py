"""Record Codex CLI (npm @openai/codex) fixtures with the real program against a fake Responses API.

    python scripts/agents/codex.py                      # the newest release -> tests/fixtures/codex/VERSION/
    python scripts/agents/codex.py --version 0.169.0 approval multiline

Each scenario runs the real `codex` under supervise in a 120x40 PTY with a private HOME,
CODEX_HOME, XDG folders and TMPDIR (all under one temporary folder, removed after), talking to
tests/fake_responses.py on 127.0.0.1 through a `model_provider` in CODEX_HOME/config.toml.
The fake's replies are keyed on markers in the typed text (BIGUSAGE, HUGEUSAGE, OVERFLOW,
RUNCMD, RATELIMIT, USAGELIMIT; see that module). Codex is quit with Ctrl-C (twice if the first only arms it).
supervise runs with `--inject off` (common.recording; it would type its session context after a
compaction), except in `chained`: three /compact with a turn after each, supervise typing its
context back after each one (what it gave is saved in expected.json as `given`).
Each message is typed as one burst, Enter half a second later (`send`). Codex starts a
background app server from a copy under CODEX_HOME that outlives the TUI: it is ended (by the private folder in its environment) before the folder is removed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import CHAINED_TURNS, install_npm, main, newest_npm, recording, save_given, wait_until, wanted  # noqa: E402

from fake_responses import FakeResponses  # noqa: E402  (tests/ is on sys.path via common)

PACKAGE = "@openai/codex"
IDLE = r"› Ask Codex to do anything"
BUSY = "esc to interrupt"
# tui.status_line items that show the context figures ("Context 22% left · Context 78% used")
CONTEXT_STATUS_LINE = ["model-with-reasoning", "context-remaining", "context-used", "current-dir"]
MULTILINE = ["first line of a pasted message", "second line: please read all three", "third line ends it"]
LONG_LINE = (
    "this is one long message typed on a single line, long enough to wrap on a screen of one hundred "
    "and twenty columns, so that the reader of the text log has to join its pieces back together in order"
)


# a model of its bundled catalog (0.169.0's and 0.171.0's), offered no upgrade: for another
# Codex warns "Model metadata for `...` not found" (0.171.0)
MODEL = "gpt-6.1-sol"


def config(port: int, work: Path, status_line: list[str] | None) -> str:
    lines = [
        f'model = "{MODEL}"',
        'model_provider = "fake"',
        "model_context_window = 200000",
        "model_auto_compact_token_limit = 180000",
        'approval_policy = "on-request"',
        'sandbox_mode = "read-only"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.fake]",
        'name = "fake"',
        f'base_url = "http://127.0.0.1:{port}/v1"',
        'wire_api = "responses"',
        'env_key = "FAKE_API_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "",
        "[analytics]",
        "enabled = false",
        "",
        f'[projects."{work}"]',
        'trust_level = "trusted"',
    ]
    if status_line is not None:
        lines += ["", "[tui]", "status_line = [" + ", ".join(f'"{item}"' for item in status_line) + "]"]
    return "\n".join(lines) + "\n"


class PrimaryScreen:
    """Codex draws on the alternate screen, which the driver's emulator does not show in its
    text: draw it on the primary one instead (Codex clears the screen when it starts)."""

    ALT = re.compile(r"\x1b\[\?(?:1049|1047|47)[hl]")

    def __init__(self, vt):
        self.vt = vt

    def feed_str(self, data: str):
        return self.vt.feed_str(self.ALT.sub("", data))

    def text(self):
        return self.vt.text()

    def __getattr__(self, name):  # view(), cursor, size: the emulator's own
        return getattr(self.vt, name)


def replies(screen) -> int:
    """The number of the latest "Fake reply #N" on screen (it only grows; older ones scroll away)."""
    return max((int(n) for n in re.findall(r"Fake reply #(\d+)", screen.text())), default=0)


def settle(screen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        screen.pump(0.1)


def idle(screen, timeout: float = 40.0) -> None:
    """Wait until Codex shows its input placeholder and no line says it is working."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen.pump(0.2)
        text = screen.text()
        if re.search(IDLE, text) and BUSY not in text:
            settle(screen, 0.8)
            text = screen.text()
            if re.search(IDLE, text) and BUSY not in text:
                return
    raise AssertionError(f"Codex never became idle; the screen shows:\n{screen.text()[-3000:]}")


def ready(screen, timeout: float = 60.0) -> None:
    """Wait until Codex has started its session: it announces "idle" in an OSC 7501 sequence
    once it can take a message (the input box is drawn earlier; an Enter before this is lost)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not any("7501;state=idle" in chunk for chunk in screen.raw):
        screen.pump(0.2)
    idle(screen, timeout)
    settle(screen, 1.0)


def send(screen, text: str) -> None:
    """Type `text`, then Enter half a second later, as a person would. Not `screen.type`: its
    pause ends at the first quiet moment of the echo, and Codex (0.171.0) takes an Enter that
    close behind a burst of characters for a line break inside a paste, not a send."""
    screen.child.send(text)
    settle(screen, 0.5)
    screen.child.send("\r")


def turn(screen, text: str, until: str | None = None, timeout: float = 40.0) -> None:
    """Send one message and wait for its answer (a new "Fake reply #N", or `until`)."""
    before = replies(screen)
    send(screen, text)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen.pump(0.2)
        if re.search(until, screen.text()) if until else replies(screen) > before:
            break
    else:
        raise AssertionError(f"no answer to {text!r}; the screen shows:\n{screen.text()[-3000:]}")
    idle(screen, timeout)


def quit_codex(screen) -> None:
    for _ in range(3):
        screen.child.send("\x03")
        settle(screen, 1.5)
        if not screen.child.isalive():
            return


def record(version: str, out: Path) -> None:
    exe = install_npm(PACKAGE, version, "codex")
    # its app server keeps a folder in /tmp (not TMPDIR) for its socket: remove it after if it is ours
    daemon_dir = Path(f"/tmp/codex-daemon-{os.getuid()}")
    daemon_dir_was_there = daemon_dir.exists()
    with FakeResponses(compact_delay=5.0) as api:
        port = int(api.url.rsplit(":", 1)[1])

        def run(name: str, status_line: list[str] | None, drive, inject: bool = False) -> None:
            if not wanted(name):
                return
            given: list | None = [] if inject else None
            base = Path(tempfile.mkdtemp(prefix="codex-rec-"))
            home, codex_home, work, tmp = base / "home", base / "codexhome", base / "work", base / "tmp"
            for d in (home, codex_home, work, tmp, base / "xdg-config", base / "xdg-data", base / "xdg-cache", base / "xdg-state"):
                d.mkdir(parents=True)
            (codex_home / "config.toml").write_text(config(port, work, status_line))
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_", "ANTHROPIC_", "SUPERVISE_SUMMARY_"))}
            env.update(
                HOME=str(home),
                CODEX_HOME=str(codex_home),
                XDG_CONFIG_HOME=str(base / "xdg-config"),
                XDG_DATA_HOME=str(base / "xdg-data"),
                XDG_CACHE_HOME=str(base / "xdg-cache"),
                XDG_STATE_HOME=str(base / "xdg-state"),
                TMPDIR=str(tmp),
                FAKE_API_KEY="fake-key",
                TERM="xterm-256color",
                COLORTERM="truecolor",
                LANG="C.UTF-8",
                NO_UPDATE_NOTIFIER="1",
                npm_config_registry="http://127.0.0.1:9/",
            )
            try:
                with recording(name, [str(exe)], env, work, out, given=given) as screen:
                    screen.vt = PrimaryScreen(screen.vt)
                    ready(screen)
                    drive(screen)
                    quit_codex(screen)
            finally:
                stop_leftovers(base)
                shutil.rmtree(base, ignore_errors=True)
            if given is not None:
                save_given(out, "codex", version, name, given)

        def compact_manual(s):
            turn(s, "hello there")
            turn(s, "second message")
            turn(s, "/compact", until=r"Context compacted")
            turn(s, "third message after compaction")

        def compact_auto(s):
            turn(s, "hello there")
            turn(s, "BIGUSAGE please")
            turn(s, "HUGEUSAGE again")
            turn(s, "next message after that", until=r"Context compacted[\s\S]*Fake reply")

        def context_overflow(s):
            turn(s, "hello there")
            turn(s, "OVERFLOW now", until=r"ran out of room")

        def approval(s):
            before = replies(s)
            send(s, "RUNCMD please")
            s.wait(r"Would you like to run the following command\?", 40)
            settle(s, 2.0)
            s.child.send("y")
            deadline = time.monotonic() + 40
            while replies(s) <= before and time.monotonic() < deadline:
                s.pump(0.2)
            idle(s)

        def default_footer_low_context(s):
            turn(s, "HUGEUSAGE please")
            s.child.send("?")
            settle(s, 2.0)
            s.child.send("\x1b")
            settle(s, 1.5)

        def footer_context_left_compact(s):
            turn(s, "hello there")
            turn(s, "BIGUSAGE please")
            turn(s, "/compact", until=r"Context compacted")

        def limit(s):
            # a plain rate limit (429 rate_limit_exceeded), then the plan's usage limit (429
            # usage_limit_reached, plan "plus"), left on screen a while
            turn(s, "hello there")
            turn(s, "RATELIMIT now", until=r"429")
            send(s, "USAGELIMIT now")
            s.wait(r"try again at", 40)
            # with the limit's window at 100% Codex also offers a cheaper model ("Approaching rate
            # limits" / "Switch to ...?"): left up a while, then dismissed with Esc
            deadline = time.monotonic() + 10
            while "Approaching rate limits" not in s.text() and time.monotonic() < deadline:
                s.pump(0.2)
            settle(s, 4.0)
            if "Approaching rate limits" in s.text():
                s.child.send("\x1b")
            idle(s)
            settle(s, 2.0)

        def idle_startup(s):
            settle(s, 3.0)

        def multiline(s):
            # a bracketed paste of three lines (a terminal sends CR for each newline), then Enter
            s.child.send("\x1b[200~" + "\r".join(MULTILINE) + "\x1b[201~")
            settle(s, 1.0)
            turn(s, "", timeout=40)
            turn(s, "and a last short message")

        def long_line(s):
            turn(s, LONG_LINE)
            turn(s, "short one after the long one")

        def compact_and_take_context(s):
            """/compact, then wait for supervise to type its context and for Codex to answer it
            (the compaction itself is answered with a summary, not a "Fake reply")."""
            before = replies(s)
            send(s, "/compact")
            wait_until(
                s, lambda: replies(s) > before, 60, lambda: f"no context typed after /compact; the screen shows:\n{s.text()[-3000:]}"
            )
            idle(s)

        def chained(s):
            turn(s, CHAINED_TURNS[0])
            for text in CHAINED_TURNS[1:]:
                compact_and_take_context(s)
                turn(s, text)

        run("compact-manual", None, compact_manual)
        run("compact-auto", CONTEXT_STATUS_LINE, compact_auto)
        run("context-overflow", CONTEXT_STATUS_LINE, context_overflow)
        run("approval", None, approval)
        run("default-footer-low-context", None, default_footer_low_context)
        run("footer-context-left-compact", [], footer_context_left_compact)
        run("idle-startup", None, idle_startup)
        run("limit", None, limit)
        run("multiline", None, multiline)
        run("long-line", None, long_line)
        run("chained", None, chained, inject=True)
    if not daemon_dir_was_there:
        shutil.rmtree(daemon_dir, ignore_errors=True)


def stop_leftovers(base: Path) -> None:
    """Codex starts a background app server (copied into CODEX_HOME) that outlives the TUI:
    end the processes whose environment names this run's private folder, and only those,
    and wait until they are gone (they write to CODEX_HOME as they stop)."""
    mine = str(base).encode()

    def ours() -> list[int]:
        pids = []
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and int(proc.name) != os.getpid():
                try:
                    if mine in (proc / "environ").read_bytes():
                        pids.append(int(proc.name))
                except OSError:
                    pass
        return pids

    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in ours():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while ours() and time.monotonic() < deadline:
            time.sleep(0.2)


if __name__ == "__main__":
    main(record, lambda: newest_npm(PACKAGE), "codex")
