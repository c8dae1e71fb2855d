"""One Claude Code session's recall state: the turn count, each memory's accumulated score,
and what was injected. One small JSON file per session under `state/sessions/`, read and
written under that file's lock so two prompts of one session (a resumed session, a second
window) never both inject the same memory.

The gate (gate.py) decides on a `SessionState`; this module only stores it.
"""

from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from .atomic import LockTimeout, locked, read_json, write_json_atomic

# Memories whose scores a session remembers; the rest have decayed to nothing anyway.
STATE_KEEP = 60
# A session untouched this long is over: its state goes at the next new session.
STATE_MAX_AGE_SECONDS = 7 * 86400


@dataclass
class SessionState:
    turn: int = 0
    # memory key → {"acc": float, "turns": [int], "keywords": [str]}
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    # [{"store", "ref", "key", "turn"}], oldest first
    injected: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Any) -> SessionState:
        """A damaged or foreign file starts the session afresh instead of failing the hook."""
        if (
            not isinstance(data, dict)
            or not isinstance(data.get("turn"), int)
            or not isinstance(data.get("scores"), dict)
            or not isinstance(data.get("injected"), list)
        ):
            return cls()
        return cls(data["turn"], data["scores"], data["injected"])

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "scores": self.scores, "injected": self.injected}

    def injected_keys(self) -> set[str]:
        # The key holds the memory's store root: `bd-1` of two projects are two memories.
        # (State written before keys existed names store and ref only.)
        return {
            str(item.get("key") or f"{item.get('store')}:{item.get('ref')}")
            for item in self.injected
            if isinstance(item, dict)
        }

    def record_injected(self, memories: Iterable[Any]) -> None:
        self.injected += [
            {"store": m.store, "ref": m.ref, "key": m.key, "turn": self.turn} for m in memories
        ]


def state_path(state_dir: Path, session_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "", session_id)[:80]
    if not safe or safe != session_id:
        # Claude Code's ids are UUIDs, already safe: hashing is the rare case, and importing
        # hashlib (OpenSSL) costs the hook ~6 ms, so only then.
        import hashlib

        digest = hashlib.sha256(session_id.encode()).hexdigest()[:16]
        safe = (safe[:40] + "-" if safe else "") + digest
    return state_dir / "sessions" / f"{safe}.json"


@contextmanager
def open_session(state_dir: Path, session_id: str, timeout: float) -> Iterator[SessionState]:
    """The session's state, held under its lock for the block and saved atomically after it.

    Raises `atomic.LockTimeout` when another prompt of the session holds the lock longer
    than `timeout`; the hook then stays quiet. A new session's first prompt also clears
    states idle for a week.
    """
    path = state_path(state_dir, session_id)
    with locked(path, timeout=timeout):
        is_new = not path.exists()
        state = SessionState.from_json(read_json(path, None))
        yield state
        write_json_atomic(path, state.to_json())
    if is_new:
        clean_old_states(path.parent)


def remove_idle_state(path: Path, cutoff: float) -> str:
    """Delete a session's state if nothing has written it since `cutoff` (epoch seconds).

    Decided under the session's own lock, at the moment of deleting: a state found stale a
    moment ago (prune's plan, a directory scan) may have been written since by a session
    that came back, and deleting it would make memrecall inject again what that session
    already has. Returns `removed`, `gone` (nothing there), `in-use` (its lock is held) or
    `touched` (written since the cut-off); only `removed` deleted anything.
    """
    try:
        with locked(path, timeout=0):
            try:
                if path.stat().st_mtime >= cutoff:
                    return "touched"
                path.unlink()
            except FileNotFoundError:
                return "gone"
            # The sidecar goes while held: a hook queued on it finds no state and starts afresh.
            try:
                os.unlink(str(path) + ".lock")
            except OSError:
                pass
            return "removed"
    except LockTimeout:
        return "in-use"


def clean_old_states(folder: Path) -> None:
    cutoff = time.time() - STATE_MAX_AGE_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    old: set[str] = set()
    for entry in entries:
        try:
            if entry.name.endswith(".json") and entry.stat().st_mtime < cutoff:
                if remove_idle_state(Path(entry.path), cutoff) == "removed":
                    old.add(entry.name)
        except OSError:
            continue
    names = {entry.name for entry in entries}
    for entry in entries:
        # A lock sidecar's mtime never changes (flock does not touch it), so its age says
        # nothing: removing the sidecar of a live session lets two processes hold "the"
        # lock at once (different inodes). Only the sidecar of a state that is gone goes.
        state_name = entry.name[: -len(".lock")]
        if entry.name.endswith(".json.lock") and (state_name in old or state_name not in names):
            try:
                if entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue
