"""`supervise browse`: Datasette over a recorded session (the toy agent compacts, a context is
made and typed back, the session is resumed), through Datasette's in-process client."""

import asyncio
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from datasette.app import Datasette

from browser import Chromium
from conftest import run_cli
from helpers import latest, served
from supervisor import paths
from supervisor.store import browse
from supervisor.store.database import Event, Store, utcnow
from test_injection import compact, quit_toy, toy  # noqa: F401  (toy: the fixture)


def get(ds, path, signed_in=True):
    """A page of `ds`, as its signed-in user (Datasette's root, as the URL `browse` prints
    makes them) or as anyone else."""
    cookies = {"ds_actor": ds.sign({"a": {"id": "root"}}, "actor")} if signed_in else {}

    async def fetch():
        return await ds.client.get(path, cookies=cookies)

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


SECRETS = {
    "anthropic": "sk-ant-api03-" + "Q7vX2mN9pL4kR8sT1wY6zB3cD5fG0hJ" * 3,
    "aws": "AKIA" + "Z7Q2XK4M9PLR3TWB",
    "github": "ghp_" + "k3J9sL2mQ8vX1cB7nT4wR6yZ0pD5fH2gA9eU",
}


def test_supervise_browse_is_only_for_the_user_who_opens_its_url(tmp_path):
    """Every page, table, row, JSON endpoint, query and search is refused to anyone without
    the printed URL's cookie; signed in, the user sees the record, its secrets masked."""
    script = "; ".join(f"echo {kind} {secret}" for kind, secret in SECRETS.items()) + "; echo browse-me"
    run_cli("--name", f"deploy with {SECRETS['github']}", "--", "sh", "-c", script, "--api-key", SECRETS["anthropic"], check=True)
    sid = latest()["id"]
    pages = [
        "/",
        "/supervise",
        "/supervise.json",
        "/supervise/sessions",
        "/supervise/sessions.json",
        f"/supervise/sessions/{sid}",
        f"/supervise/sessions/{sid}.json",
        "/supervise/events.json",
        "/supervise/log_chunks.json",
        "/supervise/log_chunks.json?_search=browse",
        "/supervise.json?sql=select+text+from+log_chunks",
        "/supervise/latest_contexts.json",
        "/-/metadata.json",
        "/-/databases.json",
    ]
    with served() as browse:
        for page in pages:
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(browse.base + page, timeout=10)
            assert refused.value.code == 403, page
        seen = [browse.get(page).read().decode() for page in pages]
        # the sign-in URL worked once: opened again (another browser), it is refused
        with pytest.raises(urllib.error.HTTPError) as again:
            urllib.request.urlopen(browse.sign_in, timeout=10)
        assert again.value.code == 403
    rows = json.loads(seen[pages.index("/supervise/sessions.json")])["rows"]
    assert sid in json.dumps(rows)
    sql = json.loads(seen[pages.index("/supervise.json?sql=select+text+from+log_chunks")])
    assert "browse-me" in json.dumps(sql)
    everything = "\n".join(seen)
    for kind, secret in SECRETS.items():
        assert secret not in everything and secret[-12:] not in everything, kind
    assert "[REDACTED:" in everything
    assert (paths.db_path().parent / "supervise.metadata.json").stat().st_mode & 0o777 == 0o600


def test_a_real_browser_signs_in_from_the_printed_url_and_shows_the_index_a_timeline_and_a_search(recorded, tmp_path):
    first, _ = recorded
    shots = Path(os.environ.get("SUPERVISE_TEST_ARTIFACTS", Path.home() / ".cache" / "supervise-test" / "artifacts"))
    shots.mkdir(parents=True, exist_ok=True)
    pages = {
        "index": ("/", ["Agent sessions recorded by supervise", "sessions"]),
        "database": ("/supervise", ["latest_contexts", "log_chunks", "The latest context of each session"]),
        "timeline": (f"/supervise/timeline?session={first['id']}", ["compaction_started", "injection", "context round 1"]),
        "search": ("/supervise/log_chunks?_search=quuxplanted", ["quuxplanted", first["id"]]),
    }
    with served() as browse:
        browser = Chromium(tmp_path / "profile")
        try:
            refused = browser.load(browse.base + "/supervise/log_chunks?_search=quuxplanted")
            assert "quuxplanted" not in refused and "Forbidden" in refused
            signed = browser.load(browse.sign_in)  # redirected to the index, signed in
            assert "Agent sessions recorded by supervise" in signed
            for name, (path, wanted) in pages.items():
                dom = browser.load(browse.base + path)
                for text in wanted:
                    assert text in dom, (name, text)
                shot = shots / f"browse-{name}.png"
                browser.screenshot(shot)
                assert shot.stat().st_size > 10_000
        finally:
            browser.close()
