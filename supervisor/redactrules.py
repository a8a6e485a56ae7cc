"""The secret masks' rules (for redact.py): each finds a kind of secret by its form and says
which part of it to mask. Tokens by their service's prefix (formats as gitleaks' rules,
github.com/gitleaks/gitleaks, MIT, describe them), private keys by their armour, passwords
in URLs, connection strings and command lines by where they stand. Secrets known only by
the name they are assigned to are found by redactnames.py.

Speed: each rule starts with a literal (a token's prefix, "://", "sig=") that the regex
engine finds with a fast substring search. A leading `\\b` or look-behind would make it try
every position instead (25x slower): the word boundary is checked by a look-behind placed
after the prefix.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Rule:
    """One masking rule: the kind of secret, its regex, the literal its matches begin with."""

    kind: str
    source: str  # the regex
    literal: str  # what every match begins with
    group: int = 0  # the group to mask (0: the whole match)
    lead: int = 0  # characters before the match masked too (a token whose distinctive part is inside it)
    prefix: str = ""  # a token rule's (the common start of its prefixes)

    @cached_property
    def regex(self) -> re.Pattern:
        """Compiled when a text first holds the rule's literal: compiling every rule was most
        of the start-up of a command that masks a line or two."""
        return re.compile(self.source)

    def finditer(self, text: str) -> Iterator[re.Match]:
        return self.regex.finditer(text) if self.literal in text else iter(())

    def match(self, text: str) -> re.Match | None:
        return self.regex.match(text) if text.startswith(self.literal) else None


_META = frozenset("\\.^$*+?{}[]|()")
_QUANTIFIERS = frozenset("*?{")


def leading_literal(pattern: str) -> str:
    """The characters every match of `pattern` begins with (a rule's patterns begin with one:
    each starts with a literal, see above)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            c, step = pattern[i + 1], 2
        elif c in _META:
            break
        else:
            step = 1
        if pattern[i + step : i + step + 1] in _QUANTIFIERS:  # optional or repeated: not certain
            break
        out.append(c)
        i += step
    return "".join(out)


def _r(kind: str, pattern: str, group: int = 0, lead: int = 0) -> Rule:
    return Rule(kind, pattern, leading_literal(pattern), group, lead)


PREFIXES: list[str] = []  # every token rule's prefix (for tokens a terminal wrapped)
TOKEN_RULES: list[Rule] = []


def _token(kind: str, prefixes: tuple[str, ...], rest: str) -> tuple[Rule, ...]:
    """A token that starts with one of `prefixes` at a word boundary: one rule for the prefixes
    that begin alike (`gh` of ghp_, gho_...), starting with that literal (fast to find), the
    boundary checked behind it; one rule each for the others."""
    groups: dict[str, list[str]] = {}
    for p in prefixes:
        groups.setdefault(p[:2], []).append(p)
    rules = []
    for alike in groups.values():
        common = os.path.commonprefix(alike)
        others = "|".join(re.escape(p[len(common) :]) for p in sorted(alike, key=len, reverse=True))
        pattern = f"{re.escape(common)}(?<!\\w{re.escape(common)})(?:{others}){rest}"
        rules.append(Rule(kind, pattern, common, prefix=common))
    PREFIXES.extend(prefixes)
    TOKEN_RULES.extend(rules)
    return tuple(rules)


_PEM_KIND = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
_B64 = r"[A-Za-z0-9+/=]"  # a character of base64
# a line of a key's body: base64 filling the whole line (up to a line break, also a
# JSON-escaped one), PGP's checksum, or one of PEM's and PGP's headers
BODY_LINE = (
    r"[ \t]*(?:" + _B64 + r"{8,}|=" + _B64 + r"{4}|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset): [^\r\n\\]*)[ \t]*(?![^\r\n\\])"
)
LINE_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"
PEM_END = re.compile(r"-----END " + _PEM_KIND)
BODY_LINE_RX = re.compile(BODY_LINE + r"|[ \t]*")
LINE_BREAK_RX = re.compile("(" + LINE_BREAK + ")")
RUN_AT_END = re.compile(_B64 + r"{16,}[ \t]*$")

