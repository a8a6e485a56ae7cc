"""Secrets in real formats are masked; ordinary code is left alone."""

import random
import time

import pytest

from supervisor.redact import findings, redact

# Real formats, fake values (made up here; none was ever valid): (kind, text, the secret in
# it that must not survive). tests/test_faults_security.py prints them all in a session.
_PEM_BODY = (
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"
)
SECRETS = [
    (
        "anthropic-key",
        "export ANTHROPIC_KEY_FOR_TEST sk-ant-api03-Xq9vB2mK7pL4nR8sT1wY6zA3cE5gH0jU2iO4kM6nP8qR-AbCdEfGhIjKlMnOpQrStUvWx-AA",
        "sk-ant-api03-Xq9vB2mK7pL4nR8sT1wY6zA3cE5gH0jU2iO4kM6nP8qR-AbCdEfGhIjKlMnOpQrStUvWx-AA",
    ),
    (
        "openai-key",
        "OPENAI says: sk-proj-4fG7hJ9kL2mN5pQ8rS1tV3wX6yZ0aB4cD7eF9gH2jK5mN8pQ1rS",
        "4fG7hJ9kL2mN5pQ8rS1tV3wX6yZ0aB4cD7eF9gH2jK5mN8pQ1rS",
    ),
    (
        "openai-key",
        "client = OpenAI(api_key=sk-4fG7hJ9kL2mN5pQ8rS1tV3wX6yZ0aB4cD7eF9gH2jK5mN)",
        "4fG7hJ9kL2mN5pQ8rS1tV3wX6yZ0aB4cD7eF9gH2jK5mN",
    ),
    ("aws-access-key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-access-key", '"AccessKeyId": "ASIAQ3EGRTM7ZJXK4W2P",', "ASIAQ3EGRTM7ZJXK4W2P"),
    ("aws-secret-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    (
        "aws-session-token",
        "aws_session_token = IQoJb3JpZ2luX2VjNkQkJnOkdsm2FC+R6YSRQr/+jf0SaWl7dUbo11sFuWvPAX2LJh8NoMtwh6c9eOnzxTBE8C4xJZwN9H+ZRl9CZgBrXJhEb8V5F1u1uPsHqIgtwaAtqkTIm97kMcy1yl4Ae0/uNONZjN7iUjrnY7p4bW8ELo6bAtLWMRYlGyzWoQNJ8Q5WlnsmqwxyZe7lmDeup30jR2rAsX9Q0bZOFcHQyRN4nWAQLnuGMDTszzdzkrF91QQlUI7p5rEiHvQspaKUEUvxj6eZxrNWcuz07esXpZwRqHFQgesZ/n8S00K+703p",
        "IQoJb3JpZ2luX2VjNkQkJnOkdsm2FC+R6YSRQr",
    ),
    (
        "secret-assignment",
        '    "SessionToken": "IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJHMEUCIQDx7k2Lm9Pq4Rs8Tu3Vw6Xy1Za5Bc0De7Fg2Hi9Jk4LmAIgN3oP6qR1sT8uV5wX2yZ9aB4",',
        "IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJHMEUCIQDx7k2Lm9Pq4Rs8Tu3Vw6Xy1Za5Bc0De7Fg2Hi9Jk4LmAIgN3oP6qR1sT8uV5wX2yZ9aB4",
    ),
    (
        "github-token",
        "git clone https://x:ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R@github.com/o/r",
        "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    ),
    (
        "github-token",
        "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
    ),
    ("github-token", "oauth: gho_C3J27XDCG2LmlZGEONYlgCtjfIZ4SOcMz9CP", "gho_C3J27XDCG2LmlZGEONYlgCtjfIZ4SOcMz9CP"),
    ("github-token", "user-to-server ghu_VNPkNa1Hedcm4pMbXDuCL1mHoOsFaQfDPrAJ", "ghu_VNPkNa1Hedcm4pMbXDuCL1mHoOsFaQfDPrAJ"),
    ("github-token", "GITHUB_TOKEN: ghs_71fTquWoGsbeKXgzg2sye9b2Rann76dEyTzA", "ghs_71fTquWoGsbeKXgzg2sye9b2Rann76dEyTzA"),
    ("github-token", "refresh ghr_eKOmXRrvftva9AW7hipTgadDZFlRJmCGmUXi", "ghr_eKOmXRrvftva9AW7hipTgadDZFlRJmCGmUXi"),
    ("gitlab-token", "git remote add origin https://oauth2@gitlab.com/g/p.git  # glpat-1XoY1BaIMcAxYmfsB4Hb", "glpat-1XoY1BaIMcAxYmfsB4Hb"),
    (
        "slack-token",
        "SLACK xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    ),
    (
        "slack-token",
        "app token xapp-1-A0BZHXEZRDY-1234567890123-f9fa8201bab985fcab0621dd282eecc1489fbf046878770c07f2a8b30a6c5655",
        "f9fa8201bab985fcab0621dd282eecc1489fbf046878770c07f2a8b30a6c5655",
    ),
    ("slack-webhook", "curl https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "XXXXXXXXXXXXXXXXXXXXXXXX"),
    (
        "stripe-key",
        "stripe.api_key = sk_live_51XNv1syeefnLOpaMxxNDi9LE1Ki3ylOjt6o0NpUmkVO8JmR8y4EMfAdggcG9q",
        "51XNv1syeefnLOpaMxxNDi9LE1Ki3ylOjt6o0NpUmkVO8JmR8y4EMfAdggcG9q",
    ),
    (
        "stripe-key",
        "restricted rk_live_51pVTzqA05MFsHl7UeioEJP2NNern66nVberACpdclsxHKifxi5CvQUSHL8iLc",
        "51pVTzqA05MFsHl7UeioEJP2NNern66nVberACpdclsxHKifxi5CvQUSHL8iLc",
    ),
    ("stripe-key", "Ready! Your webhook signing secret is whsec_7bE6wSt9cbMOeEeUtuieeCIxVc57VVTi", "7bE6wSt9cbMOeEeUtuieeCIxVc57VVTi"),
    ("google-api-key", "key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    (
        "google-oauth-token",
        "access token ya29.a0AfH6SMBx3kLm9Nv2Rp8Tw6Yz1Ab5Cd7Ef0Gh3Ij4Kl5Mn",
        "a0AfH6SMBx3kLm9Nv2Rp8Tw6Yz1Ab5Cd7Ef0Gh3Ij4Kl5Mn",
    ),
    ("huggingface-token", "huggingface-cli login --token hf_Y96vwfRE5e32A8Yb3FKaNQyyLaMeffOhq4", "hf_Y96vwfRE5e32A8Yb3FKaNQyyLaMeffOhq4"),
    ("npm-token", "//registry.npmjs.org/:_authToken=npm_AUvy7VSLDCD1IfHWGbtMfEbo9ShFXNQ6Fq5a", "npm_AUvy7VSLDCD1IfHWGbtMfEbo9ShFXNQ6Fq5a"),
    ("npm-token", "//registry.npmjs.org/:_authToken=6f9a1c2e-4b7d-4e8a-9c3f-2d1b0a9e8f7c", "6f9a1c2e-4b7d-4e8a-9c3f-2d1b0a9e8f7c"),
    (
        "pypi-token",
        "password = pypi-AgEIcHlwaS5vcmcVMszvR4_EPZGz3zBXCOArr_SfiJvo58JB0W_O5PjeJfJTNcrZ6ydIEsgo5nVjzz8Gwb8ewCISuYCl0Xq56zaWR7PAmpBFXlNPHcSke4R1J-dBi2ewQr8t4_l",
        "VMszvR4_EPZGz3zBXCOArr_SfiJvo58JB0W_O5PjeJfJTNcrZ6ydIEsgo5nVjzz8Gwb8ewCISuYCl0Xq56zaWR7PAmpBFXlNPHcSke4R1J-dBi2ewQr8t4_l",
    ),
    (
        "digitalocean-token",
        "doctl auth init -t dop_v1_7e9589c6948f6d30c01c3f252edc87ff4adfa36d0840164709ab7f3f386d0cd5",
        "7e9589c6948f6d30c01c3f252edc87ff4adfa36d0840164709ab7f3f386d0cd5",
    ),
    ("twilio-key", "Created API key SK66647b5aa666347428c3dd46c036bb3a", "SK66647b5aa666347428c3dd46c036bb3a"),
    (
        "twilio-auth-token",
        "client credentials AC62f301f46536559314e23acedbd6b016:5debbc6530a2c6a8835c4abd5c652a9f",
        "5debbc6530a2c6a8835c4abd5c652a9f",
    ),
    (
        "sendgrid-key",
        "SENDGRID says 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",
        "4ZgzWbmHGJR1m4jfXuX8v_h2_1KZNUK9IKLdbFfu0Xg",
    ),
    (
        "jwt",
        "cookie: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98xZ\nQ2w3e4r5t6y7u8i9o0p\n-----END RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA7bq98xZ",
    ),
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    ),
    ("private-key", f"-----BEGIN PRIVATE KEY-----\n{_PEM_BODY}\n-----END PRIVATE KEY-----", "C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"),
    (
        "private-key",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJBgkqhkiG9w0BBQ0wPDAbBgkqhkiG9w0BBQwwDgQIyJ2Vd8XyZ3kCAggA\nMB0GCWCGSAFlAwQBKgQQb4Y7s2Wq9Ld1Kf3Zt8x5nQSCBNDm0zXq7Hk1Vw2\n-----END ENCRYPTED PRIVATE KEY-----",
        "MB0GCWCGSAFlAwQBKgQQb4Y7s2Wq9Ld1Kf3Zt8x5nQSCBNDm0zXq7Hk1Vw2",
    ),
    (
        "private-key",
        "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oA2F2Y4n5Y0moAoGCCqGSM49\nAwEHoUQDQgAEYH7qk3Xh5oZ2v8Jw1L9mC4tR6yN0pE3sA5dF7gH2jK4lM6nB8vC1\n-----END EC PRIVATE KEY-----",
        "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oA2F2Y4n5Y0moAoGCCqGSM49",
    ),
    (
        "private-key",
        "-----BEGIN DSA PRIVATE KEY-----\nMIIBuwIBAAKBgQDd7Fk3Qx9L2mN5pR8sT1vW4yZ7aC0dF3gH6jK9lM2nP5qR8sT1\n-----END DSA PRIVATE KEY-----",
        "MIIBuwIBAAKBgQDd7Fk3Qx9L2mN5pR8sT1vW4yZ7aC0dF3gH6jK9lM2nP5qR8sT1",
    ),
    (
        "private-key",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBGBx3kQBCADLbQ7kx2V5uM3l8mZ1w4bV0yWcE3sPdGt9o2X6kq8JvP0nRlTa\n=x3Qp\n-----END PGP PRIVATE KEY BLOCK-----",
        "lQOYBGBx3kQBCADLbQ7kx2V5uM3l8mZ1w4bV0yWcE3sPdGt9o2X6kq8JvP0nRlTa",
    ),
    # cut short: `head -3 ~/.ssh/id_ed25519`, then the prompt
    (
        "private-key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDf3k2lq1Jm8r5sX0vN7bYc4aTq9Wz1eUoP2hGi3KjLmAAAAJgVx8mnFcfJ\n$ ls",
        "QyNTUxOQAAACDf3k2lq1Jm8r5sX0vN7bYc4aTq9Wz1eUoP2hGi3KjLmAAAAJgVx8mnFcfJ",
    ),
    (
        "private-key",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240115\nPublic-Lines: 2\n"
        "AAAAC3NzaC1lZDI1NTE5AAAAIHq8oV3pW2nK7sL0dF9gH4jB6cX1zY5tR8uE2wQ3\naS7m\nPrivate-Lines: 1\nAAAAIFm4nX7qP2sK9vL3dW8hG5jC1bY6tZ0rE4uQ7wA2xS9k\n"
        "Private-MAC: 4b7f2a9c1e8d3f6a0b5c9e2d7f1a4c8b3e6d9f2a5c8b1e4d7f0a3c6b9e2d5f8a",
        "AAAAIFm4nX7qP2sK9vL3dW8hG5jC1bY6tZ0rE4uQ7wA2xS9k",
    ),
    # a GCP service-account key as `cat key.json` shows it: the key (JSON-escaped) and its id
    (
        "private-key",
        '{\n  "type": "service_account",\n  "project_id": "demo-project-123456",\n'
        '  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDf0k8a2b3c4d5e\\n-----END PRIVATE KEY-----\\n",\n'
        '  "client_email": "svc@demo-project-123456.iam.gserviceaccount.com"\n}',
        "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDf0k8a2b3c4d5e",
    ),
    ("secret-assignment", '  "private_key_id": "3add0a19dca9273e7c1f379c72bd57d32343e097",', "3add0a19dca9273e7c1f379c72bd57d32343e097"),
    (
        "private-key",
        "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQoX5kWPGhMYE+fytqeAN029rHO5WsAJ5ZrXTCnLVSBrfd9bMiBTpVEHl2pY",
        "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQoX5kWPGhMYE+fytqeAN029rHO5WsAJ5ZrXTCnLVSBrfd9bMiBTpVEHl2pY",
    ),
    (
        "azure-key",
        "AZURE_STORAGE_CONNECTION_STRING: DefaultEndpointsProtocol=https;AccountName=demostore01;AccountKey=OYgOjC29GFfm7sFog16pAgTtpU4r16H1UrLqE9oNTJIyJEyFzfhbIH2denCJjluEV99TARR/rjp5B42HXtVtPL==;EndpointSuffix=core.windows.net",
        "OYgOjC29GFfm7sFog16pAgTtpU4r16H1UrLqE9oNTJIyJEyFzfhbIH2denCJjluEV99TARR/rjp5B42HXtVtPL==",
    ),
    (
        "azure-key",
        "Endpoint=sb://demo-ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=x2Vm7Pkk3+7MbjNBkM/PKsCTPUpP4J4N6OCZFkUUdUY=",
        "x2Vm7Pkk3+7MbjNBkM/PKsCTPUpP4J4N6OCZFkUUdUY=",
    ),
    (
        "azure-sas",
        "az storage blob download --blob-url 'https://demostore01.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2025-01-01T00:00:00Z&spr=https&sig=LyYmVKxZyIj1LKllfWD42sZboHdIkK%2Bs9bP1ZBeLI%3D'",
        "LyYmVKxZyIj1LKllfWD42sZboHdIkK%2Bs9bP1ZBeLI%3D",
    ),
    (
        "docker-auth",
        '{\n  "auths": {\n    "ghcr.io": {\n      "auth": "ZGVwbG95Ym90OmdocF9OVjFyWmtpbXlOUXNvUGxhRUxTOFk3aXJTckFxT1F6eTdSaWQ="\n    }\n  }\n}',
        "ZGVwbG95Ym90OmdocF9OVjFyWmtpbXlOUXNvUGxhRUxTOFk3aXJTckFxT1F6eTdSaWQ=",
    ),
    ("env-secret", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("env-secret", 'export CI_DEPLOY_TOKEN="d3pl0y-t0k3n-8f7e6d5c"', "d3pl0y-t0k3n-8f7e6d5c"),
    ("env-secret", "export MAILGUN_API_KEY='key-3ax6xnjp29jd6fds4gc373sgvjxteol0'", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    (
        "aws-session-token",
        "AWS_SESSION_TOKEN=FwoGZXIvYXdzEJr//////////wEaDHVzZXIxMjM0NTY3OCKAAc",
        "FwoGZXIvYXdzEJr//////////wEaDHVzZXIxMjM0NTY3OCKAAc",
    ),
    ("secret-assignment", 'password = "correct horse battery staple"', "correct horse battery staple"),
    ("secret-assignment", '{"client_secret": "0a1b2c3d4e5f6a7b8c9d"}', "0a1b2c3d4e5f6a7b8c9d"),
    ("secret-assignment", "db:\n  password: 'S3cr3t!pass'", "S3cr3t!pass"),
    ("url-password", "DATABASE_URL=postgres://admin:pa55w0rd@db.internal:5432/app", "pa55w0rd"),
    ("url-password", 'engine = create_engine("postgresql+psycopg://app:Pg!Secret99@db:5432/app")', "Pg!Secret99"),
    ("url-password", "mysql://root:MyS3cretPw@127.0.0.1:3306/shop", "MyS3cretPw"),
    ("url-password", "MONGO_URI: mongodb+srv://admin:M0ngoPass2024@cluster0.abcde.mongodb.net/test?retryWrites=true", "M0ngoPass2024"),
    ("url-password", "REDIS_URL: redis://:s3cr3tRedisPass@cache.internal:6379/0", "s3cr3tRedisPass"),
    ("url-password", "broker: amqp://guest:RabbitPass77@mq:5672/", "RabbitPass77"),
    ("connection-password", 'url: "jdbc:postgresql://db.internal:5432/app?user=app&password=JdbcS3cret!"', "JdbcS3cret!"),
    ("connection-password", "jdbc:sqlserver://db:1433;databaseName=sales;user=sa;password=Sq1Server#Pass;encrypt=true", "Sq1Server#Pass"),
    ("connection-password", "jdbc:oracle:thin:scott/T1gerOracle@db.internal:1521/ORCL", "T1gerOracle"),
    (
        "connection-password",
        '"DefaultConnection": "Server=tcp:demo.database.windows.net,1433;Initial Catalog=app;User ID=admin; Password=Ad0Net$ecret;Encrypt=True;"',
        "Ad0Net$ecret",
    ),
    ("connection-password", "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;Pwd=0dbcS3cret;", "0dbcS3cret"),
    ("bearer-token", "Authorization: Bearer abcdef0123456789abcdef", "abcdef0123456789abcdef"),
    ("bearer-token", "authorization: Basic YWRtaW46aHVudGVyMmh1bnRlcjI=", "YWRtaW46aHVudGVyMmh1bnRlcjI="),
    ("bearer-token", 'headers = {"Authorization": "Bearer 53169b3ca0f5b29e97cd4c694e538fd3"}', "53169b3ca0f5b29e97cd4c694e538fd3"),
    (
        "api-key-header",
        "curl -H 'x-api-key: af9bd9bf77ba5422393ef15df1b8cc88ba5a64d4' https://api.example.com/v1",
        "af9bd9bf77ba5422393ef15df1b8cc88ba5a64d4",
    ),
    ("basic-auth", "curl -u admin:CurlP4ssw0rd https://api.example.com/v1/items", "CurlP4ssw0rd"),
    ("netrc-password", "machine api.example.com\n  login deploy\n  password N3trcPassw0rd", "N3trcPassw0rd"),
    ("cli-secret", "mysql --password=Sup3rS3cret -u root", "Sup3rS3cret"),
]


@pytest.mark.parametrize("kind, text, secret", SECRETS)
def test_each_secret_is_masked_with_its_kind(kind, text, secret):
    assert secret in text
    out = redact(text)
    assert f"[REDACTED:{kind}]" in out, out
    assert secret not in out, out
    # nothing of the masked value survives, whatever else is kept around it
    assert redact(out) == out


def test_every_secret_in_one_text_is_masked():
    """All at once, as a log shows them: no rule's match swallows or hides another's."""
    text = "\n".join(text for _, text, _ in SECRETS)
    out = redact(text)
    assert [secret for _, _, secret in SECRETS if secret in out] == []
    assert set(findings(text)) == {kind for kind, _, _ in SECRETS}


def test_the_text_around_a_secret_is_kept():
    assert redact("DATABASE_URL=postgres://admin:pa55w0rd@db:5432/app") in (
        "DATABASE_URL=postgres://admin:[REDACTED:url-password]@db:5432/app",
    )
    assert redact('password = "hunter2!"') == 'password = "[REDACTED:secret-assignment]"'
    assert redact("Server=db;Uid=sa;Pwd=0dbcS3cret;Encrypt=yes") == "Server=db;Uid=sa;Pwd=[REDACTED:connection-password];Encrypt=yes"
    assert redact("AccountName=x;AccountKey=OYgOjC29GFfm7sFog16pAgTtpU4r16H1UrLqE9o==;EndpointSuffix=core.windows.net") == (
        "AccountName=x;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net"
    )
    ppk = "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIHq8\nPrivate-Lines: 1\nAAAAIFm4nX7qP2sK9vL3dW8hG5jC1bY6\nPrivate-MAC: 4b7f2a9c"
    assert redact(ppk) == "Public-Lines: 1\nAAAAC3NzaC1lZDI1NTE5AAAAIHq8\nPrivate-Lines: 1\n[REDACTED:private-key]\nPrivate-MAC: 4b7f2a9c"


KEY_LINES = [
    "MIIEpAIBAAKCAQEA7bq98xZQ2w3e4r5t6y7u8i9o0pAbCdEfGhIjKlMnOpQrStUv",
    "Q2w3e4r5t6y7u8i9o0pMIIEpAIBAAKCAQEA7bq98xZAbCdEfGhIjKlMnOpQrStUv",
    "AwEHoUQDQgAEYH7qk3Xh5oZ2v8Jw1L9mC4tR6yN0==",
]
BEGIN, END = "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    "text, expected",
    [
        # `head -3 id_rsa`: the prompt on the next line, or on the same one (no newline at the end)
        ("$ head -3 id_rsa\n" + "\n".join([BEGIN, *KEY_LINES[:2]]) + "\n$ ls\n", "$ head -3 id_rsa\n[REDACTED:private-key]\n$ ls\n"),
        ("\n".join([BEGIN, *KEY_LINES[:2]]) + "$ ls\n", "[REDACTED:private-key]$ ls\n"),
        (
            "\n".join([BEGIN, KEY_LINES[0]]) + "\nTraceback (most recent call last):",
            "[REDACTED:private-key]\nTraceback (most recent call last):",
        ),
        # `tail -3 id_rsa`, or a log (or a digest) that starts inside the key
        ("$ tail -3 id_rsa\n" + "\n".join([*KEY_LINES, END]) + "\n$ ls", "$ tail -3 id_rsa\n[REDACTED:private-key]\n$ ls"),
        ("\n".join(KEY_LINES[1:] + [END]), "[REDACTED:private-key]"),
        # two keys of one kind, the first one's BEGIN line dropped as a repeat
        ("\n".join([KEY_LINES[0], END, BEGIN, KEY_LINES[1], END]), "[REDACTED:private-key]\n[REDACTED:private-key]"),
        # JSON-escaped (a service-account key) with its end or its start cut off
        ('"private_key": "' + "\\n".join([BEGIN, *KEY_LINES[:2]]) + "\\n", '"private_key": "[REDACTED:private-key]\\n'),
        ('"' + "\\n".join([*KEY_LINES[1:], END]) + '\\n",', '"[REDACTED:private-key]\\n",'),
        # an END with no body above it (a quoted marker, a grep): nothing to mask
        ("grep -l '" + END + "' *.pem", "grep -l '" + END + "' *.pem"),
    ],
)
def test_a_key_cut_at_either_end_is_masked(text, expected):
    assert redact(text) == expected
    assert not any(line in redact(text) for line in KEY_LINES)


ORDINARY = r"""
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
"input_tokens": "Tokens the model read",
The session key point is that compaction loses context.
ssh user@host.example.com
https://github.com/anthropics/claude-code/issues/1234
sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
uuid = "8db7d9d0-5034-4a3a-804d-a0b44c88272a"
url = f"postgres://{user}:{password}@{host}:{port}/{db}"
dsn = "mysql://%(user)s:%(password)s@%(host)s/app" % cfg
REDIS_URL=redis://:${REDIS_PASSWORD}@redis:6379/0
config.password_file = "/etc/app/pw"
POSTGRES_PASSWORD_FILE=/run/secrets/postgres
password_prompt = "Enter the vault password: "
secret_name = "prod/billing/db"
login(user, password=password)
conn = connect(f"Server={host};Database=app;Uid={user};Pwd={pwd};")
query = "?user=" + user + "&password=" + quote(pw)
jdbc_url = "jdbc:postgresql://db:5432/app?user=app&password=${JDBC_PASSWORD}"
token := "abcdef"
def ask_task_manager_for_the_next_item_in_the_queue(): pass
docker run --rm -u 1000:1000 -v "$PWD:/src" python:3.12 pytest
curl -u "$USER:$API_TOKEN" https://api.example.com
git push -u origin main
hf_hub_download(repo_id="org/model", filename="config.json")
npm_config_registry=https://registry.npmjs.org/
task-skip-skeleton-sketch-sky-ski-ask-mask-desk-disk-risk
Skipped 4 tests, SKU SK1234 in stock
ACME-2024: reconcile AC accounts and SK entries
https://example.com/search?q=sig%3Dfoo&sort=asc
"auth": null,
"auth": "oauth2",
-----BEGIN CERTIFICATE-----
MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ
-----END CERTIFICATE-----
-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYH7qk3Xh5oZ2v8Jw1L9mC4tR6yN0
-----END PUBLIC KEY-----
ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq8oV3pW2nK7sL0dF9gH4jB6cX1zY5tR8uE2wQ3aS7m dev@laptop
Public-Lines: 2
INFO 2024-05-01T12:00:01Z GET https://api.example.com/v1/items?page=3&limit=50 200 12ms
✻ Thinking… (12s · ↓ 300 tokens)
commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b  Author: Dev <dev@example.com>
"""


def test_no_false_positive_on_ordinary_code():
    assert redact(ORDINARY) == ORDINARY, findings(ORDINARY)


def test_a_large_log_is_redacted_in_linear_time():
    """Redaction runs over whole logs (export) and every digest: hostile or unlucky input
    (many BEGIN lines without an END, long runs of "=" or quotes, long names) stays linear."""
    rnd = random.Random(5)
    ordinary = ORDINARY.splitlines()
    log = "\n".join(rnd.choice(ordinary) for _ in range(20_000))  # ~1 MB
    started = time.perf_counter()
    assert redact(log) == log
    base = time.perf_counter() - started
    for hostile in (
        "-----BEGIN PRIVATE KEY-----\n" * 40_000,
        "-----END PRIVATE KEY-----\n" * 40_000,
        "-----END PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n" * 20_000,
        "=" * 1_000_000,
        'password="' * 100_000,
        ("a" * 300 + '="abcd" ') * 3_000,
        "a://" * 250_000,
        "token" * 200_000,  # one name holding a secret's word many times
        'token="abcd" ' * 80_000,  # many values on one line
        "--token " * 120_000,
    ):
        started = time.perf_counter()
        redact(hostile)
        assert time.perf_counter() - started < max(2.0, 10 * base), hostile[:40]


def test_a_secret_is_masked_wherever_it_sits_in_a_line():
    """The word-boundary checks sit after each prefix (for speed): a token at the start of the
    text, after punctuation or a quote, at the end of the text, is still found."""
    token = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"
    for text in (token, f"({token})", f"'{token}'", f"x={token}", f"line\n{token}", f"\t{token}."):
        assert token not in redact(text), text


def test_a_token_a_terminal_wrapped_is_masked_on_each_of_its_lines():
    """An agent's input box or a terminal breaks a long token at its width (after its prefix's
    dash, or anywhere): each line's part is masked, and the lines around it are kept."""
    from supervisor.redact import by_line

    body = "Wb4nQ8xLr2Tk9Vd6Hs1Jy5Mc3Pf7Gz0AWb4nQ8xLr2Tk9Vd6Hs1Jy5Mc3Pf7Gz0AKq8Ue2Ri6Nw4Xo9Bl1Ct5Dv3Em7Fh0Gj2Iu6"
    wrapped = f"› and my key is sk-ant-api03-\n  {body}\n\n• the answer"
    assert by_line(wrapped) == ["› and my key is [REDACTED:anthropic-key]", "  [REDACTED:anthropic-key]", "", "• the answer"]
    assert body[:20] not in redact(wrapped)
    width = "x" * 40 + " ghp_" + "A" * 15  # a terminal's wrap: full lines, then the rest
    assert by_line(f"{width}\n{'B' * 60}\n{'C' * 12} done") == [
        "x" * 40 + " [REDACTED:github-token]",
        "[REDACTED:github-token]",
        "[REDACTED:github-token] done",
    ]
    for ordinary in ("see sk-\nthe docs for keys", "task-skip-skeleton-sketch\nSkipped 4 tests", "ghp_\nis a prefix"):
        assert redact(ordinary) == ordinary
    # a whole token, then a line of its own: each masked by its own rule
    two = f"ANTHROPIC_API_KEY=sk-ant-api03-{body[:60]}\nDB_PASSWORD=hunter2hunter2"
    assert redact(two) == "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]\nDB_PASSWORD=[REDACTED:env-secret]"


def leading_literal_parsed(pattern: str) -> str:
    """What Python's own regex parser says every match of `pattern` begins with."""
    from re import _constants as c, _parser

    out = []
    for op, arg in _parser.parse(pattern):
        if op is not c.LITERAL:
            break
        out.append(chr(arg))
    return "".join(out)


def test_each_rule_is_tried_only_where_its_literal_is_and_that_literal_begins_every_match():
    """Rules are compiled when a text first holds their literal: the literal must be what the
    regex parser says every match begins with (a prefix of it at least), and never empty."""
    from supervisor.redactrules import RULES, TOKEN_RULES, leading_literal

    for rule in (*RULES, *TOKEN_RULES):
        parsed = leading_literal_parsed(rule.source)
        assert rule.literal and parsed.startswith(rule.literal), (rule.kind, rule.literal, parsed)
    assert leading_literal("ab|cd") == "ab" and leading_literal_parsed("ab|cd") == ""  # (the check above would catch it)
    assert leading_literal(r"https://hooks\.slack\.com/(?:x)") == "https://hooks.slack.com/"
    assert leading_literal("abc?d") == "ab" and leading_literal("ab+c") == "ab" and leading_literal(r"curl\b") == "curl"
