#!/usr/bin/env python3
"""How many planted secrets survive memrecall, anywhere, and how much clean text redaction
changes by mistake.

1. Survivors. The planted transcripts (tests/fixtures/transcripts/planted-secrets*.jsonl,
   every common provider key format, private key blocks, passwords in URLs/DSNs, `.env`
   dumps in tool results, JWTs, high-entropy tokens, Japanese and English context) go
   through `memrecall summarize` with all three backends: `extractive`, `command` (a fake
   program that echoes its input back inside a valid summary) and `claude` (a fake
   `claude` that does the same in Claude Code's JSON). Then hooks run with prompts that
   carry the secrets, and `search --json` runs over a vault note holding all of them.
   A secret survives when it (or a 16-character piece of a long one) appears in what an
   LLM was sent, any file memrecall wrote (summaries, state, recall log), or any output.
2. False positives. Every line of the clean Japanese/English prose of
   ../shared/corpus/{tldr-ja-en,vue-docs-ja} goes through `redact`: the share of lines it
   changes (skipped when the corpus is absent).

Usage: .venv/bin/python scripts/secrets_report.py [--json]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
CORPUS = Path(os.environ.get("MEMRECALL_TEST_CORPUS", ROOT.parent / "shared" / "corpus"))
CLEAN_CORPORA = ("tldr-ja-en", "vue-docs-ja")

ECHO = r'''import json, os, sys
data = sys.stdin.buffer.read().decode("utf-8")
with open(os.environ["FAKE_LLM_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(data) + "\n")
ja = "触ったファイル" in data
names = (["何をしてた", "決まったこと", "触ったファイル", "添付ファイル・URL", "出てきた話題"] if ja else
         ["What we did", "Decisions", "Files touched", "Attachments and URLs", "Topics"])
echo = [("- " + line[:300]) for line in data.splitlines() if line.strip()][-60:]
summary = "\n".join(["## Echo of the input", "echo", "## " + names[0], *echo, "## " + names[1], "- (none)",
                     "## " + names[2], "- (none)", "## " + names[3], "- (none)", "## " + names[4], "[[echo]]"])
if os.environ.get("FAKE_LLM_JSON"):
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": summary}))
else:
    print(summary)
'''


def planted() -> dict[str, str]:
    secrets: dict[str, str] = {}
    for path in sorted(FIXTURES.glob("planted-secrets*.secrets.json")):
        for name, value in json.loads(path.read_text(encoding="utf-8")).items():
            secrets[f"{path.name.split('.')[0]}:{name}"] = value
    return secrets


def _needles(secret: str) -> list[str]:
    # A long secret also counts as surviving when a long piece of it does (a key cut in two).
    pieces = [secret]
    if len(secret) >= 32:
        pieces += [secret[i:i + 16] for i in range(0, len(secret) - 16, 8)]
    return pieces


def _scan(places: dict[str, str], secrets: dict[str, str]) -> list[dict[str, str]]:
    found = []
    for place, text in places.items():
        for name, secret in secrets.items():
            if any(piece in text for piece in _needles(secret)):
                found.append({"secret": name, "where": place})
    return found


def _files(root: Path) -> dict[str, str]:
    out = {}
    if root.exists():
        for path in sorted(root.rglob("*")):
            if path.is_file():
                out[f"file:{path.relative_to(root)}"] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _run(args: list[str], env: dict[str, str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "memrecall", *args], input=stdin, capture_output=True,
                          env=env, timeout=300, check=False)


def measure_secrets(work: Path) -> dict[str, Any]:
    secrets = planted()
    projects = work / "projects"
    for path in sorted(FIXTURES.glob("planted-secrets*.jsonl")):
        folder = projects / f"-home-dev-{path.stem}"
        folder.mkdir(parents=True, exist_ok=True)
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        shutil.copy(path, folder / f"{first['sessionId']}.jsonl")
    bin_dir = work / "bin"
    bin_dir.mkdir()
    echo = bin_dir / "echo_llm.py"
    echo.write_text(ECHO, encoding="utf-8")
    claude = bin_dir / "claude"
    claude.write_text(f"#!/bin/sh\nFAKE_LLM_JSON=1 exec {sys.executable} {echo} \"$@\"\n", encoding="utf-8")
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
            f'[summarize]\ncommand = "{sys.executable} {echo}"\nclaude_command = "{claude}"\n', encoding="utf-8")
        env = {**base_env, "MEMRECALL_HOME": str(home), "MEMRECALL_CLAUDE_PROJECTS": str(projects),
               "MEMRECALL_NOW": now, "FAKE_LLM_LOG": str(log)}
        done = _run(["summarize", "--backend", backend], env)
        sent = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
        summaries = list((home / "summaries").rglob("*.md"))
        runs[backend] = {"exit": done.returncode, "llm_calls": len(sent), "summaries": len(summaries)}
        places = {f"{backend}:llm-input": "\n".join(sent), f"{backend}:stdout": done.stdout.decode("utf-8", "replace"),
                  f"{backend}:stderr": done.stderr.decode("utf-8", "replace")}
        places.update({f"{backend}:{k}": v for k, v in _files(home).items()})
        survivors += _scan(places, secrets)

    # The hook and search over a vault note that holds every secret (a user's own note).
    home = work / "home-recall"
    vault = work / "vault"
    (vault / "notes").mkdir(parents=True)
    note = ["---", "title: 本番の鍵メモ PAY-7777", "---", "# 本番の鍵メモ", "PAY-7777 の鍵とパスワード一覧:"]
    for name, value in secrets.items():
        short = name.split(":")[1]
        if short.endswith("key_body"):  # a key's body lives inside its PEM block
            note += ["-----BEGIN OPENSSH PRIVATE KEY-----", value, "-----END OPENSSH PRIVATE KEY-----"]
        else:
            note.append(f"- {short}: {value}")
    note += ["-----BEGIN RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi", "-----END RSA PRIVATE KEY-----"]
    (vault / "notes" / "keys.md").write_text("\n".join(note) + "\n", encoding="utf-8")
    env = {**base_env, "MEMRECALL_HOME": str(home), "MEMRECALL_OBSIDIAN": str(vault),
           "MEMRECALL_SUMMARIES": str(work / "no-summaries"), "MEMRECALL_NOW": now}
    (home).mkdir()
    (home / "config.toml").write_text("[recall]\nlog_prompt = true\nbudget_chars = 9000\n", encoding="utf-8")
    outputs: dict[str, str] = {}
    prompts = ["PAY-7777 の鍵メモを見せて", "鍵とパスワード一覧 PAY-7777 ほか"]
    # Pasted the way people paste them: `NAME=value` (a password has no shape of its own).
    prompts += [f"{name.split(':')[1]}={value} を使って PAY-7777 に接続して" for name, value in secrets.items()]
    for i, prompt in enumerate(prompts):
        done = _run(["recall"], env, json.dumps({"session_id": f"s{i}", "prompt": prompt}).encode("utf-8"))
        outputs[f"recall:stdout:{i}"] = done.stdout.decode("utf-8", "replace")
        outputs[f"recall:stderr:{i}"] = done.stderr.decode("utf-8", "replace")
    injected = sum(1 for k, v in outputs.items() if k.startswith("recall:stdout") and v)
    entries = [json.loads(line) for f in sorted((home / "logs").glob("*.jsonl")) for line in f.read_text("utf-8").splitlines()]
    errors = [e.get("error") for e in entries if e.get("decision") == "error"]
    for query in ("PAY-7777", "鍵とパスワード一覧", "openai anthropic github slack"):
        for fmt in (["--json"], []):
            done = _run(["search", query, "--limit", "5", *fmt], {**env, "COLUMNS": "400"})
            outputs[f"search:{query}:{fmt}"] = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    found = sum(1 for k, v in outputs.items() if k.startswith("search:") and "keys.md" in v)
    outputs.update({f"recall:{k}": v for k, v in _files(home).items() if not k.endswith("config.toml")})
    survivors += _scan(outputs, secrets)
    runs["recall"] = {"prompts": len(prompts), "injected": injected, "log_lines": len(entries), "errors": len(errors),
                      "searches_finding_the_note": found}
    return {"secrets": len(secrets), "survivors": survivors, "surviving": len({s["secret"] for s in survivors}),
            "runs": runs}


def _clean_lines(corpus: Path) -> list[str]:
    lines = []
    for name in CLEAN_CORPORA:
        folder = corpus / name
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.md")):
            lines += [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return lines


def false_positive_rate(corpus: Path = CORPUS, every: int = 1) -> dict[str, Any] | None:
    """Share of clean lines that redaction changes; `every` > 1 samples every n-th line."""
    sys.path.insert(0, str(ROOT))
    from memrecall.redact import redact

    lines = _clean_lines(corpus)[::every]
    if not lines:
        return None
    changed = []
    # Whole files at once are what summarize sees; line by line tells which line changed.
    for line in lines:
        out, count = redact(line)
        if count:
            changed.append({"line": line[:160], "redacted": out[:160]})
    return {"lines": len(lines), "changed": len(changed), "rate": len(changed) / len(lines),
            "examples": changed[:15]}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memrecall-secrets-") as tmp:
        report = measure_secrets(Path(tmp))
    fp = false_positive_rate()
    if "--json" in sys.argv:
        print(json.dumps({"secrets": report, "false_positives": fp}, ensure_ascii=False, indent=1))
        return 0
    print(f"planted secrets: {report['secrets']}; surviving anywhere: {report['surviving']} "
          f"({len(report['survivors'])} sightings)")
    for backend, run in report["runs"].items():
        print(f"  {backend}: {run}")
    for item in report["survivors"][:40]:
        print(f"  SURVIVES {item['secret']} in {item['where']}")
    if fp is None:
        print(f"false positives: corpus not found at {CORPUS}; skipped")
    else:
        print(f"false positives on clean text ({', '.join(CLEAN_CORPORA)}): {fp['changed']} of {fp['lines']} "
              f"lines changed = {fp['rate']:.3%}")
        for example in fp["examples"][:10]:
            print(f"  {example['line'][:100]!r}\n    → {example['redacted'][:100]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
