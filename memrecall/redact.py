"""Secret redaction for text that leaves the machine (LLM input) or is written to disk or shown.

One detector for every path out: summarize, the hook, `search` and the recall log all call
the rules below (`redact` adds a second opinion from detect-secrets; `redact_fast`, for the
hook's clock, does not — see README "Guarantees and security" for the measured cost).

How a text is read: a copy is normalised first (invisible characters such as U+200B or a
soft hyphen removed, then NFKC, so `ｐａｓｓｗｏｒｄ：` and `sk-\u200bant-…` read as what they are),
the rules run on the copy, and each hit is mapped back and replaced in the original text:
what is not a secret is left exactly as written.

The rules cover classes, not strings:

- provider keys of known shape (prefixes), JWTs, PEM/PuTTY private keys, 40-character cloud
  secret keys in the base64 alphabet (`/` and `+` included), long high-entropy tokens;
- credentials in URLs and DSNs whatever the password holds (`/`, `@`, `:`, `%`), in query
  parameters (`token=`, `key=`, `sig=` …) and webhook URLs of every provider shape;
- credentials on command lines (`--password …`, `-pSECRET` for mysql, `curl -u user:pass`,
  `redis-cli -a`, `sshpass -p`, `htpasswd -b`, `docker login -p`, `NAME_TOKEN=… cmd` …);
- credential files as tools print them (.netrc, .pgpass, .npmrc, .pypirc, docker
  config.json, .env, htpasswd/shadow hashes, XML/YAML keys incl. block scalars `password: |`);
- passwords in Japanese and English prose, with or without particles or verbs.

Every hit becomes `[REDACTED:<kind>]`. Rules are compiled on first use, and only those whose
literal trigger occurs in the text (the hook scrubs every prompt; almost none hold a secret).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

from . import regexcache

__all__ = [
    "redact",
    "redact_fast",
    "PLACEHOLDER",
    "normalise",
    "strip_private",
    "has_private",
    "has_optout",
]


def _lazy(pattern: str, flags: int = 0) -> Any:
    """Compiled on first use: the hook imports this module on every prompt and most prompts
    need few of its patterns (compiling all of them at import cost ~15 ms)."""
    return regexcache.LazyPattern(pattern, flags)


# What every redaction leaves behind (recall strips it before extracting keywords).
PLACEHOLDER = _lazy(r"\[REDACTED:[a-z0-9-]+\]")

# --- normalisation ---------------------------------------------------------------------

# Characters that render as nothing (or nearly): zero-width space/joiners, word joiner and
# the invisible operators, BOM, soft hyphen, bidi marks and isolates, variation selectors,
# Hangul fillers, tag characters. Inserted into a key, they hide it from every pattern.
_INVISIBLE = _lazy(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U000e0000-\U000e0fff]"
)
_NON_ASCII_RUN = _lazy(r"[^\x00-\x7f]+")
_SOUND_MARKS = "\uff9e\uff9f"  # half-width (han)dakuten: part of the kana before them


def normalise(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """`text` with invisible characters removed and NFKC applied, plus, per character of
    the result, where it starts and ends in `text` (None when nothing changed)."""
    if text.isascii() or (unicodedata.is_normalized("NFKC", text) and not _INVISIBLE.search(text)):
        return text, None, None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    changed = False
    pos = 0
    for run in _NON_ASCII_RUN.finditer(text):
        a, b = run.span()
        if pos < a:
            pieces.append(text[pos:a])
            starts.extend(range(pos, a))
            ends.extend(range(pos + 1, a + 1))
        chars = run.group(0)
        if not _INVISIBLE.search(chars) and unicodedata.is_normalized("NFKC", chars):
            pieces.append(chars)
            starts.extend(range(a, b))
            ends.extend(range(a + 1, b + 1))
        else:
            changed = True
            groups: list[list[Any]] = []  # [start, end, source]: a base and its marks
            for i, ch in enumerate(chars, a):
                if _INVISIBLE.match(ch):
                    continue
                if groups and (unicodedata.combining(ch) or ch in _SOUND_MARKS):
                    groups[-1][1] = i + 1
                    groups[-1][2] += ch
                else:
                    groups.append([i, i + 1, ch])
            for start, end, source in groups:
                out = unicodedata.normalize("NFKC", source)
                pieces.append(out)
                starts.extend([start] * len(out))
                ends.extend([end] * len(out))
        pos = b
    if not changed:
        return text, None, None
    if pos < len(text):
        pieces.append(text[pos:])
        starts.extend(range(pos, len(text)))
        ends.extend(range(pos + 1, len(text) + 1))
    return "".join(pieces), starts, ends


def _to_original(
    span: tuple[int, int], starts: list[int] | None, ends: list[int] | None, length: int
) -> tuple[int, int]:
    s, e = span
    if starts is None or ends is None:
        return s, e
    if s >= len(starts):
        return length, length
    return starts[s], ends[e - 1] if e > s else starts[s]


def _remove_spans(
    text: str,
    spans: list[tuple[int, int]],
    starts: list[int] | None,
    ends: list[int] | None,
    replacement: Callable[[int], str],
) -> str:
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for index, span in enumerate(spans):
        a, b = _to_original(span, starts, ends, len(text))
        if a < pos:
            a = pos
        out.append(text[pos:a])
        out.append(replacement(index))
        pos = max(pos, b)
    out.append(text[pos:])
    return "".join(out)


# --- privacy switches ---------------------------------------------------------------------

# `<private>…</private>` in every spelling an IME produces: after NFKC `＜` `＞` `／` and
# full-width letters are ASCII; spaces inside the tag, any case; CJK angle brackets too.
_PRIVATE_SPAN = _lazy(
    r"[<\u3008]\s*private\s*[>\u3009].*?(?:[<\u3008]\s*/\s*private\s*[>\u3009]|\Z)",
    re.S | re.I,
)
# Where compatibility forms of ASCII live (full-width, small forms, circled, mathematical):
# the characters whose NFKC is the one wanted, found without normalising a 4 MB prompt.
_COMPAT_RANGES = (
    (0x20, 0x7F),
    (0x2000, 0x2070),
    (0x2460, 0x2500),
    (0x3000, 0x3040),
    (0xFE50, 0xFE70),
    (0xFF00, 0xFFF0),
    (0x1D400, 0x1D800),
)
_variants_table: dict[str, set[str]] = {}
_GAP = "(?:\\s|" + _INVISIBLE.pattern + ")*"
_INNER_GAP = "(?:" + _INVISIBLE.pattern + ")*"
_OPTOUT_CACHE: dict[str, re.Pattern[str] | None] = {}
_PRIVATE_OPEN: list[re.Pattern[str]] = []


def _variants(char: str) -> str:
    """A character class of every spelling whose NFKC (lower-cased) is `char`."""
    if not _variants_table:
        for low, high in _COMPAT_RANGES:
            for code in range(low, high):
                folded = unicodedata.normalize("NFKC", chr(code)).lower()
                if len(folded) == 1:
                    _variants_table.setdefault(folded, set()).add(chr(code))
    found = _variants_table.get(char.lower(), set()) | {char, char.lower(), char.upper()}
    return "[" + "".join(re.escape(c) for c in sorted(found)) + "]"


def _spelled(word: str, gap: str) -> str:
    return gap.join(_variants(c) for c in word)


def _private_open() -> re.Pattern[str]:
    if not _PRIVATE_OPEN:
        bracket = "(?:" + _variants("<") + "|\u3008)"
        _PRIVATE_OPEN.append(re.compile(bracket + _GAP + _spelled("private", _INNER_GAP)))
    return _PRIVATE_OPEN[0]


_FOLDED: dict[str, str] = {}


def _fold_char(char: str) -> str:
    if char < "\x80":
        return char.lower()
    if _INVISIBLE.match(char):
        return ""
    return unicodedata.normalize("NFKC", char).lower()


def folded(text: str) -> str:
    """`text` with every character NFKC-folded on its own, lower-cased, invisible characters
    dropped: what the switches are matched against. Character by character, so a prompt costs
    a dictionary lookup per distinct character — the exact patterns below (every spelling of
    each letter as a character class) take ~15 ms to build, which the hook pays only when this
    cheap test says a switch may be there. The last result is kept: the hook asks twice."""
    if text in _FOLDED:
        return _FOLDED[text]
    if text.isascii():
        result = text.lower()
    else:
        table: dict[str, str | int | None] = {}
        for char in set(text):
            if char >= "\x80":
                table[char] = _fold_char(char)
        result = text.translate(str.maketrans(table)).lower() if table else text.lower()
    _FOLDED.clear()
    _FOLDED[text] = result
    return result


def _may_hold_private(text: str) -> bool:
    return bool(re.search(r"[<\u3008]\s*private", folded(text)))


def _private_spans(text: str) -> tuple[list[tuple[int, int]], list[int] | None, list[int] | None]:
    if not _may_hold_private(text) or not _private_open().search(text):
        return [], None, None  # the common case, answered without normalising the text
    norm, starts, ends = normalise(text)
    return [m.span() for m in _PRIVATE_SPAN.finditer(norm)], starts, ends


def has_private(text: str) -> bool:
    return bool(_private_spans(text)[0])


def strip_private(text: str, replacement: str = "") -> str:
    """`text` without its `<private>` spans (an unclosed one runs to the end)."""
    spans, starts, ends = _private_spans(text)
    return _remove_spans(text, spans, starts, ends, lambda _: replacement)


def _optout_pattern(marker: str) -> re.Pattern[str] | None:
    if marker not in _OPTOUT_CACHE:
        chars = [c for c in normalise(marker)[0] if not c.isspace()]
        # Each character in any width or case, spaces or invisible characters between them:
        # NFKC's answer, without normalising the whole prompt.
        _OPTOUT_CACHE[marker] = (
            re.compile(_GAP.join(_variants(c) for c in chars)) if chars else None
        )
    return _OPTOUT_CACHE[marker]


def has_optout(text: str, marker: str) -> bool:
    """True when `text` holds the opt-out marker in any width, case or spacing
    (`#memrecall:off`, `＃ｍｅｍｒｅｃａｌｌ：ｏｆｆ`, `# MemRecall : Off`)."""
    letters = [c for c in folded(marker) if not c.isspace()]
    if not letters:
        return False
    # Every spelling of every letter folds to that letter: absent from the folded prompt,
    # the marker is absent in any spelling, and the exact pattern need not be built.
    if not re.search(r"\s*".join(re.escape(c) for c in letters), folded(text)):
        return False
    pattern = _optout_pattern(marker)
    return bool(pattern and pattern.search(text))


# --- value checks -------------------------------------------------------------------------

# Words that stand where a secret would but are not one: types, placeholders, states.
_NON_VALUES = frozenset(
    """
