"""A session → the short, redacted text an LLM may see.

What survives: the human prompts, the assistant's text, each tool call as one line
(`[tool] Edit internal/payment/client.go`), tool errors (short), and a few characters of the
output of the tools whose output carries findings (Bash, Agent/Task, web). Everything else
was already dropped by the parser (thinking, images, progress, snapshots, attachments,
api-request records, isMeta lines, compaction summaries) or is stripped here
(`<system-reminder>`, `<memrecall-context>`, `<private>`).

Redaction runs on each event's whole text before anything is cut (a key cut in half no longer
looks like a key to any detector), and every cut backs off to a token boundary. Long sessions
are capped at `max_input_chars` (head + tail, with a note of what was left out) and then split
into chunks of at most `chunk_chars`: never sent whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..redact import redact
from ..textcut import cut_noted, one_line
from ..transcripts import Event, Session, has_japanese, strip_injections

Redactor = Callable[[str], str]

HUMAN_KEEP = 2500
ASSISTANT_KEEP = 1200
ERROR_KEEP = 200
OUTPUT_KEEP = {
    "Bash": 160,
    "Agent": 700,
    "Task": 700,
    "WebFetch": 300,
    "WebSearch": 300,
    "TaskOutput": 200,
}


@dataclass
class Condensed:
    text: str  # redacted, capped
    chunks: list[str] = field(default_factory=list)
    full_chars: int = 0  # rendered length before capping
    capped: bool = False
    language: str = "en"
    # Each prompt and reply as redacted here, by its text: the extractive backend reads
    # them whole, and redacting a long session twice doubled its time.
    redacted: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def chars(self) -> int:
        return len(self.text)


def session_language(session: Session, setting: str) -> str:
    """`ja` / `en` as configured; `auto` = Japanese when a human prompt contains Japanese."""
    if setting in ("ja", "en"):
        return setting
    return "ja" if any(has_japanese(e.text) for e in session.human_turns) else "en"


def _cut(text: str, limit: int) -> str:
    # The start of a prompt or reply says what it asks, its end what it concluded.
    return cut_noted(text, limit, tail=limit - limit * 2 // 3)


def _render(event: Event, clean: Redactor) -> str | None:
    if event.kind == "human":
        keep, label = HUMAN_KEEP, "[user]"
    elif event.kind == "assistant":
        keep, label = ASSISTANT_KEEP, "[assistant]"
    elif event.kind == "tool":
        return f"[tool] {clean(event.text)}"
    elif event.kind == "tool_error":
        return f"[error] {one_line(clean(event.text), ERROR_KEEP, whole_tokens=True)}"
    elif event.kind == "tool_output":
        name = event.tool.name if event.tool else ""
        keep = OUTPUT_KEEP.get(name, 0)
        if not keep:
            return None
        text = clean(strip_injections(event.text))
        return f"[output] {one_line(text, keep, whole_tokens=True)}" if text else None
    else:
        return None
    text = clean(strip_injections(event.text))
    return f"{label} {_cut(text, keep)}" if text else None


def render(session: Session, clean: Redactor) -> str:
    """The condensed transcript before capping, every piece passed through `clean`."""
    head = [f"session: {session.session_id[:8]}"]
    if session.cwd:
        head.append(f"cwd: {session.cwd}")
    if session.git_branch:
        head.append(f"branch: {session.git_branch}")
    if session.start:
        head.append(f"date: {session.start.date().isoformat()}")
    lines = [clean(" · ".join(head))]
    previous = ""
    repeats = 0
    for event in session.events:
        line = _render(event, clean)
        if not line:
            continue
        if line == previous:
            # `[tool] Read x` ten times in a row says no more than once with a count.
            repeats += 1
            continue
        if repeats:
            lines[-1] += f" (×{repeats + 1})"
            repeats = 0
        lines.append(line)
        previous = line
    if repeats:
        lines[-1] += f" (×{repeats + 1})"
    return "\n".join(lines)


def cap(text: str, limit: int) -> tuple[str, bool]:
    """Head + tail on line boundaries, with a note; the end of a session says most."""
    if len(text) <= limit:
        return text, False
    note = "\n[… {} characters of the middle of this session left out …]\n"
    budget = max(limit - len(note) - 12, 200)
    head_budget = budget // 3
    head = text[:head_budget].rsplit("\n", 1)[0]
    tail = text[-(budget - len(head)) :]
    if "\n" in tail:
        tail = tail.split("\n", 1)[1]
    omitted = len(text) - len(head) - len(tail)
    return head + note.format(omitted) + tail, True


def chunk(text: str, size: int) -> list[str]:
    """Split on line boundaries into roughly equal pieces of at most `size` characters."""
    if len(text) <= size:
        return [text]
    count = -(-len(text) // size)
    target = -(-len(text) // count)
    pieces: list[str] = []
    current: list[str] = []
    length = 0
    for line in text.split("\n"):
        while len(line) > size:  # a single huge line: hard split
            if current:
                pieces.append("\n".join(current))
                current, length = [], 0
            pieces.append(line[:size])
            line = line[size:]
        if current and length + len(line) + 1 > target:
            pieces.append("\n".join(current))
            current, length = [], 0
        current.append(line)
        length += len(line) + 1
    if current:
        pieces.append("\n".join(current))
    return pieces


def condense(
    session: Session, max_input_chars: int, chunk_chars: int, language: str = "auto"
) -> Condensed:
    redacted: dict[str, str] = {}

    def remember(text: str) -> str:
        clean = redacted[text] = redact(text)[0]
        return clean

    full = render(session, remember)
    capped_text, capped = cap(full, max(max_input_chars, 1000))
    return Condensed(
        text=capped_text,
        chunks=chunk(capped_text, max(chunk_chars, 1000)),
        full_chars=len(full),
        capped=capped,
        language=session_language(session, language),
        redacted=redacted,
    )
