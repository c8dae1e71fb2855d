"""The in-process entry point: the app is built once however often it runs."""

from __future__ import annotations

from memrecall import cli


def test_run_app_registers_each_command_once(capsys):
    cli.run_app(["--help"])
    first = [c.name or c.callback.__name__ for c in cli.app.registered_commands]
    for _ in range(5):
        assert cli.run_app(["--help"]) == 0
    again = [c.name or c.callback.__name__ for c in cli.app.registered_commands]
    assert again == first
    assert len(again) == len(set(again)), "a command is registered twice"
    help_text = capsys.readouterr().out
    assert "search" in help_text and "summarize" in help_text
