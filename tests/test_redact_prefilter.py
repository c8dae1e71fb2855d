"""The hook's cheap gates must never wave a secret through: a rule runs only when one of its
literal triggers occurs in the (normalised) text, so the gated pass must find exactly what
every rule run without gates finds, for every planted secret and class case, alone and in
Japanese or English context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrecall import redact

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
SECRETS = {
    f"{path.stem}:{name}": value
    for path in sorted(FIXTURES.glob("*.secrets.json"))
    for name, value in json.loads(path.read_text("utf-8")).items()
    if isinstance(value, str)
}
CONTEXTS = [
    "{}",
    "本番の値は{}です",
    "use {} for now",
    "「{}」を設定した",
    "password: {}",
    "パスワードは {} です",
]


def _transcript_texts() -> list[str]:
    """Every string in the planted transcripts: the secrets as they really appear."""
    texts: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted(FIXTURES.glob("planted-secrets*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                walk(json.loads(line))
    return texts


def test_fixtures_are_there() -> None:
    assert len(SECRETS) >= 40 and len(_transcript_texts()) >= 20


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_gate_never_hides_what_the_patterns_would_redact(name: str) -> None:
    for context in CONTEXTS:
        text = context.format(SECRETS[name])
        full = redact._full_pass(text)
        assert redact._regex_pass(text) == full, text
        if full[1]:
            assert redact._could_hold_secret(text), text


def test_gate_passes_every_planted_transcript_text_the_patterns_redact() -> None:
    missed = [t[:120] for t in _transcript_texts() if redact._regex_pass(t) != redact._full_pass(t)]
    assert not missed


def _class_texts() -> list[str]:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from secret_classes import cases

    from test_redact import CLASSES

    return [text for _, _, text in cases()] + [
        text for members in CLASSES.values() for _, text in members
    ]


def test_gated_pass_equals_the_full_pass_on_every_class_case() -> None:
    texts = _class_texts()
    assert len(texts) > 150
    for text in texts:
        assert redact._regex_pass(text) == redact._full_pass(text), text
        assert redact._full_pass(text)[1] >= 1, text


@pytest.mark.parametrize(
    "text",
    [
        "在庫同期バッチが PAY-1234 のあとタイムアウトする件",
        "internal/payment/client.go を直したい",
        "sync_inventory_batch はどこで呼ばれてる？",
        "Rust でフィボナッチ数列を書いて",
    ],
)
def test_gate_says_no_to_ordinary_prompts(text: str) -> None:
    # What makes the hook cheap: an ordinary prompt never compiles the secret patterns.
    assert not redact._could_hold_secret(text)
    assert redact.redact_fast(text) == text
