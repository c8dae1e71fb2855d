"""The recall core: hook input + settings → context to inject (or nothing) + a log entry.

The steps, each in its own module: keywords (tokenize.py), candidates and their evidence
(search.py), the session's state (session.py), the decision (gate.py: `advance` and
`judge`, README "When recall fires"), and here what is left: trivial prompts, the privacy
switches, rendering the context within its budget, and a log entry that explains it all.
`hook.py` does stdin/stdout and the fail-open guard.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from . import regexcache
from .config import Settings
from .keywords import Keyword
from .search import Hit
from .stores.rules import rules_for
from .textcut import cut

# Keywords come from the head and the tail of a long prompt (a pasted log with the question
# before or after it). The identifier pass costs ~0.3 s per MB and SudachiPy refuses input
# over 49 KB, so a 10 MB paste must never be analysed whole on the hook's clock.
KEYWORD_HEAD_CHARS = 6000
KEYWORD_TAIL_CHARS = 4000

_ACK = (
    r"(?:ok(?:ay)?|yes|no|y|n|yep|nope|sure|thanks?(?: you)?(?: so much)?|thx|ty|lgtm|"
    r"go(?: on| ahead)?|"
    r"continue|next|do it|please|done|great|nice|good|cool|perfect|got it|sounds good|hi|hello|hey|"
    r"good (?:morning|afternoon|evening|night)|bye|"
    r"はい|いいえ|うん|ええ|了解(?:です|しました)?|りょ|おけ|おk|ok(?:です)?|ありがと(?:う|うございます)?|どうも|"
    r"続けて(?:ください)?|続き|つづけて|お願い(?:します)?|よろしく(?:お願いします)?|それで(?:お願いします)?|"
    r"進めて(?:ください)?|いいね|いいです|大丈夫(?:です)?|次|次へ|どうぞ|おはよう(?:ございます)?|こんにちは|"
    r"こんばんは|お疲れ(?:様|さま)?(?:です)?|おつかれ(?:さま)?|それでいい|それでok)"
)
# One acknowledgement or several (`OK、続けて`, `thanks, go ahead!`), and nothing else.
_TRIVIAL = regexcache.compile(
    rf"^{_ACK}(?:[\s!！。.、,~〜w?？]+{_ACK})*[\s!！。.、,~〜w?？]*$", re.IGNORECASE
)
_SECRET_PREFIX = regexcache.compile(
    r"^(sk-|sk_live_|rk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpsr]-|AKIA|ASIA|AIza|eyJ)"
)
_PRIORITY = {
    "ticket": 0,
    "beads": 0,
    "path": 1,
    "url": 1,
    "code": 1,
    "snake": 1,
    "camel": 1,
    "dotted": 1,
    "kebab": 1,
    "compound": 2,
    "proper_noun": 2,
    "noun": 3,
    "external": 3,
    "version": 4,
    "alnum": 4,
    "number": 4,
    "quantity": 4,
    "command": 2,
    "month": 4,
    "phrase": 3,
    "word": 5,
    "part": 6,
}


class BadHookInput(ValueError):
    """stdin was not the hook JSON Claude Code sends."""


@dataclass
class HookInput:
    session_id: str
    prompt: str
    cwd: str = ""
    transcript_path: str = ""


@dataclass
class RecallResult:
    context: str | None
    log: dict[str, Any] = field(default_factory=dict)

    def stdout(self) -> str:
        if not self.context:
            return ""
        payload = {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": self.context,
            }
        }
        return json.dumps(payload, ensure_ascii=False)


def parse_hook_input(raw: str) -> HookInput:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: `[[[[…` nested 100k deep
        raise BadHookInput(f"stdin is not JSON ({exc.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise BadHookInput("stdin JSON is not an object")
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        raise BadHookInput("hook input has no string 'prompt'")
    session = data.get("session_id")
    cwd, transcript = data.get("cwd"), data.get("transcript_path")
    return HookInput(
        session_id=_text(session) if isinstance(session, str) and session else "unknown",
        prompt=_text(prompt),
        cwd=_text(cwd) if isinstance(cwd, str) else "",
        transcript_path=_text(transcript) if isinstance(transcript, str) else "",
    )


def _text(value: str) -> str:
    """JSON may carry lone surrogates (`"\\ud800"`), which no UTF-8 file or argv can hold:
    such a session id made the log write fail, so the run left no trace at all."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8")


def is_trivial(prompt: str, min_chars: int) -> str | None:
    text = prompt.strip()
    if not text:
        return "empty prompt"
    if text.startswith("/"):
        return "slash command"
    if _TRIVIAL.match(text):
        return "acknowledgement"
    if len(text) < min_chars:
        return "too short"
    return None


