"""JSON text changed the way a person edits it: only what changed is rewritten.

settings.json belongs to the user. Adding one hook must not reindent, reorder or respell the
rest of the file, so the new text is the old text with the changed values spliced in, each
written in the file's own style (indent unit, spacing around `:`, line endings). Numbers keep
the text the user wrote (`JsonNumber`). A level the splice cannot place safely (duplicate or
reordered keys, items both added and removed) is rewritten whole at that level, and a result
that does not read back as the wanted value falls back to the whole file in its own style.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import pairwise
from typing import Any, Self

__all__ = ["JsonNumber", "Style", "detect_style", "dumps", "loads", "rewrite"]


class JsonNumber(float):
    """A JSON number as the user wrote it. Its value serves comparisons; `dumps` writes its
    text back, so `1e999` never becomes `Infinity` (not JSON) and `0.30000000000000001` keeps
    its digits."""

    text: str

    def __new__(cls, text: str) -> Self:
        number = super().__new__(cls, text)
        number.text = text
        return number


def _int_or_text(text: str) -> int | JsonNumber:
    # Python refuses to turn more than 4,300 digits into an int; the text is kept instead.
    return int(text) if len(text) < 4000 else JsonNumber(text)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


_DECODER = json.JSONDecoder(
    parse_float=JsonNumber, parse_int=_int_or_text, parse_constant=_no_constant
)
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LINE_INDENT = re.compile(r"[ \t]*")


def loads(text: str) -> Any:
    """Parse strictly: NaN/Infinity raise ValueError (Claude Code would not read them)."""
    return _DECODER.decode(text)


def dumps(value: Any, indent: str | None = None, separators: tuple[str, str] = (", ", ": ")) -> str:
    """JSON text of `value`, every `JsonNumber` spelled as the user wrote it."""
    texts: list[str] = []
    nonce = os.urandom(8).hex()  # unguessable: no string in the file can pose as a marker

    def mark(item: Any) -> Any:
        if isinstance(item, JsonNumber):
            texts.append(item.text)
            return f"\x00{nonce}:{len(texts) - 1}"
        if isinstance(item, dict):
            return {k: mark(v) for k, v in item.items()}
        if isinstance(item, list):
            return [mark(v) for v in item]
        return item

    text = json.dumps(
        mark(value), indent=indent, separators=separators, ensure_ascii=False, allow_nan=False
    )
    if not texts:
        return text
    return re.sub(rf'"\\u0000{nonce}:(\d+)"', lambda m: texts[int(m[1])], text)


@dataclass(frozen=True)
class Style:
    indent: str | None = "  "  # None: the file is one line
    colon: str = ": "
    comma: str = ", "  # between members and items written on one line
    newline: str = "\n"


@dataclass(frozen=True)
class _Member:
    key: str
    key_start: int
    key_end: int
    start: int
    end: int
    value: Any


def _skip(text: str, at: int) -> int:
    match = _WHITESPACE.match(text, at)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _scan(text: str, at: int) -> tuple[Any, int]:
    try:
        return _DECODER.scan_once(text, at)  # type: ignore[attr-defined]
    except StopIteration:
        raise ValueError(f"no JSON value at offset {at}") from None


def _expect(text: str, at: int, char: str) -> None:
    if text[at : at + 1] != char:
        raise ValueError(f"expected {char!r} at offset {at}")


def _members(text: str, start: int) -> list[_Member]:
    """The members of the object starting at `start`, with where each key and value lie."""
    _expect(text, start, "{")
    at = _skip(text, start + 1)
    members: list[_Member] = []
    if text[at : at + 1] == "}":
        return members
    while True:
        _expect(text, at, '"')
        key, key_end = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
        colon = _skip(text, key_end)
        _expect(text, colon, ":")
        value_start = _skip(text, colon + 1)
        value, value_end = _scan(text, value_start)
        members.append(_Member(key, at, key_end, value_start, value_end, value))
        at = _skip(text, value_end)
        if text[at : at + 1] == "}":
            return members
        _expect(text, at, ",")
        at = _skip(text, at + 1)


def _items(text: str, start: int) -> list[tuple[int, int, Any]]:
    """(start, end, value) of each item of the array starting at `start`."""
    _expect(text, start, "[")
    at = _skip(text, start + 1)
    items: list[tuple[int, int, Any]] = []
    if text[at : at + 1] == "]":
        return items
    while True:
        value, end = _scan(text, at)
        items.append((at, end, value))
        at = _skip(text, end)
        if text[at : at + 1] == "]":
            return items
        _expect(text, at, ",")
        at = _skip(text, at + 1)


def detect_style(text: str) -> Style:
    """The indent unit (spaces, tabs, or one line), `:` spacing and line ending a file uses,
    read from its first members; the defaults (2 spaces) for an empty or unusual file."""
    newline = "\r\n" if "\r\n" in text else "\n"
    start = _skip(text, 0)
    try:
        members = _members(text, start) if text[start : start + 1] == "{" else []
    except (ValueError, RecursionError):
        members = []
    if not members:
        return Style(newline=newline)
    first = members[0]
    opening = text[start + 1 : first.key_start]
    colon = text[first.key_end : first.start]
    colon = colon if "\n" not in colon and "\r" not in colon else ": "
    if "\n" in opening:
        return Style(opening.rsplit("\n", 1)[1], colon, newline=newline)
    comma = ", " if colon.endswith(" ") else ","
    if len(members) > 1:
        between = text[first.end : members[1].key_start]
        comma = between if "\n" not in between and "\r" not in between else comma
    return Style(None, colon, comma, newline)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text would be: key order, int vs float and a number's spelling count."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, JsonNumber) or isinstance(b, JsonNumber):
        return isinstance(a, JsonNumber) and isinstance(b, JsonNumber) and a.text == b.text
    return type(a) is type(b) and a == b


def _render(value: Any, line_indent: str, style: Style, one_line: bool) -> str:
    if one_line or style.indent is None:
        return dumps(value, None, (style.comma, style.colon))
    return dumps(value, style.indent, (",", style.colon)).replace("\n", style.newline + line_indent)


def _line_indent(text: str, at: int) -> str:
    match = _LINE_INDENT.match(text, text.rfind("\n", 0, at) + 1)
    assert match is not None
    return match.group()


_Edit = tuple[int, int, str]  # replace text[start:end] with this


def _patch(
    text: str, start: int, end: int, old: Any, new: Any, style: Style, one_line: bool
) -> list[_Edit]:
    """Edits turning the value at text[start:end] (`old`) into `new`."""
    if _same(old, new):
        return []
    edits: list[_Edit] | None = None
    if isinstance(old, dict) and isinstance(new, dict) and old and new:
        edits = _patch_object(text, start, old, new, style)
    elif isinstance(old, list) and isinstance(new, list) and old and new:
        edits = _patch_array(text, start, old, new, style)
    if edits is None:
        return [(start, end, _render(new, _line_indent(text, start), style, one_line))]
    return edits


def _gap(text: str, opening: int, spans: list[tuple[int, int]], style: Style) -> str:
    """What separates neighbours in a container (comma and whitespace): copied from the last
    pair, or made from the line break after the opening bracket when there is one."""
    if len(spans) > 1:
        return text[spans[-2][1] : spans[-1][0]]
    after_opening = text[opening + 1 : spans[0][0]]
    return "," + after_opening if "\n" in after_opening else style.comma


def _patch_object(
    text: str, start: int, old: dict[str, Any], new: dict[str, Any], style: Style
) -> list[_Edit] | None:
    members = _members(text, start)
    keys = [m.key for m in members]
    if len(set(keys)) != len(keys):
        return None  # which duplicate wins is the reader's choice: rewrite the object whole
    if [k for k in keys if k in new] != [k for k in new if k in old]:
        return None
    removed = [i for i, m in enumerate(members) if m.key not in new]
    added = [k for k in new if k not in old]
    if removed and added or added and list(new)[-len(added) :] != added:
        return None  # new keys go last, as a person appends them
    gap = _gap(text, start, [(m.key_start, m.end) for m in members], style)
    one_line = "\n" not in gap
    edits: list[_Edit] = []
    for member in members:
        if member.key in new:
            edits += _patch(
                text, member.start, member.end, member.value, new[member.key], style, one_line
            )
    for first, last in _runs(removed):
        if first > 0:
            edits.append((members[first - 1].end, members[last].end, ""))
        else:
            edits.append((members[0].key_start, members[last + 1].key_start, ""))
    if added:
        indent = "" if one_line else gap.rsplit("\n", 1)[1]
        colon = text[members[-1].key_end : members[-1].start]
        colon = colon if "\n" not in colon else style.colon
        inserted = "".join(
            f"{gap}{dumps(key)}{colon}{_render(new[key], indent, style, one_line)}" for key in added
        )
        edits.append((members[-1].end, members[-1].end, inserted))
    return edits


def _patch_array(
    text: str, start: int, old: list[Any], new: list[Any], style: Style
) -> list[_Edit] | None:
    items = _items(text, start)
    gap = _gap(text, start, [(s, e) for s, e, _ in items], style)
    one_line = "\n" not in gap
    indent = "" if one_line else gap.rsplit("\n", 1)[1]

    def key(value: Any) -> str:
        return dumps(value, None, (",", ":"))

    opcodes = SequenceMatcher(
        None, [key(v) for v in old], [key(v) for v in new], autojunk=False
    ).get_opcodes()
    kinds = {op for op, *_ in opcodes}
    if {"insert", "delete"} <= kinds:
        return None
    edits: list[_Edit] = []
    for op, i1, i2, j1, j2 in opcodes:
        if op == "replace":
            if i2 - i1 != j2 - j1:
                return None
            for (s, e, value), wanted in zip(items[i1:i2], new[j1:j2]):
                edits += _patch(text, s, e, value, wanted, style, one_line)
        elif op == "delete":
            if i1 > 0:
                edits.append((items[i1 - 1][1], items[i2 - 1][1], ""))
            elif i2 < len(items):
                edits.append((items[0][0], items[i2][0], ""))
            else:
                return None
        elif op == "insert":
            rendered = [_render(v, indent, style, one_line) for v in new[j1:j2]]
            if i1 > 0:
                at = items[i1 - 1][1]
                edits.append((at, at, "".join(gap + r for r in rendered)))
            else:
                at = items[0][0]
                edits.append((at, at, "".join(r + gap for r in rendered)))
    return edits


def _runs(indexes: list[int]) -> list[tuple[int, int]]:
    """Consecutive indexes grouped: [1, 2, 5] → [(1, 2), (5, 5)]."""
    runs: list[tuple[int, int]] = []
    for index in indexes:
        if runs and runs[-1][1] == index - 1:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    return runs


def _apply(text: str, edits: list[_Edit]) -> str:
    ordered = sorted(edits, key=lambda e: (e[0], e[1]))
    for (_, end, _), (start, _, _) in pairwise(ordered):
        if end > start:
            raise ValueError("overlapping edits")
    pieces: list[str] = []
    at = 0
    for start, end, replacement in ordered:
        pieces += [text[at:start], replacement]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def rewrite(old_text: str, new: Any) -> str:
    """`old_text` (JSON) changed only where `new` differs from the value it holds; the whole
    value in the file's own style when the text holds none. Raises RecursionError for a value
    nested too deeply to write."""
    style = detect_style(old_text)
    start = _skip(old_text, 0)
    if start == len(old_text):
        return _render(new, "", style, False) + style.newline
    end = len(old_text.rstrip(" \t\r\n"))
    try:
        old = loads(old_text)
        edits = _patch(old_text, start, end, old, new, style, style.indent is None)
        patched = _apply(old_text, edits)
        if _same(loads(patched), new):
            return patched
    except (ValueError, RecursionError):
        pass
    return old_text[:start] + _render(new, "", style, False) + old_text[end:]
