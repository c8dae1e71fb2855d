#!/usr/bin/env python3
"""Benchmark `memrecall summarize` over the real transcripts of the shared corpus.

Per main session (subagent, compaction-agent and sidecar files are what discovery skips):
raw transcript bytes, condensed characters, characters actually sent to an LLM backend
(prompt template included, every chunk and the merge call), and the time of the extractive
backend (parse + condense + redact + extractive + post-filter). The LLM is a stand-in
`command` backend that returns a fixed valid summary, so the characters counted are exactly
those `claude -p` would receive. Target: sent ≤ 5 % of raw bytes on the large sessions.

    .venv/bin/python scripts/bench_summarize.py [--corpus ../shared/corpus] [--repeat 3]

Prints a markdown table on stdout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FAKE_LLM = """import sys
data = sys.stdin.read()
ja = "触ったファイル" in data
names = (
    ["何をしてた", "決まったこと", "触ったファイル", "添付ファイル・URL", "出てきた話題"]
    if ja
    else ["What we did", "Decisions", "Files touched", "Attachments and URLs", "Topics"]
)
print("\\n".join(["## bench", "x", "## " + names[0], "- a", "## " + names[1], "- (none)",
                 "## " + names[2], "- (none)", "## " + names[3], "- (none)",
                 "## " + names[4], "[[bench]]"]))
"""
LARGE = 1_000_000  # bytes: "the large real sessions"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--repeat", type=int, default=3, help="extractive timing: best of N")
    args = parser.parse_args()
    root = args.corpus / "claude-transcripts"
    if not root.is_dir():
        print(f"corpus not found at {root}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMRECALL_HOME"] = str(Path(tmp) / "home")
        os.environ.pop("MEMRECALL_INTERNAL", None)
        fake = Path(tmp) / "fake_llm.py"
        fake.write_text(FAKE_LLM, encoding="utf-8")

        from memrecall.config import load_settings
        from memrecall.summarize.backends import SummaryJob, get_backend
        from memrecall.summarize.condense import condense
        from memrecall.summarize.discover import is_tiny, session_reason
        from memrecall.summarize.postfilter import postfilter
        from memrecall.transcripts import parse_session

        settings = load_settings()
        cfg = settings.summarize
        cfg.command = f"{sys.executable} {fake}"
        llm = get_backend("command", settings)
        extractive = get_backend("extractive", settings)

        rows = []
        for path in sorted(root.rglob("*.jsonl")):
            name = path.name
            if "subagents" in path.parts or name.startswith("agent-") or name == "journal.jsonl":
                continue
            raw = path.stat().st_size
            session = parse_session(path)
            condensed = condense(session, cfg.max_input_chars, cfg.chunk_chars, cfg.language)
            reason = session_reason(session, settings) or (
                "tiny" if is_tiny(session, condensed.full_chars, settings) else ""
            )
            job = SummaryJob(session=session, condensed=condensed, language=condensed.language)
            llm.summarize(job)
            times = []
            for _ in range(max(1, args.repeat)):
                began = time.perf_counter()
                s = parse_session(path)
                c = condense(s, cfg.max_input_chars, cfg.chunk_chars, cfg.language)
                j = SummaryJob(session=s, condensed=c, language=c.language)
                postfilter(extractive.summarize(j), s, c.language)
                times.append(time.perf_counter() - began)
            rows.append(
                {
                    "session": path.stem[:8],
                    "source": path.relative_to(root).parts[0],
                    "raw": raw,
                    "condensed": condensed.chars,
                    "sent": job.sent_chars,
                    "calls": job.calls,
                    "capped": condensed.capped,
                    "ms": min(times) * 1000,
                    "decision": reason or "summarize",
                }
            )

    print(
        "| session | source | raw bytes | condensed chars | sent chars | sent / raw | LLM calls "
        "| extractive ms | decision |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for r in sorted(rows, key=lambda r: -r["raw"]):
        # A skipped session sends nothing; what it would send is shown in parentheses.
        sent = f"{r['sent']:,}" if r["decision"] == "summarize" else f"0 ({r['sent']:,})"
        ratio = (
            f"{r['sent'] / r['raw']:.2%}"
            if r["decision"] == "summarize"
            else f"({r['sent'] / r['raw']:.2%})"
        )
        print(
            f"| {r['session']} | {r['source']} | {r['raw']:,} | "
            f"{r['condensed']:,}{' (capped)' if r['capped'] else ''} | "
            f"{sent} | {ratio} | {r['calls']} | {r['ms']:.1f} | {r['decision']} |"
        )
    large = [r for r in rows if r["raw"] >= LARGE]
    done = [r for r in rows if r["decision"] == "summarize"]
    total_raw = sum(r["raw"] for r in done)
    total_sent = sum(r["sent"] for r in done)
    print()
    print(
        f"- sessions: {len(rows)} main sessions, {len(done)} summarized; "
        f"their raw {total_raw:,} bytes → "
        f"sent {total_sent:,} chars ({total_sent / max(total_raw, 1):.2%})"
    )
    if large:
        worst = max(r["sent"] / r["raw"] for r in large)
        verdict = "meets" if worst <= 0.05 else "MISSES"
        print(
            f"- large sessions (≥ {LARGE:,} bytes): {len(large)}; worst sent/raw {worst:.2%} — "
            f"{verdict} the ≤ 5 % target"
        )
        print(
            "- extractive time on large sessions: "
            f"median {statistics.median(r['ms'] for r in large):.0f} ms, "
            f"max {max(r['ms'] for r in large):.0f} ms"
        )
    print(
        f"- extractive time, all sessions: median {statistics.median(r['ms'] for r in rows):.1f} ms"
    )
    print(
        f"- settings: max_input_chars {cfg.max_input_chars:,}, chunk_chars {cfg.chunk_chars:,}, "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
