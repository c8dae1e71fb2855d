"""Claude Code transcripts for tests, written record by record as the CLI writes them."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


@dataclass
class Clock:
    """The time the next record gets (several transcripts of one test share it)."""

    now: datetime


class Transcript:
    """Records shaped as Claude Code writes them."""

    def __init__(
        self, projects: Path, cwd: Path, sid: str, clock: Clock, version: str = "2.1.332"
    ) -> None:
        self.projects, self.cwd, self.sid, self.clock, self.version = (
            projects,
            cwd,
            sid,
            clock,
            version,
        )
        self.records: list[dict[str, Any]] = []
        self.parent: str | None = None

    def _stamp(self) -> str:
        self.clock.now += timedelta(milliseconds=300)
        return self.clock.now.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")

    def _add(
        self, record: dict[str, Any], sidechain: bool = False, agent: str | None = None
    ) -> dict[str, Any]:
        rid = str(uuid.uuid4())
        base = {
            "parentUuid": self.parent,
            "isSidechain": sidechain,
            "uuid": rid,
            "timestamp": self._stamp(),
            "sessionId": self.sid,
            "cwd": str(self.cwd),
            "version": self.version,
            "entrypoint": "cli",
            "userType": "external",
        }
        if agent:
            base["agentId"] = agent
        full = {**base, **record}
        self.records.append(full)
        if not sidechain:
            self.parent = rid
        return full

    def prompt(
        self, text: str, context: str | None = None, layout: str = "attachment"
    ) -> "Transcript":
        """A typed prompt; the hook's context saved after it (2.1.x), as a meta reminder
        (2.0.x), or not at all (a version that does not save it)."""
        self._add(
            {"type": "user", "message": {"role": "user", "content": text}, "promptSource": "typed"}
        )
        if context is not None and layout == "attachment":
            self._add(
                {
                    "type": "attachment",
                    "attachment": {
                        "type": "hook_additional_context",
                        "content": [context],
                        "hookName": "UserPromptSubmit",
                        "hookEvent": "UserPromptSubmit",
                    },
                }
            )
        elif context is not None and layout == "reminder":
            self._add(
                {
                    "type": "user",
                    "isMeta": True,
                    "message": {
                        "role": "user",
                        "content": "<system-reminder>\nUserPromptSubmit hook additional context: "
                        f"{context}\n</system-reminder>",
                    },
                }
            )
        if context is not None:
            # Every later model request repeats the context: never an injection of its own.
            self.records.append(
                {"type": "api-request", "timestamp": self._stamp(), "body": {"messages": [context]}}
            )
        return self

    def say(self, text: str, sidechain: bool = False, agent: str | None = None) -> "Transcript":
        self._add(
            {
                "type": "assistant",
                "message": {
                    "id": "msg_" + uuid.uuid4().hex[:12],
                    "role": "assistant",
                    "content": [{"type": "text", "text": text}],
                },
            },
            sidechain,
            agent,
        )
        return self

    def tool(
        self,
        name: str,
        args: dict[str, Any],
        result: str = "ok",
        sidechain: bool = False,
        agent: str | None = None,
    ) -> "Transcript":
        tid = "toolu_" + uuid.uuid4().hex[:16]
        self._add(
            {
                "type": "assistant",
                "message": {
                    "id": "msg_" + uuid.uuid4().hex[:12],
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}],
                },
            },
            sidechain,
            agent,
        )
        self._add(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tid, "content": result}],
                },
            },
            sidechain,
            agent,
        )
        return self

    def agent_prompt(self, text: str, agent: str, sidechain: bool = True) -> "Transcript":
        self._add({"type": "user", "message": {"role": "user", "content": text}}, sidechain, agent)
        return self

    def compact(self) -> "Transcript":
        self._add(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "compactMetadata": {"trigger": "auto"},
            }
        )
        self._add(
            {
                "type": "user",
                "isCompactSummary": True,
                "message": {
                    "role": "user",
                    "content": "This session is being continued from a previous conversation. "
                    "Summary: we looked at "
                    "PAY-1234 and the note we had on it.",
                },
            }
        )
        return self

    def end_turn(self) -> "Transcript":
        self._add({"type": "system", "subtype": "turn_duration", "durationMs": 900})
        return self

    def write(self, path: Path | None = None) -> Path:
        target = path or self.project_dir() / f"{self.sid}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records),
            encoding="utf-8",
        )
        return target

    def project_dir(self) -> Path:
        from memrecall.transcripts import escape_project_dir

        return self.projects / escape_project_dir(self.cwd)
