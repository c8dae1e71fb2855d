"""Used or ignored: verdicts on injected memories from generated Claude Code transcripts.

The injections are real (the recall core runs over small stores and its log entry is
appended as the hook would); the transcripts are written in the layouts Claude Code has
used: 2.1.x (the context saved as a `hook_additional_context` attachment, subagents under
`<session>/subagents/`), 2.0.x (subagents as `agent-*.jsonl` beside the sessions, a resumed
session copied into a new file), ≤ 2.0.2x (subagent records inline), and compaction.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from _transcripts import Clock, Transcript

from memrecall.config import load_settings
from memrecall.recall import HookInput, recall
from memrecall.recall_log import append
from memrecall.times import parse_instant
from memrecall.usage import load, normalize, refresh, shared_phrase

NOW = "2026-12-02T09:00:00+09:00"
PAY_FACT = "PSP へのリクエストのタイムアウトは 7 秒、リトライは 1 回まで"
WEBHOOK_FACT = "capped at six attempts with exponential backoff"


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> "World":
    vault = tmp_path / "vault"
    (vault / "設計").mkdir(parents=True)
    (vault / "設計" / "決済タイムアウト.md").write_text(
        f"---\ntitle: 決済APIのタイムアウト方針\ntags: [決済, PAY-1234]\ndate: 2026-11-20\n---\n"
        f"PAY-1234 で決めたこと: {PAY_FACT}。\nタイムアウトした注文は「決済確認中」にする。\n",
        encoding="utf-8",
    )
    (vault / "webhook-delivery.md").write_text(
        f"---\ntitle: Webhook delivery notes\ndate: 2026-11-20\n---\n"
        f"WHK-77: outgoing webhook deliveries are retried, {WEBHOOK_FACT}.\n",
        encoding="utf-8",
    )
    for n in range(12):
        (vault / f"daily-{n}.md").write_text(
            f"# Daily {n}\nreview and meetings\n", encoding="utf-8"
        )
    beads = tmp_path / "project" / ".beads"
    beads.mkdir(parents=True)
    (beads / "issues.jsonl").write_text(
        json.dumps(
            {
                "id": "bd-7q2k",
                "title": "Feature flags: fail open when the flag service is unreachable",
                "description": "An outage of the flag service blocks every deploy.",
                "status": "open",
                "priority": 1,
                "created_at": "2026-11-25T10:00:00Z",
                "updated_at": "2026-11-25T10:00:00Z",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    projects = tmp_path / "claude" / "projects"
    projects.mkdir(parents=True)
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads / "issues.jsonl"))
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(tmp_path / "summaries"))
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "regex")
    return World(tmp_path, vault, projects, tmp_path / "project")


class World:
    def __init__(self, root: Path, vault: Path, projects: Path, cwd: Path) -> None:
        self.root, self.vault, self.projects, self.cwd = root, vault, projects, cwd
        self.clock = Clock(datetime.fromisoformat("2026-12-01T10:00:00+00:00"))

    def inject(self, session: str, prompt: str) -> tuple[str, dict[str, Any], str]:
        """Run the recall core on `prompt` and log it as the hook does; (context, entry, ts)."""
        settings = load_settings()
        result = recall(
            HookInput(session, prompt, cwd=str(self.cwd)), settings, time.monotonic() + 8
        )
        assert result.context, result.log
        self.clock.now += timedelta(minutes=3)
        ts = (self.clock.now + timedelta(seconds=1)).isoformat()
        entry = {"ts": ts, **result.log}
        append(settings.logs_dir, parse_instant(ts), entry)
        return result.context, entry, ts

    def transcript(self, sid: str, version: str = "2.1.332") -> Transcript:
        return Transcript(self.projects, self.cwd, sid, self.clock, version)

    def verdicts(self) -> list[tuple[str, str, str]]:
        """(ref, verdict, evidence) per injected memory, in log order."""
        refresh(load_settings())
        rows = sorted(
            load(load_settings()).values(),
            key=lambda r: (r.entry.split(":")[0], int(r.entry.split(":")[1])),
        )
        return [(r.ref, r.verdict, " | ".join(r.evidence)) for r in rows]


SID = "5c0375b4-0000-4000-8000-000000000001"
PAY_PROMPT = "PAY-1234 のタイムアウト何秒だっけ"
NOTE = "設計/決済タイムアウト.md"
FLAG_PROMPT = "last time the flag service was unreachable, did we decide to fail open?"


def test_used_by_reading_the_note(world: World) -> None:
    context, entry, _ = world.inject(SID, PAY_PROMPT)
    assert [i["ref"] for i in entry["injected"]] == [NOTE]
    t = world.transcript(SID).prompt(PAY_PROMPT, context)
    t.tool("Read", {"file_path": str(world.vault / NOTE)}).say("7 秒です。").end_turn().write()
    ((ref, verdict, evidence),) = world.verdicts()
    assert (ref, verdict) == (NOTE, "used")
    assert evidence.startswith("Read ") and "決済タイムアウト.md" in evidence


def test_used_by_bd_show_on_the_injected_issue(world: World) -> None:
    prompt = FLAG_PROMPT
    context, entry, _ = world.inject(SID, prompt)
    assert ("beads", "bd-7q2k") in [(i["store"], i["ref"]) for i in entry["injected"]]
    t = world.transcript(SID).prompt(prompt, context)
    t.tool("Bash", {"command": "bd show bd-7q2k --json"}, "{...}").say(
        "Still open."
    ).end_turn().write()
    verdicts = {ref: (v, e) for ref, v, e in world.verdicts()}
    assert verdicts["bd-7q2k"] == ("used", "Bash: bd show bd-7q2k --json")


def test_mentioned_by_title_id_or_quoted_phrase(world: World) -> None:
    prompts = [PAY_PROMPT, "webhook retries: how often do we retry WHK-77 deliveries?", FLAG_PROMPT]
    replies = [
        f"メモによると {PAY_FACT}。",  # a quoted phrase
        "See Webhook delivery notes: we retry a few times.",  # the title
        "That is bd-7q2k, still open.",  # the issue id (not in the prompt)
    ]
    for n, (prompt, reply) in enumerate(zip(prompts, replies)):
        sid = f"{SID[:-1]}{n + 2}"
        context, _, _ = world.inject(sid, prompt)
        world.transcript(sid).prompt(prompt, context).say(reply).end_turn().write()
    verdicts = world.verdicts()
    assert (NOTE, "mentioned") == verdicts[0][:2] and "quotes" in verdicts[0][2]
    assert ("webhook-delivery.md", "mentioned") == verdicts[1][:2] and "title" in verdicts[1][2]
    beads = [v for v in verdicts if v[0] == "bd-7q2k"]
    assert beads and beads[0][1] == "mentioned" and "bd-7q2k" in beads[0][2]


def test_ignored_when_the_turn_neither_reads_nor_names_it(world: World) -> None:
    context, _, _ = world.inject(SID, PAY_PROMPT)
    t = world.transcript(SID).prompt(PAY_PROMPT, context)
    # Repeating the prompt's own words (PAY-1234, タイムアウト) is not using the memory.
    t.tool("Read", {"file_path": str(world.cwd / "internal" / "payment" / "client.go")})
    t.say("PAY-1234 のタイムアウトは client.go で 10 秒です。").end_turn()
    t.prompt("ありがとう").say("どういたしまして。").end_turn().write()
    assert world.verdicts() == [(NOTE, "ignored", "")]


def test_unknown_until_the_transcript_appears_then_judged_once(world: World) -> None:
    context, _, _ = world.inject(SID, PAY_PROMPT)
    ((_, verdict, evidence),) = world.verdicts()
    assert verdict == "unknown" and "no transcript" in evidence
    t = world.transcript(SID).prompt(PAY_PROMPT, context)
    path = t.write()
    # Written, but the turn has no answer yet: still unknown.
    assert world.verdicts()[0][1:] == ("unknown", "the turn has no reply in the transcript yet")
    t.tool("Grep", {"pattern": "タイムアウト", "path": str(world.vault / NOTE)}).say(
        "ok"
    ).end_turn().write(path)
    assert world.verdicts()[0][1] == "used"
    settings = load_settings()
    again = refresh(settings)
    assert (again.files_read, again.sessions_read) == (0, 0)  # unchanged: not read again
    # Claude Code deletes old transcripts: the verdict stays what the transcript showed.
    path.unlink()
    assert world.verdicts()[0][1] == "used"


def test_compacted_session(world: World) -> None:
    t = world.transcript(SID).prompt("まず在庫の話", None).say("はい。").end_turn().compact()
    context, _, _ = world.inject(SID, PAY_PROMPT)
    t.prompt(PAY_PROMPT, context).tool("Bash", {"command": f"cat '{world.vault / NOTE}'"}).say(
        "7 秒"
    ).end_turn()
    t.write()
    assert world.verdicts()[0][:2] == (NOTE, "used")


def test_resumed_session_in_a_new_file_continuing_the_old_id(world: World) -> None:
    """2.0.x `--resume`: a new file copies the old records (same uuids) and carries on; the
    injection in the old session's first file and the one in the continuation are both found."""
    context1, _, _ = world.inject(SID, PAY_PROMPT)
    old = (
        world.transcript(SID, "2.0.13")
        .prompt(PAY_PROMPT, context1, layout="reminder")
        .say("見てみます。")
        .end_turn()
    )
    old.write()
    prompt2 = "webhook retries: how often do we retry WHK-77 deliveries?"
    context2, _, _ = world.inject(SID, prompt2)
    new = world.transcript(SID, "2.0.13")
    new.records = [dict(r) for r in old.records]
    new.parent = old.parent
    new.prompt(prompt2, context2, layout="reminder")
    new.tool("Read", {"file_path": str(world.vault / "webhook-delivery.md")}).say(
        "Six attempts."
    ).end_turn()
    new.write(new.project_dir() / "9d1e0000-0000-4000-8000-00000000beef.jsonl")
    # The copy of the first turn in the new file is not a second injection, nor the second's.
    assert [v[:2] for v in world.verdicts()] == [(NOTE, "ignored"), ("webhook-delivery.md", "used")]


