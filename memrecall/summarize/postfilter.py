"""Check and clean a summary before it is written.

Rejects what must not become a memory: empty output, refusals, a conversation instead of a
summary, missing sections. Then keeps only facts the transcript supports: a path under the
files section survives only when a tool input of the session named it; a URL or path under
attachments survives only when the transcript text contains it. Finally the output is
redacted again (an LLM may echo a secret the first pass missed in another form).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..redact import redact
from ..textcut import cut, one_line
from ..transcripts import Session

SECTIONS: dict[str, tuple[str, str, str, str, str]] = {
    # what happened, decisions, files touched, attachments/URLs, topics
    "ja": ("何をしてた", "決まったこと", "触ったファイル", "添付ファイル・URL", "出てきた話題"),
    "en": ("What we did", "Decisions", "Files touched", "Attachments and URLs", "Topics"),
}
TITLE_MAX = {"ja": 30, "en": 60}
NONE_LINE = "- (none)"

_REFUSAL = re.compile(
    r"^\s*(?:I can(?:no|')t|I cannot|I'm (?:sorry|unable)|I am (?:sorry|unable)|Sorry,|As an AI|"
    r"I won't|申し訳|すみません|恐れ入りますが|お手伝いできません|できかねます)",
    re.I,
)
_TURN = re.compile(
    r"^\s*(?:\[(?:user|assistant)\]|(?:Human|Assistant|User|ユーザー|アシスタント)\s*[:：])",
    re.I | re.M,
)
_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
_LINK = re.compile(r"\[\[([^\[\]|]+?)(?:\|[^\[\]]*)?\]\]")


class Rejected(Exception):
    """A summary that must not be written; the message is the one-line reason."""


@dataclass
class Summary:
    title: str
    body: str  # markdown, sections in the template's order
    tags: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # paths/urls removed as unsupported


def _strip_wrapping(text: str) -> str:
    text = text.strip().lstrip("\ufeff")
    fence = re.match(r"^```[a-zA-Z]*\n(.*)\n```\s*$", text, re.S)
    if fence:
        text = fence.group(1).strip()
    return text


def _norm_path(value: str) -> str:
    value = value.strip().strip("`*_\"'")
    value = re.split(r"\s+[—–-]\s+|\s+\(", value, maxsplit=1)[0].strip().strip("`*_\"'")
    return value[2:] if value.startswith("./") else value


def _bullets(lines: list[str]) -> list[str]:
    return [ln.strip()[2:].strip() for ln in lines if ln.strip().startswith(("- ", "* ", "・"))]


def transcript_haystack(session: Session) -> str:
    parts = [e.raw or e.text for e in session.events]
    for call in session.tool_calls:
        parts.extend(call.paths)
        if call.url:
            parts.append(call.url)
        if call.command:
            parts.append(call.command)
    return "\n".join(parts)


def postfilter(text: str, session: Session, language: str) -> Summary:
    """Validate and clean `text`; raise `Rejected` with a one-line reason."""
    names = SECTIONS["ja" if language == "ja" else "en"]
    cleaned = _strip_wrapping(text or "")
    if not cleaned:
        raise Rejected("empty output")
    if _REFUSAL.search(cleaned[:300]):
        raise Rejected("the model refused: " + one_line(cleaned, 80))
    if len(_TURN.findall(cleaned)) >= 2:
        raise Rejected("a conversation, not a summary")
    start = cleaned.find("## ")
    if start < 0:
        raise Rejected("no sections in the output")
    cleaned = cleaned[start:]

    # Split into (heading, lines) in order.
    blocks: list[tuple[str, list[str]]] = []
    tail_keywords: list[str] = []
    for line in cleaned.split("\n"):
        if line.startswith("## "):
            blocks.append((line[3:].strip(), []))
        elif re.match(r"^\s*keywords\s*[:：]", line, re.I):
            tail_keywords = [
                k.strip()
                for k in re.split(r"[,、，]", line.split(":", 1)[-1].split("：", 1)[-1])
                if k.strip()
            ]
        elif blocks:
            blocks[-1][1].append(line)
    by_name = {_canon(h): lines for h, lines in blocks}
    missing = [n for n in names if _canon(n) not in by_name]
    if missing:
        raise Rejected("missing sections: " + ", ".join(missing))

    title_heading, title_lines = blocks[0]
    overview = [ln for ln in title_lines if ln.strip()]
    if _canon(title_heading) in {_canon(n) for n in names}:
        title, overview = "", []
    elif title_heading.lower() in ("title", "タイトル") and overview:
        title, overview = overview[0].strip(), overview[1:]
    else:
        title = title_heading
    title = title.strip().strip("#*` ").strip()
    if not title:
        title = _fallback_title(session)
    limit = TITLE_MAX["ja" if language == "ja" else "en"]
    title = cut(title, limit)

    dropped: list[str] = []
    allowed = session.input_paths()
    files: list[str] = []
    for item in _bullets(by_name[_canon(names[2])]):
        path = _norm_path(item)
        if not path or path.lower() in ("(none)", "none", "なし"):
            continue
        if path in allowed:
            shown = session.relative(path)
            if shown not in files:
                files.append(shown)
        else:
            dropped.append(path)
    haystack = transcript_haystack(session)
    attachments: list[str] = []
    for item in _bullets(by_name[_canon(names[3])]):
        target = _norm_path(item)
        if not target or target.lower() in ("(none)", "none", "なし"):
            continue
        url = _URL.search(item)
        key = url.group(0).rstrip(".,、。") if url else target
        if key in haystack:
            attachments.append(item)
        else:
            dropped.append(key)

    topics_text = "\n".join(by_name[_canon(names[4])]).strip()
    tags = []
    for link in _LINK.findall(topics_text):
        tag = link.strip()
        if tag and tag not in tags:
            tags.append(tag)
    tags = tags[:10]

    def section(name: str, lines: list[str]) -> str:
        content = "\n".join(lines).strip()
        return f"## {name}\n{content or NONE_LINE}\n"

    parts = [f"## {title}\n" + ("\n".join(overview).strip() + "\n" if overview else "")]
    parts.append(section(names[0], by_name[_canon(names[0])]))
    parts.append(section(names[1], by_name[_canon(names[1])]))
    parts.append(section(names[2], [f"- {p}" for p in files]))
    parts.append(section(names[3], [f"- {a}" for a in attachments]))
    parts.append(section(names[4], [topics_text] if topics_text else []))
    body = "\n".join(parts)
    if tail_keywords:
        body += f"\nkeywords: {', '.join(tail_keywords)}\n"
    if not any(b.strip() for b in _bullets(by_name[_canon(names[0])])):
        raise Rejected(f"section {names[0]} is empty")
    body, title = redact(body)[0], redact(title)[0]
    tags = [redact(t)[0] for t in tags]
    return Summary(
        title=title, body=body, tags=tags, keywords=tail_keywords, files=files, dropped=dropped
    )


def _canon(name: str) -> str:
    return re.sub(r"[\s・/&]+|and", "", name.strip().lower())


def _fallback_title(session: Session) -> str:
    if session.title_hint():
        return session.title_hint()
    for event in session.human_turns:
        if event.text.strip():
            return one_line(event.text)
    return session.session_id[:8]
