"""Any external analyser with the same contract: text on stdin, one keyword a line on stdout."""

from __future__ import annotations

import shlex
import shutil
import subprocess

from ..errors import BackendUnavailable
from .base import Term


class CommandAnalyzer:
    def __init__(self, program: str, timeout: float = 2.0) -> None:
        argv = shlex.split(program)
        if not argv:
            raise BackendUnavailable("command: backend needs a program, e.g. command:kagome")
        if shutil.which(argv[0]) is None:
            raise BackendUnavailable(f"command backend program not found: {argv[0]}")
        self.name = f"command:{program}"
        self._argv = argv
        self._timeout = timeout

    def analyze(self, text: str) -> list[Term]:
        try:
            done = subprocess.run(
                self._argv,
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=self._timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BackendUnavailable(f"{self.name} failed: {exc}") from exc
        if done.returncode != 0:
            first = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
            raise BackendUnavailable(
                f"{self.name} exited {done.returncode}" + (f": {first[0]}" if first else "")
            )
        terms = []
        for line in done.stdout.decode("utf-8", "replace").splitlines():
            word = line.strip()
            if word:
                position = text.find(word)
                terms.append(Term(word, "external", position if position >= 0 else len(text)))
        return terms
