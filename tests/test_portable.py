"""What supervise keeps stays whole when things move: the data folder moved or copied whole
(its database names each session's files relative to itself), and a project renamed, moved
or checked out again as a worktree (it is known by its root commit, not its folder). Real
sessions, real git repositories, folders moved with `mv`, the real CLI and MCP server."""

import json
import sqlite3
import subprocess

import pytest

from conftest import run_cli
from helpers import latest, session
from supervisor.store import migrations
from supervisor.store.database import Store
from test_memory import context_row, git, mcp, record, repo  # noqa: F401 (mcp: a fixture)


def mv(source, target):
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mv", str(source), str(target)], check=True)
    return target


def raw(db, sid):
    """A session's row as the database keeps it."""
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        return dict(conn.execute("select * from sessions where id = ?", [sid]).fetchone())


def checks(out: str) -> dict:
    return {c["name"]: c for c in json.loads(out)}


def commit(folder, message):
    git(folder, "-c", "user.name=T", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", message)
    return subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


# -- the data folder moves --------------------------------------------------------------------------


def test_a_data_folder_moved_whole_keeps_every_session_readable(tmp_path, home, monkeypatch, mcp):  # noqa: F811
    work = tmp_path / "work"
    work.mkdir()
    sid = record(work, "the kestrel migration ran", "then the second line")
    moved = mv(home, tmp_path / "elsewhere" / "data")
    monkeypatch.setenv("SUPERVISE_HOME", str(moved))
    text = run_cli("export", sid)
    assert text.returncode == 0 and text.stderr == "", text.stderr
    assert "the kestrel migration ran\nthen the second line" in text.stdout
    cast = run_cli("export", sid, "--format", "cast", check=True).stdout
    assert json.loads(cast.splitlines()[0])["version"] == 2 and "kestrel" in cast
    shown = run_cli("show", sid, check=True).stdout
    assert f"cast_path:        {moved}/sessions/{sid}/session.cast" in shown.splitlines()
    assert json.loads(run_cli("show", sid, "--json", check=True).stdout)["log_path"] == f"{moved}/sessions/{sid}/session.log"

    found = json.loads(run_cli("search", "kestrel", "--json", cwd=work, check=True).stdout)
    assert [h["session_id"] for h in found] == [sid]
    again = run_cli("search", "kestrel", "--reindex", "--json", cwd=work)
    assert again.returncode == 0 and "from 1 sessions' text logs" in again.stderr
    server = mcp(work)
    around = server.call("excerpt", id=found[0]["id"], lines=3)
    assert "then the second line" in around and "no text log" not in around
    assert server.close() == 0

    doctor = checks(run_cli("doctor", "--json").stdout)["database"]
    assert (doctor["status"], doctor["detail"]) == ("ok", f"{moved / 'supervise.db'} (1 session, integrity ok)")

    resumed = run_cli("resume", sid, cwd=work)
    assert resumed.returncode == 0, resumed.stderr
    child = latest()
    assert child["parent_id"] == sid and child["id"] != sid
    assert raw(moved / "supervise.db", child["id"])["cast_path"] == f"sessions/{child['id']}/session.cast"
    assert (moved / "sessions" / child["id"] / "session.cast").is_file() and not home.exists()
    kept = raw(moved / "supervise.db", sid)
    assert (kept["cast_path"], kept["log_path"]) == (f"sessions/{sid}/session.cast", f"sessions/{sid}/session.log")


def test_doctor_says_which_recording_is_really_missing(tmp_path, home):
    work = tmp_path / "work"
    work.mkdir()
    kept, lost = record(work, "kept"), record(work, "lost")
    (home / "sessions" / lost / "session.cast").unlink()
    found = checks(run_cli("doctor", "--json").stdout)["database"]
    assert found["status"] == "warn"
    assert found["detail"] == (
        f"{home / 'supervise.db'} (2 sessions, integrity ok); the recording of 1 session is missing "
        f"({lost}'s {home}/sessions/{lost}/session.cast)"
    )
    assert "SUPERVISE_HOME" in found["fix"] and kept not in found["detail"]


def old_database(db, rows):
    """A database as a supervise before m011 made it (migrations up to m010), with `rows`."""
    import sqlite_utils

    older = sqlite_utils.Migrations(migrations.SET)
    for step in migrations.STEPS:
        if step.__name__[:4] <= "m010":
            older()(step)
    made = sqlite_utils.Database(db)
    older.apply(made)
    for row in rows:
        made["sessions"].insert(row)
    made.close()


def test_a_database_with_whole_paths_is_made_relative_even_after_the_folder_moved(tmp_path, home, monkeypatch):
    work = repo(tmp_path / "work")
    root = commit(work, "first")
    sid = record(work, "an old kestrel line", "and the one after it")
    elsewhere = tmp_path / "outside" / "sessions" / "out234"
    elsewhere.mkdir(parents=True)
    (elsewhere / "session.cast").write_bytes((home / "sessions" / sid / "session.cast").read_bytes())
    db = home / "supervise.db"
    row = {k: v for k, v in raw(db, sid).items() if k in ("id", "command", "argv", "cwd", "started", "ended", "status", "exit_code")}
    for name in ("supervise.db", "supervise.db-wal", "supervise.db-shm"):
        (home / name).unlink(missing_ok=True)
    files = {"cast_path": f"{home}/sessions/{sid}/session.cast", "log_path": f"{home}/sessions/{sid}/session.log"}
    gone = {**row, "id": "gone22", "cwd": "/no/longer/here", "cast_path": f"{home}/sessions/gone22/session.cast"}
    out = {**row, "id": "out234", "cast_path": str(elsewhere / "session.cast"), "log_path": None}
    old_database(db, [{**row, **files, "project": str(work)}, {**gone, "project": "/no/longer/here"}, out])

    moved = mv(home, tmp_path / "moved-data")
    monkeypatch.setenv("SUPERVISE_HOME", str(moved))
    assert "an old kestrel line" in run_cli("export", sid, check=True).stdout
    now = raw(moved / "supervise.db", sid)
    assert (now["cast_path"], now["log_path"]) == (f"sessions/{sid}/session.cast", f"sessions/{sid}/session.log")
    assert now["project_key"] == f"git:{root}"
    assert raw(moved / "supervise.db", "out234")["cast_path"] == str(elsewhere / "session.cast")  # outside: as it was
    assert raw(moved / "supervise.db", "gone22")["cast_path"] == gone["cast_path"]  # nowhere to be found: as it was
    assert raw(moved / "supervise.db", "gone22")["project_key"] == "/no/longer/here"
    with sqlite3.connect(moved / "supervise.db") as conn:
        names = [n for (n,) in conn.execute("select name from _sqlite_migrations order by id")]
    assert names[10:12] == ["m011_paths_relative_to_the_database", "m012_project_keys"]
    doctor = checks(run_cli("doctor", "--json").stdout)["database"]
    assert doctor["status"] == "warn" and "the recording of 1 session is missing (gone22's" in doctor["detail"]


# -- a project moves --------------------------------------------------------------------------------


def test_a_repository_moved_and_renamed_keeps_its_sessions_for_sessions_search_and_the_brief(tmp_path, home, mcp):  # noqa: F811
    app = repo(tmp_path / "x" / "app")
    root = commit(app, "first")
    before = record(app, "kestrel before the move")
    store = Store(home / "supervise.db")
    context_row(store, before, original_request="port the importer to kestrel", key_decisions=["kestrel, not redis"])
    store.close()

    app2 = mv(app, tmp_path / "y" / "app2")
    after = record(app2, "kestrel after the move")
    listed = json.loads(run_cli("sessions", "--project", "--json", cwd=app2, check=True).stdout)
    assert [s["id"] for s in listed] == [after, before]
    by_old_path = json.loads(run_cli("sessions", "--project", str(app), "--json", check=True).stdout)
    assert [s["id"] for s in by_old_path] == [after, before]
    found = json.loads(run_cli("search", "kestrel", "--json", cwd=app2, check=True).stdout)
    assert {h["session_id"] for h in found} == {before, after}
    lines = run_cli("search", "kestrel", cwd=app2, check=True).stdout.splitlines()
    assert len(lines) == 2 and all(line.split()[2] == "app2" for line in lines)  # named by where it is now
    server = mcp(app2)
    brief = server.call("brief")
    assert "port the importer to kestrel" in brief and f"Session {before}" in brief
    server.close()
    assert (session(after)["project"], session(after)["project_key"], session(before)["project_key"]) == (
        str(app2),
        f"git:{root}",
        f"git:{root}",
    )


def test_worktrees_of_one_repository_are_one_project_each_shown_by_its_own_folder(tmp_path, home):
    shop = repo(tmp_path / "shop")
    early = record(shop, "kestrel before the first commit")  # no root commit yet: known by its folder
    early_key = session(early).get("project_key")
    root = commit(shop, "first")
    one = record(shop, "kestrel in the main tree")
    git(shop, "worktree", "add", "-q", "-b", "fix", str(tmp_path / "shop-fix"))
    two = record(tmp_path / "shop-fix", "kestrel in the worktree")
    assert (session(two)["project"], session(two)["branch"]) == (str(tmp_path / "shop-fix"), "fix")
    for where in (shop, tmp_path / "shop-fix"):
        listed = json.loads(run_cli("sessions", "--project", "--json", cwd=where, check=True).stdout)
        assert [s["id"] for s in listed] == [two, one, early]
    assert early_key == str(shop)
    assert {session(s)["project_key"] for s in (early, one, two)} == {f"git:{root}"}  # the early one carried over


def test_two_projects_in_folders_of_one_name_are_told_apart(tmp_path, home):
    a, b = repo(tmp_path / "work" / "app"), repo(tmp_path / "old" / "app")
    commit(a, "the work app")
    commit(b, "the old app")
    in_a, in_b = record(a, "kestrel in work"), record(b, "kestrel in old")
    assert [s["id"] for s in json.loads(run_cli("sessions", "--project", "--json", cwd=a, check=True).stdout)] == [in_a]
    lines = run_cli("search", "kestrel", "--all", cwd=a, check=True).stdout.splitlines()
    named = {line.split()[0]: line.split()[2] for line in lines}
    assert named == {in_a: "work/app", in_b: "old/app"}
    alone = run_cli("search", "kestrel", cwd=a, check=True).stdout.splitlines()
    assert len(alone) == 1 and alone[0].split()[2] == "app"


@pytest.mark.parametrize(
    "url, key",
    [
        ("https://someone:ghp_secret123@github.com/Acme/App.git", "remote:github.com/Acme/App"),
        ("git@github.com:Acme/App.git", "remote:github.com/Acme/App"),
    ],
)
def test_a_repository_with_no_commit_yet_is_known_by_its_origin_without_its_credentials(tmp_path, home, url, key):
    app = repo(tmp_path / "app")
    git(app, "remote", "add", "origin", url)
    sid = record(app, "hello")
    assert session(sid)["project_key"] == key
    assert "secret" not in json.dumps(raw(home / "supervise.db", sid))
