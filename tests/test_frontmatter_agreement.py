"""Two frontmatter readers, one answer: python-frontmatter (summary writer, prune) and
frontmatter_lite (the hook's hot path, which must not import yaml) read the fields memrecall
uses (title, date, tags, aliases, recalled) alike, from the summaries the writer produces and
from notes as people write them.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memrecall import frontmatter_lite
from memrecall.prune import read_frontmatter
from memrecall.stores.base import parse_date
from memrecall.summarize.writer import SummaryMeta, is_pristine, render_file

JST = timezone(timedelta(hours=9))


def used_fields(meta: dict[str, Any]) -> dict[str, Any]:
    """The fields as memrecall uses them (stores/markdown.py fill_note, prune)."""
    as_list = frontmatter_lite.as_list
    title = meta.get("title")
    return {
        "title": str(title).strip() if title else "",
        "date": parse_date(meta.get("date")),
        "tags": as_list(meta.get("tags", meta.get("tag"))),
        "aliases": as_list(meta.get("aliases", meta.get("alias"))),
        "recalled": [str(r) for r in as_list(meta.get("recalled")) if ":" in str(r)],
        "session_id": str(meta.get("session_id") or ""),
    }


def read_lite(text: str) -> dict[str, Any]:
    front, _, _ = frontmatter_lite.split(text)
    return frontmatter_lite.parse(front) if front else {}


def assert_agree(text: str) -> dict[str, Any]:
    library, lite = used_fields(read_frontmatter(text)), used_fields(read_lite(text))
    assert lite == library, text
    return lite


def summary(**changes: Any) -> str:
    fields: dict[str, Any] = {
        "title": "PAY-1234 の決済タイムアウト調査",
        "date": datetime(2026, 11, 20, 10, 1, tzinfo=timezone.utc),
        "session_id": "08edd954-dd2b-4fea-b675-0618fbd580f7",
        "project": "ec-backend",
        "cwd": "/home/dev/ec-backend",
        "git_branch": "fix/pay-timeout",
        "tags": ["PAY-1234", "決済", "retry_count"],
        "files": ["internal/payment/client.go"],
        "backend": "extractive",
        "source_transcript": "/home/dev/.claude/projects/x/08edd954.jsonl",
        "recalled": ["beads:PAY-1234", "obsidian:決済/タイムアウト.md"],
        "language": "ja",
        "summarized": datetime(2026, 11, 21, 3, 17, tzinfo=JST),
    }
    fields.update(changes)
    return render_file(SummaryMeta(**fields), "## 何をしてた\n- タイムアウトを調べた\n")


OTHER_TYPES = ["true", "null", "~", "404", "1.5", "yes"]
WRITTEN = {
    "plain": summary(),
    "english": summary(title="Deploy settings cleanup", language="en"),
    "apostrophe and colon": summary(title="Don't retry: the gateway's 10 s timeout"),
    "yaml specials": summary(
        title="- [draft] #1 * & ! | > % @ `x` {y}", tags=["#tag", "a: b", "[x]"]
    ),
    "quotes": summary(title="\"quoted\" and 'single'", git_branch="it's/a'branch"),
    "looks like other types": summary(title="2026-11-20", tags=OTHER_TYPES),
    "commas in items": summary(tags=["a, b", "c,d"], files=["dir, with comma/x.py"]),
    "long title": summary(title="長い" * 200 + " and a very long English tail " * 10),
    "windows paths": summary(
        cwd="C:\\Users\\dev\\ec-backend", source_transcript="C:\\t\\x y.jsonl"
    ),
    "empty lists": summary(tags=[], files=[], recalled=[]),
    "no date": summary(date=None, summarized=None, language=""),
    "emoji and fullwidth": summary(title="✅ 完了 ＃ｍｅｍｏ 🎉", tags=["ＡＢＣ", "🎉"]),
}


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_summaries_the_writer_produces_read_alike(name: str) -> None:
    text = WRITTEN[name]
    fields = assert_agree(text)
    assert is_pristine(text)
    assert fields["session_id"] == "08edd954-dd2b-4fea-b675-0618fbd580f7"


def test_the_writer_keeps_what_it_was_given() -> None:
    fields = assert_agree(WRITTEN["plain"])
    assert fields == {
        "title": "PAY-1234 の決済タイムアウト調査",
        "date": datetime(2026, 11, 20, 10, 1, tzinfo=timezone.utc),
        "tags": ["PAY-1234", "決済", "retry_count"],
        "aliases": [],
        "recalled": ["beads:PAY-1234", "obsidian:決済/タイムアウト.md"],
        "session_id": "08edd954-dd2b-4fea-b675-0618fbd580f7",
    }
    title = assert_agree(WRITTEN["apostrophe and colon"])["title"]
    assert title == "Don't retry: the gateway's 10 s timeout"
    assert assert_agree(WRITTEN["looks like other types"])["tags"] == OTHER_TYPES
    # A date stays a plain ISO 8601 instant, as a person and Obsidian read it.
    assert "\ndate: 2026-11-20T" in WRITTEN["plain"] and "\ndate: ''\n" in WRITTEN["no date"]
    # One line per field: a folded line would send the hook's reader to PyYAML.
    front = frontmatter_lite.split(WRITTEN["long title"])[0] or ""
    assert not any(line[:1].isspace() for line in front.splitlines())


NOTES = {
    "flow lists": (
        '---\ntitle: 在庫同期の設計\ntags: [inventory, 在庫, "sync, nightly"]\n'
        "aliases: [在庫同期, 'sync']\n---\n"
    ),
    "block lists": (
        "---\ntitle: Payment retries\ntags:\n  - payment\n  - 決済\n"
        "aliases:\n- retries\n- 'retry: policy'\n---\n"
    ),
    "tags as a string": "---\ntitle: x\ntags: payment, 決済 retry\n---\n",
    "one tag as a string": "---\ntitle: x\ntags: payment\n---\n",
    "singular keys": "---\ntitle: x\ntag: payment\nalias: 決済\n---\n",
    "hash tags": "---\ntitle: x\ntags: ['#payment', '#決済']\n---\n",
    "a comment where a tag should be": "---\ntitle: x\ntags: #payment\n---\n",
    "comments": "---\n# a comment\ntitle: Notes # trailing\ntags: [a, b] # trailing\n---\n",
    "quoted strings": "---\ntitle: 'It''s done: really'\naliases: [\"a\", 'b''c']\n---\n",
    "double-quoted escapes": '---\ntitle: "line\\none \\u3042 \\"q\\""\n---\n',
    "japanese": (
        "---\ntitle: 決済APIのタイムアウトを10秒に\naliases: [タイムアウト, 決済API]\n"
        "tags: [決済, バグ]\n---\n"
    ),
    "date only": "---\ntitle: x\ndate: 2026-11-02\n---\n",
    "date and time with a space": "---\ntitle: x\ndate: 2026-11-02 09:30:00+09:00\n---\n",
    "date in zulu": "---\ntitle: x\ndate: 2026-11-02T00:30:00Z\n---\n",
    "quoted date": "---\ntitle: x\ndate: '2026-11-02T09:30:00+09:00'\n---\n",
    "nulls": "---\ntitle: x\ntags:\naliases: ~\nrecalled: null\n---\n",
    "empty flow list": "---\ntitle: x\ntags: []\n---\n",
    "recalled refs": (
        "---\ntitle: x\nrecalled:\n- beads:PAY-1234\n- obsidian:notes/a.md\n- not-a-ref\n---\n"
    ),
    "no title": "---\ntags: [a]\n---\n# Heading\n",
    "nested map": "---\ntitle: x\nmeta:\n  owner: me\ntags: [a]\n---\n",
    "multi-line title": "---\ntitle: >\n  folded\n  title\ntags: [a]\n---\n",
    "bom": "\ufeff---\ntitle: x\ntags: [a]\n---\n",
    "obsidian properties": (
        "---\naliases:\n  - 決済\ncssclasses: wide\npublish: true\n---\nbody\n"
    ),
}


@pytest.mark.parametrize("name", sorted(NOTES))
def test_notes_as_people_write_them_read_alike(name: str) -> None:
    assert_agree(NOTES[name])


def test_the_fast_reader_unescapes_what_yaml_does() -> None:
    """What frontmatter_lite got wrong before it was checked against the library."""
    assert read_lite(NOTES["quoted strings"])["title"] == "It's done: really"  # was `It''s`
    # A quoted comma was split in two.
    assert read_lite(NOTES["flow lists"])["tags"] == ["inventory", "在庫", "sync, nightly"]
    assert read_lite(NOTES["nulls"])["aliases"] is None  # was the string "~"
    assert read_lite(NOTES["a comment where a tag should be"])["tags"] is None  # was "#payment"


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=_TEXT,
    tags=st.lists(_TEXT, max_size=4),
    recalled=st.lists(_TEXT, max_size=3),
    project=_TEXT,
)
def test_anything_the_writer_writes_reads_alike(
    title: str, tags: list[str], recalled: list[str], project: str
) -> None:
    refs = [f"obsidian:{r}" for r in recalled]
    text = summary(title=title, tags=tags, recalled=refs, project=project)
    fields = assert_agree(text)
    assert fields["title"] == " ".join(title.split()) or not fields["title"]


def test_the_corpus_notes_and_summaries_read_alike(corpus: Path) -> None:
    """Every frontmatter in the shared corpus: Obsidian vaults (Japanese and English) and
    real-looking Japanese summaries."""
    checked = 0
    for path in sorted(corpus.rglob("*.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.lstrip("\ufeff").startswith("---"):
            assert_agree(text)
            checked += 1
    assert checked >= 100
