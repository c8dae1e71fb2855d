"""Every instant memrecall reads, and the one `--since` / `--older-than` grammar.

Two kinds of text carry times, and they differ in one rule only:

- **Stored values** (transcript timestamps, log entries, frontmatter dates, `MEMRECALL_NOW`)
  are machine-written; one without an offset is UTC.
- **What a person types** (`--since 2026-11-01`) means their own calendar: a bare date is
  local midnight, "since Monday" as they would say it. A time with an offset is that instant.

Ages count back from "now": `12h`, `7d`, `2w`, `3m` (calendar months), `1y`; a bare number
is days. Imported by the hook (config reads `MEMRECALL_NOW`): the standard library only.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

from . import regexcache
from .errors import UsageError

AGE_EXAMPLES = "12h, 7d, 2w, 3m or 1y"
_AGE = regexcache.compile(r"^\s*(\d+)\s*([hdwmy]?)\s*$", re.IGNORECASE)
_BARE_DATE = regexcache.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_instant(text: str) -> datetime:
    """An ISO-8601 date or time (`Z`, a space before the time, no offset = UTC); ValueError else."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    if " " in value[:11]:
        value = value.replace(" ", "T", 1)
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def instant_or_none(value: object) -> datetime | None:
    """A stored time of any shape YAML or JSON gives (str, date, datetime); None when it is none."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return parse_instant(value.strip().strip("'\""))
    except ValueError:
        return None


def minus_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 - months
    year, month = divmod(index, 12)
    # Clamp the day: three months before 31 May is 28/29 February.
    for day in (moment.day, 30, 29, 28):
        try:
            return moment.replace(year=year, month=month + 1, day=day)
        except ValueError:
            continue
    raise AssertionError("unreachable")  # pragma: no cover


def parse_age(spec: str, now: datetime, option: str = "--older-than") -> datetime:
    """`12h`, `7d`, `2w`, `3m`, `1y` or a bare number of days → the instant that long before now."""
    match = _AGE.match(spec or "")
    if not match or int(match[1]) < 1:
        raise UsageError(f"invalid {option} {spec!r}: use a positive age such as {AGE_EXAMPLES}")
    amount, unit = int(match[1]), (match[2] or "d").lower()
    try:
        if unit == "h":
            return now - timedelta(hours=amount)
        if unit == "d":
            return now - timedelta(days=amount)
        if unit == "w":
            return now - timedelta(weeks=amount)
        return minus_months(now, amount if unit == "m" else 12 * amount)
    except (OverflowError, ValueError):  # `99999999999y` reaches before year 1
        raise UsageError(f"invalid {option} {spec!r}: too far back") from None


def parse_since(spec: str, now: datetime, option: str = "--since") -> datetime:
    """An age (see `parse_age`) or a date or time a person typed (a bare date: local midnight)."""
    text = (spec or "").strip()
    if _AGE.match(text):
        return parse_age(text, now, option)
    try:
        if _BARE_DATE.match(text):
            return datetime.fromisoformat(text).astimezone()
        return parse_instant(text)
    except ValueError:
        raise UsageError(
            f"invalid {option} {spec!r}: use an age such as {AGE_EXAMPLES}, "
            "a date such as 2026-11-01 (local midnight) or an ISO time"
        ) from None
