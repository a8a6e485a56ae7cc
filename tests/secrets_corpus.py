"""A labelled corpus of secrets and of look-alikes that are not secrets, for measuring the
secret masks (supervisor/redact.py) beside other rule sets (scripts/bench_redact.py).

Made here, the same on every call (a seeded random, no network): each item is a line, or a
few lines (a private key, a token a terminal wrapped), in the context a terminal shows it in
(a log line, a shell command, a .env line, YAML, JSON, an HTTP header, a stack trace, a
diff...), labelled with its kind and, for a secret, where the secret lies in it: what must
not survive masking. The formats are the services' own (prefixes, lengths, alphabets, as
gitleaks' rules describe them); every value is random, none was ever valid.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

SEED = 20250314
HOLE = "\x00"  # where a template's secret goes


@dataclass(frozen=True)
class Item:
    text: str
    kind: str  # a secret's kind ("github-pat") or a look-alike's ("git-sha")
    where: str  # its context: log, shell, env, yaml, json, ini, python, http, terminal, ...
    secret: tuple[tuple[int, int], ...] = ()  # where the secret lies in `text` (a look-alike: nowhere)

    @property
    def is_secret(self) -> bool:
        return bool(self.secret)

    @property
    def pieces(self) -> list[str]:
        """The secret as it stands in the text (a wrapped token: one piece per line)."""
        return [self.text[a:b] for a, b in self.secret]


ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
WORDS = "alpha billing cache delta ledger parser queue stream worker invoice report search upload gateway".split()


class Gen:
    """Random values in the alphabets secrets and their look-alikes are made of."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def of(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def alnum(self, n: int) -> str:
        return self.of(ALNUM, n)

    def hex(self, n: int) -> str:
        return self.of(HEX, n)

    def digits(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + self.of(string.digits, n - 1)

    def b64bytes(self, n: int) -> str:
        return base64.b64encode(self.r.randbytes(n)).decode()

    def b64url_json(self, value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).decode().rstrip("=")

    def uuid(self) -> str:
        h = self.hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{self.r.choice('89ab')}{h[17:20]}-{h[20:]}"

    def word(self) -> str:
        return self.r.choice(WORDS)

    def password(self) -> str:
        """What people choose, or what a generator made (no quote, space, #, $, &, ; or @:
        those need quoting or escaping in one context or another)."""
        kind = self.r.randrange(3)
        if kind == 0:
            return (
                self.r.choice(["Summer", "Winter", "Dragon", "Monkey", "Shadow", "Falcon", "hunter"])
                + self.digits(4)
                + self.r.choice("!*%+-_.")
            )
        if kind == 1:
            return self.of(string.ascii_lowercase, 6) + self.digits(2) + self.of(string.ascii_lowercase, 5)
        return self.of(ALNUM + "!%*+-_.~^", self.r.randint(14, 24))


# --- tokens: kind, how one is made, the environment variable and the config key it lives under
Make = Callable[[Gen], str]

TOKENS: list[tuple[str, Make, str, str]] = [
    (
        "aws-access-key-id",
        lambda g: g.r.choice(["AKIA", "ASIA"]) + g.of("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
        "AWS_ACCESS_KEY_ID",
        "aws_access_key_id",
    ),
    ("github-pat", lambda g: "ghp_" + g.alnum(36), "GITHUB_TOKEN", "token"),
    ("github-fine-grained-pat", lambda g: "github_pat_11" + g.of(UPPER_ALNUM, 20) + "_" + g.alnum(59), "GH_TOKEN", "github_token"),
    ("github-oauth-token", lambda g: "gho_" + g.alnum(36), "GITHUB_OAUTH_TOKEN", "oauth_token"),
    ("github-app-token", lambda g: g.r.choice(["ghs_", "ghu_"]) + g.alnum(36), "GITHUB_APP_TOKEN", "installation_token"),
    ("github-refresh-token", lambda g: "ghr_" + g.alnum(36), "GITHUB_REFRESH_TOKEN", "refresh_token"),
    ("gitlab-pat", lambda g: "glpat-" + g.of(B64URL, 20), "GITLAB_TOKEN", "private_token"),
    ("gitlab-runner-token", lambda g: "glrt-" + g.of(B64URL, 20), "RUNNER_TOKEN", "token"),
    ("gitlab-deploy-token", lambda g: "gldt-" + g.of(B64URL, 20), "CI_DEPLOY_PASSWORD", "deploy_token"),
    ("slack-bot-token", lambda g: f"xoxb-{g.digits(11)}-{g.digits(13)}-{g.alnum(24)}", "SLACK_BOT_TOKEN", "bot_token"),
    ("slack-user-token", lambda g: f"xoxp-{g.digits(11)}-{g.digits(12)}-{g.digits(13)}-{g.hex(32)}", "SLACK_USER_TOKEN", "user_token"),
    ("slack-app-token", lambda g: f"xapp-1-A{g.of(UPPER_ALNUM, 10)}-{g.digits(13)}-{g.hex(64)}", "SLACK_APP_TOKEN", "app_token"),
    ("stripe-secret-key", lambda g: "sk_live_51" + g.alnum(g.r.randint(40, 95)), "STRIPE_SECRET_KEY", "secret_key"),
    ("stripe-restricted-key", lambda g: "rk_live_51" + g.alnum(g.r.randint(40, 95)), "STRIPE_API_KEY", "api_key"),
    ("stripe-webhook-secret", lambda g: "whsec_" + g.alnum(32), "STRIPE_WEBHOOK_SECRET", "webhook_secret"),
    ("google-api-key", lambda g: "AIzaSy" + g.of(B64URL, 33), "GOOGLE_API_KEY", "api_key"),
    ("google-oauth-access-token", lambda g: "ya29.a0" + g.of(B64URL, g.r.randint(120, 180)), "GOOGLE_ACCESS_TOKEN", "access_token"),
    ("google-oauth-client-secret", lambda g: "GOCSPX-" + g.of(B64URL, 28), "GOOGLE_CLIENT_SECRET", "client_secret"),
    ("openai-api-key", lambda g: "sk-proj-" + g.of(B64URL, 74) + "T3BlbkFJ" + g.of(B64URL, 74), "OPENAI_API_KEY", "api_key"),
    ("openai-legacy-key", lambda g: "sk-" + g.alnum(20) + "T3BlbkFJ" + g.alnum(20), "OPENAI_API_KEY", "openai_api_key"),
    ("anthropic-api-key", lambda g: "sk-ant-api03-" + g.of(B64URL, 93) + "AA", "ANTHROPIC_API_KEY", "api_key"),
    ("anthropic-admin-key", lambda g: "sk-ant-admin01-" + g.of(B64URL, 93) + "AA", "ANTHROPIC_ADMIN_KEY", "admin_key"),
    ("huggingface-token", lambda g: "hf_" + g.of(string.ascii_letters, 34), "HF_TOKEN", "token"),
    ("npm-token", lambda g: "npm_" + g.alnum(36), "NPM_TOKEN", "npm_token"),
    ("pypi-token", lambda g: "pypi-AgEIcHlwaS5vcmc" + g.of(B64URL, g.r.randint(70, 140)), "TWINE_PASSWORD", "password"),
    ("twilio-api-key", lambda g: "SK" + g.hex(32), "TWILIO_API_KEY", "api_key_sid"),
    ("sendgrid-api-key", lambda g: "SG." + g.of(B64URL, 22) + "." + g.of(B64URL, 43), "SENDGRID_API_KEY", "api_key"),
    ("digitalocean-token", lambda g: "dop_v1_" + g.hex(64), "DIGITALOCEAN_TOKEN", "token"),
    ("shopify-access-token", lambda g: g.r.choice(["shpat_", "shpca_", "shppa_"]) + g.hex(32), "SHOPIFY_ACCESS_TOKEN", "access_token"),
    ("databricks-token", lambda g: "dapi" + g.hex(32), "DATABRICKS_TOKEN", "token"),
    ("vault-token", lambda g: "hvs.CAESI" + g.of(B64URL, g.r.randint(85, 100)), "VAULT_TOKEN", "token"),
    ("terraform-cloud-token", lambda g: g.alnum(14) + ".atlasv1." + g.of(B64URL, 67), "TF_TOKEN_app_terraform_io", "token"),
    ("azure-ad-client-secret", lambda g: g.alnum(3) + g.digits(1) + "Q~" + g.of(ALNUM + "_~.-", 34), "AZURE_CLIENT_SECRET", "clientSecret"),
    ("linear-api-key", lambda g: "lin_api_" + g.alnum(40), "LINEAR_API_KEY", "api_key"),
    ("age-secret-key", lambda g: "AGE-SECRET-KEY-1" + g.of("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58), "SOPS_AGE_KEY", "age_key"),
    ("doppler-token", lambda g: "dp.pt." + g.alnum(43), "DOPPLER_TOKEN", "token"),
    ("grafana-token", lambda g: "glsa_" + g.alnum(32) + "_" + g.hex(8), "GRAFANA_TOKEN", "token"),
    ("newrelic-user-key", lambda g: "NRAK-" + g.of(UPPER_ALNUM, 27), "NEW_RELIC_API_KEY", "api_key"),
    ("postman-api-key", lambda g: f"PMAK-{g.hex(24)}-{g.hex(34)}", "POSTMAN_API_KEY", "api_key"),
    ("pulumi-token", lambda g: "pul-" + g.hex(40), "PULUMI_ACCESS_TOKEN", "access_token"),
    ("planetscale-token", lambda g: "pscale_tkn_" + g.of(B64URL, 43), "PLANETSCALE_SERVICE_TOKEN", "service_token"),
    ("atlassian-api-token", lambda g: "ATATT3xFfGF0" + g.of(B64URL, 170) + "=" + g.of(UPPER_ALNUM, 8), "JIRA_API_TOKEN", "api_token"),
    ("sentry-token", lambda g: "sntryu_" + g.hex(64), "SENTRY_AUTH_TOKEN", "auth_token"),
    ("heroku-api-key", lambda g: "HRKU-AA" + g.of(B64URL, 58), "HEROKU_API_KEY", "api_key"),
    ("square-access-token", lambda g: "EAAA" + g.of(B64URL, 60), "SQUARE_ACCESS_TOKEN", "access_token"),
    ("alibaba-access-key-id", lambda g: "LTAI" + g.alnum(20), "ALIBABA_CLOUD_ACCESS_KEY_ID", "access_key_id"),
    ("notion-token", lambda g: "ntn_" + g.digits(11) + g.alnum(35), "NOTION_TOKEN", "token"),
    ("rubygems-api-key", lambda g: "rubygems_" + g.hex(48), "GEM_HOST_API_KEY", "api_key"),
    ("dynatrace-token", lambda g: f"dt0c01.{g.of(UPPER_ALNUM, 24)}.{g.of(UPPER_ALNUM, 64)}", "DT_API_TOKEN", "api_token"),
    ("telegram-bot-token", lambda g: g.digits(10) + ":AA" + g.of(B64URL, 33), "TELEGRAM_BOT_TOKEN", "bot_token"),
    ("mailgun-api-key", lambda g: "key-" + g.hex(32), "MAILGUN_API_KEY", "api_key"),
]
# made of an alphabet and a length only: found by the name they are assigned to
NAMED: list[tuple[str, Make, str, str]] = [
    ("aws-secret-access-key", lambda g: g.of(ALNUM + "/+", 40), "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"),
    ("aws-session-token", lambda g: "IQoJb3JpZ2luX2VjE" + g.of(B64, g.r.randint(300, 420)), "AWS_SESSION_TOKEN", "aws_session_token"),
    ("twilio-auth-token", lambda g: g.hex(32), "TWILIO_AUTH_TOKEN", "auth_token"),
    ("datadog-api-key", lambda g: g.hex(32), "DD_API_KEY", "api_key"),
    ("cloudflare-api-token", lambda g: g.of(B64URL, 40), "CLOUDFLARE_API_TOKEN", "api_token"),
    ("mailchimp-api-key", lambda g: g.hex(32) + "-us" + str(g.r.randint(2, 21)), "MAILCHIMP_API_KEY", "api_key"),
    (
        "discord-bot-token",
        lambda g: g.r.choice("MN") + g.alnum(23) + "." + g.of(B64URL, 6) + "." + g.of(B64URL, 27),
        "DISCORD_TOKEN",
        "token",
    ),
    ("app-secret-key", lambda g: g.of(ALNUM + "!%*+-_=^", 50), "SECRET_KEY", "secret_key"),
    ("jwt-signing-secret", lambda g: g.hex(64), "JWT_SECRET", "jwt_secret"),
    ("encryption-key", lambda g: g.b64bytes(32), "ENCRYPTION_KEY", "encryption_key"),
]

# --- contexts: (where, template) from the environment variable, the config key and the tool's name
Context = Callable[[Gen, str, str], tuple[str, str]]


def _ts(g: Gen) -> str:
    return f"2025-03-14T{g.r.randint(0, 23):02}:{g.r.randint(0, 59):02}:{g.r.randint(0, 59):02}.{g.r.randint(0, 999):03}Z"


NAMED_CONTEXTS: list[Context] = [
    lambda g, env, key: ("env", f"{env}={HOLE}"),
    lambda g, env, key: ("shell", f"$ export {env}={HOLE}"),
    lambda g, env, key: ("shell", f'$ export {env}="{HOLE}"'),
    lambda g, env, key: ("yaml", f"  {key}: {HOLE}"),
    lambda g, env, key: ("yaml", f'    {key}: "{HOLE}"'),
    lambda g, env, key: ("json", f'  "{key}": "{HOLE}",'),
    lambda g, env, key: ("python", f'client = {g.word().title()}Client({key}="{HOLE}", timeout=30)'),
    lambda g, env, key: ("toml", f'{key} = "{HOLE}"'),
    lambda g, env, key: ("ini", f"{key} = {HOLE}"),
    lambda g, env, key: ("shell", f"$ docker run --rm -e {env}={HOLE} ghcr.io/acme/{g.word()}:1.{g.r.randint(0, 9)}"),
    lambda g, env, key: ("terminal", f"+{env}={HOLE}"),
    lambda g, env, key: ("terminal", f"config/{g.word()}.env:{g.r.randint(2, 80)}:{env}={HOLE}"),
    lambda g, env, key: ("js", f"const {key} = '{HOLE}';"),
    lambda g, env, key: ("log", f"{_ts(g)} DEBUG settings loaded: {env}={HOLE} region=eu-west-1"),
]
PREFIXED_CONTEXTS: list[Context] = NAMED_CONTEXTS + [
    lambda g, env, key: ("log", f"{_ts(g)} INFO  {g.word()}.client: authenticated with {HOLE}"),
    lambda g, env, key: ("terminal", f"> here is the key you asked for: {HOLE} (please keep it safe)"),
    lambda g, env, key: ("log", f"Error: 401 Unauthorized: the token {HOLE} is expired or revoked"),
    lambda g, env, key: ("http", f"$ curl -s -H 'Authorization: Bearer {HOLE}' https://api.example.com/v1/{g.word()}"),
    lambda g, env, key: (
        "log",
        f'Traceback (most recent call last):\n  File "/srv/app/{g.word()}.py", line {g.r.randint(10, 400)}, in connect\n'
        f"    session.login()\nAuthError: rejected credentials '{HOLE}'",
    ),
    lambda g, env, key: ("shell", f"$ {g.word()}-cli login --token {HOLE}"),
]


def _place(kind: str, where: str, template: str, secret: str) -> Item:
    at = template.index(HOLE)
    return Item(template.replace(HOLE, secret), kind, where, ((at, at + len(secret)),))


def _wrapped(g: Gen, kind: str, token: str) -> Item:
    """A token a terminal broke at its width: an 80-column hard wrap, or an agent's input box
    (its first line after the prompt's glyph, the rest indented)."""
    if g.r.random() < 0.5:
        head = f"$ {g.word()} deploy --token " if g.r.random() < 0.5 else "$ echo the key is "
        width, first, indent = 80, head, ""
    else:
        width, first, indent = 78, "› and my key is ", "  "
    for _ in range(20):  # the last line gets a part long enough to be told apart
        lines, spans, rest, line = [], [], token, first
        while rest:
            room = width - len(line)
            piece, rest = rest[:room], rest[room:]
            at = sum(len(x) + 1 for x in lines) + len(line)
            spans.append((at, at + len(piece)))
            lines.append(line + piece)
            line = indent
        if spans[-1][1] - spans[-1][0] >= 8:
            break
        first = first[:2] + "ok, " + first[2:]
    lines[-1] += " and then run the tests"
    return Item("\n".join(lines), kind, "terminal", tuple(spans))


# --- private keys
PEM_HEADS = {
    "private-key-rsa": ("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 64),
    "private-key-pkcs8": ("PRIVATE KEY", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", 64),
    "private-key-ec": ("EC PRIVATE KEY", "MHcCAQEEI", 64),
    "private-key-openssh": ("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA", 70),
    "private-key-encrypted": ("ENCRYPTED PRIVATE KEY", "MIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQwwDgQI", 64),
    "private-key-pgp": ("PGP PRIVATE KEY BLOCK", "lQOYBGB", 64),
}


def _pem_body(g: Gen, start: str, width: int, lines: int) -> list[str]:
    text = start + g.of(B64, width * lines - len(start) - g.r.randint(0, width - 8))
    return [text[i : i + width] for i in range(0, len(text), width)]


def _private_keys(g: Gen) -> list[Item]:
    out = []
    for kind, (label, start, width) in PEM_HEADS.items():
        for n in range(6):
            body = _pem_body(g, start, width, g.r.randint(4, 14))
            if kind == "private-key-pgp":
                body = body + ["=" + g.of(B64, 4)]
            begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
            style = n % 6
            if style == 0:  # cat
                pre = f"$ cat ~/.ssh/{g.word()}_key\n{begin}\n"
                if kind == "private-key-pgp":
                    pre += "Version: GnuPG v2\n\n"
                text, where = pre + "\n".join(body) + f"\n{end}\n$ ", "terminal"
                span = (len(pre), len(pre) + len("\n".join(body)))
            elif style == 1:  # JSON-escaped, as in a service-account key
                pre = f'  "private_key": "{begin}\\n'
                joined = "\\n".join(body)
                text, where = pre + joined + f'\\n{end}\\n",', "json"
                span = (len(pre), len(pre) + len(joined))
            elif style == 2:  # a YAML block scalar
                pre = f"tls:\n  key: |\n    {begin}\n    "
                joined = "\n    ".join(body)
                text, where = pre + joined + f"\n    {end}\n  cert_file: /etc/tls/cert.pem", "yaml"
                span = (len(pre), len(pre) + len(joined))
            elif style == 3:  # head: the key cut short, the prompt after it
                cut = body[: max(2, len(body) // 2)]
                pre = f"$ head -{len(cut) + 1} deploy.pem\n{begin}\n"
                text, where = pre + "\n".join(cut) + "\n$ ls", "terminal"
                span = (len(pre), len(pre) + len("\n".join(cut)))
            elif style == 4:  # tail: its BEGIN gone
                cut = body[len(body) // 2 :]
                pre = f"$ tail -{len(cut) + 1} deploy.pem\n"
                text, where = pre + "\n".join(cut) + f"\n{end}\n$ ", "terminal"
                span = (len(pre), len(pre) + len("\n".join(cut)))
            else:  # an environment variable with escaped line breaks
                pre = f'PRIVATE_KEY="{begin}\\n'
                joined = "\\n".join(body)
                text, where = pre + joined + f'\\n{end}"', "env"
                span = (len(pre), len(pre) + len(joined))
            out.append(Item(text, kind, where, (span,)))
    return out


# --- everything else a secret hides in: URLs, connection strings, headers, config syntaxes
def _structured(g: Gen) -> list[Item]:
    out: list[Item] = []

    def add(kind: str, where: str, template: str, secret: str) -> None:
        out.append(_place(kind, where, template, secret))

    host = lambda: g.r.choice(["db.internal", "10.0.3.17", "prod-db.cluster-c9akciq32.eu-west-1.rds.amazonaws.com", "localhost"])  # noqa: E731
    user = lambda: g.r.choice(["app", "admin", "postgres", "billing_rw", "svc-deploy", "root"])  # noqa: E731
    for kind, scheme, port in [
        ("postgres-url-password", "postgresql", 5432),
        ("mysql-url-password", "mysql", 3306),
        ("mongodb-url-password", "mongodb+srv", 0),
        ("redis-url-password", "redis", 6379),
        ("amqp-url-password", "amqps", 5671),
    ]:
        for n in range(7):
            pw = g.password()
            at = f"{host()}:{port}" if port else f"cluster0.{g.alnum(5).lower()}.mongodb.net"
            creds = f":{HOLE}" if kind == "redis-url-password" and n % 2 else f"{user()}:{HOLE}"
            url = f"{scheme}://{creds}@{at}/{g.word()}"
            add(
                kind,
                *g.r.choice(
                    [
                        ("env", f"DATABASE_URL={url}"),
                        ("yaml", f"  url: {url}"),
                        ("python", f'engine = create_engine("{url}")'),
                        ("log", f"{_ts(g)} INFO connecting to {url}?sslmode=require"),
                        ("json", f'  "connectionString": "{url}",'),
                        ("shell", f"$ psql '{url}'" if kind == "postgres-url-password" else f"$ {g.word()} --broker {url}"),
                    ]
                ),
                pw,
            )
    for n in range(7):
        pw = g.password()
        add(
            "https-url-password",
            *g.r.choice(
                [
                    ("shell", f"$ git clone https://{user()}:{HOLE}@git.example.com/acme/{g.word()}.git"),
                    ("log", f"remote: fetching https://deploy:{HOLE}@registry.example.com/v2/{g.word()}/manifests/latest"),
                    ("shell", f"$ pip install --index-url https://__token__:{HOLE}@pypi.example.com/simple {g.word()}"),
                ]
            ),
            pw,
        )
    for n in range(8):
        pw = g.password()
        add(
            "connection-string-password",
            *[
                (
                    "json",
                    f'  "DefaultConnection": "Server=tcp:{g.word()}.database.windows.net,1433;Initial Catalog=app;User ID={user()};Password={HOLE};Encrypt=True;"',
                ),
                ("env", f"JDBC_URL=jdbc:postgresql://{host()}:5432/app?user={user()}&password={HOLE}&ssl=true"),
                (
                    "properties",
                    f"spring.datasource.url=jdbc:sqlserver://{host()}:1433;databaseName=sales;user=sa;password={HOLE};encrypt=true",
                ),
                ("ini", f"Driver={{ODBC Driver 18 for SQL Server}};Server={host()};Uid=sa;Pwd={HOLE};"),
                ("properties", f"db.url=jdbc:oracle:thin:scott/{HOLE}@{host()}:1521/ORCL"),
                ("log", f"{_ts(g)} ERROR pool: cannot open Host={host()};Port=5432;Username={user()};Password={HOLE};Database=app"),
                ("env", f"AZURE_SQL=Server={host()};Database=app;User Id={user()};Password={HOLE};"),
                ("json", f'    "connection": "host={host()} port=5432 dbname=app user={user()} password={HOLE} sslmode=require"'),
            ][n],
            pw,
        )
    for n in range(8):
        key = g.b64bytes(64)
        acct = g.word() + "store" + g.digits(2)
        add(
            "azure-storage-key",
            *g.r.choice(
                [
                    (
                        "env",
                        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={HOLE};EndpointSuffix=core.windows.net",
                    ),
                    ("json", f'    "AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={HOLE}",'),
                    ("shell", f"$ az storage blob upload --account-name {acct} --account-key {HOLE} -f dump.sql -c backups"),
                ]
            ),
            key,
        )
    for n in range(6):
        key = g.b64bytes(32)
        add(
            "azure-servicebus-key",
            "env",
            f"SERVICEBUS=Endpoint=sb://{g.word()}-ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={HOLE}",
            key,
        )
    for n in range(6):
        sig = g.b64bytes(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        add(
            "azure-sas-token",
            *g.r.choice(
                [
                    (
                        "shell",
                        f"$ curl -O 'https://{g.word()}store.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-01-01T00:00:00Z&spr=https&sig={HOLE}'",
                    ),
                    (
                        "log",
                        f"GET /exports/report.csv?sp=r&st=2025-03-14T10:00:00Z&se=2025-03-15T10:00:00Z&sv=2022-11-02&sr=b&sig={HOLE} 200",
                    ),
                ]
            ),
            sig,
        )
    for n in range(10):
        claims = {
            "sub": g.digits(8),
            "name": g.word().title(),
            "iat": 1741900000 + g.r.randint(0, 10**6),
            "exp": 1742000000 + g.r.randint(0, 10**6),
        }
        if n % 2:
            claims["scope"] = "read:" + g.word()
        head = g.b64url_json({"alg": g.r.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"})
        jwt = f"{head}.{g.b64url_json(claims)}.{g.of(B64URL, g.r.choice([43, 86, 342]))}"
        add(
            "jwt",
            *[
                ("http", f"> Authorization: Bearer {HOLE}"),
                ("json", f'{{"access_token": "{HOLE}", "token_type": "Bearer", "expires_in": 3600}}'),
                ("http", f"Set-Cookie: session={HOLE}; Path=/; HttpOnly; Secure"),
                ("log", f"{_ts(g)} WARN auth: rejected token={HOLE} reason=expired"),
                ("http", f"GET /ws?token={HOLE} HTTP/1.1"),
                ("python", f'headers = {{"Authorization": "Bearer {HOLE}"}}'),
                ("terminal", f"the id_token I got back is {HOLE}"),
                ("env", f"API_JWT={HOLE}"),
                ("shell", f'$ curl -H "Authorization: Bearer {HOLE}" https://api.example.com/me'),
                ("yaml", f"  bearer: {HOLE}"),
            ][n],
            jwt,
        )
    for n in range(8):
        tok = g.r.choice([g.alnum(40), g.hex(40), g.of(B64URL, 48)])
        add(
            "bearer-token",
            *g.r.choice(
                [
                    ("http", f"> Authorization: Bearer {HOLE}"),
                    ("shell", f"$ curl -H 'Authorization: Bearer {HOLE}' https://api.example.com/v2/{g.word()}"),
                    ("python", f'requests.get(url, headers={{"Authorization": "Bearer {HOLE}"}})'),
                    ("http", f"authorization: token {HOLE}"),
                    ("json", f'  "headers": {{"Authorization": "Bearer {HOLE}"}},'),
                ]
            ),
            tok,
        )
    for n in range(8):
        pair = base64.b64encode(f"{user()}:{g.password()}".encode()).decode()
        add(
            "basic-auth-header",
            *g.r.choice(
                [
                    ("http", f"> Authorization: Basic {HOLE}"),
                    ("shell", f'$ curl -H "Authorization: Basic {HOLE}" https://jenkins.example.com/api/json'),
                    ("yaml", f"      Authorization: Basic {HOLE}"),
                ]
            ),
            pair,
        )
    for n in range(8):
        key = g.r.choice([g.hex(40), g.alnum(32)])
        add(
            "api-key-header",
            *g.r.choice(
                [
                    ("shell", f"$ curl https://api.example.com/v1/{g.word()} -H 'x-api-key: {HOLE}'"),
                    ("http", f"X-Api-Key: {HOLE}"),
                    ("http", f"x-auth-token: {HOLE}"),
                ]
            ),
            key,
        )
    for n in range(6):
        pw = g.password()
        add(
            "curl-user-password",
            *g.r.choice(
                [
                    ("shell", f"$ curl -u {user()}:{HOLE} https://api.example.com/v1/items"),
                    ("shell", f"$ curl --user '{user()}:{HOLE}' -X POST https://ci.example.com/job/build"),
                ]
            ),
            pw,
        )
    for n in range(6):
        auth = base64.b64encode(f"{user()}:{g.password()}".encode()).decode()
        add("docker-config-auth", "json", f'      "auth": "{HOLE}"', auth)
    for n in range(6):
        tok = g.r.choice([g.uuid(), "npm_" + g.alnum(36), g.b64bytes(24)])
        add(
            "npmrc-auth-token",
            "ini",
            g.r.choice(
                [
                    f"//registry.npmjs.org/:_authToken={HOLE}",
                    f"//npm.pkg.github.com/:_authToken={HOLE}",
                    f"//nexus.example.com/repository/npm/:_auth={HOLE}",
                ]
            ),
            tok,
        )
    for n in range(6):
        pw = g.password()
        add(
            "netrc-password",
            "ini",
            g.r.choice(
                [f"machine api.example.com login {user()} password {HOLE}", f"machine git.example.com\n  login {user()}\n  password {HOLE}"]
            ),
            pw,
        )
    for n in range(6):
        value = base64.b64encode(g.password().encode()).decode()
        add(
            "kubernetes-secret",
            "yaml",
            f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {g.word()}-db\ntype: Opaque\ndata:\n  password: {HOLE}",
            value,
        )
    for n in range(6):
        add(
            "slack-webhook",
            "shell",
            f'$ curl -X POST -d \'{{"text":"deployed"}}\' https://hooks.slack.com/services/T{g.of(UPPER_ALNUM, 9)}/B{g.of(UPPER_ALNUM, 10)}/{HOLE}',
            g.alnum(24),
        )
    for n in range(6):
        sid, tok = "AC" + g.hex(32), g.hex(32)
        add(
            "twilio-auth-token",
            "shell",
            f"$ curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:{HOLE}",
            tok,
        )
    return out


# passwords in the syntaxes they are written in
PASSWORD_SYNTAXES = [
    ("env", "password={}"),
    ("env", "DB_PASSWORD={}"),
    ("env", "POSTGRES_PASSWORD={}"),
    ("shell", "$ export MYSQL_ROOT_PASSWORD={}"),
    ("shell", "$ export REDIS_PASSWORD='{}'"),
    ("ini", "password = {}"),
    ("ini", "db_password={}"),
    ("yaml", "  password: {}"),
    ("yaml", "    password: '{}'"),
    ("yaml", '  admin_password: "{}"'),
    ("json", '  "password": "{}",'),
    ("json", '{{"username": "admin", "password": "{}"}}'),
    ("toml", 'password = "{}"'),
    ("properties", "spring.datasource.password={}"),
    ("xml", "    <password>{}</password>"),
    ("php", "    'password' => '{}',"),
    ("python", 'conn = psycopg2.connect(host="db", user="app", password="{}")'),
    ("go", '\tPassword: "{}",'),
    ("shell", "$ mysql -u root -p{} -h 127.0.0.1 shop"),
    ("shell", "$ sshpass -p {} ssh deploy@10.0.0.12"),
    ("shell", "$ mysqldump --password={} --all-databases"),
    ("shell", "$ docker run -d -e POSTGRES_PASSWORD={} postgres:16"),
    ("shell", "$ kubectl create secret generic db --from-literal=password={}"),
    ("shell", "$ helm install pg bitnami/postgresql --set auth.password={}"),
    ("log", "2025-03-14 10:22:01,331 DEBUG login attempt user=admin password={} ip=10.0.0.4"),
    ("terminal", "+  password: {}"),
    ("env", "SMTP_PASS={}"),
    ("env", "LDAP_BIND_PASSWORD={}"),
    ("shell", "$ PGPASSWORD={} psql -h db -U app"),
    ("ini", "pass = {}"),
]


def _passwords(g: Gen) -> list[Item]:
    out = []
    for n in range(2):
        for where, syntax in PASSWORD_SYNTAXES:
            out.append(_place("password", where, syntax.format(HOLE), g.password()))
    return out


def secrets(seed: int = SEED) -> list[Item]:
    g = Gen(seed)
    out: list[Item] = []
    for kind, make, env, key in TOKENS:
        for ctx in g.r.sample(PREFIXED_CONTEXTS, 6):
            where, template = ctx(g, env, key)
            out.append(_place(kind, where, template, make(g)))
        if len(make(g)) >= 36:
            out.append(_wrapped(g, kind, make(g)))
    for kind, make, env, key in NAMED:
        for ctx in g.r.sample(NAMED_CONTEXTS, 6):
            where, template = ctx(g, env, key)
            out.append(_place(kind, where, template, make(g)))
    # a Telegram bot's token is its id (public), ":", and the secret
    out = [
        Item(i.text, i.kind, i.where, ((i.text.index(":AA", i.secret[0][0]) + 1, i.secret[-1][1]),))
        if i.kind == "telegram-bot-token" and len(i.secret) == 1
        else i
        for i in out
    ]
    return out + _private_keys(g) + _structured(g) + _passwords(g)


# --- look-alikes: what secrets are made of (hex, base64, long random runs, names like
# "token" or "password"), in what a terminal shows every day, none of it secret
def _lookalike_templates(g: Gen) -> list[tuple[str, str, str]]:
    sha, short, uuid, b64 = g.hex(40), g.hex(7), g.uuid(), g.b64bytes(g.r.randint(24, 60))
    w, n, ts = g.word(), g.r.randint(2, 999), _ts(g)
    sha256, sha512 = g.hex(64), g.b64bytes(64)
    return [
        ("git-sha", "terminal", f"commit {sha}"),
        ("git-sha", "terminal", f"{short} fix({w}): retry the upload when the token expired"),
        ("git-sha", "terminal", f"Merge: {g.hex(7)} {g.hex(7)}"),
        ("git-sha", "terminal", f"HEAD is now at {short} Bump {w} to 2.{n}.0"),
        ("git-sha", "log", f"https://github.com/acme/{w}/commit/{sha}"),
        ("git-sha", "terminal", f"index {g.hex(7)}..{g.hex(7)} 100644"),
        ("git-sha", "terminal", f"  ref: {sha}  refs/heads/main"),
        ("git-sha", "yaml", f"    - uses: actions/checkout@{sha} # v4.2.2"),
        ("uuid", "log", f"{ts} INFO request_id={uuid} status=200 duration_ms={n}"),
        ("uuid", "json", f'  "id": "{uuid}",'),
        ("uuid", "yaml", f"  uid: {uuid}"),
        ("uuid", "http", f"X-Request-Id: {uuid}"),
        ("uuid", "log", f"Created subscription /subscriptions/{uuid}/resourceGroups/rg-{w}"),
        ("uuid", "env", f"AZURE_TENANT_ID={uuid}"),
        ("uuid", "env", f"AZURE_CLIENT_ID={uuid}"),
        ("lockfile-hash", "toml", f'    {{file = "{w}-2.{n}.0-py3-none-any.whl", hash = "sha256:{sha256}"}},'),
        ("lockfile-hash", "ini", f"{w}==2.{n}.0 --hash=sha256:{sha256}"),
        ("lockfile-hash", "toml", f'checksum = "{sha256}"'),
        ("lockfile-hash", "json", f'      "integrity": "sha512-{sha512}",'),
        ("lockfile-hash", "terminal", f"github.com/acme/{w} v1.{n}.0 h1:{g.b64bytes(32)}"),
        ("lockfile-hash", "yaml", f"  resolution: {{integrity: sha512-{sha512}}}"),
        ("lockfile-hash", "terminal", f"  integrity sha1-{g.b64bytes(20)}"),
        ("file-hash", "terminal", f"{sha256}  {w}-linux-amd64.tar.gz"),
        ("file-hash", "terminal", f"{g.hex(32)}  {w}.iso"),
        ("file-hash", "log", f"Digest: sha256:{sha256}"),
        ("file-hash", "shell", f"$ docker pull ghcr.io/acme/{w}@sha256:{sha256}"),
        ("file-hash", "terminal", f'{g.hex(12)}   ghcr.io/acme/{w}:latest   "/entrypoint.sh"   {n} minutes ago   Up'),
        ("file-hash", "http", f'ETag: "{g.hex(32)}"'),
        ("file-hash", "log", f"x-amz-id-2: {g.b64bytes(56)}"),
        ("file-hash", "http", f"Content-MD5: {g.b64bytes(16)}"),
        ("file-hash", "yaml", f"  sha256: {sha256}"),
        ("file-hash", "json", f'  "checksum": "{sha256}",'),
        ("base64-file", "html", f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{g.b64bytes(60)}">'),
        ("base64-file", "terminal", f"MIIDdzCCAl+gAwIBAgIE{g.of(B64, 44)}"),
        ("base64-file", "terminal", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{g.of(B64, 43)} {w}@laptop"),
        ("base64-file", "terminal", f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{g.of(B64, 120)} deploy@ci"),
        ("base64-file", "yaml", f"    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{g.of(B64, 80)}"),
        ("base64-file", "yaml", f"  caBundle: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{g.of(B64, 60)}"),
        ("base64-file", "shell", f"$ echo '{base64.b64encode(f'hello {w} {n}'.encode()).decode()}' | base64 -d"),
        ("base64-file", "json", f'  "content": "{b64}",'),
        ("base64-file", "log", f"{ts} DEBUG payload={base64.b64encode(json.dumps({'event': w, 'count': n}).encode()).decode()}"),
        (
            "base64-file",
            "terminal",
            f"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE{g.of(B64, 44)}\n{g.of(B64, 64)}\n-----END CERTIFICATE-----",
        ),
        (
            "base64-file",
            "terminal",
            f"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE{g.of(B64, 28)}\n{g.of(B64, 24)}==\n-----END PUBLIC KEY-----",
        ),
        (
            "base64-file",
            "terminal",
            f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBG{g.of(B64, 58)}\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----",
        ),
        (
            "identifier",
            "log",
            f"org.springframework.beans.factory.BeanCreationException: Error creating bean with name '{w}TokenRepository'",
        ),
        ("identifier", "terminal", f"tests/test_{w}.py::test_the_token_refresh_handles_expired_credentials_gracefully PASSED"),
        ("identifier", "log", f"github.com/acme/{w}/internal/auth.(*TokenValidator).ValidateAccessToken(0xc000{g.hex(6)})"),
        ("identifier", "terminal", f"  dist/assets/index-{g.alnum(8)}.js   {n}.42 kB │ gzip: 61.20 kB"),
        ("identifier", "terminal", f"main.{g.hex(20)}.chunk.js"),
        (
            "identifier",
            "terminal",
            f"{w}-deployment-{g.hex(10)}-{g.of(string.ascii_lowercase + string.digits, 5)}   1/1   Running   0   {n}m",
        ),
        ("identifier", "log", f"arn:aws:iam::{g.digits(12)}:role/{w}-token-exchange-role"),
        ("identifier", "log", f"arn:aws:secretsmanager:eu-west-1:{g.digits(12)}:secret:prod/{w}/db-password-{g.alnum(6)}"),
        ("identifier", "log", f"Launched instance i-0{g.hex(16)} in subnet-0{g.hex(16)} (sg-0{g.hex(16)})"),
        ("identifier", "json", f'  "customer": "cus_{g.alnum(14)}", "payment_intent": "pi_{g.alnum(24)}",'),
        ("identifier", "env", f"STRIPE_PUBLISHABLE_KEY=pk_live_{g.alnum(99)}"),
        (
            "identifier",
            "env",
            f"GOOGLE_CLIENT_ID={g.digits(12)}-{g.of(string.ascii_lowercase + string.digits, 32)}.apps.googleusercontent.com",
        ),
        ("identifier", "log", f"posted to channel C0{g.of(UPPER_ALNUM, 8)} by U0{g.of(UPPER_ALNUM, 8)}"),
        ("identifier", "css", f'<button class="Button_primary__{g.alnum(5)} Button_large__{g.alnum(5)}">'),
        ("identifier", "python", f"def validate_{w}_access_token_signature_and_expiry(token: str) -> bool:"),
        ("identifier", "env", f"TWILIO_ACCOUNT_SID=AC{g.hex(32)}"),
        ("identifier", "log", f"traceparent: 00-{g.hex(32)}-{g.hex(16)}-01"),
        ("identifier", "log", f"{ts} INFO trace_id={g.hex(32)} span_id={g.hex(16)} {w} done"),
        ("identifier", "terminal", f"  ● {w}.service - {w.title()} worker\n     Loaded: loaded (/etc/systemd/system/{w}.service; enabled)"),
        ("identifier", "terminal", f"https://www.youtube.com/watch?v={g.of(B64URL, 11)}"),
        ("identifier", "terminal", f"https://docs.google.com/document/d/1{g.of(B64URL, 43)}/edit"),
        ("code", "python", f'{w}_token = os.environ["{w.upper()}_TOKEN"]'),
        ("code", "python", "password = getpass.getpass('Password: ')"),
        ("code", "python", f"api_key = settings.{w.upper()}_API_KEY"),
        ("code", "python", f"token = self._{w}_client.fetch_token(scope=SCOPES)"),
        ("code", "python", "def login(username: str, password: str) -> Session:"),
        ("code", "python", "    token: str"),
        ("code", "python", "    password: Optional[str] = None"),
        ("code", "js", f"const apiKey = process.env.{w.upper()}_API_KEY;"),
        ("code", "js", "headers: { Authorization: `Bearer ${token}` },"),
        ("code", "ts", "  password: string;"),
        ("code", "go", '\tPassword: os.Getenv("DB_PASSWORD"),'),
        ("code", "shell", "$ export GITHUB_TOKEN=$(gh auth token)"),
        ("code", "shell", f'$ export {w.upper()}_API_KEY="$(vault kv get -field=key secret/{w})"'),
        ("code", "yaml", "          AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}"),
        ("code", "yaml", '  password: "{{ vault_db_password }}"'),
        ("code", "yaml", "  password: ${DB_PASSWORD}"),
        ("code", "yaml", f"        secretKeyRef:\n          name: {w}-db\n          key: password"),
        ("code", "env", f"{w.upper()}_PASSWORD_FILE=/run/secrets/{w}_password"),
        ("code", "env", "SECRET_KEY_PATH=/etc/app/secret.key"),
        ("code", "env", f"API_TOKEN=<your-{w}-token>"),
        ("code", "env", "OPENAI_API_KEY=sk-..."),
        ("code", "env", "PASSWORD_MIN_LENGTH=12"),
        ("code", "ini", "token_url = https://auth.example.com/oauth/token"),
        ("code", "shell", f"$ docker login -u {w} --password-stdin ghcr.io < token.txt"),
        ("code", "shell", f'$ gh secret set {w.upper()}_TOKEN --body "$TOKEN"'),
        ("code", "json", f'  "max_tokens": {n * 8},'),
        ("code", "json", '  "token_type": "Bearer",'),
        ("code", "json", '  "password": "********",'),
        ("code", "yaml", "  auth_method: oauth2"),
        ("code", "terminal", f"✻ Thinking… ({n}s · ↓ {n * 7} tokens)"),
        ("code", "terminal", f"Total tokens: {n * 113} (input {n * 100}, output {n * 13})"),
        ("code", "log", f"{ts} INFO password reset link sent to user {n}"),
        ("code", "terminal", f"  sk-proj-****{g.alnum(4)}   created {n} days ago"),
        ("code", "terminal", f"AKIA************{g.of(UPPER_ALNUM, 4)}  active"),
        ("code", "terminal", f"ghp_{'x' * 36}"),
        ("code", "terminal", "Enter the passphrase for key '/home/dev/.ssh/id_ed25519':"),
        ("code", "log", "WARNING: Using a password on the command line interface can be insecure."),
        ("code", "terminal", f"Forgot your password? https://example.com/reset?step={n}"),
        ("code", "python", f'url = f"postgres://{{user}}:{{password}}@{{host}}:5432/{w}"'),
        ("code", "env", f"REDIS_URL=redis://redis:6379/{n % 16}"),
        ("code", "env", f"DATABASE_URL=postgres://app@db.internal:5432/{w}"),
        ("code", "shell", f"$ git clone git@github.com:acme/{w}.git"),
        ("code", "shell", f"$ ssh -p 2222 deploy@{w}.example.com"),
        ("code", "shell", f"$ docker run -p 8080:80 -v $PWD:/src {w}:latest"),
        ("code", "shell", "$ mkdir -p build/dist"),
        ("code", "terminal", f'secret_name = "prod/{w}/db"'),
        ("code", "python", '    raise ValueError("Token must be 40 characters")'),
        ("code", "python", 'TOKEN_PATTERN = re.compile(r"ghp_[A-Za-z0-9]{36}")'),
        ("code", "terminal", f"  - Token: gho_{'*' * 36}"),
        ("code", "terminal", "WARNING! Your password will be stored unencrypted in /root/.docker/config.json."),
        ("code", "terminal", "credential.helper=osxkeychain"),
        ("code", "go", "\t\tAPIKey:  cfg.APIKey,"),
        ("code", "ts", "  token: process.env.GITHUB_TOKEN!,"),
        ("code", "yaml", f"  key_fingerprint: SHA256:{g.b64bytes(32).rstrip('=')}"),
        ("code", "json", f'  "key_id": "{g.hex(16)}",'),
        ("code", "http", f"X-GitHub-Token-Expiration: 2025-0{n % 9 + 1}-14 10:00:00 UTC"),
        ("code", "http", 'WWW-Authenticate: Bearer realm="api", error="invalid_token"'),
        ("code", "terminal", f"Note: the token: expires in {n * 60} seconds"),
        ("numbers", "log", f"{ts} GET /api/v1/{w}?page={n}&limit=50 200 {n}ms 10.0.{n % 255}.{n % 200} Mozilla/5.0"),
        ("numbers", "terminal", f"  {w:<12} {n:>6} {g.r.random():.6f} {g.r.randint(10**9, 10**10)}"),
        ("numbers", "terminal", f"link/ether 02:42:{g.hex(2)}:{g.hex(2)}:{g.hex(2)}:{g.hex(2)} brd ff:ff:ff:ff:ff:ff"),
        ("numbers", "terminal", f"inet6 fe80::{g.hex(4)}:{g.hex(4)}:{g.hex(4)}:{g.hex(4)}/64 scope link"),
        ("numbers", "css", f"  color: #{g.hex(6)}; background: #{g.hex(6)};"),
        ("prose", "terminal", "The session key point is that compaction loses context, so we keep a digest."),
        ("prose", "terminal", f"I rotated the {w} API key in the dashboard; the old one is revoked now."),
        ("prose", "terminal", "Set ANTHROPIC_API_KEY in your shell before you run the tests."),
        ("prose", "terminal", "The token bucket refills at 10 tokens per second, with a burst of 40."),
    ]


def lookalikes(seed: int = SEED, rounds: int = 4) -> list[Item]:
    g = Gen(seed + 1)
    out: list[Item] = []
    seen: set[str] = set()
    for _ in range(rounds):
        for kind, where, text in _lookalike_templates(g):
            if text not in seen:
                seen.add(text)
                out.append(Item(text, kind, where))
    return out


def corpus(seed: int = SEED) -> list[Item]:
    return secrets(seed) + lookalikes(seed)


if __name__ == "__main__":
    import collections

    items = corpus()
    found = collections.Counter(i.kind for i in items if i.is_secret)
    print(f"{sum(found.values())} secrets of {len(found)} kinds, {sum(not i.is_secret for i in items)} look-alikes")