def test_resumed_session_reading_the_note_by_absolute_path(world: World) -> None:
    context, _, _ = world.inject(SID, PAY_PROMPT)
    first = world.transcript(SID, "2.0.13").prompt("在庫の話", None).say("はい").end_turn()
    first.write()
    resumed = world.transcript(SID, "2.0.13")
    resumed.records = [dict(r) for r in first.records]
    resumed.parent = first.parent
    resumed.prompt(PAY_PROMPT, context, layout="reminder").tool(
        "Read", {"file_path": str(world.vault / NOTE)}
    )
    resumed.say("7 秒").end_turn().write(
        resumed.project_dir() / "0a0a0000-0000-4000-8000-00000000cafe.jsonl"
    )
    assert world.verdicts()[0][:2] == (NOTE, "used")


@pytest.mark.parametrize("layout", ["subagents-folder", "beside", "inline"])
def test_a_subagent_reading_the_note_counts_for_its_session(world: World, layout: str) -> None:
    context, _, _ = world.inject(SID, PAY_PROMPT)
    main = world.transcript(SID).prompt(PAY_PROMPT, context)
    main.tool(
        "Agent", {"subagent_type": "Explore", "description": "調査", "prompt": "決済の設定を調べて"}
    )
    agent_id = "a39412c3e01144fc4"
    sub = main if layout == "inline" else world.transcript(SID)
    sub.agent_prompt("決済の設定を調べて", agent_id)
    sub.tool("Read", {"file_path": str(world.vault / NOTE)}, sidechain=True, agent=agent_id)
    sub.say("設定は 7 秒でした。", sidechain=True, agent=agent_id)
    main.say("調べました。").end_turn()
    path = main.write()
    if layout == "subagents-folder":
        sub.write(path.parent / SID / "subagents" / f"agent-{agent_id}.jsonl")
        (path.parent / SID / "subagents" / f"agent-{agent_id}.meta.json").write_text(
            "{}", encoding="utf-8"
        )
    elif layout == "beside":
        sub.write(path.parent / f"agent-{agent_id}.jsonl")
    ((ref, verdict, evidence),) = world.verdicts()
    assert (ref, verdict) == (NOTE, "used")
    assert "subagent" in evidence and "Read" in evidence


