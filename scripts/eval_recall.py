#!/usr/bin/env python3
"""Recall quality over ../shared/corpus with the labelled prompts in recall_queries.json.

Reports, per tokenizer backend:
- hit@1 / hit@3: an expected document is first / in the top 3 of `memrecall search`;
- zero-result rate: related prompts for which search found nothing;
- forbidden-in-top-3: a summary outside the retention window, or the older copy of a
  near-duplicate, showed up anyway;
- fire rate: the hook injected something for a related prompt on its first turn, and
  how often what it injected included an expected document;
- false-fire rate: the hook injected anything at all for an unrelated prompt.

Every hook call uses a fresh session and a throw-away MEMRECALL_HOME, exactly as one
first prompt of a new Claude Code session.

    .venv/bin/python scripts/eval_recall.py [--corpus ../shared/corpus] [--backend sudachi] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "recall_queries.json"


def corpus_environ(corpus: Path, home: Path, backend: str, now: str, engine: str = "index") -> dict[str, str]:
    import os

    beads = sorted(str(p) for p in (corpus / "beads").iterdir() if p.is_dir())
    vaults = [corpus / "obsidian-ja-ikorihn" / "content", corpus / "obsidian-en-tasks-demo" / "Tasks-Demo"]
    return {
        "MEMRECALL_HOME": str(home),
        "MEMRECALL_OBSIDIAN": os.pathsep.join(str(v) for v in vaults),
        "MEMRECALL_BEADS": os.pathsep.join(beads),
        "MEMRECALL_SUMMARIES": str(corpus / "summaries-ja"),
        "MEMRECALL_TOKENIZER": backend,
        "MEMRECALL_NOW": now,
        # "manual": the index built below answers; no background refresh is started.
        "MEMRECALL_INDEX": "manual" if engine == "index" else "off",
    }


def matches(ref: str, expected: list[str]) -> bool:
    """Vault refs start with the vault's folder name; the labels leave it out."""
    return any(ref == e or ref.endswith("/" + e) for e in expected)


def evaluate(corpus: Path, backend: str, engine: str = "index") -> dict:
    from memrecall.config import load_settings
    from memrecall.recall import HookInput, recall
    from memrecall.search import search
    from memrecall.tokenize import tokenize_text

    spec = json.loads(QUERIES.read_text(encoding="utf-8"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="memrecall-eval-") as tmp:
        settings = load_settings(environ=corpus_environ(corpus, Path(tmp), backend, spec["now"], engine))
        if engine == "index":
            from memrecall.index import refresh

            refresh(settings)
        # Warm the tokenizer and the document-count cache so the first row is not special.
        tokenize_text("ウォームアップ", settings.tokenizer, settings)

        def first_turn(prompt: str, n: int) -> list[str]:
            started = time.monotonic()
            result = recall(HookInput(session_id=f"eval-{n}", prompt=prompt), settings, deadline=started + 5)
            return [item["ref"] for item in result.log.get("injected", [])]

        for n, case in enumerate(spec["related"]):
            keywords, _ = tokenize_text(case["prompt"], settings.tokenizer, settings)
            hits = search(keywords, settings, limit=10).hits if keywords else []
            refs = [h.ref for h in hits]
            rank = next((i + 1 for i, ref in enumerate(refs) if matches(ref, case["expect"])), None)
            injected = first_turn(case["prompt"], n)
            rows.append({
                "prompt": case["prompt"],
                "rank": rank,
                "results": len(refs),
                "top": refs[:3],
                "forbidden": [r for r in refs[:3] if matches(r, case.get("forbid", []))],
                "fired": bool(injected),
                "fired_right": any(matches(r, case["expect"]) for r in injected),
            })
        false_fires = []
        for n, prompt in enumerate(spec["unrelated"]):
            injected = first_turn(prompt, 1000 + n)
            if injected:
                false_fires.append({"prompt": prompt, "injected": injected})

    related = len(rows)
    return {
        "backend": backend,
        "engine": engine,
        "related": related,
        "unrelated": len(spec["unrelated"]),
        "hit@1": sum(1 for r in rows if r["rank"] == 1) / related,
        "hit@3": sum(1 for r in rows if r["rank"] and r["rank"] <= 3) / related,
        "zero_result_rate": sum(1 for r in rows if not r["results"]) / related,
        "forbidden_in_top3": sum(1 for r in rows if r["forbidden"]),
        "fire_rate": sum(1 for r in rows if r["fired"]) / related,
        "fired_right_rate": sum(1 for r in rows if r["fired_right"]) / related,
        "false_fire_rate": len(false_fires) / len(spec["unrelated"]),
        "false_fires": false_fires,
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus")
    parser.add_argument("--backend", action="append", help="sudachi | mecab | regex (repeatable)")
    parser.add_argument("--engine", action="append", help="index | rg (repeatable; default: both)")
    parser.add_argument("--json", action="store_true", help="print the metrics as one JSON object per backend")
    args = parser.parse_args()
    if not (args.corpus / "summaries-ja").is_dir():
        print(f"Error: no corpus at {args.corpus}", file=sys.stderr)
        return 1
    runs = [(b, e) for b in args.backend or ["sudachi", "mecab", "regex"] for e in args.engine or ["index", "rg"]]
    for backend, engine in runs:
        report = evaluate(args.corpus, backend, engine)
        if args.json:
            print(json.dumps(report, ensure_ascii=False))
            continue
        print(f"\n## backend: {backend}, engine: {engine}\n")
        print("| prompt | rank | top-3 | hook |")
        print("|---|---|---|---|")
        for row in report["rows"]:
            hook = "fired ✓" if row["fired_right"] else ("fired ✗" if row["fired"] else "quiet")
            print(f"| {row['prompt']} | {row['rank'] or '-'} | {', '.join(row['top'])[:70]} | {hook} |")
        print()
        for key in ("hit@1", "hit@3", "zero_result_rate", "fire_rate", "fired_right_rate", "false_fire_rate"):
            print(f"- {key}: {report[key]:.0%}")
        print(f"- forbidden documents in a top 3: {report['forbidden_in_top3']}")
        for fire in report["false_fires"]:
            print(f"- false fire: {fire['prompt']} → {', '.join(fire['injected'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
