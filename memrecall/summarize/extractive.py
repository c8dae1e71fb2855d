"""The `extractive` backend: a summary built from the transcript itself, no LLM.

A session is mostly the assistant's work: a two-hour run may hold one prompt and four hundred
replies. So "what we did" pairs each request with the reply that closed it, then adds the
milestones the assistant reported along the way and the errors met (and whether they were
fixed later); every list is sampled across the whole session, never just its start, so a
long session says as much as a short one within the same few lines.

Topics become `[[wikilinks]]`, i.e. nodes of an Obsidian graph: only names worth a node
(ticket ids, identifiers, file names, proper nouns, Japanese compounds) that are neither
stopwords nor everyday vocabulary (`generic.txt`), and at most `MAX_LINKS` of them.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..config import Settings
from ..redact import redact
from ..textcut import cut, one_line
from ..transcripts import Session, ToolCall
from .postfilter import NONE_LINE, SECTIONS, TITLE_MAX

if TYPE_CHECKING:
    from ..keywords import Keyword
    from .backends import SummaryJob

T = TypeVar("T")

# What one summary may hold, whatever the session's length.
MAX_REQUESTS = 5
MAX_MILESTONES = 4
MAX_ERRORS = 3
MAX_DECISIONS = 5
MAX_FILES = 30
MAX_URLS = 10
MAX_LINKS = 8
MAX_ID_LINKS = 4  # a session naming a hundred tickets still leaves room for other topics
MAX_FILE_LINKS = 3
BULLET_CHARS = 200
# Topic candidates come from the head and tail of each message: a pasted log repeats its
# words thousands of times and would outvote everything said about it.
TOPIC_HEAD_CHARS = 2000
TOPIC_TAIL_CHARS = 1000

LABELS = {
    "ja": {"error": "エラー", "fixed": "（のちに解決）"},
    "en": {"error": "Error", "fixed": " (fixed later)"},
}

_DECISION = re.compile(
    r"(決定|決め|決ま|確定|方針|にしよう|でいこう|でいく|ことにし|ことにする|のままで|で合意|代わりに|"
    r"採用|に変更|に統一|"
    r"\bdecid|\bagreed\b|\bsettle|let's go with|\bwe(?:'ll| will) (?:use|keep|go)|\bthe rule\b|"
    r"\bchose\b|\bopted\b|\binstead\b|\brather than\b|\bgoing with\b|\bswitch(?:ed)? to\b)",
    re.I,
)
# What an assistant says when a step is finished: the milestones of a long run.
_MILESTONE = re.compile(
    r"(完了|しました|直りました|通りました|成功|^✅|"
    r"\b(?:all|both)\b.*\b(?:pass|passed|passing)\b|\btests? (?:pass|passed)\b|"
    r"\b(?:is|are|now) (?:complete|done|fixed|working|green)\b|"
    r"^(?:fixed|implemented|added|created|removed|renamed|refactored|merged|pushed|committed|"
    r"updated|replaced|moved|wrote|resolved)\b)",
    re.I,
)
# The assistant narrating its next step, asking, or acknowledging carries no outcome.
_NARRATION = re.compile(
    r"^(?:now |first,? |next,? |ok(?:ay)?,? )?"
    r"(?:let me|let's|i'll|i will|i need|i should|今から|次に|まず)|\blet me\b",
    re.I,
)
_ACK_REPLY = re.compile(
    r"^(?:(?:承知|了解)(?:しました|です|いたしました)?|かしこまりました|わかりました|分かりました|"
    r"perfect|great|excellent|understood|sure|got it|done|good|ok(?:ay)?|all done|all set|"
    r"you're right|right)[!！。.、,\s]*$",
    re.I,
)
_ERRORISH = re.compile(
    r"error|fail|fatal|exception|traceback|not found|denied|cannot|could not|undefined|invalid|"
    r"refused|エラー|失敗",
    re.I,
)
_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")
# Tool errors that are Claude Code's own mechanics, not the project's: nothing to remember.
_NOISE_ERROR = re.compile(
    r"^(?:Sibling tool call errored|<tool_use_error>|File has not been read|String to replace|"
    r"File content \(\d+ tokens\) exceeds|The user doesn't want|Request interrupted)",
    re.I,
)
_EXIT = re.compile(r"^Exit code (\d+)\s*")
# `UTF-8`, `SHA-256`, `ISO-8601` have the shape of ticket ids and name no ticket.
_NOT_TICKETS = frozenset(
    {
        "UTF",
        "SHA",
        "ISO",
        "AES",
        "RSA",
        "HTTP",
        "TLS",
        "SSL",
        "CP",
        "EUC",
        "ES",
        "MD",
        "X",
        "PEP",
    }
)
# A capitalised word inside a sentence, or next to Japanese (which capitalises nothing).
_JA = "\u3040-\u30ff\u4e00-\u9fff、。「」（）"
_PROPER = re.compile(
    rf"(?:(?<=[a-z0-9,;:)] )|(?<=[{_JA}])|(?<=[{_JA}] )|^(?=\w+\s?[{_JA}]))"
    r"[A-Z][a-z]{3,}(?![A-Za-z0-9_]|\.[A-Za-z])",
    re.M,
)
_BEADS_CHILD = re.compile(r"(?:\.\d+)+$")
_KATAKANA_WORD = re.compile(r"[ァ-ヴー]+")
# The last line of a prompt that asks (a question, a request), not the end of a pasted log.
_ASK = re.compile(
    r"[?？]\s*$|(?:て|で|ください|たい|かな|か)[。.!！]?\s*$"
    r"|^(?:why|how|what|can|could|please)\b",
    re.I,
)
_LOWER_WORD = re.compile(r"(?<![A-Za-z])[a-z]{4,}(?![A-Za-z])")
_LINKABLE_IDENTIFIERS = frozenset({"ticket", "beads", "snake", "camel", "dotted", "kebab"})


def _sentences(text: str) -> list[str]:
    # Markdown list items are sentences of their own; table rows are not prose at all.
    text = text.replace("**", "").replace("\\n", "\n")
    parts = re.split(r"(?<=[。！？!?])\s*|(?<=\.)\s+|\n+", text)
    found = []
    for part in parts:
        line = one_line(part)
        if line.count("|") >= 2:
            continue
        line = re.sub(r"^(?:[-*•#>]+\s*|\d+[.)]\s+)+", "", line).strip()
        if line:
            found.append(line)
    return found


def spread(items: list[T], count: int) -> list[T]:
    """`count` items spread evenly over `items`, the first and the last always among them."""
    if len(items) <= count:
        return list(items)
    if count <= 1:
        return items[-count:] if count else []
    step = (len(items) - 1) / (count - 1)
    picked = sorted({round(i * step) for i in range(count)})
    return [items[i] for i in picked]


def request_line(text: str) -> str:
    """What a prompt asks, in one line: its first line, and its last when that asks something
    after a paste (`見て\\n<200 log lines>\\nなぜ落ちる？`)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    first, last = lines[0], lines[-1]
    if len(lines) > 2 and len(last) <= 100 and _ASK.search(last):
        return one_line(f"{cut(first, 100, whole_tokens=True)} … {last}")
    return one_line(first)


