"""One sanitiser for every place memrecall shows text it did not write.

Notes, beads exports, summaries, file names and the recall log are written by people,
tools and other repositories; memrecall shows their text in three places, each with its
own way of being abused:

- **Claude's context** (`quoted`): a note must not be able to close the
  `<memrecall-context>` wrapper or open a tag of its own (`<system-reminder>`, …). Rather
  than recognise spellings, the output cannot contain an angle bracket at all: the text is
  folded to a fixed point (NFKC, invisible characters out, HTML entities decoded), then
  every character that reads as `<` or `>` becomes `(` or `)`. Whatever the input, the
  result holds no tag, and it is one line, so the renderer's own prefixes stay its own.
- **The terminal** (`clean`): escape sequences (CSI, OSC — hyperlinks, clipboard writes —,
  DCS, …), C0/C1 controls, 8-bit CSI and bidi/zero-width/format characters are removed, so
  a title can neither drive the terminal nor reorder what is shown around it.
- **JSON for scripts** (`dumps`): lossless; the same characters are written as `\\uXXXX`
  escapes, so the data survives and a `cat` of it is inert.

Cheap enough for the hook: regexes and `str.translate`, no per-character Python loop.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from typing import Any

__all__ = ["clean", "quoted", "dumps", "ANGLES", "FORMAT_RANGES"]

# Unicode category Cf (format: soft hyphen, zero-width, bidi embeddings/overrides/isolates,
# BOM, interlinear annotation, tag characters, …), Unicode 14/15. Written out because
# building it from `unicodedata` costs ~0.3 s at start-up; tests/test_sanitize.py checks it
# against the running Python's database, so a newer Unicode cannot slip past silently.
FORMAT_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(
        re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b != a else "") for a, b in ranges
    )


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Compiled on first use: the hook imports this module for its log line on every prompt,
    and only a prompt that injects needs these (a few ms of compiling)."""
    # Terminal escape sequences, whole, so their payload (a URL, a base64 clipboard) goes too.
    # 7-bit (ESC …) and 8-bit (C1) introducers; string commands end at BEL or ST, or at the
    # end of the line when a note leaves one open.
    sequence = re.compile(
        r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI (SGR colours, cursor moves, …)
        r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])"  # OSC, DCS, SOS, PM, APC
        r"[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
        r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence (or a lone ESC)
    )
    # Every control left (C0 but tab/newline, DEL, C1), format characters, lone surrogates.
    invisible = re.compile(
        "[\x00-\x08\x0b-\x1f\x7f-\x9f" + _class(FORMAT_RANGES) + "\ud800-\udfff]"
    )
    # More than one variation selector in a row carries data, not a glyph variant (the
    # "emoji smuggling" trick); the first one is a real variant and stays.
    selector_run = re.compile(
        "([\ufe00-\ufe0f\U000e0100-\U000e01ef])[\ufe00-\ufe0f\U000e0100-\U000e01ef]+"
    )
    return sequence, invisible, selector_run


_LINE_BREAKS = re.compile("\r\n?|[\x85\u2028\u2029]")
_SPACES = re.compile(r"\s+")

# Everything that reads as an angle bracket once shown: ASCII `<>` (NFKC already folded
# the fullwidth ＜＞ and small-form ﹤﹥ into them), the angle brackets and angle quotation
# marks of every block, doubled angles, and the letters Unicode's confusables table
# (UTS #39) lists for `<` and `>`. tests/test_sanitize.py checks the set against the
# Unicode database (names and decompositions), not against this list.
_LEFT = (
    "<\uff1c\ufe64\u2039\u00ab\u2329\u3008\u300a\u27e8\u27ea\u276c\u276e\u2770\u29fc\u2989"
    "\u2991\u2993\u2995\u29c0\ufe3f\ufe3d\u02c2\u02f1\u1438\u16b2\U0001d236\u226a\u22d8\u226e"
    "\u22d6\u227a\u22b2\u2aa1\u2af7"
)
_RIGHT = (
    ">\uff1e\ufe65\u203a\u00bb\u232a\u3009\u300b\u27e9\u27eb\u276d\u276f\u2771\u29fd\u298a"
    "\u2992\u2994\u2996\u29c1\ufe40\ufe3e\u02c3\u02f2\u1433\U00016f3f\U0001d237\u226b\u22d9\u226f"
    "\u22d7\u227b\u22b3\u2aa2\u2af8\u2e16"
)
ANGLES = _LEFT + _RIGHT
_BRACKETS = str.maketrans({**{c: "(" for c in _LEFT}, **{c: ")" for c in _RIGHT}})
# Arrows and comparisons read better as arrows than as stray parentheses.
_ARROWS = (
    ("<->", "↔"),
    ("<=>", "⇔"),
    ("<-", "←"),
    ("->", "→"),
    ("=>", "⇒"),
    ("<=", "≤"),
    (">=", "≥"),
)
_MAX_FOLDS = 8


def _strip(text: str) -> str:
    sequence, invisible, selector_run = _patterns()
    text = sequence.sub("", text)
    text = invisible.sub("", text)
    return selector_run.sub(r"\1", text)


def clean(text: object, *, one_line: bool = True) -> str:
    """Safe for a terminal: no escape sequence, control, bidi or zero-width character.

    `one_line` (the default) folds every line break and run of white space into one space;
    otherwise line breaks stay (as `\\n`) and tabs become spaces.
    """
    value = _LINE_BREAKS.sub("\n", str(text))
    value = _strip(value.replace("\t", " "))
    if one_line:
        return _SPACES.sub(" ", value).strip()
    return value


def quoted(text: object) -> str:
    """One line of stored text for Claude's context: no tag can be formed from it.

    Folds to a fixed point — NFKC (fullwidth and small forms to ASCII), invisible and
    control characters out, HTML entities decoded (`&lt;`, `&#x3c;`, `&amp;lt;` …) — so no
    spelling survives that a later reader could turn back into `<`; then every angle
    bracket look-alike becomes a parenthesis.
    """
    value = clean(text)
    for _ in range(_MAX_FOLDS):
        folded = unicodedata.normalize("NFKC", value)
        if "&" in folded:
            import html  # only text with an `&` needs it

            folded = html.unescape(folded)
        if folded == value:
            break
        value = clean(folded)
    else:
        # Still changing after many rounds (entities nested eight deep): an `&` that might
        # decode once more goes, rather than loop on attacker-sized input.
        value = value.replace("&", "")
    for arrow, glyph in _ARROWS:
        value = value.replace(arrow, glyph)
    return value.translate(_BRACKETS)


# Characters JSON may carry raw that a terminal acts on (C1, DEL) or that reorder or hide
# text (format characters, line/paragraph separators, surrogates).
@lru_cache(maxsize=1)
def _json_unsafe() -> re.Pattern[str]:
    return re.compile("[\x7f-\x9f\u2028\u2029" + _class(FORMAT_RANGES) + "\ud800-\udfff]")


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def dumps(value: Any, **kwargs: Any) -> str:
    """`json.dumps` (UTF-8, not ASCII-escaped) with every terminal-unsafe character escaped.

    Structural JSON is ASCII, so such characters can only sit inside strings, where a
    `\\uXXXX` escape is the same value: the data is unchanged for any JSON reader.
    """
    kwargs.setdefault("ensure_ascii", False)
    return _json_unsafe().sub(_json_escape, json.dumps(value, **kwargs))
