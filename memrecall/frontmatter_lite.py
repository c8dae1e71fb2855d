"""Read YAML frontmatter on the hook's hot path without importing yaml (≈17 ms).

Handles what notes and summaries actually use: `key: value`, quoted strings, flow lists
`[a, b]` and block lists. Anything fancier (nested maps, anchors, multi-line scalars,
escapes in double quotes) falls back to PyYAML's safe loader, so nothing is silently
misread. Off the hot path memrecall reads and writes frontmatter with python-frontmatter;
tests/test_frontmatter_agreement.py proves both read the fields memrecall uses alike.
"""

from __future__ import annotations

import re
from typing import Any

from . import regexcache

_KEY = regexcache.compile(r"^([A-Za-z_][\w .-]*?)\s*:(?:\s+(.*))?$")
_FANCY = regexcache.compile(r"^\s*[|>&*!]|^\s*\{")


def split(text: str) -> tuple[str | None, str, int]:
    """Return (frontmatter text or None, body, number of lines the frontmatter occupies)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        return None, text, 0
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return None, text, 0
    for index in range(1, min(len(lines), 400)):
        if lines[index].strip() in ("---", "..."):
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 1
    return None, text, 0


_NULLS = frozenset({"null", "Null", "NULL", "~"})


class _NeedsYaml(Exception):
    """A value this reader does not handle exactly: PyYAML reads the whole block."""


def _quoted(value: str) -> tuple[str, str]:
    """A quoted scalar at the start of `value` → (its text, what follows it)."""
    quote = value[0]
    index = 1
    while index < len(value):
        char = value[index]
        if quote == '"' and char == "\\":
            raise _NeedsYaml  # escapes (`\n`, `\u3042`) are PyYAML's to decode
        if char == quote:
            if quote == "'" and value[index + 1 : index + 2] == "'":
                index += 2  # '' is a single quote inside single quotes
                continue
            text = value[1:index]
            return (text.replace("''", "'") if quote == "'" else text), value[index + 1 :]
        index += 1
    raise _NeedsYaml  # the closing quote is on another line


def _scalar(raw: str) -> Any:
    value = raw.strip()
    if not value or value.startswith("#"):
        return None  # `tags: #x` is a comment to YAML: no value
    if value[0] in "\"'":
        text, rest = _quoted(value)
        if rest.strip() and not rest.strip().startswith("#"):
            raise _NeedsYaml
        return text
    if " #" in value:
        value = value.split(" #", 1)[0].rstrip()
    return None if value in _NULLS else value


def _flow_list(raw: str) -> list[Any]:
    """`[a, 'b, c', d] # note` → three items: commas inside quotes stay, a comment goes."""
    value = raw.strip()
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for index, char in enumerate(value[1:], 1):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "]":
            rest = value[index + 1 :].strip()
            if rest and not rest.startswith("#"):
                raise _NeedsYaml
            parts.append("".join(current))
            return [v for v in (_scalar(part) for part in parts) if v is not None]
        elif char in "[{}":
            raise _NeedsYaml  # nested collections
        elif char == ",":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    raise _NeedsYaml  # the list goes on over more lines


def parse(front: str) -> dict[str, Any]:
    """Parse a frontmatter block; a block that cannot be parsed gives {}."""
    try:
        return _parse(front)
    except _NeedsYaml:
        return _yaml_fallback(front)


def _parse(front: str) -> dict[str, Any]:
    data: dict[str, Any] = {}
    current_list: list[Any] | None = None
    for line in front.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") or stripped == "-":
            if current_list is None:
                return _yaml_fallback(front)
            item = _scalar(stripped[1:])
            if item is not None:
                current_list.append(item)
            continue
        if line[:1].isspace():
            return _yaml_fallback(front)
        match = _KEY.match(line)
        if not match:
            return _yaml_fallback(front)
        key, raw = match.group(1).strip(), match.group(2) or ""
        if _FANCY.match(raw):
            return _yaml_fallback(front)
        if not raw.strip():
            current_list = []
            data[key] = current_list
        elif raw.strip().startswith("["):
            data[key] = _flow_list(raw)
            current_list = None
        else:
            data[key] = _scalar(raw)
            current_list = None
    return {k: (None if v == [] else v) for k, v in data.items()}


def _yaml_fallback(front: str) -> dict[str, Any]:
    try:
        import yaml

        loaded = yaml.safe_load(front)
    except Exception:  # malformed YAML in a user's note must not break recall
        return {}
    return loaded if isinstance(loaded, dict) else {}


def as_list(value: Any) -> list[str]:
    """Tags and aliases come as lists, comma/space-separated strings, or nothing."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = [str(v) for v in value if v is not None]
    else:
        text = str(value)
        items = re.split(r"[,\s]+", text) if "," in text or " " in text else [text]
    return [item.strip().lstrip("#") for item in items if item.strip().lstrip("#")]