def test_a_subagent_of_another_turn_does_not_count(world: World) -> None:
    context, _, _ = world.inject(SID, PAY_PROMPT)
    main = world.transcript(SID).prompt(PAY_PROMPT, context).say("わかりません。").end_turn()
    main.prompt("別件: README を直して").tool("Agent", {"prompt": "README"})
    sub = world.transcript(SID)
    sub.agent_prompt("README", "a1")
    sub.tool("Read", {"file_path": str(world.vault / NOTE)}, sidechain=True, agent="a1")
    main.say("直しました").end_turn()
    path = main.write()
    sub.write(path.parent / SID / "subagents" / "agent-a1.jsonl")
    assert world.verdicts()[0][:2] == (NOTE, "ignored")


def test_compaction_agent_and_model_requests_are_not_evidence(world: World) -> None:
    """The compaction agent's file and the `api-request` records hold the injected text
    verbatim; neither is Claude using the memory."""
    context, _, _ = world.inject(SID, PAY_PROMPT)
    main = world.transcript(SID).prompt(PAY_PROMPT, context).say("確認します。").end_turn()
    path = main.write()
    acompact = world.transcript(SID)
    acompact.agent_prompt(f"Summarize: {context}", "acompact-1")
    acompact.say(f"Summary: {PAY_FACT}", sidechain=True, agent="acompact-1")
    acompact.write(path.parent / SID / "subagents" / "agent-acompact-1.jsonl")
    assert world.verdicts()[0][:2] == (NOTE, "ignored")


