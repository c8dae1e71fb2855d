#!/usr/bin/env python3
"""How long `memrecall team sync` takes on a big team repository.

    .venv/bin/python scripts/bench_team_sync.py [--files 100000] [--people 12] [--own 1000]

Builds, in a temporary folder, a bare team repository whose main holds `--files` notes spread
over `--people` teammates' folders (written with git fast-import, so building is quick), and
one more person with `--own` summaries of their own in their MEMRECALL_HOME. Then times, in
this process (no interpreter start-up): `team init` (the clone), the first sync (every own
file read, redacted, checked and committed, the branch pushed), a second sync with nothing
changed (what a Stop hook pays after most answers), a sync after one new summary and one
after a teammate's note reached main (the clone fast-forwarded). `--recall RUNS` then builds
the search index over the teammates' folders and times the hook. No
network: the remote is a local path; no gh or glab is asked (`pr = "none"`).
Prints a markdown table; paste it into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = (
    "決済 タイムアウト 在庫 同期 バッチ 注文 配送 認証 キャッシュ 設定 deploy retry queue "
    "worker "
    "schema migration index review release frontend backend api cluster kafka redis postgres"
).split()


def note(rng: random.Random, title: str, day: str, sid: str) -> bytes:
    body = " ".join(rng.choice(WORDS) for _ in range(60))
    return (
        f"---\ntitle: {title}\ndate: {day}T10:00:00+09:00\nsession_id: {sid}-0000\n---\n"
        f"## {title}\n{body}\n## 決まったこと\n- TICKET-{rng.randrange(100000)}\n"
    ).encode("utf-8")


def build_remote(where: Path, files: int, people: int, rng: random.Random) -> Path:
    bare = where / "team.git"
    subprocess.run(
        ["git", "init", "--quiet", "--bare", "--initial-branch=main", str(bare)], check=True
    )
    stream = bytearray()
    paths: list[str] = []
    for n in range(files):
        person = f"person{n % people:02d}"
        day = f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}"
        sid = f"{n:08x}"
        stream += b"blob\nmark :%d\n" % (n + 1)
        data = note(rng, f"note {n}", day, sid)
        stream += b"data %d\n" % len(data) + data + b"\n"
        paths.append(f"{person}/summaries/{day[:4]}/{day[5:7]}/{day}-{sid}.md")
    message = b"a team's memories"
    stream += (
        b"commit refs/heads/main\ncommitter Bench <bench@example.com> 1796000000 +0000\n"
        b"data %d\n" % len(message) + message + b"\n"
    )
    for n, path in enumerate(paths):
        stream += b"M 100644 :%d %s\n" % (n + 1, path.encode("utf-8"))
    stream += b"\ndone\n"
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"], input=bytes(stream), cwd=bare, check=True
    )
    return bare


def add_to_main(bare: Path, rng: random.Random) -> None:
    """One more teammate's note on main, as a merged pull request would bring."""
    data = note(rng, "merged", "2026-12-03", "0badcafe")
    message = b"merge a teammate's branch"
    stream = (
        b"commit refs/heads/main\ncommitter Bench <bench@example.com> 1796000100 +0000\n"
        + b"data %d\n" % len(message) + message + b"\nfrom refs/heads/main^0\n"
        + b"M 100644 inline person01/summaries/2026/12/2026-12-03-0badcafe.md\n"
        + b"data %d\n" % len(data) + data + b"\n\ndone\n"
    )
    subprocess.run(["git", "fast-import", "--quiet", "--done"], input=stream, cwd=bare, check=True)


def write_own(home: Path, count: int, rng: random.Random, first: int = 0) -> None:
    for n in range(first, first + count):
        day = f"2026-{11 + n % 2:02d}-{1 + n % 28:02d}"
        sid = f"{0xa0000000 + n:08x}"
        path = home / "summaries" / day[:4] / day[5:7] / f"{day}-{sid}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(note(rng, f"own {n}", day, sid))


