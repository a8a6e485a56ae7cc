"""Secrets in real formats are masked; ordinary code is left alone."""

import pytest

from supervisor.contexts.redact import findings, redact

# Real formats, fake values (made up here; none was ever valid).
SECRETS = [
    ("anthropic-key", "export ANTHROPIC_KEY_FOR_TEST sk-ant-api03-Xq9vB2mK7pL4nR8sT1wY6zA3cE5gH0jU2iO4kM6nP8qR-AbCdEfGhIjKlMnOpQrStUvWx-AA"),
    ("openai-key", "OPENAI says: sk-proj-4fG7hJ9kL2mN5pQ8rS1tV3wX6yZ0aB4cD7eF9gH2jK5mN8pQ1rS"),
    ("aws-access-key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
    ("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("github-token", "git clone https://x:ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R@github.com/o/r"),
    ("github-token", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"),
    ("slack-token", "SLACK xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("slack-webhook", "curl https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("google-api-key", "key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("jwt", "cookie: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98xZ\nQ2w3e4r5t6y7u8i9o0p\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----"),
    ("env-secret", "DB_PASSWORD=hunter2hunter2"),
    ("env-secret", "export STRIPE_API_KEY='rk_live_51Habcdefghijklmnop'"),
    ("secret-assignment", 'password = "correct horse battery staple"'),
    ("secret-assignment", '{"client_secret": "0a1b2c3d4e5f6a7b8c9d"}'),
    ("secret-assignment", "db:\n  password: 'S3cr3t!pass'"),
    ("url-password", "DATABASE_URL=postgres://admin:pa55w0rd@db.internal:5432/app"),
    ("bearer-token", "Authorization: Bearer abcdef0123456789abcdef"),
    ("cli-secret", "mysql --password=Sup3rS3cret -u root"),
]


@pytest.mark.parametrize("kind, text", SECRETS)
def test_each_secret_is_masked_with_its_kind(kind, text):
    out = redact(text)
    assert f"[REDACTED:{kind}]" in out
    secret_part = {"url-password": "pa55w0rd", "private-key": "MII" if "RSA" in text else "b3Bl"}.get(kind)
    if secret_part:
        assert secret_part not in out
    # nothing of the masked value survives, whatever else is kept around it
    assert redact(out) == out


def test_the_text_around_a_secret_is_kept():
    assert redact("DATABASE_URL=postgres://admin:pa55w0rd@db:5432/app") in (
        "DATABASE_URL=postgres://admin:[REDACTED:url-password]@db:5432/app",
    )
    assert redact('password = "hunter2!"') == 'password = "[REDACTED:secret-assignment]"'


ORDINARY = r'''
import os
token = get_token()
api_key = os.environ["ANTHROPIC_API_KEY"]
API_TOKEN = os.environ.get("API_TOKEN")
password = request.form["password"]
if password == "":
    raise ValueError("Enter your password: ")
def check_token(token: str) -> bool:
    return token.startswith("sk-")
export GITHUB_TOKEN=$GITHUB_TOKEN
SECRET_KEY = settings.SECRET_KEY
const apiKey = process.env.OPENAI_API_KEY;
headers = {"Authorization": f"Bearer {token}"}
curl -H "Authorization: Bearer $TOKEN" https://api.example.com
git commit -m "fix: rotate the token cache and add --token-file flag"
token_type = "bearer"
passwordless login via https://example.com/login
password: ${DB_PASSWORD}
max_tokens = 4096
The session key point is that compaction loses context.
ssh user@host.example.com
https://github.com/anthropics/claude-code/issues/1234
sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
uuid = "8db7d9d0-5034-4a3a-804d-a0b44c88272a"
'''


def test_no_false_positive_on_ordinary_code():
    assert redact(ORDINARY) == ORDINARY, findings(ORDINARY)
