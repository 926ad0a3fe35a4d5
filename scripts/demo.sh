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

# Scale-out: a repository list chosen by stars and language, mined on a local Dask cluster
# of two workers into a database of its own; the same commits must land there. Run again,
# the finished repository is skipped.
.venv/bin/curator mine commits --repos-file sample_data/commits/repos.csv --min-stars 10 \
    --workers 2 --db build/cluster-demo.db
.venv/bin/python scripts/check_demo.py "$repo" --db build/cluster-demo.db

# IR: compile the sample C/C++ projects to IR before optimization, ingest the checked-in
# .ll, dedup by structural hash, and show the corpus in ComPile's Table 1 shape.
.venv/bin/curator mine ir sample_data/ir --build sample_data/ir
.venv/bin/curator stats --kind ir

# Kernels: scrape the sample OpenCL files, filter them on PoCL, then run the dynamic check.
.venv/bin/curator mine kernels sample_data/kernels
.venv/bin/curator check kernels --unchecked --timeout 2

# Annotation: a ground-truth set imported with three annotators' votes, their agreement,
# the final labels, the keyword labeler scored on them, and a precision audit.
curator=.venv/bin/curator
$curator import items sample_data/annotation/items.jsonl --set gt-sample
$curator import votes sample_data/annotation/votes.csv
$curator agree gt-sample
$curator adjudicate gt-sample
$curator eval gt-sample --labeler keyword@latest
$curator set show audit-sample >/dev/null 2>&1 \
    || $curator audit draw audit-sample --from-labeler keyword@latest --positive --stratify language
$curator audit report audit-sample

# A release of everything above: JSONL per kind, schemas, manifest, datasheet; checked.
$curator export demo --out build/releases --split repo:80/10/10 --seed 1 --force
$curator validate build/releases/demo

echo
echo "Done. Open the annotation app on this database (? lists every key):"
echo "  .venv/bin/curator --annotator YOUR_NAME"
