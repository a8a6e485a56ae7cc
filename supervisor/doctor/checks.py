"""`supervise doctor`: is everything supervise needs here and working?

Each check is a function returning a `Check`: ok, warn (an optional part is missing or
unverified; nothing is broken) or problem (broken: `doctor` exits 1), with the fix. What a
check decides is a plain function over data (a version string against the versions the
pattern files were seen on, a Docker error's text, a directory's mode and free space); what
it looks at (running `claude --version`, opening the database, one request to the API) is
done at the edges, with short timeouts. Nothing here prints: `lines()` gives the text, made
plain, for the CLI to print (versions and errors come from other programs).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .. import config, paths
from ..detection import patterns
from ..errors import SuperviseError
from ..plaintext import plain

LOW_DISK = 100 * 1024 * 1024
VERSION_TIMEOUT = {"aider": 15.0}  # seconds for `CMD --version`; aider imports a lot first
DEFAULT_VERSION_TIMEOUT = 5.0
# `CMD --version` must not look for updates or phone home.
QUIET_ENV = {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "NO_UPDATE_NOTIFIER": "1",
             "AIDER_CHECK_UPDATE": "false", "NO_COLOR": "1"}
API_TIMEOUT = 10.0
REINSTALL = "reinstall supervise-agents (e.g. `pipx reinstall supervise-agents`)"


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | warn | problem
    detail: str
    fix: str | None = None


# -- the terminal ------------------------------------------------------------------------------

def terminal_verdict(stdin_tty: bool, stdout_tty: bool, term: str | None, size: tuple[int, int] | None) -> Check:
    if not (stdin_tty and stdout_tty):
        which = " and ".join(n for n, tty in (("stdin", stdin_tty), ("stdout", stdout_tty)) if not tty)
        which += " are not terminals" if " and " in which else " is not a terminal"
        return Check("terminal", "warn", f"{which}: supervise records the same, but an agent's screen needs one")
    if not term or term == "dumb":
        return Check("terminal", "warn", f"TERM is {term or 'not set'}: agents draw for a dumb terminal", "export TERM=xterm-256color")
    cols, rows = size or (0, 0)
    if not cols or not rows:
        return Check("terminal", "warn", f"{term}, but the terminal reports no size ({cols}x{rows})", "stty cols 120 rows 40")
    if cols < 40 or rows < 10:
        return Check("terminal", "warn", f"{term}, {cols}x{rows}: too small for an agent's screen", "make the window larger")
    return Check("terminal", "ok", f"{term}, {cols}x{rows}")


def terminal(env: Mapping[str, str]) -> Check:
    try:
        size = tuple(os.get_terminal_size(sys.stdout.fileno()))
    except (OSError, ValueError):
        size = None
    return terminal_verdict(os.isatty(0), os.isatty(1), env.get("TERM"), size)


# -- the data directory and the database ---------------------------------------------------------

def data_dir_verdict(path: Path, mode: int, free: int, created: bool) -> Check:
    q = shlex.quote(str(path))
    if mode & 0o077:
        return Check("data dir", "warn", f"{path} is mode {mode:04o}: others may read your recordings",
                     f"chmod 700 {q} (supervise also does when it opens the database)")
    if free < LOW_DISK:
        return Check("data dir", "warn", f"{path}: only {free // 2**20} MB free", "free some space, or set SUPERVISE_HOME elsewhere")
    return Check("data dir", "ok", f"{path} ({'created, ' if created else ''}private, writable, {free / 2**30:.1f} GB free)")


def data_dir(path: Path) -> Check:
    created = not path.exists()
    try:
        if created:
            paths.ensure_private_dir(path)  # as any supervise command would
        mode = stat.S_IMODE(path.stat().st_mode)
        fd, probe = tempfile.mkstemp(prefix=".doctor-probe-", dir=path)  # unique: a running supervise is not disturbed
        os.close(fd)
        os.unlink(probe)
        free = shutil.disk_usage(path).free
    except SuperviseError as exc:
        return Check("data dir", "problem", exc.message, exc.hint)
    except OSError as exc:
        return Check("data dir", "problem", f"cannot write to {path}: {exc.strerror or exc}",
                     "fix its owner or permissions, or set SUPERVISE_HOME to a writable directory")
    return data_dir_verdict(path, mode, free, created)


def database_verdict(path: Path, integrity: list[str], sessions: int, mode: int) -> Check:
    if integrity != ["ok"]:
        q = shlex.quote(str(path))
        return Check("database", "problem", f"{path} fails its integrity check: {'; '.join(integrity[:3])}",
                     f"move it aside: mv {q} {q}.corrupt (supervise starts a new one; sqlite3's .recover may save what is in it)")
    if mode & 0o077:
        return Check("database", "warn", f"{path} is mode {mode:04o}: others may read it", f"chmod 600 {shlex.quote(str(path))}")
    return Check("database", "ok", f"{path} ({sessions} session{'s' if sessions != 1 else ''}, integrity ok)")


def database(path: Path) -> Check:
    from ..store.database import Store

    try:
        store = Store(path)  # creates or migrates it; a corrupt file is left as it is
    except SuperviseError as exc:
        return Check("database", "problem", exc.message, exc.hint)
    try:
        integrity = [row[0] for row in store.db.execute("PRAGMA integrity_check").fetchall()]
        sessions = store.db["sessions"].count
    except sqlite3.DatabaseError as exc:
        integrity, sessions = [str(exc)], 0
    finally:
        store.close()
    return database_verdict(path, integrity, sessions, stat.S_IMODE(path.stat().st_mode))


# -- pattern files and the agent CLIs ------------------------------------------------------------

def pattern_files(env: Mapping[str, str]) -> tuple[list[Check], dict[str, patterns.PatternSet]]:
    """A check per broken file (every one, not only the first), else one ok; and the sets
    that loaded, by agent (later files win, as when a session starts)."""
    shipped_dir, user_dir = patterns.builtin_dir(), patterns.user_dir(env)
    shipped = sorted(shipped_dir.glob("*.toml")) if shipped_dir.is_dir() else []
    yours = sorted(user_dir.glob("*.toml")) if user_dir.is_dir() else []
    checks, sets = [], {}
    for path in [*shipped, *yours]:
        try:
            loaded = patterns.load_file(path)
        except SuperviseError as exc:
            checks.append(Check("patterns", "problem", exc.message, f"{exc.hint or 'fix it'}, or remove {path}"))
            continue
        sets[loaded.agent] = loaded
    if not shipped:
        checks.append(Check("patterns", "problem", f"no shipped pattern files in {shipped_dir}", REINSTALL))
    missing = [a for a in patterns.KNOWN_AGENTS if patterns.select(sets, a) is None]
    if missing and shipped:
        checks.append(Check("patterns", "warn", f"no pattern set for {', '.join(missing)}: their compactions go undetected",
                            "see `supervise patterns list`"))
    if not checks:
        checks.append(Check("patterns", "ok", f"{len(shipped)} shipped ({shipped_dir}), {len(yours)} yours ({user_dir})"))
    return checks, sets


VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?)(?!\w)")
SEEN_VERSION = re.compile(r"\d+(?:\.(?:\d+|x))+")


def parse_version(output: str) -> str | None:
    """The version in what `CMD --version` printed: `2.1.330 (Claude Code)`, `codex-cli
    0.169.0`, `aider 0.86.2`, `0.61.0`."""
    m = VERSION.search(plain(output))
    return m.group(1) if m else None


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in re.match(r"[\dx.]*", version).group().strip(".").split("."))


def verified_versions(pattern_set: patterns.PatternSet) -> list[str]:
    """Every version the set's patterns were seen on (`2.1.197, 2.1.330`, `2.1.330 binary`, `1.0.x`), oldest first."""
    found = {v for p in pattern_set.patterns for v in SEEN_VERSION.findall(p.seen_on)}
    return sorted(found, key=_key)


