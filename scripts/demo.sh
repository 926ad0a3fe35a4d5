#!/usr/bin/env bash
# The demo: build the sample repository from its recipe, mine it into the default
# database (./curator.db unless CURATOR_DB says otherwise), and show what landed.
set -euo pipefail
cd "$(dirname "$0")/.."

repo=build/sample-repo
.venv/bin/python sample_data/build_commit_repo.py --force "$repo"
.venv/bin/curator mine commits "$repo"
.venv/bin/curator stats
.venv/bin/python scripts/check_demo.py "$repo"
