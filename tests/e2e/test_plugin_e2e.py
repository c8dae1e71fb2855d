"""The repository as a Claude Code plugin, loaded by the real Claude Code with `--plugin-dir`.

Three paths: push (the plugin's UserPromptSubmit hook), pull (the `memrecall` skill and
`/memrecall:search`) and save (`/memrecall:save`). What Claude Code shows the model is checked
in the requests the stand-in received. No settings hook is installed here: the plugin's own
hook (hooks/recall.sh) is the only one, finding memrecall through MEMRECALL_BIN as a user's
would through PATH or ~/.local/bin.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .support import (
    MARK_OPEN,
    PAYMENT_FACT,
    REPO,
    FakeAnthropic,
    Interactive,
    Request,
    Rule,
    Workspace,
    base_env,
    between_markers,
    hook_contexts,
    main_transcripts,
    make_workspace,
    memrecall_binary,
    memrecall_has,
    processes_in,
    recall_log,
    records,
    run_headless,
)

PAY_PROMPT = "PAY-1234 のタイムアウト何秒だっけ"
PAY_TITLE = "決済APIのタイムアウト方針"
PAY_REF = "設計/決済タイムアウト.md"
INSTALL_HINT = "pipx install memrecall"

SAVED_TITLE = "INV-4711 請求書PDFの文字化けはフォント埋め込みで解決"
SAVED_FACT = "IPAexGothic を PDF に埋め込む"
SAVE_COMMAND = f"""memrecall-cli save --title "{SAVED_TITLE}" \\
  --summary "請求書PDFの文字化けは {SAVED_FACT} ことで直した" \\
  --tags inv-4711,pdf,font <<'MEMRECALL_NOTE'
## Decision
INV-4711: 請求書 PDF の文字化けは {SAVED_FACT} ことで解決した。

## Where
`billing/pdf/render.py` の `render_invoice()`。
MEMRECALL_NOTE"""


# --- helpers ---------------------------------------------------------------------------------


def frontmatter_of(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    return yaml.safe_load(text.split("---\n", 2)[1])


def require_cli(command: str) -> None:
    """Skip until the memrecall under test has `command` (built at the same time as the plugin)."""
    proc = subprocess.run(
        [str(memrecall_binary()), command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        pytest.skip(
            f"`memrecall {command} --help` fails: this memrecall has no {command} command yet"
        )


def with_plugin(
    claude: Path,
    ws: Workspace,
    url: str,
    prompt: str,
    *args: str,
    memrecall: bool = True,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT --plugin-dir <repo>`; memrecall via MEMRECALL_BIN, or not at all."""
    extra = {"MEMRECALL_BIN": str(memrecall_binary())} if memrecall else {}
    return run_headless(
        claude, ws, url, prompt, "--plugin-dir", str(REPO), *args, env={**extra, **(env or {})}
    )


