"""Helpers for the end-to-end suite: the real Claude Code CLI against a loopback model stand-in.

Self-contained on purpose (CI runs a clean clone without ../shared): the Messages API stand-in
and the tmux driver below are small re-implementations of ../shared/tools/fake_anthropic_api.py
and ../shared/tools/claude_session.py. The stand-in runs inside the pytest process (a thread on
a free loopback port), so a test can never leak it; every tmux session is killed in `finally`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parents[2]
VERSION_FILE = Path(__file__).with_name("claude-code-version.txt")
E2E_PREFIX = Path(os.environ.get("MEMRECALL_E2E_PREFIX", REPO / ".e2e"))
API_KEY = "sk-ant-offline-test-key-000000"
MARK_OPEN, MARK_CLOSE = "<memrecall-context>", "</memrecall-context>"
NOW = "2026-12-02T09:00:00+09:00"
E2E_DEADLINE_MS = 4000


# --- what is installed ------------------------------------------------------------------------


def pinned_version() -> str:
    return VERSION_FILE.read_text(encoding="utf-8").strip()


def claude_binary() -> tuple[Path | None, str]:
    """The pinned Claude Code binary, or None and the reason it cannot be used."""
    override = os.environ.get("MEMRECALL_E2E_CLAUDE")
    path = (
        Path(override)
        if override
        else (E2E_PREFIX / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude")
    )
    if not path.is_file() or not os.access(path, os.X_OK):
        return None, (
            f"Claude Code {pinned_version()} is not installed at {path} "
            "(run scripts/e2e-install; it needs npm and the npm registry)"
        )
    try:
        out = subprocess.run(
            [str(path), "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            env=base_env(Path("/nonexistent-home")),
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} --version failed: {exc}"
    version = out.split()[0] if out else "?"
    if version != pinned_version():
        return None, (
            f"{path} is Claude Code {version!r}, but tests/e2e/claude-code-version.txt pins "
            f"{pinned_version()}; rerun scripts/e2e-install"
        )
    return path, ""


def memrecall_binary() -> Path:
    """The memrecall console script of the interpreter running the tests (absolute)."""
    exe = Path(sys.executable).parent / "memrecall"
    if exe.exists():
        return exe
    found = shutil.which("memrecall")
    if not found:
        raise RuntimeError("memrecall console script not found; pip install -e . first")
    return Path(found)


def memrecall_has(command: str) -> bool:
    out = subprocess.run(
        [str(memrecall_binary()), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    ).stdout
    return re.search(rf"^\s*[│|]?\s*{re.escape(command)}\b", out, re.M) is not None


# --- environment and settings -----------------------------------------------------------------


def _clean_path() -> str:
    """PATH without the venv's bin: the hook must work by its absolute path, as for a user."""
    venv_bin = str(Path(sys.executable).parent)
    parts = [
        p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and p != venv_bin
    ]
    return os.pathsep.join(parts)


def base_env(home: Path, base_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "PATH": _clean_path(),
        "LANG": "C.UTF-8",
        "TERM": "xterm-256color",
        "ANTHROPIC_API_KEY": API_KEY,
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    env.update(extra)
    return env


def prepare_home(home: Path, cwd: Path) -> None:
    """Pre-answer onboarding, folder trust and the API-key question in HOME/.claude.json."""
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    cfg_path = home / ".claude.json"
    cfg = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
    cfg.update(
        {
            "hasCompletedOnboarding": True,
            "lastOnboardingVersion": "9.9.9",
            "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        }
    )
    cfg.setdefault("projects", {})[str(cwd.resolve())] = {
        "hasTrustDialogAccepted": True,
        "hasCompletedProjectOnboarding": True,
    }
    cfg_path.write_text(json.dumps(cfg, indent=2))


def install_hook(home: Path, env: dict[str, str]) -> str:
    """Put memrecall's UserPromptSubmit hook into HOME/.claude/settings.json.

    The ONE place the suite creates hook settings. With `memrecall init` available it is what
    runs (the issue demands that init's settings are the ones the real Claude Code accepts);
    otherwise the settings DESIGN.md documents are written by hand. Returns "init" or "manual".
    """
    if memrecall_has("init"):
        proc = subprocess.run(
            [str(memrecall_binary()), "init"],
            capture_output=True,
            text=True,
            env={**os.environ, **env, "HOME": str(home)},
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            raise AssertionError(
                f"memrecall init failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return "init"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    command = f"{shlex.quote(str(memrecall_binary()))} recall"
    settings.write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {"hooks": [{"type": "command", "command": command, "timeout": 10}]}
                    ]
                }
            },
            indent=2,
        )
    )
    return "manual"


