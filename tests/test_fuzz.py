"""Property-based tests: the parsers that read files memrecall does not control never raise
anything but memrecall's own errors (MemrecallError), whatever the input.

Example counts stay modest (the suite runs on 2 cores); `HYPOTHESIS_PROFILE=deep` runs more.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from memrecall import frontmatter_lite
from memrecall.errors import MemrecallError
from memrecall.keywords import extract
from memrecall.recall import (
    BadHookInput,
    is_trivial,
    looks_secret,
    parse_hook_input,
    select_keywords,
)
from memrecall.redact import redact
from memrecall.stores.base import parse_date
from memrecall.stores.beads import BeadsStore, issue_from_record, issue_text
from memrecall.summarize.condense import condense
from memrecall.tokenizers.regex import RegexAnalyzer
from memrecall.transcripts import parse_lines

DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
settings.register_profile(
    "memrecall",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "deep",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("deep" if DEEP else "memrecall")

# Text with the characters that break parsers: Japanese, NULs, surrogates, newlines, quotes.
TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list("\x00\n\r\t\"'\\{}[]:#-|>`<>/\u3000あ決済ｱ")),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    max_size=80,
)
KEYS = st.sampled_from(
    [
        "type",
        "message",
        "content",
        "role",
        "text",
        "tool_use",
        "tool_result",
        "input",
        "file_path",
        "notebook_path",
        "command",
        "sessionId",
        "timestamp",
        "isSidechain",
        "isMeta",
        "entrypoint",
        "subtype",
        "uuid",
        "id",
        "name",
        "cwd",
        "gitBranch",
        "tool_use_id",
        "is_error",
        "origin",
        "promptSource",
        "customTitle",
        "aiTitle",
        "summary",
        "attachment",
        "title",
        "status",
        "_type",
        "labels",
        "comments",
        "description",
        "updated_at",
        "created_at",
        "priority",
        "ephemeral",
        "issue_type",
        "issue_id",
        "prompt",
        "session_id",
        "transcript_path",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    TEXT,
    st.sampled_from(
        [
            "user",
            "assistant",
            "system",
            "summary",
            "text",
            "tool_use",
            "tool_result",
            "image",
            "thinking",
            "human",
            "cli",
            "sdk-cli",
            "open",
            "closed",
            "tombstone",
            "issue",
            "2026-11-20T10:00:00Z",
            "bd-a1b2",
            "Read",
            "Edit",
            "Bash",
            "Task",
        ]
    ),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(KEYS, TEXT), inner, max_size=6)
    ),
    max_leaves=25,
)
RECORD = st.dictionaries(KEYS, JSON, max_size=10)


def _line(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


LINES = st.lists(
    st.one_of(
        RECORD.map(_line), JSON.map(_line), TEXT, RECORD.map(_line).map(lambda s: s[: len(s) // 2])
    ),
    max_size=12,
)


@given(LINES)
def test_transcript_parser_and_condense_never_raise(lines: list[str]) -> None:
    raw = [line.encode("utf-8", "surrogatepass") for line in lines]
    try:
        session = parse_lines(raw, Path("/p/-home-x/0000aaaa-0000-4000-8000-000000000000.jsonl"))
        condensed = condense(session, 5000, 2000)
    except MemrecallError:
        return
    assert isinstance(condensed.text, str)
    condensed.text.encode("utf-8")  # what is sent or written is always valid UTF-8


def test_transcript_parser_survives_deep_nesting() -> None:
    lines = [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"type": "user", ' + b'"x": [' * 50_000 + b"]" * 50_000 + b"}",
    ]
    session = parse_lines(lines, Path("/p/x/s.jsonl"))
    assert session.malformed_lines == 2


@given(st.lists(st.one_of(RECORD, JSON), max_size=8), st.lists(TEXT, max_size=3))
def test_beads_reader_never_raises(
    tmp_path_factory: pytest.TempPathFactory, records: list[object], junk: list[str]
) -> None:
    for record in records:
        issue = issue_from_record(record)
        if issue is not None:
            issue_text(issue)
    folder = tmp_path_factory.mktemp("beads")
    path = folder / "issues.jsonl"
    body = "\n".join([_line(r) for r in records] + junk)
    path.write_bytes(body.encode("utf-8", "surrogatepass") + b'\n{"id": "bd-x", "title": "cut')
    store = BeadsStore([folder])
    lines = {path: [(n, "x") for n in range(1, body.count("\n") + 3)]}
    for doc in store.documents(lines):
        assert isinstance(doc.title, str) and isinstance(doc.ref, str)
    store.doc_count()


FRONT_LINE = st.one_of(
    TEXT,
    st.builds(lambda k, v: f"{k}: {v}", KEYS, TEXT),
    st.builds(lambda v: f"  - {v}", TEXT),
    st.sampled_from(
        [
            "---",
            "...",
            "tags: [a, b",
            "x: |",
            "  nested: {a: 1}",
            "- orphan",
            "&anchor x",
            "date: 2026-13-45",
            "title: 'unterminated",
            "tags:",
            "? complex",
        ]
    ),
)


@given(st.lists(FRONT_LINE, max_size=12), st.booleans())
def test_frontmatter_reader_never_raises(lines: list[str], fenced: bool) -> None:
    text = "\n".join((["---"] + lines + ["---", "body"]) if fenced else lines)
    front, body, start = frontmatter_lite.split(text)
    meta = frontmatter_lite.parse(front) if front is not None else {}
    assert isinstance(meta, dict) and isinstance(body, str) and start >= 0
    for key in ("tags", "aliases", "title", "date"):
        frontmatter_lite.as_list(meta.get(key))
        parse_date(meta.get(key))


@given(TEXT)
def test_parse_date_never_raises(text: str) -> None:
    parse_date(text)


PROMPT = st.one_of(
    TEXT,
    st.lists(
        st.one_of(
            TEXT,
            st.sampled_from(
                [
                    "PAY-1234",
                    "bd-a1b2",
                    "internal/payment/client.go",
                    "snake_case_name",
                    "camelCase",
                    "`code span`",
                    "https://example.com/a?b=c",
                    "v1.2.3",
                    "決済タイムアウト",
                    "ｶﾀｶﾅ",
                    "sk-ant-api03-" + "x" * 30,
                    "``",
                    "`",
                    "/",
                    "../..",
                    "a.b.c.d",
                    "__init__",
                    "1234567",
                    "x" * 200,
                ]
            ),
        ),
        max_size=10,
    ).map(" ".join),
)


@given(PROMPT)
def test_keyword_extractor_never_raises(prompt: str) -> None:
    keywords = extract(prompt, RegexAnalyzer(), {"設定"})
    kept, dropped = select_keywords(keywords, 16)
    assert len(kept) <= 16
    for keyword in keywords:
        assert keyword.text.strip() and keyword.text.casefold() not in {"設定"}
        looks_secret(keyword.text)
    is_trivial(prompt, 6)


@pytest.mark.parametrize("backend", ["sudachi", "mecab"])
@settings(max_examples=15 if not DEEP else 300)
@given(prompt=PROMPT)
def test_keyword_extractor_with_analysers_never_raises(backend: str, prompt: str) -> None:
    from memrecall.tokenizers import resolve

    analyzer, _ = resolve(backend)
    extract(prompt.replace("\x00", "") if backend == "mecab" else prompt, analyzer, set())


HOOK = st.one_of(
    st.dictionaries(KEYS, JSON, max_size=6),
    st.builds(
        lambda p, s, more: {"prompt": p, "session_id": s, **more},
        st.one_of(PROMPT, JSON),
        st.one_of(TEXT, JSON),
        st.dictionaries(KEYS, JSON, max_size=3),
    ),
    JSON,
)


@given(st.one_of(HOOK.map(_line), TEXT, HOOK.map(_line).map(lambda s: s[:-1])))
def test_hook_input_parsing_raises_only_bad_hook_input(raw: str) -> None:
    try:
        hook = parse_hook_input(raw)
    except BadHookInput:
        return
    for value in (hook.prompt, hook.session_id, hook.cwd, hook.transcript_path):
        value.encode("utf-8")  # no lone surrogates survive parsing


@given(PROMPT)
def test_redaction_never_raises_and_is_stable(text: str) -> None:
    once, _ = redact(text)
    twice, count = redact(once)
    assert twice == once and count == 0
