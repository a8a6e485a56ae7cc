"""One hardened Docker container per agent session, for its commands.

The workspace (a host directory) is bind-mounted at /workspace; the container runs as the
user's uid:gid, so nothing the agent builds comes back owned by root. Hardened by default:
every capability dropped, no-new-privileges, pid, memory and CPU limits, never privileged,
no Docker socket inside. It is named and labelled after the session, kept alive for exec,
and removed on every way out; a container whose session is no longer running is removed
by `sweep` at the next start.

A command runs as `sh -c COMMAND` with a marker in its environment; on timeout, every
process carrying the marker is killed inside the container (children included), and the
result says so.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import SuperviseError

LABEL = "supervise.session"
STORE_LABEL = "supervise.store"  # which database the session is in: a sweep touches only its own
WORKDIR = "/workspace"
# Everyday coding work: Python 3.12 with pip on Debian (slim: a shell and the core tools; it
# runs as the user, so more comes with `pip install --user` and --network bridge). Pulled on first use with
# visible progress; --image for another.
DEFAULT_IMAGE = "python:3.12-slim"
# PID 1 of the container: waits, and stops at once when told to.
KEEPALIVE = ["sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"]


@dataclass(frozen=True)
class Limits:
    """What the sandbox's container may use."""

    memory: str = "2g"
    pids: int = 512
    cpus: float = 2.0


@dataclass(frozen=True)
class Result:
    """A command run in the sandbox: its exit, its output, whether its time ran out."""

    exit_code: int | None
    output: str
    timed_out: bool
    seconds: float


def connect():
    """The Docker client, or one clear error saying what to do (before any model call)."""
    try:
        import docker
    except ImportError as exc:  # pragma: no cover - a dependency
        raise SuperviseError("the Docker SDK for Python is missing", "reinstall supervise-agents") from exc
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except docker.errors.DockerException as exc:
        text = str(exc)
        if "Permission denied" in text:
            raise SuperviseError(
                "no permission on the Docker socket", "add yourself to the docker group (then log in again), or use rootless Docker"
            ) from exc
        raise SuperviseError(
            "cannot reach the Docker daemon", "start Docker (e.g. `sudo systemctl start docker`), or set DOCKER_HOST"
        ) from exc
    return client


def ensure_image(client, image: str, progress: Callable[[str], None] = lambda line: None) -> None:
    """The image, pulled first if it is not here (saying how far along it is)."""
    import docker

    try:
        client.images.get(image)
        return
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.DockerException as exc:
        raise SuperviseError(f"cannot look up the sandbox image {image}: {exc}") from exc
    progress(f"pulling the sandbox image {image} (once)...")
    repository, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "latest")
    try:
        for status in client.api.pull(repository, tag=tag or "latest", stream=True, decode=True):
            if "error" in status:
                raise SuperviseError(
                    f"cannot pull the sandbox image {image}: {status['error']}", "build it locally, or pass --image NAME of one you have"
                )
            if status.get("status") in ("Download complete", "Pull complete", "Digest", "Status"):
                progress(f"  {status.get('id', '')} {status['status']}".rstrip())
    except docker.errors.DockerException as exc:
        raise SuperviseError(
            f"cannot pull the sandbox image {image}: {exc}", "build it locally, or pass --image NAME of one you have"
        ) from exc


class Sandbox:
    def __init__(self, client, container, workspace: Path, user: str):
        self.client = client
        self.container = container
        self.workspace = workspace
        self.user = user

    @classmethod
    def start(
        cls,
        session_id: str,
        workspace: Path,
        store_key: str,
        image: str = DEFAULT_IMAGE,
        network: str = "bridge",
        limits: Limits = Limits(),
        client=None,
        progress: Callable[[str], None] = lambda line: None,
        user: str | None = None,
    ) -> "Sandbox":
        """`user`: uid:gid to run as (default: ours, so files come back owned by the user)."""
        import docker

        client = client or connect()
        ensure_image(client, image, progress)
        workspace = workspace.resolve()
        user = user or f"{os.getuid()}:{os.getgid()}"
        try:
            container = client.containers.run(
                image,
                KEEPALIVE,
                name=f"supervise-{session_id}",
                labels={LABEL: session_id, STORE_LABEL: store_key},
                detach=True,
                user=user,
                working_dir=WORKDIR,
                volumes={str(workspace): {"bind": WORKDIR, "mode": "rw"}},
                environment={"HOME": "/tmp"},
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                privileged=False,
                pids_limit=limits.pids,
                mem_limit=limits.memory,
                nano_cpus=int(limits.cpus * 1e9),
                network_mode=network,
            )
        except docker.errors.DockerException as exc:
            raise SuperviseError(f"cannot start the sandbox from {image}: {exc}", "check the image and `docker info`") from exc
        return cls(client, container, workspace, user)

    def exec(self, command: str, timeout: float) -> Result:
        """Run `sh -c command` in /workspace; past `timeout` seconds, kill it (and whatever
        it started) inside the container."""
        marker = secrets.token_hex(8)
        api = self.client.api
        started = time.monotonic()
        # The exec'd process itself is not dumpable (runc changed its uid), so its environ is
        # unreadable to the killer below; what it execs again is: hence the second sh.
        exec_id = api.exec_create(
            self.container.id,
            ["sh", "-c", 'exec sh -c "$1"', "sh", command],
            user=self.user,
            workdir=WORKDIR,
            environment={"SUPERVISE_EXEC": marker},
            stdin=False,
            tty=False,
        )["Id"]
        chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: chunks.extend(api.exec_start(exec_id, stream=True, demux=False)), daemon=True)
        reader.start()
        reader.join(timeout)
        timed_out = reader.is_alive()
        if timed_out:
            self._kill(marker)
            reader.join(10)
        exit_code = api.exec_inspect(exec_id).get("ExitCode")
        output = b"".join(chunks).decode("utf-8", errors="replace")
        return Result(exit_code, output, timed_out, time.monotonic() - started)

    def _kill(self, marker: str) -> None:
        """Kill every process started under `marker` (it is in their environment)."""
        # Stopped first, then killed: killed one by one, a parent could run on between two
        # kills (`sleep 1; echo never` printed "never").
        script = (
            'pids=; for p in /proc/[0-9]*; do tr "\\000" "\\n" < "$p/environ" 2>/dev/null | grep -qx "SUPERVISE_EXEC=$1" '
            '&& pids="$pids ${p#/proc/}"; done; [ -n "$pids" ] && kill -STOP $pids 2>/dev/null; [ -n "$pids" ] && kill -KILL $pids 2>/dev/null; true'
        )
        self.container.exec_run(["sh", "-c", script, "sh", marker], user=self.user)

    def close(self) -> None:
        """Remove the container (and whatever runs in it)."""
        try:
            self.container.remove(force=True)
        except Exception:
            pass


def store_key(db_path: Path) -> str:
    """A label naming one database (another SUPERVISE_HOME, or another user, has its own)."""
    import hashlib

    return hashlib.sha256(str(Path(db_path).resolve()).encode()).hexdigest()[:16]


def sweep(client, key: str, running: Callable[[str], bool]) -> list[str]:
    """Remove this database's sandboxes whose session is no longer running (a supervisor
    killed before it could clean up). Returns the session ids whose container went."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": f"{STORE_LABEL}={key}"}):
        session_id = container.labels.get(LABEL, "")
        if running(session_id):
            continue
        try:
            container.remove(force=True)
            removed.append(session_id)
        except Exception:
            continue
    return removed
