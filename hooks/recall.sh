#!/bin/sh
# memrecall's UserPromptSubmit hook for the Claude Code plugin route.
#
# A plugin cannot know where memrecall was installed, and Claude Code's hook environment
# often lacks the installer's bin folder on PATH, so look in the usual places. When
# memrecall is missing, say so on stderr (Claude Code's debug log) and exit 0: a hook must
# never block or erase the user's prompt.
for candidate in \
  "${MEMRECALL_BIN:-}" \
  "$(command -v memrecall 2>/dev/null)" \
  "$HOME/.local/bin/memrecall" \
  "$HOME/.local/share/uv/tools/memrecall/bin/memrecall" \
  "$HOME/.local/pipx/venvs/memrecall/bin/memrecall" \
  "$HOME/.local/bin/memrecall.exe"
do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then
    exec "$candidate" recall
  fi
done
echo "memrecall: command not found; install it (pipx install memrecall) or set MEMRECALL_BIN" >&2
exit 0
