"""Aider's own record of a session, read: the chat history file it appends every chat of a
repository to (a real one, recorded by scripts/agents/aider.py's chained scenario), followed
from the chat that starts after the run began."""

import re
import shutil

from fixtureset import FIXTURES
from helpers import wait_for
from supervisor.detection import transcript
from supervisor.profiles.aider import transcript as history

RECORD = FIXTURES / "aider" / "0.86.2" / "record" / "chained"
CHAINED = [
    "turn 1: write src/totals.py that adds up the amount column of data.csv",
    "turn 2: rename the total column in src/totals.py",
    "turn 3: add a --csv flag beside --json in src/export_csv.py",
    "turn 4: make the tests in tests/test_csv.py cover empty reports",
]


def records(since=0, stream=None):
    return history.SOURCE.read(history.locate(RECORD, "any"), since, stream)[0]


def test_its_history_gives_the_users_words_and_its_replies():
    rs = records()
    [chat] = [history.session_id(r) for r in rs if history.session_id(r)]
    said = history.user_messages(rs)
    assert [s for s in said if s in CHAINED] == CHAINED, said  # what supervise typed is there too, told apart by the digest
    lines = history.as_lines(rs)
    assert f"> {CHAINED[0]}" in lines
    assert any(line.startswith("● ") for line in lines)  # its replies
    assert history.timestamp(rs[0]) is not None and history.compaction(rs[0]) is None
    assert records(0, chat) == rs  # the chat asked for, read from the start of the file


def test_several_chats_in_one_file_are_told_apart(tmp_path):
    """One file a repository: an earlier chat's words are not this run's."""
    path = tmp_path / history.FILE
    text = history.locate(RECORD, "x").read_text(encoding="utf-8")
    earlier = re.sub(r"started at [\d-]+ [\d:]+", "started at 2026-11-01 09:00:00", text).replace(CHAINED[0], "from an earlier chat")
    path.write_text(earlier + text, encoding="utf-8")
    chats = [history.session_id(r) for r in history.SOURCE.read(path)[0] if history.session_id(r)]
    assert len(chats) == 2
    later = history.SOURCE.read(path, 0, chats[-1])[0]
    assert "from an earlier chat" not in history.user_messages(later)
    assert history.user_messages(later)[0] == CHAINED[0]


def test_the_repositorys_root_holds_it_and_the_follower_reads_only_the_new_chat(tmp_path):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert history.folder({}, str(repo / "src")) == repo
    assert history.folder({}, str(tmp_path)) == tmp_path  # outside a repository: where it runs
    path = repo / history.FILE
    old = "\n# aider chat started at 2026-11-01 09:00:00\n\n#### an old request  \n\nan old reply\n\n"
    path.write_text(old, encoding="utf-8")
    got = []
    follower = transcript.TranscriptFollower(
        repo,
        lambda record, p: got.append(record),
        source=history.SOURCE,
        claims=lambda record, p: history.claims(record, p, str(repo), None),
    )
    follower.start()
    try:
        with open(path, "a", encoding="utf-8") as fh:
            shutil.copyfileobj(open(history.locate(RECORD, "x"), encoding="utf-8"), fh)
        wait_for(lambda: CHAINED[0] in history.user_messages(got))
    finally:
        follower.stop()
    assert "an old request" not in history.user_messages(got)
    assert history.user_messages(got) == history.user_messages(records())
