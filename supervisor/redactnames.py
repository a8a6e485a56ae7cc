"""Secrets found by the name they are assigned to (for redact.py): `password=...` at the
start of a line, `DB_PASSWORD=...` in a command, `api_key: ...` in YAML, `"client_secret":
"..."` in JSON, `<password>...</password>`, `'password' => '...'`, `--token ...`,
`Pwd=...;` in a connection string, `Authorization: Bearer ...`, `x-api-key: ...`.

Speed: a name is found from a word it holds ("pass", "secret", "token", "key", "auth",
"cred", "pwd", in each case they are written in), each looked for with a plain substring
search (fast); each place found is then read in Python: the name around it, the operator
after it, the value after that. Most places are prose or code ("tokens", `token =
get_token()`) and are let go after a look at a few characters.

What is a secret: a strong name (password, secret, token, credentials, an API or private
key) with any value that is not a placeholder (`$VAR`, `{{ x }}`, `<your-key>`, `***`), a
path, or code (`os.environ[...]`, `settings.TOKEN`, `get_token()`, `password: str`); a weak
name (a key of another kind, auth) only with a value that looks random.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from . import wrapped

Span = tuple[int, int, str]

KEYWORDS = tuple(w for base in ("pass", "pwd", "secret", "token", "key", "auth", "cred") for w in (base, base.upper(), base.title()))
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

STRONG = {"password", "passwd", "pwd", "pass", "passphrase", "secret", "secrets", "token", "credential", "credentials", "creds"}
STRONG_ENDS = ("password", "passwd", "secret", "token", "apikey", "secretkey", "privatekey", "accesskey")
# a key of one of these is as strong as a password: API_KEY, private_key, SIGNING_KEY
STRONG_KEYS = {
    "api",
    "private",
    "access",
    "secret",
    "session",
    "master",
    "signing",
    "encryption",
    "license",
    "account",
    "client",
    "app",
    "auth",
}
# a name ending so says where a secret is, or what it looks like, not what it is
NOT_SECRET_END = {
    "file", "filename", "path", "dir", "directory", "name", "env", "var", "url", "uri", "endpoint", "type", "header", "param",
    "field", "label", "prompt", "length", "len", "policy", "pattern", "regex", "tokens", "count", "stdin", "ref", "method",
    "limit", "budget", "size", "ttl", "timeout", "expiry", "expires", "expiration", "version", "format", "mode", "required",
    "enabled", "manager", "provider", "prefix", "hint", "usage", "store", "arn", "fingerprint", "checksum", "digest",
}  # fmt: skip
WEAK_NOT_END = {"id", "hash", "alg", "algorithm", "ring", "pair", "spec", "code"}  # key_id, keypair: not a key
NOT_SECRET_ANY = {"public", "publishable", "pub", "cache", "sort", "partition", "primary", "foreign", "idempotency", "max", "min", "num"}
SCHEMES = ("bearer", "basic", "token", "bot")

# values that are placeholders, not secrets: $VAR, ${VAR:-x}, $(cmd), <your-key>, ***, xxx,
# {password} (f-strings, str.format), {{ password }} (templates), %(password)s, %s, %VAR%,
# a value cut short for show (`sk-...`)
PLACEHOLDER = re.compile(
    r"^(?:\$.*|<[^>]*>|\*+|x{3,}|X{3,}|\.{3,}|\{.*|%\(\w+\)s|%s|%\w+%|.{0,16}(?:\.\.\.|…)"
    r"|.*\*{4}.*|changeme|password|secret|token|none|null|nil|true|false|bearer|basic|redacted|your[_-].*|\[REDACTED:[\w-]+\])$",
    re.I,
)
# /run/secrets/db, ~/.ssh/id_rsa, ./key.pem
PATH = re.compile(r"^(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]*)+$|^(?:~|\.{1,2})/[\w.\-]+$")
# code, not a value: settings.SECRET_KEY, os.environ, user_password, DEFAULT_TOKEN, accessToken, SecretStr
_WORD = r"(?:[a-z_][a-z0-9_]*|[A-Z][A-Z0-9_]*|[A-Z]?[a-z]+(?:[A-Z][a-z0-9]*)*|[A-Z]+[a-z]+(?:[A-Z]+[a-z]*)*)"
CODE = re.compile(rf"^(?:[a-z_]+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z]+(?:[A-Z][a-z]+)+|(?:[A-Z][a-z]+)+|{_WORD}(?:\.{_WORD})+)$")
_UNQUOTED_END = frozenset(" \t\r\n\"'`,;&)]}<>|([")
_OPERATOR = re.compile(r"[\"']?[ \t]*[=:>]")  # after a name, what may assign it a value
QUOTED_MAX = 4096  # characters: a value in quotes longer than this is not one value
_CREDENTIAL = re.compile(r"[A-Za-z0-9._~+/=\-]+")
_CONTINUATION = re.compile(r"\r?\n[ \t]*(?:[│┃|›>❯•][ \t]*)?([A-Za-z0-9_][A-Za-z0-9_\-.=+/~]*)")
FULL_LINE = 72  # columns: a line as long as a terminal's or an agent's box is wide (narrower ones are rare)


def find(text: str) -> list[Span]:
    """Where a value assigned to a name that holds a secret lies in `text`, in order."""
    starts: set[int] = set()
    for word in KEYWORDS:
        at, run_end = text.find(word), -1
        while at != -1:
            if at >= run_end:  # (a name is read once, however many times it holds the word)
                i = at
                while i > 0 and text[i - 1] in NAME_CHARS:
                    i -= 1
                run_end = at + len(word)
                while run_end < len(text) and text[run_end] in NAME_CHARS:
                    run_end += 1
                if _OPERATOR.match(text, run_end) or text.startswith("--", i):  # (most are prose: "tokens", "key point")
                    starts.add(i)
            at = text.find(word, at + len(word))
    out: list[Span] = []
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        found = _assignment(text, start)
        if found:
            out.append(found)
            more = _continued(text, found[0], found[1])  # the value's end on the next line: a terminal wrapped it
            if more:
                out.append((*more, found[2]))
            done = out[-1][1]
    return out


def _continued(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Where a value that fills its line to a terminal's width goes on at the start of the
    next (after the indent and a box's or a prompt's glyph); not a word or a NAME=."""
    if end >= len(text) or text[end] not in "\r\n" or end - (text.rfind("\n", 0, end) + 1) < FULL_LINE:
        return None
    m = _CONTINUATION.match(text, end)
    if not m or (m.end() < len(text) and text[m.end()] not in " \t\r\n\"'") or not any(c.isalpha() for c in m.group(1)):
        return None  # (a number, a date: not the rest of a secret)
    return m.span(1) if wrapped.tail_like(text[start:end], m.group(1)) else None