def hook_commands(home: Path) -> list[str]:
    data = json.loads((home / ".claude" / "settings.json").read_text())
    return [
        h.get("command", "")
        for group in data.get("hooks", {}).get("UserPromptSubmit", [])
        for h in group.get("hooks", [])
    ]


# --- the model stand-in -----------------------------------------------------------------------


def request_text(req: Any) -> str:
    """Every string of a request (system, messages, nested content blocks), newline-joined."""
    parts: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, str):
            parts.append(x)
        elif isinstance(x, list):
            for i in x:
                walk(i)
        elif isinstance(x, dict):
            for k in ("text", "content", "system", "messages"):
                if k in x:
                    walk(x[k])

    if isinstance(req, dict):
        walk(req.get("system", ""))
        walk(req.get("messages", []))
    return "\n".join(parts)


def last_user_text(req: dict[str, Any]) -> tuple[str, bool]:
    """(text of the last user message, whether it carries a tool_result)."""
    for msg in reversed(req.get("messages", [])):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            return content, False
        has_result = any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content or []
        )
        return request_text({"messages": [msg]}), has_result
    return "", False


@dataclass
class Rule:
    """Reply to a main-loop request whose last user message contains `when`."""

    when: str
    text: str = ""
    tool_use: dict[str, Any] | None = None
    once: bool = True
    used: bool = False


@dataclass
class Request:
    path: str
    body: dict[str, Any]
    at: float

    @property
    def main_loop(self) -> bool:
        return bool(self.body.get("tools"))

    @property
    def text(self) -> str:
        return request_text(self.body)


class FakeAnthropic:
    """A Messages API stand-in on 127.0.0.1:<free port>, run in a thread of this process.

    Main-loop requests (those offering tools) are answered by the first matching Rule, by
    `after_tool` when the last user message is a tool result, else by `reply`. Other requests
    (titles, `claude -p --tools ""`, the summarizer) get `side_reply`, or, when their text has
    `## ` headings (a summary template), each heading followed by one bullet.
    """

    def __init__(
        self,
        rules: list[Rule] | None = None,
        reply: str = "了解しました。",
        after_tool: str = "確認しました。",
        side_reply: str | None = None,
        delay: float = 0.0,
    ) -> None:
        self.rules = list(rules or [])
        self.reply, self.after_tool, self.side_reply = reply, after_tool, side_reply
        self.delay = delay
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # lifecycle
    def __enter__(self) -> "FakeAnthropic":
        handler = _make_handler(self)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, name="fake-anthropic", daemon=True
        )
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
        if self.thread:
            self.thread.join(timeout=5)

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    # what was asked
    def messages(self) -> list[Request]:
        with self.lock:
            return [
                r
                for r in self.requests
                if r.path.startswith("/v1/messages")
                and not r.path.startswith("/v1/messages/count_tokens")
            ]

    def main_requests(self) -> list[Request]:
        return [r for r in self.messages() if r.main_loop]

    def side_requests(self) -> list[Request]:
        return [r for r in self.messages() if not r.main_loop]

    # answers
    def main_blocks(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        text, is_tool_result = last_user_text(req)
        with self.lock:
            for rule in self.rules:
                if rule.used and rule.once:
                    continue
                if rule.when in text and not is_tool_result:
                    rule.used = True
                    blocks: list[dict[str, Any]] = []
                    if rule.text:
                        blocks.append({"type": "text", "text": rule.text})
                    if rule.tool_use:
                        blocks.append(
                            {
                                "type": "tool_use",
                                "id": "toolu_" + uuid.uuid4().hex[:20],
                                "name": rule.tool_use["name"],
                                "input": rule.tool_use["input"],
                            }
                        )
                    return blocks
        return [{"type": "text", "text": self.after_tool if is_tool_result else self.reply}]

    def side_blocks(self, req: dict[str, Any]) -> list[dict[str, Any]]:
        if self.side_reply is not None:
            return [{"type": "text", "text": self.side_reply}]
        heads: list[str] = []
        for h in re.findall(r"^## .+$", request_text(req), re.M):
            if h not in heads:
                heads.append(h)
        if heads:
            return [
                {
                    "type": "text",
                    "text": "\n".join(f"{h}\n- テスト要約 summary line\n" for h in heads),
                }
            ]
        return [{"type": "text", "text": self.reply}]


def _make_handler(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("content-length", 0) or 0))
            try:
                req = json.loads(body)
            except ValueError:
                req = {}
            with fake.lock:
                fake.requests.append(
                    Request(self.path, req if isinstance(req, dict) else {}, time.time())
                )
            if fake.delay:
                time.sleep(fake.delay)
            if self.path.startswith("/v1/messages/count_tokens"):
                return self._json({"input_tokens": 10})
            if not self.path.startswith("/v1/messages"):
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            blocks = fake.main_blocks(req) if req.get("tools") else fake.side_blocks(req)
            stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
            mid, model = "msg_" + uuid.uuid4().hex[:24], req.get("model", "claude")
            usage = {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            }
            if not req.get("stream"):
                return self._json(
                    {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": blocks,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": usage,
                    }
                )
            out: list[bytes] = []

            def ev(kind: str, data: dict[str, Any]) -> None:
                out.append(
                    f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
                )

            ev(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": usage,
                    },
                },
            )
            for i, b in enumerate(blocks):
                if b["type"] == "text":
                    ev(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": i,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                    ev(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": b["text"]},
                        },
                    )
                else:
                    ev(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": i,
                            "content_block": {
                                "type": "tool_use",
                                "id": b["id"],
                                "name": b["name"],
                                "input": {},
                            },
                        },
                    )
                    ev(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": json.dumps(b["input"], ensure_ascii=False),
                            },
                        },
                    )
                ev("content_block_stop", {"type": "content_block_stop", "index": i})
            ev(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            )
            ev("message_stop", {"type": "message_stop"})
            payload = b"".join(out)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:  # noqa: N802
            self._json({})

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def _json(self, d: dict[str, Any]) -> None:
            b = json.dumps(d, ensure_ascii=False).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)

    return Handler