none null nil true false undefined string str int bool boolean number object any required optional
redacted xxxxxx xxxx xxx changeme change_me example sample dummy test password passwd passphrase
secret token bearer basic digest token: yourpassword your_password mypassword my_password
yourtoken your_token mytoken your_api_key api_key apikey hidden masked empty unset default
env environment variable variables value values file stdin prompt ask interactive no-check nocheck
""".split()
)
_QUOTES = "\"'`“”‘’「」『』"
_TRAILING = ".,;:!?)。、，．：；！？）"
_CODE_REF = _lazy(
    r"^(?:\$|%\(|%[sd]\b|\{|<[A-Za-z_ -]+>$|\[[A-Za-z_ -]+\]$|os\.|process\.|env\.|getenv|"
    r"self\.|this\.|config\.|settings\.|secrets\.|vars\.|params\.|args\.|opts\.|options\.|request\.|req\.)"
)
_PATHISH = _lazy(
    r"^(?:~|\.{1,2})?/|^[A-Za-z]:\\|\.(?:pem|key|json|txt|p12|pfx|crt|cer|asc|gpg|ya?ml|toml|ini|conf|env|jks|keystore)$",
    re.I,
)
# Code, not a value: a call (`getProperty(`), an attribute chain (`request.token`).
_CODE = _lazy(r"[A-Za-z_]\w*[(\[]|^[A-Za-z_]\w*(?:\.#?[A-Za-z_]\w*)+$")
_NAMING_WORD = _lazy(
    r"token|secret|passw|passphrase|key|credential|example|sample|dummy|placeholder|your|changeme"
)
_WORDISH = _lazy(r"[A-Za-z][a-z]*(?:[_\-][A-Za-z][a-z]*)*|[a-z]+(?:[A-Z][a-z]+)+")


def _is_placeholder(value: str) -> bool:
    low = value.lower().strip(_QUOTES).lstrip("\\")
    if not low or low in _NON_VALUES or _CODE_REF.match(low):
        return True
    if (
        len(set(low)) == 1
        or "..." in low
        or "…" in low
        or "{{" in low
        or ("<" in low and ">" in low)
    ):
        return True  # `********`, `...`, `{{password}}`, `<your-token>`
    if "xxxx" in low or "****" in low or low.startswith(("<", "[", "(")):
        return True
    # `reload-token`, `secret-key-to-be-managed`, `my_secret`: a name standing in for a value.
    return bool(re.fullmatch(r"[a-z]+(?:[-_.][a-z]+)*", low) and _NAMING_WORD.search(low))


def _check_strong(value: str) -> bool:
    """A value where the context says "this is the password" (a flag, a credential file)."""
    return len(value) >= 3 and not _is_placeholder(value)


def _check_flag(value: str) -> bool:
    # `--secret id=ssh,src=~/.ssh/x` is a spec, `--password-file ./p` a path: neither is the secret.
    return (
        _check_strong(value)
        and not value.startswith("-")
        and not _PATHISH.search(value)
        and not re.match(r"[A-Za-z_]+=", value)
    )


def _check_assignment(value: str) -> bool:
    """`password=hunter2` yes; `token: string`, `auth=None`, `secret=${SECRET}` no."""
    if _is_placeholder(value):
        return False
    if value.isdigit() and len(value) < 16:
        return False  # `max_tokens: 4096`, `input_tokens: 123456`
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*(?:\(\))?", value) and not re.search(r"\d", value):
        return False  # a variable or attribute name in code: `token = request.token`
    return not _PATHISH.search(value) and not _CODE.search(
        value
    )  # `token: /run/secrets/token` names a file


def _check_prose(value: str) -> bool:
    """A word after `password is`: a secret when it is not plain prose (a digit, a symbol,
    an inner capital); `the password is required` stays."""
    if len(value) < 4 or _is_placeholder(value) or _CODE.search(value):
        return False
    return bool(re.search(r"\d|[^A-Za-z0-9]|.[A-Z]", value))


def _check_colon(value: str) -> bool:
    """`PW: tiger-lily`, `パスワード：kanrisha`: a colon after a password word names the value."""
    return (
        len(value) >= 4
        and not _is_placeholder(value)
        and not value.endswith(":")
        and not _CODE.search(value)
    )


def _check_random(value: str) -> bool:
    """A token where the context is weaker (`トークンは…`): it must look random."""
    if len(value) < 8 or _is_placeholder(value) or _PATHISH.search(value) or _CODE.search(value):
        return False
    if _WORDISH.fullmatch(value) or re.fullmatch(r"(?:[A-Z]+|[A-Z]?[a-z]+)+", value):
        return False  # `accessToken`, `refresh_token`, `AmazonSNS`, `Bearer`
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    return classes >= 2 and (bool(re.search(r"\d", value)) or len(value) >= 16)


def _check_url_password(value: str) -> bool:
    if re.match(r"\d{1,5}/", value):
        return False  # `http://localhost:8080/@vite/client`: a port, then a path with `@`
    return not _is_placeholder(value)


def _check_cloud_secret(value: str) -> bool:
    """40 characters of the base64 alphabet: an AWS/GCP-HMAC style secret key, unless it is
    a path made of words (`src/components/HelloWorld/…`)."""
    if not (re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)):
        return False
    if not re.search(r"[\d/+]", value):
        return False
    segments = [s for s in value.split("/") if s]
    if len(segments) > 1 and all(_WORDISH.fullmatch(s) or s.isdigit() for s in segments):
        return False
    return _entropy(value) >= 4.2


def _check_webhook_tail(value: str) -> bool:
    # `/webhooks/about-webhooks` is documentation; `/hooks/catch/123456/abcdef` is a key.
    return len(value) >= 10 and bool(re.search(r"\d", value)) and not _is_placeholder(value)


# --- rules --------------------------------------------------------------------------------


@dataclass
class _Rule:
    kind: str
    source: str
    needs: tuple[
        str, ...
    ]  # lower-case literals, one of which any match contains; () = a long token run
    group: int = 0  # the part replaced (0: the whole match)
    check: Callable[[str], bool] | None = None
    flags: int = 0
    trim: bool = False  # prose: strip quotes and sentence punctuation around the value
    spans: Callable[[re.Match[str]], list[tuple[int, int]]] | None = None
    compiled: re.Pattern[str] | None = None

    def pattern(self) -> re.Pattern[str]:
        if self.compiled is None:
            self.compiled = re.compile(self.source, self.flags | re.ASCII)
        return self.compiled


def _flag_rule(source: str, needs: tuple[str, ...], trim: bool = True) -> _Rule:
    """A password given to a command-line tool by its flag (`mysql -pSECRET`, `sshpass -p …`):
    the value (group 1) is redacted when it looks like a secret, not a path or a spec."""
    return _Rule("cli-credential", source, needs, group=1, check=_check_flag, trim=trim)


_KEYWORD = (
    r"pass(?:word|wd|phrase|code)?|pwd|secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"private[_\-]?key|client[_\-]?secret|auth(?:orization)?|credentials?|session[_\-]?key|"
    r"psk|key[_\-]?data|(?:signing|encryption|master|secret|app|license|account)[_\-]?key|"
    r"webhook(?:[_\-]?url)?|connection[_\-]?string|conn[_\-]?str"
)
_KEYWORD_NEEDS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "credential",
    "psk",
    "webhook",
    "conn",
)
# A value on a command line: quoted, or up to the next space or shell operator.
_SHELL_VALUE = r"""("[^"\n]{1,256}"|'[^'\n]{1,256}'|[^\s"'`|;&<>()]{1,256})"""
# Same command line: no newline, no `;`, `|` or `&` between the program and the flag.
_SAME_COMMAND = r"[^\n;|&]*?"
# End of a URL inside text.
_URL_REST = r"""[^\s"'<>`)\]}]+"""


