"""Edges of the command line a user meets by mistake: a search that finds nothing, an age too
far back, a query pasted whole, Ctrl-C during a command, an agent whose config no command
can change, an install run twice, a command of ours typed after run options. Each gets one
line and the right exit status, and nothing is recorded by mistake. The real `supervise`,
real processes, real signals."""

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from agentdriver import claude_bin, opencode_bin
from conftest import SUPERVISE, require, run_cli
from helpers import wait_for
from supervisor import profiles
from supervisor.memory import launch
from supervisor.recording import logindex
from supervisor.store.database import Store


def one_line(out) -> str:
    """The single line `out` said on stderr (asserted to be one)."""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("supervise: "), out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr
    return out.stderr.rstrip("\n")


def record(folder, line):
    run_cli("--", "sh", "-c", f"printf '%s\\n' {json.dumps(line)}", cwd=folder, check=True)


def recorded() -> list:
    return json.loads(run_cli("sessions", "--json", check=True).stdout)


# ---------------------------------------------------------------- search


def test_search_json_with_no_hit_prints_an_empty_array_and_exits_1_as_the_text_form_does(tmp_path):
    record(tmp_path, "the kestrel queue")
    found = run_cli("search", "kestrel", "--json", cwd=tmp_path)
    assert found.returncode == 0 and [h["line"] for h in json.loads(found.stdout)] == ["the kestrel queue"]
    nothing = run_cli("search", "osprey", "--json", cwd=tmp_path)
    assert (nothing.returncode, nothing.stdout) == (1, "[]\n")
    assert "nothing found for 'osprey'" in one_line(nothing)
    text = run_cli("search", "osprey", cwd=tmp_path)
    assert (text.returncode, text.stdout, text.stderr) == (1, "", nothing.stderr)


@pytest.mark.parametrize(
    "since, most",
    [("1000000000w", "5214w"), ("99999999999999999999999d", "36500d"), ("9999999999h", "876000h"), ("99999999999m", "52560000m")],
)
def test_an_age_too_far_back_is_one_line_saying_the_most_it_takes(tmp_path, since, most):
    out = run_cli("search", "word", "--since", since, cwd=tmp_path)
    said = one_line(out)
    assert out.returncode == 2 and out.stdout == ""
    assert f"an age is at most {most} (100 years)" in said and since[:20] in said


def test_a_date_whose_time_zone_takes_it_past_the_calendar_is_its_end(tmp_path):
    record(tmp_path, "the kestrel queue")
    first = run_cli("search", "kestrel", "--since", "0001-01-01T00:00+01:00", cwd=tmp_path)
    assert first.returncode == 0 and "the kestrel queue" in first.stdout, first.stderr
    last = run_cli("search", "kestrel", "--since", "9999-12-31T23:59-05:00", cwd=tmp_path)
    assert last.returncode == 1 and "nothing found for 'kestrel'" in one_line(last)


def test_an_empty_query_is_told_to_give_words_not_an_age(tmp_path):
    for args in (["", "--since", "7d"], ["!!!"]):
        out = run_cli("search", *args, cwd=tmp_path)
        said = one_line(out)
        assert out.returncode == 2 and "the query has no words to search for" in said
        assert "(hint: give the words to look for" in said and "--since" not in said


def test_a_wrong_since_is_told_what_since_takes(tmp_path):
    out = run_cli("search", "word", "--since", "last tuesday", cwd=tmp_path)
    said = one_line(out)
    assert out.returncode == 2 and "(hint: give a date (2026-11-20) or an age (90m, 12h, 7d, 2w))" in said


@pytest.mark.parametrize("query", ["a" * 20_000, " ".join(f"w{n}" for n in range(4_000))[:20_000]], ids=["a word", "words"])
def test_a_query_of_20000_characters_is_clipped_where_it_is_echoed(tmp_path, query):
    for args in ([], ["--json"]):
        out = run_cli("search", query, *args, cwd=tmp_path)
        said = one_line(out)
        assert out.returncode == 1 and len(said) < 300, len(said)
        assert f"nothing found for '{query[:79]}…'" in said


def hits_store(home: Path) -> None:
    """A session whose text log says `kestrel` on 12,000 lines of 260 characters, indexed:
    its 1,000 best hits print some 300 KB."""
    home.mkdir(parents=True, exist_ok=True)
    log = home / "big.log"
    log.write_text("".join(f"kestrel line {n} " + "x" * 240 + "\n" for n in range(12_000)))
    store = Store(home / "supervise.db")
    try:
        store.create_session("bigaaa", command="sh", argv=["sh"], cwd="/p", project="/p", project_key="/p")
        assert logindex.index_new(store, "bigaaa", log) > 340
    finally:
        store.close()


