"""Every door that shows the record, probed with every secret of the corpus (tests/
secrets_corpus.py) planted in the whole record: the text log (so the search index and the
contexts made from it), the events, the command line and the session's name. A secret the
masks know never passes a door: the database (which Datasette serves, SQL included), the CLI
(sessions, show, context, search, export --redact) and the MCP server. How many the masks
know is test_redaction_corpus.py's measure. A real session, real processes, a real database."""

import json
import sqlite3

import secrets_corpus
from conftest import run_cli
from helpers import latest, recorder_done
from supervisor.redact import redact
from test_memory import Mcp

SCRIPT = "cat leak.txt; echo Compacting conversation; sleep 0.5; echo Conversation compacted; sleep 1; echo the end"


def known_secrets() -> list[secrets_corpus.Item]:
    """The corpus's secrets that the masks take out of their own line."""
    items = [i for i in secrets_corpus.secrets() if i.is_secret]
    return [i for i in items if not any(p in redact(i.text) for p in i.pieces)]


def leaked(text: str, items) -> list[str]:
    return [f"{i.kind}: {p}" for i in items for p in i.pieces if len(p) >= 8 and p in text]


def test_no_door_shows_a_secret_planted_in_the_whole_record(tmp_path, home):
    items = known_secrets()
    assert len(items) >= 300
    (tmp_path / "leak.txt").write_text("\n".join(i.text for i in items) + "\n")
    named, flagged = items[0].pieces[0], items[1].pieces[0]
    run_cli(
        "--agent", "demo", "--summary-backend", "heuristic", "--inject", "off", "--name", f"release {named}",
        "--", "sh", "-c", SCRIPT, "sh", "--api-key", flagged,
        cwd=tmp_path, check=True, timeout=120,
    )  # fmt: skip
    sid = latest()["id"]
    recorder_done(sid)  # the session's last context round is made
    log = (home / "sessions" / sid / "session.log").read_text()
    assert len(leaked(log, items)) >= len(items) // 2  # the raw record holds them (a wrapped token is cut by the screen)
    # the database, whole: what Datasette serves (tables, SQL, search) and every command reads
    with sqlite3.connect(home / "supervise.db") as db:
        dump = "\n".join(db.iterdump())
        kinds = [k for (k,) in db.execute("select kind from events where session_id = ?", [sid])]
        rounds = db.execute("select count(*) from contexts where session_id = ?", [sid]).fetchone()[0]
    assert kinds.count("compaction_started") == 1 and kinds.count("compaction_finished") == 1 and rounds >= 1
    assert "[REDACTED:" in dump
    assert leaked(dump, items) == []
    # the CLI
    shown = {
        "sessions": run_cli("sessions", "--json", cwd=tmp_path, check=True).stdout,
        "show": run_cli("show", sid, cwd=tmp_path, check=True).stdout,
        "show --json": run_cli("show", sid, "--json", cwd=tmp_path, check=True).stdout,
        "context": run_cli("context", sid, cwd=tmp_path, check=True).stdout,
        "export --redact": run_cli("export", sid, "--redact", "--format", "text", cwd=tmp_path, check=True).stdout,
    }
    for word in ("export", "token", "password", "key", "secret", "Authorization"):
        shown[f"search {word}"] = run_cli("search", word, "--limit", "50", cwd=tmp_path).stdout
    for door, text in shown.items():
        assert leaked(text, items) == [], door
    assert sum("[REDACTED:" in text for text in shown.values()) >= 5
    # the MCP server: its search for each secret finds nothing; what it shows holds none
    server = Mcp(tmp_path)
    try:
        answers = []
        for item in items:
            answer = server.call("search", query=item.pieces[0])
            assert "Nothing found for" in answer, (item.kind, answer[:300])
        for word in ("token", "password", "key"):
            answers.append(server.call("search", query=word, limit=20))
        answers.append(server.call("session", id=sid))
        hit = json.dumps(answers)
        assert leaked(hit, items) == []
    finally:
        server.close()