def first_sentence(text: str) -> str:
    """The first sentence that says something (`了解しました。`, `Done!` say nothing)."""
    sentences = _sentences(text)
    for sentence in sentences:
        if not _ACK_REPLY.match(sentence) and not sentence.endswith(("?", "？")):
            return sentence
    return sentences[0] if sentences else ""


@dataclass
class _Turn:
    request: str  # redacted
    replies: list[str]  # redacted assistant texts until the next request


def _turns(session: Session, clean: dict[int, str]) -> tuple[list[_Turn], list[str]]:
    """The session as requests with their replies, and the replies before any request."""
    turns: list[_Turn] = []
    before: list[str] = []
    for event in session.events:
        if event.kind == "human" and event.text.strip():
            turns.append(_Turn(clean[id(event)], []))
        elif event.kind == "assistant" and event.text.strip():
            (turns[-1].replies if turns else before).append(clean[id(event)])
    return turns, before


def _is_trivial(text: str) -> bool:
    """`ok`, `続けて`: the hook's own rule. A slash command with arguments is a request
    (`/review the auth flow`); the parser already dropped those without."""
    from ..recall import is_trivial

    return is_trivial(text, 2) not in (None, "slash command")


def _requests(turns: list[_Turn]) -> list[str]:
    """`- request → how it ended` for requests spread over the session."""
    asked = [t for t in turns if request_line(t.request) and not _is_trivial(t.request)]
    asked = asked or [t for t in turns if request_line(t.request)]
    lines: list[str] = []
    for turn in spread(asked, MAX_REQUESTS):
        request = cut(request_line(turn.request), 110, whole_tokens=True)
        closing = first_sentence(turn.replies[-1]) if turn.replies else ""
        room = BULLET_CHARS - len(request) - 5
        line = f"- {request}" + (f" → {cut(closing, room, whole_tokens=True)}" if closing else "")
        if line not in lines:
            lines.append(line)
    return lines