def test_ctrl_c_while_search_prints_its_hits_ends_it_quietly_with_130(home):
    hits_store(home)
    proc = subprocess.Popen(
        [*SUPERVISE, "search", "kestrel", "--all", "--limit", "1000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        first = proc.stdout.readline()  # it is printing its hits: the rest fills the pipe, unread
        assert first.startswith("bigaaa") and "kestrel line" in first, first
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err) == (130, "")
    assert first.count("\n") + out.count("\n") < 1000  # it stopped before its last hit


def test_ctrl_c_while_doctor_waits_for_a_check_ends_it_quietly_with_130_and_ends_the_check(tmp_path):
    """Doctor asks each agent CLI its version: one that hangs is waited for, and Ctrl-C then
    ends doctor at once, the hanging program with it."""
    bin_dir, started = tmp_path / "bin", tmp_path / "started"
    bin_dir.mkdir()
    fake = bin_dir / profiles.clis()[0]  # the first agent doctor checks
    fake.write_text(f"#!/bin/sh\necho $$ > {started}.tmp && mv {started}.tmp {started}\nexec sleep 60\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.Popen([*SUPERVISE, "doctor"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    pid = None
    try:
        pid = int(wait_for(lambda: started.exists() and started.read_text(), 30, what="doctor ran the agent's --version"))
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)  # far less than the check's own timeout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        left = pid is not None and Path(f"/proc/{pid}").exists()
        if left:
            os.kill(pid, signal.SIGKILL)
    assert (proc.returncode, err) == (130, "")
    assert "terminal" in out  # the checks before it were said
    assert not left  # the hanging program was ended with it, not left behind


# ---------------------------------------------------------------- mcp install


def without_install_command() -> list[str]:
    server = launch.server(os.environ)
    return [name for name in profiles.shipped() if profiles.get(name).mcp_add(server) is None]


def test_an_agent_no_command_can_give_the_server_is_told_why_in_words(tmp_path):
    agents = without_install_command()
    assert {"aider", "continue-cli", "pi", "supervise-agent"} == set(agents)
    for agent in agents:
        out = run_cli("mcp", "install", agent, "--dry-run")
        said = one_line(out)
        assert out.returncode == 2 and out.stdout == "", agent
        assert said.startswith(f"supervise: {agent} cannot be given an MCP server by `supervise mcp install`: ") and "None" not in said
        assert said.endswith("see docs/memory.md)"), said
    said = one_line(run_cli("mcp", "install", "continue-cli", "--dry-run"))
    assert said.endswith(
        ": it has no `mcp add` command: its servers are listed in ~/.continue/config.yaml "
        "(hint: run under supervise, it is given the server for each run; see docs/memory.md)"
    ), said
    said = one_line(run_cli("mcp", "install", "aider", "--dry-run"))
    assert said.endswith(": it has no MCP client (hint: see docs/memory.md)"), said


def network_namespace() -> list[str]:
    """A prefix that runs a command where no network can be reached."""
    unshare = shutil.which("unshare")
    prefix = [unshare, "--map-root-user", "--net"] if unshare else []
    works = bool(prefix) and subprocess.run([*prefix, "true"], capture_output=True).returncode == 0
    require(works, "`unshare --map-root-user --net` (util-linux, with user namespaces) keeps the agent off the network")
    return prefix


def agent_env(home: Path, binary: str) -> dict:
    """An agent CLI's environment: its HOME (and config folders) in `home`, on PATH, no keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "OPENCODE", "XDG_"))}
    env.update(
        HOME=str(home),
        PATH=f"{Path(binary).parent}:{env['PATH']}",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
    )
    return env


def test_mcp_install_opencode_adds_the_server_through_its_own_mcp_add(tmp_path, home):
    """The real OpenCode, its HOME a temp folder, in a network namespace: its own `mcp add`
    takes the server on its command line."""
    binary = opencode_bin()
    agent_home = tmp_path / "agent-home"
    agent_home.mkdir()
    env = agent_env(agent_home, binary)
    done = subprocess.run(
        [*network_namespace(), *SUPERVISE, "mcp", "install", "opencode"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0 and "opencode now has supervise's MCP server" in one_line(done)
    [config] = (agent_home / ".config" / "opencode").glob("opencode.json*")
    entry = json.loads(config.read_text())["mcp"]["supervise"]
    assert entry["command"][-3:] == ["-m", "supervisor", "mcp"] and entry["environment"]["SUPERVISE_HOME"] == str(home)


def test_mcp_install_run_twice_says_the_second_time_that_the_server_is_already_there(tmp_path):
    """The real Claude Code, its HOME a temp folder, in a network namespace: its own `mcp add`
    refuses a name it has; supervise says the server is there already and succeeds."""
    agent_home = tmp_path / "agent-home"
    agent_home.mkdir()
    env = agent_env(agent_home, claude_bin())
    prefix = network_namespace()

    def install():
        return subprocess.run([*prefix, *SUPERVISE, "mcp", "install", "claude"], capture_output=True, text=True, env=env, timeout=120)

    first = install()
    assert first.returncode == 0 and "claude now has supervise's MCP server" in one_line(first)
    second = install()
    said = one_line(second)
    assert second.returncode == 0 and second.stdout == ""
    assert said.startswith("supervise: claude already has an MCP server named supervise: left as it is"), said
    servers = json.loads((agent_home / ".claude.json").read_text())["mcpServers"]
    assert list(servers) == ["supervise"] and servers["supervise"]["args"][-2:] == ["supervisor", "mcp"]


# ---------------------------------------------------------------- our command after run options


def test_a_command_of_ours_after_run_options_is_one_line_and_nothing_is_recorded(tmp_path):
    out = run_cli("--name", "x", "demo", cwd=tmp_path)
    said = one_line(out)
    assert out.returncode == 2 and out.stdout == ""
    assert "'demo' is one of supervise's own commands" in said and "did you mean `supervise demo`? It takes no --name" in said
    out = run_cli("--name", "x", "--agent", "claude", "sessions", cwd=tmp_path)
    assert out.returncode == 2 and "did you mean `supervise sessions`? It takes no --name, --agent" in one_line(out)
    assert recorded() == []


def test_a_program_on_path_named_as_a_command_of_ours_still_runs_after_run_options(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "demo").write_text("#!/bin/sh\necho the own demo of the user\n")
    (bin_dir / "demo").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    out = run_cli("--name", "x", "demo", cwd=tmp_path, env=env)
    assert out.returncode == 0 and "the own demo of the user" in out.stdout, out.stderr
    assert [(s["name"], s["status"]) for s in recorded()] == [("x", "completed")]
