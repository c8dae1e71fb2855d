"""Numbers from the recall log, the verdicts on what it injected (usage.py) and the last
summarize run, for `memrecall stats`."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from .atomic import read_json
from .config import Settings
from .recall_log import dict_field, read_numbered
from .times import instant_or_none
from .usage import VERDICTS

RUN_RECORD = "summarize-run.json"


def percentile(values: list[float], share: float) -> float | None:
    """Nearest-rank percentile: an observed value, never an interpolation."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def run_record_path(settings: Settings) -> Path:
    return settings.state_dir / RUN_RECORD


def read_run_record(settings: Settings) -> dict[str, Any] | None:
    record = read_json(run_record_path(settings), None)
    return record if isinstance(record, dict) else None


@dataclass
class StoreStats:
    searched: int = 0  # prompts whose search covered this store
    with_candidates: int = 0
    injected: int = 0
    documents: int | None = None  # latest document count seen


def use_summary(counts: Counter[str]) -> dict[str, Any]:
    """Verdict counts with the two rates people read: of the memories whose verdict is known,
    the share Claude used (a tool call) and the share it used or mentioned (`engaged`)."""
    judged = counts["used"] + counts["mentioned"] + counts["ignored"]
    return {
        "injected": sum(counts[v] for v in VERDICTS),
        **{v: counts[v] for v in VERDICTS},
        "used_rate": counts["used"] / judged if judged else None,
        "engaged_rate": (counts["used"] + counts["mentioned"]) / judged if judged else None,
    }


@dataclass
class Week:
    prompts: int = 0
    fired: int = 0  # prompts that injected
    verdicts: Counter[str] = field(default_factory=Counter)


@dataclass
class Stats:
    since: datetime | None
    first: str | None = None
    last: str | None = None
    prompts: int = 0
    decisions: Counter[str] = field(default_factory=Counter)
    searched: int = 0
    zero_candidates: int = 0
    elapsed: list[float] = field(default_factory=list)
    injected_chars: list[int] = field(default_factory=list)
    keywords: Counter[str] = field(default_factory=Counter)
    memories: Counter[tuple[str, str]] = field(default_factory=Counter)
    titles: dict[tuple[str, str], str] = field(default_factory=dict)
    stores: dict[str, StoreStats] = field(default_factory=dict)
    backends: Counter[str] = field(default_factory=Counter)
    last_error: dict[str, Any] | None = None
    summarize: dict[str, Any] | None = None
    # Verdicts on injected memories (usage.py); "unknown" also for one never judged.
    use: Counter[str] = field(default_factory=Counter)
    use_by_store: dict[str, Counter[str]] = field(default_factory=dict)
    use_by_reason: dict[str, Counter[str]] = field(default_factory=dict)
    use_by_keyword: dict[str, Counter[str]] = field(default_factory=dict)
    use_by_memory: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    weeks: dict[date, Week] = field(default_factory=dict)

    def rate(self, part: int, whole: int) -> float | None:
        return part / whole if whole else None

    @property
    def considered(self) -> int:
        """Prompts the gate could have fired on (not trivial, not unreadable)."""
        return self.prompts - self.decisions["trivial"] - self.decisions["bad_input"]

    def as_json(self, top: int = 10) -> dict[str, Any]:
        return {
            "since": self.since.isoformat() if self.since else None,
            "first": self.first,
            "last": self.last,
            "prompts": self.prompts,
            "decisions": dict(self.decisions),
            "fire_rate": self.rate(self.decisions["inject"], self.prompts),
            "fire_rate_considered": self.rate(self.decisions["inject"], self.considered),
            "searched": self.searched,
            "zero_candidate_rate": self.rate(self.zero_candidates, self.searched),
            "hook_ms": {
                "p50": percentile(self.elapsed, 0.5),
                "p95": percentile(self.elapsed, 0.95),
                "max": max(self.elapsed) if self.elapsed else None,
            },
            "injected_chars_avg": (sum(self.injected_chars) / len(self.injected_chars))
            if self.injected_chars
            else None,
            "top_keywords": [
                {"keyword": k, "prompts": n} for k, n in self.keywords.most_common(top)
            ],
            "top_memories": [
                {
                    "store": s,
                    "ref": r,
                    "title": self.titles.get((s, r), ""),
                    "injected": n,
                    "used": self.use_by_memory.get((s, r), Counter())["used"],
                    "mentioned": self.use_by_memory.get((s, r), Counter())["mentioned"],
                }
                for (s, r), n in self.memories.most_common(top)
            ],
            "stores": {
                name: {
                    "searched": st.searched,
                    "with_candidates": st.with_candidates,
                    "injected": st.injected,
                    "documents": st.documents,
                }
                for name, st in sorted(self.stores.items())
            },
            "backends": dict(self.backends),
            "last_error": self.last_error,
            "summarize": self.summarize,
            "use": {
                **use_summary(self.use),
                "by_store": {name: use_summary(c) for name, c in sorted(self.use_by_store.items())},
                "by_reason": {
                    name: use_summary(c) for name, c in sorted(self.use_by_reason.items())
                },
                "by_keyword": [
                    {"keyword": k, **use_summary(c)}
                    for k, c in sorted(
                        self.use_by_keyword.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])
                    )[:top]
                ],
                "weekly": [
                    {
                        "week": start.isoformat(),
                        "prompts": week.prompts,
                        "fired": week.fired,
                        "fire_rate": self.rate(week.fired, week.prompts),
                        **use_summary(week.verdicts),
                    }
                    for start, week in sorted(self._filled_weeks().items())
                ],
            },
        }

    def _filled_weeks(self) -> dict[date, Week]:
        """Every week from the first to the last, empty ones included: a gap is information."""
        if not self.weeks:
            return {}
        first, last = min(self.weeks), max(self.weeks)
        weeks, day = {}, first
        while day <= last:
            weeks[day] = self.weeks.get(day, Week())
            day += timedelta(days=7)
        return weeks


