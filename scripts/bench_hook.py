#!/usr/bin/env python3
"""Whole-hook latency: `memrecall recall` from process start to exit, on generated stores
of 1k / 10k / 100k documents, beside a bare `rg -F -i -l` over the same files with the same
keywords, in the same run (so the ratio is meaningful on a noisy machine).

    .venv/bin/python scripts/bench_hook.py [--sizes 1000,10000,100000] [--runs 15]
        [--backends sudachi,regex]

Documents: 60 % Obsidian notes (one file each), 30 % beads issues (one issues.jsonl), 10 %
summaries (YYYY/MM/…, inside the retention window). Text is drawn from a fixed mixed
Japanese/English vocabulary with a fixed seed; each of the prompt's keywords is planted in a
fixed share of documents (RARE below), from 0.2 % for the ticket id to 8 % for topic words.
"warm" = the files are in the page cache (one untimed rg pass first) and memrecall's
document-count cache is filled (one untimed hook run first).
Prints a markdown table; paste it into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROMPT = "在庫同期バッチが PAY-1234 のあとタイムアウトする件、sync_inventory_batch を見直したい"
VOCAB = (
    "設定 確認 対応 修正 追加 削除 変更 調査 実装 検討 会議 レビュー 本番 環境 ログ 監視 通知 画面 "
    "ユーザー 管理 機能 処理 データ 取得 更新 登録 一覧 詳細 検索 表示 エラー 原因 手順 方法 結果 "
    "注文 商品 配送 請求 顧客 契約 権限 認証 キャッシュ サーバー クライアント "
    "リクエスト レスポンス "
    "deploy config review test build release server client cache request response error retry "
    "queue worker cluster node service handler router schema migration index query table column "
    "frontend backend api docs issue branch merge commit pipeline docker kubernetes terraform"
).split()
# The prompt's keywords and the share of documents that contain each: an id in a handful,
# an identifier in a few dozen, a topic word in a few per cent, generic words in many.
RARE = {
    "PAY-1234": 0.002,
    "sync_inventory_batch": 0.005,
    "在庫同期": 0.02,
    "タイムアウト": 0.08,
    "バッチ": 0.08,
}


def _text(rng: random.Random, words: int) -> str:
    out = [rng.choice(VOCAB) for _ in range(words)]
    for word, share in RARE.items():
        if rng.random() < share:
            out.insert(rng.randrange(len(out) + 1), word)
    lines, line = [], []
    for word in out:
        line.append(word)
        if len(line) >= 12:
            lines.append(" ".join(line))
            line = []
    lines.append(" ".join(line))
    return "\n".join(lines)


def generate(root: Path, total: int) -> dict[str, Path]:
    rng = random.Random(total)
    vault, beads, summaries = root / "vault", root / "proj" / ".beads", root / "summaries"
    beads.mkdir(parents=True)
    n_notes, n_issues = int(total * 0.6), int(total * 0.3)
    n_summaries = total - n_notes - n_issues
    for i in range(n_notes):
        folder = vault / f"area-{i % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i:06d}.md").write_text(
            f"---\ntags: [{rng.choice(VOCAB)}, {rng.choice(VOCAB)}]\n---\n"
            f"# {rng.choice(VOCAB)} {rng.choice(VOCAB)} {i}\n"
            + _text(rng, rng.randint(60, 160))
            + "\n",
            encoding="utf-8",
        )
    with (beads / "issues.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n_issues):
            issue = {
                "id": f"bd-{i:05x}",
                "title": f"{rng.choice(VOCAB)} {rng.choice(VOCAB)} の{rng.choice(VOCAB)}",
                "status": rng.choice(["open", "closed", "closed", "in_progress"]),
                "priority": rng.randint(0, 4),
                "description": _text(rng, rng.randint(20, 80)).replace("\n", " "),
                "created_at": "2026-10-01T00:00:00Z",
                "updated_at": "2026-11-01T00:00:00Z",
            }
            out.write(json.dumps(issue, ensure_ascii=False) + "\n")
    for i in range(n_summaries):
        day = f"2026-11-{1 + i % 28:02d}"
        path = summaries / "2026" / "11" / f"{day}-{i:08x}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: {rng.choice(VOCAB)}の{rng.choice(VOCAB)}\ndate: {day}T10:00:00+09:00\n"
            f"session_id: {i:08x}-0000-4000-8000-000000000000\nproject: shop\n"
            f"tags: [{rng.choice(VOCAB)}]\n---\n"
            f"## 何をしてた\n" + _text(rng, rng.randint(80, 200)) + "\n",
            encoding="utf-8",
        )
    return {"vault": vault, "beads": beads.parent, "summaries": summaries}


def _run_rss(argv: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, float, bytes]:
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(stdin)
    proc.stdin.close()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = (time.perf_counter() - started) * 1000
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024, out


def hook_keywords(python: str, prompt: str, env: dict[str, str], backend: str = "") -> list[str]:
    """The keywords `memrecall tokenize` finds in the prompt, as the hook would search them."""
    argv = [python, "-m", "memrecall", "tokenize", *(["-b", backend] if backend else [])]
    done = subprocess.run(argv, input=prompt.encode(), capture_output=True, env=env, check=True)
    return done.stdout.decode().split()


def bare_rg_argv(rg: str, keywords: list[str], paths: dict[str, Path]) -> list[str]:
    """A bare ripgrep over the same stores with the same keywords: the hook's yardstick."""
    patterns = [arg for k in keywords for arg in ("-e", k)]
    stores = [str(paths["vault"]), str(paths["beads"]), str(paths["summaries"])]
    return [rg, "--no-config", "-F", "-i", "-l", *patterns, *stores]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--backends", default="sudachi,regex")
    args = parser.parse_args()

    from memrecall.grep import find_rg

    rg = find_rg()
    if rg is None:
        print("Error: rg not found", file=sys.stderr)
        return 1
    python = sys.executable
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix=f"memrecall-bench-{size}-") as tmp:
            root = Path(tmp)
            t0 = time.perf_counter()
            paths = generate(root / "stores", size)
            gen_s = time.perf_counter() - t0
            runs = args.runs if size <= 10000 else max(3, args.runs // 3)
            base_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMRECALL_")}
            base_env.pop("PYTHONDONTWRITEBYTECODE", None)
            for backend in args.backends.split(","):
                env = {
                    **base_env,
                    "MEMRECALL_HOME": str(root / f"home-{backend}"),
                    "MEMRECALL_OBSIDIAN": str(paths["vault"]),
                    "MEMRECALL_BEADS": str(paths["beads"]),
                    "MEMRECALL_SUMMARIES": str(paths["summaries"]),
                    "MEMRECALL_TOKENIZER": backend,
                    "MEMRECALL_NOW": "2026-12-02T09:00:00+09:00",
                }
                keywords = hook_keywords(python, PROMPT, env, backend)
                rg_argv = bare_rg_argv(rg, keywords, paths)
                subprocess.run(rg_argv, capture_output=True, check=False)  # warm the page cache
                hook_input = json.dumps({"session_id": "warm", "prompt": PROMPT}).encode()
                _run_rss(
                    [python, "-m", "memrecall", "recall"], hook_input, env
                )  # fill the count cache
                hook_ms, hook_rss, rg_ms, rg_rss = [], [], [], []
                decisions: dict[str, int] = {}
                for n in range(runs):
                    # A new session each run: the same prompt in one session would be de-duplicated.
                    stdin = json.dumps({"session_id": f"bench-{n}", "prompt": PROMPT}).encode()
                    ms, rss, _ = _run_rss(rg_argv, b"", env)
                    rg_ms.append(ms)
                    rg_rss.append(rss)
                    ms, rss, _ = _run_rss([python, "-m", "memrecall", "recall"], stdin, env)
                    hook_ms.append(ms)
                    hook_rss.append(rss)
                log = sorted((root / f"home-{backend}" / "logs").glob("recall-*.jsonl"))
                for line in log[-1].read_text("utf-8").splitlines()[1:] if log else []:
                    decision = json.loads(line).get("decision", "?")
                    decisions[decision] = decisions.get(decision, 0) + 1
                rows.append(
                    {
                        "docs": size,
                        "backend": backend,
                        "runs": runs,
                        "keywords": len(keywords),
                        "hook_p50": statistics.median(hook_ms),
                        "hook_p95": _pct(hook_ms, 0.95),
                        "rg_p50": statistics.median(rg_ms),
                        "rg_p95": _pct(rg_ms, 0.95),
                        "ratio": statistics.median(hook_ms) / statistics.median(rg_ms),
                        "hook_rss": max(hook_rss),
                        "rg_rss": max(rg_rss),
                        "decisions": decisions,
                        "generate_s": gen_s,
                    }
                )
                print(json.dumps(rows[-1]), file=sys.stderr)
    print(
        "| docs | backend | runs | hook p50 ms | hook p95 ms | bare rg p50 ms | hook / rg "
        "| hook peak RSS MiB | rg peak RSS MiB | decisions |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(
            f"| {r['docs']:,} | {r['backend']} | {r['runs']} | {r['hook_p50']:.0f} | "
            f"{r['hook_p95']:.0f} | "
            f"{r['rg_p50']:.0f} | {r['ratio']:.2f}× | {r['hook_rss']:.0f} | {r['rg_rss']:.0f} | "
            + ", ".join(f"{k} {v}" for k, v in sorted(r["decisions"].items()))
            + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
