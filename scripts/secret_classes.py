"""Planted secrets by class, for scripts/secrets_report.py and the tests.

Each case is (class, secret, text): `text` is how the secret really shows up (a prompt, a
command line, a tool's output, a file). Every secret is unique, so a sighting anywhere in
memrecall's output is that secret surviving. Classes follow issue 10 §2; zero-width variants
of a sample are added by `cases()`.
"""

from __future__ import annotations

# Characters that render as nothing: inserted into a secret, they must not hide it.
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]

CASES: list[tuple[str, str, str]] = [
    # --- cloud secret keys whose alphabet has / and + ---
    (
        "cloud-key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "cloud-key",
        "Kq9+vR2/mT5yU6iO7pA8sD9fG0hJ1kL2zX3cV4bN",
        "aws_secret_access_key = Kq9+vR2/mT5yU6iO7pA8sD9fG0hJ1kL2zX3cV4bN",
    ),
    (
        "cloud-key",
        "7fGh+2Kl/9mNp4QrSt6UvWx8YzAb3CdEf/GhIj1K",
        "Secret access key: 7fGh+2Kl/9mNp4QrSt6UvWx8YzAb3CdEf/GhIj1K (rotate monthly)",
    ),
    (
        "cloud-key",
        "bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ",
        '{"accessId": "GOOG1EXAMPLE", "secret": "bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ"}',
    ),
    (
        "cloud-key",
        "Zr8/Lm2+Qw4kTy6uIo9pAs1dFg3hJk5lZx7cVb0n",
        "本番のAWSシークレットは Zr8/Lm2+Qw4kTy6uIo9pAs1dFg3hJk5lZx7cVb0n です",
    ),
    (
        "cloud-key",
        "Nq7vR2mK9pL4tW8nB3cF6hJ1dS5gA0",
        "AccessKeySecret: Nq7vR2mK9pL4tW8nB3cF6hJ1dS5gA0",
    ),
    (
        "cloud-key",
        "Xq88Q~aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3",
        "az ad sp credential reset → password Xq88Q~aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3",
    ),
    (
        "cloud-key",
        "Mx4+Hp7/Vc2kQz9wRt5yUb8nLa3sDf6gJe1oPi0u",
        "SecretAccessKey=Mx4+Hp7/Vc2kQz9wRt5yUb8nLa3sDf6gJe1oPi0u",
    ),
    # --- credentials in URLs and DSNs, whatever the password holds ---
    ("url", "p@ss/w:rd-9Q", "postgres://u:p@ss/w:rd-9Q@db.internal/app"),
    (
        "url",
        "p%40ssW0rd-mongo",
        "mongodb+srv://user:p%40ssW0rd-mongo@cluster0.abcd.mongodb.net/test",
    ),
    ("url", "r3dis-only-pass", "REDIS_URL=redis://:r3dis-only-pass@cache.internal:6379/0"),
    (
        "url",
        "gh-pass:with:colons",
        "git remote add origin https://deploy:gh-pass:with:colons@git.example.com/repo.git",
    ),
    ("url", "Rabb1t/Slash%2Fpw", "amqp://guest:Rabb1t/Slash%2Fpw@mq.internal/vhost"),
    ("url", "My$ql@Pw#1x", "接続先は mysql://root:My$ql@Pw#1x@db.internal:3306/app です"),
    ("url", "JdbcQuery-Pw77", "jdbc:postgresql://db:5432/app?user=app&password=JdbcQuery-Pw77"),
    ("url", "tok3n-Xyz789abc", "https://x-access-token:tok3n-Xyz789abc@github.com/o/r.git"),
    (
        "url",
        "7c1d9e3f5a2b8c4d6e0f1a3b5c7d9e2f",
        "SENTRY_DSN=https://7c1d9e3f5a2b8c4d6e0f1a3b5c7d9e2f@o123.ingest.sentry.io/42",
    ),
    ("url", "Ftp-Secret-Pw5", "lftp ftp://anon:Ftp-Secret-Pw5@files.example.com/"),
    # --- command lines and their output ---
    ("shell", "MyS3cret-cli", "mysql -h db -uroot -pMyS3cret-cli app"),
    ("shell", "Mysql-Eq-Pw1", "mysql -u root --password=Mysql-Eq-Pw1 app"),
    ("shell", "Curl-Pw-2a", "curl -u alice:Curl-Pw-2a https://api.example.com/v1/me"),
    ("shell", "Curl-Pw-3b", "curl --user bob:Curl-Pw-3b -X POST https://api.example.com"),
    ("shell", "Wget-Pw-4c", "wget --user=u --password=Wget-Pw-4c https://files.example.com/a.tgz"),
    ("shell", "Dump-Pw-5d", "mysqldump --password Dump-Pw-5d app > app.sql"),
    ("shell", "Redis-Cli-6e", "redis-cli -h cache -a Redis-Cli-6e PING"),
    ("shell", "Pg-Env-7f", "PGPASSWORD=Pg-Env-7f psql -h db -U app"),
    ("shell", "Api-Token-Env-8g", "export API_TOKEN=Api-Token-Env-8g"),
    ("shell", "Mysql-Pwd-9h", "MYSQL_PWD=Mysql-Pwd-9h mysql -u app"),
    ("shell", "Ssh-Pass-10i", "sshpass -p 'Ssh-Pass-10i' ssh root@10.0.0.5"),
    ("shell", "Ht-Pass-11j", "htpasswd -b /etc/nginx/.htpasswd admin Ht-Pass-11j"),
    ("shell", "Ht-Pass-12k", "htpasswd -nbB admin Ht-Pass-12k"),
    ("shell", "Docker-Pw-13l", "docker login -u me -p Docker-Pw-13l registry.example.com"),
    (
        "shell",
        "Docker-Stdin-14m",
        "echo 'Docker-Stdin-14m' | docker login --password-stdin -u me ghcr.io",
    ),
    ("shell", "Store-Pw-15n", "keytool -list -keystore app.jks -storepass Store-Pw-15n"),
    ("shell", "P12-Pass-16o", "openssl pkcs12 -in cert.p12 -passin pass:P12-Pass-16o -nodes"),
    ("shell", "Sql-Cmd-17p", "sqlcmd -S db -U sa -P Sql-Cmd-17p -Q 'select 1'"),
    ("shell", "SevenZip-18q", "7z a -pSevenZip-18q backup.7z data/"),
    ("shell", "Zip-Pw-19r", "zip -r -P Zip-Pw-19r backup.zip data"),
    ("shell", "Mongo-Cli-20s", "mongosh -u admin -p Mongo-Cli-20s --authenticationDatabase admin"),
    (
        "shell",
        "Ldap-Bind-21t",
        "ldapsearch -x -D cn=admin,dc=example,dc=com -w Ldap-Bind-21t -b dc=example,dc=com",
    ),
    ("shell", "Smb-Pw-22u", "smbclient //fs/share -U alice%Smb-Pw-22u"),
    ("shell", "Tiger-Ora-23v", "sqlplus scott/Tiger-Ora-23v@orcl"),
    ("shell", "Flag-Key-25x", "stripe-cli --api-key Flag-Key-25x events list"),
    ("shell", "Client-Sec-26y", "oauth2-proxy --client-id app --client-secret=Client-Sec-26y"),
    ("shell", "Jp-Mysql-27z", "このコマンドで接続した: mysql -h db -uapp -pJp-Mysql-27z"),
    ("shell", "Xtrace-28a", "+ PGPASSWORD=Xtrace-28a pg_dump -h db app"),
    ("shell", "Chpasswd-29b", "echo 'deploy:Chpasswd-29b' | sudo chpasswd"),
    ("shell", "Token-Flag-30c", "vault kv get --token Token-Flag-30c secret/app"),
    # --- credential files as tools print them ---
    ("file", "Netrc-One-1A", "machine api.example.com login alice password Netrc-One-1A"),
    ("file", "Netrc-Multi-2B", "machine git.example.com\n  login bob\n  password Netrc-Multi-2B"),
    ("file", "Netrc-Def-3C", "default login anonymous password Netrc-Def-3C"),
    ("file", "Pgpass-Line-4D", "db.internal:5432:app:deploy:Pgpass-Line-4D"),
    ("file", "Pgpass-Star-5E", "*:*:*:postgres:Pgpass-Star-5E"),
    ("file", "Npmrc-Tok-6F0a9", "//registry.npmjs.org/:_authToken=Npmrc-Tok-6F0a9"),
    ("file", "bnBtOm5wbXJjLWF1dGg=", "_auth=bnBtOm5wbXJjLWF1dGg="),
    ("file", "Npmrc-Pw-7G", "//npm.pkg.github.com/:_password=Npmrc-Pw-7G"),
    ("file", "Pypirc-Pw-8H", "[pypi]\nusername = __token__\npassword = Pypirc-Pw-8H"),
    (
        "file",
        "Z2hjcjpEb2NrZXItQXV0aC05SQ==",
        '{"auths": {"ghcr.io": {"auth": "Z2hjcjpEb2NrZXItQXV0aC05SQ=="}}}',
    ),
    ("file", "Env-Db-10J", "DB_PASSWORD=Env-Db-10J"),
    ("file", "Env-Stripe-11K", "STRIPE_SECRET=Env-Stripe-11K"),
    ("file", "Env-Sess-12L7x", "SESSION_KEY=Env-Sess-12L7x"),
    ("file", "Yaml-Block-13M", "db:\n  password: |\n    Yaml-Block-13M\n  host: db.internal"),
    ("file", "Yaml-Fold-14N", "oauth:\n  client_secret: >-\n    Yaml-Fold-14N\n  client_id: app"),
    ("file", "Xml-Pw-15O", "<server><id>repo</id><password>Xml-Pw-15O</password></server>"),
    ("file", "$apr1$Zq8x1$Q7vR2mK9pL4tW8nB3cF6h.", "admin:$apr1$Zq8x1$Q7vR2mK9pL4tW8nB3cF6h."),
    ("file", "Kube-Tok-16P9z", "users:\n- name: ci\n  user:\n    token: Kube-Tok-16P9z"),
    ("file", "MyCnf-18R", "[client]\nuser=app\npassword=MyCnf-18R"),
    ("file", "Wpa-Psk-19S", 'network={\n  ssid="office"\n  psk="Wpa-Psk-19S"\n}'),
    ("file", "Rclone-Pass-20T", "[remote]\ntype = sftp\npass = Rclone-Pass-20T"),
    # --- webhook URLs of every provider shape ---
    (
        "webhook",
        "T0AAA1111/B0BBB2222/wHk1ServicesXyZ",
        "https://hooks.slack.com/services/T0AAA1111/B0BBB2222/wHk1ServicesXyZ",
    ),
    (
        "webhook",
        "A0CCC3333/412345678/wHk2WorkflowsAb",
        "通知先: https://hooks.slack.com/workflows/T0AAA1111/A0CCC3333/412345678/wHk2WorkflowsAb",
    ),
    (
        "webhook",
        "5123456789/wHk3TriggersCd9",
        "https://hooks.slack.com/triggers/T0AAA1111/5123456789/wHk3TriggersCd9",
    ),
    (
        "webhook",
        "1098765432109876543/wHk4Discord-Ef_GhIjKlMnOpQr",
        "https://discord.com/api/webhooks/1098765432109876543/wHk4Discord-Ef_GhIjKlMnOpQr",
    ),
    (
        "webhook",
        "2187654321098765432/wHk5DiscordApp-St",
        "https://discordapp.com/api/webhooks/2187654321098765432/wHk5DiscordApp-St",
    ),
    (
        "webhook",
        "3276543210987654321/wHk6Ptb-Uv",
        "https://ptb.discord.com/api/v10/webhooks/3276543210987654321/wHk6Ptb-Uv",
    ),
    (
        "webhook",
        "0f8e2a9c-aaaa@bbbb/IncomingWebhook/wHk7Teams0123",
        "https://contoso.webhook.office.com/webhookb2/0f8e2a9c-aaaa@bbbb/IncomingWebhook/wHk7Teams0123/cccc",
    ),
    (
        "webhook",
        "wHk8Outlook-1234@tenant",
        "https://outlook.office.com/webhook/wHk8Outlook-1234@tenant/IncomingWebhook/abcd",
    ),
    (
        "webhook",
        "sig=wHk9LogicSig0123456789abc",
        "https://prod-12.westus.logic.azure.com:443/workflows/0f8e2a/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers&sv=1.0&sig=wHk9LogicSig0123456789abc",
    ),
    (
        "webhook",
        "wHk10ChatKey-AIzaQ&token=wHk10ChatTok",
        "https://chat.googleapis.com/v1/spaces/AAAAB3cd/messages?key=wHk10ChatKey-AIzaQ&token=wHk10ChatTok",
    ),
    ("webhook", "1234567/wHk11zap", "https://hooks.zapier.com/hooks/catch/1234567/wHk11zap/"),
    (
        "webhook",
        "wHk12mattermost9k3u7y5n4hr",
        "https://chat.example.com/hooks/wHk12mattermost9k3u7y5n4hr",
    ),
    (
        "webhook",
        "wHk13IftttKey-0123456789",
        "https://maker.ifttt.com/trigger/deploy/with/key/wHk13IftttKey-0123456789",
    ),
    (
        "webhook",
        "Query-Tok-42abc",
        "https://api.example.com/v1/notify?channel=ops&token=Query-Tok-42abc",
    ),
    ("webhook", "Query-Key-43def", "https://api.example.com/v1/send?api_key=Query-Key-43def"),
    (
        "webhook",
        "Sig%2BValue%3D44ghi",
        "https://files.example.com/a.tgz?se=2026-12-01&sig=Sig%2BValue%3D44ghi",
    ),
    (
        "webhook",
        "1b7d-4e6f-wHk14-feishu",
        "https://open.feishu.cn/open-apis/bot/v2/hook/0f8e2a9c-1b7d-4e6f-wHk14-feishu",
    ),
    # --- passwords in Japanese prose ---
    ("prose-ja", "Kx9-Prose-1", "パスワードはKx9-Prose-1です"),
    ("prose-ja", "Prose2-Val", "パスワードの値は Prose2-Val です"),
    ("prose-ja", "ProseColon3", "パスワード：ProseColon3"),
    ("prose-ja", "ProsePW4x", "PW: ProsePW4x"),
    ("prose-ja", "prose-pw-5", "pw：prose-pw-5"),
    ("prose-ja", "ｆｕｌｌ６ｗｉｄｔｈ", "ＰＷは ｆｕｌｌ６ｗｉｄｔｈ で"),
    ("prose-ja", "Enc-Key-7ab12", "暗号化キーはEnc-Key-7ab12です"),
    ("prose-ja", "correct horse 8", "パスフレーズ「correct horse 8」"),
    ("prose-ja", "hunter9-prod", "本番DBのパスワード hunter9-prod でログインして"),
    ("prose-ja", "Admin-Jp-10", "管理者パスワード(本番): Admin-Jp-10"),
    ("prose-ja", "NewPw-11z", "新しいパスワードをNewPw-11zに設定した"),
    ("prose-ja", "Jp12-Before", "Jp12-Before がパスワードです"),
    ("prose-ja", "48213-pin", "暗証番号は48213-pinです"),
    ("prose-ja", "ひらけごま13", "合言葉は『ひらけごま13』"),
    ("prose-ja", "apikey-jp-14Q", "APIキーは apikey-jp-14Q です"),
    ("prose-ja", "tok15jpXyz9", "トークンはtok15jpXyz9です"),
    ("prose-ja", "Sec16JpQ2x", "シークレットは Sec16JpQ2x だよ"),
    ("prose-ja", "Pf17-Phrase", "パスフレーズって Pf17-Phrase だっけ"),
    # --- passwords in English prose ---
    ("prose-en", "hunter2-Blue-E1", "the admin password is hunter2-Blue-E1."),
    ("prose-en", "Sw0rdfish-E2", "please set the password to Sw0rdfish-E2 before the demo"),
    ("prose-en", "opensesame-e3", "pass: opensesame-e3"),
    ("prose-en", "b0bby-E4", "the pw for bob is b0bby-E4"),
    ("prose-en", "two words E5", 'password: "two words E5"'),
    ("prose-en", "Correct-E6", "use Correct-E6 as the password"),
    ("prose-en", "Changed-E7", "I changed my db password to Changed-E7 yesterday"),
    ("prose-en", "Wifi E8 pw", 'the wifi password is "Wifi E8 pw"'),
    ("prose-en", "97531-E9", "PIN: 97531-E9"),
    ("prose-en", "Shared-E10x", "our shared secret is Shared-E10x"),
    ("prose-en", "Ek11-abcdef123", "api key: Ek11-abcdef123"),
    ("prose-en", "Creds-E12", "credentials: admin/Creds-E12"),
    ("prose-en", "Passphrase-E13", "the passphrase was Passphrase-E13, don't share it"),
    ("prose-en", "Login-E14", "log in with password Login-E14 for now"),
    # --- secrets in file names, paths and ids ---
    (
        "name",
        "ghp_Fname1Qa2Ws3Ed4Rf5Tg6Yh7Uj8Ik9Ol0Pz",
        "Read /home/dev/keys/ghp_Fname1Qa2Ws3Ed4Rf5Tg6Yh7Uj8Ik9Ol0Pz.txt",
    ),
    ("name", "AKIAQ7RX4MZP2VKDPATH", "backups/AKIAQ7RX4MZP2VKDPATH-keys.csv"),
    (
        "name",
        "sk-ant-api03-PathKey9Zx8Cv7Bn6Mq5Wr4Et3Ya2Ub",
        "/tmp/sk-ant-api03-PathKey9Zx8Cv7Bn6Mq5Wr4Et3Ya2Ub/log",
    ),
]