# --- transcripts and logs ---------------------------------------------------------------------


def records(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict):
            out.append(d)
    return out


def transcripts(home: Path) -> list[Path]:
    projects = home / ".claude" / "projects"
    return sorted(projects.rglob("*.jsonl")) if projects.exists() else []


def main_transcripts(home: Path) -> list[Path]:
    return [
        p
        for p in transcripts(home)
        if "subagents" not in p.parts and not p.name.startswith("agent-")
    ]


def hook_contexts(path: Path) -> list[str]:
    """The additionalContext strings of every hook_additional_context attachment."""
    out = []
    for d in records(path):
        att = d.get("attachment") if d.get("type") == "attachment" else None
        if isinstance(att, dict) and att.get("type") == "hook_additional_context":
            content = att.get("content")
            out.append("\n".join(content) if isinstance(content, list) else str(content))
    return out


def turns_done(path: Path | None) -> int:
    if not path or not path.exists():
        return 0
    return sum(
        1
        for d in records(path)
        if d.get("type") == "system" and d.get("subtype") == "turn_duration"
    )


def _turns_after(path: Path | None, prompt: str) -> int:
    """How many turn ends are recorded after the (last) typed user record holding `prompt`."""
    if not path or not path.exists():
        return 0
    recs = records(path)
    start = None
    for i, d in enumerate(recs):
        if (
            d.get("type") == "user"
            and isinstance((d.get("message") or {}).get("content"), str)
            and prompt in d["message"]["content"]
        ):
            start = i
    if start is None:
        return 0
    return sum(
        1 for d in recs[start:] if d.get("type") == "system" and d.get("subtype") == "turn_duration"
    )


