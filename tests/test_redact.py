"""Redaction: every planted secret goes, ordinary developer text stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrecall.redact import redact

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
SECRETS: dict[str, str] = json.loads(
    (FIXTURES / "planted-secrets.secrets.json").read_text(encoding="utf-8")
)


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
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nabc\n"
            "-----END RSA PRIVATE KEY-----"
        ),
    ]
    for text in cases:
        out, _ = redact(text)
        for piece in (
            "Tr0ub4dor",
            "mysqlPassw0rd",
            "a8F3kL9qZ2mX7vB4nR6tW1yU5oP0sD8g",
            "MIIEowIBAAKCAQEA",
        ):
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


# --- whole classes (issue 10 §2): every member, not one string ------------------------------
# (secret, text it stands in). Written for these tests; scripts/secret_classes.py has more.

CLASSES: dict[str, list[tuple[str, str]]] = {
    "cloud-key": [
        (
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS docs: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        ),
        (
            "Hq3+Lm9/Zt6Wx1Rc8Vb5Nk2Jd7Ps4Fg0Ay6Eu3Io",
            "鍵は Hq3+Lm9/Zt6Wx1Rc8Vb5Nk2Jd7Ps4Fg0Ay6Eu3Io です",
        ),
        (
            "Tr5/Gh8+Kl2Mn6Bv9Cx3Zq7Wp1Ae4Sd0Fy8Uj2Hk",
            '"SecretAccessKey": "Tr5/Gh8+Kl2Mn6Bv9Cx3Zq7Wp1Ae4Sd0Fy8Uj2Hk"',
        ),
        ("Pq2+Wm8/Lk4Zx", "aws secret access key: Pq2+Wm8/Lk4Zx7Rt1Yu5Io9"),
    ],
    "url": [
        ("S/ash@Co:lon9", "DATABASE_URL=postgres://app:S/ash@Co:lon9@db.internal:5432/shop"),
        ("pct%40Enc0ded", "mongodb+srv://svc:pct%40Enc0ded@c0.example.mongodb.net/app"),
        ("NoUserPass8", "接続は redis://:NoUserPass8@cache:6379/1 で"),
        ("Qry-Pass-31", "jdbc:mysql://db:3306/app?user=root&password=Qry-Pass-31&ssl=true"),
    ],
    "shell": [
        ("Attached-Pw9", "mysql -h 127.0.0.1 -uroot -pAttached-Pw9 shop"),
        ("CurlUser-Pw8", "curl -sS -u deploy:CurlUser-Pw8 https://ci.example.com/api"),
        ("LongFlag-Pw7", "pg_dump --password=LongFlag-Pw7 shop > dump.sql"),
        ("SpaceFlag-Pw6", "some-tool --db-password SpaceFlag-Pw6 --verbose"),
        ("RedisAuth-Pw5", "redis-cli -a RedisAuth-Pw5 -n 2 KEYS '*'"),
        ("EnvPg-Pw4", "PGPASSWORD=EnvPg-Pw4 psql -h db shop"),
        ("SshPass-Pw3", 'sshpass -p "SshPass-Pw3" scp a.txt host:'),
        ("HtBatch-Pw2", "htpasswd -cb /etc/apache2/.htpasswd alice HtBatch-Pw2"),
        ("DockerLogin-Pw1", "docker login registry.example.com -u ci -p DockerLogin-Pw1"),
        ("JpCmd-Pw0", "本番はこれで入れる: mysqldump -uadmin -pJpCmd-Pw0 shop"),
    ],
    "file": [
        ("NetrcFile-Pw1", "machine example.com login me password NetrcFile-Pw1"),
        ("NetrcLines-Pw2", "machine ci.example.com\n    login bot\n    password NetrcLines-Pw2\n"),
        ("PgpassFile-Pw3", "localhost:5432:shop:app:PgpassFile-Pw3"),
        ("NpmrcTok-Pw4x", "//npm.example.com/:_authToken=NpmrcTok-Pw4x"),
        ("PypircFile-Pw5", "[testpypi]\nusername = me\npassword = PypircFile-Pw5\n"),
        (
            "ZG9ja2VyOkF1dGgtUHc2",
            '{"auths":{"registry.example.com":{"auth":"ZG9ja2VyOkF1dGgtUHc2"}}}',
        ),
        ("DotEnv-Pw7", "APP_SECRET=DotEnv-Pw7\nNODE_ENV=production"),
        ("YamlBlock-Pw8", "credentials:\n  password: |\n    YamlBlock-Pw8\n  user: app\n"),
        ("YamlFold-Pw9", "api_token: >\n  YamlFold-Pw9\n"),
    ],
    "webhook": [
        ("T9ZZZ/B9YYY/HookSvc1x", "https://hooks.slack.com/services/T9ZZZ/B9YYY/HookSvc1x"),
        (
            "T9ZZZ/A9XXX/99/HookWf2",
            "Slack workflow: https://hooks.slack.com/workflows/T9ZZZ/A9XXX/99/HookWf2",
        ),
        ("T9ZZZ/77/HookTr3", "https://hooks.slack.com/triggers/T9ZZZ/77/HookTr3"),
        (
            "1234567890123/HookDc4-ab",
            "Discord: https://discord.com/api/webhooks/1234567890123/HookDc4-ab",
        ),
        (
            "HookTeams5",
            "https://acme.webhook.office.com/webhookb2/abc@def/IncomingWebhook/HookTeams5/xyz",
        ),
        (
            "HookGchat6",
            "https://chat.googleapis.com/v1/spaces/AAAA/messages?key=HookGkey6x&token=HookGchat6",
        ),
        ("QueryTok-Hook7", "通知URL https://notify.example.com/send?token=QueryTok-Hook7&ch=ops"),
        ("HookSig8%2Bx", "https://acct.blob.core.windows.net/c/f?sv=2024-01-01&sig=HookSig8%2Bx"),
    ],
    "prose-ja": [
        ("Jpw-Ha1x", "DBのパスワードはJpw-Ha1xです"),
        ("Jpw-Nochi2", "パスワードの値は Jpw-Nochi2 です"),
        ("Jpw-Colon3", "ログインパスワード：Jpw-Colon3"),
        ("Jpw-PW4x", "本番のPW: Jpw-PW4x"),
        ("jpw-small5", "pw：jpw-small5"),
        ("Jpw-Enc6", "暗号化キーは Jpw-Enc6x9 で固定"),
        ("Jpw-Bare7", "パスワード Jpw-Bare7 でログインできた"),
        ("Jpw-Front8", "Jpw-Front8 がパスワードです"),
        ("ゆずれない合言葉", "合言葉は「ゆずれない合言葉」"),
    ],
    "prose-en": [
        ("Epw-Is1x", "The staging password is Epw-Is1x."),
        ("Epw-Set2", "Please set the password to Epw-Set2 for the demo."),
        ("epw-colon3", "pass: epw-colon3"),
        ("Epw-For4", "the pw for carol is Epw-For4"),
        ("Epw-Use5", "use Epw-Use5 as the password"),
        ("quoted words 6", 'the passphrase is "quoted words 6"'),
        ("Epw-PW7", "PW: Epw-PW7"),
    ],
}


@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_every_member_of_each_class_is_redacted(cls: str) -> None:
    from memrecall.redact import redact_fast

    for secret, text in CLASSES[cls]:
        out, count = redact(text)
        assert secret not in out and count >= 1, (cls, text, out)
        # The hook and search use the same rules: nothing summarize removes survives there.
        assert secret not in redact_fast(text), (cls, text)
        assert redact(out) == (out, 0)  # stable: a second pass changes nothing


ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@pytest.mark.parametrize("char", ZERO_WIDTH)
def test_invisible_characters_do_not_hide_a_secret(char: str) -> None:
    from memrecall.redact import redact_fast

    key = "sk-ant-api03-" + char.join(["Zw8xR2vK", "9pL4tW7n", "B3cF6hJ1", "dS5gA0zE"])
    texts = [
        f"キーは {key} です",
        "DB_PASSWORD=" + char.join(["Zero", "Width", "-Pw", "1"]),
        "パスワードは" + char.join(["Kx9", "-ZwJp", "-2"]) + "です",
        "curl -u me:" + char.join(["Inv", "isible", "-3"]) + " https://x.example.com",
        char.join("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ]
    for text in texts:
        out = redact_fast(text)
        assert "[REDACTED:" in out, (char, text, out)
        visible = out.replace(char, "")
        for piece in ("Zw8xR2vK", "ZeroWidth", "Kx9-ZwJp", "Invisible", "bPxRfiCY"):
            assert piece not in visible, (text, out)


def test_text_outside_a_secret_is_kept_exactly() -> None:
    """Matching runs on a normalised copy; the original text is what comes back."""
    text = "ＰＡＹ－１２３４（本番）\u200bの件。 ｐａｓｓｗｏｒｄ：ｈｕｎｔｅｒ２ｘｙ ですか？ ｶﾞｲﾄﾞ"
    out = redact(text)[0]
    assert out == (
        "ＰＡＹ－１２３４（本番）\u200bの件。 "
        "ｐａｓｓｗｏｒｄ：[REDACTED:secret-assignment] ですか？ ｶﾞｲﾄﾞ"
    )


@pytest.mark.parametrize(
    "text",
    [
        # near misses of every class: same words, no secret
        "パスワードは8文字以上にしてください。パスワードはbcryptでハッシュ化します。",
        "トークンはlocalStorageに保存する。APIキーの発行手順は README を参照。",
        "パスは /usr/local/bin です",
        "The password is required. Set the password to something strong. The token is expired.",
        "mkdir -p src/components && docker run -p 8080:80 nginx && unzip -p a.zip f",
        "curl -u $USER:$PASSWORD https://x && mysql -u root -p && psql --password",
        "export API_TOKEN=${API_TOKEN} && SECRET_ID=my_secret && TOKEN_URL=https://auth.example.com/token",
        "open http://localhost:8080/@vite/client and https://docs.github.com/en/webhooks/about-webhooks",
        "--- PASS: TestLogin (0.00s)",
        (
            "github.com ssh-ed25519 "
            "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
        ),
        "const token = config.get('token'); password_hash = bcrypt(pw)",
        "password: ${{ secrets.DB_PASSWORD }} and token: <your-token> and pass: {{password}}",
    ],
)
def test_near_misses_stay(text: str) -> None:
    from memrecall.redact import redact_fast

    assert redact(text) == (text, 0)
    assert redact_fast(text) == text
