"""`memrecall demo`: show what recall injects, and what stays quiet, on sample data."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    app.command(name="demo")(demo_command)


def demo_command(
    home: Annotated[
        Optional[Path],
        typer.Option(
            "--home", help="Keep the demo's state and recall log here (default: a temp dir)."
        ),
    ] = None,
) -> None:
    """Run sample prompts through the real recall path over built-in sample stores.

    Example: memrecall demo
    """
    from rich.console import Console
    from rich.panel import Panel
    from rich.text import Text

    from ..demo import DEMO_NOW, build_demo_index, run_demo

    console = Console()
    console.print(
        "[bold]memrecall demo[/bold] — sample vault, beads file and summaries shipped in the "
        f"package; 'now' is {DEMO_NOW}. Each prompt runs through the same code as the hook.\n"
    )
    with tempfile.TemporaryDirectory(prefix="memrecall-demo-") as tmp:
        root = home or Path(tmp)
        documents, seconds = build_demo_index(root)
        console.print(
            f"[dim]Indexed {documents} documents in {seconds:.1f} s ({root / 'index'}).[/dim]\n"
        )
        steps = run_demo(root)
        fired = 0
        for number, step in enumerate(steps, start=1):
            log = step.result.log
            keywords = ", ".join(log.get("keywords", [])) or "—"
            decision = log.get("decision", "?")
            colour = "green" if decision == "inject" else "yellow"
            console.rule(Text(f"{number}. {step.prompt}", style="bold"))
            console.print(f"[dim]expect:[/dim] {step.expectation}")
            console.print(
                f"[dim]keywords:[/dim] {keywords}  [dim]engine:[/dim] {log.get('engine', '—')}"
            )
            console.print(
                f"[{colour}]{decision}[/{colour}] — {log.get('reason') or 'no reason recorded'} "
                f"[dim]({step.elapsed_ms:.0f} ms)[/dim]"
            )
            if step.result.context:
                fired += 1
                # Text(), not markup: stored notes contain [[wikilinks]] that Rich would eat.
                console.print(
                    Panel(Text(step.result.context), title="additionalContext", expand=False)
                )
        console.rule()
        console.print(
            f"{fired} of {len(steps)} prompts got context; the others stayed quiet. "
            f"Recall log: {root / 'logs'}" + ("" if home else " (temporary, removed now)")
        )