def _htpasswd_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    """`htpasswd -b[c|B…] [file] user password`: the last positional argument is the password."""
    args = match.group(1)
    offset = match.start(1)
    tokens = [
        (m.group(0), m.start() + offset, m.end() + offset)
        for m in re.finditer(r"\"[^\"\n]*\"|'[^'\n]*'|\S+", args)
    ]
    flags = [t for t, _, _ in tokens if t.startswith("-")]
    if not any("b" in f for f in flags):
        return []
    positional = [(s, e, t) for t, s, e in tokens if not t.startswith("-")]
    if len(positional) < 2:
        return []
    s, e, value = positional[-1]
    if value[:1] in "\"'" and len(value) > 1:
        s, e, value = s + 1, e - 1, value[1:-1]
    return [(s, e)] if _check_strong(value) else []


def _quoted_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    for name in ("a", "b", "c", "d"):
        if match.group(name) is not None:
            value = match.group(name).strip()
            if len(value) >= 3 and not _is_placeholder(value):
                return [match.span(name)]
    return []


# Japanese password words (no `パス` alone: that is also "path").
_JA_STRONG = r"(?:パスワード|パスフレーズ|暗証番号|合言葉|PINコード)"
# ASCII password words inside Japanese: whole words only (`password_hash` is code).
_ASCII_PW = (
    r"(?<![A-Za-z0-9_])"
    r"(?:PW|pw|Pw|pwd|PWD|passwd|password|Password|PASSWORD|pass|PASS|PIN)"
    r"(?![A-Za-z0-9_])"
)
_ENV_STRONG_PARTS = (
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "PASS",
    "PWD",
    "SECRET",
    "TOKEN",
    "APIKEY",
    "CREDENTIAL",
    "CREDENTIALS",
)
_ENV_WEAK_PARTS = ("KEY", "AUTH", "DSN")
_ENV_NAMING = frozenset(
    """ID NAME NAMES ARN PATH FILE DIR URL URI TYPE REGION BUCKET PREFIX SUFFIX ENABLED ENABLE
DISABLED LENGTH LEN SIZE TTL EXPIRY EXPIRES TIMEOUT HEADER FIELD KIND MODE VERSION COUNT MAX MIN
FORMAT ALGORITHM ALG SCOPE SCOPES ISSUER AUDIENCE LOCATION ENDPOINT HOST PORT USER USERNAME EMAIL
PROVIDER METHOD STORE ROTATION""".split()
)


def _env_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    """`NAME=value` where an underscore-separated part of NAME names a secret
    (`PGPASSWORD`, `SSHPASS`, `MYSQL_PWD`, `GITHUB_TOKEN`, `REDISCLI_AUTH`, `STRIPE_KEY`)."""
    parts = match.group(1).split("_")
    if parts[-1] in _ENV_NAMING:
        return []  # `SECRET_ID`, `TOKEN_URL`, `PASSWORD_FILE`: the name of a secret, not one
    strong = any(p.endswith(_ENV_STRONG_PARTS) or p in ("PAT", "PSK") for p in parts if p)
    weak = any(p in _ENV_WEAK_PARTS or p.endswith("AUTH") for p in parts)
    if not (strong or weak):
        return []
    norm = match.string
    start, end = _trim(norm, *match.span(2))
    value = norm[start:end]
    ok = _check_flag(value) if strong else _check_random(value)
    return [(start, end)] if ok and end > start else []


def _assignment_spans(match: re.Match[str]) -> list[tuple[int, int]]:
    """`key = value` where the key names a secret, not a thing about one (`token_url`,
    `password_file`, `secret_id`), and the value is not a plain URL (those rules are above)."""
    key = match.group("key").lower()
    if key.replace("-", "_").replace(".", "_").split("_")[-1].upper() in _ENV_NAMING:
        return []
    value = match.group("value")
    if re.match(r"[a-z][a-z0-9+.\-]*://", value, re.I) and "hook" not in key:
        return []
    return [match.span("value")] if _check_assignment(value) else []