def _milestones(turns: list[_Turn], before: list[str], taken: str) -> list[str]:
    """What the assistant reported done along the way, beyond each turn's closing reply."""
    found: list[str] = []
    seen: set[str] = set()
    replies = before + [r for t in turns for r in t.replies[:-1]]
    for reply in replies:
        for sentence in _sentences(reply):
            key = sentence.casefold()
            if len(sentence) < 12 or key in seen or sentence in taken:
                continue
            if _NARRATION.search(sentence) or sentence.endswith(("?", "？")):
                continue
            if not _MILESTONE.search(sentence):
                continue
            seen.add(key)
            found.append(f"- {cut(sentence, BULLET_CHARS, whole_tokens=True)}")
    return spread(found, MAX_MILESTONES)


def _command_step(command: str) -> str:
    """The command without a leading `cd <dir> &&`: what was actually run."""
    return re.sub(r"^\s*cd\s+\S+\s*&&\s*", "", command).strip()


def _command_key(call: ToolCall | None) -> str:
    """`mix credo --strict` → `mix credo`: the same step run again, whatever its flags."""
    if call is None or not call.command:
        return ""
    words = [w for w in re.split(r"\s+", call.command.split("&&")[-1].strip()) if w]
    words = [w for w in words if "=" not in w or w.startswith("-")]  # `FOO=1 make` → make
    plain = [w for w in words if not w.startswith("-")]
    return " ".join(plain[:2])


def _error_detail(text: str) -> str:
    """The line of an error output that names the error (a test run prints much before it)."""
    lines = [ln.strip() for ln in text.replace("\\n", "\n").splitlines() if ln.strip()]
    best = next((ln for ln in lines if _ERRORISH.search(ln)), lines[0] if lines else "")
    return one_line(best)


def _errors(session: Session, language: str) -> list[str]:
    """Errors of the project's own commands, the ones fixed later first (not Claude Code's
    tool mechanics); fixed = the same command ran again without an error."""
    labels = LABELS[language]
    errors = [(e.text, e.tool) for e in session.events if e.kind == "tool_error" and e.tool]
    failed_calls = {id(call) for _, call in errors}
    later_ok: dict[str, int] = {}
    calls = [e for e in session.events if e.kind == "tool" and e.tool is not None]
    for index, event in enumerate(calls):
        key = _command_key(event.tool)
        if key and id(event.tool) not in failed_calls:
            later_ok[key] = index
    position = {id(e.tool): i for i, e in enumerate(calls)}
    fixed: list[str] = []
    open_: list[str] = []
    seen: set[str] = set()
    for raw, call in errors:
        key = _command_key(call)
        text = redact(raw)[0].strip()
        if not key or _NOISE_ERROR.match(text) or key in seen:
            continue
        seen.add(key)
        code = _EXIT.match(text)
        detail = _error_detail(text[code.end() :] if code else text)
        command = cut(one_line(_command_step(redact(call.command or "")[0])), 60, whole_tokens=True)
        exit_note = f" (exit {code.group(1)})" if code else ""
        is_fixed = later_ok.get(key, -1) > position.get(id(call), 0)
        line = f"- {labels['error']} `{command}`{exit_note}: "
        suffix = labels["fixed"] if is_fixed else ""
        line += (
            cut(detail, max(BULLET_CHARS - len(line) - len(suffix), 40), whole_tokens=True) + suffix
        )
        (fixed if is_fixed else open_).append(line)
    return spread(fixed, MAX_ERRORS) + spread(open_, MAX_ERRORS - min(len(fixed), MAX_ERRORS))


def _decisions(texts: list[str]) -> list[str]:
    found: list[str] = []
    for text in texts:
        for sentence in _sentences(text):
            if len(sentence) < 8 or not _DECISION.search(sentence):
                continue
            if _NARRATION.search(sentence) or sentence.endswith(("?", "？")):
                continue  # a plan or a question settles nothing
            line = f"- {cut(sentence, 160, whole_tokens=True)}"
            if line not in found:
                found.append(line)
    # Spread, the last always kept: later statements settle what earlier ones proposed.
    return spread(found, MAX_DECISIONS)


