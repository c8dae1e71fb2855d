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

    .venv/bin/python scripts/eval_recall.py [--set dev|test|legacy] [--rows] [--backend sudachi]
        [--engine index|rg] [--json]

The frozen test set (`--set test`) only ever prints aggregate numbers: nobody tuning reads its
prompts.
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


def corpus_environ(
    corpus: Path, home: Path, backend: str, now: str, engine: str = "index"
) -> dict[str, str]:
    import os

    beads = sorted(str(p) for p in (corpus / "beads").iterdir() if p.is_dir())
    vaults = [
        corpus / "obsidian-ja-ikorihn" / "content",
        corpus / "obsidian-en-tasks-demo" / "Tasks-Demo",
    ]
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


# Every labelled set in recall_sets/, by file name (dev, dev2 …, test): a new set needs no edit
# here. `legacy` is the first round's file.
SETS = {path.stem: path for path in (HERE / "recall_sets").glob("*.json")} | {"legacy": QUERIES}


def load_set(name: str) -> dict:
    """A set as {now, related, generic, chitchat}; the first-round file (`legacy`) has
    `unrelated` prompts only, counted as chit-chat."""
    spec = json.loads(SETS[name].read_text(encoding="utf-8"))
    spec.setdefault("generic", [])
    spec.setdefault("chitchat", [{"prompt": p} for p in spec.pop("unrelated", [])])
    for case in spec["related"]:
        case.setdefault("store", "?")
        case.setdefault("difficulty", "exact")
    return spec