_JA_WEAK = (
    r"(?:アクセストークン|リフレッシュトークン|トークン|シークレットキー|シークレット|"
    r"API ?キー|APIKey|API Key|"
    r"アクセスキー|秘密鍵|暗号化キー|暗号鍵|復号キー|復号鍵|認証キー|認証情報|"
    r"クレデンシャル|マスターキー|ライセンスキー|"
    r"秘密の値|秘密情報)"
)
_JA_NEEDS = (
    "パスワード",
    "パスフレーズ",
    "暗証番号",
    "合言葉",
    "pin",
    "pw",
    "passwd",
    "password",
    "トークン",
    "シークレット",
    "キー",
    "apikey",
    "api key",
    "秘密",
    "鍵",
    "認証",
    "クレデンシャル",
)
# After a keyword: `の値は`, `（本番）：`, `は「…」`, or nothing at all (`パスワードXYZでログイン`).
_JA_JOIN = (
    r"(?:[\(（][^\)）\n]{1,20}[\)）])?(?:の値|の中身|の文字列|の内容)?"
    r"[ \t]*(?:は|が|を|って|とは|:|=|＝|→|->)?[ \t]*[「『\"'`]?"
)
_ASCII_VALUE = r"([!-~]{3,200})"
_EN_STRONG = r"(?<![$@%\w.\-/])(?:password|passwd|passphrase|passcode)"
_EN_ANY = (
    r"(?<![$@%\w.\-/])(?!(?-i:PASS\b))"
    r"(?:password|passwd|passphrase|passcode|pass|pw|pwd|pin|secret|token|api[ _\-]?key)"
)
_EN_FOR = (
    r"(?:\s+(?:for|of|on|to)\s+(?:the\s+|my\s+|our\s+|your\s+|this\s+)?[\w@.\-]+"
    r"(?:\s+(?:account|user|server|db|database|box|host|vm|instance|wifi|wi-fi))?)?"
)
_EN_VERB = r"(?:is|was|are|were|will\s+be|should\s+be|is\s+now|becomes|became)"
_OPEN_Q = r"[\"'`“‘]?"

