"""Mask secrets before anything leaves the machine (summaries) or a file is shared (exports).

Each rule finds a kind of secret and the part of it to mask; the mask says what it was:
`[REDACTED:anthropic-key]`. Rules are written to leave ordinary code alone: `token =
get_token()` is code, `token = "9f8e..."` is a secret; `postgres://{user}:{password}@` is a
template, `password_file = "/run/secrets/db"` names a file.

Speed: an export redacts a whole log (up to 100 MB) and every summary its digest, so each
rule is written to start with a literal (a token's prefix, "=", "://") that the regex engine
finds with a fast substring search. A leading `\\b` or look-behind would make it try every
position instead (25x slower): the word boundary is checked by a look-behind placed after
the prefix. Rules keyed on a name (`password = "..."`) start at their operator and check
the name before it in Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import wrapped


@dataclass(frozen=True)
class Rule:
    kind: str
    regex: re.Pattern
    group: int = 0  # the group to mask (0: the whole match)
    # for rules that start at their "=" or ":": does the text before the match name a secret?
    named: Callable[[str, int], bool] | None = None


def _r(kind: str, pattern: str, group: int = 0, flags: int = 0, named: Callable[[str, int], bool] | None = None) -> Rule:
    return Rule(kind, re.compile(pattern, flags), group, named)


_PREFIXES: list[str] = []  # every token rule's prefix (for tokens a terminal wrapped)
_TOKEN_RULES: list[Rule] = []


def _token(kind: str, prefixes: tuple[str, ...], rest: str) -> tuple[Rule, ...]:
    """A token that starts with one of `prefixes` at a word boundary: one rule per prefix, each
    starting with its literal (fast to find), the boundary checked behind it."""
    rules = tuple(_r(kind, f"{re.escape(p)}(?<!\\w{re.escape(p)}){rest}") for p in prefixes)
    _PREFIXES.extend(prefixes)
    _TOKEN_RULES.extend(rules)
    return rules


SECRET_WORDS = r"(?:pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|credentials?|session[_-]?key)"
ENV_SECRET_WORDS = (
    r"(?:PASS(?:WORD|WD|PHRASE)?|PWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CLIENT_SECRET|AUTH_?TOKEN|CREDENTIALS?|SESSION_?KEY)"
)
# a name ending so says where a secret is, or what it looks like, not what it is
_NOT_A_SECRET_NAME = r"(?:FILE|FILENAME|PATH|DIR|DIRECTORY|NAME|ENV|VAR|URL|URI|ENDPOINT|TYPE|HEADER|PARAM|FIELD|LABEL|PROMPT|LENGTH|LEN|POLICY|PATTERN|REGEX|TOKENS|COUNT)"
# a value ends at white space, a quote, a comment or the line's end; "(" or "[" after it means code
_VALUE_END = r"(?=[\s\"'#;]|$)"
_B64 = r"[A-Za-z0-9+/=]"  # a character of base64

_SECRET_NAME = re.compile(SECRET_WORDS, re.I)
_NOT_SECRET_SUFFIX = re.compile(r"[_.\-]?" + _NOT_A_SECRET_NAME + r"$", re.I)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _secret_name_before(text: str, at: int) -> bool:
    """Is `text[at]` (a ":" or "=") an assignment to a name that holds a secret? The name is
    the run of word characters, dots and dashes before it (past white space and a quote):
    `password`, `db.password`, `"client_secret"`, `AWS_SECRET_ACCESS_KEY`."""
    lo = max(0, at - 200)
    i = at
    while i > lo and text[i - 1] in " \t\r\n":
        i -= 1
    if i > lo and text[i - 1] in "\"'":
        i -= 1
    j = i
    while j > lo and (text[j - 1] in _NAME_CHARS or text[j - 1].isalnum()):
        j -= 1
    if j == i:
        return False
    name = text[j:i]
    return _SECRET_NAME.search(name) is not None and _NOT_SECRET_SUFFIX.search(name) is None


_PEM_KIND = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
# a line of a key's body: base64 filling the whole line (up to a line break, also a
# JSON-escaped one), or one of PEM's and PGP's headers
_BODY_LINE = r"[ \t]*(?:" + _B64 + r"{8,}|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset): [^\r\n\\]*)[ \t]*(?![^\r\n\\])"
_LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"

# PEM (PKCS#1/#8, OpenSSH, EC, DSA, ENCRYPTED, PGP), also JSON-escaped as in a GCP
# service-account key. Whole blocks first, so their insides are not matched piecemeal; the
# body runs to the next "-----", possessively: many BEGINs without an END cost one pass.
PEM_BLOCK = _r("private-key", r"-----BEGIN " + _PEM_KIND + r"(?:[^-]|-(?!----))*+-----END " + _PEM_KIND)

RULES: tuple[Rule, ...] = (
    PEM_BLOCK,
    # (then _mask_key_tails: an END whose BEGIN is gone, with the lines above it)
    # one cut short (`head id_rsa`, a log cut at its end): the BEGIN line, the body lines after
    # it, and a last partial line (the shell's prompt after a file with no newline at its end)
    _r(
        "private-key",
        r"-----BEGIN "
        + _PEM_KIND
        + r"(?:(?:"
        + _LINE_BREAK
        + r"[ \t]*)+"
        + _BODY_LINE
        + r")*+(?:(?:"
        + _LINE_BREAK
        + r"[ \t]*)+"
        + _B64
        + r"{16,})?",
    ),
    # PuTTY .ppk (versions 2 and 3): the private lines
    _r("private-key", r"Private-Lines: \d+\r?\n(" + _B64 + r"{4,}(?![^\r\n])(?:\r?\n" + _B64 + r"{4,}(?![^\r\n]))*)", 1),
    # a kubeconfig's base64-encoded client key
    _r("private-key", r"client-key-data:[ \t]*[\"']?(" + _B64 + r"{16,})", 1),
    *_token("anthropic-key", ("sk-ant-",), r"(?:api|admin|oat)\d{2}-[A-Za-z0-9_\-]{20,}"),
    *_token("openai-key", ("sk-",), r"(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
    *_token("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA"), r"[0-9A-Z]{16}\b"),
    _r(
        "aws-secret-key",
        r"(?i)aws[_\-\s]*(?:secret[_\-\s]*(?:access[_\-\s]*)?key|secret)\W{0,5}[\"'\s:=]+([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        1,
    ),
    _r("aws-session-token", r"(?i)aws[_\-\s]*(?:session|security)[_\-\s]*token\W{0,5}[\"'\s:=]+([A-Za-z0-9/+=]{16,})", 1),
    *_token("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{36,255}\b"),
    *_token("github-token", ("github_pat_",), r"[A-Za-z0-9_]{22,255}\b"),
    *_token("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-"), r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*"),
    _r("slack-token", r"xox[abposr]-(?<!\wxox[abposr]-)[A-Za-z0-9\-]{10,}"),
    *_token("slack-token", ("xapp-",), r"\d-[A-Za-z0-9\-]{10,}"),
    _r("slack-webhook", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"),
    *_token("stripe-key", ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_"), r"[A-Za-z0-9]{16,}"),
    *_token("google-api-key", ("AIza",), r"[0-9A-Za-z\-_]{35}(?![0-9A-Za-z\-_])"),
    *_token("google-oauth-token", ("ya29.",), r"[0-9A-Za-z\-_]{20,}"),
    *_token("huggingface-token", ("hf_",), r"[A-Za-z0-9]{30,40}(?![A-Za-z0-9_])"),
    *_token("npm-token", ("npm_",), r"[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
    *_token("pypi-token", ("pypi-Ag",), r"[A-Za-z0-9_\-]{50,}"),
    *_token("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}(?![a-f0-9])"),
    *_token("twilio-key", ("SK",), r"[0-9a-fA-F]{32}(?![0-9A-Za-z])"),
    _r("twilio-auth-token", r"AC(?<!\wAC)[0-9a-f]{32}:([0-9a-f]{32})(?![0-9a-f])", 1),
    *_token("sendgrid-key", ("SG.",), r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])"),
    *_token("jwt", ("eyJ",), r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # Azure: storage and Service Bus connection strings, and SAS URLs
    _r("azure-key", r"AccountKey=([A-Za-z0-9+/]{20,}={0,2})", 1),
    _r("azure-key", r"SharedAccessKey=([A-Za-z0-9+/]{20,}={0,2})", 1),
    _r("azure-sas", r"sig=(?<=[?&;]sig=)([A-Za-z0-9%+/=]{16,})", 1),
    # ~/.docker/config.json, ~/.npmrc
    _r("docker-auth", r"\"auth\"\s*:\s*\"([A-Za-z0-9+/]{8,}={0,2})\"", 1),
    _r("npm-token", r":_auth(?:Token)?[ \t]*=[ \t]*(?![$%{(\[])([^\s\"']{8,})", 1),
    # headers: Authorization: Bearer ..., "Authorization": "Basic ...", x-api-key: ...
    _r("bearer-token", r"(?i)authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+([A-Za-z0-9._~+/\-=]{12,})", 1),
    _r("api-key-header", r"(?i)x-(?:api-key|api-token|auth-token|access-token|goog-api-key):\s*(?![$%{(\[])([A-Za-z0-9._~+/\-=]{12,})", 1),
    # user:password@ in any URL (postgres://, mongodb+srv://, redis://:pw@): the password only
    _r("url-password", r"://(?<=\w://)[^/\s:@]*:([^/\s@]+)@", 1),
    # connection strings: JDBC and URL query (?password=, ;password=), ADO.NET and ODBC
    # (Password=...; Pwd=...;), Oracle thin (user/password@)
    _r("connection-password", r"(?:[?&\"']|;[ \t]*)(?i:password|pwd)=(?![$%{(\[])([^;&\s\"'<>]+)", 1),
    _r("connection-password", r"jdbc:oracle:thin:[^/\s:@]+/([^@\s]+)@", 1),
    # curl -u user:password, --user user:password
    _r("basic-auth", r"curl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"']+:(?![$%{(\[])([^\s\"']+)", 1),
    # ~/.netrc: machine host login user password secret
    _r("netrc-password", r"machine(?<!\wmachine)[ \t]+\S+\s+login\s+\S+\s+password[ \t]+(\S+)", 1),
    # .env and shell: DB_PASSWORD=value, export GITHUB_TOKEN="value" (not os.environ[...] or $VAR)
    _r(
        "env-secret",
        r"(?m)^[ \t]*(?:export[ \t]+)?(?:[A-Z][A-Z0-9_]*_)?"
        + ENV_SECRET_WORDS
        + r"(?:_(?!"
        + _NOT_A_SECRET_NAME
        + r"\b)[A-Z0-9_]*)?[ \t]*=[ \t]*[\"']?(?![$%{(\[])([^\s\"'#()\[\]{};]{4,})"
        + _VALUE_END,
        1,
    ),
    # the same inside a command line: DB_PASSWORD=x ./run.sh, echo 'TOKEN=abc' (no spaces around =)
    _r(
        "env-secret",
        r"(?<=[\s;'\"(&|])(?:[A-Z][A-Z0-9_]*_)?"
        + ENV_SECRET_WORDS
        + r"(?:_(?!"
        + _NOT_A_SECRET_NAME
        + r"\b)[A-Z0-9_]*)?=(?![$%{(\[])([^\s\"'#()\[\]{};]{4,})"
        + _VALUE_END,
        1,
    ),
    # code and config: password = "literal", "api_key": "literal", secret: 'literal' (the
    # rule starts at the ":" or "="; the name before it is checked by _secret_name_before)
    _r("secret-assignment", r"(?::|=(?!=))\s*([\"'])([^\"'\n]{4,})\1", 2, named=_secret_name_before),
    # command lines: --password=xyz, --api-key xyz (not --token-file, not $VAR)
    _r("cli-secret", r"(?i)--" + SECRET_WORDS + r"(?:=|\s+)(?![\-$])([^\s\"']{4,})" + _VALUE_END, 1),
)

# values that are placeholders, not secrets: $VAR, ${VAR:-x}, $(cmd), <your-key>, ***, xxx,
# {password} (f-strings, str.format), {{ password }} (templates), %(password)s, %s
_PLACEHOLDER = re.compile(
    r"^(?:\$\{?\w+\}?|\$\{[^}]*\}|\$\(.*\)|<[^>]*>|\*+|x{3,}|\.{3,}|\{\{.*\}\}|\{[\w.\[\]'\"]*\}|%\(\w+\)s|%s"
    r"|changeme|password|secret|token|none|null|true|false|bearer|basic|redacted|your[_-].*|\[REDACTED:[\w-]+\])$",
    re.I,
)


def redact(text: str) -> str:
    return apply(text, spans(text))


def by_line(text: str) -> list[str]:
    """`text`'s lines, each masked where a secret lies in it: a secret across lines (a key
    block, a token a terminal wrapped) is masked in every line it touches."""
    lines = text.split("\n")
    edits = spans(text)
    if not edits:
        return lines
    out, at, k = [], 0, 0
    for line in lines:
        end = at + len(line)
        while k < len(edits) and edits[k][1] <= at:
            k += 1
        mine = [(max(a, at) - at, min(b, end) - at, token) for a, b, token in edits[k:] if a < end and b > at]
        out.append(apply(line, mine) if mine else line)
        at = end + 1
    return out


def redact_data(value):
    """Every string in a JSON-like structure masked (before it is encoded: escapes would
    hide secrets from the rules)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_data(v) for v in value]
    return value


