"""The recall core: hook input + settings → context to inject (or nothing) + a log entry.

Pure apart from the stores it searches and the per-session state file; `hook.py` does
stdin/stdout and the fail-open guard. The gate, in words (README "When recall fires"):

1. Trivial prompts (acknowledgements, slash commands, very short text) never fire.
2. Each candidate's score accumulates over the session's prompts and halves every turn
   (`recall.decay`); a candidate fires when its accumulated score reaches
   `recall.threshold` AND the evidence is more than one common word: a distinctive
   identifier (ticket id, beads id, path, code name found in ≤5 documents), or at least two
   distinct keywords, or matches in at least two prompts.
3. A memory injected once is never injected again in the same session.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .atomic import locked, read_json, write_json_atomic
from .config import Settings
from .keywords import Keyword
from .search import Hit

WRAPPER_OPEN = "<memrecall-context>"
WRAPPER_CLOSE = "</memrecall-context>"
STATE_KEEP = 60
STATE_MAX_AGE_SECONDS = 7 * 86400
# Keywords come from the head and the tail of a long prompt (a pasted log with the question
# before or after it). The identifier pass costs ~0.3 s per MB and SudachiPy refuses input
# over 49 KB, so a 10 MB paste must never be analysed whole on the hook's clock.
KEYWORD_HEAD_CHARS = 6000
KEYWORD_TAIL_CHARS = 4000

_TRIVIAL = re.compile(
    r"^(ok(ay)?|yes|no|y|n|yep|nope|sure|thanks?( you)?|thx|ty|lgtm|go( on| ahead)?|continue|next|"
    r"do it|please|done|great|nice|good|cool|perfect|got it|"
    r"はい|いいえ|うん|ええ|了解(です)?|りょ|おけ|おk|ok(です)?|ありがと(う|うございます)?|"
    r"続けて(ください)?|続き|つづけて|お願い(します)?|よろしく(お願いします)?|それで(お願いします)?|"
    r"進めて(ください)?|いいね|大丈夫(です)?|次|次へ|どうぞ)[\s!！。.、,~〜w]*$",
    re.IGNORECASE,
)
_SECRET_PREFIX = re.compile(
    r"^(sk-|sk_live_|rk_live_|ghp_|gho_|ghs_|github_pat_|glpat-|xox[abpsr]-|AKIA|ASIA|AIza|eyJ)"
)
_PRIORITY = {
    "ticket": 0, "beads": 0,
    "path": 1, "url": 1, "code": 1, "snake": 1, "camel": 1, "dotted": 1, "kebab": 1,
    "compound": 2, "proper_noun": 2, "noun": 3, "external": 3,
    "version": 4, "alnum": 4, "number": 4, "word": 5, "part": 6,
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
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": self.context}
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


def looks_secret(text: str) -> bool:
    """Keywords that look like credentials are neither searched nor logged."""
    if _SECRET_PREFIX.match(text) and len(text) >= 12:
        return True
    if len(text) < 20 or not re.fullmatch(r"[A-Za-z0-9+/=_\-.]+", text):
        return False
    classes = sum(bool(re.search(p, text)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    counts = Counter(text)
    entropy = -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())
    return classes >= 2 and entropy >= 3.5 and not re.fullmatch(r"[a-z_.\-]+", text)


def select_keywords(keywords: list[Keyword], limit: int) -> tuple[list[Keyword], list[dict[str, str]]]:
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


# --- per-session state -----------------------------------------------------------------

def _state_file(settings: Settings, session_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "", session_id)[:80]
    if not safe or safe != session_id:
        import hashlib  # Claude Code's ids are UUIDs, already safe: hashing is the rare case

        safe = (safe[:40] + "-" if safe else "") + hashlib.sha256(session_id.encode()).hexdigest()[:16]
    return settings.state_dir / "sessions" / f"{safe}.json"


def _clean_old_states(folder: Path) -> None:
    cutoff = time.time() - STATE_MAX_AGE_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    old: set[str] = set()
    for entry in entries:
        try:
            if entry.name.endswith(".json") and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                old.add(entry.name)
        except OSError:
            continue
    names = {entry.name for entry in entries}
    for entry in entries:
        # A lock sidecar's mtime never changes (flock does not touch it), so its age says
        # nothing: removing the sidecar of a live session lets two processes hold "the"
        # lock at once (different inodes). Only the sidecar of a state that is gone goes.
        state_name = entry.name[: -len(".lock")]
        if entry.name.endswith(".json.lock") and (state_name in old or state_name not in names):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue


def _fresh_state() -> dict[str, Any]:
    return {"turn": 0, "scores": {}, "injected": []}


def _valid_state(state: Any) -> dict[str, Any]:
    if (
        not isinstance(state, dict)
        or not isinstance(state.get("turn"), int)
        or not isinstance(state.get("scores"), dict)
        or not isinstance(state.get("injected"), list)
    ):
        return _fresh_state()
    return state


# --- rendering --------------------------------------------------------------------------

_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f]")


# Any spelling of the wrapper's tags: attributes (`</memrecall-context x>`), self-closing,
# spaces, fullwidth or small-form brackets (＜ ﹤), case.
_WRAPPER_TAG = re.compile(r"[<＜﹤]\s*/?\s*memrecall[-_‐‑–—\s]*context\b[^>＞﹥\n]*[>＞﹥]", re.IGNORECASE)


def _defang(text: str) -> str:
    # A stored note must not be able to close the wrapper and speak as the system.
    return _WRAPPER_TAG.sub("[memrecall-context tag removed]", text)


def _one_line(value: object) -> str:
    # A beads title or status may hold newlines: a field must not start a line of its own
    # (every stored line is quoted with `>`), or it could pose as the wrapper's own text.
    return " ".join(str(value).split())


def _render_hit(index: int, hit: Hit, lines: int) -> str:
    date = hit.date.date().isoformat() if hit.date else "undated"
    where = _one_line(hit.ref if hit.store == "beads" else f"{hit.path}")
    head = f"[{index}] {hit.store} · {date} · {_one_line(hit.title)}"
    if hit.store == "beads":
        head += f" ({where}, {_one_line(hit.status or 'open')}" + (f", P{hit.priority}" if hit.priority is not None else "") + ")"
    else:
        head += f"\n    {where}:{hit.line}"
    body = [head, f"    matched: {_one_line(', '.join(hit.matched))}"]
    body += [f"    > {_one_line(text)}" for _, text in hit.lines[:lines]]
    # Defanged once over the whole block: titles, ids, statuses, paths and lines alike.
    return _defang("\n".join(body))


def render_context(hits: list[Hit], budget: int, template: str) -> str | None:
    """Fit the hits into the template within `budget` characters, dropping detail first."""
    for lines in (3, 2, 1):
        for count in range(len(hits), 0, -1):
            blocks = "\n\n".join(_render_hit(i + 1, h, lines) for i, h in enumerate(hits[:count]))
            text = template.replace("{hits}", blocks).strip()
            if len(text) <= budget:
                return text
    return None


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
    if cfg.log_prompt:
        from .redact import redact_fast

        log["prompt"] = redact_fast(hook.prompt)  # asked for, but never with its secrets
    if settings.warnings:
        log["warnings"] = list(settings.warnings)
    trivial = is_trivial(hook.prompt, cfg.min_prompt_chars)
    if trivial:
        log.update(decision="trivial", reason=trivial)
        return RecallResult(None, log)

    phase_started = time.monotonic()
    text = hook.prompt
    if len(text) > KEYWORD_HEAD_CHARS + KEYWORD_TAIL_CHARS:
        text = text[:KEYWORD_HEAD_CHARS] + "\n" + text[-KEYWORD_TAIL_CHARS:]
        log["prompt_cut"] = True
    # Secrets pasted into a prompt are never keywords: not in the log, not on rg's argv
    # (which `ps` shows). The placeholders themselves are not words to search for.
    from .redact import PLACEHOLDER, redact_fast

    text = PLACEHOLDER.sub(" ", redact_fast(text))
    keywords, notes = tokenize_text(
        text, backend or settings.tokenizer, settings,
        timeout=max(0.05, deadline - time.monotonic()),
    )
    # Where the hook's time goes, per run: `memrecall stats` and benchmarks read it.
    log["phase_ms"] = {"tokenize": round((time.monotonic() - phase_started) * 1000, 1)}
    if keywords:
        log["backend"] = keywords[0].backend
    if notes:
        log.setdefault("warnings", []).extend(notes)
    keywords, dropped = select_keywords(keywords, cfg.max_keywords)
    log["keywords"] = [k.text for k in keywords]
    log["dropped"] = dropped
    if not keywords:
        log.update(decision="quiet", reason="no keywords")
        return RecallResult(None, log)

    phase_started = time.monotonic()
    outcome = search(keywords, settings, deadline=deadline, limit=10)
    log["phase_ms"]["search"] = round((time.monotonic() - phase_started) * 1000, 1)
    log["df"] = {k.text: outcome.df.get(k.key, {}) for k in keywords}
    log["candidates"] = outcome.candidates
    log["doc_counts"] = outcome.doc_counts
    log["engine"] = outcome.engine
    if outcome.warnings:
        log.setdefault("warnings", []).extend(outcome.warnings[:5])
    if outcome.timed_out:
        log.update(decision="deadline", reason=f"search passed the {cfg.deadline_ms} ms deadline")
        return RecallResult(None, log)

    state_path = _state_file(settings, hook.session_id)
    remaining = max(0.05, deadline - time.monotonic())
    with locked(state_path, timeout=min(0.5, remaining)):
        is_new = not state_path.exists()
        state = _valid_state(read_json(state_path, None))
        chosen, top, skipped, best_was_injected = _gate(state, outcome.hits, settings)
        context = None
        if chosen:
            context = render_context(chosen, cfg.budget_chars, template("context.md"))
        if context:
            turn = state["turn"]
            state["injected"] += [{"store": h.store, "ref": h.ref, "turn": turn} for h in chosen]
        write_json_atomic(state_path, state)
    if is_new:
        _clean_old_states(state_path.parent)

    log["top"] = top
    if context:
        log.update(
            decision="inject",
            reason="; ".join(h.why for h in chosen),
            chars=len(context),
            injected=[
                {
                    "store": h.store, "ref": h.ref, "title": h.title, "score": round(h.score, 3),
                    "acc": round(h.acc, 3), "matched": h.matched, "main": h.main_keyword,
                }
                for h in chosen
            ],
        )
        return RecallResult(context, log)
    if not outcome.hits:
        log["reason"] = "no candidates"
    elif best_was_injected:
        # The strongest match is already in this session's context: staying quiet is right.
        log["reason"] = "already injected in this session"
    elif not log["reason"]:
        log["reason"] = "below threshold"
        if skipped:
            log["reason"] += f" ({skipped} related memories already injected in this session)"
    return RecallResult(None, log)


def _gate(
    state: dict[str, Any], hits: list[Hit], settings: Settings
) -> tuple[list[Hit], list[dict[str, Any]], int, bool]:
    """Advance the session's scores by one turn. Returns the hits to inject, the top scores
    for the log, how many hits were skipped as already injected, and whether the best one was."""
    cfg = settings.recall
    state["turn"] += 1
    turn = state["turn"]
    injected = {f"{item.get('store')}:{item.get('ref')}" for item in state["injected"] if isinstance(item, dict)}
    scores: dict[str, Any] = {}
    for key, entry in state["scores"].items():
        if isinstance(entry, dict) and isinstance(entry.get("acc"), (int, float)):
            entry["acc"] = float(entry["acc"]) * cfg.decay
            if entry["acc"] >= 0.05:
                scores[key] = entry
    eligible = []
    skipped = 0
    for hit in hits:
        if hit.key in injected:
            skipped += 1
            continue
        entry = scores.setdefault(hit.key, {"acc": 0.0, "turns": [], "keywords": []})
        entry["acc"] = float(entry["acc"]) + hit.score
        entry["turns"] = sorted(set(entry.get("turns", [])[-5:]) | {turn})
        entry["keywords"] = sorted(set(entry.get("keywords", [])) | set(hit.topics or hit.matched))[:20]
        acc = entry["acc"]
        if hit.distinctive:
            why = f"distinctive {hit.main_keyword or hit.matched[0]}"
            acc = max(acc, cfg.threshold)
        elif len(entry["keywords"]) >= 2:
            why = f"{len(entry['keywords'])} keywords"
        elif len(entry["turns"]) >= 2:
            why = f"came up in {len(entry['turns'])} prompts"
        else:
            why = ""
        hit.acc = acc
        hit.why = f"{hit.key}: {why}, score {acc:.2f}" if why else ""
        if why and acc >= cfg.threshold:
            eligible.append(hit)
    state["scores"] = dict(sorted(scores.items(), key=lambda kv: -kv[1]["acc"])[:STATE_KEEP])
    top = [
        {"key": h.key, "score": round(h.score, 3), "acc": round(h.acc, 3), "matched": h.matched}
        for h in hits[:5]
    ]
    eligible.sort(key=lambda h: h.acc, reverse=True)
    if eligible:
        best = eligible[0].acc
        # Tag-alongs far below the best hit are noise, not memory.
        eligible = [h for h in eligible if h.acc >= 0.5 * best][: cfg.max_hits]
    return eligible, top, skipped, bool(hits) and hits[0].key in injected
