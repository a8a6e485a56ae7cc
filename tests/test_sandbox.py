"""The agent's sandbox against a real Docker engine (scripts/docker-up starts one and builds
the small local image), and its file tools on a real workspace."""

import os
import time

import pytest

from conftest import SANDBOX_IMAGE
from supervisor.agent import sandbox, tools
from supervisor.errors import SuperviseError

IMAGE = SANDBOX_IMAGE


@pytest.fixture
def box(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chmod(ws, 0o777)  # the container runs as another uid here (we are root)
    b = sandbox.Sandbox.start(
        f"t{os.getpid()}{time.monotonic_ns() % 100000}", ws, "test-store", IMAGE, network="none", client=docker_client, user="1234:1234"
    )
    yield b, ws
    b.close()


def test_what_a_command_builds_lands_in_the_workspace_owned_by_the_user(box):
    b, ws = box
    result = b.exec("mkdir -p src && echo 'print(42)' > src/app.py && id -u && ls src", timeout=10)
    assert result.exit_code == 0 and not result.timed_out
    assert result.output.split() == ["1234", "app.py"]
    made = ws / "src" / "app.py"
    assert made.read_text() == "print(42)\n"
    assert (made.stat().st_uid, made.stat().st_gid) == (1234, 1234)


def test_a_command_past_its_timeout_is_killed_with_its_children(box):
    b, _ = box
    started = time.monotonic()
    result = b.exec("sleep 300 & sleep 301; echo never", timeout=1.0)
    assert result.timed_out and "never" not in result.output
    assert time.monotonic() - started < 8
    left = b.exec("ps -o args | grep -c '^sleep 30' || true", timeout=10).output.split()
    assert left == ["0"]  # no sleep of it is still running in the container
    text, error = tools.execute_command(b, "sleep 5", 0.5)
    assert error and "[timed out after 0.5 s: the command was killed]" in text


def test_the_container_is_hardened(box):
    b, _ = box
    b.container.reload()
    host = b.container.attrs["HostConfig"]
    assert host["CapDrop"] == ["ALL"] and not host.get("CapAdd")
    assert "no-new-privileges" in host["SecurityOpt"] and host["Privileged"] is False
    assert host["PidsLimit"] > 0 and host["Memory"] > 0 and host["NanoCpus"] > 0
    mounts = [m["Source"] for m in b.container.attrs["Mounts"]]
    assert len(mounts) == 1 and not any("docker.sock" in m for m in mounts)
    assert b.exec("cat /proc/self/status | grep CapEff", timeout=10).output.split()[-1] == "0000000000000000"


def test_a_sandbox_whose_session_is_gone_is_removed_at_the_next_start(docker_client, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    key = f"sweep-{os.getpid()}"
    gone = sandbox.Sandbox.start(f"dead{os.getpid()}", ws, key, IMAGE, network="none", client=docker_client)
    alive = sandbox.Sandbox.start(f"live{os.getpid()}", ws, key, IMAGE, network="none", client=docker_client)
    other = sandbox.Sandbox.start(f"other{os.getpid()}", ws, key + "-elsewhere", IMAGE, network="none", client=docker_client)
    try:
        removed = sandbox.sweep(docker_client, key, running=lambda sid: sid.startswith("live"))
        assert removed == [f"dead{os.getpid()}"]  # not the live one, nor one of another database
        names = [c.name for c in docker_client.containers.list(all=True)]
        assert gone.container.name not in names and alive.container.name in names and other.container.name in names
    finally:
        for b in (alive, gone, other):
            b.close()


def test_no_daemon_and_a_missing_image_are_one_clear_error_each(docker_client, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SuperviseError, match="cannot reach the Docker daemon") as err:
        sandbox.connect()
    assert "start Docker" in err.value.hint
    monkeypatch.undo()
    with pytest.raises(SuperviseError, match="cannot pull the sandbox image supervise-no-such-image:1"):
        sandbox.ensure_image(docker_client, "supervise-no-such-image:1")


@pytest.mark.parametrize(
    "path", ["../outside.txt", "src/../../outside.txt", "/etc/passwd", "/workspace/../etc/passwd", "link/passwd", "escape"]
)
def test_paths_outside_the_workspace_are_refused(tmp_path, path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to("/etc")
    (ws / "escape").symlink_to(tmp_path / "outside.txt")
    for tool, args in (("read_file", {"path": path}), ("write_file", {"path": path, "content": "x"}), ("list_directory", {"path": path})):
        text, error = tools.run(None, ws, tool, args)
        assert error and text.startswith("refused"), (tool, text)
    assert not (tmp_path / "outside.txt").exists()


def test_file_tools_read_write_and_list_inside_the_workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert tools.run(None, ws, "write_file", {"path": "/workspace/pkg/mod.py", "content": "a\nb\nc\n"}) == (
        "wrote 6 bytes to /workspace/pkg/mod.py",
        False,
    )
    assert tools.run(None, ws, "read_file", {"path": "pkg/mod.py", "start_line": 2, "end_line": 3}) == ("b\nc\n", False)
    assert tools.run(None, ws, "list_directory", {}) == ("pkg/", False)
    big, _ = tools.run(None, ws, "write_file", {"path": "big.txt", "content": "x" * 50_000})
    text, _ = tools.run(None, ws, "read_file", {"path": "big.txt"})
    assert len(text) < tools.OUTPUT_CAP + 100 and "[... 40001 characters cut ...]" in text
