"""Bad input to `export`, `sessions` and `ps`: each a clear line and the right exit, and
nothing recorded lost or changed.

| input                                                   | what the user gets                                        |
| ------------------------------------------------------- | --------------------------------------------------------- |
| `export -o` onto the database, its WAL, a session's      | refused in one line, exit 1; every file of the data       |
| recording, log or folder, a symlink or hard link to one  | directory byte-identical, every session still listed      |
| `export -o` onto an existing file                        | refused without --force; with it replaced, its mode kept  |
| `export -o -`                                            | standard output, no file named `-`                        |
| an export that fails mid-way (the file size limit)       | the old file as it was, no half file                      |
| damaged lines in a recording (wrong types, cut short)    | skipped, one line saying how many; the rest exported      |
| a recording whose header is damaged, with the log gone   | one line naming the file, exit 1                          |
| a recording removed outside supervise / a session that   | one line each saying which, exit 1                        |
| failed before starting                                   |                                                           |
| a 10,000-character --name                                | each row of `sessions` one line; --json has it whole      |
| `ps` with an agent that has no pattern set               | `running`, not `starting` (which an agent with patterns   |
|                                                          | shows until its screen tells)                             |
"""

import json
import os
import resource
import shutil
import stat
import subprocess
from pathlib import Path

import pexpect
import pytest

from conftest import SUPERVISE, run_cli
from helpers import latest, spawn, wait_for


def _recorder_running(sid: str) -> bool:
    """Is the recorder of session `sid` still at work (it may write the database after the
    supervisor has returned)?"""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                line = fh.read()
        except OSError:
            continue
        if b"supervisor.run.recorder" in line and sid.encode() in line:
            return True
    return False


def _session(*command: str) -> dict:
    """A real session of `command` (default `echo hi`), its recorder done."""
    run_cli("--", *(command or ("sh", "-c", "echo hi")), check=True)
    s = latest()
    wait_for(lambda: not _recorder_running(s["id"]))
    return s


def _tree(home: Path) -> dict[str, bytes]:
    """Every file of the data directory and what it holds."""
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def _listed() -> set[str]:
    return {s["id"] for s in json.loads(run_cli("sessions", "--json", check=True).stdout)}


def _real(path: Path) -> str:
    return os.path.realpath(path)


@pytest.mark.parametrize(
    "where",
    ["db", "db-path", "wal", "cast", "log", "recorder.err", "new-in-session", "new-in-sessions", "symlink-to-db", "hard-link-to-cast"],
)
@pytest.mark.parametrize("force", [False, True])
def test_export_never_writes_over_supervise_own_files(where, force, home, tmp_path):
    s = _session()
    other = _session("sh", "-c", "echo other")
    sid, h = s["id"], _real(home)
    folder = f"{h}/sessions/{sid}"
    db = f"{h}/supervise.db"
    outside = f"(hint: give -o a file outside {h})"
    cases = {
        "db": (db, f"supervise: refusing to write over supervise's own database {db} {outside}"),
        "db-path": (
            run_cli("db-path", check=True).stdout.strip(),
            f"supervise: refusing to write over supervise's own database {db} {outside}",
        ),
        "wal": (f"{db}-wal", f"supervise: refusing to write over supervise's own database {db}-wal {outside}"),
        "cast": (s["cast_path"], f"supervise: refusing to write over session {sid}'s recording {folder}/session.cast {outside}"),
        "log": (s["log_path"], f"supervise: refusing to write over session {sid}'s text log {folder}/session.log {outside}"),
        "recorder.err": (
            f"{folder}/recorder.err",
            f"supervise: refusing to write over session {sid}'s file {folder}/recorder.err {outside}",
        ),
        "new-in-session": (f"{folder}/mine.txt", f"supervise: refusing to write into supervise's sessions folder {h}/sessions {outside}"),
        "new-in-sessions": (
            f"{h}/sessions/mine.txt",
            f"supervise: refusing to write into supervise's sessions folder {h}/sessions {outside}",
        ),
    }
    if where == "symlink-to-db":
        link = tmp_path / "innocent.json"
        link.symlink_to(db)
        cases[where] = (str(link), f"supervise: refusing to write over supervise's own database {db} {outside}")
    if where == "hard-link-to-cast":
        link = tmp_path / "innocent.cast"
        os.link(s["cast_path"], link)
        cases[where] = (
            str(link),
            f"supervise: refusing to write over session {sid}'s recording {folder}/session.cast (linked as {_real(link)}) {outside}",
        )
    target, line = cases[where]
    before = _tree(home)
    done = run_cli("export", sid, "-f", "json", "-o", target, *(["--force"] if force else []))
    assert (done.returncode, done.stderr, done.stdout) == (1, line + "\n", "")
    assert _tree(home) == before  # nothing touched: not the database, not a recording
    assert _listed() == {sid, other["id"]}
    assert "hi" in run_cli("export", sid, check=True).stdout


