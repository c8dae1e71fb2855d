"""Did Claude use what the hook injected? One verdict per injected memory, from the transcript.

For every injection in the recall log, the same session's transcript is read from the turn
of that prompt to the next prompt a person typed, and each injected memory gets a verdict:

- `used`: a tool call named it: Read/Grep/Glob/Edit on the note's file, a Bash command
  naming its path or ref (`cat …`, `memrecall show …`), or its issue id (`bd show bd-7q2k`);
  a subagent's tool calls in that turn count for the session that started it;
- `mentioned`: Claude's own text in that turn (its replies, a subagent's prompt or replies)
  names the memory — its id, its title, its file name, or a phrase quoted from the injected
  lines — in words the prompt itself did not contain;
- `ignored`: the turn was answered and neither happened;
- `unknown`: there is no transcript (deleted after 30 days, excluded, not written yet) or
  the prompt's turn is not in it yet.

Which prompt an injection belongs to comes from the transcript itself: Claude Code saves the
injected context (a `hook_additional_context` attachment now, a system reminder inside the
prompt before), so the injection whose memories that context names is matched to it, and the
turn is the prompt just before it. Only when no saved context matches does the log's time
pick the prompt. `transcripts.parse_session` reads every layout (compaction, resumed copies,
the three subagent layouts); this module adds a line scan for the saved contexts and for the
session ids a file holds, and hands subagent records to the same parser.

Incremental: `state/usage-read.json` keeps each transcript's size and mtime and the session
ids in it, and per session a fingerprint of its files; a session is read again only when
one of its files changed or it has an injection without a verdict. Verdicts live in
`state/usage.jsonl`, rewritten atomically; a verdict never turns `unknown` because the
transcript was deleted later. No model is asked: string tests only.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterator

from .config import Settings
from .recall_log import read_numbered
from .times import instant_or_none
from .transcripts import capped_lines

VERDICTS = ("used", "mentioned", "ignored", "unknown")
USAGE_FILE = "usage.jsonl"
READ_STATE_FILE = "usage-read.json"
STATE_VERSION = 1
MARKER = b"memrecall-context"

# Session ids a file holds are looked for in its head: a resumed 2.0.x session copies the
# old session's records (old id) to the top of its new file.
HEAD_BYTES = 64 * 1024
# A longer line is a model request or a huge paste, never the saved context of an injection.
SCAN_LINE_MAX = 4 * 1024 * 1024
# Inline subagent records of one main file kept for the parser (old layout only).
SIDECHAIN_MAX_BYTES = 64 * 1024 * 1024
# The log's time is when the hook finished; its prompt was written just before (the next
# prompt of a fast headless run can follow half a second later).
CLOCK_BEFORE = timedelta(seconds=120)
CLOCK_AFTER = timedelta(milliseconds=300)
# A transcript last written before the first injection cannot hold any of them.
MTIME_SLACK = timedelta(hours=1)
# Claude's text read per turn for mentions; a phrase needs this weight (CJK counts double).
TEXT_READ = 200_000
PHRASE_GRAM = 8
PHRASE_WEIGHT = 16
NAME_WEIGHT = 8
EVIDENCE_KEEP = 3
EVIDENCE_CHARS = 160

_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_SIDECHAIN = re.compile(rb'"isSidechain"\s*:\s*true')
_CONTEXT = re.compile(r"<memrecall-context>(.*?)(?:</memrecall-context>|\Z)", re.S)
_ITEM_HEAD = re.compile(r"^\s*(?:\[\d+\]|-\s+\[)")
_PATH_LINE = re.compile(r"^\s{2,}(/.+?|[A-Za-z]:\\.+?):\d+\s*$")
_EDGE = " \t.,;:!?'\"()[]{}<>「」『』（）、。・…>-"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff66-\uff9f]")


# --- the recall log side ---------------------------------------------------------------------


@dataclass
class Injection:
    """One hook run that injected memories, as the recall log has it."""

    entry: str  # `recall-2026-11:41`, see recall_log.read_numbered
    session: str
    ts: str
    moment: datetime | None
    items: list[dict[str, Any]]
    reasons: list[str]  # per item: distinctive id | several keywords | repeated topic | other


def reason_kind(reason: str) -> str:
    """The gate's reason for one memory (gate.judge), as one of the kinds stats counts."""
    if reason.startswith(("names ", "distinctive ")):
        return "distinctive id"
    if "came up in" in reason:
        return "repeated topic"
    if "specific keyword" in reason:
        return "several keywords"
    return "other"


