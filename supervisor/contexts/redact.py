"""Mask secrets before anything leaves the machine (summaries) or a file is shared (exports).

Each rule finds a kind of secret and the part of it to mask; the mask says what it was:
`[REDACTED:anthropic-key]`. Rules are written to leave ordinary code alone: `token =
get_token()` is code, `token = "9f8e..."` is a secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    kind: str
    regex: re.Pattern
    group: int = 0  # the group to mask (0: the whole match)


def _r(kind: str, pattern: str, group: int = 0, flags: int = 0) -> Rule:
    return Rule(kind, re.compile(pattern, flags), group)


SECRET_WORDS = r"(?:pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|credentials?|session[_-]?key)"
ENV_SECRET_WORDS = r"(?:PASS(?:WORD|WD|PHRASE)?|PWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CLIENT_SECRET|AUTH_?TOKEN|CREDENTIALS?|SESSION_?KEY)"
# a value ends at white space, a quote, a comment or the line's end; "(" or "[" after it means code
_VALUE_END = r"(?=[\s\"'#;]|$)"

RULES: tuple[Rule, ...] = (
    # whole blocks first, so their insides are not matched piecemeal
    _r("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    _r("anthropic-key", r"\bsk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_\-]{20,}"),
    _r("openai-key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
    _r("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[0-9A-Z]{16}\b"),
    _r("aws-secret-key", r"(?i)aws[_\-\s]*(?:secret[_\-\s]*(?:access[_\-\s]*)?key|secret)\W{0,5}[\"'\s:=]+([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", 1),
    _r("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    _r("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    _r("slack-webhook", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"),
    _r("google-api-key", r"\bAIza[0-9A-Za-z\-_]{35}(?![0-9A-Za-z\-_])"),
    _r("google-oauth-token", r"\bya29\.[0-9A-Za-z\-_]{20,}"),
    _r("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    _r("bearer-token", r"(?i)\bauthorization:\s*(?:bearer|token|basic)\s+([A-Za-z0-9._~+/\-=]{12,})", 1),
    # user:password@ in any URL: the password only
    _r("url-password", r"\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:([^/\s@]+)@", 1),
    # .env and shell: DB_PASSWORD=value, export GITHUB_TOKEN="value" (not os.environ[...] or $VAR)
    _r("env-secret", r"(?m)^[ \t]*(?:export[ \t]+)?(?:[A-Z][A-Z0-9_]*_)?" + ENV_SECRET_WORDS + r"(?:_[A-Z0-9_]*)?[ \t]*=[ \t]*[\"']?(?![$%{(\[])([^\s\"'#()\[\]{};]{4,})" + _VALUE_END, 1),
    # the same inside a command line: DB_PASSWORD=x ./run.sh, echo 'TOKEN=abc' (no spaces around =)
    _r("env-secret", r"(?<=[\s;'\"(&|])(?:[A-Z][A-Z0-9_]*_)?" + ENV_SECRET_WORDS + r"(?:_[A-Z0-9_]*)?=(?![$%{(\[])([^\s\"'#()\[\]{};]{4,})" + _VALUE_END, 1),
    # code and config: password = "literal", "api_key": "literal", secret: 'literal'
    _r("secret-assignment", r"(?i)\b[\w.\-]*" + SECRET_WORDS + r"[\w.\-]*[\"']?\s*(?::|=(?!=))\s*([\"'])([^\"'\n]{4,})\1", 2),
    # command lines: --password=xyz, --api-key xyz (not --token-file, not $VAR)
    _r("cli-secret", r"(?i)--" + SECRET_WORDS + r"(?:=|\s+)(?![\-$])([^\s\"']{4,})" + _VALUE_END, 1),
)

# values that are placeholders, not secrets
_PLACEHOLDER = re.compile(r"^(?:\$\{?\w+\}?|<[^>]*>|\*+|x{3,}|\.{3,}|changeme|password|secret|token|none|null|true|false|bearer|basic|redacted|your[_-].*|\[REDACTED:[\w-]+\])$", re.I)


def redact(text: str) -> str:
    for rule in RULES:
        text = rule.regex.sub(lambda m: _mask(m, rule), text)
    return text


# settings.SECRET_KEY, config.auth.token: a reference in code, not a value
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def _mask(m: re.Match, rule: Rule) -> str:
    value = m.group(rule.group)
    if value is None or "[REDACTED:" in value:
        return m.group(0)
    if rule.group and (_PLACEHOLDER.match(value) or _DOTTED_NAME.match(value)):
        return m.group(0)
    start, end = m.start(rule.group) - m.start(0), m.end(rule.group) - m.start(0)
    whole = m.group(0)
    return whole[:start] + f"[REDACTED:{rule.kind}]" + whole[end:]


def findings(text: str) -> list[str]:
    """The kinds of secret found (for reports and tests)."""
    return re.findall(r"\[REDACTED:([\w-]+)\]", redact(text))