def test_an_existing_file_is_replaced_only_with_force_and_keeps_its_mode(tmp_path):
    s = _session()
    out = tmp_path / "notes.txt"
    out.write_text("my own notes\n")
    os.chmod(out, 0o640)
    done = run_cli("export", s["id"], "-o", str(out))
    assert (done.returncode, done.stderr) == (1, f"supervise: {out} exists (hint: add --force to replace it)\n")
    assert out.read_text() == "my own notes\n" and stat.S_IMODE(out.stat().st_mode) == 0o640
    run_cli("export", s["id"], "-o", str(out), "--force", check=True)
    assert out.read_text() == "hi\n" and stat.S_IMODE(out.stat().st_mode) == 0o640
    fresh = tmp_path / "fresh.txt"
    run_cli("export", s["id"], "-o", str(fresh), check=True)
    assert fresh.read_text() == "hi\n" and stat.S_IMODE(fresh.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "home") == ["fresh.txt", "notes.txt"]  # no temporary file left


def test_a_dash_is_standard_output(tmp_path):
    s = _session()
    done = run_cli("export", s["id"], "-o", "-", cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "hi\n", "")
    assert not (tmp_path / "-").exists()


def test_output_into_a_folder_or_nowhere_is_one_line(tmp_path):
    s = _session()
    done = run_cli("export", s["id"], "-o", str(tmp_path))
    assert (done.returncode, done.stderr) == (1, f"supervise: {tmp_path} is a folder (hint: give -o a file name)\n")
    done = run_cli("export", s["id"], "-o", str(tmp_path / "no" / "x.txt"))
    assert (done.returncode, done.stderr) == (
        1,
        f"supervise: cannot write {tmp_path}/no/x.txt: there is no folder {tmp_path}/no "
        "(hint: create it first, or give -o a file in a folder that exists)\n",
    )


def _small_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


@pytest.mark.parametrize("existing", [True, False])
def test_an_export_that_fails_mid_way_leaves_no_half_file_and_the_old_one_as_it_was(existing, tmp_path):
    s = _session("sh", "-c", "head -c 400000 /dev/zero | tr '\\0' x; echo")
    out = tmp_path / "big.txt"
    if existing:
        out.write_text("the old export\n")
        os.chmod(out, 0o644)
    # a file size limit: writing past 64 KB fails with EFBIG, as a full disk would with ENOSPC
    done = subprocess.run(
        [*SUPERVISE, "export", s["id"], "-o", str(out), "--force"], capture_output=True, text=True, preexec_fn=_small_files, timeout=60
    )
    kept = f"{out} is as it was" if existing else "nothing was written"
    assert (done.returncode, done.stderr) == (1, f"supervise: cannot write {out}: File too large (hint: {kept})\n")
    if existing:
        assert out.read_text() == "the old export\n" and stat.S_IMODE(out.stat().st_mode) == 0o644
    else:
        assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name != "home"] == (["big.txt"] if existing else [])


DAMAGED = ['[1.0, 5, "x"]', '["a", "o", "x"]', "{}", '{"a": 1, "b": 2, "c": 3}', '[1e999, "o", "x"]', '[0.2, "o"]', "[" * 100_000]


def _damage(s: dict) -> None:
    """Wrong-typed and broken event lines among the good ones, and a last line cut short."""
    cast = Path(s["cast_path"])
    header, *events = cast.read_text().splitlines(keepends=True)
    cast.write_text(header + "".join(line + "\n" for line in DAMAGED) + "".join(events) + '[9.0, "o", "cut sh')


def test_damaged_lines_of_a_recording_are_skipped_and_counted(home):
    s = _session()
    _damage(s)
    Path(s["log_path"]).unlink()
    before = _tree(home)
    cast, log = s["cast_path"], s["log_path"]
    skipped = f"supervise: skipped {len(DAMAGED) + 1} damaged lines of {cast} (the rest was read)\n"
    done = run_cli("export", s["id"])
    assert (done.returncode, done.stdout) == (0, "hi\n")
    assert done.stderr == f"supervise: the text log {log} is gone: rendered again from {cast}\n" + skipped
    done = run_cli("export", s["id"], "-f", "cast")
    assert (done.returncode, done.stderr) == (0, skipped)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["version"] == 2 and lines[1:] == [[lines[1][0], "o", "hi\r\n"]]
    done = run_cli("export", s["id"], "-f", "json")
    assert done.returncode == 0 and json.loads(done.stdout)["text"] == "hi"
    assert Path(cast).read_bytes() == before[f"sessions/{s['id']}/session.cast"]  # read, never rewritten