def timed(label: str, func: Callable[[], Any], rows: list[tuple[str, float, str]]) -> Any:
    started = time.perf_counter()
    result = func()
    rows.append((label, time.perf_counter() - started, getattr(result, "line", lambda: "")()))
    return result


def time_recall(where: Path, runs: int, rows: list[tuple[str, float, str]]) -> None:
    """The hook over the team's folders with the index: a build, then `runs` prompts."""
    import json
    import statistics

    env = {**os.environ, "MEMRECALL_INDEX": "manual"}
    memrecall = [sys.executable, "-m", "memrecall"]
    started = time.perf_counter()
    subprocess.run([*memrecall, "index", "build"], env=env, check=True,
                   capture_output=True, cwd=where)
    rows.append(("index build over the team's folders", time.perf_counter() - started, ""))
    prompt = "TICKET-4242 の決済タイムアウトどうなった？"
    hook = json.dumps({"session_id": "bench", "prompt": prompt})
    took = []
    for n in range(runs):
        started = time.perf_counter()
        subprocess.run([*memrecall, "recall"], input=hook.replace("bench", f"bench{n}"),
                       text=True, env=env, check=True, capture_output=True, cwd=where)
        took.append(time.perf_counter() - started)
    logs = sorted((where / "home" / "logs").glob("recall-*.jsonl"))
    last = json.loads(logs[-1].read_text(encoding="utf-8").splitlines()[-1]) if logs else {}
    outcome = f"engine {last.get('engine')}, {last.get('decision')}"
    rows.append((f"hook, median of {runs} runs (whole process)", statistics.median(took), outcome))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100_000, help="notes in the team repository")
    parser.add_argument("--people", type=int, default=12, help="teammates they belong to")
    parser.add_argument("--own", type=int, default=1000, help="summaries of the person who syncs")
    parser.add_argument(
        "--recall", type=int, default=0, metavar="RUNS",
        help="also build the index over the team's folders and time RUNS hook runs",
    )
    args = parser.parse_args()
    if shutil.which("git") is None:
        sys.exit("git is not installed")
    rng = random.Random(20261204)
    with tempfile.TemporaryDirectory(prefix="memrecall-bench-team-") as tmp:
        where = Path(tmp)
        os.environ.update({
            "HOME": str(where), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(where / "gitconfig"),
            "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
            "MEMRECALL_HOME": str(where / "home"), "MEMRECALL_INDEX": "off",
            "MEMRECALL_NOW": "2026-12-04T12:00:00+00:00", "MEMRECALL_TEAM_PR": "none",
        })
        from memrecall import team
        from memrecall.config import load_settings

        rows: list[tuple[str, float, str]] = []
        started = time.perf_counter()
        bare = build_remote(where, args.files, args.people, rng)
        build = time.perf_counter() - started
        write_own(where / "home", args.own, rng)
        timed("team init (clone)", lambda: team.init(load_settings(), str(bare), "bench"), rows)
        timed("first sync", lambda: team.sync(load_settings()), rows)
        timed("second sync, nothing changed", lambda: team.sync(load_settings()), rows)
        write_own(where / "home", 1, rng, first=args.own)
        timed("sync after one new summary", lambda: team.sync(load_settings()), rows)
        timed("sync, nothing changed again", lambda: team.sync(load_settings()), rows)
        add_to_main(bare, rng)
        timed("sync after a teammate's note reached main", lambda: team.sync(load_settings()), rows)
        if args.recall:
            time_recall(where, args.recall, rows)

    print(f"team repository: {args.files} notes over {args.people} people "
          f"(built in {build:.1f} s); own summaries: {args.own}")
    print()
    print("| step | seconds | outcome |")
    print("|---|---:|---|")
    for label, seconds, outcome in rows:
        print(f"| {label} | {seconds:.2f} | {outcome} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
