"""The MCP server answers for its own project: what an agent asks of another (all_projects,
another project's session or hit, another folder's brief) is refused, in one line of
supervise's that says how the user widens it; a setting of the user's widens it. Wrong
arguments get one line of supervise's too. A real `supervise mcp` over stdio, real sessions."""

import os
import re

import pytest

from conftest import run_cli
from helpers import latest
from supervisor.memory import launch
from supervisor.store.database import Store
from test_memory import SECRET, context_row, mcp, record, repo  # noqa: F401 (mcp: a fixture)

WIDEN = "[memory] mcp_all_projects = true"


def answer(server, tool, **args) -> tuple[str, bool]:
    """What the server answers a call, and whether it says it is an error."""
    result = server.ask("tools/call", {"name": tool, "arguments": args})
    return "".join(c["text"] for c in result["content"]), result.get("isError", False)


def refused(said: tuple[str, bool], *words: str) -> bool:
    text, is_error = said
    return is_error and text.startswith("supervise: ") and "\n" not in text and all(w in text for w in words)


@pytest.fixture
def two(tmp_path, home):
    """Projects a and b, a session with a context in each; the user's own config folder, empty."""
    a, b = repo(tmp_path / "a"), repo(tmp_path / "b")
    (a / "src").mkdir()
    one = record(a, "kestrel in project a")
    other = record(b, "kestrel in project b")
    store = Store(home / "supervise.db")
    context_row(store, one, original_request="port the importer to kestrel")
    context_row(store, other, original_request="the secret plans of project b")
    store.close()
    config = tmp_path / "config"
    config.mkdir()
    return a, b, one, other, {**os.environ, "SUPERVISE_CONFIG": str(config)}


def test_what_lies_outside_its_project_is_refused_in_one_line_that_says_how_to_widen_it(two, mcp):
    a, b, one, other, env = two
    server = mcp(a, env=env)
    found, is_error = answer(server, "search", query="kestrel")
    assert not is_error and one in found and other not in found
    assert refused(answer(server, "search", query="kestrel", all_projects=True), "all_projects", WIDEN)
    # another project's session, by id, by a prefix of it, or by a hit of it: as if there were none
    nowhere = answer(server, "session", id="q0q0q0")
    assert refused(nowhere, WIDEN)
    for given in (other, other[:5]):
        said = answer(server, "session", id=given)
        assert refused(said, WIDEN) and said[0].replace(given, "q0q0q0") == nowhere[0]
    said = answer(server, "excerpt", id=f"{other}@0")
    assert refused(said, WIDEN) and str(b) not in said[0]
    assert refused(answer(server, "brief", project=str(b)), WIDEN)
    # its own project's, from any of its folders
    told, is_error = answer(server, "session", id=one)
    assert not is_error and f"Session {one}" in told
    for folder in ("", str(a), str(a / "src")):
        brief, is_error = answer(server, "brief", **({"project": folder} if folder else {}))
        assert not is_error and "port the importer to kestrel" in brief and "secret plans" not in brief
    assert server.close() == 0


@pytest.mark.parametrize("widened", ["config", "variable"])
def test_the_users_setting_widens_it_to_every_project(two, mcp, widened, tmp_path):
    a, b, one, other, env = two
    if widened == "config":
        (tmp_path / "config" / "config.toml").write_text("[memory]\nmcp_all_projects = true\n")
    else:
        env["SUPERVISE_MCP_ALL_PROJECTS"] = "1"
    server = mcp(a, env=env)
    found, is_error = answer(server, "search", query="kestrel")
    assert not is_error and one in found and other not in found  # its own project still first by default
    found, is_error = answer(server, "search", query="kestrel", all_projects=True)
    assert not is_error and one in found and other in found
    told, is_error = answer(server, "session", id=other)
    assert not is_error and f"Session {other}" in told
    brief, is_error = answer(server, "brief", project=str(b))
    assert not is_error and "the secret plans of project b" in brief and "port the importer" not in brief
    assert server.close() == 0