def version_matches(installed: str, seen: str) -> bool:
    """`2.1.330` matches `2.1.330`; `1.0.7` matches `1.0.x`; a pre-release suffix is ignored."""
    have = re.match(r"\d+(?:\.\d+)*", installed).group().split(".")
    want = seen.split(".")
    return len(have) == len(want) and all(w in ("x", h) for h, w in zip(have, want))


def agent_verdict(command: str, path: str | None, output: str | None, error: str | None, verified: list[str] | None) -> Check:
    """`output`: what `CMD --version` printed; `error`: why it printed nothing usable."""
    if path is None:
        return Check(command, "warn", f"not found on PATH ({patterns.KNOWN_AGENTS.get(command, command)})")
    if error is not None:
        return Check(command, "warn", f"{path}: `{command} --version` {error}", f"check that `{command}` runs on its own")
    version = parse_version(output or "")
    if version is None:
        first = (plain(output or "").strip().splitlines() or ["nothing"])[0][:80]
        return Check(command, "warn", f"{path}: no version in `{command} --version` ({first})")
    if not verified:
        return Check(command, "warn", f"{version} at {path}: no pattern set says which versions it was verified on",
                     "see `supervise patterns list`")
    seen = ", ".join(verified)
    if any(version_matches(version, v) for v in verified):
        return Check(command, "ok", f"{version} at {path} (patterns verified on {seen})")
    return Check(command, "warn", f"{path}: patterns verified on {seen}; you have {version}",
                 "run `supervise patterns check` on a recording of it (sessions/ID/session.cast) to see what is detected, or report it")


