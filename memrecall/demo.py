"""`memrecall demo`: the real recall path over small sample stores shipped in the package.

No network and no Claude Code: each prompt goes through `recall.recall` exactly as the
hook would run it, in one demo session, so de-duplication shows too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .config import Settings, load_settings
from .recall import HookInput, RecallResult, recall
from .resources import demo_data_dir

DEMO_NOW = "2026-12-02T09:00:00+09:00"
DEMO_SESSION = "demo-session-0001"

PROMPTS: tuple[tuple[str, str], ...] = (
    ("PAY-1234 の決済タイムアウト、前回何秒にしたんだっけ？", "ticket id: fires on its own"),
    ("ありがとう", "acknowledgement: never fires"),
    (
        "Let's revisit the rate limiter design for the public API, the Redis part",
        "English note and summary",
    ),
    (
        "在庫同期でまた不具合が出てる、前に直したやつと同じかな",
        "synonym: 不具合 finds the summary that says バグ",
    ),
    ("README の誤字を直して", "unrelated: stays quiet"),
    ("bd-c91e はもう閉じてる？", "beads id: the issue itself, not a JSON line"),
    ("PAY-1234 のタイムアウトをもう一度確認したい", "same memories again: not re-injected"),
    ("Kubernetes のノードのスケーリング設定を見直したい", "nothing stored about it: quiet"),
)


@dataclass
class DemoStep:
    prompt: str
    expectation: str
    result: RecallResult
    elapsed_ms: float


def demo_settings(home: Path) -> Settings:
    data = demo_data_dir()
    return load_settings(
        {
            "home": str(home),
            "obsidian": [str(data / "vault")],
            "beads": [str(data / "beads")],
            "summaries": str(data / "summaries"),
        },
        environ={"MEMRECALL_NOW": DEMO_NOW},
    )


def build_demo_index(home: Path) -> tuple[int, float]:
    """Index the sample stores the way `memrecall index build` would: (documents, seconds)."""
    from .indexer import refresh

    report = refresh(demo_settings(home))
    return report.documents, report.seconds


def run_demo(home: Path, prompts: tuple[tuple[str, str], ...] = PROMPTS) -> list[DemoStep]:
    settings = demo_settings(home)
    # The demo's index is built up front; no detached refresh may outlive a temporary home.
    settings.index.background = False
    steps = []
    for prompt, expectation in prompts:
        started = time.monotonic()
        result = recall(
            HookInput(session_id=DEMO_SESSION, prompt=prompt),
            settings,
            deadline=started + settings.recall.deadline_ms / 1000,
        )
        steps.append(DemoStep(prompt, expectation, result, (time.monotonic() - started) * 1000))
    return steps
