"""`memrecall init`: install the recall hook into Claude Code, and the daily jobs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from ..install import Schedule


def register(app: typer.Typer) -> None:
    app.command(name="init")(init_command)


def init_command(
    project: Annotated[
        bool,
        typer.Option(
            "--project", help="Use ./.claude/settings.json instead of ~/.claude/settings.json."
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the diff; write nothing.")
    ] = False,
    uninstall: Annotated[
        bool,
        typer.Option(
            "--uninstall", help="Remove only what init added (and the schedule with --schedule)."
        ),
    ] = False,
    schedule: Annotated[
        bool,
        typer.Option(
            "--schedule", help="Also install the daily summarize + prune job on this machine."
        ),
    ] = False,
    platform: Annotated[
        Optional[str],
        typer.Option(
            "--platform",
            help="Print the schedule for linux, macos or windows (default: this machine).",
        ),
    ] = None,
    timeout: Annotated[
        int,
        typer.Option(
            "--timeout", min=1, max=600, help="Hook timeout in seconds written to settings.json."
        ),
    ] = 10,
) -> None:
    """Merge the UserPromptSubmit hook into Claude Code's settings.json (backup first).

    Keeps every other setting and hook, is idempotent, and writes the absolute path of
    this memrecall so the hook works without the venv on PATH. Also prints the daily
    summarize + prune job for cron / launchd / Task Scheduler (--schedule installs it); cron
    and launchd run $MEMRECALL_HOME/bin/memrecall-daily, a script init writes.

    Example: memrecall init --dry-run
    """
    from ..config import load_settings
    from ..install import (
        build_schedule,
        current_platform,
        hook_command,
        install_schedule,
        plan_init,
        settings_path,
    )
    from ._io import err, out, show_settings_warnings, utf8_stdio

    import shutil

    utf8_stdio()
    settings = load_settings()
    show_settings_warnings(settings)
    path = settings_path(project)
    plan = plan_init(path, hook_command(), timeout=timeout, uninstall=uninstall)
    claude = shutil.which(settings.summarize.claude_command)
    sched = build_schedule(platform or current_platform(), settings.home, claude=claude)
    if schedule and not dry_run and sched.platform != current_platform():
        from ..errors import UsageError

        # Refuse before anything is written: half an install is worse than none.
        raise UsageError(
            f"--schedule installs only for this machine ({current_platform()}); "
            f"--platform {sched.platform} just prints"
        )

    if dry_run:
        diff = plan.diff()
        if diff:
            out(diff)
            err(
                f"Dry run: {path} would be "
                f"{'changed' if plan.old_text is not None else 'created'} as shown; "
                "nothing was written."
            )
        else:
            err(f"Dry run: {path} needs no change ({_describe(plan.status)}); nothing was written.")
        if schedule:
            _say_dry_run_schedule(sched, uninstall, sched.platform == current_platform())
        return

    from ..install import apply_init, write_wrapper

    backup = apply_init(plan)
    if uninstall:
        if plan.status == "removed":
            err(
                f"Removed the memrecall hook from {path} "
                f"({plan.removed} handler{'s' if plan.removed != 1 else ''})."
            )
        elif not plan.theirs:
            err(f"No memrecall hook in {path}; nothing to remove.")
        else:
            err(f"No hook that memrecall init added in {path}; nothing removed.")
        for command in plan.theirs:
            err(f"Left your own command alone (remove it yourself if you want): {command!r}")
    elif plan.status == "kept":
        err(
            f"{path} already runs memrecall through your own command: {plan.theirs[0]!r}; "
            "left as is, no second hook added."
        )
    elif plan.status == "unchanged":
        err(f"The memrecall hook is already installed in {path}; nothing changed.")
    else:
        err(
            f"{'Installed' if plan.status == 'installed' else 'Updated'} "
            f"the memrecall hook in {path}: "
            f"UserPromptSubmit → {plan.command} (timeout {timeout} s)."
        )
    if not uninstall and plan.status != "kept" and plan.theirs:
        err(
            "Your own command also runs memrecall, so each prompt is recalled twice: "
            f"{plan.theirs[0]!r}"
        )
    if backup is not None:
        err(f"Backup of the previous file: {backup}")
    if schedule:
        done = install_schedule(sched, settings.home, remove=uninstall)
        err(f"Daily job in {sched.scheduler}: {done}.")
        if not uninstall:
            err(f"It runs {sched.timing()}.")
    elif not uninstall and sched.platform == current_platform():
        written = write_wrapper(sched)
        wrote = f"wrote {written}; " if written else ""
        err(
            f"Daily jobs: {wrote}add this to {sched.where}, or let memrecall init --schedule do it:"
        )
        out(sched.text)
    elif not uninstall:
        _say_printed_only(sched)
        out(_with_wrapper(sched))
    if not uninstall and plan.status not in ("unchanged", "kept"):
        err(
            "Claude Code picks the change up by itself; "
            "interactive sessions run hooks once the folder is trusted."
        )


def _say_dry_run_schedule(sched: Schedule, uninstall: bool, here: bool) -> None:
    from ._io import err, out

    if not here and uninstall:
        err(
            f"Dry run: --uninstall --schedule removes only this machine's job; the "
            f"{sched.scheduler} job for {sched.platform} is removed on that machine; "
            "nothing was written."
        )
        return
    if not here:
        _say_printed_only(sched)
        out(_with_wrapper(sched))
        return
    flags = "--uninstall --schedule" if uninstall else "--schedule"
    err(
        f"Dry run: {flags} would use {sched.scheduler}: {sched.change(remove=uninstall)}; "
        "nothing was written."
    )
    if uninstall:
        out(sched.text)
        return
    err(f"It would run {sched.timing()}. What it would write:")
    out(_with_wrapper(sched))


def _say_printed_only(sched: Schedule) -> None:
    """Another platform's job: init writes nothing for it, so say where it goes by hand."""
    from ..install import current_platform
    from ._io import err

    err(
        f"Daily jobs for {sched.platform}, printed only (init installs nothing for a platform "
        f"other than this {current_platform()} machine): {sched.scheduler} would run the job "
        f"{sched.timing()}. On that machine, add this to {sched.where}:"
    )


def _with_wrapper(sched: Schedule) -> str:
    """The schedule, preceded by the script it runs when init has not written that here."""
    if sched.wrapper_path is None:
        return sched.text
    return (
        f"# 1. {sched.wrapper_path} (chmod 755):\n{sched.wrapper}# 2. {sched.where}:\n{sched.text}"
    )


def _describe(status: str) -> str:
    return {
        "unchanged": "the hook is already installed",
        "absent": "no memrecall hook to remove",
        "kept": "your own command already runs memrecall",
    }.get(status, status)
