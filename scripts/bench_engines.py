#!/usr/bin/env python3
"""Which engine for the index: SQLite FTS5 or tantivy, measured side by side.

    .venv/bin/python scripts/bench_engines.py [--sizes 10000,100000] [--runs 15]

Both engines get the same pre-analysed documents (terms joined by spaces, as memrecall's
analyser produces them) in a `head` and a `body` field, and answer the query the hook
needs, in a fresh process each run (import + open + query, like a hook):

1. document frequency of each prompt term;
2. the best 100 documents by BM25 over head (×4) and body for all terms at once;
3. for those 100, which terms each one holds (the gate needs it per keyword).

The prompt has a rare id (0.2 % of documents), an identifier (0.5 %), a topic word (2 %),
two common words (8 %) and one word in most documents. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VOCAB = (
    "設定 確認 対応 修正 追加 削除 変更 調査 実装 検討 会議 レビュー 本番 環境 ログ 監視 通知 画面 "
    "ユーザー 管理 機能 処理 データ 取得 更新 登録 一覧 詳細 検索 表示 エラー 原因 手順 方法 結果 "
    "deploy config review test build release server client cache request response error retry"
).split()
RARE = {
    "pay-1234": 0.002,
    "sync_inventory_batch": 0.005,
    "在庫同期": 0.02,
    "タイムアウト": 0.08,
    "バッチ": 0.08,
}
TERMS = [*RARE, "設定"]


def documents(n: int):
    rng = random.Random(n)
    for i in range(n):
        words = [rng.choice(VOCAB) for _ in range(rng.randint(60, 160))]
        for word, share in RARE.items():
            if rng.random() < share:
                words.insert(rng.randrange(len(words) + 1), word)
        yield i, f"{rng.choice(VOCAB)} {rng.choice(VOCAB)} n{i}", " ".join(words)


def build_fts(path: Path, n: int) -> None:
    db = sqlite3.connect(path)
    db.execute("pragma journal_mode=wal")
    db.execute(
        "create virtual table d using fts5(head, body, "
        "tokenize=\"unicode61 tokenchars '_-./'\", detail=column)"
    )
    db.executemany("insert into d(rowid, head, body) values (?, ?, ?)", documents(n))
    db.commit()
    db.close()


def _tantivy_schema():
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True, fast=True)
    builder.add_text_field("head", stored=True, tokenizer_name="ws")
    builder.add_text_field("body", tokenizer_name="ws")
    return builder.build()


def _tantivy_register(index) -> None:
    import tantivy

    index.register_tokenizer(
        "ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
    )


def build_tantivy(path: Path, n: int) -> None:
    import tantivy

    path.mkdir()
    index = tantivy.Index(_tantivy_schema(), path=str(path))
    _tantivy_register(index)
    writer = index.writer(heap_size=64_000_000, num_threads=1)
    for i, head, body in documents(n):
        writer.add_document(tantivy.Document(id=i, head=head, body=f"{head} {body}"))
    writer.commit()
    writer.wait_merging_threads()


def query_fts(path: str) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    db.execute("create virtual table temp.v using fts5vocab(main, d, row)")
    df = {
        t: (db.execute("select doc from temp.v where term = ?", (t,)).fetchone() or [0])[0]
        for t in TERMS
    }
    match = " OR ".join(f'"{t}"' for t in TERMS if df[t])
    top = db.execute(
        "select rowid from d where d match ? order by bm25(d, 4.0, 1.0) limit 100", (match,)
    ).fetchall()
    ids = [row[0] for row in top]
    marks = ",".join("?" * len(ids))
    held = 0
    for term in TERMS:
        held += len(
            db.execute(
                f"select rowid from d where d match ? and rowid in ({marks})", [f'"{term}"', *ids]
            ).fetchall()
        )
    return held


def query_tantivy(path: str) -> int:
    import tantivy

    index = tantivy.Index.open(path)
    _tantivy_register(index)
    searcher = index.searcher()
    schema = index.schema
    occur = tantivy.Occur
    df = {t: searcher.doc_freq("body", t) for t in TERMS}
    should = []
    for term in TERMS:
        if df[term]:
            should.append(
                (
                    occur.Should,
                    tantivy.Query.boost_query(tantivy.Query.term_query(schema, "head", term), 4.0),
                )
            )
            should.append((occur.Should, tantivy.Query.term_query(schema, "body", term)))
    top = searcher.search(tantivy.Query.boolean_query(should), limit=100).hits
    ids = [searcher.doc(address)["id"][0] for _, address in top]
    only = tantivy.Query.const_score_query(tantivy.Query.term_set_query(schema, "id", ids), 0.0)
    held = 0
    for term in TERMS:
        member = tantivy.Query.boolean_query(
            [(occur.Must, tantivy.Query.term_query(schema, "body", term)), (occur.Must, only)]
        )
        held += len(searcher.search(member, limit=100).hits)
    return held


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--query", nargs=2, help=argparse.SUPPRESS)  # internal: engine path
    args = parser.parse_args()
    if args.query:
        engine, path = args.query
        print(query_fts(path) if engine == "fts5" else query_tantivy(path))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="memrecall-engines-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            paths = {"fts5": Path(tmp) / f"fts-{size}.db", "tantivy": Path(tmp) / f"tv-{size}"}
            build_s = {}
            for engine, build in (("fts5", build_fts), ("tantivy", build_tantivy)):
                started = time.perf_counter()
                build(paths[engine], size)
                build_s[engine] = time.perf_counter() - started
            size_mb = {
                "fts5": paths["fts5"].stat().st_size / 1e6,
                "tantivy": sum(f.stat().st_size for f in paths["tantivy"].iterdir()) / 1e6,
            }
            times: dict[str, list[float]] = {"python": [], "fts5": [], "tantivy": []}
            answers = {}
            argv = {
                "python": [sys.executable, "-c", "pass"],
                "fts5": [sys.executable, __file__, "--query", "fts5", str(paths["fts5"])],
                "tantivy": [sys.executable, __file__, "--query", "tantivy", str(paths["tantivy"])],
            }
            for name in argv:  # warm
                subprocess.run(argv[name], capture_output=True, check=True)
            for _ in range(args.runs):
                for name, command in argv.items():
                    started = time.perf_counter()
                    done = subprocess.run(command, capture_output=True, check=True)
                    times[name].append((time.perf_counter() - started) * 1000)
                    answers[name] = done.stdout.strip()
            for engine in ("fts5", "tantivy"):
                rows.append(
                    {
                        "docs": size,
                        "engine": engine,
                        "build_s": build_s[engine],
                        "mb": size_mb[engine],
                        "p50": statistics.median(times[engine]),
                        "max": max(times[engine]),
                        "python": statistics.median(times["python"]),
                        "held": answers[engine].decode(),
                    }
                )
                print(rows[-1], file=sys.stderr)
    print(
        "| docs | engine | build s | size MB | query process p50 ms | max ms "
        "| `python -c pass` p50 ms | term hits among top 100 |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['docs']:,} | {r['engine']} | {r['build_s']:.1f} | {r['mb']:.1f} | "
            f"{r['p50']:.0f} | {r['max']:.0f} | {r['python']:.0f} | {r['held']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