# One piece of an identifier: a word (`coupon`, `Counts`, `Event2024`), an acronym (`HTTP2`),
# a number or a versioned letter (`20261006`, `v2`), a single letter.
_NAME_PIECE = regexcache.compile(r"[A-Za-z][a-z]+\d*|[A-Z]{2,}\d*|[A-Za-z]?\d+|[A-Za-z]")
_NAME_SPLIT = regexcache.compile(r"[_\-.]+|(?<=[a-z0-9])(?=[A-Z])")
_VOWEL = regexcache.compile(r"[aeiouy]", re.IGNORECASE)


def _word_structured(text: str) -> bool:
    """Whether a long token is a name made of words (snake_case, camelCase, a migration file's
    date and words) rather than random characters. A random token splits at its case changes
    into pieces that mix letters and digits or hold words without vowels; of 20,000 random
    base62 tokens of 20–40 characters, 3 pass (none of lower-case-and-digit or hex ones)."""
    pieces = [piece for piece in _NAME_SPLIT.split(text) if piece]
    if len(pieces) < 2 or not all(_NAME_PIECE.fullmatch(piece) for piece in pieces):
        return False
    words = [piece for piece in pieces if piece[:2].isalpha()]
    return (
        bool(words)
        and all(_VOWEL.search(word) for word in words)
        and sum(len(piece) == 1 for piece in pieces) <= 2
    )


