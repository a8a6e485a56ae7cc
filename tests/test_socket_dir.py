"""The hook socket's folder: an agent's door reaches the recorder whatever the temp dir is."""

import json
import os
import subprocess
import tempfile

import pytest

from supervisor import paths
from supervisor.giveback.hookserver import HookServer
from supervisor.profiles import hook


@pytest.fixture
def long_tmpdir(tmp_path, monkeypatch):
    """A TMPDIR as deep as a test's or a sandbox's can be: a socket path in it would pass the
    Unix limit (108 bytes on Linux, 104 on macOS)."""
    deep = tmp_path / ("a-rather-long-folder-name-" * 4)
    deep.mkdir()
    monkeypatch.setenv("TMPDIR", str(deep))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    assert len(str(deep / "supervise-4194304-abcdefgh" / "hook.sock")) > 108
    return deep


def test_a_hook_reaches_the_recorder_even_under_a_temp_dir_too_deep_for_a_socket(long_tmpdir):
    folder = paths.socket_dir()
    try:
        asked = []
        server = HookServer(str(folder / "hook.sock"), lambda req: asked.append(req) or "the context", lambda where, exc: None)
        server.start()
        try:
            out = subprocess.run(
                hook.command(),
                shell=True,
                input=json.dumps({"hook_event_name": "SessionStart", "source": "compact"}),
                capture_output=True,
                text=True,
                env={"PATH": os.environ["PATH"], hook.SOCKET_ENV: server.path},
                timeout=30,
            )
        finally:
            server.close()
        assert json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"] == "the context"
        assert [r["source"] for r in asked] == ["compact"]
        # still the user's own private folder, named for this supervisor (a later start sweeps it)
        assert folder.name.startswith(f"{paths.SOCKET_DIR_PREFIX}{os.getpid()}-") and (folder.stat().st_mode & 0o777) == 0o700
    finally:
        folder.rmdir()