def _assignment(text: str, start: int) -> Span | None:
    end = start
    while end < len(text) and text[end] in NAME_CHARS:
        end += 1
    name = text[start:end]
    option = name.startswith("-")
    name = name.lstrip("-")
    before = text[start - 1] if start else "\n"
    if not name or before == "$" or "REDACTED" in name:
        return None
    strength = _strength(name)
    if not strength:
        return None
    i = end
    if before in "\"'" and i < len(text) and text[i] == before:
        i += 1  # "password": ..., 'password' => ...
    i = _skip_blanks(text, i)
    op = text[i : i + 2]
    if op.startswith("=") and not op.startswith("=="):
        i += 2 if op == "=>" else 1
    elif op.startswith(":") and op not in ("::", ":="):
        i += 1
        if before not in "\"'" and i < len(text) and text[i] not in " \t\"'`":
            return None  # arn:aws:..., host:port: a YAML key has a space after its colon
    elif op.startswith(">") and before == "<":
        i += 1  # <password>...</password>
    elif option and i > end and op[:1] not in ("-", "", "\n", "\r"):
        pass  # --token VALUE
    else:
        return None
    i = _skip_blanks(text, i)
    value_at, value_end, quoted = _value(text, i)
    if value_at is None:
        return None
    if "authorization" in _segments(name):
        value_at, value_end, strength = _credential(text, value_at, value_end, strength)
        if value_at is None:
            return None
    value = text[value_at:value_end]
    if not _is_secret(value, quoted, strength) or (not quoted and value_end < len(text) and text[value_end] in "(["):
        return None
    return value_at, value_end, f"[REDACTED:{_kind(name, text, start, option, before, op)}]"


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _value(text: str, i: int) -> tuple[int | None, int, bool]:
    """The value at `i`: inside its quotes (on one line), or up to where a value ends."""
    if i >= len(text):
        return None, i, False
    if text[i] in "\"'`":
        close = text.find(text[i], i + 1, i + 1 + QUOTED_MAX)
        if close == -1 or text.find("\n", i + 1, close) != -1:
            return None, i, False
        return i + 1, close, True
    j = i
    while j < len(text) and text[j] not in _UNQUOTED_END:
        j += 1
    return (i, j, False) if j > i else (None, i, False)


