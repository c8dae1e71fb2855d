"""`memrecall stats`: what the hook did (recall log) and how summarize is keeping up."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer


def register(app: typer.Typer) -> None:
    app.command(name="stats")(stats_command)
    app.command(name="usage")(usage_command)


# stats and usage both bring the verdicts up to date first, unless told not to.
RefreshOption = Annotated[
    bool,
    typer.Option("--refresh/--no-refresh", help="Judge new injections from the transcripts first."),
]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def stats_command(
    since: Annotated[
        Optional[str],
        typer.Option("--since", help="Only log entries newer than this: 7d, 2w, 3m or a date."),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", min=1, max=100, help="How many top keywords and memories.")
    ] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    refresh: RefreshOption = True,
) -> None:
    """Prompts seen, fire rate, zero-candidate rate, hook time, whether Claude used what was
    injected (per store, reason, keyword, and week by week), top keywords and memories, and
    the last summarize run.

    The verdicts are brought up to date from the Claude Code transcripts first (each is read
    once; --no-refresh skips this). `memrecall usage` lists them with their evidence.

    Example: memrecall stats --since 7d
    """
    from ..config import load_settings
    from ..times import parse_since
    from ..stats import compute
    from ._io import show_settings_warnings, utf8_stdio

    utf8_stdio()
    settings = load_settings()
    show_settings_warnings(settings)
    cutoff = parse_since(since, settings.now) if since else None
    if refresh:
        _refresh(settings)
    stats = compute(settings, cutoff)
    data = stats.as_json(top)
    if as_json:
        from ..sanitize import dumps
        from ._io import out

        # The log and the run record hold stored text (titles, refs, errors): escaped, not raw.
        out(dumps(data, indent=1, default=str))
        return
    _render(data, str(settings.logs_dir))


class _Table:
    """A Rich table whose every cell is plain text made safe for a terminal.

    Keywords, refs, titles and error lines come from the recall log and the run record,
    which hold stored text: as a `str`, Rich would read `[link=…]` in a title as markup and
    write the escape itself; `clean` removes escape, control and bidi characters."""

    def __init__(self, **kwargs: Any) -> None:
        from rich.table import Table

        self.table = Table(**kwargs)
        self.add_column = self.table.add_column

    def add_row(self, *cells: object) -> None:
        from rich.text import Text

        from ..sanitize import clean

        self.table.add_row(*(Text(clean(cell)) for cell in cells))


def _refresh(settings: Any) -> None:
    from ..usage import refresh

    if refresh(settings).busy:
        from ._io import err

        err("Another memrecall process is judging injections; showing the verdicts stored so far.")


def _use_line(use: dict[str, Any]) -> str:
    known = use["used"] + use["mentioned"] + use["ignored"]
    share = (lambda n: f" ({n / known:.0%})") if known else (lambda n: "")
    return (
        f"{use['injected']}: used {use['used']}{share(use['used'])}, mentioned {use['mentioned']}"
        f"{share(use['mentioned'])}, ignored {use['ignored']}{share(use['ignored'])}, "
        f"unknown {use['unknown']}"
    )


_USE_COLUMNS = ("injected", "used", "mentioned", "ignored", "unknown", "use")


def _use_cells(use: dict[str, Any]) -> list[str]:
    return [
        str(use["injected"]),
        str(use["used"]),
        str(use["mentioned"]),
        str(use["ignored"]),
        str(use["unknown"]),
        _pct(use["engaged_rate"]),
    ]


# The weekly chart: one row a week, a bar of the memories injected split by verdict.
_BAR_MARKS = (
    ("used", "█", "green"),
    ("mentioned", "▓", "yellow"),
    ("ignored", "░", ""),
    ("unknown", "·", "dim"),
)
CHART_WEEKS = 12


def _chart(weeks: list[dict[str, Any]], width: int) -> Any:
    from rich.text import Text

    shown = weeks[-CHART_WEEKS:]
    most = max((w["injected"] for w in shown), default=0) or 1
    bar_width = max(10, min(40, width - 40))
    text = Text()
    for week in shown:
        text.append(f"{week['week']} ")
        cells = 0
        for verdict, mark, style in _BAR_MARKS:
            n = round(week[verdict] * bar_width / most)
            text.append(mark * n, style=style)
            cells += n
        text.append(" " * (bar_width - cells))
        text.append(
            f" {week['injected']:>4}  fire {_pct(week['fire_rate']):>4}"
            f"  use {_pct(week['engaged_rate']):>4}\n"
        )
    legend = "  ".join(f"{mark} {verdict}" for verdict, mark, _ in _BAR_MARKS)
    text.append(f"{'':11}{legend}\n", style="dim")
    text.append(
        f"{'':11}bar: memories injected · fire: share of prompts that injected\n", style="dim"
    )
    text.append(f"{'':11}use: used or mentioned, of those with a known verdict", style="dim")
    if len(weeks) > len(shown):
        text.append(
            f"\n{'':11}the last {len(shown)} of {len(weeks)} weeks; --json has them all",
            style="dim",
        )
    return text


def _render(data: dict[str, Any], logs_dir: str) -> None:
    from rich.text import Text

    from ..sanitize import clean
    from ._io import console

    con = console()
    if not data["prompts"]:
        since = " since " + str(data["since"]) if data["since"] else ""
        con.print(Text(clean(f"No recall log entries{since} in {logs_dir}.")))
    else:
        overview = _Table(title="recall", show_header=False, title_justify="left")
        overview.add_column("what")
        overview.add_column("value", overflow="fold")
        decisions = ", ".join(
            f"{k} {v}" for k, v in sorted(data["decisions"].items(), key=lambda kv: -kv[1])
        )
        rows = [
            ("period", f"{data['first']} … {data['last']}"),
            ("prompts seen", str(data["prompts"])),
            ("decisions", decisions),
            (
                "fire rate",
                f"{_pct(data['fire_rate'])} of all, "
                f"{_pct(data['fire_rate_considered'])} of non-trivial",
            ),
            (
                "zero-candidate rate",
                f"{_pct(data['zero_candidate_rate'])} of {data['searched']} searches",
            ),
            (
                "hook time",
                f"p50 {_ms(data['hook_ms']['p50'])}, p95 {_ms(data['hook_ms']['p95'])}, "
                f"max {_ms(data['hook_ms']['max'])}",
            ),
            (
                "injected size",
                "—"
                if data["injected_chars_avg"] is None
                else f"{data['injected_chars_avg']:.0f} chars on average",
            ),
            ("tokenizer", ", ".join(f"{k} {v}" for k, v in data["backends"].items()) or "—"),
        ]
        use = data["use"]
        if use["injected"]:
            rows.append(("memories injected", _use_line(use)))
            rows.append(
                (
                    "use rate",
                    f"{_pct(use['engaged_rate'])} used or mentioned, "
                    f"{_pct(use['used_rate'])} used, of those judged",
                )
            )
        if data["last_error"]:
            rows.append(
                ("last error", f"{data['last_error']['ts']}: {data['last_error']['error']}")
            )
        for row in rows:
            overview.add_row(*row)
        con.print(overview.table)
        if data["stores"]:
            stores = _Table(title="per store", title_justify="left", header_style="bold")
            for column in ("store", "searched", "with candidates", "injected", "documents"):
                stores.add_column(column, justify="left" if column == "store" else "right")
            for name, st in data["stores"].items():
                stores.add_row(
                    name,
                    str(st["searched"]),
                    str(st["with_candidates"]),
                    str(st["injected"]),
                    "—" if st["documents"] is None else str(st["documents"]),
                )
            con.print(stores.table)
        if use["injected"]:
            table = _Table(
                title="use of injected memories", title_justify="left", header_style="bold"
            )
            table.add_column("by store / reason", overflow="fold")
            for column in _USE_COLUMNS:
                table.add_column(column, justify="right")
            for name, counts in use["by_store"].items():
                table.add_row(name, *_use_cells(counts))
            table.table.add_section()
            for name, counts in use["by_reason"].items():
                table.add_row(name, *_use_cells(counts))
            con.print(table.table)
            con.print(Text("use by week", style="italic"))
            con.print(_chart(use["weekly"], con.width))
        if data["top_keywords"]:
            by_keyword = {k["keyword"]: k for k in use["by_keyword"]}
            kw = _Table(title="top keywords", title_justify="left", header_style="bold")
            kw.add_column("keyword", overflow="fold")
            for column in ("prompts", "injected", "used", "mentioned", "ignored"):
                kw.add_column(column, justify="right")
            for item in data["top_keywords"]:
                fired = by_keyword.get(item["keyword"])
                counts = [
                    str(fired[c]) if fired else "0"
                    for c in ("injected", "used", "mentioned", "ignored")
                ]
                kw.add_row(item["keyword"], str(item["prompts"]), *counts)
            con.print(kw.table)
        if data["top_memories"]:
            mem = _Table(title="most injected memories", title_justify="left", header_style="bold")
            for column in ("store", "ref", "title", "times", "used", "mentioned"):
                numeric = column in ("times", "used", "mentioned")
                mem.add_column(column, overflow="fold", justify="right" if numeric else "left")
            for item in data["top_memories"]:
                mem.add_row(
                    item["store"],
                    item["ref"],
                    item["title"],
                    str(item["injected"]),
                    str(item["used"]),
                    str(item["mentioned"]),
                )
            con.print(mem.table)
    run = data["summarize"]
    if not run:
        con.print("summarize: never run")
        return
    skipped = run.get("skipped") if isinstance(run.get("skipped"), dict) else {}
    failed = run.get("failed") if isinstance(run.get("failed"), list) else []
    table = _Table(title="last summarize run", show_header=False, title_justify="left")
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row(
        "finished",
        str(run.get("finished") or "not finished (started " + str(run.get("started")) + ")"),
    )
    table.add_row("backend", str(run.get("backend", "—")))
    table.add_row("summarized", str(run.get("summarized", 0)))
    table.add_row("skipped", ", ".join(f"{k} {v}" for k, v in skipped.items()) or "0")
    table.add_row(
        "failed",
        str(len(failed))
        + (
            ": "
            + "; ".join(
                f"{f.get('session', '?')} ({f.get('reason', '?')})"
                for f in failed[:3]
                if isinstance(f, dict)
            )
            if failed
            else ""
        ),
    )
    table.add_row("pending", str(run.get("pending", "—")))
    table.add_row("oldest unsummarized", str(run.get("oldest_unsummarized") or "—"))
    con.print(table.table)


def usage_command(
    since: Annotated[
        Optional[str],
        typer.Option("--since", help="Only injections newer than this: 7d, 2w, 3m or a date."),
    ] = None,
    verdict: Annotated[
        Optional[str],
        typer.Option("--verdict", help="Only this verdict: used, mentioned, ignored or unknown."),
    ] = None,
    session: Annotated[
        Optional[str], typer.Option("--session", help="Only this session id (or its start).")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="How many memories, newest first.")
    ] = 30,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
    refresh: RefreshOption = True,
) -> None:
    """Whether Claude used each memory the hook injected, with the evidence, newest first.

    used: a tool call read its file, ran bd show on its id, or named its path; mentioned:
    Claude's text named its id, title or file name, or quoted its lines; ignored: the turn
    was answered without either; unknown: no transcript (yet).

    Example: memrecall usage --since 7d --verdict ignored
    """
    from ..config import load_settings
    from ..errors import UsageError
    from ..times import parse_since
    from ..usage import VERDICTS, rows_for
    from ._io import err, show_settings_warnings, utf8_stdio

    utf8_stdio()
    if verdict is not None and verdict not in VERDICTS:
        raise UsageError(f"unknown --verdict {verdict!r}; choose {', '.join(VERDICTS)}")
    settings = load_settings()
    show_settings_warnings(settings)
    cutoff = parse_since(since, settings.now) if since else None
    if refresh:
        _refresh(settings)
    shown: list[dict[str, Any]] = []
    for injection, rows in reversed(rows_for(settings, cutoff)):
        if session and not injection.session.startswith(session):
            continue
        for item, reason, row in zip(injection.items, injection.reasons, rows):
            data = (
                row.as_json()
                if row is not None
                else {
                    "entry": injection.entry,
                    "session": injection.session,
                    "ts": injection.ts,
                    "store": str(item.get("store", "?")),
                    "ref": str(item.get("ref", "?")),
                    "title": str(item.get("title", "")),
                    "reason": reason,
                    "verdict": "unknown",
                    "evidence": ["not judged yet"],
                    "transcript": "",
                    "checked": "",
                }
            )
            if verdict is None or data["verdict"] == verdict:
                shown.append(data)
    shown = shown[:limit]
    if as_json:
        from ..sanitize import dumps
        from ._io import out

        out(dumps(shown, indent=1))
        return
    if not shown:
        err(
            f"No injected memories{' since ' + since if since else ''}"
            f"{' with verdict ' + verdict if verdict else ''} in {settings.logs_dir}."
        )
        return
    from ._io import console

    table = _Table(header_style="bold")
    table.add_column("when", overflow="fold")
    table.add_column("memory", overflow="fold", ratio=2)
    table.add_column("verdict")
    table.add_column("evidence", overflow="fold", ratio=3)
    for data in shown:
        when = str(data["ts"])[:16].replace("T", " ")
        memory = f"{data['store']}:{data['ref']}"
        evidence = "; ".join(data["evidence"]) or "—"
        table.add_row(when, memory, data["verdict"], evidence)
    console().print(table.table)