def looks_secret(text: str) -> bool:
    """Keywords that look like credentials are neither searched nor logged (a second line
    behind redacting the prompt: a keyword the rules would redact on its own is one too)."""
    if _SECRET_PREFIX.match(text) and len(text) >= 12:
        return True
    if len(text) >= 8:
        from .redact import redact_fast

        if redact_fast(text) != text:
            return True
    if len(text) < 20 or not re.fullmatch(r"[A-Za-z0-9+/=_\-.]+", text):
        return False
    if _word_structured(text):
        return False  # computeDependencyCounts, 20261006_coupon_ends_at_datetime: a name
    classes = sum(bool(re.search(p, text)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    counts = Counter(text)
    entropy = -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())
    return classes >= 2 and entropy >= 3.5 and not re.fullmatch(r"[a-z_.\-]+", text)


def select_keywords(
    keywords: list[Keyword], limit: int
) -> tuple[list[Keyword], list[dict[str, str]]]:
    """Keep the most telling keywords (ids first, loose sub-parts last), in prompt order."""
    dropped: list[dict[str, str]] = []
    usable = []
    for keyword in keywords:
        if looks_secret(keyword.text):
            dropped.append({"text": "[redacted]", "why": "looks like a secret"})
        else:
            usable.append(keyword)
    ranked = sorted(range(len(usable)), key=lambda i: (_PRIORITY.get(usable[i].subkind, 3), i))
    keep = set(ranked[:limit])
    dropped += [{"text": usable[i].text, "why": "over keyword limit"} for i in ranked[limit:]]
    return [usable[i] for i in sorted(keep)], dropped


# --- rendering --------------------------------------------------------------------------

# Detail levels, most first: quoted lines per memory, and the most characters one stored
# field (title, path, status, keywords, a quoted line) may take. The last level is about
# 170 characters a memory, what config's least budget leaves room for.
_LEVELS = ((3, 240), (2, 160), (1, 120), (1, 60), (0, 40))
# Read no more of one field than the widest level can show: a 1 MB minified line in a note
# must not be normalised whole on the hook's clock.
_FIELD_READ = 4 * _LEVELS[0][1]


@dataclass
class _Fields:
    """One hit's stored text, each field made safe once (sanitize.quoted: one line, no
    angle bracket of any spelling, no control or invisible character)."""

    title: str
    where: str
    status: str
    matched: str
    lines: list[str]
    close_reason: str = ""


def _safe_fields(hit: Hit) -> _Fields:
    from .sanitize import quoted

    def q(value: object) -> str:
        return quoted(str(value)[:_FIELD_READ])

    where = hit.ref if rules_for(hit.store).by_id else str(hit.path)
    return _Fields(
        title=q(hit.title),
        where=quoted(where[-_FIELD_READ:]),
        status=q(hit.status or "open"),
        matched=q(", ".join(hit.matched)),
        lines=[q(text) for _, text in hit.lines[: _LEVELS[0][0]]],
        close_reason=q(hit.close_reason) if hit.close_reason else "",
    )


def _render_hit(
    index: int, hit: Hit, fields: _Fields, lines: int, width: int, stale: list[str] | None = None
) -> str:
    # Every stored field sits on one line after a fixed prefix the renderer wrote, so no
    # stored text starts a line, and none holds a `<` a prefix's `>` could complete.
    head = f"[{index}] {hit.store} · {hit.date_label()} · {cut(fields.title, width)}"
    if rules_for(hit.store).by_id:
        head += f" ({cut(fields.where, width)}, {cut(fields.status, 20)}"
        head += (f", P{hit.priority}" if isinstance(hit.priority, int) else "") + ")"
    else:
        head += f"\n    {cut(fields.where, width, keep_end=True)}:{int(hit.line)}"
    body = [head, f"    matched: {cut(fields.matched, width)}"]
    if fields.close_reason:
        # What a closed issue concluded is what a reader needs first.
        body.append(f"    closed: {cut(fields.close_reason, width)}")
    # Files the memory names that the project changed since (staleness.py): verify first.
    body += [f"    stale: {cut(line, width)}" for line in stale or []]
    body += [f"    > {cut(text, width)}" for text in fields.lines[:lines]]
    return "\n".join(body)


def fit_context(
    hits: list[Hit], budget: int, template: str, stale: dict[str, list[str]] | None = None
) -> tuple[str | None, list[Hit]]:
    """The context for as many hits as fit in `budget` characters, and the hits it shows.

    Detail goes before memories: the first level at which every hit fits wins. A hit too
    big even at the least detail is left out, never a reason to show nothing; then the
    level that shows the most hits (the more detailed on a tie) wins. Only the hits
    returned were shown: the caller records those, and no others, as injected.
    """
    from .sanitize import quoted

    fields = [_safe_fields(hit) for hit in hits]
    # The paths come from the memory's text: made safe like every stored field.
    warnings = {key: [quoted(line) for line in lines] for key, lines in (stale or {}).items()}
    best: tuple[str | None, list[Hit]] = (None, [])
    for lines, width in _LEVELS:
        shown: list[Hit] = []
        blocks: list[str] = []
        for hit, safe in zip(hits, fields):
            block = _render_hit(len(shown) + 1, hit, safe, lines, width, warnings.get(hit.key))
            if len(_fill(template, blocks + [block])) <= budget:
                shown.append(hit)
                blocks.append(block)
        if len(shown) > len(best[1]):
            best = (_fill(template, blocks), shown)
        if len(shown) == len(hits):
            break
    return best


def _fill(template: str, blocks: list[str]) -> str:
    return template.replace("{hits}", "\n\n".join(blocks)).strip()


def render_context(hits: list[Hit], budget: int, template: str) -> str | None:
    """The context text alone (doctor's probe), or None when not one hit fits."""
    return fit_context(hits, budget, template)[0]


# --- the core ---------------------------------------------------------------------------


def recall(
    hook: HookInput,
    settings: Settings,
    deadline: float,
    backend: str | None = None,
) -> RecallResult:
    from .resources import template
    from .search import search
    from .tokenize import tokenize_text

    cfg = settings.recall
    log: dict[str, Any] = {
        "session": hook.session_id,
        "prompt_chars": len(hook.prompt),
        "decision": "quiet",
        "reason": "",
        "injected": [],
        "chars": 0,
    }
    if settings.warnings:
        log["warnings"] = list(settings.warnings)
    from .redact import PLACEHOLDER, has_optout, redact_fast, strip_private

    # `#memrecall:off` in any spelling an IME types: no search, no keywords, no prompt text.
    if has_optout(hook.prompt, settings.summarize.optout_marker):
        log.update(decision="opted-out", reason="the prompt carries the opt-out marker")
        return RecallResult(None, log)
    # `<private>` spans are gone before anything reads the prompt: never a keyword, never
    # logged, never on rg's argv.
    prompt = strip_private(hook.prompt, " ")
    trivial = is_trivial(prompt, cfg.min_prompt_chars)
    if trivial:
        log.update(decision="trivial", reason=trivial)
        return RecallResult(None, log)

    phase_started = time.monotonic()
    text = prompt
    if len(text) > KEYWORD_HEAD_CHARS + KEYWORD_TAIL_CHARS:
        from .transcripts import cut_head, cut_tail

        # Cut at token edges: half a key no longer looks like a key to any rule.
        text = cut_head(text, KEYWORD_HEAD_CHARS) + "\n" + cut_tail(text, KEYWORD_TAIL_CHARS)
        log["prompt_cut"] = True
    # Secrets pasted into a prompt are never keywords: not in the log, not on rg's argv
    # (which `ps` shows). The placeholders themselves are not words to search for.
    redacted = redact_fast(text)
    if cfg.log_prompt:
        log["prompt"] = redacted  # asked for, but never with its secrets or private spans
    text = PLACEHOLDER.sub(" ", redacted)
    keywords, notes = tokenize_text(
        text,
        backend or settings.tokenizer,
        settings,
        timeout=max(0.05, deadline - time.monotonic()),
    )
    # Where the hook's time goes, per run: `memrecall stats` and benchmarks read it.
    log["phase_ms"] = {"tokenize": round((time.monotonic() - phase_started) * 1000, 1)}
    if keywords:
        log["backend"] = keywords[0].backend
    if notes:
        log.setdefault("warnings", []).extend(notes)
    keywords, dropped = select_keywords(keywords, cfg.max_keywords)
    if cfg.log_prompt:
        log["keywords"] = [k.text for k in keywords]
        log["dropped"] = dropped
    else:
        # Without `log_prompt` the log must not hold the prompt's words in order: the kept
        # keywords (at most max_keywords) sorted and unique, and only counts of the rest.
        log["keywords"] = sorted({k.text for k in keywords})
        log["dropped"] = [
            {"why": why, "count": n}
            for why, n in sorted(Counter(d["why"] for d in dropped).items())
        ]
    if not keywords:
        log.update(decision="quiet", reason="no keywords")
        return RecallResult(None, log)

    phase_started = time.monotonic()
    outcome = search(keywords, settings, deadline=deadline, limit=10, text=text)
    log["phase_ms"]["search"] = round((time.monotonic() - phase_started) * 1000, 1)
    log["phase_ms"].update({f"search.{name}": ms for name, ms in outcome.phase_ms.items()})
    if outcome.fallback:
        # Why ripgrep answered instead of the index (none yet, stale schema, corrupt …).
        log["index_fallback"] = outcome.fallback
    if outcome.refresh_started:
        log["index_refresh"] = "started"
    log["df"] = {k.text: outcome.df.get(k.key, {}) for k in sorted(keywords, key=lambda k: k.text)}
    log["candidates"] = outcome.candidates
    log["doc_counts"] = outcome.doc_counts
    log["engine"] = outcome.engine
    if outcome.warnings:
        log.setdefault("warnings", []).extend(outcome.warnings[:5])
    if outcome.timed_out:
        log.update(decision="deadline", reason=f"search passed the {cfg.deadline_ms} ms deadline")
        return RecallResult(None, log)

    from .gate import generic_keys, load_generic, pasted_keys, prompt_shape
    from .resources import shipped_generic

    shape = prompt_shape(text)
    generic = generic_keys(keywords, load_generic([shipped_generic(), settings.user_generic]))
    pasted = pasted_keys(text, keywords)
    log["shape"] = shape
    if generic:
        log["generic"] = sorted(generic)
    if pasted:
        log["pasted"] = sorted(pasted)
    from .gate import advance
    from .session import open_session

    remaining = max(0.05, deadline - time.monotonic())
    with open_session(settings.state_dir, hook.session_id, timeout=min(0.5, remaining)) as state:
        gate = advance(
            state, outcome.hits, cfg.threshold, cfg.decay, cfg.max_hits, shape, generic, pasted
        )
        chosen, context, shown = gate.chosen, None, list[Hit]()
        stale: dict[str, list[str]] = {}
        if chosen and hook.cwd:
            from .staleness import check, rerank

            # Only the memories about to be injected, within what the deadline leaves.
            stale = check(chosen, hook.cwd, deadline)
            chosen = rerank(chosen, stale)
        if chosen:
            context, shown = fit_context(chosen, cfg.budget_chars, template("context.md"), stale)
        # Only what the context shows is injected: a hit the budget left out stays eligible.
        state.record_injected(shown)

    log["top"] = gate.top
    shown_ids = {id(h) for h in shown}
    left_out = [h.key for h in chosen if id(h) not in shown_ids]
    if left_out:
        log["over_budget"] = left_out
    if context:
        from .sanitize import clean

        log.update(
            decision="inject",
            reason="; ".join(h.why for h in shown),
            chars=len(context),
            injected=[
                {
                    "store": h.store,
                    "ref": h.ref,
                    "title": clean(h.title)[:200],
                    "score": round(h.score, 3),
                    "acc": round(h.acc, 3),
                    "matched": h.matched,
                    "main": h.main_keyword,
                    # Why it matched: keyword → title/tags/id ("head") or text ("body"),
                    # and the line quoted first.
                    "fields": h.fields,
                    "line": h.line,
                    "key": h.key,
                }
                for h in shown
            ],
        )
        warned = {h.key: stale[h.key] for h in shown if h.key in stale}
        if warned:
            log["stale"] = warned
        return RecallResult(context, log)
    if chosen:
        # Strong enough to inject, too big to fit: say so, or a user lowers the threshold.
        log["reason"] = (
            f"over budget ({len(chosen)} memories, none fits in {cfg.budget_chars} characters)"
        )
    elif not outcome.hits:
        log["reason"] = "no candidates"
    elif gate.best_was_injected:
        # The strongest match is already in this session's context: staying quiet is right.
        log["reason"] = "already injected in this session"
    elif not log["reason"]:
        # The best memory's verdict, in words: what to change for it to speak (or why not).
        log["reason"] = str(gate.top[0].get("verdict") if gate.top else "") or "below threshold"
        if gate.skipped:
            log["reason"] += f" ({gate.skipped} related memories already injected in this session)"
    return RecallResult(None, log)
