"""`supervise browse`: Datasette over a recorded session (the toy agent compacts, a context is
made and typed back, the session is resumed), through Datasette's in-process client."""

import asyncio
import json
import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest
from datasette.app import Datasette

from conftest import require, run_cli
from helpers import latest, served
from supervisor import paths
from supervisor.store import browse
from supervisor.store.database import Event, Store, utcnow
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


@pytest.mark.slow
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
    # an agent that keeps its own summary of a compaction: set beside the round of that compaction
    store = Store.open_default()
    store.add_event(first["id"], Event("agent_summary", {"text": "Goal: plant a word.", "tokens": 6}, 1.0, utcnow()))
    store.close()
    pairs = get(ds, "/supervise/compaction_summaries.json?_shape=array").json()
    assert len(pairs) == 1, pairs
    [pair] = pairs
    assert pair["session"] == first["id"] and pair["agents_summary"] == "Goal: plant a word."
    assert pair["round"] == 1 and pair["supervise_context"].startswith("[supervise]")


@pytest.mark.slow
def test_search_finds_a_word_in_a_text_log_an_event_and_a_context(recorded):
    first, _ = recorded
    ds = Datasette([str(paths.db_path())], metadata=browse.metadata())
    chunks = get(ds, "/supervise/log_chunks.json?_shape=array&_search=quuxplanted").json()
    assert chunks and chunks[0]["session_id"] == first["id"]
    events = get(ds, "/supervise/events.json?_shape=array&_search=compacted").json()
    assert any(e["kind"] == "compaction_finished" for e in events)
    contexts = get(ds, "/supervise/contexts.json?_shape=array&_search=quuxplanted").json()
    assert first["id"] in {c["session_id"] for c in contexts}


@pytest.mark.slow
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
    run_cli("--", "sh", "-c", "echo browse-me", check=True)
    with served() as base:
        body = urllib.request.urlopen(base + "/supervise/sessions.json?_shape=array", timeout=5).read()
        assert json.loads(body)[0]["id"] == latest()["id"]
        index = urllib.request.urlopen(base + "/", timeout=5).read().decode()
        assert "Agent sessions recorded by supervise" in index
    assert (paths.db_path().parent / "supervise.metadata.json").stat().st_mode & 0o777 == 0o600


def chromium(*args, profile):
    """Headless Chromium (Debian's package), as a person's browser would load the page."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    require(exe is not None, "Chromium is not installed (apt-get install chromium)")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1280,900",
    ]
    return subprocess.run([exe, *flags, *args], capture_output=True, text=True, timeout=90)


def test_a_real_browser_shows_the_index_a_timeline_and_a_search(recorded, tmp_path):
    first, _ = recorded
    shots = Path(os.environ.get("SUPERVISE_TEST_ARTIFACTS", Path.home() / ".cache" / "supervise-test" / "artifacts"))
    shots.mkdir(parents=True, exist_ok=True)
    pages = {
        "index": ("/", ["Agent sessions recorded by supervise", "sessions"]),
        "database": ("/supervise", ["latest_contexts", "log_chunks", "The latest context of each session"]),
        "timeline": (f"/supervise/timeline?session={first['id']}", ["compaction_started", "injection", "context round 1"]),
        "search": ("/supervise/log_chunks?_search=quuxplanted", ["quuxplanted", first["id"]]),
    }
    with served() as base:
        for name, (path, wanted) in pages.items():
            dom = chromium("--dump-dom", base + path, profile=tmp_path / f"profile-{name}")
            assert dom.returncode == 0, dom.stderr[-2000:]
            for text in wanted:
                assert text in dom.stdout, (name, text)
            shot = shots / f"browse-{name}.png"
            done = chromium(f"--screenshot={shot}", base + path, profile=tmp_path / f"profile-shot-{name}")
            assert done.returncode == 0 and shot.stat().st_size > 10_000, done.stderr[-2000:]
