#!/usr/bin/env python3
"""What the kanji glosses (memrecall/glosses.tsv) cost a search, in one run.

    .venv/bin/python scripts/bench_glosses.py [--corpus ../shared/corpus] [--reps 3]

Every related and generic prompt of the development sets dev12 … dev17, searched over the real
corpus (both vaults, every beads era, the summaries) through the index, once with the glosses
once without the verbs the dictionary translates (round fifteen: 消す → delete; their
predicate keywords dropped, as before it) and once without any gloss (the lookup replaced by
one that knows no word), rotating which goes first so that a noisy machine weighs on all
alike. Prints p50 / p90 / mean of `search()` in ms; the hook's other phases do not change.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

SETS = ("dev12", "dev13", "dev14", "dev15", "dev16", "dev17")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if not (args.corpus / "beads").is_dir():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 2

    from eval_recall import corpus_environ, load_set

    from memrecall import loanwords
    from memrecall.config import load_settings
    from memrecall.index import refresh
    from memrecall.search import search
    from memrecall.tokenize import tokenize_text

    specs = [load_set(name) for name in SETS]
    prompts = [c["prompt"] for spec in specs for c in spec["related"] + spec["generic"]]
    real = loanwords.glosses

    def no_glosses(word: str) -> list[str]:
        return []

    from memrecall.glossary import glossary_files, known_words

    modes = ["with glosses", "without verb glosses", "without"]
    timings: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="memrecall-bench-") as tmp:
        environ = corpus_environ(args.corpus, Path(tmp), "sudachi", specs[-1]["now"])
        settings = load_settings(environ=environ)
        refresh(settings)
        keywords = [tokenize_text(p, settings.tokenizer, settings)[0] for p in prompts]
        glossary = glossary_files(settings)

        def without_verbs(found: list) -> list:
            verbs = {k.text for k in found if k.kind == "predicate"}
            verbs -= known_words(glossary, verbs)
            return [k for k in found if k.text not in verbs]

        for rep in range(args.reps):
            order = modes[rep % 3 :] + modes[: rep % 3]
            for prompt, found in zip(prompts, keywords):
                if not found:
                    continue
                for mode in order:
                    loanwords.glosses = no_glosses if mode == "without" else real
                    asked = found if mode == "with glosses" else without_verbs(found)
                    started = time.perf_counter()
                    search(asked, settings, text=prompt)
                    timings[mode].append((time.perf_counter() - started) * 1000)
    loanwords.glosses = real
    print(f"{len(prompts)} prompts × {args.reps}, search() over the real corpus, index engine\n")
    print("| | p50 ms | p90 ms | mean ms |")
    print("|---|---:|---:|---:|")
    for mode, values in timings.items():
        values.sort()
        p90 = values[int(len(values) * 0.9)]
        print(
            f"| {mode} | {statistics.median(values):.1f} | {p90:.1f} "
            f"| {statistics.mean(values):.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