def test_turn_found_by_the_clock_when_no_context_was_saved(world: World) -> None:
    _, _, ts = world.inject(SID, PAY_PROMPT)
    t = world.transcript(SID)
    world.clock.now = parse_instant(ts) - timedelta(
        seconds=2
    )  # the prompt, just before the hook ended
    t.prompt(PAY_PROMPT, None).tool(
        "Read", {"file_path": str(world.vault / NOTE)}
    ).end_turn().write()
    ((_, verdict, evidence),) = world.verdicts()
    assert verdict == "used" and "by the log's time" in evidence


def test_claude_config_dir_is_honoured(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMRECALL_CLAUDE_PROJECTS")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    context, _, _ = world.inject(SID, PAY_PROMPT)
    world.transcript(SID).prompt(PAY_PROMPT, context).tool(
        "Read", {"file_path": str(world.vault / NOTE)}
    ).write()
    assert world.verdicts()[0][1] == "used"


def test_shared_phrase_needs_words_the_prompt_did_not_have() -> None:
    source = normalize(f"> PAY-1234 で決めたこと: {PAY_FACT}。")
    assert shared_phrase(source, normalize(f"答え: {PAY_FACT}"), "") == normalize(PAY_FACT)
    assert (
        shared_phrase(
            source, normalize("PAY-1234 で決めたこと"), normalize("PAY-1234 で決めたこと?")
        )
        == ""
    )
    assert (
        shared_phrase(normalize("the timeout is short"), normalize("the timeout is long"), "") == ""
    )


def test_real_claude_code_transcripts_from_the_corpus(
    corpus: Path, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions the real Claude Code 2.1.332 wrote: the injections are found by the contexts
    it saved (the log's time is days off), a reply that restates a memory in other words is
    `ignored`, and a memory whose file the session read (found by the log's time: that
    session never saved a context naming it) is `used`."""
    import shutil

    source = corpus / "claude-transcripts" / "cc-2.1.332" / "projects"
    projects = tmp_path / "projects"
    shutil.copytree(source, projects)
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", "/home/dev/ec-backend/internal")
    summary = {
        "store": "summaries",
        "ref": "2026/09/2026-09-14-5c0375b4.md",
        "title": "決済APIタイムアウト調査",
        "matched": ["PAY-1234"],
    }
    code = {
        "store": "obsidian",
        "ref": "payment/client.go",
        "title": "client",
        "matched": ["client.go"],
    }
    sessions = [
        ("08edd954-dd2b-4fea-b675-0618fbd580f7", NOW, summary),
        ("6f8ecdf1-dd45-46ad-ae67-87e0edea3331", NOW, summary),
        ("08edd954-dd2b-4fea-b675-0618fbd580f7", "2026-12-02T17:24:49.800+00:00", code),
    ]
    for sid, ts, item in sessions:
        append(
            isolated_home / "logs",
            parse_instant(ts),
            {"ts": ts, "session": sid, "decision": "inject", "injected": [item]},
        )
    refresh(load_settings())
    rows = sorted(load(load_settings()).values(), key=lambda r: int(r.entry.split(":")[1]))
    assert [(r.session[:8], r.verdict) for r in rows] == [
        ("08edd954", "ignored"),
        ("6f8ecdf1", "ignored"),
        ("08edd954", "used"),
    ]
    assert rows[2].evidence == [
        "Read internal/payment/client.go",
        "turn found by the log's time (no saved context matched)",
    ]
