"""The transcript parser on every real transcript of the shared corpus (skips when absent)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from memrecall.transcripts import (
    cut_head,
    cut_tail,
    parse_lines,
    parse_session,
    strip_injections,
)

pytestmark = pytest.mark.corpus

CC = "claude-transcripts/cc-2.1.332/projects/-home-dev-ec-backend"
SPOTTER = "claude-transcripts/spotter/test/fixtures/transcripts"
VIEWER = "claude-transcripts/claude-code-viewer/mock-global-claude-dir/projects/sample-project"


def all_transcripts(corpus: Path) -> list[Path]:
    files = sorted((corpus / "claude-transcripts").rglob("*.jsonl"))
    assert files, "corpus present but holds no transcripts"
    return files


def records(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def test_every_corpus_file_parses_without_losing_lines(corpus: Path) -> None:
    for path in all_transcripts(corpus):
        session = parse_session(path)
        assert session.malformed_lines == 0, path
        assert session.records == len(records(path)), path
        # Claude Code's own bookkeeping never reaches the events a summary is built from.
        for event in session.events:
            assert "api-request" not in event.text[:40]
            assert "<system-reminder>" not in event.text
            assert "<memrecall-context>" not in event.text


def test_human_turns_found(corpus: Path) -> None:
    expected = {
        f"{CC}/08edd954-dd2b-4fea-b675-0618fbd580f7.jsonl": 3,
        f"{CC}/16bdd7c3-861a-4a73-96bd-3c63254d4fec.jsonl": 3,
        f"{CC}/af10c474-f492-4bb3-8648-340d20106de8.jsonl": 3,
        f"{CC}/01371c3b-31e6-4c30-88b6-944ceafce2c9.jsonl": 1,
        # One typed prompt; task notifications and the compaction summary are not human.
        f"{SPOTTER}/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl": 1,
        # "Work on bead…", "/compact and continue…" (a command with args), "continue implementation"
        f"{SPOTTER}/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl": 3,
        # /init without args is not a prompt; its isMeta expansion is not typed by a person.
        f"{VIEWER}/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": 0,
    }
    for rel, count in expected.items():
        session = parse_session(corpus / rel)
        assert len(session.human_turns) == count, rel
    first = parse_session(corpus / f"{CC}/08edd954-dd2b-4fea-b675-0618fbd580f7.jsonl").human_turns[
        0
    ]
    assert first.text.startswith("PAY-1234 の決済APIタイムアウト")


def test_assistant_lines_merged_by_message_id(corpus: Path) -> None:
    for path in all_transcripts(corpus):
        session = parse_session(path)
        ids_with_text: set[str] = set()
        seen_uuid: set[str] = set()
        for rec in records(path):
            if rec.get("uuid") in seen_uuid:
                continue
            seen_uuid.add(rec.get("uuid"))
            message = rec.get("message")
            if (
                rec.get("type") != "assistant"
                or rec.get("isSidechain")
                or not isinstance(message, dict)
            ):
                continue
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            texts = [
                b
                for b in blocks
                if isinstance(b, dict)
                and b.get("type") == "text"
                and strip_injections(b.get("text", "")) not in ("", "No response requested.")
            ]
            if texts and message.get("id"):
                ids_with_text.add(message["id"])
        # One event per API message, however many lines carried its blocks.
        assert len(session.assistant_texts) == len(ids_with_text), path


def test_split_reply_becomes_one_event() -> None:
    lines = [
        json.dumps(
            {
                "type": "assistant",
                "uuid": "a1",
                "message": {"id": "m1", "content": [{"type": "text", "text": "part one"}]},
            }
        ),
        json.dumps(
            {
                "type": "assistant",
                "uuid": "a2",
                "message": {
                    "id": "m1",
                    "content": [{"type": "thinking", "thinking": "secret plan"}],
                },
            }
        ),
        json.dumps(
            {
                "type": "assistant",
                "uuid": "a3",
                "message": {"id": "m1", "content": [{"type": "text", "text": "part two"}]},
            }
        ),
    ]
    session = parse_lines(lines, Path("s.jsonl"))
    assert [e.text for e in session.assistant_texts] == ["part one\npart two"]
    assert "secret plan" not in repr(session.events)


def test_tool_use_paths_extracted(corpus: Path) -> None:
    session = parse_session(corpus / f"{CC}/08edd954-dd2b-4fea-b675-0618fbd580f7.jsonl")
    assert session.files() == ["internal/payment/client.go"]
    assert "/home/dev/ec-backend/internal/payment/client.go" in session.input_paths()
    lines = [c.line for c in session.tool_calls]
    assert "Edit internal/payment/client.go" in lines
    assert any(line.startswith("Bash go test") for line in lines)
    # MultiEdit (legacy) and NotebookEdit-style keys are read too.
    viewer = parse_session(corpus / f"{VIEWER}/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assert any(c.name == "MultiEdit" and c.paths for c in viewer.tool_calls)
    notebook = parse_lines(
        [
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": "n",
                    "message": {
                        "id": "m",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "t",
                                "name": "NotebookEdit",
                                "input": {"notebook_path": "/w/a.ipynb"},
                            }
                        ],
                    },
                }
            )
        ],
        Path("x.jsonl"),
    )
    assert notebook.tool_calls[0].paths == ["/w/a.ipynb"]


def test_subagents_and_compaction_agents_flagged_in_all_layouts(corpus: Path) -> None:
    root = corpus / "claude-transcripts"
    nested = [p for p in root.rglob("agent-*.jsonl")]
    assert len(nested) >= 10
    for path in nested:
        session = parse_session(path)
        assert session.subagent, path
        assert not session.human_turns or session.is_agent_file
    assert parse_session(
        root
        / "spotter/test/fixtures/transcripts/ae4a77f8-aedd-4bc1-888f-c94edc91af04"
        / "subagents/agent-acompact-946d2b.jsonl"
    ).is_compaction_agent
    # Inline sidechains (2025 layout): counted, never turned into events of the parent.
    inline = parse_session(corpus / f"{VIEWER}/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    assert inline.sidechain_records > 400
    assert not inline.subagent
    assert len(inline.human_turns) == 2


def test_headless_and_flags(corpus: Path) -> None:
    headless = parse_session(corpus / f"{CC}/6f8ecdf1-dd45-46ad-ae67-87e0edea3331.jsonl")
    assert headless.entrypoint == "sdk-cli" and headless.headless
    interactive = parse_session(corpus / f"{CC}/08edd954-dd2b-4fea-b675-0618fbd580f7.jsonl")
    assert interactive.entrypoint == "cli" and not interactive.headless
    compacted = parse_session(corpus / f"{SPOTTER}/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    assert compacted.compacted
    # Non-uuid file names still get the session id from the records.
    short = parse_session(corpus / f"{SPOTTER}/short.jsonl")
    assert len(short.session_id) == 36


def test_japanese_preserved_and_injections_stripped(corpus: Path) -> None:
    session = parse_session(corpus / f"{CC}/08edd954-dd2b-4fea-b675-0618fbd580f7.jsonl")
    texts = "\n".join(e.text for e in session.events)
    assert "決済タイムアウトは 10 秒のまま" in texts
    raw = (corpus / f"{CC}/08edd954-dd2b-4fea-b675-0618fbd580f7.jsonl").read_text(encoding="utf-8")
    assert "<memrecall-context>" in raw  # the stand-in hook did inject…
    assert "<memrecall-context>" not in texts  # …and none of it comes back as a fact
    viewer = parse_session(corpus / f"{VIEWER}/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assert "最新の状態にアップデート" in viewer.human_turns[0].text


def test_every_file_path_in_tool_inputs_is_kept(corpus: Path) -> None:
    for path in all_transcripts(corpus):
        session = parse_session(path)
        expected: set[str] = set()
        seen: set[str] = set()
        for rec in records(path):
            if rec.get("type") != "assistant" or rec.get("isSidechain") or rec.get("uuid") in seen:
                continue
            seen.add(rec.get("uuid"))
            for block in (rec.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    data = block.get("input") or {}
                    for key in ("file_path", "notebook_path"):
                        if isinstance(data.get(key), str):
                            expected.add(data[key])
        assert expected <= session.input_paths(), path


def test_strip_injections() -> None:
    text = (
        "a <system-reminder>x\ny</system-reminder> "
        "b <memrecall-context>old memory</memrecall-context> c <private>pw</private> d"
    )
    assert strip_injections(text) == "a  b  c  d"
    assert strip_injections("keep <memrecall-context>unterminated") == "keep"


def test_cuts_never_split_a_token() -> None:
    key = "sk-ant-api03-Xq7vR2mK9pL4tW8nB3cF6hJ1dS5gA0zE"
    text = f"the key is {key} ok"
    for limit in range(12, len(text)):
        head = cut_head(text, limit)
        assert key in head or "sk-" not in head, limit
        tail = cut_tail(text, limit)
        assert key in tail or not any(part in tail for part in ("Xq7", "0zE")), limit
    assert cut_head("日本語のテキストです", 4) == "日本語の"
