#!/bin/sh
# memrecall's UserPromptSubmit hook for the Claude Code plugin route.
#
# When memrecall is missing, say so on stderr (Claude Code's debug log) and exit 0: a hook
# must never block or erase the user's prompt (exit 2 would, and sh exits 2 when `.` cannot
# read its file, hence the check before it).
# ${0%/*}, not $(dirname …): one process fewer before every prompt.
case "$0" in */*) here="${0%/*}" ;; *) here=. ;; esac
if [ ! -r "$here/find-memrecall.sh" ]; then
  echo "memrecall: $here/find-memrecall.sh is missing; reinstall the plugin" >&2
  exit 0
fi
. "$here/find-memrecall.sh"
if find_memrecall; then
  exec "$MEMRECALL_FOUND" recall
fi
echo "memrecall: command not found; $MEMRECALL_INSTALL_HINT" >&2
exit 0
