"""Redaction: every planted secret goes, ordinary developer text stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrecall.redact import redact

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
SECRETS: dict[str, str] = json.loads((FIXTURES / "planted-secrets.secrets.json").read_text(encoding="utf-8"))


# A password has no shape of its own: it is found by where it stands (URL, assignment).
CONTEXT_ONLY = {"db_password", "env_password", "dsn_password"}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_planted_secret_is_redacted_in_context(name: str) -> None:
    secret = SECRETS[name]
    contexts = [
        f"API_SECRET={secret}",
        f'"password": "{secret}"',
        f"https://user:{secret}@example.com/x",
    ]
    if name not in CONTEXT_ONLY:
        contexts += [
            f"{secret}",
            f"the value is {secret} here",
            f'config = {{"value": "{secret}"}}',
            f"日本語の文の中に{secret}があります",
        ]
    for text in contexts:
        out, count = redact(text)
        assert secret not in out, (name, text, out)
        assert count >= 1


def test_structured_secrets() -> None:
    cases = [
        "postgres://deploy:Tr0ub4dor-Horse-9931@db.internal:5432/app",
        "mysql://root:mysqlPassw0rd!x@localhost/db",
        "Authorization: Bearer a8F3kL9qZ2mX7vB4nR6tW1yU5oP0sD8g",
        "DB_PASSWORD=Tr0ub4dor-Horse-9931",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nabc\n-----END RSA PRIVATE KEY-----",
    ]
    for text in cases:
        out, _ = redact(text)
        for piece in ("Tr0ub4dor", "mysqlPassw0rd", "a8F3kL9qZ2mX7vB4nR6tW1yU5oP0sD8g", "MIIEowIBAAKCAQEA"):
            assert piece not in out, (text, out)
    out, _ = redact("postgres://deploy:Tr0ub4dor-Horse-9931@db.internal:5432/app")
    assert "db.internal:5432" in out  # the host stays readable


def test_ordinary_text_is_left_alone() -> None:
    texts = [
        "internal/payment/client.go の Timeout は 10 秒、MaxRetries は 3 です。",
        "git commit 3857e51a9c0b1f2e4d5c6b7a8f9e0d1c2b3a4f5e fixed PAY-1234",
        "def test_payment_client_retries_on_timeout_when_gateway_is_down(): pass",
        "Run `mix test test/spotter_web/controllers/hooks_controller_test.exs`",
        "max_tokens: 4096, token = request.token, password: ${DB_PASSWORD}",
        "https://status.example-pay.jp/incidents/2026-11 の障害報告",
        "Co-authored-by: Someone <someone@example.com>",
    ]
    for text in texts:
        out, count = redact(text)
        assert out == text, (text, out)
        assert count == 0


def test_placeholders_are_stable() -> None:
    once, _ = redact("key sk-ant-api03-Xq7vR2mK9pL4tW8nB3cF6hJ1dS5gA0zE-yU7iO2pQ9rT4wV")
    twice, count = redact(once)
    assert twice == once and count == 0
    assert "[REDACTED:anthropic-key]" in once
