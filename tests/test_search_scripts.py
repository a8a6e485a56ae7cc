"""Search in every script: text written without spaces between words (Chinese, Japanese,
Thai; Korean's particles) is found by any stretch of it, in the logs and the contexts, in
a database made before the second index existed too, and after a reindex."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import run_cli
from supervisor.store import migrations
from supervisor.store.database import Store
from test_memory import context_row, record, repo, search

CHINESE = "部署失败了：权限不足"  # the deployment failed: no permission
JAPANESE = "デプロイに失敗しました"
KOREAN = "배포를 시작합니다"  # the particle 를 joins the word
THAI = "สวัสดีครับทุกคน"  # no spaces; its vowels are combining marks
MIXED = "the kestrel build: 部署 failed at step 3"
LINES = (CHINESE, JAPANESE, KOREAN, THAI, MIXED, "plain english line")


def found(folder, *words) -> tuple[int, list[dict]]:
    out = search(folder, *words, "--json")
    return out.returncode, json.loads(out.stdout or "[]")


def shown(hits) -> set[tuple[str, tuple[str, ...]]]:
    """Each hit's line and what is marked in it."""
    return {(h["line"], tuple(h["line"][a:b] for a, b in h["marks"])) for h in hits}


@pytest.mark.parametrize(
    "words, expected",
    [
        (["部署"], {(CHINESE, ("部署",)), (MIXED, ("部署",))}),
        (["失败"], {(CHINESE, ("失败",))}),
        (["了"], {(CHINESE, ("了",))}),  # one character, a run's last
        (["失"], {(CHINESE, ("失",)), (JAPANESE, ("失",))}),  # one character inside a run (失败, 失敗)
        (["デプロイ"], {(JAPANESE, ("デプロイ",))}),
        (["배포"], {(KOREAN, ("배포",))}),
        (["สวัสดี"], {(THAI, ("สวัสดี",))}),
        (["ทุกคน"], {(THAI, ("ทุกคน",))}),
        (["部署", "kestrel"], {(MIXED, ("kestrel", "部署")), (CHINESE, ("部署",))}),  # every word, in either script
        (['"部署 failed"'], {(MIXED, ("部署 failed",))}),  # a phrase across both
    ],
)
def test_a_stretch_of_text_written_without_spaces_is_found_marked_and_placed(tmp_path, home, words, expected):
    a = repo(tmp_path / "a")
    sid = record(a, *LINES)
    code, hits = found(a, *words)
    assert code == 0 and shown(hits) == expected and {h["session_id"] for h in hits} == {sid}
    log = (home / "sessions" / sid / "session.log").read_bytes()
    for h in hits:  # the offset is the first match's, in the text log's bytes
        first = h["line"][h["marks"][0][0] : h["marks"][0][1]]
        assert log[h["offset"] :].decode().startswith(first), h


def test_only_a_stretch_that_is_there_is_found(tmp_path):
    a = repo(tmp_path / "a")
    record(a, *LINES)
    for absent in ("署败", "部署了", "배포합니다", "ครับคน", '"部署 english"'):
        out = search(a, *absent.split())
        assert out.returncode == 1 and out.stdout == "" and out.stderr.count("\n") == 1, absent


def test_a_context_in_any_script_is_found(tmp_path, home):
    a = repo(tmp_path / "a")
    sid = record(a, "nothing to see")
    store = Store(home / "supervise.db")
    try:
        context_row(
            store, sid, "[supervise] round 1\nThe user asked: 把部署脚本改成先检查权限", original_request="把部署脚本改成先检查权限"
        )
    finally:
        store.close()
    code, hits = found(a, "部署脚本")
    assert code == 0 and [(h["source"], h["session_id"], h["round"]) for h in hits] == [("context", sid, 1)]
    assert shown(hits) == {(hits[0]["line"], ("部署脚本",))}


def test_a_database_made_before_and_a_remade_index_find_it_too(tmp_path, home):
    a = repo(tmp_path / "a")
    sid = record(a, *LINES)
    db = home / "supervise.db"
    with sqlite3.connect(db) as conn:  # as a supervise before the second index left it
        for name in ("log_chunks_grams", "contexts_grams"):
            conn.execute(f"drop table {name}")
        conn.execute("delete from _sqlite_migrations where name = 'm015_every_script_searched'")
    assert "m015_every_script_searched" in [step.__name__ for step in migrations.STEPS]
    code, hits = found(a, "权限")
    assert code == 0 and [h["session_id"] for h in hits] == [sid] and shown(hits) == {(CHINESE, ("权限",))}
    remade = run_cli("search", "权限", "--reindex", "--json", cwd=a)
    assert remade.returncode == 0 and [h["session_id"] for h in json.loads(remade.stdout)] == [sid]
    with sqlite3.connect(db) as conn:  # one row each, not two: the chunks went in again once
        assert (
            conn.execute("select count(*) from log_chunks_grams").fetchone()[0]
            == conn.execute("select count(*) from log_chunks").fetchone()[0]
        )