_RULES: list[_Rule] = [
    # --- blocks ---
    _Rule(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        ("-----begin",),
        flags=re.S,
    ),
    # Escaped newlines: a key pasted inside a JSON string or a tool input.
    _Rule(
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:\\n|[A-Za-z0-9+/=\s])+?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY-----)?",
        ("-----begin",),
    ),
    # A key's body without its armour: the base64 of the format's own magic bytes
    # (`openssh-key-v1`, PKCS#1 RSA, PKCS#8, SEC1 EC, Ed25519).
    _Rule(
        "private-key",
        r"(?<![A-Za-z0-9+/])(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/]{2}[A-Za-z0-9+/]IBAAKC|"
        r"MII[A-Za-z0-9+/]{2}[A-Za-z0-9+/]IBADANBgkqhkiG9w0BAQEFAASC|MHcCAQEE|MIGHAgEAMBMGByqGSM49|MC4CAQAwBQYDK2Vw)"
        r"[A-Za-z0-9+/=]*",
        (
            "b3blbnnzac1rzxktdje",
            "ibaakc",
            "ibadanbgkqhkig9w0baqefaasc",
            "mhccaqee",
            "mighageambmgbyqgsm49",
            "mc4caqawbqydk2vw",
        ),
    ),
    _Rule(
        "private-key",
        r"Private-Lines:\s*\d+\s*\n(?:[ \t]*[A-Za-z0-9+/=]{8,}[ \t]*\n?)+",
        ("private-lines",),
    ),
    # --- provider keys ---
    _Rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}", ("sk-ant-",)),
    _Rule("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    _Rule(
        "github-token",
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _Rule("github-token", r"\bgithub_pat_[A-Za-z0-9_]{30,}", ("github_pat_",)),
    _Rule(
        "gitlab-token",
        r"\bgl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_\-]{20,}",
        ("gl",),
    ),
    _Rule("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", ("xox",)),
    _Rule("slack-token", r"\bxapp-\d-[A-Za-z0-9\-]{10,}", ("xapp-",)),
    _Rule(
        "aws-access-key",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b",
        ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "abia", "acca"),
    ),
    _Rule("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}", ("aiza",)),
    _Rule("google-oauth-token", r"\bya29\.[0-9A-Za-z_\-]{20,}", ("ya29.",)),
    _Rule("google-oauth-token", r"(?<![A-Za-z0-9])1//0[0-9A-Za-z_\-]{30,}", ("1//0",)),
    _Rule("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}", ("_live_", "_test_")),
    _Rule("stripe-key", r"\bwhsec_[0-9A-Za-z]{20,}", ("whsec_",)),
    _Rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", ("npm_",)),
    _Rule("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", ("hf_",)),
    _Rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}", ("sg.",)),
    _Rule("pypi-token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{20,}", ("pypi-",)),
    _Rule("google-oauth-secret", r"\bGOCSPX-[A-Za-z0-9_\-]{20,}", ("gocspx-",)),
    _Rule("digitalocean-token", r"\bdo[por]_v1_[a-f0-9]{64}\b", ("_v1_",)),
    _Rule("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", ("shp",)),
    _Rule("mailgun-key", r"\bkey-[a-f0-9]{32}\b", ("key-",)),
    _Rule("atlassian-token", r"\bATATT3[A-Za-z0-9_\-=]{30,}", ("atatt3",)),
    _Rule("linear-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}", ("lin_",)),
    _Rule(
        "notion-token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b", ("secret_", "ntn_")
    ),
    _Rule("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", ("hvs.", "hvb.", "hvr.")),
    _Rule("terraform-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", ("atlasv1",)),
    _Rule("doppler-token", r"\bdp\.(?:st|pt|ct|sa|scim|audit)\.[A-Za-z0-9_\-.]{20,}", ("dp.",)),
    _Rule("postman-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", ("pmak-",)),
    _Rule("grafana-token", r"\bgl(?:c|sa)_[A-Za-z0-9+/=_\-]{32,}", ("glc_", "glsa_")),
    _Rule(
        "newrelic-key", r"\bNR(?:AK|AA|II|JS)-[A-Z0-9]{20,}", ("nrak-", "nraa-", "nrii-", "nrjs-")
    ),
    _Rule("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", ("age-secret-key-",)),
    _Rule("supabase-token", r"\bsbp_[a-f0-9]{40}\b", ("sbp_",)),
    _Rule("figma-token", r"\bfig[dou]_[A-Za-z0-9_\-]{30,}", ("fig",)),
    _Rule("firebase-key", r"\bAAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{60,}", ("apa91b",)),
    _Rule("twilio-key", r"\b(?:SK|AC)[a-f0-9]{32}\b", ()),
    _Rule("discord-token", r"\b[MN][A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}", ()),
    _Rule("telegram-token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b", ()),
    # Azure AD client secrets: `xxx8Q~…` (their `~` and `.` break every base64 rule).
    _Rule(
        "azure-client-secret",
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
        ("q~",),
    ),
    _Rule(
        "azure-storage-key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)=([A-Za-z0-9+/%]{20,}(?:={0,2}|%3D){0,2})",
        ("accountkey", "sharedaccess"),
        group=1,
    ),
    _Rule("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", ("eyj",)),
    # AWS/GCP-HMAC style secret keys: 40 characters of base64 with `/` and `+`, alone.
    _Rule(
        "cloud-secret-key",
        r"(?<![A-Za-z0-9+/=_\-.])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=_\-])",
        (),
        check=_check_cloud_secret,
    ),
    # ... and any length, when the words around it say what it is.
    _Rule(
        "cloud-secret-key",
        r"(?i)(?:aws[ _\-]?secret(?:[ _\-]?access)?(?:[ _\-]?key)?|secret[ _\-]?access[ _\-]?key|"
        r"secretaccesskey|"
        r"シークレットアクセスキー)[\"'\s]*(?:[:=]|=>|is|は|:)?[\"'\s]*([A-Za-z0-9+/]{16,}={0,2})",
        ("secret", "シークレットアクセスキー"),
        group=1,
        check=_check_strong,
    ),
    # --- URLs ---
    # Webhooks: the whole URL is the credential. Slack (services, workflows, triggers),
    # Discord, Teams/Office 365, Power Automate, Google Chat, IFTTT, Feishu/Lark.
    _Rule("webhook-url", r"https?://hooks\.slack(?:-gov)?\.com/" + _URL_REST, ("hooks.slack",)),
    _Rule(
        "webhook-url",
        r"(?i)https?://(?:[a-z0-9\-]+\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/" + _URL_REST,
        ("discord",),
    ),
    _Rule(
        "webhook-url",
        r"(?i)https?://[a-z0-9\-.]*\.webhook\.office\.com/" + _URL_REST,
        ("webhook.office",),
    ),
    _Rule(
        "webhook-url",
        r"(?i)https?://outlook\.office(?:365)?\.com/webhook/" + _URL_REST,
        ("outlook.office",),
    ),
    _Rule(
        "webhook-url",
        r"(?i)https?://[a-z0-9\-.]*\.logic\.azure\.com(?::\d+)?/workflows/" + _URL_REST,
        ("logic.azure",),
    ),
    _Rule(
        "webhook-url",
        r"(?i)https?://[a-z0-9\-.]*\.api\.powerplatform\.com(?::\d+)?/" + _URL_REST,
        ("powerplatform",),
    ),
    _Rule(
        "webhook-url",
        r"(?i)https?://chat\.googleapis\.com/v1/spaces/" + _URL_REST,
        ("chat.googleapis",),
    ),
    _Rule("webhook-url", r"(?i)https?://maker\.ifttt\.com/" + _URL_REST, ("ifttt",)),
    _Rule(
        "webhook-url",
        r"(?i)https?://open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/" + _URL_REST,
        ("open-apis/bot",),
    ),
    # Any other service's webhook: what follows a `/hooks/`-like path segment.
    _Rule(
        "webhook-url",
        r"(?i)https?://[^\s/\"'<>]+/(?:[^\s\"'<>?#]*/)?(?:hooks?|webhooks?|webhookb2|incoming-webhooks?|"
        r"trigger|triggers|catch|notify)/(" + _URL_REST + ")",
        ("hook", "trigger", "catch", "notify"),
        group=1,
        check=_check_webhook_tail,
    ),
    # scheme://user:password@host: the password only, so the host stays readable. Greedy up
    # to the last `@` before a host: the password may hold `/`, `@`, `:` or `%40`.
    _Rule(
        "url-password",
        r"(?i)\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/@\"'<>]*:([^\s\"'<>`]+)@[a-z0-9\-._~%\[\]]+",
        ("://",),
        group=1,
        check=_check_url_password,
    ),
    # scheme://TOKEN@host (Sentry DSNs, `https://ghp_…@github.com`): a long random user name.
    _Rule(
        "url-password",
        r"(?i)\b[a-z][a-z0-9+.\-]{1,30}://([A-Za-z0-9_\-]{20,})@[a-z0-9\-._~]+",
        ("://",),
        group=1,
        check=_check_random,
    ),
    # Query parameters that carry credentials (signed URLs, API keys, Google Chat tokens).
    _Rule(
        "url-credential",
        r"(?i)[?&;#](?:[a-z0-9_\-.]*(?:password|passwd|pwd|pass|token|secret|api[_\-]?key|apikey|key|sig|"
        r"signature|auth|credential|client[_\-]?secret)|x-amz-(?:signature|credential|security-token)|"
        r"x-goog-(?:signature|credential))=([^&\s#\"'<>`]{6,})",
        ("=",),
        group=1,
        check=lambda v: _check_assignment(v) and not re.fullmatch(r"[\d\-:T.Z%]+|[a-z]{1,5}", v),
    ),
    # --- shell: flags and environment ---
    # `--password=…`, `--password …`, `--db-pass …`, `--api-key …`, `--token …` (any program).
    _flag_rule(
        r"(?i)(?<![\w\-])--(?:[a-z0-9]+-)*(?:password|passwd|pass|passphrase|pwd|token|secret|api-?key|"
        r"apikey|auth-token|access-token|access-key|secret-key|client-secret|key-password|storepass|keypass|"
        r"credentials?|auth)(?:=|[ \t]+)" + _SHELL_VALUE,
        ("--",),
    ),
    # keytool / openssl / ldap / sqlcmd / zip: single-dash password flags.
    _flag_rule(
        r"(?<![\w\-])-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)[ \t]+"
        + _SHELL_VALUE,
        ("pass",),
    ),
    _flag_rule(
        r"(?<![\w\-])-pass(?:in|out)?[ \t]+pass:" + _SHELL_VALUE,
        ("pass:",),
    ),
    _flag_rule(
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mysqlslap|mysqlpump|"
        r"mariadb(?:-dump|-admin|-import|-check)?)\b"
        + _SAME_COMMAND
        + r"[ \t]-p(?!-)"
        + _SHELL_VALUE,
        ("mysql", "mariadb"),
    ),
    _flag_rule(
        r"\bsshpass\b" + _SAME_COMMAND + r"[ \t]-p[ \t]*" + _SHELL_VALUE,
        ("sshpass",),
    ),
    _flag_rule(
        r"\bredis-cli\b" + _SAME_COMMAND + r"[ \t]-a[ \t]+" + _SHELL_VALUE,
        ("redis-cli",),
    ),
    _flag_rule(
        r"\b(?:docker|podman|buildah|skopeo|nerdctl|helm|oras|crane|regctl)\b"
        + _SAME_COMMAND
        + r"\blogin\b"
        + _SAME_COMMAND
        + r"[ \t]-p[ \t]*"
        + _SHELL_VALUE,
        ("login",),
    ),
    _flag_rule(
        r"\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop)\b"
        + _SAME_COMMAND
        + r"[ \t]-p[ \t]*"
        + _SHELL_VALUE,
        ("mongo",),
    ),
    _flag_rule(
        r"\b(?:sqlcmd|bcp|osql|isql)\b" + _SAME_COMMAND + r"[ \t]-P[ \t]*" + _SHELL_VALUE,
        ("sqlcmd", "bcp", "osql", "isql"),
    ),
    _flag_rule(
        r"\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b"
        + _SAME_COMMAND
        + r"[ \t]-w[ \t]+"
        + _SHELL_VALUE,
        ("ldap",),
    ),
    _flag_rule(
        r"\b(?:zip|unzip)\b" + _SAME_COMMAND + r"[ \t]-P[ \t]+" + _SHELL_VALUE,
        ("zip",),
    ),
    _flag_rule(
        r"\b(?:7z|7za|7zr|rar|unrar)\b" + _SAME_COMMAND + r"[ \t]-p" + _SHELL_VALUE,
        ("7z", "rar"),
    ),
    _flag_rule(
        r"\b(?:smbclient|rpcclient|smbmap|smbget|crackmapexec|nxc|net\s+use)\b"
        + _SAME_COMMAND
        + r"[ \t](?:-U|--user(?:name)?=?|/user:)[ \t]*[\"']?[^\s%\"']+%"
        + _SHELL_VALUE,
        ("smb", "rpcclient", "crackmapexec", "nxc", "net"),
    ),
    # `curl -u user:pass`, `--user user:pass`, `--proxy-user`, `wget --user … --password …`.
    _flag_rule(
        r"\b(?:curl|wget|http|https|xh|httpie|ab|lftp|ftp)\b"
        + _SAME_COMMAND
        + r"[ \t](?:-u|-U|--user|--proxy-user|--http-user)(?:=|[ \t]*)"
        r"[\"']?[^\s:\"']*:([^\s\"']{1,256})",
        ("curl", "wget", "http", "xh", "ab", "ftp"),
        trim=False,
    ),
    # `sqlplus scott/tiger@db`, `expdp system/pass`.
    _flag_rule(
        r"\b(?:sqlplus|expdp|impdp|exp|imp|sqlldr|rman\s+target)\s+(?:-\S+\s+)*[A-Za-z0-9_$#]+/([^\s@/]{1,128})(?=@|\s|$)",
        ("sqlplus", "expdp", "impdp", "exp", "imp", "sqlldr", "rman"),
        trim=False,
    ),
    _Rule(
        "cli-credential",
        r"\bhtpasswd\b((?:[ \t]+[^\s;|&<>]+)+)",
        ("htpasswd",),
        spans=_htpasswd_spans,
    ),
    # `echo 'pw' | docker login --password-stdin`, `echo 'user:pw' | chpasswd`.
    _flag_rule(
        r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?"
        + _SHELL_VALUE
        + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?\S*[^\n]*?--password-stdin",
        ("password-stdin",),
    ),
    _flag_rule(
        r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?[\"']?[^\s:\"']+:([^\s\"']{1,128})[\"']?"
        r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd",
        ("chpasswd",),
        trim=False,
    ),
    _Rule(
        "cli-credential",
        r"\bvault\s+login\s+(?:-\S+\s+)*([A-Za-z0-9_.\-]{8,})",
        ("vault",),
        group=1,
        check=_check_random,
    ),
    # `PGPASSWORD=… psql`, `export API_TOKEN=…`, `MYSQL_PWD=…`: shell-style names.
    _Rule(
        "env-assignment",
        r"(?<![\w$.\-])([A-Z][A-Z0-9_]{1,80})=" + _SHELL_VALUE,
        ("pass", "pwd", "secret", "token", "apikey", "auth", "credential", "key", "psk", "dsn"),
        spans=_env_spans,
    ),
    # --- credential files ---
    # .netrc: `machine h login u password p` on one line or several.
    _Rule(
        "netrc-password",
        r"(?i)\b(?:machine\s+\S+|default(?=\s+login\b))(?:\s+(?:login|account|port)\s+\S+)*\s+password\s+(\S+)",
        ("machine", "default"),
        group=1,
        check=_check_strong,
    ),
    # .pgpass: `host:port:database:user:password`.
    _Rule(
        "pgpass-password",
        r"(?m)^[ \t]*(?:[A-Za-z0-9.\-_\[\]]+|\*):(?:\d{1,5}|\*):"
        r"(?:[^\s:]+|\*):(?:[^\s:]+|\*):(\S+)[ \t]*$",
        (":",),
        group=1,
        check=_check_strong,
    ),
    # .npmrc: `//registry/:_authToken=…`, `_auth=…`, `_password=…`.
    _Rule(
        "npmrc-token",
        r"(?i)(?:^|[\s:])_(?:authToken|auth|password)[ \t]*=[ \t]*([^\s\"']{4,})",
        ("_auth", "_password"),
        group=1,
        check=_check_strong,
    ),
    # docker config.json: `"auth": "base64"`, `"identitytoken": …`.
    _Rule(
        "docker-auth",
        r"(?i)\"(?:auth|identitytoken|registrytoken|password|secret)\"\s*:\s*\"([^\"\n]{4,})\"",
        ("auth", "token", "password", "secret"),
        group=1,
        check=_check_strong,
    ),
    # .pypirc, .my.cnf, rclone, wpa_supplicant, INI: `password = …` alone on its line.
    _Rule(
        "secret-assignment",
        r"(?im)^[ \t]*(?:password|passwd|pass|psk|secret|token)[ \t]*[=:][ \t]*(\S{3,}?)[ \t]*$",
        ("pass", "psk", "secret", "token"),
        group=1,
        check=_check_strong,
        trim=True,
    ),
    # htpasswd and shadow lines: `user:$apr1$…`, `user:$6$…`, `user:$2y$…`.
    _Rule(
        "password-hash",
        r"(?m)(?:^|\s)[\w.\-@]+:(\$(?:apr1|2[abxy]?|1|5|6|y|gy|7|argon2i?d?)\$[^\s:]{8,})",
        ("$",),
        group=1,
    ),
    # XML: `<password>…</password>`, `<apiKey>…</apiKey>`.
    _Rule(
        "secret-assignment",
        r"(?i)<([\w:.\-]*(?:password|passwd|secret|token|api[_\-]?key|apikey|credentials?)[\w.\-]*)>"
        r"([^<\n]{3,200})</\1>",
        ("pass", "secret", "token", "key", "credential"),
        group=2,
        check=_check_assignment,
    ),
    # YAML block scalars: `password: |` (or `>-`) and the indented lines under it.
    _Rule(
        "secret-block",
        r"(?m)^([ \t]*)[\w.\-\"']*(?i:"
        + _KEYWORD
        + r")[\w.\-\"']*[ \t]*:[ \t]*[|>][0-9+\-]*[ \t]*(?:#[^\n]*)?\n"
        r"(?:[ \t]*\n)*\1[ \t]+(\S[^\n]*(?:\n(?:[ \t]*\n)*\1[ \t]+\S[^\n]*)*)",
        _KEYWORD_NEEDS,
        group=2,
    ),
    # --- headers ---
    _Rule(
        "bearer-token",
        r"(?i)\b(?:authorization:\s*)?bearer\s+([A-Za-z0-9_\-.~+/=]{16,})",
        ("bearer",),
        group=1,
    ),
    _Rule(
        "auth-header",
        r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:token|bearer|basic|digest|apikey|api-key|key|sso-key|"
        r"splunk|ghp|otp)?\s*([A-Za-z0-9_\-.~+/=:]{8,})",
        ("authorization",),
        group=1,
        check=_check_random,
    ),
    # `Authorization: Basic dXNlcjpwYXNz` (base64 of user:password).
    _Rule(
        "basic-auth",
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{16,}={0,2})(?![A-Za-z0-9+/=])",
        ("basic",),
        group=1,
    ),
    # --- prose ---
    # Japanese: `パスワードはKx9-mQ2-pL7zです`, `PWの値は…`, `パスワード：…`,
    # `パスワード hunter2 で`.
    _Rule(
        "secret-assignment",
        _JA_STRONG
        + r"(?:[\(（][^\)）\n]{1,20}[\)）])?[ \t]*[:=＝][ \t]*[「『\"'`]?"
        + _ASCII_VALUE,
        _JA_NEEDS,
        group=1,
        check=_check_colon,
        trim=True,
    ),
    _Rule(
        "secret-assignment",
        _JA_STRONG + _JA_JOIN + _ASCII_VALUE + r"(?=[^!-~]|$)",
        _JA_NEEDS,
        group=1,
        check=_check_prose,
        trim=True,
    ),
    _Rule(
        "secret-assignment",
        _ASCII_PW
        + r"(?:の値|の中身)?[ \t]*(?:は|が|を|って|とは)[ \t]*[「『\"'`]?"
        + _ASCII_VALUE
        + r"(?=[^!-~]|$)",
        _JA_NEEDS,
        group=1,
        check=_check_prose,
        trim=True,
    ),
    _Rule(
        "secret-assignment",
        _JA_WEAK + _JA_JOIN + _ASCII_VALUE + r"(?=[^!-~]|$)",
        _JA_NEEDS,
        group=1,
        check=_check_random,
        trim=True,
    ),
    # `hunter2-Blue がパスワード`, `Kx9… というパスワード`, `…をパスワードに設定`.
    _Rule(
        "secret-assignment",
        r"(?<![!-~])[「『\"'`]?([!-~]{4,200}?)[」』\"'`]?"
        r"[ \t]*(?:が|を|は|という|って|って言う)[ \t]*"
        r"(?:新しい|本番の|今の|DBの|管理者の|ログイン)?(?:パスワード|パスフレーズ|暗証番号|合言葉|PW)",
        _JA_NEEDS,
        group=1,
        check=_check_prose,
        trim=True,
    ),
    # Any password word, then a quoted value: `パスフレーズ「correct horse」`,
    # `password is "two words"`.
    _Rule(
        "secret-assignment",
        r"(?i)(?:"
        + _JA_STRONG
        + r"|"
        + _JA_WEAK
        + r"|\b"
        + _EN_ANY
        + r"\b)"
        + _EN_FOR
        + r"[ \t]*(?:の値|の中身)?[ \t]*(?:は|が|を|って|:|=|->|→|"
        + _EN_VERB
        + r"|set\s+to|to|as)?[ \t]*"
        r"(?:「(?P<a>[^」\n]{1,200})」|『(?P<b>[^』\n]{1,200})』|“(?P<c>[^”\n]{1,200})”|(?P<q>[\"'`])(?P<d>[^\n]{1,200}?)(?P=q))",
        _JA_NEEDS + ("pass", "secret", "token", "key"),
        spans=_quoted_spans,
    ),
    # English: `password: x`, `pw: x`, `the pw for bob is x`, `password hunter2`.
    _Rule(
        "secret-assignment",
        r"(?i)\b" + _EN_ANY + _EN_FOR + r"[ \t]*(?::|->|→)[ \t]*" + _OPEN_Q + _ASCII_VALUE,
        ("pass", "pw", "pin", "secret", "token", "key"),
        group=1,
        check=_check_colon,
        trim=True,
    ),
    _Rule(
        "secret-assignment",
        r"(?i)\b"
        + _EN_ANY
        + _EN_FOR
        + r"\s+"
        + _EN_VERB
        + r"\s+(?:now\s+|still\s+|set\s+to\s+|just\s+)?"
        + _OPEN_Q
        + _ASCII_VALUE,
        ("pass", "pw", "pin", "secret", "token", "key"),
        group=1,
        check=_check_prose,
        trim=True,
    ),
    _Rule(
        "secret-assignment",
        r"(?i)\b" + _EN_STRONG + r"[ \t]+" + _OPEN_Q + _ASCII_VALUE,
        ("pass",),
        group=1,
        check=_check_prose,
        trim=True,
    ),
    # `set the password to x`, `changed my db password to x`, `reset it to x` after a password word.
    _Rule(
        "secret-assignment",
        r"(?i)\b(?:set|change|changed|reset|update|updated|rotate|rotated|make|made)\s+"
        r"(?:the\s+|my\s+|our\s+|your\s+|his\s+|her\s+|their\s+|its\s+)?(?:[\w\-]+\s+){0,2}?"
        + _EN_ANY
        + r"(?:\s+(?:for|of|on)\s+[\w@.\-]+)?\s+(?:to|as|=|into)\s+"
        + _OPEN_Q
        + _ASCII_VALUE,
        ("pass", "pw", "pin", "secret", "token", "key"),
        group=1,
        check=_check_prose,
        trim=True,
    ),
    # `use x as the password`, `with x as password`.
    _Rule(
        "secret-assignment",
        r"(?i)\b(?:use|used|using|with|try|tried)\s+"
        + _OPEN_Q
        + r"([!-~]{4,200}?)[\"'`”’]?\s+as\s+"
        r"(?:the\s+|my\s+|our\s+|your\s+|a\s+)?(?:[\w\-]+\s+)?" + _EN_ANY + r"\b",
        ("pass", "pw", "pin", "secret", "token", "key"),
        group=1,
        check=_check_prose,
        trim=True,
    ),
    # `credentials: admin/hunter2`, `login: admin / pass: x` (the pass part is caught above).
    _Rule(
        "secret-assignment",
        r"(?i)\bcred(?:ential)?s?\s*[:=]\s*[^\s/:]+\s*[/:]\s*(\S{3,200})",
        ("cred",),
        group=1,
        check=_check_strong,
        trim=True,
    ),
    # KEY=value / KEY: value / "key": "value" where the key names a secret.
    _Rule(
        "secret-assignment",
        r"""(?ix)
          (?<![A-Za-z0-9_.\-])  # from the start of a word only: linear, not quadratic, per word
          ["']?(?P<key>[A-Za-z0-9_.\-]*(?:"""
        + _KEYWORD
        + r""")
              # the secret word ends the key or a separator follows: `Co-authored-by` is no key
              s?(?:[_.\-][A-Za-z0-9_.\-]*)?)["']?
          \s*(?:=|:|=>)\s*
          (?!\\?["']?\[REDACTED)
          \\?["']?(?P<value>[^\s"'`,;}{)(<>\\]{6,})\\?["']?
          """,
        _KEYWORD_NEEDS,
        spans=_assignment_spans,
    ),
]

