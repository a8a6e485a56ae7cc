import json
import subprocess

import pytest

from conftest import require, which_or_skip
from supervisor.recording import asciicast


def test_written_recording_replays_with_the_real_asciinema(tmp_path):
    asciinema = which_or_skip("asciinema")
    path = tmp_path / "x.cast"
    w = asciicast.Writer(open(path, "wb"), asciicast.Header(80, 24, 1700000000, command="demo", env={"TERM": "xterm"}))
    w.write(0.1, "o", "hello ✻ \x1b[31mred\x1b[0m\r\n")
    w.write(0.2, "r", "100x30")
    w.write(0.3, "m", "compaction_started")
    w.write(0.4, "o", "bye\r\n")
    w.close()
    out = subprocess.run([asciinema, "cat", str(path)], capture_output=True, text=True, check=True).stdout
    assert "hello ✻ \x1b[31mred\x1b[0m" in out and "bye" in out
    header = json.loads(path.read_text().splitlines()[0])
    assert header == {"version": 2, "width": 80, "height": 24, "timestamp": 1700000000, "command": "demo", "env": {"TERM": "xterm"}}


def test_reader_skips_a_torn_last_line(tmp_path):
    path = tmp_path / "x.cast"
    path.write_text('{"version": 2, "width": 80, "height": 24, "timestamp": 1}\n[0.1, "o", "ok"]\n[0.2, "o", "tor')
    header, events = asciicast.read(path)
    assert header["width"] == 80
    assert list(events) == [(0.1, "o", "ok")]


@pytest.fixture(params=["c", "python"])
def escapes(request, monkeypatch):
    """The escapes as built (C), and as a package built without a C compiler has them."""
    if request.param == "c":
        require(asciicast.ESCAPES_IN_C, "supervisor.recording._escape was not built")
    else:
        monkeypatch.setattr(asciicast, "_escaped", asciicast.escaped_in_python)
    return request.param


def test_an_event_is_written_as_json_writes_it_whatever_it_holds(escapes):
    """The recording's lines are escaped by hand for speed: byte for byte what json.dumps
    writes, for every control character, quote, backslash, non-ASCII text and time."""
    import random

    rnd = random.Random(7)
    alphabet = [chr(i) for i in range(0x80)] + ["é", "€", "\u2028", "😀", "\x9b", "\ud800"]
    for _ in range(5000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60)))
        t = rnd.choice([0.0, 1e-05, 0.000123456789, 3.5, rnd.random() * 1e5])
        expected = (json.dumps([round(t, 6), "o", text], ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        assert asciicast.event_bytes(t, "o", text) == expected


def test_the_escapes_in_c_and_in_python_agree_on_any_bytes():
    """Output that is not valid UTF-8 goes into the recording as bytes too: whatever they
    are, both ways write the same."""
    import random

    require(asciicast.ESCAPES_IN_C, "supervisor.recording._escape was not built")
    rnd = random.Random(11)
    cases = [b"", b"plain", bytes(range(256)) * 2, b'\\"\r\n' * 1000]
    cases += [rnd.randbytes(rnd.randint(0, 400)) for _ in range(5000)]
    for data in cases:
        assert asciicast._escaped(data) == asciicast.escaped_in_python(data), data
