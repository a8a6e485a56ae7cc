"""`supervise browse`: Datasette over a recorded session (the toy agent compacts, a context is
made and typed back, the session is resumed), through Datasette's in-process client."""

import asyncio
import json

import pytest
from datasette.app import Datasette

from conftest import run_cli
from helpers import latest
from supervisor import browse, paths
from supervisor.store import Store
from test_injection import compact, quit_toy, toy  # noqa: F401  (toy: the fixture)


def get(ds, path):
    async def fetch():
        return await ds.client.get(path)
    return asyncio.run(fetch())


@pytest.fixture
def recorded(toy):  # noqa: F811
    screen, log = toy("--paste")
    screen.type("plant the word quuxplanted in the log")
    screen.wait("reply to: plant the word", 10)
    compact(screen)
    screen.wait(r"reply to: \[supervise\]", 20)
    first = quit_toy(screen)
    screen, _ = toy(args=["resume", first["id"]])
    second = quit_toy(screen)
    store = Store.open_default()
    store.close()
    return first, second


def test_every_canned_query_runs_and_returns_the_recorded_session(recorded):
    first, second = recorded
    ds = Datasette([str(paths.db_path())], metadata=browse.metadata())
    latest_contexts = get(ds, "/supervise/latest_contexts.json?_shape=array").json()
    assert {r["session"] for r in latest_contexts} >= {first["id"]}
    timeline = get(ds, f"/supervise/timeline.json?_shape=array&session={first['id']}").json()
    whats = [r["what"] for r in timeline]
    assert "compaction_started" in whats and "injection" in whats and any(w.startswith("context round") for w in whats)
    assert [r["time"] for r in timeline] == sorted(r["time"] for r in timeline)
    costs = get(ds, "/supervise/summary_costs_by_session.json?_shape=array").json()
    assert first["id"] in {r["session"] for r in costs}
    assert get(ds, "/supervise/summary_costs_by_day.json?_shape=array").json()[0]["rounds"] >= 1
    resumed = get(ds, "/supervise/resumed_sessions.json?_shape=array").json()
    assert [(r["session"], r["resumed_from"]) for r in resumed] == [(second["id"], first["id"])]
    assert get(ds, "/supervise/unconfirmed_injections.json?_shape=array").json() == []  # the one injection was confirmed


def test_search_finds_a_word_in_a_text_log_an_event_and_a_context(recorded):
    first, _ = recorded
    ds = Datasette([str(paths.db_path())], metadata=browse.metadata())
    chunks = get(ds, "/supervise/log_chunks.json?_shape=array&_search=quuxplanted").json()
    assert chunks and chunks[0]["session_id"] == first["id"]
    events = get(ds, "/supervise/events.json?_shape=array&_search=compacted").json()
    assert any(e["kind"] == "compaction_finished" for e in events)
    contexts = get(ds, "/supervise/contexts.json?_shape=array&_search=quuxplanted").json()
    assert first["id"] in {c["session_id"] for c in contexts}


def test_every_table_and_column_is_described_and_cells_read_well(recorded):
    first, _ = recorded
    ds = Datasette([str(paths.db_path())], metadata=browse.metadata())
    store = Store.open_default()
    for table in ("sessions", "events", "contexts", "messages", "log_chunks"):
        described = browse.TABLES[table][1]
        assert set(store.db[table].columns_dict) - {"rowid"} <= set(described) | {"id"}, table
    page = get(ds, f"/supervise/contexts?session_id={first['id']}").text
    assert '<pre style="white-space: pre-wrap; margin: 0">[supervise] You are continuing' in page  # the prompt as text
    event_page = get(ds, "/supervise/events?kind=injection").text
    assert "&#34;channel&#34;: &#34;typed&#34;" in event_page or '"channel": "typed"' in event_page
    printed = json.loads(run_cli("browse", "--print-metadata", check=True).stdout)
    assert printed == json.loads(json.dumps(browse.metadata()))  # the same metadata for plain `datasette`


def test_supervise_browse_serves_the_database_on_localhost(tmp_path):
    import socket
    import subprocess
    import time
    import urllib.request

    from conftest import SUPERVISE

    run_cli("--", "sh", "-c", "echo browse-me", check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*SUPERVISE, "browse", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        body = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and body is None:
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/supervise/sessions.json?_shape=array", timeout=2).read()
            except OSError:
                time.sleep(0.3)
        assert body is not None, proc.stderr.read1().decode() if proc.poll() is not None else "no answer"
        assert json.loads(body)[0]["id"] == latest()["id"]
        index = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read().decode()
        assert "Agent sessions recorded by supervise" in index
    finally:
        proc.terminate()
        proc.wait(10)
    assert (paths.db_path().parent / "supervise.metadata.json").stat().st_mode & 0o777 == 0o600