def item_key(item: dict[str, Any]) -> str:
    return str(item.get("key") or f"{item.get('store', '?')}:{item.get('ref', '?')}")


def _item_reasons(entry: dict[str, Any], items: list[dict[str, Any]]) -> list[str]:
    """recall.py logs `reason` as `<key>: <gate reason>` per shown memory, joined by `; `."""
    parts = str(entry.get("reason") or "").split("; ")
    kinds = []
    for item in items:
        prefix = item_key(item) + ": "
        found = next((p[len(prefix) :] for p in parts if p.startswith(prefix)), "")
        kinds.append(reason_kind(found))
    return kinds


def injections(settings: Settings, since: datetime | None = None) -> list[Injection]:
    found = []
    for entry_id, entry in read_numbered(settings.logs_dir, since):
        if entry.get("decision") != "inject":
            continue
        items = [i for i in entry.get("injected") or [] if isinstance(i, dict) and i.get("ref")]
        if not items:
            continue
        ts = str(entry.get("ts") or "")
        session = entry.get("session")
        found.append(
            Injection(
                entry_id,
                session if isinstance(session, str) else "",
                ts,
                instant_or_none(ts),
                items,
                _item_reasons(entry, items),
            )
        )
    return found


# --- verdict rows ------------------------------------------------------------------------------


@dataclass
class Row:
    """The verdict on one injected memory."""

    entry: str
    session: str
    ts: str
    store: str
    ref: str
    title: str
    reason: str
    verdict: str
    evidence: list[str] = field(default_factory=list)
    transcript: str = ""
    # When the verdict was last decided from a transcript (not merely kept).
    checked: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.entry, self.store, self.ref)

    def as_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "session": self.session,
            "ts": self.ts,
            "store": self.store,
            "ref": self.ref,
            "title": self.title,
            "reason": self.reason,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "transcript": self.transcript,
            "checked": self.checked,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Row | None":
        try:
            verdict = str(data["verdict"])
            if verdict not in VERDICTS:
                return None
            return cls(
                str(data["entry"]),
                str(data.get("session", "")),
                str(data.get("ts", "")),
                str(data["store"]),
                str(data["ref"]),
                str(data.get("title", "")),
                str(data.get("reason", "other")),
                verdict,
                [str(e) for e in data.get("evidence") or [] if isinstance(e, str)],
                str(data.get("transcript", "")),
                str(data.get("checked", "")),
            )
        except (KeyError, TypeError):
            return None


def usage_path(settings: Settings) -> Path:
    return settings.state_dir / USAGE_FILE


def load(settings: Settings) -> dict[tuple[str, str, str], Row]:
    """Every stored verdict by (log entry id, store, ref); a missing or damaged file is empty."""
    import json

    rows: dict[tuple[str, str, str], Row] = {}
    try:
        handle = open(usage_path(settings), encoding="utf-8", errors="replace")
    except OSError:
        return rows
    with handle:
        for line in handle:
            try:
                data = json.loads(line)
            except (ValueError, RecursionError):
                continue
            row = Row.from_json(data) if isinstance(data, dict) else None
            if row is not None:
                rows[row.key] = row
    return rows


# --- transcripts: which files hold which session ----------------------------------------------


@dataclass
class _File:
    path: Path
    size: int
    mtime_ns: int
    agent: bool
    sids: list[str]