# A run of token characters long enough to be a key without a prefix.
_LONG_RUN = _lazy(r"[A-Za-z0-9_+/=.~\-]{20,}")
_UPPER_OR_DIGIT = _lazy(r"[A-Z0-9]")
_TOKEN = _lazy(r"[A-Za-z0-9+/_=\-]{32,}")
_HEX = _lazy(r"[0-9a-fA-F]+")
_TRACKING = _lazy(
    r"(?<![A-Za-z0-9_])(?:gclid|fbclid|msclkid|dclid|yclid|gbraid|wbraid|mc_eid|_ga|_gl)=$"
)
_PUBLIC_KEY = _lazy(
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+"
    r"|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)[ \t]+$"
)


def _has_long_run(text: str) -> bool:
    return any(_UPPER_OR_DIGIT.search(run.group(0)) for run in _LONG_RUN.finditer(text))


def _active_rules(norm: str) -> tuple[list[_Rule], bool]:
    low = norm.lower()
    long_run = _has_long_run(norm)
    active = [r for r in _RULES if (any(lit in low for lit in r.needs) if r.needs else long_run)]
    return active, long_run


def _could_hold_secret(text: str) -> bool:
    """Cheap necessary condition for any rule (or the entropy pass) to match `text`."""
    norm = normalise(text)[0]
    active, long_run = _active_rules(norm)
    return bool(active) or long_run