def compute(settings: Settings, since: datetime | None = None) -> Stats:
    """Read the log, and the stored verdicts on its injections (`usage.refresh` updates those)."""
    from .usage import item_key, load, reason_kind

    verdicts = load(settings)
    stats = Stats(since=since)
    zone = settings.now.tzinfo
    for entry_id, entry in read_numbered(settings.logs_dir, since):
        stats.prompts += 1
        ts = entry.get("ts")
        if isinstance(ts, str):
            stats.first = stats.first or ts
            stats.last = ts
        decision = str(entry.get("decision") or "unknown")
        stats.decisions[decision] += 1
        moment = instant_or_none(ts)
        week = None
        if moment is not None:
            day = moment.astimezone(zone).date()
            week = stats.weeks.setdefault(day - timedelta(days=day.weekday()), Week())
            week.prompts += 1
            week.fired += decision == "inject"
        elapsed = entry.get("elapsed_ms")
        if isinstance(elapsed, (int, float)) and not isinstance(elapsed, bool):
            stats.elapsed.append(float(elapsed))
        if isinstance(entry.get("backend"), str):
            stats.backends[entry["backend"]] += 1
        if decision == "error" or entry.get("error"):
            stats.last_error = {"ts": ts, "error": entry.get("error") or entry.get("reason")}
        for keyword in dict.fromkeys(k for k in entry.get("keywords") or [] if isinstance(k, str)):
            stats.keywords[keyword] += 1
        candidates = entry.get("candidates")
        if isinstance(candidates, dict):
            stats.searched += 1
            if not any(isinstance(n, int) and n > 0 for n in candidates.values()):
                stats.zero_candidates += 1
            counts = dict_field(entry, "doc_counts")
            for name, n in candidates.items():
                store = stats.stores.setdefault(str(name), StoreStats())
                store.searched += 1
                if isinstance(n, int) and n > 0:
                    store.with_candidates += 1
                if isinstance(counts.get(name), int):
                    store.documents = counts[name]
        if decision == "inject" and isinstance(entry.get("chars"), int):
            stats.injected_chars.append(entry["chars"])
        reasons = str(entry.get("reason") or "").split("; ")
        for item in entry.get("injected") or []:
            if not isinstance(item, dict):
                continue
            key = (str(item.get("store", "?")), str(item.get("ref", "?")))
            stats.memories[key] += 1
            if item.get("title"):
                stats.titles[key] = str(item["title"])
            stats.stores.setdefault(key[0], StoreStats()).injected += 1
            row = verdicts.get((entry_id, key[0], key[1]))
            verdict = row.verdict if row is not None else "unknown"
            prefix = item_key(item) + ": "
            reason = reason_kind(
                next((r[len(prefix) :] for r in reasons if r.startswith(prefix)), "")
            )
            stats.use[verdict] += 1
            stats.use_by_store.setdefault(key[0], Counter())[verdict] += 1
            stats.use_by_reason.setdefault(reason, Counter())[verdict] += 1
            stats.use_by_memory.setdefault(key, Counter())[verdict] += 1
            for keyword in dict.fromkeys(
                m for m in item.get("matched") or [] if isinstance(m, str)
            ):
                stats.use_by_keyword.setdefault(keyword, Counter())[verdict] += 1
            if week is not None:
                week.verdicts[verdict] += 1
    stats.summarize = read_run_record(settings)
    return stats