def _credential(text: str, at: int, end: int, strength: str) -> tuple[int | None, int, str]:
    """An Authorization header's value: the credential after its scheme (`Bearer ...`)."""
    word = text[at : at + 7].split(" ", 1)[0].split("\t", 1)[0]
    if word.lower() not in SCHEMES:
        return at, end, "weak"
    i = _skip_blanks(text, at + len(word))
    m = _CREDENTIAL.match(text, i)
    if i == at + len(word) or not m or len(m.group()) < 8:
        return None, at, strength
    return i, m.end(), "strong"


def _segments(name: str) -> list[str]:
    return [s.lower() for s in _SEGMENT.findall(name)]


def _strength(name: str) -> str:
    """ "strong" (a name only a secret has), "weak" (a key of some kind, auth) or ""."""
    segments = _segments(name)
    if not segments or segments[-1] in NOT_SECRET_END or NOT_SECRET_ANY.intersection(segments):
        return ""
    for k, s in enumerate(segments):
        if s in STRONG or s.endswith(STRONG_ENDS) or (s == "key" and k and segments[k - 1] in STRONG_KEYS):
            return "strong"
    if segments[-1] not in WEAK_NOT_END and any(s in ("key", "auth", "authorization") or s.endswith("key") for s in segments):
        return "weak"
    return ""


def _is_secret(value: str, quoted: bool, strength: str) -> bool:
    if len(value) < 4 or "[REDACTED:" in value or PLACEHOLDER.match(value) or PATH.match(value):
        return False
    if not quoted and (CODE.match(value.rstrip("!?")) or (value.isdigit() and len(value) < 8)):
        return False
    if strength == "strong":
        return True
    return _looks_random(value)


def _looks_random(value: str) -> bool:
    """A weak name's value: long, of letters and digits mixed, no words or file names."""
    if len(value) < 16 or any(c in value for c in " \t") or CODE.match(value) or re.search(r"\.[A-Za-z]{2,4}$", value):
        return False
    has_digit, has_letter = any(c.isdigit() for c in value), any(c.isalpha() for c in value)
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return has_digit and has_letter and entropy >= 3.0


def _kind(name: str, text: str, start: int, option: bool, before: str, op: str) -> str:
    segments = _segments(name)
    if "aws" in segments and "secret" in segments:
        return "aws-secret-key"
    if "aws" in segments and "token" in segments:
        return "aws-session-token"
    if "authorization" in segments:
        return "bearer-token"
    if option:
        return "cli-secret"
    if name.startswith("_auth"):
        return "npm-token"
    if name == "auth" and before == '"':
        return "docker-auth"
    if name.lower().startswith("x-") and op.startswith(":"):
        return "api-key-header"
    i = start
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if i and text[i - 1] in ";?&":
        return "connection-password"
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", name) and op.startswith("="):
        return "env-secret"
    return "secret-assignment"
