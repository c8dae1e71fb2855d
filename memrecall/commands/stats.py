"""`memrecall stats`: what the hook did (recall log) and how summarize is keeping up."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer


def register(app: typer.Typer) -> None:
    app.command(name="stats")(stats_command)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} ms"


def stats_command(
    since: Annotated[
        Optional[str], typer.Option("--since", help="Only log entries newer than this: 7d, 2w, 3m or a date.")
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, max=100, help="How many top keywords and memories.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Prompts seen, fire rate, zero-candidate rate, hook time, top keywords and memories, per store,
    and the last summarize run.

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
        decisions = ", ".join(f"{k} {v}" for k, v in sorted(data["decisions"].items(), key=lambda kv: -kv[1]))
        rows = [
            ("period", f"{data['first']} … {data['last']}"),
            ("prompts seen", str(data["prompts"])),
            ("decisions", decisions),
            ("fire rate", f"{_pct(data['fire_rate'])} of all, {_pct(data['fire_rate_considered'])} of non-trivial"),
            ("zero-candidate rate", f"{_pct(data['zero_candidate_rate'])} of {data['searched']} searches"),
            ("hook time", f"p50 {_ms(data['hook_ms']['p50'])}, p95 {_ms(data['hook_ms']['p95'])}, "
                          f"max {_ms(data['hook_ms']['max'])}"),
            ("injected size", "—" if data["injected_chars_avg"] is None else f"{data['injected_chars_avg']:.0f} chars on average"),
            ("tokenizer", ", ".join(f"{k} {v}" for k, v in data["backends"].items()) or "—"),
        ]
        if data["last_error"]:
            rows.append(("last error", f"{data['last_error']['ts']}: {data['last_error']['error']}"))
        for row in rows:
            overview.add_row(*row)
        con.print(overview.table)
        if data["stores"]:
            stores = _Table(title="per store", title_justify="left", header_style="bold")
            for column in ("store", "searched", "with candidates", "injected", "documents"):
                stores.add_column(column, justify="left" if column == "store" else "right")
            for name, st in data["stores"].items():
                stores.add_row(
                    name, str(st["searched"]), str(st["with_candidates"]), str(st["injected"]),
                    "—" if st["documents"] is None else str(st["documents"]),
                )
            con.print(stores.table)
        if data["top_keywords"]:
            kw = _Table(title="top keywords", title_justify="left", header_style="bold")
            kw.add_column("keyword", overflow="fold")
            kw.add_column("prompts", justify="right")
            for item in data["top_keywords"]:
                kw.add_row(item["keyword"], str(item["prompts"]))
            con.print(kw.table)
        if data["top_memories"]:
            mem = _Table(title="most injected memories", title_justify="left", header_style="bold")
            for column in ("store", "ref", "title", "times"):
                mem.add_column(column, overflow="fold", justify="right" if column == "times" else "left")
            for item in data["top_memories"]:
                mem.add_row(item["store"], item["ref"], item["title"], str(item["injected"]))
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
    table.add_row("finished", str(run.get("finished") or "not finished (started " + str(run.get("started")) + ")"))
    table.add_row("backend", str(run.get("backend", "—")))
    table.add_row("summarized", str(run.get("summarized", 0)))
    table.add_row("skipped", ", ".join(f"{k} {v}" for k, v in skipped.items()) or "0")
    table.add_row("failed", str(len(failed)) + (
        ": " + "; ".join(f"{f.get('session', '?')} ({f.get('reason', '?')})" for f in failed[:3] if isinstance(f, dict))
        if failed else ""
    ))
    table.add_row("pending", str(run.get("pending", "—")))
    table.add_row("oldest unsummarized", str(run.get("oldest_unsummarized") or "—"))
    con.print(table.table)