Span = tuple[int, int, str]  # start, end, what goes there instead


def spans(text: str) -> list[Span]:
    """What `redact` replaces, as spans of `text` itself, in order and apart: for a text that
    is cut into pieces afterwards (a recording's events), each piece masked where its part of
    a secret lies. The rules run one after another, each on the text the ones before left."""
    edits: list[Span] = wrapped.spans(text, _PREFIXES, _TOKEN_RULES, lambda m, rule: _mask(m, rule) != m.group(0))
    current = apply(text, edits) if edits else text
    for rule in RULES:
        found = [
            (m.start(rule.group), m.end(rule.group), f"[REDACTED:{rule.kind}]")
            for m in rule.regex.finditer(current)
            if _mask(m, rule) != m.group(0)
        ]
        if rule is PEM_BLOCK:
            found = _merge(found, [(a, b, "[REDACTED:private-key]") for a, b in _key_tails(apply(current, found))], current, found)
        if found:
            edits = _merge(edits, found, text, edits)
            current = apply(text, edits)
    return edits


def apply(text: str, edits: list[Span]) -> str:
    out, done = [], 0
    for start, end, token in edits:
        out += [text[done:start], token]
        done = end
    out.append(text[done:])
    return "".join(out)


def _merge(edits: list[Span], found: list[Span], text: str, base: list[Span]) -> list[Span]:
    """`found` (spans of `apply(text, base)`) added to `edits` (spans of `text`), in
    `text`'s terms; spans that overlap become one, named for the first."""
    moved = [(_back(a, base, False), _back(b, base, True), token) for a, b, token in found]
    out: list[Span] = []
    for start, end, token in sorted(edits + moved):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end), out[-1][2])
        else:
            out.append((start, end, token))
    return out