def __getattr__(name: str) -> Any:
    if name == "PATTERNS":
        return [(r.kind, r.pattern(), r.group) for r in _RULES]
    raise AttributeError(name)


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


_WORD_SEGMENT = _lazy(r"(?:^|/)[a-z][a-z0-9_.\-]{2,}(?:/|$)")


def _random_parts(token: str) -> list[tuple[int, int]]:
    """The spans of `token` that are a key: the value of `NAME=value`, the random segment
    of a path (`notes/<key>.md` keeps its folders), or the whole token."""
    if "=" in token.strip("="):
        # `NAME=value` (an env line): each side on its own; base64 pads only at the end.
        out: list[tuple[int, int]] = []
        pos = 0
        for part in token.split("="):
            if len(part) >= 32:
                out += [(pos + s, pos + e) for s, e in _random_parts(part)]
            pos += len(part) + 1
        return out
    if "/" in token and (token[0] in "/~." or _WORD_SEGMENT.search(token)):
        out, pos = [], 0
        for segment in token.split("/"):
            if len(segment) >= 32 and _is_random_token(segment):
                out.append((pos, pos + len(segment)))
            pos += len(segment) + 1
        return out
    return [(0, len(token))] if _is_random_token(token) else []


def _trim(norm: str, start: int, end: int) -> tuple[int, int]:
    """Drop quotes and sentence punctuation around a prose value."""
    while start < end and norm[start] in _QUOTES:
        start += 1
    while end > start and (norm[end - 1] in _QUOTES or norm[end - 1] in _TRAILING):
        end -= 1
    return start, end