def ok(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, (
        f"claude -p failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )


def stream_events(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    out = []
    for line in proc.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def user_blocks(req: Request) -> list[str]:
    """The text of every user message block of a request (typed prompt, command expansions,
    tool results), one string a block."""
    blocks: list[str] = []
    for msg in req.body.get("messages", []):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            blocks.append(content)
            continue
        for block in content or []:
            if not isinstance(block, dict):
                continue
            inner = block.get("text", block.get("content", ""))
            if isinstance(inner, list):
                inner = "\n".join(str(i.get("text", "")) for i in inner if isinstance(i, dict))
            blocks.append(str(inner))
    return blocks


def block_with(fake: FakeAnthropic, marker: str) -> str:
    """The first user block, in any main-loop request, that contains `marker`."""
    for req in fake.main_requests():
        for block in user_blocks(req):
            if marker in block:
                return block
    raise AssertionError(f"no request to the model carried {marker!r}")


def tool_results(fake: FakeAnthropic) -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for req in fake.main_requests():
        for msg in req.body.get("messages", []):
            for block in msg.get("content") if isinstance(msg.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found[block["tool_use_id"]] = block
    return list(found.values())


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(str(i.get("text", "")) for i in content if isinstance(i, dict))
    return str(content)


def hook_errors(transcript: Path) -> list[dict[str, Any]]:
    out = []
    for d in records(transcript):
        att = d.get("attachment") if d.get("type") == "attachment" else None
        if (
            isinstance(att, dict)
            and "hook" in str(att.get("type"))
            and ("error" in str(att.get("type")) or att.get("exitCode") not in (None, 0))
        ):
            out.append(att)
    return out


@pytest.fixture
def pws(tmp_path: Path) -> Iterator[Workspace]:
    """A user with the small stores and no hook in settings: the plugin brings its own."""
    workspace = make_workspace(tmp_path)
    if memrecall_has("index"):
        workspace.build_index()
    yield workspace
    deadline = time.monotonic() + 5
    left = processes_in(tmp_path)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = processes_in(tmp_path)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"processes left behind by the test: {left}"


# --- the plugin as Claude Code sees it ----------------------------------------------------------


def test_claude_plugin_validate_passes(claude: Path, tmp_path: Path) -> None:
    """`claude plugin validate` accepts the repository root and finds every part of the plugin."""
    env = base_env(tmp_path / "home")
    proc = subprocess.run(
        [str(claude), "plugin", "validate", "--json", str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    report = json.loads(proc.stdout)
    assert report["success"] is True and report["manifest"]["errors"] == [], report["manifest"]
    provides = report["provides"]
    assert provides["skills"] == ["memrecall:memrecall"], provides
    assert sorted(provides["commands"]) == ["memrecall:save", "memrecall:search"], provides
    assert [h["event"] for h in provides["hooks"]] == ["UserPromptSubmit"], provides
    assert provides["bin"] == ["memrecall-cli"], provides
    human = subprocess.run(
        [str(claude), "plugin", "validate", str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert human.returncode == 0 and "Validation passed" in human.stdout, human.stdout


def test_skill_and_commands_are_listed_to_the_model(
    claude: Path, pws: Workspace, fake: FakeAnthropic
) -> None:
    """With `--plugin-dir`, the session announces the skill and both commands, and the model's
    own listing of skills carries each one's description from its frontmatter."""
    proc = with_plugin(
        claude, pws, fake.url, "hello", "--output-format", "stream-json", "--verbose"
    )
    ok(proc)
    (init,) = [
        e for e in stream_events(proc) if e.get("type") == "system" and e.get("subtype") == "init"
    ]
    assert {"memrecall:search", "memrecall:save"} <= set(init["slash_commands"]), init[
        "slash_commands"
    ]
    assert "memrecall:memrecall" in init["skills"], init["skills"]
    mine = [p for p in init["plugins"] if p.get("name") == "memrecall"]
    assert mine and Path(mine[0]["path"]).resolve() == REPO, init["plugins"]
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert mine[0].get("version") == manifest["version"], mine

    (req,) = fake.main_requests()
    listing = req.text
    for name, source in [
        ("memrecall:memrecall", REPO / "skills" / "memrecall" / "SKILL.md"),
        ("memrecall:search", REPO / "commands" / "search.md"),
        ("memrecall:save", REPO / "commands" / "save.md"),
    ]:
        description = " ".join(str(frontmatter_of(source)["description"]).split())
        assert f"- {name}: {description[:80]}" in listing, (
            f"{name} and its description are not in the skill listing the model received"
        )


def test_plugin_hook_injects_memory(claude: Path, pws: Workspace, fake: FakeAnthropic) -> None:
    """Push: the plugin's hook (not a settings entry) recalls the note for a prompt naming it."""
    assert not (pws.home / ".claude" / "settings.json").exists()
    ok(with_plugin(claude, pws, fake.url, PAY_PROMPT))
    (req,) = fake.main_requests()
    assert any(PAYMENT_FACT in block for block in between_markers(req.text)), req.text[-2000:]
    (transcript,) = main_transcripts(pws.home)
    assert not hook_errors(transcript), hook_errors(transcript)
    (entry,) = recall_log(pws.memrecall_home)
    assert entry["decision"] == "inject" and [i["ref"] for i in entry["injected"]] == [PAY_REF], (
        entry
    )


class InOrder(FakeAnthropic):
    """Answers main-loop requests with `turns` in order (a tool call may follow a tool result),
    then with the plain reply."""

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        super().__init__()
        self.turns = list(turns)

    def main_blocks(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        with self.lock:
            turn = self.turns.pop(0) if self.turns else None
        if turn is None:
            return super().main_blocks(req)
        return [{"type": "tool_use", "id": f"toolu_inorder{len(self.turns)}", **turn}]


def test_skill_guides_a_search_the_model_runs(claude: Path, pws: Workspace) -> None:
    """Pull through the skill: the model invokes `memrecall:memrecall`, gets its instructions
    (the wrapper's path filled in), then runs the search it describes, and the candidates come
    back to it. A skill that grants tools asks once before it runs: `Skill(memrecall:memrecall)`
    is the allow rule a user adds (README); the skill's own allowed-tools then cover the Bash
    call, so nothing is denied."""
    search = 'memrecall-cli search "決済 タイムアウト" --json --limit 10'
    turns = [
        {"name": "Skill", "input": {"skill": "memrecall:memrecall"}},
        {"name": "Bash", "input": {"command": search, "description": "search memory"}},
    ]
    with InOrder(turns) as fake:
        proc = with_plugin(
            claude,
            pws,
            fake.url,
            "前に決めた決済のタイムアウト、覚えてる？",
            "--output-format",
            "json",
            "--allowedTools",
            "Skill(memrecall:memrecall)",
        )
        ok(proc)
        skill = block_with(fake, "Verify before trusting")
        results = tool_results(fake)
    assert str(REPO / "bin" / "memrecall-cli") in skill  # ${CLAUDE_PLUGIN_ROOT} resolved
    assert json.loads(proc.stdout).get("permission_denials") == [], proc.stdout
    (found,) = [r for r in results if PAY_REF in result_text(r)]
    assert not found.get("is_error"), found
    assert PAY_TITLE in result_text(found)


# --- pull: /memrecall:search ---------------------------------------------------------------------


def test_search_command_output_reaches_the_model(
    claude: Path, pws: Workspace, fake: FakeAnthropic
) -> None:
    """`/memrecall:search` runs `memrecall search --json` itself; the candidates are in the very
    prompt the model gets, with the instructions to pick, read and verify."""
    ok(with_plugin(claude, pws, fake.url, "/memrecall:search PAY-1234 タイムアウト"))
    expansion = block_with(fake, "Candidates from `memrecall search --json`")
    assert "PAY-1234 タイムアウト" in expansion
    start = expansion.index("\n[") + 1
    hits, _ = json.JSONDecoder().raw_decode(expansion[start:])
    assert hits and hits[0]["ref"] == PAY_REF and hits[0]["title"] == PAY_TITLE, hits
    assert "memrecall-cli show REF" in expansion  # what to do next is part of the prompt
    assert len(fake.main_requests()) == 1  # the search cost no model turn


def test_search_command_takes_the_query_verbatim(
    claude: Path, pws: Workspace, fake: FakeAnthropic
) -> None:
    """Quotes, `$(…)` and `;` in the query are words to search for, never shell: the query
    reaches memrecall through a quoted here-document."""
    marker = pws.root / "pwned"
    query = f'PAY-1234 don\'t "retry" $(touch {marker}) `touch {marker}`; touch {marker}'
    ok(with_plugin(claude, pws, fake.url, f"/memrecall:search {query}"))
    expansion = block_with(fake, "Candidates from `memrecall search --json`")
    hits, _ = json.JSONDecoder().raw_decode(expansion[expansion.index("\n[") + 1 :])
    assert hits and hits[0]["ref"] == PAY_REF, hits
    assert not marker.exists(), "a shell construct in the query was executed"


def test_search_then_show_reads_the_chosen_memory(claude: Path, pws: Workspace) -> None:
    """The model follows the command: it runs `memrecall-cli show REF` (the plugin's bin/ is
    on the Bash tool's PATH, the command's allowed-tools permit it) and gets the note's text."""
    require_cli("show")
    show = f"memrecall-cli show '{PAY_REF}' --query 'PAY-1234 タイムアウト'"
    rules = [
        Rule(
            when="Candidates from `memrecall search --json`",
            tool_use={"name": "Bash", "input": {"command": show, "description": "read memory"}},
        )
    ]
    with FakeAnthropic(rules=rules) as fake:
        ok(with_plugin(claude, pws, fake.url, "/memrecall:search PAY-1234 タイムアウト"))
        (result,) = tool_results(fake)
    assert not result.get("is_error"), result
    assert PAYMENT_FACT in result_text(result), result


# --- save: /memrecall:save, then recalled by the hook ----------------------------------------


def test_save_command_then_the_next_prompt_recalls_it(claude: Path, pws: Workspace) -> None:
    """`/memrecall:save`: the model runs `memrecall-cli save` as the command tells it; the next
    prompt of the same session gets the new note from the plugin's hook, inside the wrapper."""
    require_cli("save")
    rules = [
        Rule(
            when="Save a memory note with memrecall",
            tool_use={"name": "Bash", "input": {"command": SAVE_COMMAND, "description": "save"}},
        )
    ]
    with FakeAnthropic(rules=rules) as fake:
        ok(with_plugin(claude, pws, fake.url, "/memrecall:save INV-4711 の文字化け対策"))
        expansion = block_with(fake, "Save a memory note with memrecall")
        assert "memrecall 0." in expansion  # the command's own `memrecall-cli --version`
        (result,) = tool_results(fake)
        assert not result.get("is_error"), result
        saved = list(pws.memrecall_home.rglob("*.md"))
        assert any(SAVED_FACT in p.read_text(encoding="utf-8") for p in saved), saved

        prompt = "INV-4711 の文字化け、どう直したんだっけ"
        ok(with_plugin(claude, pws, fake.url, prompt, "--continue"))
        later = [r for r in fake.main_requests() if prompt in r.text]
        assert later, "the second prompt never reached the model"
        blocks = between_markers(later[0].text)
        assert any(SAVED_TITLE in b for b in blocks), (
            f"the saved note is not in {MARK_OPEN}: {blocks}"
        )
    (transcript,) = main_transcripts(pws.home)  # --continue: one session
    assert any(SAVED_TITLE in c for c in hook_contexts(transcript))
    assert recall_log(pws.memrecall_home)[-1]["decision"] == "inject"


# --- without memrecall ---------------------------------------------------------------------------


def test_plugin_without_memrecall_says_how_to_install(
    claude: Path, pws: Workspace, fake: FakeAnthropic
) -> None:
    """memrecall missing (not on PATH, no MEMRECALL_BIN): prompts go through untouched, and each
    slash command answers with how to install it instead of an obscure failure."""
    proc = with_plugin(claude, pws, fake.url, PAY_PROMPT, memrecall=False)
    ok(proc)
    assert "了解しました" in proc.stdout
    (req,) = fake.main_requests()
    assert PAY_PROMPT in req.text and MARK_OPEN not in req.text
    (transcript,) = main_transcripts(pws.home)
    assert not hook_errors(transcript) and not hook_contexts(transcript)
    assert recall_log(pws.memrecall_home) == []  # memrecall never ran

    for command in ("/memrecall:search PAY-1234", "/memrecall:save the PAY-1234 decision"):
        proc = with_plugin(claude, pws, fake.url, command, memrecall=False)
        shown = proc.stdout + proc.stderr
        assert INSTALL_HINT in shown and "MEMRECALL_BIN" in shown, (command, shown)
    assert len(fake.main_requests()) == 1  # neither command bothered the model


# --- interactive ---------------------------------------------------------------------------------


def _command_turn_done(session: Interactive, args: str) -> bool:
    """Whether the slash command typed with `args` has finished its turn (its user record
    holds `<command-args>args</command-args>`, not the typed text)."""
    path = session.transcript()
    if not path or not path.exists():
        return False
    recs = records(path)
    starts = [
        i
        for i, d in enumerate(recs)
        if d.get("type") == "user"
        and f"<command-args>{args}</command-args>" in str((d.get("message") or {}).get("content"))
    ]
    return bool(starts) and any(
        d.get("type") == "system" and d.get("subtype") == "turn_duration"
        for d in recs[starts[-1] :]
    )


def test_interactive_search_save_and_recall(claude: Path, tmux: str, pws: Workspace) -> None:
    """What a user does in the TUI: `/memrecall:search`, `/memrecall:save`, then a prompt that
    the plugin's hook answers with the note just saved — one session, entrypoint `cli`."""
    require_cli("save")
    rules = [
        Rule(
            when="Save a memory note with memrecall",
            tool_use={"name": "Bash", "input": {"command": SAVE_COMMAND, "description": "save"}},
        )
    ]
    recall_prompt = "INV-4711 の文字化け、どう直したんだっけ"
    with FakeAnthropic(rules=rules) as fake:
        with Interactive(
            claude,
            pws,
            fake.url,
            args=("--plugin-dir", str(REPO)),
            env={"MEMRECALL_BIN": str(memrecall_binary())},
        ) as session:
            for command, args in [
                ("/memrecall:search", "PAY-1234 タイムアウト"),
                ("/memrecall:save", "INV-4711 の文字化け対策"),
            ]:
                session.send(f"{command} {args}")
                deadline = time.monotonic() + 60
                while not _command_turn_done(session, args):
                    assert time.monotonic() < deadline, (
                        f"{command} never finished:\n{session.pane()}"
                    )
                    time.sleep(0.2)
            session.prompt(recall_prompt)
            transcript = session.exit()
        expansion = block_with(fake, "Candidates from `memrecall search --json`")
        assert PAY_TITLE in expansion and PAY_REF in expansion
        (result,) = tool_results(fake)
        assert not result.get("is_error"), result
        later = [r for r in fake.main_requests() if recall_prompt in r.text]
        assert later and any(SAVED_TITLE in b for b in between_markers(later[0].text)), (
            "the note saved in this session was not recalled for the next prompt"
        )
    assert {d["entrypoint"] for d in records(transcript) if d.get("entrypoint")} == {"cli"}
    assert not hook_errors(transcript)