# A sample, one or two per class, re-planted with an invisible character inside the secret.
ZERO_WIDTH_SAMPLE = [
    "Kq9+vR2/mT5yU6iO7pA8sD9fG0hJ1kL2zX3cV4bN",
    "p@ss/w:rd-9Q",
    "MyS3cret-cli",
    "Redis-Cli-6e",
    "Netrc-One-1A",
    "Env-Db-10J",
    "Kx9-Prose-1",
    "hunter2-Blue-E1",
    "Query-Tok-42abc",
    "ghp_Fname1Qa2Ws3Ed4Rf5Tg6Yh7Uj8Ik9Ol0Pz",
]


def _insert(secret: str, char: str) -> str:
    """`secret` with `char` after every fourth character (inside the run a rule matches)."""
    return "".join(c + (char if i % 4 == 3 else "") for i, c in enumerate(secret)).rstrip(char)


def cases() -> list[tuple[str, str, str]]:
    """Every case, plus zero-width variants (class `zero-width`) of the sample."""
    out = list(CASES)
    by_secret = {secret: text for _, secret, text in CASES}
    for index, secret in enumerate(ZERO_WIDTH_SAMPLE):
        char = INVISIBLE[index % len(INVISIBLE)]
        hidden = _insert(secret, char)
        out.append(("zero-width", hidden, by_secret[secret].replace(secret, hidden)))
    return out