def test_a_recording_torn_in_its_header_with_the_log_gone_is_one_line(home):
    s = _session()
    cast = Path(s["cast_path"])
    cast.write_bytes(cast.read_bytes()[:40])
    Path(s["log_path"]).unlink()
    for fmt in ("text", "cast"):
        done = run_cli("export", s["id"], "-f", fmt)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (
            f"supervise: the recording {cast} is damaged: its first line is not an asciicast v2 header "
            f"(hint: its events are still in the database: `supervise show {s['id']}`)\n"
        ), fmt
    assert s["id"] in _listed()


def test_a_recording_removed_outside_supervise_is_said_so(home):
    s = _session()
    sid, cast, log = s["id"], s["cast_path"], s["log_path"]
    hint = f"(hint: its events are still in the database: `supervise show {sid}`)"
    Path(cast).unlink()
    done = run_cli("export", sid, "-f", "cast")
    assert (done.returncode, done.stderr) == (
        1,
        f"supervise: the recording of session {sid} is gone: {cast} was removed outside supervise {hint}\n",
    )
    Path(log).unlink()
    done = run_cli("export", sid)
    assert (done.returncode, done.stderr) == (
        1,
        f"supervise: the recording of session {sid} is gone: {cast} and {log} were removed outside supervise {hint}\n",
    )
    done = run_cli("export", sid, "-f", "json")
    assert done.returncode == 0 and json.loads(done.stdout)["events"]  # what the database holds is still exported
    assert (
        done.stderr
        == f"supervise: the export has no text: the recording of session {sid} is gone: {cast} and {log} were removed outside supervise\n"
    )
    shutil.rmtree(Path(cast).parent)
    done = run_cli("export", sid)
    assert (done.returncode, done.stderr) == (
        1,
        f"supervise: the recording of session {sid} is gone: its folder {Path(cast).parent} was removed outside supervise {hint}\n",
    )
    assert sid in _listed()


def test_a_session_that_failed_before_starting_says_so():
    failed = run_cli("--", "no-such-program-for-export")
    assert failed.returncode == 127
    sid = latest()["id"]
    for fmt in ("text", "cast"):
        done = run_cli("export", sid, "-f", fmt)
        assert (done.returncode, done.stderr) == (
            1,
            f"supervise: session {sid} has no recording (hint: it failed before starting: `supervise show {sid}` says why)\n",
        )
    done = run_cli("export", sid, "-f", "json")
    assert (done.returncode, done.stderr) == (0, "") and json.loads(done.stdout)["text"] == ""


def test_an_unreadable_text_log_is_one_line():
    s = _session()
    log = Path(s["log_path"])
    log.unlink()
    log.mkdir()
    done = run_cli("export", s["id"])
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"supervise: cannot read the text log {log}: Is a directory (hint: check that it is a file you can read)\n"


def test_a_very_long_name_keeps_each_row_of_sessions_one_line():
    name = "n" * 10_000
    run_cli("--name", name, "--", "sh", "-c", "echo hi", check=True)
    long_command = _session("sh", "-c", "echo " + "x" * 5_000)
    clipped_name = "n" * 39 + "…: sh -c 'echo hi'"  # the name is clipped first, to 40
    for env, room, named in (({}, 200, clipped_name), ({"COLUMNS": "100"}, 100 - 57, clipped_name[: 100 - 57 - 1] + "…")):
        outside = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # into a pipe: no terminal width
        rows = run_cli("sessions", env={**outside, **env}, check=True).stdout.splitlines()
        assert len(rows) == 3 and rows[1].startswith(long_command["id"])
        assert rows[1][57:] == ("sh -c 'echo " + "x" * 5_000)[: room - 1] + "…", env
        assert rows[2][57:] == named, env
    listed = json.loads(run_cli("sessions", "--json", check=True).stdout)
    assert listed[1]["name"] == name and listed[0]["command"] == long_command["command"]  # whole


def _running() -> list[dict]:
    return json.loads(run_cli("ps", "--json", check=True).stdout)


def test_ps_shows_an_agent_without_a_pattern_set_as_running_not_starting():
    plain_sh = spawn(["--", "sh", "-c", "sleep 30"])
    with_patterns = spawn(["--agent", "demo", "--", "sh", "-c", "sleep 30"])
    try:
        states = wait_for(lambda: {r["agent"]: r for r in _running()} if len(_running()) == 2 else None)
        assert states["sh"]["state"] == "running"  # nothing on its screen can tell working from waiting
        assert states["demo"]["state"] == "starting"  # its patterns have not seen the prompt yet
        table = run_cli("ps", check=True).stdout.splitlines()
        assert [row.split()[2] for row in table[1:]] == [("running" if r["agent"] == "sh" else "starting") for r in _running()]
    finally:
        for child in (plain_sh, with_patterns):
            child.sendintr()
            child.expect(pexpect.EOF)
            child.close()
    assert _running() == []