# PEM (PKCS#1/#8, OpenSSH, EC, DSA, ENCRYPTED, PGP), also JSON-escaped as in a GCP
# service-account key. Whole blocks first, so their insides are not matched piecemeal; the
# body runs to the next "-----", possessively (many BEGINs without an END cost one pass), over
# lines of a key's body only (indented, numbered, in a box): a key cut short, then other
# output, then another key's END are two pieces of keys (below), not one block.
_NEXT_BODY_LINE = r"[ \t│┃|>⎿]*(?:\d+[→│|:\t ][ \t]*)?(?:" + _B64 + r"+[ \t│┃|]*\r?(?:\n|$)|[A-Za-z\-]+: |\r?\n|-----END )"
PEM_BLOCK = _r(
    "private-key", r"-----BEGIN " + _PEM_KIND + r"(?:[^\-\n]|-(?!----)|\n(?=" + _NEXT_BODY_LINE + r")){0,20000}+-----END " + _PEM_KIND
)
_HEX = "[0-9a-f]"
_AN = "[A-Za-z0-9]"
_URLSAFE = r"[A-Za-z0-9_\-]"

KEY_RULES = 4  # the first RULES: private keys, whole or in pieces (redact.py masks them before the others)
RULES: tuple[Rule, ...] = (
    PEM_BLOCK,
    # (then redact._key_tails: an END whose BEGIN is gone, with the lines above it)
    # one cut short (`head id_rsa`, a log cut at its end): the BEGIN line, the body lines after
    # it, and a last partial line (the shell's prompt after a file with no newline at its end)
    _r(
        "private-key",
        r"-----BEGIN "
        + _PEM_KIND
        + r"(?:(?:"
        + LINE_BREAK
        + r"[ \t]*)+"
        + BODY_LINE
        + r")*+(?:(?:"
        + LINE_BREAK
        + r"[ \t]*)+"
        + _B64
        + r"{16,})?",
    ),
    # PuTTY .ppk (versions 2 and 3): the private lines
    _r("private-key", r"Private-Lines: \d+\r?\n(" + _B64 + r"{4,}(?![^\r\n])(?:\r?\n" + _B64 + r"{4,}(?![^\r\n]))*)", 1),
    # a kubeconfig's base64-encoded client key
    _r("private-key", r"client-key-data:[ \t]*[\"']?(" + _B64 + r"{16,})", 1),
    *_token("private-key", ("AGE-SECRET-KEY-1",), r"[0-9A-Z]{58}"),
    # AI services
    *_token("anthropic-key", ("sk-ant-",), r"(?:api|admin|oat)\d{2}-[A-Za-z0-9_\-]{20,}"),
    *_token("openai-key", ("sk-",), r"(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
    *_token("huggingface-token", ("hf_",), r"[A-Za-z0-9]{30,40}(?![A-Za-z0-9_])"),
    *_token("perplexity-key", ("pplx-",), _AN + "{48}"),
    # clouds
    *_token("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA", "AROA", "AIDA"), r"[0-9A-Z]{16}\b"),
    # `aws configure set aws_secret_access_key ...` (the other forms are assignments: redactnames.py)
    _r("aws-secret-key", r"aws_secret_access_key[ \t]+([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", 1),
    _r("aws-secret-key", r"AWS_SECRET_ACCESS_KEY[ \t]+([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", 1),
    *_token("aws-bedrock-key", ("ABSK",), r"[A-Za-z0-9+/]{109,269}={0,2}"),
    *_token("google-api-key", ("AIza",), r"[0-9A-Za-z\-_]{35}(?![0-9A-Za-z\-_])"),
    *_token("google-oauth-token", ("ya29.",), r"[0-9A-Za-z\-_]{20,}"),
    *_token("google-oauth-secret", ("GOCSPX-",), _URLSAFE + "{28}"),
    *_token("alibaba-access-key", ("LTAI",), _AN + r"{20}\b"),
    *_token("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}(?![a-f0-9])"),
    *_token("databricks-token", ("dapi",), _HEX + r"{32}(?:-\d)?\b"),
    *_token("vault-token", ("hvs.", "hvb.", "hvr."), r"[\w\-]{90,300}"),
    *_token("heroku-key", ("HRKU-AA",), _URLSAFE + "{58}"),
    *_token("pulumi-token", ("pul-",), _HEX + r"{40}\b"),
    *_token("planetscale-token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"), r"[\w=.\-]{32,64}"),
    *_token("doppler-token", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct."), _AN + "{40,44}"),
    *_token("dynatrace-token", ("dt0c01.",), r"[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    # HashiCorp Terraform Cloud (ID.atlasv1.SECRET) and Azure AD client secrets (xxxNQ~...): the
    # distinctive part is inside the token, what comes before it is masked too
    _r("terraform-token", r"\.atlasv1\.(?<=(?<![\w.])[A-Za-z0-9]{14}\.atlasv1\.)[\w\-=]{60,70}", lead=14),
    _r("azure-client-secret", r"Q~(?<=(?<![\w~.])[\w~.]{3}\dQ~)[\w~.\-]{31,34}(?![\w~.\-])", lead=4),
    # code hosting and packages
    *_token("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{36,255}\b"),
    *_token("github-token", ("github_pat_",), r"[A-Za-z0-9_]{22,255}\b"),
    *_token(
        "gitlab-token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-", "glft-", "gloas-"),
        r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*",
    ),
    *_token("npm-token", ("npm_",), r"[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
    *_token("pypi-token", ("pypi-Ag",), r"[A-Za-z0-9_\-]{50,}"),
    *_token("rubygems-token", ("rubygems_",), _HEX + r"{48}\b"),
    *_token("postman-key", ("PMAK-",), _HEX + "{24}-" + _HEX + r"{34}\b"),
    # messaging, payments, monitoring, work tools
    *_token(
        "slack-token", ("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.xoxp-", "xoxe.xoxb-"), r"[A-Za-z0-9\-]{10,}"
    ),
    *_token("slack-token", ("xapp-",), r"\d-[A-Za-z0-9\-]{10,}"),
    _r("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+"),
    # a Telegram bot's token: its id, ":", then the secret
    _r("telegram-bot-token", r":(AA(?<=\d:AA)[A-Za-z0-9_\-]{33})(?![\w\-])", 1),
    *_token("stripe-key", ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_", "whsec_"), r"[A-Za-z0-9]{16,}"),
    *_token("square-token", ("EAAA",), _URLSAFE + "{60}"),
    *_token("square-token", ("sq0atp-", "sq0csp-"), _URLSAFE + "{22,43}"),
    *_token("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), "[a-fA-F0-9]{32}"),
    *_token("twilio-key", ("SK",), r"[0-9a-fA-F]{32}(?![0-9A-Za-z])"),
    _r("twilio-auth-token", r"AC(?<!\wAC)[0-9a-f]{32}:([0-9a-f]{32})(?![0-9a-f])", 1),
    *_token("sendgrid-key", ("SG.",), r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])"),
    *_token("mailgun-key", ("key-",), _HEX + r"{32}\b"),
    *_token("sentry-token", ("sntryu_",), _HEX + r"{64}\b"),
    *_token("sentry-token", ("sntrys_",), r"eyJ[A-Za-z0-9+/=_]{60,}"),
    *_token("grafana-token", ("glsa_",), _AN + "{32}_" + _HEX + r"{8}\b"),
    *_token("grafana-token", ("glc_",), r"[A-Za-z0-9+/]{32,400}={0,2}"),
    *_token("newrelic-key", ("NRAK-", "NRII-", "NRJS-"), r"[A-Za-z0-9\-]{19,32}\b"),
    *_token("atlassian-token", ("ATATT3", "ATCTT3"), r"[A-Za-z0-9_\-=]{100,}"),
    *_token("linear-key", ("lin_api_",), _AN + r"{40}\b"),
    *_token("notion-token", ("ntn_",), r"\d{11}" + _AN + r"{35}\b"),
    *_token("jwt", ("eyJ",), r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # Azure: storage and Service Bus connection strings, and SAS URLs
    _r("azure-key", r"AccountKey=([A-Za-z0-9+/]{20,}={0,2})", 1),
    _r("azure-key", r"SharedAccessKey=([A-Za-z0-9+/]{20,}={0,2})", 1),
    _r("azure-sas", r"sig=(?<=[?&;]sig=)([A-Za-z0-9%+/=]{16,})", 1),
    # user:password@ in any URL (postgres://, mongodb+srv://, redis://:pw@): the password only
    _r("url-password", r"://(?<=\w://)[^/\s:@]*:([^/\s@]+)@", 1),
    # Oracle thin (user/password@)
    _r("connection-password", r"jdbc:oracle:thin:[^/\s:@]+/([^@\s]+)@", 1),
    # curl -u user:password, --user user:password
    _r("basic-auth", r"curl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)[\"']?[^\s:\"']+:(?![$%{(\[])([^\s\"']+)", 1),
    # mysql -pPASSWORD, sshpass -p PASSWORD
    _r("cli-secret", r"mysql(?:dump|admin)?\b[^\n]*?\s-p([^\s\"'-][^\s\"']{3,})", 1),
    _r("cli-secret", r"sshpass\b[^\n]*?\s-p[ \t]*([^\s\"'-][^\s\"']{3,})", 1),
    # ~/.netrc: machine host login user password secret
    _r("netrc-password", r"machine(?<!\wmachine)[ \t]+\S+\s+login\s+\S+\s+password[ \t]+(\S+)", 1),
)