def _head_sids(path: Path) -> set[str]:
    try:
        with open(path, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return set()
    return {m.group(1).decode("utf-8", "replace") for m in _SESSION_ID.finditer(head)}


def _files(settings: Settings, state: dict[str, Any], oldest: datetime | None) -> list[_File]:
    """Main and subagent transcripts with the session ids each holds (cached by size and
    mtime). Compaction agents, workflow journals, memrecall's own summarizer runs and the
    projects summarize is told to leave alone are not read."""
    from .summarize.discover import find_files

    known: dict[str, Any] = state["files"] if isinstance(state.get("files"), dict) else {}
    files: list[_File] = []
    root = settings.claude_projects
    floor = (oldest - MTIME_SLACK).timestamp() if oldest else None
    for found in find_files(settings):
        if found.reason not in (None, "subagent"):
            continue
        if floor is not None and found.mtime < floor:
            continue
        try:
            mtime_ns = found.path.stat().st_mtime_ns
        except OSError:
            continue
        key = str(found.path)
        cached = known.get(key)
        if (
            isinstance(cached, list)
            and len(cached) == 4
            and cached[0] == found.size
            and cached[1] == mtime_ns
            and isinstance(cached[3], list)
        ):
            files.append(
                _File(
                    found.path, found.size, mtime_ns, bool(cached[2]), [str(s) for s in cached[3]]
                )
            )
            continue
        parts = found.path.relative_to(root).parts
        agent = found.reason == "subagent"
        if agent and "subagents" in parts[:-1]:
            # <project>/<session>/subagents/**/agent-<id>.jsonl: the folder names the session.
            sids = {parts[parts.index("subagents") - 1]}
        elif agent:
            sids = _head_sids(found.path)  # agent-<id>.jsonl beside the sessions: the parent's id
        else:
            sids = {found.session_id} | _head_sids(found.path)
        files.append(_File(found.path, found.size, mtime_ns, agent, sorted(sids)))
    return files


def _fingerprint(files: list[_File]) -> str:
    text = "\n".join(
        f"{f.path}\t{f.size}\t{f.mtime_ns}" for f in sorted(files, key=lambda f: str(f.path))
    )
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()


# --- transcripts: reading one session ---------------------------------------------------------


@dataclass
class _Anchor:
    """Where a transcript saved an injected context."""

    moment: datetime | None
    text: str  # what was between the markers
    uuid: str
    used: bool = False


def _as_main(line: bytes) -> bytes:
    # The parser keeps a subagent's records out of its parent's events; read on their own,
    # they are the subagent's conversation, so they are handed over as a main chain.
    return _SIDECHAIN.sub(b'"isSidechain":false', line, count=1)


def _context_of(record: dict[str, Any]) -> str | None:
    """The injected context a record saves, or None. Model requests (`api-request*`) and
    prompt snapshots repeat every earlier context and are not where one was injected."""
    kind = record.get("type")
    texts: list[str] = []
    if kind == "attachment":
        att = record.get("attachment")
        if isinstance(att, dict) and att.get("type") in ("hook_additional_context", "hook_success"):
            content = att.get("content", att.get("stdout"))
            if isinstance(content, list):
                texts = [c for c in content if isinstance(c, str)]
            elif isinstance(content, str):
                texts = [content]
    elif kind in ("user", "system") and record.get("isCompactSummary") is not True:
        # (A compaction summary may quote an earlier context; it injected nothing.)
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else record.get("content")
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = [
                b.get("text", "")
                for b in content
                if isinstance(b, dict) and isinstance(b.get("text"), str)
            ]
    found = [m.group(1) for text in texts for m in _CONTEXT.finditer(text)]
    return "\n".join(found) if found else None


def _scan(path: Path, sidechains: list[bytes] | None) -> list[_Anchor]:
    """Saved contexts of a main file; its inline subagent records (the ≤2.0 layout) go to
    `sidechains`, rewritten for the parser."""
    import json

    anchors: list[_Anchor] = []
    kept = 0
    try:
        handle = open(path, "rb")
    except OSError:
        return anchors
    with handle:
        for line in capped_lines(handle, SCAN_LINE_MAX):
            if _SIDECHAIN.search(line):
                if sidechains is not None and kept < SIDECHAIN_MAX_BYTES:
                    sidechains.append(_as_main(line))
                    kept += len(line)
                continue
            if MARKER not in line:
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(record, dict):
                continue
            text = _context_of(record)
            if text is not None:
                anchors.append(
                    _Anchor(
                        instant_or_none(record.get("timestamp")),
                        text,
                        str(record.get("uuid") or ""),
                    )
                )
    return anchors


def _agent_lines(path: Path) -> Iterator[bytes]:
    try:
        handle = open(path, "rb")
    except OSError:
        return
    with handle:
        for line in capped_lines(handle, SCAN_LINE_MAX):
            yield _as_main(line)


@dataclass
class _Transcripts:
    mains: list[tuple[Any, list[_Anchor]]]  # (transcripts.Session, its saved contexts)
    agents: list[Any]  # subagent Sessions, their records read as a main chain
    paths: list[str]


def _read(files: list[_File]) -> _Transcripts:
    from .transcripts import TranscriptError, parse_lines, parse_session

    mains: list[tuple[Any, list[_Anchor]]] = []
    agents: list[Any] = []
    seen: set[str] = set()
    # Oldest first: a resumed session's new file copies the old turns, and the original wins.
    for file in sorted(files, key=lambda f: (f.agent, f.mtime_ns, str(f.path))):
        if file.agent:
            agents.append(parse_lines(_agent_lines(file.path), file.path))
            continue
        try:
            session = parse_session(file.path)
        except TranscriptError:
            continue
        inline: list[bytes] = []
        anchors = []
        for anchor in _scan(file.path, inline):
            if anchor.uuid and anchor.uuid in seen:
                continue  # a copy in a resumed session's file
            if anchor.uuid:
                seen.add(anchor.uuid)
            anchors.append(anchor)
        mains.append((session, anchors))
        if inline:
            agents.append(
                parse_lines(inline, file.path.with_name("agent-inline-" + file.path.name))
            )
    return _Transcripts(mains, agents, [str(f.path) for f in files])


# --- matching an injection to its turn ---------------------------------------------------------


def normalize(text: str) -> str:
    """NFKC, case-folded, markdown emphasis and backticks gone, whitespace as one space."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[`*_]+", "", text)
    return " ".join(text.split())


def weight(text: str) -> int:
    """How telling a run of text is: CJK characters count double (no spaces between words)."""
    return len(text.replace(" ", "")) + len(_CJK.findall(text))


def _needles(item: dict[str, Any]) -> list[str]:
    """Strings the rendered context shows for this memory (title and path may be cut)."""
    ref = normalize(str(item.get("ref", "")))
    title = normalize(str(item.get("title", "")))
    out = []
    if ref:
        out.append(ref[-40:])
    if title:
        out.append(title[:30])
    return [n for n in out if len(n) >= 3]


def _matches(context: str, item: dict[str, Any]) -> bool:
    return any(n in context for n in _needles(item))


@dataclass
class _Turn:
    session: Any  # transcripts.Session
    index: int  # of the prompt's event
    end: int  # index of the next prompt's event, or len(events)
    start_moment: datetime | None
    end_moment: datetime | None
    context: str  # the saved context (normalized), "" when matched by the clock
    how: str  # "context" | "clock"

    @property
    def prompt(self) -> str:
        return str(self.session.events[self.index].text)


def _turn_at(session: Any, index: int, context: str, how: str) -> _Turn:
    events = session.events
    end = next((i for i in range(index + 1, len(events)) if events[i].kind == "human"), len(events))
    return _Turn(
        session,
        index,
        end,
        events[index].timestamp,
        events[end].timestamp if end < len(events) else None,
        context,
        how,
    )


def _prompt_before(session: Any, moment: datetime | None) -> int | None:
    """The prompt a saved context belongs to: the last one written before it (Claude Code
    writes the prompt, then the hook's context: 36 ms later in 2.1.332; the next prompt of a
    fast headless run can follow 0.5 s after), else the first one, for a context saved first."""
    humans = [i for i, e in enumerate(session.events) if e.kind == "human"]
    if not humans:
        return None
    if moment is None:
        # No time on the record: the prompt that carries the context in its own text.
        return next((i for i in humans if "memrecall-context" in session.events[i].raw), None)
    before = [
        i for i in humans if (stamp := session.events[i].timestamp) is not None and stamp <= moment
    ]
    return before[-1] if before else humans[0]


def _find_turn(read: _Transcripts, injection: Injection) -> _Turn | None:
    for session, anchors in read.mains:
        for anchor in anchors:
            if anchor.used:
                continue
            context = normalize(anchor.text)
            hits = sum(_matches(context, item) for item in injection.items)
            if hits == 0 or hits * 2 < len(injection.items):
                continue
            index = _prompt_before(session, anchor.moment)
            if index is None:
                continue
            anchor.used = True
            return _turn_at(session, index, anchor.text, "context")
    if injection.moment is None:
        return None
    best: tuple[datetime, Any, int] | None = None
    for session, _ in read.mains:
        for i, event in enumerate(session.events):
            stamp = event.timestamp
            if event.kind != "human" or stamp is None:
                continue
            if injection.moment - CLOCK_BEFORE <= stamp <= injection.moment + CLOCK_AFTER:
                if best is None or stamp > best[0]:
                    best = (stamp, session, i)
    return _turn_at(best[1], best[2], "", "clock") if best else None


# --- the verdict on one memory --------------------------------------------------------------


@dataclass
class _Window:
    """What followed the prompt until the next one: tool calls and Claude's own text."""

    tools: list[tuple[Any, str]]  # (ToolCall, who: "" for the session, else the subagent's name)
    texts: list[tuple[str, str]]  # (normalized text, who)
    cwd: str
    answered: bool
    last_turn: bool


def _window(turn: _Turn, agents: list[Any]) -> _Window:
    events = turn.session.events[turn.index + 1 : turn.end]
    tools = [(e.tool, "") for e in events if e.kind == "tool" and e.tool is not None]
    texts = [(normalize(e.text[:TEXT_READ]), "") for e in events if e.kind == "assistant"]
    answered = bool(tools or texts)
    for agent in agents:
        name = agent.session_id if str(agent.session_id).startswith("agent-") else "subagent"
        for event in agent.events:
            stamp = event.timestamp
            if stamp is None or turn.start_moment is None or stamp < turn.start_moment:
                continue
            if turn.end_moment is not None and stamp >= turn.end_moment:
                continue
            if event.kind == "tool" and event.tool is not None:
                tools.append((event.tool, name))
            elif event.kind in ("assistant", "human"):
                # A subagent's prompt was written by Claude too: passing a memory on is using it.
                texts.append((normalize(event.text[:TEXT_READ]), name))
    return _Window(
        tools, texts, str(turn.session.cwd or ""), answered, turn.end >= len(turn.session.events)
    )


def _context_block(context: str, item: dict[str, Any]) -> str:
    """The lines the context shows for this memory: its block, from its header to the next."""
    blocks: list[list[str]] = []
    for line in context.splitlines():
        if _ITEM_HEAD.match(line) or not blocks:
            blocks.append([])
        blocks[-1].append(line)
    for block in blocks:
        text = "\n".join(block)
        if _matches(normalize(text), item):
            return text
    return ""


def _note_paths(settings: Settings, item: dict[str, Any], block: str) -> set[str]:
    """Absolute paths of the memory's file: from its store's roots, and as the context showed it."""
    store, ref = str(item.get("store", "")), str(item.get("ref", ""))
    found: set[str] = set()
    if store == "summaries":
        found.add(os.path.normpath(settings.summaries / ref))
    else:
        for root, label in settings.vaults():
            if label and ref.startswith(label + "/"):
                found.add(os.path.normpath(root / ref[len(label) + 1 :]))
            elif not label:
                found.add(os.path.normpath(root / ref))
    for line in block.splitlines():
        match = _PATH_LINE.match(line)
        if match and not match.group(1).startswith("…"):
            found.add(os.path.normpath(match.group(1)))
    return found


def _short(text: str) -> str:
    from .redact import redact_fast
    from .textcut import one_line

    return one_line(redact_fast(text), EVIDENCE_CHARS)


def _who(name: str) -> str:
    return f" (subagent {name})" if name else ""


def _tool_evidence(
    settings: Settings, item: dict[str, Any], block: str, window: _Window, by_id: bool
) -> str | None:
    ref = str(item.get("ref", ""))
    if by_id:
        for call, who in window.tools:
            if _named(ref.casefold(), (call.command or "").casefold()) or (
                call.name != "Bash" and _named(ref.casefold(), call.line.casefold())
            ):
                return _short(f"{call.name}: {call.command or call.line}") + _who(who)
        return None
    paths = _note_paths(settings, item, block)
    plain = ref.split("/", 1)[1] if "/" in ref and not os.path.exists(ref) else ref
    name = os.path.basename(ref)
    distinctive_name = weight(os.path.splitext(name)[0]) >= NAME_WEIGHT
    for call, who in window.tools:
        for raw in call.paths:
            full = raw if os.path.isabs(raw) or not window.cwd else os.path.join(window.cwd, raw)
            if os.path.normpath(full) in paths:
                return _short(call.line) + _who(who)
        said = call.command or (call.line if call.name in ("Grep", "Glob") else "")
        if not said:
            continue
        if (
            any(p in said for p in paths)
            or ("/" in ref and (ref in said or plain in said))
            or (distinctive_name and name in said)
        ):
            return _short(f"{call.name}: {said}") + _who(who)
    return None


def _named(name: str, text: str) -> bool:
    """`name` in `text` as a whole: `bd-7q2k` is not inside `bd-7q2kx`. Only ASCII letters,
    digits and `-` continue a name; Japanese has no spaces, so `の決済タイムアウト調査で` names
    決済タイムアウト調査."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (_ascii_word(before) and _ascii_word(name[0])) and not (
            _ascii_word(after) and _ascii_word(name[-1])
        ):
            return True
        start = text.find(name, start + 1)
    return False


def _ascii_word(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "-_")


def shared_phrase(source: str, text: str, avoid: str) -> str:
    """The longest run of `source` (the injected lines) that `text` (Claude's words)
    repeats, when what it adds to `avoid` (the prompt) is telling enough: a reply that says
    "のタイムアウトは" after a prompt about タイムアウト quotes nothing. All three normalized."""
    best, best_new = "", 0
    i, n, k = 0, len(source), PHRASE_GRAM
    while i + k <= n:
        gram = source[i : i + k]
        if gram.strip() and gram in text and gram not in avoid:
            j = i + k
            while j < n and source[i : j + 1] in text:
                j += 1
            phrase = source[i:j].strip(_EDGE)
            novel = _novel_weight(phrase, avoid)
            if novel >= PHRASE_WEIGHT and novel > best_new:
                best, best_new = phrase, novel
            i = j - k + 1
        else:
            i += 1
    return best


def _novel_weight(phrase: str, avoid: str) -> int:
    """The weight of the characters of `phrase` not inside a 3-character run of `avoid`."""
    covered = [False] * len(phrase)
    for p in range(len(phrase) - 2):
        if phrase[p : p + 3] in avoid:
            covered[p] = covered[p + 1] = covered[p + 2] = True
    return weight("".join(c for c, hidden in zip(phrase, covered) if not hidden))


def _text_evidence(
    item: dict[str, Any], block: str, prompt: str, window: _Window, by_id: bool
) -> str | None:
    ref = str(item.get("ref", ""))
    names: list[tuple[str, str, str]] = []  # (what, normalized, as the memory spells it)
    if by_id:
        names.append(("id", normalize(ref), ref))
    else:
        stem = os.path.splitext(os.path.basename(ref))[0]
        if weight(normalize(stem)) >= NAME_WEIGHT:
            names.append(("file name", normalize(stem), stem))
    title = str(item.get("title", ""))
    if weight(normalize(title)) >= NAME_WEIGHT:
        names.append(("title", normalize(title), title))
    # The lines quoted from the memory, without the renderer's own words.
    quoted = normalize(
        "\n".join(
            line
            for line in block.splitlines()
            if not line.strip().startswith(("matched:", "closed:")) and not _ITEM_HEAD.match(line)
        )
    )
    for text, who in window.texts:
        for what, name, spelled in names:
            if name and name not in prompt and _named(name, text):
                return _short(f"names its {what} “{spelled}”") + _who(who)
        phrase = shared_phrase(quoted, text, prompt) if quoted else ""
        if phrase:
            return _short(f"quotes “{phrase}”") + _who(who)
    return None


def judge(
    settings: Settings, item: dict[str, Any], turn: _Turn, window: _Window
) -> tuple[str, list[str]]:
    from .stores.rules import rules_for

    by_id = rules_for(str(item.get("store", ""))).by_id
    block = _context_block(turn.context, item) if turn.context else ""
    prompt = normalize(turn.prompt)
    evidence = []
    used = _tool_evidence(settings, item, block, window, by_id)
    if used:
        evidence.append(used)
    said = _text_evidence(item, block, prompt, window, by_id)
    if said:
        evidence.append(said)
    if turn.how == "clock":
        evidence.append("turn found by the log's time (no saved context matched)")
    if used:
        return "used", evidence[:EVIDENCE_KEEP]
    if said:
        return "mentioned", evidence[:EVIDENCE_KEEP]
    if not window.answered and window.last_turn:
        return "unknown", ["the turn has no reply in the transcript yet"]
    return "ignored", evidence[:EVIDENCE_KEEP]


def judge_session(
    settings: Settings, injections_: list[Injection], files: list[_File], now: str
) -> list[Row]:
    """Verdicts for one session's injections from its files (read once, here)."""
    if not files:
        return [
            _row(
                inj,
                i,
                "unknown",
                ["no transcript of this session (deleted, excluded or not written)"],
                "",
                "",
            )
            for inj in injections_
            for i in range(len(inj.items))
        ]
    read = _read(files)
    rows = []
    for injection in sorted(injections_, key=lambda j: _entry_order_of(j.entry)):
        turn = _find_turn(read, injection)
        if turn is None:
            rows += [
                _row(
                    injection, i, "unknown", ["this prompt is not in the transcript (yet)"], "", now
                )
                for i in range(len(injection.items))
            ]
            continue
        window = _window(turn, read.agents)
        path = str(turn.session.path)
        for i, item in enumerate(injection.items):
            verdict, evidence = judge(settings, item, turn, window)
            rows.append(_row(injection, i, verdict, evidence, path, now))
    return rows


def _row(
    injection: Injection, index: int, verdict: str, evidence: list[str], path: str, now: str
) -> Row:
    item = injection.items[index]
    return Row(
        injection.entry,
        injection.session,
        injection.ts,
        str(item.get("store", "?")),
        str(item.get("ref", "?")),
        str(item.get("title", ""))[:200],
        injection.reasons[index],
        verdict,
        evidence,
        path,
        now,
    )


# --- refresh -------------------------------------------------------------------------------------


@dataclass
class RefreshReport:
    injections: int = 0
    memories: int = 0
    sessions_read: int = 0
    files_read: int = 0
    busy: bool = False  # another process was refreshing: the stored verdicts were used
    verdicts: Counter[str] = field(default_factory=Counter)


def refresh(settings: Settings) -> RefreshReport:
    """Bring the verdicts up to date with the recall log and the transcripts.

    Held under a run lock; when another process holds it, nothing is read and the stored
    verdicts stand (`busy`)."""
    from .atomic import LockTimeout, run_lock

    report = RefreshReport()
    try:
        with run_lock(settings.state_dir / "usage", timeout=0):
            _refresh(settings, report)
    except LockTimeout:
        report.busy = True
    return report


def _refresh(settings: Settings, report: RefreshReport) -> None:
    from .atomic import read_json, write_atomic, write_json_atomic
    from .sanitize import dumps

    state_path = settings.state_dir / READ_STATE_FILE
    state = read_json(state_path, {})
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        state = {}
    found = injections(settings)
    report.injections = len(found)
    report.memories = sum(len(i.items) for i in found)
    old = load(settings)
    by_session: dict[str, list[Injection]] = {}
    for injection in found:
        by_session.setdefault(injection.session, []).append(injection)
    moments = [i.moment for i in found if i.moment is not None]
    files = _files(settings, state, min(moments) if moments else None) if found else []
    groups: dict[str, list[_File]] = {}
    for file in files:
        for sid in file.sids:
            if sid in by_session:
                groups.setdefault(sid, []).append(file)
    fingerprints: dict[str, Any] = (
        state["sessions"] if isinstance(state.get("sessions"), dict) else {}
    )
    now = settings.now.isoformat()
    rows: dict[tuple[str, str, str], Row] = {}
    new_prints: dict[str, str] = {}
    for sid, group in by_session.items():
        members = groups.get(sid, []) if sid else []
        print_ = _fingerprint(members)
        new_prints[sid] = print_
        keys = [
            (inj.entry, str(it.get("store", "?")), str(it.get("ref", "?")))
            for inj in group
            for it in inj.items
        ]
        if fingerprints.get(sid) == print_ and all(k in old for k in keys):
            rows.update({k: old[k] for k in keys})
            continue
        report.sessions_read += 1 if members else 0
        report.files_read += len(members)
        for row in judge_session(settings, group, members, now):
            previous = old.get(row.key)
            if row.verdict == "unknown" and previous is not None and previous.verdict != "unknown":
                row = previous  # the transcript is gone or cut since: what it showed still holds
            rows[row.key] = row
    report.verdicts = Counter(r.verdict for r in rows.values())
    ordered = sorted(rows.values(), key=lambda r: (_entry_order_of(r.entry), r.store, r.ref))
    text = "".join(dumps(r.as_json(), separators=(",", ":")) + "\n" for r in ordered)
    path = usage_path(settings)
    try:
        current = path.read_text(encoding="utf-8")
    except OSError:
        current = None
    if current != text:
        write_atomic(path, text)
    state = {
        "version": STATE_VERSION,
        "files": {str(f.path): [f.size, f.mtime_ns, f.agent, f.sids] for f in files},
        "sessions": new_prints,
    }
    write_json_atomic(state_path, state)


def _entry_order_of(entry: str) -> tuple[str, int]:
    stem, _, number = entry.rpartition(":")
    return (stem, int(number) if number.isdigit() else 0)


def rows_for(
    settings: Settings, since: datetime | None = None
) -> list[tuple[Injection, list[Row | None]]]:
    """Each injection since `since` with its memories' verdicts (None: never judged)."""
    stored = load(settings)
    return [
        (
            inj,
            [
                stored.get((inj.entry, str(it.get("store", "?")), str(it.get("ref", "?"))))
                for it in inj.items
            ],
        )
        for inj in injections(settings, since)
    ]