def recall_log(memrecall_home: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in sorted((memrecall_home / "logs").glob("recall-*.jsonl")):
        out.extend(records(p))
    return out


def between_markers(text: str) -> list[str]:
    return re.findall(re.escape(MARK_OPEN) + r"(.*?)" + re.escape(MARK_CLOSE), text, re.S)


# --- running Claude Code ----------------------------------------------------------------------


@dataclass
class Workspace:
    """A throw-away user: HOME, a project folder, MEMRECALL_HOME and the stores."""

    root: Path
    home: Path
    cwd: Path
    memrecall_home: Path
    stores: dict[str, str] = field(default_factory=dict)
    hook_setup: str = ""  # "init" (memrecall init wrote the settings) or "manual"

    # "manual": the index built by `build_index` answers and no hook starts a detached refresh
    # (test_background_index_build_inside_claude_code sets "" to test exactly that).
    index_mode: str = "manual"

    def memrecall_env(self) -> dict[str, str]:
        env = {
            "MEMRECALL_HOME": str(self.memrecall_home),
            "MEMRECALL_NOW": NOW,
            "MEMRECALL_TOKENIZER": "auto",
            **self.stores,
        }
        if self.index_mode:
            env["MEMRECALL_INDEX"] = self.index_mode
        return env

    def build_index(self) -> None:
        proc = subprocess.run(
            [str(memrecall_binary()), "index", "build"],
            capture_output=True,
            text=True,
            env={**os.environ, **self.memrecall_env(), "HOME": str(self.home)},
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
        if proc.returncode != 0:
            raise AssertionError(
                f"memrecall index build failed ({proc.returncode}):\n{proc.stderr}"
            )


def run_headless(
    claude: Path,
    ws: Workspace,
    base_url: str,
    prompt: str,
    *args: str,
    timeout: float = 90,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    full = base_env(ws.home, base_url, **ws.memrecall_env(), **(env or {}))
    return subprocess.run(
        [str(claude), "-p", prompt, *args],
        cwd=ws.cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _tmux(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=check)


ALLOW = ["Bash", "Edit", "Write", "Read", "Glob", "Grep", "Agent", "Task", "TodoWrite"]


class Interactive:
    """One interactive Claude Code session in a private tmux server; killed on exit."""

    def __init__(
        self,
        claude: Path,
        ws: Workspace,
        base_url: str,
        timeout: float = 60,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> None:
        self.claude, self.ws, self.base_url, self.timeout = claude, ws, base_url, timeout
        self.env = env or {}
        self.args = args  # more `claude` options, e.g. ("--plugin-dir", path)
        self.name = f"mre2e{os.getpid()}{uuid.uuid4().hex[:6]}"
        self.socket = str(ws.root / "tmux.sock")
        self.before: set[Path] = set()
        self.prompts = 0

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _tmux("-S", self.socket, *args)

    def __enter__(self) -> "Interactive":
        prepare_home(self.ws.home, self.ws.cwd)
        self.before = set(main_transcripts(self.ws.home))
        env = base_env(self.ws.home, self.base_url, **self.ws.memrecall_env(), **self.env)
        perm = json.dumps({"permissions": {"allow": ALLOW, "defaultMode": "acceptEdits"}})
        envs = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        cmd = (
            f"cd {shlex.quote(str(self.ws.cwd))} && exec env -i {envs} "
            f"{shlex.quote(str(self.claude))} --settings {shlex.quote(perm)} "
            f"{' '.join(shlex.quote(a) for a in self.args)}"
        )
        proc = self.tmux("new-session", "-d", "-s", self.name, "-x", "160", "-y", "50", cmd)
        if proc.returncode != 0:
            raise RuntimeError(f"tmux new-session failed: {proc.stderr}")
        try:
            self._wait(self._ready, "the input box")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.tmux("kill-server")
        try:
            os.unlink(self.socket)
        except OSError:
            pass

    def _ready(self) -> bool:
        pane = self.pane()
        return "❯" in pane and any(
            s in pane for s in ("mode", "for shortcuts", "shift+tab", "accept edits")
        )

    def pane(self) -> str:
        return self.tmux("capture-pane", "-t", self.name, "-p").stdout

    def _wait(self, cond: Callable[[], bool], what: str, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; screen:\n{self.pane()}")

    def transcript(self) -> Path | None:
        new = [p for p in main_transcripts(self.ws.home) if p not in self.before]
        return max(new, key=lambda p: p.stat().st_mtime) if new else None

    def send(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)
        time.sleep(0.3)
        self.tmux("send-keys", "-t", self.name, "Enter")

    def prompt(self, text: str, turns: int = 1) -> None:
        """Type one prompt; wait until Claude Code records `turns` turn ends after it.

        `turns=2` for a prompt that starts a background agent: its completion notification is
        a turn of its own, and the next prompt must not be typed into it.
        """
        self.send(text)
        self.prompts += 1
        self._wait(
            lambda: _turns_after(self.transcript(), text) >= turns,
            f"turn {self.prompts} ({text!r}) to finish",
        )

    def exit(self) -> Path:
        self.send("/exit")
        deadline = time.monotonic() + 10
        while (
            time.monotonic() < deadline
            and self.tmux("has-session", "-t", self.name).returncode == 0
        ):
            time.sleep(0.2)
        path = self.transcript()
        assert path is not None, "no transcript was written"
        return path


def iter_strings(x: Any) -> Iterator[str]:
    if isinstance(x, str):
        yield x
    elif isinstance(x, list):
        for i in x:
            yield from iter_strings(i)
    elif isinstance(x, dict):
        for v in x.values():
            yield from iter_strings(v)


def processes_in(root: Path) -> list[tuple[int, str]]:
    """Processes (other than us) whose working folder is inside `root`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
            cmd = (
                (entry / "cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode(errors="replace")
                .strip()
            )
        except OSError:
            continue
        if cwd == root or root in cwd.parents:
            found.append((int(entry.name), cmd[:200]))
    return found


# --- small stores -----------------------------------------------------------------------------

PAYMENT_FACT = "PSP へのリクエストのタイムアウトは 7 秒、リトライは 1 回まで"
WEBHOOK_FACT = "capped at six attempts with exponential backoff"
BEADS_FACT = "fail open when the feature-flag service is unreachable"

NOTES = {
    "設計/決済タイムアウト.md": f"""---
title: 決済APIのタイムアウト方針
tags: [決済, PAY-1234]
date: 2026-11-20
---
PAY-1234 で決めたこと: {PAYMENT_FACT}。
タイムアウトした注文は「決済確認中」にして、後から PSP の通知で確定させる。
""",
    "webhook-delivery.md": f"""---
title: Webhook delivery notes
date: 2026-11-20
---
Outgoing webhook deliveries are retried, {WEBHOOK_FACT}.
The signing secret rotates monthly; receivers accept both signatures for a day.
""",
    "release-checklist.md": """---
title: Release checklist
date: 2026-11-01
---
Tag the release, update the changelog, announce it in the team channel.
""",
}

BEADS = [
    {
        "id": "bd-7q2k",
        "title": "Feature flags: " + BEADS_FACT,
        "description": "An outage of the flag service blocks every deploy. "
        + BEADS_FACT.capitalize()
        + ".",
        "status": "open",
        "priority": 1,
        "issue_type": "bug",
        "created_at": "2026-11-25T10:00:00Z",
        "updated_at": "2026-11-25T10:00:00Z",
    },
]


def make_stores(root: Path) -> dict[str, str]:
    """A small vault and beads file; returns the MEMRECALL_* variables pointing at them."""
    vault = root / "vault"
    for rel, text in NOTES.items():
        p = vault / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    beads = root / "project" / ".beads"
    beads.mkdir(parents=True, exist_ok=True)
    (beads / "issues.jsonl").write_text(
        "".join(json.dumps(b, ensure_ascii=False) + "\n" for b in BEADS), encoding="utf-8"
    )
    summaries = root / "summaries"
    summaries.mkdir(parents=True, exist_ok=True)
    return {
        "MEMRECALL_OBSIDIAN": str(vault),
        "MEMRECALL_BEADS": str(beads / "issues.jsonl"),
        "MEMRECALL_SUMMARIES": str(summaries),
    }


def make_workspace(root: Path, with_stores: bool = True) -> Workspace:
    ws = Workspace(
        root=root,
        home=root / "home",
        cwd=root / "work" / "shop-backend",
        memrecall_home=root / "memrecall-home",
    )
    prepare_home(ws.home, ws.cwd)
    ws.memrecall_home.mkdir(parents=True, exist_ok=True)
    # A loaded 2-core CI machine can pass the 1 s default deadline now and then; the deadline
    # itself is tested on its own (test_hook_keeps_its_deadline_when_the_tokenizer_hangs).
    (ws.memrecall_home / "config.toml").write_text(f"[recall]\ndeadline_ms = {E2E_DEADLINE_MS}\n")
    if with_stores:
        ws.stores = make_stores(root / "stores")
    return ws