def test_a_wrong_setting_is_one_line_and_the_server_keeps_to_its_project(two, mcp, tmp_path):
    """A broken config does not take the agent's server away (doctor reports the config):
    said in one line, it answers as the narrow default does."""
    a, _, _, _, env = two
    (tmp_path / "config" / "config.toml").write_text('[memory]\nmcp_all_projects = "yes"\n')
    server = mcp(a, env=env)
    refused, is_error = answer(server, "search", query="importer", all_projects=True)
    assert is_error and refused.startswith("supervise: all_projects is refused"), refused
    assert server.close() == 0
    said = server.proc.stderr.read().decode()
    assert said.count("\n") == 1 and "[memory] mcp_all_projects must be true or false" in said
    assert said.endswith("; the MCP server answers for its own project only\n")


def test_a_run_gives_its_agent_the_server_with_the_runs_own_scope(two, mcp, tmp_path):
    """The server as an agent starts it (launch.server's command and environment), given no
    other variable: the run's widened setting reaches it, and a narrow one holds."""
    a, b, one, other, env = two
    for widened in (True, False):
        given = launch.server(env, str(a), None, all_projects=widened)
        bare = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **given.env}
        server = mcp(tmp_path, env=bare, command=[given.command, *given.args])
        found, is_error = answer(server, "search", query="kestrel", all_projects=True)
        assert (other in found, is_error) == (widened, not widened), found
        assert server.close() == 0


@pytest.mark.parametrize(
    "tool, args, said",
    [
        ("search", {}, "search needs query"),
        ("search", {"query": ""}, "search needs query"),
        ("search", {"query": 42}, "query must be text"),
        ("search", {"query": "kestrel", "limit": "many"}, "limit must be a whole number"),
        ("search", {"query": "kestrel", "all_projects": "maybe"}, "all_projects must be true or false"),
        ("search", {"query": "kestrel", "all_project": True}, "search takes query, agent, since, all_projects, limit"),
        ("session", {}, "session needs id"),
        ("session", {"id": ["a", "b"]}, "id must be text"),
        ("excerpt", {"id": "abc@1", "lines": 2.5}, "lines must be a whole number"),
        ("brief", {"project": 7}, "project must be text"),
    ],
)
def test_wrong_or_missing_arguments_get_one_line_of_supervises_own(two, mcp, tool, args, said):
    a, _, _, _, env = two
    server = mcp(a, env=env)
    text, is_error = answer(server, tool, **args)
    assert refused((text, is_error), said), text
    assert "pydantic" not in text and "http" not in text and "validation error" not in text
    assert server.close() == 0


def test_nothing_recorded_yet_is_an_error_result(tmp_path, mcp):
    config = tmp_path / "config"
    config.mkdir()
    server = mcp(tmp_path, env={**os.environ, "SUPERVISE_CONFIG": str(config)})
    assert refused(answer(server, "search", query="anything"), "recorded no session yet")


def test_excerpt_shows_the_text_around_a_hit_deep_in_a_very_long_line(tmp_path, home, mcp):
    a = repo(tmp_path / "a")
    # one line of 220 KB (the terminal wraps it; the text log keeps it whole), the hit 150 KB in, a key beside it
    script = (
        "import sys; sys.stdout.write('start\\n' + 'word ' * 30000 + 'kestrel-here token %s ' + 'filler ' * 10000 + '\\nend\\n')" % SECRET
    )
    run_cli("--", "python3", "-c", script, cwd=a, check=True)
    sid = latest()["id"]
    log = open(latest()["log_path"], "rb").read()
    assert max(len(line) for line in log.split(b"\n")) > 200_000
    config = tmp_path / "config"
    config.mkdir()
    server = mcp(a, env={**os.environ, "SUPERVISE_CONFIG": str(config)})
    found, _ = answer(server, "search", query="kestrel")
    hit = re.search(rf"({sid}@\d+) ", found)
    assert hit, found
    around, is_error = answer(server, "excerpt", id=hit.group(1), lines=3)
    assert not is_error and "word kestrel-here token [REDACTED:anthropic-key] filler" in around, around
    assert SECRET not in around and "Hq4Hq4" not in around
    assert "| end" in around  # the next line (the one before is 150 KB back, beyond what an excerpt reads)
    assert len(around) < 2_000  # bounded: the line's neighbourhood, not its 220 KB
    # the same place asked as a byte of the log
    at = log.index(b"kestrel-here")
    near, is_error = answer(server, "excerpt", id=sid, around=at, lines=1)
    assert not is_error and "kestrel-here" in near and len(near) < 1_000, near
    assert server.close() == 0
