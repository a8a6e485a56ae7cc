"""Hits in their context: grouped by session with how many more each holds (the command
line, --json and the MCP server alike), one session's every hit, the lines around a hit,
and `show --at`."""

from __future__ import annotations

import json
import re

from conftest import run_cli
from helpers import latest
from test_memory import context_row, mcp, record, repo, search  # noqa: F401 (mcp: the fixture)


def many(folder, word: str, count: int) -> str:
    """A finished session whose log has `count` lines holding `word`, each between two others."""
    loop = f"for i in $(seq -w 000 {count - 1}); do echo step $i before; echo step $i the {word} line; echo step $i after; done"
    run_cli("--", "sh", "-c", loop, cwd=folder, check=True)
    return latest()["id"]


def test_a_session_shows_three_hits_and_says_how_many_more_lines_match(tmp_path, home):
    a = repo(tmp_path / "a")
    big = many(a, "kestrel", 100)
    small = record(a, "one kestrel here")
    hits = json.loads(search(a, "kestrel", "--json").stdout)
    assert [h["session_id"] for h in hits] in ([big] * 3 + [small], [small] + [big] * 3)  # each session's together
    assert {h["session_id"]: h["matches"] for h in hits} == {big: 100, small: 1}
    assert not any(h["matches_more"] for h in hits)
    text = search(a, "kestrel").stdout.splitlines()
    assert f"        … 97 more matching lines in {big} (--session {big})" in text
    assert len(text) == 5 and sum(line.startswith(big) for line in text) == 3
    every = json.loads(search(a, "kestrel", "--session", big[:4], "--limit", "500", "--json").stdout)
    assert len(every) == 100 and {h["session_id"] for h in every} == {big}
    assert sorted(int(h["line"].split()[1]) for h in every) == list(range(100))


def test_a_long_session_leaves_room_for_others_and_says_it_holds_at_least_this_many_more(tmp_path, home):
    a = repo(tmp_path / "a")
    older = record(a, "an older kestrel line")
    big = many(a, "kestrel", 6000)  # 6,000 lines of the word over ~70 chunks of 8 KB, the newest
    hits = json.loads(search(a, "kestrel", "--json").stdout)
    assert sorted(h["session_id"] for h in hits) == sorted([big] * 3 + [older])
    mine = [h for h in hits if h["session_id"] == big]
    assert all(h["matches_more"] for h in mine) and 3 < mine[0]["matches"] < 6000
    text = search(a, "kestrel").stdout.splitlines()
    assert f"        … {mine[0]['matches'] - 3:,}+ more matching lines in {big} (--session {big})" in text


def test_a_hit_is_shown_with_the_lines_around_it_and_show_at_prints_the_log_there(tmp_path, home):
    a = repo(tmp_path / "a")
    sid = record(a, *[f"line {i}" for i in range(10)], "the kestrel decision", *[f"after {i}" for i in range(10)])
    out = search(a, "kestrel", "-C", "2")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[1:] == ["        | line 8", "        | line 9", "        > the kestrel decision", "        | after 0", "        | after 1"]
    hit = json.loads(search(a, "kestrel", "--json").stdout)[0]
    for args in ([sid, "--at", str(hit["offset"]), "--lines", "3"], [hit["id"], "--lines", "3"]):
        shown = run_cli("show", *args, cwd=a)
        assert shown.returncode == 0 and shown.stdout.splitlines() == ["| line 9", "> the kestrel decision", "| after 0"], args
    bad = run_cli("show", f"{sid}@here", cwd=a)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no byte offset" in bad.stderr


def test_a_context_hit_is_shown_with_the_lines_of_its_context_around_it(tmp_path, home):
    from supervisor.store.database import Store

    a = repo(tmp_path / "a")
    sid = record(a, "nothing to see")
    store = Store(home / "supervise.db")
    try:
        context_row(store, sid, "\n".join(["[supervise] round 1", "first", "second", "the kestrel decision", "fourth", "fifth"]))
    finally:
        store.close()
    lines = search(a, "kestrel", "-C", "1").stdout.splitlines()
    assert lines[0].startswith(sid) and " context " in lines[0]
    assert lines[1:] == ["        | second", "        > the kestrel decision", "        | fourth"]


def test_the_mcp_server_gives_the_same_counts(tmp_path, home, mcp):
    a = repo(tmp_path / "a")
    big = many(a, "kestrel", 10)
    answer = mcp(a).call("search", query="kestrel")
    # as many of its lines as fit (which depends on how the running session's log was cut
    # into chunks), and the rest counted: ten in all
    shown = re.search(r"^(\d+) hits in 1 session for", answer, re.M)
    more = re.search(rf"… (\d+) more matching lines in session {big}$", answer, re.M)
    assert shown and more and int(shown[1]) >= 3 and int(shown[1]) + int(more[1]) == 10, answer
