# Shared by scripts/demo and scripts/test: make (or reuse) a virtual environment and
# install memrecall into it. Needs only Python 3.11+, pip and venv.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${MEMRECALL_VENV:-$ROOT/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT[${MEMRECALL_EXTRAS:-test}]"