# --- topics -------------------------------------------------------------------------------


@dataclass
class _Vocabulary:
    stopwords: set[str]
    generic: frozenset[str]


def _vocabulary(settings: Settings) -> _Vocabulary:
    from ..gate import load_generic
    from ..resources import shipped_generic
    from ..tokenize import effective_stopwords

    generic = load_generic([shipped_generic(), settings.user_generic])
    return _Vocabulary(effective_stopwords(settings), generic)


def _topic_text(text: str) -> str:
    if len(text) <= TOPIC_HEAD_CHARS + TOPIC_TAIL_CHARS:
        return text
    # On line boundaries: `在庫同期` cut after `在庫同` would become a topic of its own.
    head = text[:TOPIC_HEAD_CHARS].rsplit("\n", 1)[0]
    tail = text[-TOPIC_TAIL_CHARS:].split("\n", 1)[-1]
    return head + "\n" + tail


def topics(
    session: Session, humans: list[str], assistants: list[str], vocabulary: _Vocabulary
) -> list[str]:
    """The names worth a graph node, most telling first, at most MAX_LINKS."""
    from ..gate import generic_keys
    from ..keywords import Keyword, extract
    from ..tokenizers.regex import RegexAnalyzer

    analyzer = RegexAnalyzer()  # no dictionary: the same topics wherever summarize runs
    scores: Counter[str] = Counter()  # messages naming it, a prompt counting twice
    messages: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = {}
    kinds: dict[str, Keyword] = {}
    first_seen: dict[str, int] = {}
    lowercase_words: set[str] = set()

    def count(keyword: Keyword, weight: int) -> None:
        key = keyword.key
        scores[key] += weight
        messages[key] += 1
        spellings.setdefault(key, Counter())[keyword.text] += 1
        kinds.setdefault(key, keyword)
        first_seen.setdefault(key, len(first_seen))

    units = [(_topic_text(t), 2) for t in humans] + [(_topic_text(t), 1) for t in assistants]
    texts = "\n".join(text for text, _ in units)
    for text, weight in units:
        lowercase_words.update(_LOWER_WORD.findall(text))
        found: dict[str, Keyword] = {}
        for keyword in extract(text, analyzer, vocabulary.stopwords):
            if not _linkable(keyword):
                continue
            if keyword.subkind == "beads":  # `spotter-a0y.2` is a task of the epic `spotter-a0y`
                keyword = Keyword(_BEADS_CHILD.sub("", keyword.text), "identifier", "beads", "")
            found.setdefault(keyword.key, keyword)
        for name in set(_PROPER.findall(text)):
            found.setdefault(name.casefold(), Keyword(name, "proper_noun", "proper_noun", ""))
        for keyword in found.values():
            count(keyword, weight)  # once per message: how widely it was talked about
    # files() shows the project's files relative to its cwd; an absolute one is elsewhere.
    inside = [p for p in session.files() if not Path(p).is_absolute()]
    for path in inside[:MAX_FILE_LINKS]:
        name = Path(path).name
        if "." in name.strip("."):
            # Edited files come first: what the session changed is what it was about.
            count(Keyword(name, "identifier", "dotted", ""), 2)

    everyday = generic_keys(list(kinds.values()), vocabulary.generic)
    candidates = []
    for key, keyword in kinds.items():
        if key in everyday or key in vocabulary.stopwords or scores[key] < 2:
            continue
        if keyword.kind != "identifier" and messages[key] < 2:
            continue  # a word said once is no topic; an id or a file name may be
        if keyword.kind == "proper_noun" and key in lowercase_words:
            continue  # also written in lower case: a common word at the start of a sentence
        if keyword.kind == "noun" and (
            _mostly_a_verb(keyword.text, texts) or _mostly_a_counter(keyword.text, texts)
        ):
            continue
        candidates.append(key)
    ranked = sorted(candidates, key=lambda k: (-scores[k], first_seen[k]))
    ids = [k for k in ranked if kinds[k].subkind in ("ticket", "beads")]
    others = [k for k in ranked if k not in ids]
    chosen = ids[:MAX_ID_LINKS]
    chosen += others[: MAX_LINKS - len(chosen)]
    chosen += ids[MAX_ID_LINKS : MAX_ID_LINKS + MAX_LINKS - len(chosen)]
    order = {k: i for i, k in enumerate(ids + others)}
    chosen.sort(key=lambda k: order[k])
    return [spellings[k].most_common(1)[0][0] for k in chosen]


