"""Cutting text to a length: where a cut falls and how a reader sees it.

Two kinds of cut live here:

- for display (`cut`, `one_line`): at most `limit` characters in all, and "…" on the side that
  was cut, so a reader knows there is more;
- for text that is not redacted yet (`cut_head`, `cut_tail`, `cut_noted`, or `whole_tokens=True`):
  a cut never falls inside a token. Half a key no longer looks like a key to any secret
  detector, so a token that straddles the cut is dropped whole.

Standard library only: the hook imports it.
"""

from __future__ import annotations

from . import regexcache

__all__ = ["ELLIPSIS", "cut", "cut_head", "cut_noted", "cut_tail", "one_line"]

ELLIPSIS = "…"

# What a key, token, password or path is made of: a cut inside such a run drops the run.
_TOKEN_RUN = "[A-Za-z0-9+/=_\\-.~:@%!$&*#^]+"
_TOKEN = regexcache.compile(_TOKEN_RUN)
_TOKEN_AT_END = regexcache.compile(_TOKEN_RUN + "$")


def cut(text: str, limit: int, *, keep_end: bool = False, whole_tokens: bool = False) -> str:
    """`text` in at most `limit` characters, "…" marking the side that was cut.

    `keep_end` keeps the end rather than the start (a path's file name says more than its
    root). `whole_tokens` backs off to a token boundary, as `cut_head` does. Whitespace beside
    the ellipsis is dropped: `word …` would waste a character on nothing.
    """
    if len(text) <= limit:
        return text
    room = limit - 1  # one character is the ellipsis
    if room <= 0:
        return ELLIPSIS if limit == 1 else ""
    if keep_end:
        end = cut_tail(text, room) if whole_tokens else text[-room:].lstrip()
        return ELLIPSIS + end
    start = cut_head(text, room) if whole_tokens else text[:room].rstrip()
    return start + ELLIPSIS


def one_line(text: str, limit: int | None = None, *, whole_tokens: bool = False) -> str:
    """`text` on one line (every run of whitespace, newlines included, is one space), cut to
    `limit` characters as `cut` does when a limit is given."""
    flat = " ".join(text.split())
    return flat if limit is None else cut(flat, limit, whole_tokens=whole_tokens)


def cut_head(text: str, limit: int) -> str:
    """The first `limit` characters, never ending inside a token, without a marker.

    Cuts happen before redaction (the transcript parser is stdlib-only), so a token that
    straddles the cut is dropped whole. Japanese text has no spaces and is cut anywhere.
    """
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    head = text[:limit]
    if _TOKEN.fullmatch(text[limit - 1 : limit + 1]):
        run = _TOKEN_AT_END.search(head)
        head = head[: run.start()] if run else head
    return head.rstrip()


def cut_tail(text: str, limit: int) -> str:
    """The last `limit` characters, never starting inside a token (see `cut_head`)."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    tail = text[-limit:]
    if _TOKEN.fullmatch(text[-limit - 1 : len(text) - limit + 1]):
        run = _TOKEN.match(tail)
        tail = tail[run.end() :] if run else tail
    return tail.lstrip()


def cut_noted(text: str, limit: int, *, tail: int = 0) -> str:
    """`text` cut to `limit` characters with a note of how many were left out, whole tokens
    only: `head …[N chars cut]`, or with a `tail` of the last characters kept,
    `head …[N chars cut]… tail`. An LLM reading it knows something is missing, and where."""
    if len(text) <= limit:
        return text
    tail = min(max(tail, 0), limit)
    note = f" …[{len(text) - limit} chars cut]"
    head = cut_head(text, limit - tail)
    return head + note + (f"… {cut_tail(text, tail)}" if tail else "")
