"""Secret redaction for text that leaves the machine (LLM input) or is written to disk.

Two layers, because neither alone is enough:

1. memrecall's own patterns, run first over the whole text: provider keys whose shape is
   well known (Anthropic, OpenAI, GitHub, Slack, AWS, Google, GitLab, Stripe, npm, Hugging
   Face), JWTs, PEM private-key blocks (multi-line), passwords in URLs and DSNs, `.env`-style
   assignments whose key looks secret, `Authorization: Bearer …`, and long high-entropy tokens.
2. detect-secrets' plugins, line by line, over what is left: a maintained detector catches
   shapes the list above does not know (Twilio, SendGrid, Azure, Discord, quoted high-entropy
   strings, `password = "…"` in code...). Its eager mode and its per-word entropy checks flag
   every ordinary word in prose, so the plugins run in their normal (quoted-string) mode.

Every hit becomes `[REDACTED:<kind>]`. `redact(text)` returns the new text and the number of
replacements. detect-secrets is imported on first use only (≈190 ms), never at import time.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

__all__ = ["redact", "redact_all", "redact_fast", "PATTERNS", "PLACEHOLDER"]

# What every redaction leaves behind (recall strips it before extracting keywords).
PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

def _p(pattern: str, flags: int = 0) -> tuple[str, int]:
    """Pattern source and flags; compiled once below (with re.ASCII), not twice."""
    return pattern, flags


# (kind, pattern, group to replace or 0 for the whole match)
_SOURCES: list[tuple[str, tuple[str, int], int]] = [
    ("private-key", _p(
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.S), 0),
    # Escaped newlines: a key pasted inside a JSON string or a tool input.
    ("private-key", _p(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:\\n|[A-Za-z0-9+/=\s])+?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----)?"), 0),
    ("anthropic-key", _p(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), 0),
    ("openai-key", _p(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), 0),
    ("github-token", _p(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}"), 0),
    ("github-token", _p(r"\bgithub_pat_[A-Za-z0-9_]{30,}"), 0),
    ("gitlab-token", _p(r"\bglpat-[A-Za-z0-9_\-]{20,}"), 0),
    ("slack-token", _p(r"\bxox[abposre]-[A-Za-z0-9\-]{10,}"), 0),
    ("slack-webhook", _p(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"), 0),
    ("aws-access-key", _p(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b"), 0),
    ("google-api-key", _p(r"\bAIza[0-9A-Za-z_\-]{35}"), 0),
    ("stripe-key", _p(r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"), 0),
    ("stripe-key", _p(r"\bwhsec_[0-9A-Za-z]{20,}"), 0),
    ("npm-token", _p(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    ("huggingface-token", _p(r"\bhf_[A-Za-z0-9]{30,}\b"), 0),
    ("sendgrid-key", _p(r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}"), 0),
    ("pypi-token", _p(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{20,}"), 0),
    ("google-oauth-secret", _p(r"\bGOCSPX-[A-Za-z0-9_\-]{20,}"), 0),
    ("digitalocean-token", _p(r"\bdo[por]_v1_[a-f0-9]{64}\b"), 0),
    ("shopify-token", _p(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"), 0),
    ("mailgun-key", _p(r"\bkey-[a-f0-9]{32}\b"), 0),
    ("twilio-key", _p(r"\b(?:SK|AC)[a-f0-9]{32}\b"), 0),
    ("discord-token", _p(r"\b[MN][A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}"), 0),
    ("telegram-token", _p(r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"), 0),
    ("azure-storage-key", _p(r"(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})"), 1),
    ("jwt", _p(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), 0),
    # scheme://user:password@host — the password only, so the host stays readable.
    ("url-password", _p(r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/@'\"]+:([^\s@/'\"]{1,200})@"), 1),
    ("bearer-token", _p(r"(?i)\b(?:authorization:\s*)?bearer\s+([A-Za-z0-9_\-.~+/=]{16,})"), 1),
    # `Authorization: Basic dXNlcjpwYXNz` (base64 of user:password).
    ("basic-auth", _p(r"(?i)\bbasic\s+([A-Za-z0-9+/]{16,}={0,2})(?![A-Za-z0-9+/=])"), 1),
    # Japanese: `パスワードは Kx9-mQ2-pL7z です`, `APIキー：…`, `トークン= …` (the value is ASCII).
    ("secret-assignment", _p(
        r"(?:パスワード|暗証番号|トークン|シークレット|API ?キー|アクセスキー|秘密鍵|認証情報|クレデンシャル)"
        r"[\s\u3000]*(?:は|が|を|:|：|=|＝)[\s\u3000]*[\"'「]?([!-~]{6,}?)[\"'」]?(?=[\s\u3000、。，．]|[^!-~]|$)"), 1),
    # English prose: `the admin password is hunter2-Blue-77` (the value needs a digit).
    ("secret-assignment", _p(
        r"(?i)\b(?:password|passphrase|passwd|pwd|secret|api key|apikey|token)\s+(?:is|was|were|are)\s+"
        r"[\"'`]?([!-~]*\d[!-~]*?)[\"'`]?(?=[\s.,;]*(?:\s|$))"), 1),
    # KEY=value / KEY: value / "key": "value" where the key names a secret.
    ("secret-assignment", _p(
        r"""(?ix)
        (?<![A-Za-z0-9])
        ["']?[A-Za-z0-9_.\-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|apikey|
            access[_\-]?key|private[_\-]?key|client[_\-]?secret|auth(?:orization)?|credentials?|
            session[_\-]?key)
            # the secret word ends the key or a separator follows: `Co-authored-by` is no key
            s?(?:[_.\-][A-Za-z0-9_.\-]*)?["']?
        \s*(?:=|:|=>)\s*
        (?!\\?["']?\[REDACTED)
        \\?["']?([^\s"'`,;}{)(<>\\]{6,})\\?["']?
        """), 1),
]

# ASCII word boundaries: in Python `\b` treats kana and kanji as word characters, so a key
# written right after Japanese text (`値はsk-ant-…です`) would otherwise never match.
# Compiled on first use (≈35 ms for all of them): the hook scrubs every prompt and snippet,
# but almost none contain anything a pattern could match, and _could_hold_secret says so
# without compiling them.
_COMPILED: list[tuple[str, re.Pattern[str], int]] = []


def _compiled_patterns() -> list[tuple[str, re.Pattern[str], int]]:
    if not _COMPILED:
        _COMPILED.extend(
            (kind, re.compile(pattern, (flags & ~re.UNICODE) | re.ASCII), g)
            for kind, (pattern, flags), g in _SOURCES
        )
    return _COMPILED


def __getattr__(name: str) -> Any:
    if name == "PATTERNS":
        return _compiled_patterns()
    raise AttributeError(name)


# A necessary condition for any pattern above (and the entropy pass) to match: a marker
# (`-----BEGIN`, `user:pass@` in a URL, a provider prefix, a secret-ish word in English or
# Japanese), or a long token run with an upper-case letter or a digit. Every provider key is
# either prefixed or such a run; every assignment pattern needs one of the words.
_MARKERS = re.compile(
    r"-----BEGIN|://\S*@|hooks\.slack\.com"
    r"|(?<![A-Za-z0-9])(?:sk-|sk_|rk_|pk_|gh[pousr]_|github_pat_|glpat-|xox|whsec_|npm_|hf_|pypi-"
    r"|do[por]_v1_|shp|key-)"
    r"|(?i:pass|pwd|secret|token|api.?key|access.?key|private.?key|auth|credential|session.?key"
    r"|accountkey|sharedaccesskey|bearer|basic)"
    r"|パスワード|暗証番号|トークン|シークレット|キー|秘密鍵|認証情報|クレデンシャル"
)
_LONG_RUN = re.compile(r"[A-Za-z0-9_+/=.\-]{15,}")
_UPPER_OR_DIGIT = re.compile(r"[A-Z0-9]")


def _could_hold_secret(text: str) -> bool:
    if _MARKERS.search(text):
        return True
    return any(_UPPER_OR_DIGIT.search(run.group(0)) for run in _LONG_RUN.finditer(text))

_TOKEN = re.compile(r"[A-Za-z0-9+/_=\-]{32,}")
_HEX = re.compile(r"[0-9a-fA-F]+")


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    total = len(text)
    return -sum(c / total * math.log2(c / total) for c in counts.values())


def _is_random_token(token: str) -> bool:
    """Long, mixed, high-entropy runs (keys, signatures); not hashes, paths or identifiers."""
    if _HEX.fullmatch(token):
        return False  # git SHAs and content hashes are identifiers people search for
    if token.count("/") >= 2:
        # A path or URL: only a random-looking segment of its own counts.
        return any(_is_random_token(seg) for seg in token.split("/") if len(seg) >= 32)
    stripped = token.strip("=")
    if len(set(stripped)) < 16:
        return False
    classes = sum(bool(re.search(p, stripped)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    if classes < 3:
        return False
    # snake/kebab identifiers (`test_payment_client_retries_on_timeout`) are words, not keys.
    parts = re.split(r"[_\-]", stripped)
    if len(parts) >= 3 and all(p.isalpha() or p.isdigit() for p in parts if p):
        return False
    return _entropy(stripped) >= 4.3


# detect-secrets plugins used (class names). IPs and Artifactory are left out: IP addresses
# are not secrets, and the Artifactory pattern matches ordinary base64-ish words.
_PLUGINS = (
    "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "CloudantDetector",
    "DiscordBotTokenDetector", "GitHubTokenDetector", "GitLabTokenDetector", "IbmCloudIamDetector",
    "IbmCosHmacDetector", "JwtTokenDetector", "KeywordDetector", "MailchimpDetector", "NpmDetector",
    "OpenAIDetector", "PrivateKeyDetector", "PypiTokenDetector", "SendGridDetector", "SlackDetector",
    "SoftlayerDetector", "SquareOAuthDetector", "StripeDetector", "TelegramBotTokenDetector",
    "TwilioKeyDetector", "Base64HighEntropyString", "HexHighEntropyString",
)
_scanner: Callable[[str], list[tuple[str, str]]] | None = None


def _load_scanner() -> Callable[[str], list[tuple[str, str]]]:
    """Build a line scanner from detect-secrets' plugin classes (imported here, lazily)."""
    global _scanner
    if _scanner is not None:
        return _scanner
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.settings import transient_settings
    except ImportError:  # pragma: no cover - a dependency; the regex layer still runs
        _scanner = lambda line: []  # noqa: E731
        return _scanner
    classes = {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()}
    config: dict[str, Any] = {"plugins_used": []}
    for name in _PLUGINS:
        if name not in classes:
            continue
        entry: dict[str, Any] = {"name": name}
        if name == "Base64HighEntropyString":
            entry["limit"] = 4.5
        elif name == "HexHighEntropyString":
            entry["limit"] = 3.0
        config["plugins_used"].append(entry)
    with transient_settings(config):
        plugins = [classes[entry["name"]]() for entry in config["plugins_used"]]

    def scan(line: str) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for plugin in plugins:
            try:
                hits = plugin.analyze_line(filename="memrecall.txt", line=line, line_number=0)
            except Exception:  # a plugin bug must not stop redaction by the others
                continue
            for hit in hits or ():
                value = getattr(hit, "secret_value", None)
                if isinstance(value, str):
                    found.append((str(hit.type), value))
        return found

    _scanner = scan
    return scan


def _kind_of(secret_type: str) -> str:
    kind = re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
    return {"secret-keyword": "secret-assignment", "basic-auth-credentials": "url-password",
            "json-web-token": "jwt"}.get(kind, kind) or "secret"


def _regex_pass(text: str) -> tuple[str, int]:
    count = 0
    for kind, pattern, group in _compiled_patterns():
        def replace(match: re.Match[str], kind: str = kind, group: int = group) -> str:
            nonlocal count
            if group == 0:
                count += 1
                return f"[REDACTED:{kind}]"
            value = match.group(group)
            if not value or PLACEHOLDER.fullmatch(value) or value.startswith("[REDACTED"):
                return match.group(0)
            if kind == "secret-assignment" and not _looks_like_secret_value(value):
                return match.group(0)
            count += 1
            start, end = match.span(group)
            whole = match.group(0)
            offset = match.start(0)
            return whole[: start - offset] + f"[REDACTED:{kind}]" + whole[end - offset:]
        text = pattern.sub(replace, text)

    def entropy(match: re.Match[str]) -> str:
        nonlocal count
        token = match.group(0)
        start = match.start(0)
        if start and text[start - 1] == "#":
            return token  # a URL fragment (playground links encode whole files there)
        if not _is_random_token(token):
            return token
        count += 1
        return "[REDACTED:high-entropy]"
    text = _TOKEN.sub(entropy, text)
    return text, count


def _looks_like_secret_value(value: str) -> bool:
    """`password=hunter2` yes; `token: string`, `auth=None`, `secret=${SECRET}` no."""
    low = value.lower().strip("\"'")
    if low in {"none", "null", "true", "false", "undefined", "string", "str", "required", "optional",
               "redacted", "xxxxxx", "******", "changeme", "example", "password", "secret", "token",
               "bearer", "basic", "token:", "digest"}:
        return False
    if value.startswith(("$", "{", "%", "<", "os.", "process.", "env.", "getenv", "self.", "config.")):
        return False
    if value.isdigit() and len(value) < 16:
        return False  # `max_tokens: 4096`, `input_tokens: 123456`
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*(?:\(\))?", value) and not re.search(r"\d", value):
        return False  # a variable or attribute name in code: `token = request.token`
    return True


def _plugin_pass(text: str) -> tuple[str, int]:
    scan = _load_scanner()
    count = 0
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) > 4000:
            # detect-secrets is per line and quadratic-ish on huge lines; scan in slices.
            pieces = [line[i:i + 4000] for i in range(0, len(line), 4000)]
        else:
            pieces = [line]
        new_pieces = []
        for piece in pieces:
            hits = scan(piece) if piece.strip() else []
            for secret_type, value in sorted(hits, key=lambda h: -len(h[1])):
                if len(value) < 6 or "REDACTED" in value or value not in piece:
                    continue
                kind = _kind_of(secret_type)
                if kind in ("base64-high-entropy-string", "hex-high-entropy-string"):
                    if _HEX.fullmatch(value) and (len(value) < 32 or len(value) in (40, 64)):
                        continue  # git SHAs, digests and agent ids in quotes are identifiers
                    kind = "high-entropy"
                if kind == "secret-assignment" and not _looks_like_secret_value(value):
                    continue
                n = piece.count(value)
                piece = piece.replace(value, f"[REDACTED:{kind}]")
                count += n
            new_pieces.append(piece)
        out.append("".join(new_pieces))
    return "\n".join(out), count


def redact(text: str) -> tuple[str, int]:
    """Replace every secret found in `text` by `[REDACTED:<kind>]`; return (text, count)."""
    if not text:
        return text, 0
    text, first = _regex_pass(text)
    text, second = _plugin_pass(text)
    return text, first + second


def redact_all(texts: list[str]) -> tuple[list[str], int]:
    total = 0
    out = []
    for text in texts:
        clean, n = redact(text)
        out.append(clean)
        total += n
    return out, total


def redact_fast(text: str) -> str:
    """memrecall's own patterns only (no detect-secrets import, ~1 ms for a prompt): for the
    hook's hot path and search output, where a secret in a user's own note or prompt must
    not reach the model API, the recall log or another user's `ps` (rg's argv)."""
    if not text or text.isspace() or not _could_hold_secret(text):
        return text
    return _regex_pass(text)[0]

