#!/usr/bin/env bash
# Print the path of a Python 3.13 interpreter, the Lambda runtime's version.
#
# Why a script: on many machines `python3.13` on PATH is a pyenv shim that fails
# until a version is selected, so "is it on PATH" is not the same as "does it run".
# Order: $PYTHON, a working python3.13 on PATH, pyenv's versions, uv's managed Pythons.
# A $PYTHON that is not 3.13 is an error, never silently replaced by another interpreter: whoever set
# it meant that one.
set -euo pipefail

want="3.13"

works() {
  [ -n "${1:-}" ] && "$1" -c "import sys; sys.exit(0 if sys.version_info[:2] == (3, 13) else 1)" >/dev/null 2>&1
}

if [ -n "${PYTHON:-}" ]; then
  if works "$PYTHON"; then
    "$PYTHON" -c "import sys; print(sys.executable)"
    exit 0
  fi
  if version="$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)"; then
    echo "error: PYTHON=$PYTHON is Python $version, not $want (the Lambda runtime's version)." >&2
  else
    echo "error: PYTHON=$PYTHON does not run as a Python interpreter." >&2
  fi
  echo "Point PYTHON at a python$want, or unset it to let make look for one (PATH, pyenv, uv)." >&2
  exit 1
fi

candidates=()
command -v python3.13 >/dev/null 2>&1 && candidates+=("$(command -v python3.13)")
if command -v pyenv >/dev/null 2>&1; then
  root="$(pyenv root)"
  for dir in "$root"/versions/3.13*; do
    [ -x "$dir/bin/python3.13" ] && candidates+=("$dir/bin/python3.13")
  done
fi
for dir in "$HOME"/.pyenv/versions/3.13* /usr/local/bin /usr/bin; do
  [ -x "$dir/bin/python3.13" ] && candidates+=("$dir/bin/python3.13")
  [ -x "$dir/python3.13" ] && candidates+=("$dir/python3.13")
done
if command -v uv >/dev/null 2>&1; then
  found="$(uv python find "$want" 2>/dev/null || true)"
  [ -n "$found" ] && candidates+=("$found")
fi

for candidate in "${candidates[@]}"; do
  if works "$candidate"; then
    # Resolve the interpreter itself, so a pyenv shim is never what the venv records.
    "$candidate" -c "import sys; print(sys.executable)"
    exit 0
  fi
done

cat >&2 <<MSG
error: no Python $want found (the Lambda runtime is python$want).
Install one of these ways, then run the command again:
  pyenv install $want && pyenv local $want      # pyenv
  uv python install $want                        # uv
  sudo apt-get install python$want python$want-venv   # Debian/Ubuntu with a $want package
  brew install python@$want                      # macOS
or point to an existing interpreter: PYTHON=/path/to/python$want make test
MSG
exit 1
