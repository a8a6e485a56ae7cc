#!/usr/bin/env python3
"""A small scripted agent CLI for tests of the generic (non-Claude) path.

Behaves as agent CLIs do where it matters to supervise: a line editor in raw mode with
echo, an optional bracketed-paste mode, a busy line ("esc to interrupt") that is erased
when a turn ends, an idle line ("toy: ready"), /compact with a spinner, and a y/n
permission dialog (`ask`). Everything it receives is appended to --log as JSON lines, as
the fake API records what it was sent.

    toyagent.py --log FILE [--paste] [--drop-enters N] [--think SECONDS]
"""

import argparse
import json
import os
import sys
import termios
import time
import tty

PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--paste", action="store_true", help="enable bracketed paste")
    ap.add_argument("--drop-enters", type=int, default=0, help="ignore this many Enters after a paste")
    ap.add_argument("--think", type=float, default=0.3, help="seconds each turn is busy")
    ap.add_argument("--resume", default=None)
    args, _ = ap.parse_known_args()
    out = sys.stdout

    def write(text: str) -> None:
        out.write(text.replace("\n", "\r\n"))
        out.flush()

    def log(**record) -> None:
        with open(args.log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    fd = sys.stdin.fileno()

    def read() -> bytes:
        """One read of the terminal, logged byte for byte (`raw`, latin-1)."""
        data = os.read(fd, 65536)
        log(raw=data.decode("latin-1"))
        return data

    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    try:
        if args.paste:
            write(PASTE_ON)
        log(start=True, argv=sys.argv[1:])
        write("toy agent 1.0" + (f" (resumed {args.resume})" if args.resume else "") + "\n")
        drops = args.drop_enters
        line = bytearray()
        pasted = False
        while True:
            write("toy: ready (type a message, /compact, ask, /exit)\n> ")
            line.clear()
            pasted = False
            while True:
                data = read()
                if not data:
                    return 0
                i = 0
                while i < len(data):
                    if data.startswith(PASTE_START, i):
                        end = data.find(PASTE_END, i)
                        while end == -1:  # the paste goes on in the next read
                            data += read()
                            end = data.find(PASTE_END, i)
                        body = data[i + len(PASTE_START) : end]
                        line += body
                        pasted = True
                        write(f"[pasted {len(body)} bytes]")
                        i = end + len(PASTE_END)
                        continue
                    byte = data[i : i + 1]
                    i += 1
                    if byte == b"\r":
                        if pasted and drops:
                            drops -= 1
                            continue
                        break
                    if byte == b"\x04":
                        return 0
                    if byte in (b"\x7f", b"\x08"):
                        if line:
                            del line[-1]
                            write("\b \b")
                        continue
                    line += byte
                    write(byte.decode("utf-8", "replace"))
                else:
                    continue
                break
            text = line.decode("utf-8", "replace")
            write("\n")
            log(message=text, paste=pasted)
            if text.strip() == "/exit":
                return 0
            if text.strip() == "/compact":
                write("* Compacting conversation... (esc to interrupt)")
                time.sleep(1.0)
                write("\r\x1b[2K* Conversation compacted\n")
                continue
            if text.strip() == "ask":
                write("Run `rm -rf build`?\nDo you want to proceed? (y/n) ")
                while True:
                    key = read()
                    log(dialog=key.decode("utf-8", "replace"))
                    if key[:1] in (b"y", b"n"):
                        write(key[:1].decode() + "\n")
                        break
                continue
            write("working... (esc to interrupt)")
            time.sleep(args.think)
            first = text.strip().splitlines()[0] if text.strip() else ""
            write(f"\r\x1b[2Kreply to: {first[:60]}\n")
    finally:
        if args.paste:
            write(PASTE_OFF)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    sys.exit(main())
