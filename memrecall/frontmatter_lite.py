"""Read YAML frontmatter on the hook's hot path without importing yaml (≈17 ms).

Handles what notes and summaries actually use: `key: value`, quoted strings, flow lists
`[a, b]` and block lists. Anything fancier (nested maps, anchors, multi-line scalars)
falls back to PyYAML's safe loader, so nothing is silently misread.
"""

from __future__ import annotations

import re
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][\w .-]*?)\s*:(?:\s+(.*))?$")
_FANCY = re.compile(r"^\s*[|>&*!]|^\s*\{")


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


def _scalar(raw: str) -> Any:
    value = raw.strip()
    if not value:
        return None
    if value[0] in "\"'" and value[-1:] == value[0] and len(value) >= 2:
        return value[1:-1]
    if " #" in value:
        value = value.split(" #", 1)[0].rstrip()
    return value


def _flow_list(raw: str) -> list[Any]:
    inner = raw.strip()[1:-1]
    return [v for v in (_scalar(part) for part in inner.split(",")) if v is not None]


def parse(front: str) -> dict[str, Any]:
    """Parse a frontmatter block; a block that cannot be parsed gives {}."""
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
        elif raw.strip().startswith("[") and raw.strip().endswith("]"):
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
        items = re.split(r"[,\s]+", str(value)) if "," in str(value) or " " in str(value) else [str(value)]
    return [item.strip().lstrip("#") for item in items if item.strip().lstrip("#")]