def evaluate(corpus: Path, backend: str, engine: str = "index", set_name: str = "legacy") -> dict:
    from memrecall.config import load_settings
    from memrecall.recall import HookInput, recall
    from memrecall.search import search
    from memrecall.tokenize import tokenize_text

    spec = load_set(set_name)
    rows = []
    quiet_rows: dict[str, list[dict]] = {"generic": [], "chitchat": []}
    with tempfile.TemporaryDirectory(prefix="memrecall-eval-") as tmp:
        settings = load_settings(
            environ=corpus_environ(corpus, Path(tmp), backend, spec["now"], engine)
        )
        if engine == "index":
            from memrecall.index import refresh

            refresh(settings)
        # Warm the tokenizer and the document-count cache so the first row is not special.
        tokenize_text("ウォームアップ", settings.tokenizer, settings)

        def first_turn(prompt: str, n: int) -> tuple[list[str], dict]:
            started = time.monotonic()
            result = recall(
                HookInput(session_id=f"eval-{n}", prompt=prompt), settings, deadline=started + 5
            )
            return [item["ref"] for item in result.log.get("injected", [])], result.log

        for n, case in enumerate(spec["related"]):
            keywords, _ = tokenize_text(case["prompt"], settings.tokenizer, settings)
            hits = (
                search(keywords, settings, limit=10, text=case["prompt"]).hits if keywords else []
            )
            refs = [h.ref for h in hits]
            rank = next((i + 1 for i, ref in enumerate(refs) if matches(ref, case["expect"])), None)
            injected, log = first_turn(case["prompt"], n)
            rows.append(
                {
                    "prompt": case["prompt"],
                    "store": case["store"],
                    "difficulty": case["difficulty"],
                    "rank": rank,
                    "results": len(refs),
                    "top": refs[:3],
                    "forbidden": [r for r in refs[:3] if matches(r, case.get("forbid", []))],
                    "fired": bool(injected),
                    "fired_right": any(matches(r, case["expect"]) for r in injected),
                    "reason": log.get("reason", ""),
                }
            )
        for section in ("generic", "chitchat"):
            for n, case in enumerate(spec[section]):
                injected, log = first_turn(
                    case["prompt"], 1000 + n + (500 if section == "chitchat" else 0)
                )
                quiet_rows[section].append(
                    {
                        "prompt": case["prompt"],
                        "injected": injected,
                        "reason": log.get("reason", ""),
                        "keywords": log.get("keywords", []),
                    }
                )

    def rates(selected: list[dict]) -> dict:
        count = len(selected) or 1
        return {
            "n": len(selected),
            "hit@1": sum(1 for r in selected if r["rank"] == 1) / count,
            "hit@3": sum(1 for r in selected if r["rank"] and r["rank"] <= 3) / count,
            "injected_right": sum(1 for r in selected if r["fired_right"]) / count,
        }

    breakdown = {}
    for key in ("store", "difficulty"):
        for value in sorted({r[key] for r in rows}):
            breakdown[f"{key}={value}"] = rates([r for r in rows if r[key] == value])
    related = len(rows) or 1
    return {
        "set": set_name,
        "backend": backend,
        "engine": engine,
        "related": len(rows),
        **{k: v for k, v in rates(rows).items() if k != "n"},
        "zero_result_rate": sum(1 for r in rows if not r["results"]) / related,
        "forbidden_in_top3": sum(1 for r in rows if r["forbidden"]),
        "fire_rate": sum(1 for r in rows if r["fired"]) / related,
        "fired_wrong_only": sum(1 for r in rows if r["fired"] and not r["fired_right"]),
        "generic": len(quiet_rows["generic"]),
        "generic_false_fire": sum(1 for r in quiet_rows["generic"] if r["injected"])
        / max(1, len(quiet_rows["generic"])),
        "chitchat": len(quiet_rows["chitchat"]),
        "chitchat_false_fire": sum(1 for r in quiet_rows["chitchat"] if r["injected"])
        / max(1, len(quiet_rows["chitchat"])),
        "breakdown": breakdown,
        "false_fires": [r for section in quiet_rows.values() for r in section if r["injected"]],
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus")
    parser.add_argument("--backend", action="append", help="sudachi | mecab | regex (repeatable)")
    parser.add_argument("--engine", action="append", help="index | rg (repeatable; default: both)")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=sorted(SETS),
        help="a file of scripts/recall_sets/ by name (dev, dev2 …, test) or legacy "
        "(repeatable; default: dev)",
    )
    parser.add_argument(
        "--rows",
        action="store_true",
        help="print every prompt (never for the frozen test set: its prompts stay unread)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the metrics as one JSON object per run"
    )
    args = parser.parse_args()
    if not (args.corpus / "summaries-ja").is_dir():
        print(f"Error: no corpus at {args.corpus}", file=sys.stderr)
        return 1
    runs = [
        (s, b, e)
        for s in args.sets or ["dev"]
        for b in args.backend or ["sudachi"]
        for e in args.engine or ["index"]
    ]
    for set_name, backend, engine in runs:
        report = evaluate(args.corpus, backend, engine, set_name)
        show_rows = args.rows and set_name != "test"
        if args.json:
            if not show_rows:
                report.pop("rows"), report.pop("false_fires")
            print(json.dumps(report, ensure_ascii=False))
            continue
        print(f"\n## set: {set_name}, backend: {backend}, engine: {engine}\n")
        if show_rows:
            print("| store | kind | prompt | rank | top-3 | hook |")
            print("|---|---|---|---|---|---|")
            for row in report["rows"]:
                hook = (
                    "fired ✓"
                    if row["fired_right"]
                    else ("fired ✗" if row["fired"] else "quiet: " + row["reason"][:50])
                )
                print(
                    f"| {row['store']} | {row['difficulty']} | {row['prompt'][:70]} "
                    f"| {row['rank'] or '-'} "
                    f"| {', '.join(row['top'])[:60]} | {hook} |"
                )
            print()
        print(f"related prompts: {report['related']}")
        print("| slice | n | hit@1 | hit@3 | injected right |")
        print("|---|---|---|---|---|")
        slices = {
            "all": {
                "n": report["related"],
                "hit@1": report["hit@1"],
                "hit@3": report["hit@3"],
                "injected_right": report["injected_right"],
            },
            **report["breakdown"],
        }
        for name, r in slices.items():
            print(
                f"| {name} | {r['n']} | {r['hit@1']:.0%} | {r['hit@3']:.0%} "
                f"| {r['injected_right']:.0%} |"
            )
        print()
        print(
            f"- zero results: {report['zero_result_rate']:.0%}; "
            f"fired on a wrong memory only: {report['fired_wrong_only']}"
        )
        print(
            f"- false fires: generic {report['generic_false_fire']:.1%} of {report['generic']}, "
            f"chit-chat {report['chitchat_false_fire']:.1%} of {report['chitchat']}"
        )
        print(f"- forbidden documents in a top 3: {report['forbidden_in_top3']}")
        if show_rows:
            for fire in report["false_fires"]:
                print(
                    f"- false fire: {fire['prompt']} → {', '.join(fire['injected'])} "
                    f"({fire['reason'][:120]})"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
