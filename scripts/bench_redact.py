#!/usr/bin/env python3
"""Secret masking measured: supervise's masks beside two widely used open rule sets, on the
same labelled corpus (tests/secrets_corpus.py: secrets of many kinds in the contexts a
terminal shows them in, and look-alikes that are not secrets), and supervise's speed.

- supervise: supervisor.redact, as every door that shows the record uses it.
- gitleaks' rules (scripts/fixtures/gitleaks.toml, its default config, as data: Debian has no
  gitleaks package), applied as gitleaks applies them: keywords, the regex (with the `regex`
  module, whose syntax takes RE2's), the secret group, the entropy floor, the global and
  per-rule allowlists and stop words. Not its decoding passes (base64, hex, percent-encoded
  text decoded and scanned again).
- detect-secrets, its default plugins and filters, each item scanned as a file of the kind its
  context is (`.env`, `config.yaml`, `session.log`...) through its API (`scan_file`).

A secret counts as masked when every character of it lies in what a tool would mask (for
gitleaks, its findings' secrets; for detect-secrets, each secret value it reports, wherever
it stands, with the whole match of the pattern that found it, and for a private key the
block from its BEGIN line to its END line); a
look-alike counts as a false positive when anything in it would be masked.

Speed: supervise's masks over a realistic log (a generated agent session's output, with
code, configuration and hashes from the corpus's look-alikes in a fifth of its lines), in
MB/s, best of 3. Masking is not on the PTY loop: it runs where text leaves supervise (export
--redact, search hits, contexts and summaries, the MCP server) and in the recorder's indexer
thread, which indexes the text log a pass at a time, every 2 s.

Usage: scripts/bench_redact.py [--mb 4] [--json] [--misses]
(--json: the figures as one JSON object on the last line of stdout; --misses: what each
tool missed and wrongly masked)
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import random
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import sessiongen  # noqa: E402
from secrets_corpus import Item, corpus  # noqa: E402

from supervisor import redact  # noqa: E402

RULES = ROOT / "scripts" / "fixtures" / "gitleaks.toml"
FILES = {
    "env": ".env",
    "yaml": "config.yaml",
    "json": "config.json",
    "ini": "config.ini",
    "toml": "config.toml",
    "properties": "application.properties",
    "xml": "config.xml",
    "php": "config.php",
    "python": "app.py",
    "js": "app.js",
    "ts": "app.ts",
    "go": "main.go",
    "css": "style.css",
    "html": "index.html",
    "shell": "run.sh",
}  # any other context (log, terminal, http): session.log
Spans = list[tuple[int, int]]


def filename(item: Item) -> str:
    return FILES.get(item.where, "session.log")


# --- supervise ------------------------------------------------------------------------------


def supervise_spans(item: Item) -> Spans:
    return [(a, b) for a, b, _ in redact.spans(item.text)]


# --- gitleaks' rules, applied as gitleaks applies them ---------------------------------------


class Gitleaks:
    def __init__(self, path: Path) -> None:
        import regex

        config = tomllib.loads(path.read_text())
        compile_ = lambda p: regex.compile(p.replace(r"\z", r"\Z"), regex.V1)  # noqa: E731
        allow = config.get("allowlist", {})
        self.allow_regexes = [compile_(p) for p in allow.get("regexes", [])]
        self.stopwords = [w.lower() for w in allow.get("stopwords", [])]
        self.rules = []
        for rule in config["rules"]:
            if "regex" not in rule:
                continue  # a rule on file names only
            allowlists = []
            for a in rule.get("allowlists", []):
                allowlists.append(
                    (
                        a.get("regexTarget", "secret"),
                        [compile_(p) for p in a.get("regexes", [])],
                        [w.lower() for w in a.get("stopwords", [])],
                        a.get("condition", "OR"),
                        [compile_(p) for p in a.get("paths", [])],
                    )
                )
            self.rules.append(
                (
                    compile_(rule["regex"]),
                    [k.lower() for k in rule.get("keywords", [])],
                    rule.get("secretGroup", 0),
                    rule.get("entropy", 0.0),
                    compile_(rule["path"]) if "path" in rule else None,
                    allowlists,
                )
            )

    def spans(self, item: Item) -> Spans:
        text, path = item.text, filename(item)
        lower = text.lower()
        out: Spans = []
        for rx, keywords, group, floor, path_rx, allowlists in self.rules:
            if keywords and not any(k in lower for k in keywords):
                continue
            if path_rx is not None and not path_rx.search(path):
                continue
            for m in rx.finditer(text):
                whole = m.group(0).strip("\n")
                start = m.start() + (len(m.group(0)) - len(m.group(0).lstrip("\n")))
                span, secret = (start, start + len(whole)), whole
                if rx.groups:
                    k = group or next((i for i in range(1, rx.groups + 1) if m.group(i)), 0)
                    if k and m.group(k):
                        span, secret = m.span(k), m.group(k)
                if floor and entropy(secret) <= floor:
                    continue
                if any(r.search(secret) for r in self.allow_regexes) or any(w in secret.lower() for w in self.stopwords):
                    continue
                line = line_of(text, span[0])
                if any(allowed(secret, whole, line, path, a) for a in allowlists):
                    continue
                out.append(span)
        return out


def allowed(secret: str, match: str, line: str, path: str, allowlist: tuple) -> bool:
    target, regexes, stopwords, condition, paths = allowlist
    subject = {"secret": secret, "match": match, "line": line}[target]
    checks = []
    if regexes:
        checks.append(any(r.search(subject) for r in regexes))
    if stopwords:
        checks.append(any(w in secret.lower() for w in stopwords))
    if paths:
        checks.append(any(p.search(path) for p in paths))
    if condition == "AND":
        return bool(checks) and all(checks)
    return any(checks[:2]) if not paths else any(checks)


def entropy(text: str) -> float:
    counts = collections.Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


def line_of(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end != -1 else len(text)]


# --- detect-secrets ---------------------------------------------------------------------------


def detect_secrets_spans(items: list[Item]) -> list[Spans]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_file
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.settings import default_settings

    plugins = get_mapping_from_secret_type_to_class()
    out = []
    with tempfile.TemporaryDirectory() as tmp, default_settings():
        for n, item in enumerate(items):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            path = folder / filename(item)
            path.write_text(item.text + "\n")
            spans: Spans = []
            for found in scan_file(str(path)):
                value = found.secret_value or ""
                if found.type == "Private Key":
                    spans.append(key_block(item.text, value))
                    continue
                plugin = plugins.get(found.type)
                if plugin and issubclass(plugin, RegexBasedDetector):  # the whole match, not the group it reports (`ghp`)
                    spans += [m.span() for rx in plugin().denylist for m in rx.finditer(item.text) if value in m.group(0)]
                at = item.text.find(value) if value else -1
                while at != -1:
                    spans.append((at, at + len(value)))
                    at = item.text.find(value, at + 1)
            out.append(spans)
    return out


def key_block(text: str, marker: str) -> tuple[int, int]:
    """A private key detect-secrets reports by its BEGIN line: that line to the END line."""
    at = text.find(marker)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("-----END", at)
    end = text.find("\n", end) if end != -1 else len(text)
    return start, end if end != -1 else len(text)


# --- scoring ----------------------------------------------------------------------------------


def exposed(item: Item, spans: Spans) -> bool:
    for a, b in item.secret:
        at = a
        for s, e in sorted(spans):
            if s <= at < e:
                at = e
        if at < b:
            return True
    return False


def score(items: list[Item], spans: list[Spans]) -> dict:
    secrets = [(i, s) for i, s in zip(items, spans) if i.is_secret]
    lookalikes = [(i, s) for i, s in zip(items, spans) if not i.is_secret]
    missed = [i for i, s in secrets if exposed(i, s)]
    wrong = [i for i, s in lookalikes if s]
    kinds = collections.Counter(i.kind for i, _ in secrets)
    missed_kinds = collections.Counter(i.kind for i in missed)
    return {
        "secrets": len(secrets),
        "masked": len(secrets) - len(missed),
        "recall": (len(secrets) - len(missed)) / len(secrets),
        "kinds": len(kinds),
        "kinds_all_masked": sum(1 for k in kinds if not missed_kinds[k]),
        "lookalikes": len(lookalikes),
        "false_positives": len(wrong),
        "fp_rate": len(wrong) / len(lookalikes),
        "missed": [(i.kind, i.where, i.text) for i in missed],
        "wrong": [(i.kind, i.where, i.text) for i in wrong],
    }


def realistic_log(mb: float, items: list[Item]) -> str:
    noise, _ = sessiongen.generate(int(mb * 1_000_000))
    rnd = random.Random(11)
    lookalikes = [i.text for i in items if not i.is_secret]
    secrets = [i.text for i in items if i.is_secret]
    lines = []
    for line in noise.split("\n"):
        roll = rnd.random()
        lines.append(rnd.choice(lookalikes) if roll < 0.2 else rnd.choice(secrets) if roll < 0.201 else line)
    return "\n".join(lines)


def throughput(text: str, rounds: int = 3) -> float:
    best = math.inf
    for _ in range(rounds):
        started = time.perf_counter()
        redact.redact(text)
        best = min(best, time.perf_counter() - started)
    return len(text.encode()) / 1e6 / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=4.0, help="size of the log masked for the speed figure")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON object on the last line")
    ap.add_argument("--misses", action="store_true", help="also list what each tool missed and wrongly masked")
    args = ap.parse_args()
    items = corpus()
    tools = {}
    started = time.perf_counter()
    tools["supervise"] = score(items, [supervise_spans(i) for i in items])
    gitleaks = Gitleaks(RULES)
    tools["gitleaks rules"] = score(items, [gitleaks.spans(i) for i in items])
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    tools["detect-secrets"] = score(items, detect_secrets_spans(items))
    took = time.perf_counter() - started
    log = realistic_log(args.mb, items)
    speed = throughput(log)
    first = tools["supervise"]
    print(
        f"corpus: {first['secrets']} secrets of {first['kinds']} kinds, {first['lookalikes']} look-alikes "
        f"(tests/secrets_corpus.py); scored in {took:.0f} s\n"
    )
    print("| tool | recall | kinds all masked | false positives |")
    print("| --- | --- | --- | --- |")
    for name, r in tools.items():
        print(
            f"| {name} | {r['recall']:.1%} ({r['masked']}/{r['secrets']}) | {r['kinds_all_masked']}/{r['kinds']} "
            f"| {r['fp_rate']:.1%} ({r['false_positives']}/{r['lookalikes']}) |"
        )
    print(f"\nsupervise's masks over a realistic log of {len(log.encode()) / 1e6:.1f} MB: {speed:.1f} MB/s (best of 3)")
    if args.misses:
        for name, r in tools.items():
            print(f"\n## {name}: missed {len(r['missed'])}, wrongly masked {len(r['wrong'])}")
            for kind, where, text in r["missed"]:
                print(f"  missed {kind} ({where}): {text[:140]!r}")
            for kind, where, text in r["wrong"]:
                print(f"  masked {kind} ({where}): {text[:140]!r}")
    if args.json:
        slim = {name: {k: v for k, v in r.items() if k not in ("missed", "wrong")} for name, r in tools.items()}
        slim["supervise"]["missed"] = [f"{kind} ({where})" for kind, where, _ in first["missed"]]
        print(json.dumps({"tools": slim, "log_mb": round(len(log.encode()) / 1e6, 1), "mb_s": speed}))


if __name__ == "__main__":
    main()
