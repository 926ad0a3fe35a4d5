#!/usr/bin/env bash
# Create .venv and install Curator with its dev tools. Safe to run again: it skips
# the install when pyproject.toml has not changed since the last one.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "error: Curator needs Python 3.11 or newer ($PYTHON is $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi
if ! command -v git >/dev/null; then
    echo "error: git is not installed" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv"
    "$PYTHON" -m venv .venv
fi

stamp=.venv/.curator-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && .venv/bin/python -c 'import curator' 2>/dev/null; then
    echo "setup: .venv is up to date"
    exit 0
fi

.venv/bin/python -m pip install --quiet --upgrade pip
# torch must come first: 2.13.0 resolves to the CPU wheel that lies on this machine;
# letting another package pull torch would download several GB of CUDA libraries.
if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
    echo "setup: installing torch==2.13.0 (CPU)"
    .venv/bin/python -m pip install --quiet torch==2.13.0
fi
echo "setup: installing curator and its dev tools"
.venv/bin/python -m pip install --quiet -e '.[dev]'
echo "$want" > "$stamp"
echo "setup: done"
