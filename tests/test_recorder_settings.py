"""The recorder works with the settings its supervisor resolved (its flags, its config file
as it was at the start), and none of them is on the recorder's command line, which every
user of the machine can read."""

import json
import os
import subprocess

from conftest import SUPERVISE, run_cli
from helpers import wait_for
from procs import recorder_pid

SECRET = "T0AAAA/B0BBBB/hunter2SECRET"


def test_the_recorder_gets_the_resolved_settings_and_no_secret_on_its_command_line(tmp_path):
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "config.toml").write_text(f'[notify]\ncommand = "curl -s https://hooks.example.com/services/{SECRET} -d {{state}}"\n')
    env = {**os.environ, "SUPERVISE_CONFIG": str(cfg), "ANTHROPIC_API_KEY": "sk-ant-api03-" + "k" * 40}
    gate = tmp_path / "gate"
    agent = ["sh", "-c", f"echo working on it; while [ ! -e {gate} ]; do sleep 0.05; done; echo done"]
    proc = subprocess.Popen(
        [*SUPERVISE, "--summary-backend", "heuristic", "--agent", "demo", "--", *agent],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        recorder = wait_for(lambda: _recorder(proc.pid))
        cmdline = open(f"/proc/{recorder}/cmdline", "rb").read().decode()
        assert "supervisor.run.recorder" in cmdline
        assert SECRET not in cmdline and "sk-ant-" not in cmdline and "hooks.example.com" not in cmdline
    finally:
        gate.touch()
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    sid = json.loads(run_cli("sessions", "--json", env=env, check=True).stdout)[0]["id"]
    # the flag, not the key in the environment, chose who made the session's last round
    row = json.loads(run_cli("context", sid, "--json", env=env, check=True).stdout)
    assert (row["trigger"], row["backend"], row["source"]) == ("session_end", "heuristic", "heuristic")


def _recorder(pid: int) -> int | None:
    try:
        return recorder_pid(pid)
    except (AssertionError, OSError):
        return None
