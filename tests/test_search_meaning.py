"""Search by meaning, opt-in: with an embeddings endpoint set ([memory] embeddings), a running
session's chunks are embedded by its recorder (masked text only), a question that shares no
word with its answer finds it, words still find their own lines first, and an endpoint that
fails leaves the search to the words with one line. Against a real HTTP server on 127.0.0.1
that speaks the OpenAI embeddings API (tests/fake_embeddings.py)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from conftest import run_cli
from helpers import recorder_done
from fake_embeddings import FakeEmbeddings
from supervisor.memory.embedder import PROBE
from test_injection import toy  # noqa: F401 (the fixture)
from test_memory import SECRET, mcp, record, repo, search  # noqa: F401 (mcp: the fixture)

QUESTION = "where are release passwords stored"  # no word of it is in the answer, nor a stem
ANSWER = "deploy key lives in vault path secret/kestrel"


@pytest.fixture
def embeddings(home, monkeypatch):
    with FakeEmbeddings() as fake:
        monkeypatch.setenv("SUPERVISE_EMBEDDINGS", fake.url + "/v1")
        monkeypatch.setenv("SUPERVISE_EMBEDDINGS_MODEL", "fake-64")
        yield fake


def unembedded(home, sid: str) -> int:
    conn = sqlite3.connect(home / "supervise.db")
    try:
        return conn.execute(
            "select count(*) from log_chunks c where c.session_id = ? and not exists"
            " (select 1 from passage_vectors v where v.source = 'log' and v.row = c.id)",
            [sid],
        ).fetchone()[0]
    finally:
        conn.close()


def embedded(home, sid: str) -> None:
    """Wait until the session's recorder (which outlives the command) has embedded its chunks."""
    deadline = time.monotonic() + 30
    while unembedded(home, sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert unembedded(home, sid) == 0


def sessions(folder, home):
    planted = record(folder, "reading the config", ANSWER, f"token {SECRET} for the mirror", "done")
    other = record(folder, "the sqlite database is slow on big tables", "added an index; latency is fine now")
    third = record(folder, "a crash in the parser on empty input", "ECONNRESET while fetching the mirror")
    for sid in (planted, other, third):
        embedded(home, sid)
    return planted, other, third


def test_a_question_that_shares_no_word_with_its_answer_finds_it_by_meaning(tmp_path, home, embeddings, monkeypatch):
    a = repo(tmp_path / "a")
    planted, other, third = sessions(a, home)
    hits = json.loads(search(a, QUESTION, "--json").stdout)
    assert hits[0]["session_id"] == planted and hits[0]["line"] == ANSWER and hits[0]["source"] == "log"
    assert hits[0]["marks"] == []  # (no word of the question is in it)
    shown = run_cli("show", hits[0]["id"], "--lines", "1", cwd=a)
    assert shown.stdout.splitlines() == [f"> {ANSWER}"]  # the hit's offset is its line's
    sent = embeddings.texts()
    assert QUESTION in sent and any(ANSWER in t for t in sent)
    assert not any(SECRET in t or "Hq4Hq4" in t for t in sent)  # masked before it left
    assert any("[REDACTED:anthropic-key]" in t for t in sent)
    monkeypatch.delenv("SUPERVISE_EMBEDDINGS")
    words = search(a, QUESTION)
    assert words.returncode == 1 and "nothing found" in words.stderr  # the words alone: nothing


def test_words_still_find_their_own_line_first(tmp_path, home, embeddings):
    a = repo(tmp_path / "a")
    planted, other, third = sessions(a, home)
    hits = json.loads(search(a, "ECONNRESET", "--json").stdout)
    assert hits[0]["session_id"] == third and hits[0]["line"] == "ECONNRESET while fetching the mirror"
    assert hits[0]["marks"] == [[0, 10]]
    slow = json.loads(search(a, "database", "slow", "--json").stdout)
    assert slow[0]["session_id"] == other and slow[0]["line"] == "the sqlite database is slow on big tables"


def test_an_endpoint_that_fails_leaves_the_search_to_the_words_with_one_line(tmp_path, home, embeddings):
    a = repo(tmp_path / "a")
    planted, other, third = sessions(a, home)
    embeddings.fail(500)
    out = search(a, "ECONNRESET")
    assert out.returncode == 0 and out.stdout.startswith(third)
    said = [line for line in out.stderr.splitlines() if line]
    assert len(said) == 1 and "answered HTTP 500" in said[0] and "this search is by words alone" in said[0], out.stderr
    embeddings.fail(200, "<html>not json</html>")
    out = search(a, QUESTION)
    assert out.returncode == 1 and "did not answer with JSON" in out.stderr and "by words alone" in out.stderr


def test_search_embed_embeds_what_the_recorder_could_not_and_only_once(tmp_path, home, embeddings):
    a = repo(tmp_path / "a")
    embeddings.fail(503, times=1000)  # down while the session runs: it is recorded as ever
    sid = record(a, "reading the config", ANSWER, "done")
    recorder_done(sid)  # (it outlives the command: its last pass, failed too)
    assert unembedded(home, sid) == 1
    embeddings.heal(forget=True)
    out = search(a, QUESTION, "--embed", "--json")
    assert "embedded 2 lines for search by meaning" in out.stderr, out.stderr  # ("done" is too short to mean much)
    assert json.loads(out.stdout)[0]["line"] == ANSWER and unembedded(home, sid) == 0
    again = search(a, QUESTION, "--embed", "--json")
    assert "embedded 0 lines" in again.stderr and json.loads(again.stdout)[0]["line"] == ANSWER
    sent = embeddings.texts()
    assert sorted(sent) == sorted(["reading the config", ANSWER, *[QUESTION, PROBE] * 2])  # each line once; each search's question


def test_the_mcp_search_tool_finds_by_meaning_too(tmp_path, home, embeddings, mcp):
    a = repo(tmp_path / "a")
    planted, other, third = sessions(a, home)
    found = mcp(a).call("search", query=QUESTION)
    assert f"{planted}@" in found and ANSWER in found.splitlines()[2], found


def test_an_agent_sessions_contexts_are_embedded_by_its_recorder(toy, home, embeddings):
    screen, _ = toy(extra_env={"SUPERVISE_EMBEDDINGS": embeddings.url + "/v1", "SUPERVISE_EMBEDDINGS_MODEL": "fake-64"})
    screen.type("please keep the deploy key in the vault from now on")
    screen.wait("please keep the deploy key", 10)
    screen.type("/exit")
    screen.wait(r"supervise: session \w+ completed", 30)
    assert "search by meaning failed" not in "\n".join(screen.vt.text())
    conn = sqlite3.connect(home / "supervise.db")
    try:
        deadline = time.monotonic() + 30  # (the recorder makes and embeds its last context after the command has ended)
        while (
            time.monotonic() < deadline
            and not conn.execute(
                "select count(*) from contexts c where c.trigger = 'session_end' and exists"
                " (select 1 from passage_vectors v where v.source = 'context' and v.row = c.id)"
            ).fetchone()[0]
        ):
            time.sleep(0.1)
        contexts = conn.execute("select count(*) from contexts").fetchone()[0]
        rows = conn.execute("select spans, vectors from passage_vectors where source = 'context'").fetchall()
    finally:
        conn.close()
    assert contexts and len(rows) == contexts and all(len(v) == len(spans) // 8 * 64 for spans, v in rows)
    assert any("please keep the deploy key in the vault from now on" in t for t in embeddings.texts())


def test_doctor_says_whether_the_endpoint_answers_and_how_much_is_left(tmp_path, home, embeddings):
    a = repo(tmp_path / "a")
    embeddings.fail(503, times=1000)
    recorder_done(record(a, "reading the config", ANSWER))
    down = json.loads(run_cli("doctor", "--json").stdout)
    row = next(c for c in down if c["name"] == "meaning")
    assert row["status"] == "problem" and "answered HTTP 503" in row["detail"], row
    embeddings.heal()
    up = next(c for c in json.loads(run_cli("doctor", "--json").stdout) if c["name"] == "meaning")
    assert up["status"] == "ok" and "fake-64 answers" in up["detail"] and "64 dimensions" in up["detail"], up
    assert "not embedded yet: 1 chunks and contexts" in up["detail"], up


def test_without_an_endpoint_nothing_is_embedded_nor_asked(tmp_path, home):
    a = repo(tmp_path / "a")
    sid = record(a, ANSWER)
    assert unembedded(home, sid) == 1
    out = search(a, "--embed", "kestrel")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "--embed needs an embeddings endpoint" in out.stderr


def test_a_wrong_endpoint_setting_is_one_line(tmp_path, home, monkeypatch):
    monkeypatch.setenv("SUPERVISE_EMBEDDINGS", "localhost:11434")
    out = search(repo(tmp_path / "a"), "kestrel")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "SUPERVISE_EMBEDDINGS" in out.stderr


def test_passages_are_lines_with_words_each_said_once():
    from supervisor.memory import passages

    text = "┌────┐\n│ 42 │\n" + "a line of words that means something\n" * 2 + "ok\n" + " ".join(f"item {i:04d}" for i in range(150)) + "\n"
    spans = passages.split(text)
    assert [text[a:b] for a, b in spans[:2]] == ["a line of words that means something"] * 2
    assert [b - a for a, b in spans[2:]] == [passages.PASSAGE, passages.PASSAGE, 150 * 10 - 1 - 2 * passages.PASSAGE]  # a long line, cut
    seen: set[bytes] = set()
    assert passages.new(text, seen) == [spans[0], *spans[2:]]  # a line said again: once
    assert not passages.new("a  line of words   that means something\n", seen)


def test_a_call_that_failed_is_asked_again_whole(tmp_path):
    from supervisor.memory import embedclient, embedder
    from supervisor.store.database import Store

    store = Store(tmp_path / "s.db")
    try:
        store.create_session("s1aaaa", command="sh", argv=["sh"], cwd="/p", project="/p", project_key="/p", started="2026-11-29T10:00:00")
        with store.conn:
            store.conn.execute(
                "insert into log_chunks (session_id, start, \"end\", text) values ('s1aaaa', 0, 60, ?)", [f"{ANSWER}\nreading the config\n"]
            )
        seen: set[bytes] = set()
        with FakeEmbeddings() as fake:
            client = embedclient.Client(fake.url + "/v1", "fake-64")
            fake.fail(503)
            with pytest.raises(embedclient.Unavailable):
                embedder.embed_session(store, client, "s1aaaa", seen)
            assert embedder.embed_session(store, client, "s1aaaa", seen) == 2  # (not 0: the failed call's lines are not `seen`)
            assert embedder.embed_session(store, client, "s1aaaa", seen) == 0
    finally:
        store.close()
