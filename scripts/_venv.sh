# Shared by scripts/demo and scripts/test: make (or reuse) a virtual environment and
# install memrecall into it. Needs only Python 3.11+, pip and venv.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${MEMRECALL_VENV:-$ROOT/.venv}"
EXTRAS="${MEMRECALL_EXTRAS:-test}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
# The install is editable, so source edits need no reinstall; only a change to the
# declared dependencies, the extras or the checkout's place does. A stamp of those lets
# a rerun skip pip (about 14 s) entirely.
STAMP="$VENV/.memrecall-install"
WANT="$ROOT [$EXTRAS] $(cksum < "$ROOT/pyproject.toml")"
if [ ! -x "$VENV/bin/memrecall" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[$EXTRAS]"
  printf '%s\n' "$WANT" > "$STAMP"
fi