def _spans(norm: str, rules: list[_Rule], long_run: bool) -> list[tuple[int, int, str]]:
    """Every (start, end, kind) the rules find in the normalised text, overlaps merged."""
    protected = [m.span() for m in PLACEHOLDER.finditer(norm)] if "[REDACTED:" in norm else []
    found: list[tuple[int, int, int, str]] = []  # start, end, rule order, kind

    def add(start: int, end: int, order: int, kind: str) -> None:
        if end - start < 1:
            return
        if any(start < pe and ps < end for ps, pe in protected):
            return  # already redacted: a second pass changes nothing
        found.append((start, end, order, kind))

    for order, rule in enumerate(rules):
        for match in rule.pattern().finditer(norm):
            if rule.spans is not None:
                for start, end in rule.spans(match):
                    add(start, end, order, rule.kind)
                continue
            start, end = match.span(rule.group)
            if start < 0:
                continue
            if rule.trim:
                start, end = _trim(norm, start, end)
            value = norm[start:end]
            if not value or (rule.check is not None and not rule.check(value)):
                continue
            add(start, end, order, rule.kind)
    if long_run:
        for match in _TOKEN.finditer(norm):
            start = match.start()
            if start and norm[start - 1] == "#":
                continue  # a URL fragment (playground links encode whole files there)
            if _PUBLIC_KEY.search(norm, max(0, start - 40), start):
                continue  # `ssh-ed25519 AAAA…`: a public key, shared on purpose
            for s, e in _random_parts(match.group(0)):
                if _TRACKING.search(norm, max(0, start + s - 16), start + s):
                    continue  # `&gclid=…`: an ad click id in a copied link
                add(start + s, start + e, len(rules), "high-entropy")
    if not found:
        return []
    found.sort(key=lambda f: (f[0], f[2], -f[1]))
    merged: list[tuple[int, int, str]] = []
    for start, end, _, kind in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, kind))
    return merged


def _regex_pass(text: str) -> tuple[str, int]:
    """memrecall's own rules over `text`: (redacted text, number of redactions)."""
    if not text:
        return text, 0
    norm, starts, ends = normalise(text)
    rules, long_run = _active_rules(norm)
    if not rules and not long_run:
        return text, 0
    spans = _spans(norm, rules, long_run)
    if not spans:
        return text, 0
    kinds = [kind for _, _, kind in spans]
    out = _remove_spans(
        text, [(s, e) for s, e, _ in spans], starts, ends, lambda i: f"[REDACTED:{kinds[i]}]"
    )
    return out, len(spans)


def _full_pass(text: str) -> tuple[str, int]:
    """Every rule, no literal gate (tests compare it with the gated pass)."""
    norm, starts, ends = normalise(text)
    spans = _spans(norm, list(_RULES), True)
    kinds = [kind for _, _, kind in spans]
    return _remove_spans(
        text, [(s, e) for s, e, _ in spans], starts, ends, lambda i: f"[REDACTED:{kinds[i]}]"
    ), len(spans)


# --- detect-secrets (summarize only) ------------------------------------------------------

# detect-secrets plugins used (class names). IPs and Artifactory are left out: IP addresses
# are not secrets, and the Artifactory pattern matches ordinary base64-ish words.
_PLUGINS = (
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "KeywordDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
    "Base64HighEntropyString",
    "HexHighEntropyString",
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
    by_type: dict[Any, Any] = get_mapping_from_secret_type_to_class()
    classes = {cls.__name__: cls for cls in by_type.values()}
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
    return {
        "secret-keyword": "secret-assignment",
        "basic-auth-credentials": "url-password",
        "json-web-token": "jwt",
    }.get(kind, kind) or "secret"


def _plugin_line(line: str, scan: Callable[[str], list[tuple[str, str]]]) -> tuple[str, int]:
    norm, starts, ends = normalise(line)
    spans: list[tuple[int, int, str]] = []
    for secret_type, value in sorted(scan(norm), key=lambda h: -len(h[1])):
        if len(value) < 6 or "REDACTED" in value:
            continue
        kind = _kind_of(secret_type)
        if _is_placeholder(value):
            continue  # `https://<user>:<token>@host` in a how-to
        if kind in ("base64-high-entropy-string", "hex-high-entropy-string"):
            if _HEX.fullmatch(value) and (len(value) < 32 or len(value) in (40, 64)):
                continue  # git SHAs, digests and agent ids in quotes are identifiers
            kind = "high-entropy"
        if kind == "secret-assignment" and not _check_assignment(value):
            continue
        at = norm.find(value)
        while at >= 0:
            spans.append((at, at + len(value), kind))
            at = norm.find(value, at + len(value))
    if not spans:
        return line, 0
    spans.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end), merged[-1][2])
        else:
            merged.append((start, end, kind))
    kinds = [k for _, _, k in merged]
    return _remove_spans(
        line, [(s, e) for s, e, _ in merged], starts, ends, lambda i: f"[REDACTED:{kinds[i]}]"
    ), len(merged)


def _plugin_pass(text: str) -> tuple[str, int]:
    scan = _load_scanner()
    count = 0
    out: list[str] = []
    for line in text.split("\n"):
        # detect-secrets is per line and quadratic-ish on huge lines; scan in slices.
        pieces = (
            [line[i : i + 4000] for i in range(0, len(line), 4000)] if len(line) > 4000 else [line]
        )
        new_pieces = []
        for piece in pieces:
            if piece.strip():
                piece, n = _plugin_line(piece, scan)
                count += n
            new_pieces.append(piece)
        out.append("".join(new_pieces))
    return "\n".join(out), count


# --- entry points ---------------------------------------------------------------------------


def redact(text: str) -> tuple[str, int]:
    """Replace every secret found in `text` by `[REDACTED:<kind>]`; return (text, count)."""
    if not text:
        return text, 0
    text, first = _regex_pass(text)
    text, second = _plugin_pass(text)
    return text, first + second


def redact_fast(text: str) -> str:
    """The same rules as `redact`, without detect-secrets' second opinion (its import alone
    costs ~270 ms): for the hook's clock, `search` output and the recall log."""
    if not text or text.isspace():
        return text
    return _regex_pass(text)[0]