def _mostly_a_verb(word: str, text: str) -> bool:
    """`実行しました`, `アップデートして`: a short kanji noun or a katakana word used mostly with
    する names an everyday action, not a topic (`在庫同期` is left alone)."""
    if not (len(word) <= 2 or _KATAKANA_WORD.fullmatch(word)):
        return False
    uses = text.count(word)
    verbal = len(re.findall(re.escape(word) + r"(?=し|す(?!ぎ)|さ[れせ]|でき)", text))
    return uses > 0 and verbal * 2 >= uses


def _mostly_a_counter(word: str, text: str) -> bool:
    """`5 番目`, `10秒`, `3件`: a word mostly written after a number counts something."""
    uses = text.count(word)
    counted = len(re.findall(r"\d\s*" + re.escape(word), text))
    return uses > 0 and counted * 2 >= uses


def _linkable(keyword: Keyword) -> bool:
    """Identifiers and Japanese nouns; plain English words never (`before`, `update`)."""
    if keyword.kind == "identifier":
        if keyword.subkind not in _LINKABLE_IDENTIFIERS:
            return False
        if keyword.subkind == "ticket" and keyword.text.split("-", 1)[0] in _NOT_TICKETS:
            return False
        if keyword.subkind == "dotted" and min(len(p) for p in keyword.text.split(".")) < 2:
            return False  # `e.g`, `i.e`, `x.y`
        return len(keyword.text) <= 60
    if keyword.kind not in ("noun", "compound") or len(keyword.text) < 2:
        return False
    return not keyword.text.startswith("何")  # `何秒`, `何件`: a question word with a counter


# --- the backend --------------------------------------------------------------------------


class ExtractiveBackend:
    """No LLM: the sections come straight from the transcript (frontmatter says so)."""

    name = "extractive"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def summarize(self, job: SummaryJob) -> str:
        s = job.session
        lang = "ja" if job.language == "ja" else "en"
        names = SECTIONS[lang]
        # Redact before any cutting: a key cut in half no longer looks like a key.
        done = job.condensed.redacted
        clean = {
            id(e): done[e.text] if e.text in done else redact(e.text)[0]
            for e in s.events
            if e.kind in ("human", "assistant") and e.text.strip()
        }
        humans = [clean[id(e)] for e in s.human_turns if id(e) in clean]
        assistants = [clean[id(e)] for e in s.assistant_texts if id(e) in clean]
        turns, before = _turns(s, clean)

        first_request = request_line(humans[0]) if humans else ""
        title = redact(s.title_hint())[0] or first_request or s.session_id[:8]
        title = cut(one_line(title), TITLE_MAX[lang], whole_tokens=True)
        last = first_sentence(assistants[-1]) if assistants else ""
        overview = cut(first_request, 160, whole_tokens=True)
        if last and last != first_request:
            overview += f" → {cut(last, 160, whole_tokens=True)}"

        requests = _requests(turns)
        decisions = _decisions(humans + assistants)
        said = "\n".join(requests + decisions)  # a milestone says something new
        did = requests + _milestones(turns, before, said) + _errors(s, lang)
        files = s.files()[:MAX_FILES]
        urls: list[str] = []
        for text in humans + assistants + [c.url or "" for c in s.tool_calls]:
            for url in _URL.findall(text):
                url = url.rstrip(".,、。")
                if url not in urls:
                    urls.append(url)
        links = topics(s, humans, assistants, _vocabulary(self.settings))

        body = [f"## {title}", overview, ""]
        body += [f"## {names[0]}", *(did or [NONE_LINE]), ""]
        body += [f"## {names[1]}", *(decisions or [NONE_LINE]), ""]
        body += [f"## {names[2]}", *([f"- {f}" for f in files] or [NONE_LINE]), ""]
        body += [f"## {names[3]}", *([f"- {u}" for u in urls[:MAX_URLS]] or [NONE_LINE]), ""]
        body += [f"## {names[4]}", " ".join(f"[[{t}]]" for t in links) or NONE_LINE, ""]
        if links:
            body.append(f"keywords: {', '.join(links)}")
        text = "\n".join(body) + "\n"
        # Nothing leaves the machine, but the summary is written to disk: redact it too.
        return redact(text)[0]


__all__ = ["ExtractiveBackend", "topics", "spread", "request_line", "MAX_LINKS"]
