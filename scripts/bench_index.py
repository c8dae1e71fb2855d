#!/usr/bin/env python3
"""The indexed engine, side by side with its floor and a bare ripgrep, in one run.

    .venv/bin/python scripts/bench_index.py [--sizes 1000,10000,100000] [--runs 20]
        [--backend sudachi]

For each size: generated stores (scripts/bench_hook.py's generator: 60 % notes, 30 % beads
issues, 10 % summaries, mixed Japanese/English, rare ids and common words), then

- a full `memrecall index build` (time, documents/s, index size, peak RSS);
- for three prompts (a rare id, a typical Japanese request, chit-chat), interleaved run by
  run: the floor (a process that starts Python, loads the same analyser and tokenizes the
  prompt, nothing else), the whole hook (`memrecall recall`) and a bare `rg -F -i -l` with
  the hook's keywords over the same files; p50/p95 and deadline misses from the recall log;
- an incremental refresh after 10 edited notes, as a share of the full build;
- a cold first prompt after the page cache is dropped (needs root; "n/a" otherwise).

Prints markdown tables for BENCHMARKS.md. Warm cache: each command runs once untimed first.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_hook import (  # noqa: E402
    PROMPT,
    _pct,
    _run_rss,
    bare_rg_argv,
    generate,
    hook_keywords,
)

PROMPTS = {
    "rare id": "PAY-1234 の件、結局どうなったんだっけ？",
    "typical": PROMPT,
    "chit-chat": "今日は寒いですね。週末は何をしようかな",
}
FLOOR = (
    "import sys\n"
    "from memrecall.config import load_settings\n"
    "from memrecall.tokenize import tokenize_text\n"
    "settings = load_settings()\n"
    "tokenize_text(sys.stdin.read(), settings.tokenizer, settings)\n"
)


def _drop_caches() -> bool:
    try:
        subprocess.run(["sync"], check=False)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def _log_entries(home: Path) -> list[dict]:
    entries = []
    for path in sorted((home / "logs").glob("recall-*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                continue
    return entries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--backend", default="sudachi")
    parser.add_argument(
        "--keep", type=Path, help="generate/keep stores under this folder (reused if present)"
    )
    args = parser.parse_args()

    from memrecall.grep import find_rg

    rg = find_rg()
    python = sys.executable
    # A benchmark of a hook that compiles its own modules on every start would measure the
    # compiler: write the bytecode once, as an installed package has it.
    compileall.compile_dir(str(HERE.parent / "memrecall"), quiet=1)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMRECALL_")}
    base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    builds, latency, refreshes, colds = [], [], [], []
    for size in (int(s) for s in args.sizes.split(",")):
        tmp_owner = None
        if args.keep:
            root = args.keep / f"stores-{size}"
        else:
            tmp_owner = tempfile.TemporaryDirectory(prefix=f"memrecall-bench-index-{size}-")
            root = Path(tmp_owner.name)
        if not (root / "stores").is_dir():
            paths = generate(root / "stores", size)
        else:
            paths = {
                "vault": root / "stores" / "vault",
                "beads": root / "stores" / "proj",
                "summaries": root / "stores" / "summaries",
            }
        home = root / f"home-{args.backend}"
        env = {
            **base_env,
            "MEMRECALL_HOME": str(home),
            "MEMRECALL_OBSIDIAN": str(paths["vault"]),
            "MEMRECALL_BEADS": str(paths["beads"]),
            "MEMRECALL_SUMMARIES": str(paths["summaries"]),
            "MEMRECALL_TOKENIZER": args.backend,
            "MEMRECALL_NOW": "2026-12-02T09:00:00+09:00",
            # No background refresh during the timed runs: each run measures one prompt.
            "MEMRECALL_INDEX": "manual",
        }
        started = time.perf_counter()
        proc = subprocess.Popen(
            [python, "-m", "memrecall", "index", "rebuild", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        out = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)
        build_s = time.perf_counter() - started
        report = json.loads(out or b"{}")
        index_path = Path(report.get("path", ""))
        index_bytes = (
            sum(f.stat().st_size for f in index_path.iterdir() if f.is_file())
            if index_path.is_dir()
            else 0
        )
        builds.append(
            {
                "docs": report.get("documents", 0),
                "size": size,
                "seconds": build_s,
                "docs_per_s": report.get("documents", 0) / build_s if build_s else 0,
                "mb": index_bytes / 1e6,
                "rss": usage.ru_maxrss / 1024,
            }
        )
        print(json.dumps(builds[-1]), file=sys.stderr)

        for label, prompt in PROMPTS.items():
            keywords = hook_keywords(python, prompt, env)
            rg_argv = bare_rg_argv(rg, keywords, paths) if keywords else None
            floor_argv = [python, "-c", FLOOR]
            hook_argv = [python, "-m", "memrecall", "recall"]
            # Warm: page cache, bytecode, dictionary.
            if rg_argv:
                _run_rss(rg_argv, b"", env)
            _run_rss(floor_argv, prompt.encode(), env)
            before = len(_log_entries(home))
            _run_rss(hook_argv, json.dumps({"session_id": "warm", "prompt": prompt}).encode(), env)
            times: dict[str, list[float]] = {"floor": [], "hook": [], "rg": []}
            rss: list[float] = []
            for n in range(args.runs):
                # A session of its own per run (and per benchmark run: --keep reuses the home).
                stdin = json.dumps(
                    {"session_id": f"bench-{label}-{n}-{os.getpid()}", "prompt": prompt}
                ).encode()
                ms, _, _ = _run_rss(floor_argv, prompt.encode(), env)
                times["floor"].append(ms)
                ms, peak, _ = _run_rss(hook_argv, stdin, env)
                times["hook"].append(ms)
                rss.append(peak)
                if rg_argv:
                    ms, _, _ = _run_rss(rg_argv, b"", env)
                    times["rg"].append(ms)
            entries = _log_entries(home)[before + 1 :]
            decisions: dict[str, int] = {}
            engines: dict[str, int] = {}
            for entry in entries:
                decisions[entry.get("decision", "?")] = (
                    decisions.get(entry.get("decision", "?"), 0) + 1
                )
                engines[entry.get("engine", "-")] = engines.get(entry.get("engine", "-"), 0) + 1
            row = {
                "docs": size,
                "prompt": label,
                "runs": args.runs,
                "floor_p50": statistics.median(times["floor"]),
                "floor_p95": _pct(times["floor"], 0.95),
                "hook_p50": statistics.median(times["hook"]),
                "hook_p95": _pct(times["hook"], 0.95),
                "rg_p50": statistics.median(times["rg"]) if times["rg"] else None,
                "rss": max(rss),
                "decisions": decisions,
                "engines": engines,
                "search_ms": statistics.median(
                    [
                        e.get("phase_ms", {}).get("search", 0)
                        for e in entries
                        if e.get("phase_ms", {}).get("search")
                    ]
                    or [0]
                ),
            }
            latency.append(row)
            print(json.dumps(row), file=sys.stderr)

        # Incremental refresh after 10 edited notes.
        notes = sorted(Path(paths["vault"]).rglob("*.md"))[:: max(1, size // 20)][:10]
        for note in notes:
            with note.open("a", encoding="utf-8") as handle:
                handle.write("\n追記: 在庫同期の再実行手順を確認した\n")
        started = time.perf_counter()
        out = subprocess.run(
            [python, "-m", "memrecall", "index", "refresh", "--json"],
            capture_output=True,
            env=env,
            check=True,
        ).stdout
        refresh_s = time.perf_counter() - started
        report = json.loads(out)
        refreshes.append(
            {
                "docs": size,
                "edited": len(notes),
                "seconds": refresh_s,
                "build_seconds": build_s,
                "share": refresh_s / build_s,
                "updated": report.get("updated"),
            }
        )
        print(json.dumps(refreshes[-1]), file=sys.stderr)

        if _drop_caches():
            stdin = json.dumps({"session_id": "cold", "prompt": PROMPTS["typical"]}).encode()
            ms, _, _ = _run_rss([python, "-m", "memrecall", "recall"], stdin, env)
            last = _log_entries(home)[-1]
            colds.append(
                {
                    "docs": size,
                    "ms": ms,
                    "decision": last.get("decision"),
                    "engine": last.get("engine"),
                }
            )
        else:
            colds.append(
                {"docs": size, "ms": None, "decision": "n/a (cannot drop caches)", "engine": ""}
            )
        print(json.dumps(colds[-1]), file=sys.stderr)
        if tmp_owner is not None:
            tmp_owner.cleanup()

    print("\n### Full build\n")
    print("| documents | seconds | documents/s | index MB | peak RSS MiB |")
    print("|---:|---:|---:|---:|---:|")
    for b in builds:
        print(
            f"| {b['docs']:,} | {b['seconds']:.1f} | {b['docs_per_s']:.0f} | {b['mb']:.1f} | "
            f"{b['rss']:.0f} |"
        )
    print("\n### Hook latency (warm)\n")
    print(
        "| docs | prompt | runs | floor p50 | hook p50 | hook p95 | p50 / floor | p95 / floor p50 "
        "| bare rg p50 | hook / rg | search ms | hook RSS MiB | decisions |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in latency:
        rg_p50 = r["rg_p50"]
        print(
            f"| {r['docs']:,} | {r['prompt']} | {r['runs']} | {r['floor_p50']:.0f} | "
            f"{r['hook_p50']:.0f} | {r['hook_p95']:.0f} | "
            f"{r['hook_p50'] / r['floor_p50']:.2f}× | {r['hook_p95'] / r['floor_p50']:.2f}× | "
            f"{rg_p50:.0f} | {r['hook_p50'] / rg_p50:.2f}× | "
            if rg_p50
            else f"| {r['docs']:,} | {r['prompt']} | {r['runs']} | {r['floor_p50']:.0f} | "
            f"{r['hook_p50']:.0f} | {r['hook_p95']:.0f} | "
            f"{r['hook_p50'] / r['floor_p50']:.2f}× | {r['hook_p95'] / r['floor_p50']:.2f}× | "
            "- | - | ",
            end="",
        )
        print(
            f"{r['search_ms']:.0f} | {r['rss']:.0f} | "
            + ", ".join(f"{k} {v}" for k, v in sorted(r["decisions"].items()))
            + " |"
        )
    print("\n### Incremental refresh\n")
    print("| docs | edited files | refresh s | full build s | share |")
    print("|---:|---:|---:|---:|---:|")
    for r in refreshes:
        print(
            f"| {r['docs']:,} | {r['edited']} | {r['seconds']:.2f} | {r['build_seconds']:.1f} | "
            f"{r['share']:.1%} |"
        )
    print("\n### Cold first prompt\n")
    print("| docs | ms | decision | engine |")
    print("|---:|---:|---|---|")
    for c in colds:
        print(
            f"| {c['docs']:,} | {c['ms']:.0f} | {c['decision']} | {c['engine']} |"
            if c["ms"]
            else f"| {c['docs']:,} | - | {c['decision']} | - |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
