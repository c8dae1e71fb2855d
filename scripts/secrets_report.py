#!/usr/bin/env python3
"""How many planted secrets survive memrecall, anywhere, and how much clean text redaction
changes by mistake.

1. Survivors. The planted transcripts (tests/fixtures/transcripts/planted-secrets*.jsonl,
   every common provider key format, private key blocks, passwords in URLs/DSNs, `.env`
   dumps in tool results, JWTs, high-entropy tokens, Japanese and English context) and the
   classes of scripts/secret_classes.py (cloud keys with `/` `+`, URL/DSN passwords of any
   alphabet, shell flags and env assignments, credential files, webhook URLs, Japanese and
   English prose, file names and ids, zero-width variants) written into sessions (prompts,
   Bash commands and their output, file paths, cwd, branch, ai-title) go through
   `memrecall summarize` with all three backends: `extractive`, `command` (a fake program
   that echoes its input back inside a valid summary) and `claude` (a fake `claude` that
   does the same in Claude Code's JSON). A `<private>` session and an opted-out one (both
   typed with a Japanese IME's full-width characters) plant words that must not appear
   either, their ai-titles included. Then hooks run with prompts that carry the secrets
   (and an opted-out and a private prompt), and `search` runs over a vault note holding
   all of them, a note named after a key and a beads issue whose id holds one.
   A secret survives when it (or a 16-character piece of a long one) appears, after
   removing invisible characters and NFKC, in what an LLM was sent, any file memrecall
   wrote (summaries, state, ledger, recall log), or any output.
2. False positives. Every line of the clean text of ../shared/corpus/{tldr-ja-en,
   vue-docs-ja} and the two vaults goes through `redact`: the share of lines it changes
   (skipped when the corpus is absent).
3. Cost on the hook's clock: `redact_fast` on a typical 2 KB and 10 KB prompt.

Usage: .venv/bin/python scripts/secrets_report.py [--json]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
import warnings
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
CORPUS = Path(os.environ.get("MEMRECALL_TEST_CORPUS", ROOT.parent / "shared" / "corpus"))
CLEAN_CORPORA = ("tldr-ja-en", "vue-docs-ja", "obsidian-ja-ikorihn", "obsidian-en-tasks-demo")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from secret_classes import cases as class_cases  # noqa: E402

# Words planted where privacy switches must keep them out (classes `private`, `opt-out`).
PRIVATE_WORDS = {
    "private:prompt": "PrivWord-Zq81",
    "private:ai-title": "PrivTitle-Zq82",
    "opt-out:prompt": "OptWord-Zq83",
    "opt-out:ai-title": "OptTitle-Zq84",
    "private:hook": "PrivWord-Hook2",
    "opt-out:hook": "OptWord-Hook1",
}
# Secrets that name things: a session's cwd and branch, a vault file, a beads id.
NAME_SECRETS = {
    "name:cwd": "ghp_CwdFolder7Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9P",
    "name:branch": "AKIAQ7RX4MZP2VKDBRCH",
    "name:ai-title": "sk-ant-api03-TitleKey4Hg5Jf6Kd7Ls8Ma9Qp0Wo",
    "name:vault-file": "ghp_VaultFile3Nb4Vc5Xz6Lk7Jh8Gf9Dd0Sa1Q",
    "name:beads-id": "AKIAZ5TY8WQ3NMXCBEAD",
}
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))

ECHO = r"""import json, os, sys
data = sys.stdin.buffer.read().decode("utf-8")
with open(os.environ["FAKE_LLM_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(data) + "\n")
ja = "触ったファイル" in data
names = (
    ["何をしてた", "決まったこと", "触ったファイル", "添付ファイル・URL", "出てきた話題"]
    if ja
    else ["What we did", "Decisions", "Files touched", "Attachments and URLs", "Topics"]
)
echo = [("- " + line[:300]) for line in data.splitlines() if line.strip()][-60:]
summary = "\n".join(["## Echo of the input", "echo", "## " + names[0], *echo,
                     "## " + names[1], "- (none)", "## " + names[2], "- (none)",
                     "## " + names[3], "- (none)", "## " + names[4], "[[echo]]"])
if os.environ.get("FAKE_LLM_JSON"):
    print(json.dumps(
        {"type": "result", "subtype": "success", "is_error": False, "result": summary}
    ))
else:
    print(summary)
"""


def planted() -> dict[str, str]:
    """Every planted secret by name (`<fixture>:<name>` or `<class>:<n>`)."""
    secrets: dict[str, str] = {}
    for path in sorted(FIXTURES.glob("planted-secrets*.secrets.json")):
        for name, value in json.loads(path.read_text(encoding="utf-8")).items():
            secrets[f"{path.name.split('.')[0]}:{name}"] = value
    for index, (cls, secret, _) in enumerate(class_cases()):
        secrets[f"{cls}:{index}"] = secret
    secrets.update(PRIVATE_WORDS)
    secrets.update(NAME_SECRETS)
    return secrets


def _flat(text: str) -> str:
    """What a reader sees: invisible characters gone, full-width folded (NFKC)."""
    return unicodedata.normalize("NFKC", text.translate(_INVISIBLE))


def _needles(secret: str) -> list[str]:
    # A long secret also counts as surviving when a long piece of it does (a key cut in two).
    secret = _flat(secret)
    pieces = [secret]
    if len(secret) >= 32:
        pieces += [secret[i : i + 16] for i in range(0, len(secret) - 16, 8)]
    return pieces


def _scan(places: dict[str, str], secrets: dict[str, str]) -> list[dict[str, str]]:
    found = []
    needles = {name: _needles(secret) for name, secret in secrets.items()}
    for place, text in places.items():
        if place.split(":", 1)[-1].startswith("file:index/"):
            # The search index is a local cache of the user's own files; it names them to
            # re-read them (like the vault itself), is never shown or sent: not counted.
            continue
        flat = _flat(text)
        # JSON files escape non-ASCII; read them as a person would. Other backslashes in the
        # text (a regex's `\s`) are not escapes: Python warns of them, and they stay as read.
        if "\\u" in text:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                flat += "\n" + _flat(text.encode("utf-8").decode("unicode_escape", "ignore"))
        for name, pieces in needles.items():
            if any(piece in flat for piece in pieces):
                found.append({"secret": name, "where": place})
    return found


def direct_survivors() -> dict[str, dict[str, int]]:
    """Each class case through `redact` and `redact_fast` directly: cases and survivors."""
    sys.path.insert(0, str(ROOT))
    from memrecall.redact import redact, redact_fast

    table: dict[str, dict[str, int]] = {}
    for cls, secret, text in class_cases():
        row = table.setdefault(cls, {"cases": 0, "redact": 0, "redact_fast": 0})
        row["cases"] += 1
        for name, out in (("redact", redact(text)[0]), ("redact_fast", redact_fast(text))):
            if _scan({"x": out}, {"s": secret}):
                row[name] += 1
    return table


def _record(
    kind: str, uuid: str, minute: int, cwd: str, branch: str, sid: str, **extra: Any
) -> dict[str, Any]:
    return {
        "sessionId": sid,
        "cwd": cwd,
        "gitBranch": branch,
        "version": "2.1.332",
        "entrypoint": "cli",
        "userType": "external",
        "isSidechain": False,
        "uuid": uuid,
        "type": kind,
        "timestamp": f"2026-11-22T10:{minute:02d}:00.000Z",
        **extra,
    }


def class_sessions(projects: Path) -> None:
    """Three sessions: one carrying every class, one with a `<private>` span, one opted out
    (both switches typed full-width, as a Japanese IME does)."""
    by_class: dict[str, list[tuple[str, str]]] = {}
    for cls, secret, text in class_cases():
        by_class.setdefault(cls, []).append((secret, text))
    sid = "c1a55e50-0000-4000-8000-00000000c1a5"
    cwd = f"/home/dev/{NAME_SECRETS['name:cwd']}"
    branch = f"fix/{NAME_SECRETS['name:branch']}"
    records: list[dict[str, Any]] = []
    minute = 0

    def add(kind: str, **extra: Any) -> None:
        nonlocal minute
        minute += 1
        records.append(_record(kind, f"c{minute}", minute, cwd, branch, sid, **extra))

    def user(text: str) -> None:
        add("user", message={"role": "user", "content": text}, promptSource="typed")

    def assistant(content: list[dict[str, Any]], mid: str) -> None:
        add("assistant", message={"id": mid, "role": "assistant", "content": content})

    for cls in ("prose-ja", "prose-en", "url", "cloud-key", "zero-width"):
        user(
            "この設定を確認して / check these settings:\n" + "\n".join(t for _, t in by_class[cls])
        )
    # Commands as Claude runs them (their output echoes nothing), then credential files shown.
    shown = [(text, "done") for _, text in by_class["shell"]]
    shown += [
        (f"cat ~/.config/app/credentials-{i}", text) for i, (_, text) in enumerate(by_class["file"])
    ]
    for index, (command, output) in enumerate(shown):
        tool = f"b{index}"
        assistant(
            [{"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": command}}],
            f"mb{index}",
        )
        add(
            "user",
            message={
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool,
                        "content": output,
                        "is_error": False,
                    }
                ],
            },
        )
    for index, (_, text) in enumerate(by_class["webhook"]):
        assistant([{"type": "text", "text": f"通知を送りました: {text}"}], f"mw{index}")
    for index, (_, text) in enumerate(by_class["name"]):
        path = text.split(" ", 1)[-1] if text.startswith("Read ") else f"{cwd}/{text}"
        assistant(
            [{"type": "tool_use", "id": f"r{index}", "name": "Read", "input": {"file_path": path}}],
            f"mr{index}",
        )
    user("ありがとう、これで決まり。PAY-7777 は完了にしよう。")
    records.append(
        {
            "type": "ai-title",
            "aiTitle": f"Deploy with {NAME_SECRETS['name:ai-title']}",
            "sessionId": sid,
        }
    )
    _write(projects / "-home-dev-classes", sid, records)

    for kind, sid, switch in (
        (
            "private",
            "9d1a0000-0000-4000-8000-0000000091a0",
            f"＜ｐｒｉｖａｔｅ＞ {PRIVATE_WORDS['private:prompt']} は社外秘 ＜／private＞",
        ),
        (
            "opt-out",
            "0b700000-0000-4000-8000-00000000b700",
            f"＃ｍｅｍｒｅｃａｌｌ：ｏｆｆ {PRIVATE_WORDS['opt-out:prompt']}",
        ),
    ):
        cwd, branch, records, minute = f"/home/dev/{kind}-app", "main", [], 0
        for text in (
            f"在庫同期バッチの設計を見直したい。{switch}",
            "タイムアウトの方針を決めよう。リトライは3回にする。",
            "PAY-7777 の修正方針はこれで決まり。テストも追加して。",
            "ありがとう、完了にしよう。",
        ):
            user(text)
            assistant(
                [
                    {
                        "type": "text",
                        "text": "了解です。リトライは3回、タイムアウトは10秒で進めます。" * 3,
                    }
                ],
                f"m{minute}",
            )
        records.append(
            {
                "type": "ai-title",
                "aiTitle": f"{PRIVATE_WORDS[f'{kind}:ai-title']} の件",
                "sessionId": sid,
            }
        )
        _write(projects / f"-home-dev-{kind}-app", sid, records)


def _write(folder: Path, sid: str, records: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8"
    )


def _files(root: Path) -> dict[str, str]:
    out = {}
    if root.exists():
        for path in sorted(root.rglob("*")):
            if path.is_file():
                out[f"file:{path.relative_to(root)}"] = path.read_text(
                    encoding="utf-8", errors="replace"
                )
    return out


def _run(
    args: list[str], env: dict[str, str], stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "memrecall", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=300,
        check=False,
    )


def measure_secrets(work: Path) -> dict[str, Any]:
    secrets = planted()
    projects = work / "projects"
    for path in sorted(FIXTURES.glob("planted-secrets*.jsonl")):
        folder = projects / f"-home-dev-{path.stem}"
        folder.mkdir(parents=True, exist_ok=True)
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        shutil.copy(path, folder / f"{first['sessionId']}.jsonl")
    class_sessions(projects)
    bin_dir = work / "bin"
    bin_dir.mkdir()
    echo = bin_dir / "echo_llm.py"
    echo.write_text(ECHO, encoding="utf-8")
    claude = bin_dir / "claude"
    claude.write_text(
        f'#!/bin/sh\nFAKE_LLM_JSON=1 exec {sys.executable} {echo} "$@"\n', encoding="utf-8"
    )
    claude.chmod(0o755)
    now = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMRECALL_")}
    survivors: list[dict[str, str]] = []
    runs: dict[str, Any] = {}
    for backend in ("extractive", "command", "claude"):
        home = work / f"home-{backend}"
        home.mkdir()
        log = work / f"llm-{backend}.jsonl"
        (home / "config.toml").write_text(
            f'[summarize]\ncommand = "{sys.executable} {echo}"\nclaude_command = "{claude}"\n',
            encoding="utf-8",
        )
        env = {
            **base_env,
            "MEMRECALL_HOME": str(home),
            "MEMRECALL_CLAUDE_PROJECTS": str(projects),
            "MEMRECALL_NOW": now,
            "FAKE_LLM_LOG": str(log),
        }
        done = _run(["summarize", "--backend", backend], env)
        sent = (
            [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
            if log.exists()
            else []
        )
        summaries = list((home / "summaries").rglob("*.md"))
        record = (
            json.loads((home / "state" / "summarize-run.json").read_text(encoding="utf-8"))
            if (home / "state" / "summarize-run.json").exists()
            else {}
        )
        runs[backend] = {
            "exit": done.returncode,
            "llm_calls": len(sent),
            "summaries": len(summaries),
            "opted_out": record.get("skipped", {}).get("opted-out-marker", 0),
        }
        places = {
            f"{backend}:llm-input": "\n".join(sent),
            f"{backend}:stdout": done.stdout.decode("utf-8", "replace"),
            f"{backend}:stderr": done.stderr.decode("utf-8", "replace"),
        }
        places.update({f"{backend}:{k}": v for k, v in _files(home).items()})
        survivors += _scan(places, secrets)

    # The hook and search over a vault note that holds every secret (a user's own note), a
    # note named after a key, and a beads issue whose id holds one.
    home = work / "home-recall"
    vault = work / "vault"
    (vault / "notes").mkdir(parents=True)
    note = [
        "---",
        "title: 本番の鍵メモ PAY-7777",
        "---",
        "# 本番の鍵メモ",
        "PAY-7777 の鍵とパスワード一覧:",
    ]
    for name, value in secrets.items():
        short = name.split(":")[1]
        if short.endswith("key_body"):  # a key's body lives inside its PEM block
            note += [
                "-----BEGIN OPENSSH PRIVATE KEY-----",
                value,
                "-----END OPENSSH PRIVATE KEY-----",
            ]
        elif name.startswith("planted-secrets"):
            note.append(f"- {short}: {value}")
    note += [
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi",
        "-----END RSA PRIVATE KEY-----",
    ]
    for _, _, text in class_cases():
        note += ["", text]  # as pasted: a blank line apart, so YAML and .netrc blocks stay blocks
    (vault / "notes" / "keys.md").write_text("\n".join(note) + "\n", encoding="utf-8")
    (vault / "notes" / f"{NAME_SECRETS['name:vault-file']}.md").write_text(
        "# 鍵ファイル\nPAY-7777 の鍵はこのファイル名です。\n", encoding="utf-8"
    )
    beads = work / "beads" / ".beads"
    beads.mkdir(parents=True)
    (beads / "issues.jsonl").write_text(
        json.dumps(
            {
                "id": f"sec-{NAME_SECRETS['name:beads-id']}",
                "title": "PAY-7777 鍵のローテーション",
                "status": "open",
                "description": "PAY-7777 の鍵を入れ替える",
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    env = {
        **base_env,
        "MEMRECALL_HOME": str(home),
        "MEMRECALL_OBSIDIAN": str(vault),
        "MEMRECALL_BEADS": str(beads.parent),
        "MEMRECALL_SUMMARIES": str(work / "no-summaries"),
        "MEMRECALL_NOW": now,
    }
    (home).mkdir()
    # A roomy deadline: this counts survivors, not milliseconds (CI machines are busy).
    (home / "config.toml").write_text(
        "[recall]\nlog_prompt = true\nbudget_chars = 9000\ndeadline_ms = 20000\n", encoding="utf-8"
    )
    outputs: dict[str, str] = {}
    prompts = ["PAY-7777 の鍵メモを見せて", "鍵とパスワード一覧 PAY-7777 ほか"]
    # Pasted the way people paste them: `NAME=value` (a password has no shape of its own).
    prompts += [
        f"{name.split(':')[1]}={value} を使って PAY-7777 に接続して"
        for name, value in secrets.items()
        if name.startswith("planted-secrets")
    ]
    # Each class as it shows up in a prompt: prose, a pasted command, a file, a URL.
    by_class: dict[str, list[str]] = {}
    for cls, _, text in class_cases():
        by_class.setdefault(cls, []).append(text)
    prompts += [
        f"PAY-7777 の件、これで合ってる？\n" + "\n".join(texts) for texts in by_class.values()
    ]
    quiet = [f"＃ｍｅｍｒｅｃａｌｌ：ｏｆｆ PAY-7777 の {PRIVATE_WORDS['opt-out:hook']} について"]
    prompts += [
        "PAY-7777 の件 "
        f"＜ｐｒｉｖａｔｅ＞{PRIVATE_WORDS['private:hook']} は社外秘＜／ｐｒｉｖａｔｅ＞ "
        "鍵メモを見せて"
    ]
    for i, prompt in enumerate(prompts + quiet):
        done = _run(
            ["recall"], env, json.dumps({"session_id": f"s{i}", "prompt": prompt}).encode("utf-8")
        )
        outputs[f"recall:stdout:{i}"] = done.stdout.decode("utf-8", "replace")
        outputs[f"recall:stderr:{i}"] = done.stderr.decode("utf-8", "replace")
    injected = sum(1 for i in range(len(prompts)) if outputs[f"recall:stdout:{i}"])
    entries = [
        json.loads(line)
        for f in sorted((home / "logs").glob("*.jsonl"))
        for line in f.read_text("utf-8").splitlines()
    ]
    errors = [e.get("error") for e in entries if e.get("decision") == "error"]
    opted_out = sum(1 for e in entries if e.get("decision") == "opted-out")
    for query in (
        "PAY-7777",
        "鍵とパスワード一覧",
        "openai anthropic github slack",
        "鍵ファイル ローテーション",
    ):
        for fmt in (["--json"], []):
            done = _run(["search", query, "--limit", "5", *fmt], {**env, "COLUMNS": "400"})
            outputs[f"search:{query}:{fmt}"] = done.stdout.decode(
                "utf-8", "replace"
            ) + done.stderr.decode("utf-8", "replace")
    found = sum(1 for k, v in outputs.items() if k.startswith("search:") and "keys.md" in v)
    named = sum(
        1
        for k, v in outputs.items()
        if k.startswith("search:") and "[REDACTED:github-token].md" in v
    )
    outputs.update(
        {f"recall:{k}": v for k, v in _files(home).items() if not k.endswith("config.toml")}
    )
    survivors += _scan(outputs, secrets)
    runs["recall"] = {
        "prompts": len(prompts),
        "injected": injected,
        "log_lines": len(entries),
        "errors": len(errors),
        "opted_out": opted_out,
        "searches_finding_the_note": found,
        "searches_showing_named_file": named,
    }
    classes = Counter(name.split(":")[0] for name in secrets)
    lost = Counter(name.split(":")[0] for name in {s["secret"] for s in survivors})
    return {
        "secrets": len(secrets),
        "survivors": survivors,
        "surviving": len({s["secret"] for s in survivors}),
        "runs": runs,
        "by_class": {
            cls: {"planted": n, "surviving": lost.get(cls, 0)} for cls, n in sorted(classes.items())
        },
    }


def _clean_lines(corpus: Path) -> list[str]:
    lines = []
    for name in CLEAN_CORPORA:
        folder = corpus / name
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.md")):
            lines += [
                line
                for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
                if line.strip()
            ]
    return lines


def false_positive_rate(corpus: Path = CORPUS, every: int = 1) -> dict[str, Any] | None:
    """Share of clean lines that redaction changes; `every` > 1 samples every n-th line."""
    sys.path.insert(0, str(ROOT))
    from memrecall.redact import redact, redact_fast

    lines = _clean_lines(corpus)[::every]
    if not lines:
        return None
    changed = []
    fast_changed = 0
    # Whole files at once are what summarize sees; line by line tells which line changed.
    for line in lines:
        out, count = redact(line)
        if count:
            changed.append({"line": line[:160], "redacted": out[:160]})
        fast_changed += redact_fast(line) != line
    return {
        "lines": len(lines),
        "changed": len(changed),
        "rate": len(changed) / len(lines),
        "fast_changed": fast_changed,
        "fast_rate": fast_changed / len(lines),
        "examples": changed[:15],
    }


def hook_cost() -> dict[str, float]:
    """redact_fast on a typical 2 KB and 10 KB prompt (Japanese, English, a log excerpt):
    the best of 15 runs in this process, and the first call of a fresh process (rules compiled)."""
    ja = (
        "在庫同期バッチが PAY-1234 のあとタイムアウトする件、"
        "internal/payment/client.go の Timeout を見直したい。パスワードの扱いも確認して。"
    )
    en = (
        "The sync job for PAY-1234 times out after the gateway retry; "
        "please check the token refresh in internal/payment/client.go. "
    )
    log = (
        "2026-11-26T10:00:01Z ERROR payment.client timeout after 10s retry=3 "
        "request_id=7f9c2b1e host=api.example-pay.jp\n"
    )
    sys.path.insert(0, str(ROOT))
    from memrecall.redact import redact_fast

    out: dict[str, float] = {}
    for size in (2000, 10000):
        prompt = ((ja + en + log) * (size // 200 + 1))[:size]
        runs = []
        for _ in range(15):
            started = time.perf_counter()
            redact_fast(prompt)
            runs.append(time.perf_counter() - started)
        out[f"{size // 1000}KB_ms"] = round(min(runs) * 1000, 2)
        code = (
            f"import sys,time; sys.path.insert(0, {str(ROOT)!r}); "
            "from memrecall.redact import redact_fast; "
            f"p = {prompt!r}; t = time.perf_counter(); redact_fast(p); "
            "print(time.perf_counter() - t)"
        )
        first = [
            float(
                subprocess.run(
                    [sys.executable, "-c", code], capture_output=True, text=True, check=True
                ).stdout
            )
            for _ in range(3)
        ]
        out[f"{size // 1000}KB_first_call_ms"] = round(min(first) * 1000, 1)
    return out


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memrecall-secrets-") as tmp:
        report = measure_secrets(Path(tmp))
    direct = direct_survivors()
    fp = false_positive_rate()
    cost = hook_cost()
    if "--json" in sys.argv:
        print(
            json.dumps(
                {"secrets": report, "direct": direct, "false_positives": fp, "hook_cost": cost},
                ensure_ascii=False,
                indent=1,
            )
        )
        return 0
    print(
        f"planted secrets: {report['secrets']}; surviving anywhere: {report['surviving']} "
        f"({len(report['survivors'])} sightings)"
    )
    for backend, run in report["runs"].items():
        print(f"  {backend}: {run}")
    print("by class (planted / surviving anywhere):")
    for cls, row in report["by_class"].items():
        print(f"  {cls:22} {row['planted']:4} {row['surviving']:4}")
    print("class cases through redact / redact_fast directly (cases, survivors):")
    for cls, row in direct.items():
        print(
            f"  {cls:22} {row['cases']:4}  redact {row['redact']}  redact_fast {row['redact_fast']}"
        )
    for item in report["survivors"][:40]:
        print(f"  SURVIVES {item['secret']} in {item['where']}")
    if fp is None:
        print(f"false positives: corpus not found at {CORPUS}; skipped")
    else:
        print(
            f"false positives on clean text ({', '.join(CLEAN_CORPORA)}): "
            f"{fp['changed']} of {fp['lines']} lines changed = {fp['rate']:.3%} "
            f"(redact_fast: {fp['fast_changed']} = {fp['fast_rate']:.3%})"
        )
        for example in fp["examples"][:10]:
            print(f"  {example['line'][:100]!r}\n    → {example['redacted'][:100]!r}")
    print(f"redact_fast cost: {cost}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
