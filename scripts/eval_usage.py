#!/usr/bin/env python3
"""Used or ignored, checked on transcripts the real Claude Code writes.

The pinned Claude Code CLI (scripts/e2e-install) runs sessions against the loopback stand-in
for the model API (tests/e2e/support.py), with memrecall's hook installed over the small
end-to-end stores. In each session the scripted model does one thing with the memory the
hook injected — reads its file, runs `bd show` on its id, hands it to a subagent, quotes it,
names it, reads an unrelated file, answers without it, echoes only the prompt's words — and
`memrecall usage --json` must give the verdict that act deserves.

    .venv/bin/python scripts/eval_usage.py [--only NAME,NAME] [--json] [--keep DIR]

Prints one row per injected memory (expected, got, evidence) and how many verdicts match.
Exit 0 when every verdict matches, 1 otherwise, 2 when Claude Code is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.support import (
    BEADS_FACT,
    PAYMENT_FACT,
    WEBHOOK_FACT,
    FakeAnthropic,
    Interactive,
    Rule,
    Workspace,
    claude_binary,
    install_hook,
    main_transcripts,
    make_workspace,
    memrecall_binary,
    run_headless,
)

NOTE = "設計/決済タイムアウト.md"
NOTE_TITLE = "決済APIのタイムアウト方針"
WEBHOOK = "webhook-delivery.md"
ISSUE = "bd-7q2k"
PAY = "PAY-1234 のタイムアウト何秒だっけ"
WEBHOOK_PROMPT = "how many attempts do outgoing webhook deliveries get, and with what backoff?"
FLAG_PROMPT = "the flag service was unreachable last time, did we fail open?"
ALLOW = ("--allowedTools", "Read", "Bash", "Agent", "Task")


@dataclass
class Case:
    name: str
    what: str  # what the scripted model does
    prompts: list[str]
    expected: list[tuple[str, str]]  # (ref, verdict) per memory injected, in log order
    rules: list[Rule] = field(default_factory=list)
    reply: str = "了解しました。"
    after_tool: str = "確認しました。"
    interactive: bool = False
    delete_transcript: bool = False
    # What a person would call use but string matching cannot see (a paraphrase): reported
    # apart, and not part of the exit status.
    hard: bool = False


def cases(ws: Workspace) -> list[Case]:
    note = str(Path(ws.stores["MEMRECALL_OBSIDIAN"]) / NOTE)
    client = str(ws.cwd / "internal" / "payment" / "client.go")

    def read(path: str) -> dict[str, Any]:
        return {"name": "Read", "input": {"file_path": path}}

    def bash(command: str) -> dict[str, Any]:
        return {"name": "Bash", "input": {"command": command, "description": "look"}}

    return [
        Case(
            "read",
            "Read on the note's path",
            [PAY],
            [(NOTE, "used")],
            [Rule(when=PAY, text="メモを確認します。", tool_use=read(note))],
        ),
        Case(
            "cat",
            "Bash cat on the note's path",
            [PAY],
            [(NOTE, "used")],
            [Rule(when=PAY, text="メモを読みます。", tool_use=bash(f"cat '{note}'"))],
        ),
        Case(
            "bd-show",
            "Bash bd show on the issue id",
            [f"{ISSUE} はまだ開いてる？"],
            [(ISSUE, "used")],
            [Rule(when=ISSUE, text="確認します。", tool_use=bash(f"bd show {ISSUE}"))],
        ),
        Case(
            "subagent",
            "an Explore subagent reads the note",
            [PAY],
            [(NOTE, "used")],
            [
                Rule(
                    when=PAY,
                    text="調査を任せます。",
                    tool_use={
                        "name": "Agent",
                        "input": {
                            "description": "メモの確認",
                            "prompt": "SUBTASK: 設計メモを読んで報告して",
                            "subagent_type": "Explore",
                        },
                    },
                ),
                Rule(when="SUBTASK", text="読みます。", tool_use=read(note)),
            ],
        ),
        Case(
            "quote",
            "quotes the injected line",
            [PAY],
            [(NOTE, "mentioned")],
            reply=f"過去のメモによると、{PAYMENT_FACT}です。",
        ),
        Case(
            "title",
            "names the note's title",
            [PAY],
            [(NOTE, "mentioned")],
            reply=f"「{NOTE_TITLE}」に従って、いまも同じ設定のはずです。",
        ),
        Case(
            "quote-en",
            "quotes the webhook note (several keywords)",
            [WEBHOOK_PROMPT],
            [(WEBHOOK, "mentioned")],
            reply=f"Deliveries are {WEBHOOK_FACT}.",
        ),
        Case(
            "bd-quote",
            "quotes the issue",
            [FLAG_PROMPT],
            [(ISSUE, "mentioned")],
            reply="Yes. The issue says an outage of the flag service blocks every deploy, "
            f"so we {BEADS_FACT}.",
        ),
        Case(
            "plain",
            "answers without the memory",
            [PAY],
            [(NOTE, "ignored")],
            reply="了解しました。",
        ),
        Case(
            "other-file",
            "reads an unrelated project file",
            [PAY],
            [(NOTE, "ignored")],
            [Rule(when=PAY, text="コードを見ます。", tool_use=read(client))],
            after_tool="client.go では 10 秒です。",
        ),
        Case(
            "echo",
            "repeats only the prompt's own words",
            [PAY],
            [(NOTE, "ignored")],
            reply="PAY-1234 のタイムアウトは確認中です。",
        ),
        Case(
            "later-turn",
            "reads the note one prompt later (interactive)",
            [PAY, "ほかに気をつけることは？"],
            [(NOTE, "ignored")],
            [Rule(when="気をつける", text="メモを読みます。", tool_use=read(note))],
            interactive=True,
        ),
        Case(
            "interactive-read",
            "reads the note (interactive)",
            [PAY],
            [(NOTE, "used")],
            [Rule(when=PAY, text="メモを確認します。", tool_use=read(note))],
            interactive=True,
        ),
        Case(
            "gone",
            "its transcript was deleted before the first check",
            [PAY],
            [(NOTE, "unknown")],
            delete_transcript=True,
        ),
        Case(
            "paraphrase",
            "restates the note in other words",
            [PAY],
            [(NOTE, "mentioned")],
            reply="前回決めたとおり、PSP の待ち時間は七秒で、再試行は一度だけです。",
            hard=True,
        ),
        Case(
            "prompt-words",
            "confirms the issue in the prompt's own words",
            [FLAG_PROMPT],
            [(ISSUE, "mentioned")],
            reply=f"Yes: we decided to {BEADS_FACT}.",
            hard=True,
        ),
    ]


def memrecall(ws: Workspace, *args: str) -> Any:
    env = {**os.environ, **ws.memrecall_env(), "HOME": str(ws.home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("MEMRECALL_CLAUDE_PROJECTS", None)
    proc = subprocess.run(
        [str(memrecall_binary()), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"memrecall {' '.join(args)} failed: {proc.stderr}")
    return json.loads(proc.stdout)


def run_case(claude: Path, root: Path, name: str) -> list[dict[str, Any]]:
    ws = make_workspace(root / name)
    case = next(c for c in cases(ws) if c.name == name)  # its paths are this workspace's
    client = ws.cwd / "internal" / "payment" / "client.go"
    client.parent.mkdir(parents=True, exist_ok=True)
    client.write_text("package payment\n\nconst Timeout = 10 // seconds\n", encoding="utf-8")
    ws.hook_setup = install_hook(ws.home, ws.memrecall_env())
    ws.build_index()
    started = time.monotonic()
    with FakeAnthropic(rules=case.rules, reply=case.reply, after_tool=case.after_tool) as fake:
        if case.interactive:
            with Interactive(claude, ws, fake.url) as session:
                for prompt in case.prompts:
                    session.prompt(prompt)
                session.exit()
        else:
            for prompt in case.prompts:
                proc = run_headless(claude, ws, fake.url, prompt, *ALLOW)
                if proc.returncode != 0:
                    raise RuntimeError(f"claude -p failed in {case.name}: {proc.stderr[-500:]}")
    if case.delete_transcript:
        for path in main_transcripts(ws.home):
            path.unlink()
    rows = memrecall(ws, "usage", "--json", "--limit", "100")
    rows.reverse()  # oldest first, as the log
    got = [(r["ref"], r["verdict"], "; ".join(r["evidence"])) for r in rows]
    out = []
    for n, (ref, verdict) in enumerate(case.expected):
        match = got[n] if n < len(got) else (ref, "(not injected)", "")
        out.append(
            {
                "case": case.name,
                "what": case.what,
                "ref": ref,
                "expected": verdict,
                "got": match[1],
                "evidence": match[2],
                "ok": match[:2] == (ref, verdict),
                "hard": case.hard,
                "seconds": round(time.monotonic() - started, 1),
            }
        )
    for extra in got[len(case.expected) :]:
        out.append(
            {
                "case": case.name,
                "what": case.what,
                "ref": extra[0],
                "expected": "(not expected)",
                "got": extra[1],
                "evidence": extra[2],
                "ok": False,
                "hard": case.hard,
                "seconds": 0,
            }
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", help="keep the workspaces in this folder")
    args = parser.parse_args()
    claude, reason = claude_binary()
    if claude is None:
        print(f"skipped: {reason}", file=sys.stderr)
        return 2
    if shutil.which("tmux") is None:
        print("note: tmux is not installed; the interactive cases are skipped", file=sys.stderr)
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="eval-usage-"))
    root.mkdir(parents=True, exist_ok=True)
    wanted = set(args.only.split(",")) if args.only else None
    results: list[dict[str, Any]] = []
    try:
        for case in cases(make_workspace(root / "_names")):
            if wanted and case.name not in wanted:
                continue
            if case.interactive and shutil.which("tmux") is None:
                continue
            try:
                results += run_case(claude, root, case.name)
            except Exception as exc:  # one broken session is a row, not the end of the run
                results.append(
                    {
                        "case": case.name,
                        "what": case.what,
                        "ref": "",
                        "expected": "",
                        "got": "error",
                        "evidence": str(exc)[:300],
                        "ok": False,
                        "hard": case.hard,
                        "seconds": 0,
                    }
                )
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    plain = [r for r in results if not r["hard"]]
    hard = [r for r in results if r["hard"]]
    matched = sum(r["ok"] for r in plain)
    if args.json:
        print(
            json.dumps(
                {
                    "matched": matched,
                    "total": len(plain),
                    "hard_matched": sum(r["ok"] for r in hard),
                    "hard_total": len(hard),
                    "rows": results,
                },
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        print("| case | what the model did | memory | expected | got | evidence |")
        print("|---|---|---|---|---|---|")
        for r in plain + hard:
            mark = "" if r["ok"] else " ✗"
            evidence = r["evidence"].replace("|", "\\|")[:90]
            name = r["case"] + (" (hard)" if r["hard"] else "")
            print(
                f"| {name} | {r['what']} | `{r['ref']}` | {r['expected']} | {r['got']}{mark} "
                f"| {evidence} |"
            )
        print(f"\n{matched} of {len(plain)} verdicts match.")
        if hard:
            print(
                f"Hard cases (use in other words): {sum(r['ok'] for r in hard)} of {len(hard)} "
                "match."
            )
    return 0 if matched == len(plain) else 1


if __name__ == "__main__":
    sys.exit(main())