def _back(at: int, base: list[Span], is_end: bool) -> int:
    """Position `at` of `apply(text, base)` as a position of `text` (inside a replacement:
    its whole span)."""
    delta = 0
    for start, end, token in base:
        there = start + delta
        if at < there or (at == there and is_end):
            break
        if at < there + len(token) or (at == there + len(token) and not is_end):
            return end if is_end else start
        delta += len(token) - (end - start)
    return at - delta


_PEM_END = re.compile(r"-----END " + _PEM_KIND)
_BODY_LINE_RX = re.compile(_BODY_LINE + r"|[ \t]*")
_LINE_BREAK_RX = re.compile("(" + _LINE_BREAK + ")")
_RUN_AT_END = re.compile(_B64 + r"{16,}[ \t]*$")


def _key_tails(text: str) -> list[tuple[int, int]]:
    """A key's END whose BEGIN is not there (`tail id_rsa`, a log or digest that starts
    inside the key): the END and the body lines above it are masked. Complete blocks are
    masked before this, so every END left is such a tail."""
    if "-----END " not in text:
        return []
    out: list[tuple[int, int]] = []
    done = seen = 0  # the end of the last END masked, of the last END looked at
    for m in _PEM_END.finditer(text):
        lo, seen = max(seen, m.start() - 65536), m.end()  # a body ends at the END below it
        parts = _LINE_BREAK_RX.split(text[lo : m.start()])  # line, break, line, ..., line
        if parts[-1].strip(" \t"):
            continue  # something else before the END on its line
        top = len(parts) - 1  # the first part masked
        body = False
        head = 0  # of the line above the body: where its end, a run of base64, begins
        for k in range(len(parts) - 3, -1, -2):  # the lines above, bottom up
            if not _BODY_LINE_RX.fullmatch(parts[k]):
                run = _RUN_AT_END.search(parts[k])  # e.g. '"private_key": "MIIE...' cut before its BEGIN
                if run:
                    top, head, body = k, run.start(), True
                break
            top = k
            body = body or bool(parts[k].strip(" \t"))
        if not body:
            continue
        while top < len(parts) - 1 and not head and not parts[top].strip(" \t"):
            top += 2  # leading blank lines stay
        start = lo + sum(len(p) for p in parts[:top]) + head
        out.append((max(start, done), m.end()))
        done = m.end()
    return out


# settings.SECRET_KEY, config.auth.token: a reference in code, not a value
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def _mask(m: re.Match, rule: Rule) -> str:
    value = m.group(rule.group)
    if value is None or "[REDACTED:" in value:
        return m.group(0)
    if rule.group and (_PLACEHOLDER.match(value) or _DOTTED_NAME.match(value)):
        return m.group(0)
    if rule.named is not None and not rule.named(m.string, m.start()):
        return m.group(0)
    start, end = m.start(rule.group) - m.start(0), m.end(rule.group) - m.start(0)
    whole = m.group(0)
    return whole[:start] + f"[REDACTED:{rule.kind}]" + whole[end:]


def findings(text: str) -> list[str]:
    """The kinds of secret found (for reports and tests)."""
    return re.findall(r"\[REDACTED:([\w-]+)\]", redact(text))
