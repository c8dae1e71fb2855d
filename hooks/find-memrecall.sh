# Sourced (not run) by hooks/recall.sh and bin/memrecall-cli: where is the memrecall CLI?
#
# A plugin cannot know where memrecall was installed, and Claude Code's hook and Bash
# environments often lack the installer's bin folder on PATH, so look in the usual places.
# On success MEMRECALL_FOUND holds the program's path; otherwise it is empty and the caller
# says MEMRECALL_INSTALL_HINT in its own way.
MEMRECALL_INSTALL_HINT="install it with 'pipx install memrecall' (from a checkout of its \
repository: 'pipx install .'), or set MEMRECALL_BIN to the memrecall program"

find_memrecall() {
  MEMRECALL_FOUND=""
  for candidate in \
    "${MEMRECALL_BIN:-}" \
    "$(command -v memrecall 2>/dev/null)" \
    "$HOME/.local/bin/memrecall" \
    "$HOME/.local/share/uv/tools/memrecall/bin/memrecall" \
    "$HOME/.local/pipx/venvs/memrecall/bin/memrecall" \
    "$HOME/.local/bin/memrecall.exe"
  do
    if [ -n "$candidate" ] && [ -f "$candidate" ] && [ -x "$candidate" ]; then
      MEMRECALL_FOUND="$candidate"
      return 0
    fi
  done
  return 1
}