def version_output(path: str, timeout: float, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(what `PATH --version` printed, None), or (None, what went wrong)."""
    try:
        proc = subprocess.Popen([path, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**env, **QUIET_ENV}, start_new_session=True)
    except OSError as exc:
        return None, f"cannot run: {exc.strerror or exc}"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # with whatever it started (node, a Python)
        proc.communicate()
        return None, f"did not answer in {timeout:g} s"
    text = (out or err).decode(errors="replace")
    if proc.returncode != 0:
        reason = (plain(err.decode(errors="replace")).strip().splitlines() or [""])[-1][:120]
        return None, f"failed (exit {proc.returncode}){': ' + reason if reason else ''}"
    return text, None


def agent(command: str, sets: Mapping[str, patterns.PatternSet], env: Mapping[str, str]) -> Check:
    path = shutil.which(command, path=env.get("PATH"))
    chosen = patterns.select(sets, command)
    verified = verified_versions(chosen) if chosen else None
    if path is None:
        return agent_verdict(command, None, None, None, verified)
    output, error = version_output(path, VERSION_TIMEOUT.get(command, DEFAULT_VERSION_TIMEOUT), env)
    return agent_verdict(command, path, output, error, verified)


# -- Claude Code's hook ---------------------------------------------------------------------------

def hook_script(timeout: float = 10.0) -> Check:
    """Run the SessionStart hook command exactly as Claude Code would (`sh -c`), against a
    socket of our own that answers a test context: it must print it back."""
    from ..giveback import claude, hook
    from ..giveback.hookserver import HookServer

    command = claude.hook_command()
    probe = "supervise doctor test context"
    failures: list[BaseException] = []
    with tempfile.TemporaryDirectory(prefix="supervise-doctor-") as folder:
        sock = os.path.join(folder, "hook.sock")
        server = HookServer(sock, lambda request: probe if request.get("source") == "doctor" else None,
                            lambda what, exc: failures.append(exc))
        server.start()
        try:
            proc = subprocess.run(["sh", "-c", command], input=json.dumps({"hook_event_name": "SessionStart", "source": "doctor"}),
                                  capture_output=True, text=True, timeout=timeout, env={**os.environ, hook.SOCKET_ENV: sock})
        except subprocess.TimeoutExpired:
            return Check("hook", "problem", f"`{command}` did not finish in {timeout:g} s", REINSTALL)
        finally:
            server.close()
    if proc.returncode == 0 and proc.stdout.strip() == hook.output(probe):
        return Check("hook", "ok", f"{command} (gave a test context back)")
    said = plain(proc.stderr or proc.stdout or "no output", newlines=False).strip()[:160]
    if failures:
        said += f"; the socket said: {failures[0]}"
    return Check("hook", "problem", f"`{command}` (exit {proc.returncode}) gave no context back: {said}",
                 f"Claude Code would get no context after a compaction; {REINSTALL}")


# -- the API ------------------------------------------------------------------------------------

def mask(secret: str) -> str:
    """`sk-ant-…abcd`: enough to tell keys apart, never the key."""
    prefix = "sk-ant-" if secret.startswith("sk-ant-") else ""
    return prefix + "…" + (secret[-4:] if len(secret) >= 16 else "")


def api(summary: config.Summary, timeout: float = API_TIMEOUT) -> Check:
    url = summary.base_url or "https://api.anthropic.com"
    if not summary.has_key:
        return Check("api", "warn", "no API key: summaries are made through an agent CLI's own login, or by the heuristic "
                     "(see `summary`)", "set ANTHROPIC_API_KEY (or SUPERVISE_SUMMARY_API_KEY, or api_key_env in config.toml)")
    import anthropic

    from ..contexts.backends.api import _client

    secret = summary.api_key or summary.auth_token or ""
    what = f"key {mask(secret)}" if summary.api_key else f"token {mask(secret)}"
    key_fix = "check ANTHROPIC_API_KEY (or SUPERVISE_SUMMARY_API_KEY, ANTHROPIC_AUTH_TOKEN) and the base URL"
    url_fix = "check the base URL (SUPERVISE_SUMMARY_BASE_URL, ANTHROPIC_BASE_URL or base_url in config.toml) and the network"
    try:
        _client(replace(summary, timeout=timeout, max_retries=0)).models.list(limit=1)
        check = Check("api", "ok", f"{what} accepted by {url} (summaries by {summary.model})")
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as exc:
        check = Check("api", "problem", f"{url} refused the {what} ({exc.status_code})", key_fix)
    except anthropic.NotFoundError:
        check = Check("api", "warn", f"{url} answers but has no /v1/models: the {what} was not checked", url_fix)
    except anthropic.APIStatusError as exc:
        check = Check("api", "warn", f"{url} answered {exc.status_code} to the {what}: try again later", url_fix)
    except anthropic.APITimeoutError:
        check = Check("api", "problem", f"no answer from {url} in {timeout:g} s", url_fix)
    except anthropic.APIConnectionError as exc:
        check = Check("api", "problem", f"cannot reach {url}: {exc.__cause__ or exc}", url_fix)
    except anthropic.AnthropicError as exc:  # an answer that is not the API's
        check = Check("api", "warn", f"{url} gave an odd answer to the {what}: {exc}", url_fix)
    return replace(check, detail=check.detail.replace(secret, mask(secret))) if secret else check


# -- who makes the session contexts -------------------------------------------------------------------

def summary_verdict(backend: str, chose: str, why: str, clis: Mapping[str, tuple[str | None, str | None]]) -> Check:
    """`backend`: as configured; `chose`, `why`: what it comes to for a session of no agent
    CLI (a session of one that can summarize asks its own first); `clis`: each agent CLI found
    here that is a summary backend -> (its version, None if it can summarize headless here,
    else why not)."""
    found = "; ".join(f"{name}{' ' + version if version else ''}: {_can_summarize(name) if problem is None else problem}"
                      for name, (version, problem) in clis.items())
    detail = f"{backend} → {chose} ({why})" + (f"; {found}" if found else "")
    if chose == "heuristic" and backend != "heuristic":
        return Check("summary", "warn", detail + ": contexts are made by the heuristic digest, without a model",
                     "set ANTHROPIC_API_KEY, or install Claude Code or Codex and log in (`claude`, then /login; `codex login`)")
    if chose not in ("api", "heuristic") and clis.get(chose, (None, "not found"))[1] is not None:
        return Check("summary", "warn", detail, f"install or upgrade {chose}, or choose another backend ([summary] backend in config.toml)")
    return Check("summary", "ok", detail)


def _can_summarize(name: str) -> str:
    from ..contexts.backends import codex

    # What Codex cannot be kept from sending is said here, not hidden.
    return "headless structured output ok" + (f" ({codex.CAVEAT})" if name == "codex" else "")


def summary_backend(env: Mapping[str, str]) -> Check:
    from ..contexts.backends import choose

    try:
        cfg = config.load(env).summary
    except SuperviseError as exc:
        return Check("summary", "problem", exc.message, exc.hint)
    clis = {}
    for name in choose.UNABLE:
        exe = choose.executable(name, None, env)
        if exe:
            output, _ = version_output(exe, VERSION_TIMEOUT.get(name, DEFAULT_VERSION_TIMEOUT), env)
            clis[name] = (parse_version(output or ""), choose.probe(name, exe, env))
    choice = choose.resolve(cfg, None, env)
    return summary_verdict(cfg.backend, choice.backend, choice.why, clis)


# -- Docker and Datasette --------------------------------------------------------------------------

def docker_unreachable(error: str) -> Check:
    """What the Docker SDK's error says is wrong; Docker is for `supervise agent` only."""
    needed = "only `supervise agent` needs it"
    if "Permission denied" in error:
        return Check("docker", "warn", f"no permission on the Docker socket ({needed})",
                     "add yourself to the docker group: sudo usermod -aG docker $USER, then log in again (or use rootless Docker)")
    if "No such file or directory" in error or "FileNotFoundError" in error:
        return Check("docker", "warn", f"no Docker daemon socket: Docker is not installed or DOCKER_HOST is wrong ({needed})",
                     "install Docker (Debian/Ubuntu: sudo apt install docker.io), or set DOCKER_HOST")
    if "Connection refused" in error:
        return Check("docker", "warn", f"the Docker daemon is not running ({needed})", "start it: sudo systemctl start docker (or run dockerd)")
    return Check("docker", "warn", f"cannot reach the Docker daemon: {error} ({needed})", "start Docker, or set DOCKER_HOST")


def docker(timeout: float = 5.0) -> list[Check]:
    from ..agent.sandbox import DEFAULT_IMAGE

    try:
        import docker as sdk
    except ImportError:
        return [Check("docker", "problem", "the Docker SDK for Python is missing", REINSTALL)]
    try:
        client = sdk.from_env(timeout=timeout)
        client.ping()
        version = client.version().get("Version", "?")
    except sdk.errors.DockerException as exc:
        return [docker_unreachable(str(exc))]
    try:
        checks = [Check("docker", "ok", f"Docker {version} answers")]
        try:
            client.images.get(DEFAULT_IMAGE)
            checks.append(Check("image", "ok", f"the sandbox image {DEFAULT_IMAGE} is here"))
        except sdk.errors.ImageNotFound:
            checks.append(Check("image", "warn", f"the sandbox image {DEFAULT_IMAGE} is not here yet: pulled on first use",
                                f"docker pull {DEFAULT_IMAGE} (to fetch it now)"))
        except sdk.errors.DockerException as exc:
            checks.append(Check("image", "warn", f"cannot look up {DEFAULT_IMAGE}: {exc}"))
        return checks
    finally:
        client.close()


def datasette() -> Check:
    from importlib import metadata, util

    if util.find_spec("datasette") is None:
        return Check("datasette", "warn", "not installed: `supervise browse` cannot run",
                     "pip install 'datasette==0.65.*' into supervise's environment (or reinstall supervise-agents)")
    version = metadata.version("datasette")
    if not any(ep.name == "supervise" for ep in metadata.entry_points(group="datasette")):
        return Check("datasette", "warn", f"{version}, without supervise's plugin: prompts and JSON show raw", REINSTALL)
    return Check("datasette", "ok", f"{version} with supervise's plugin (`supervise browse`)")


# -- all of it -----------------------------------------------------------------------------------

def run_all(env: Mapping[str, str] | None = None) -> Iterator[Check]:
    """Every check, in order, each as soon as it is done."""
    env = os.environ if env is None else env
    yield terminal(env)
    yield data_dir(paths.data_dir(env))
    yield database(paths.db_path(env))
    checks, sets = pattern_files(env)
    yield from checks
    for command in patterns.KNOWN_AGENTS:
        yield agent(command, sets, env)
    yield hook_script()
    yield summary_backend(env)
    try:
        yield api(config.load(env).summary)
    except SuperviseError:  # said by `summary`
        pass
    yield from docker()
    yield datasette()


def broken(checks: list[Check]) -> bool:
    return any(c.status == "problem" for c in checks)


def lines(check: Check) -> list[str]:
    """How a check is printed: status, name, detail; then the fix, indented, unless it is ok."""
    out = [f"{check.status:<8} {check.name:<10} {plain(check.detail, newlines=False)}"]
    if check.fix and check.status != "ok":
        out.append(f"{'':<20}fix: {plain(check.fix, newlines=False)}")
    return out


def as_dict(check: Check) -> dict:
    return {"name": check.name, "status": check.status, "detail": plain(check.detail, newlines=False),
            "fix": plain(check.fix, newlines=False) if check.fix else None}


def summary(checks: list[Check]) -> str:
    problems, warnings = (sum(c.status == s for c in checks) for s in ("problem", "warn"))
    if not problems and not warnings:
        return "supervise doctor: all ok"
    return f"supervise doctor: {problems} problem{'s' * (problems != 1)}, {warnings} warning{'s' * (warnings != 1)}"
