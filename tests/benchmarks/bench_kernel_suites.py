"""Kernels from real code, before and after: the refusal rate of the rejection filter and
the verdicts of the dynamic check on benchmark suites checked out as folders.

``before`` is the engine as it was: headers next to the file or under the suite's root,
CLgen's payload only, the fixed shim only. ``after`` resolves headers anywhere in the
tree, reads the host's ``-D``/``-I``, guesses what is still missing (bounded), and tries
the payload policies in order. Builds are memoised by source text, so a kernel both
sides scrape alike is compiled once. Run it by hand (it compiles hundreds of kernels)::

    python -m tests.benchmarks.bench_kernel_suites SUITES_DIR [--cl-only] [--check] \
        [--limit N] [--json OUT]

``SUITES_DIR`` holds one folder per suite (the whole tree, or only its ``.cl`` files).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from engines.kernels import compile as compile_module
from engines.kernels.checker import KernelWorker, _equal, check_kernel
from engines.kernels.compile import FilterResult, measure, rejection_filter
from engines.kernels.infer import classify_refusal
from engines.kernels.payload import parameter_names
from engines.kernels.pipeline import SourceContext
from engines.kernels.rewrite import RewriteError, rewrite, source_hash
from engines.kernels.scrape import decode_source, is_candidate_file, scrape_text
from engines.kernels.shim import apply_shim, shim_for
from engines.kernels.tree import SourceTree


class MemoWorker:
    """A worker whose builds are remembered by source text."""

    def __init__(self, worker: KernelWorker) -> None:
        self.worker = worker
        self.device = ""
        self.cache: dict[str, Any] = {}
        self.builds = 0

    def build(self, source: str) -> Any:
        if source not in self.cache:
            self.builds += 1
            self.cache[source] = self.worker.build(source)
        return self.cache[source]


_MEASURED: dict[str, tuple[int | None, dict[str, int], str]] = {}


def _measure(source: str) -> tuple[int | None, dict[str, int], str]:
    if source not in _MEASURED:
        _MEASURED[source] = measure(source)
    return _MEASURED[source]


def legacy_filter(worker: MemoWorker, source: str) -> FilterResult:
    """The filter as it was: a plain build, then the fixed shim, then the IR count."""
    built = worker.build(source)
    compiled = source
    names: list[str] = []
    if not built.ok:
        _, names = shim_for(source)
        shimmed = apply_shim(source, names) if names else None
        if shimmed is None or not worker.build(shimmed).ok:
            return FilterResult(False, "compile-error", built.message, source)
        compiled = shimmed
    count, feats, problem = _measure(compiled)
    if count is None:
        return FilterResult(False, "compile-error", problem, compiled, names)
    if count < 3:
        return FilterResult(False, "too-few-instructions", f"{count}", compiled, names, count)
    return FilterResult(True, None, None, compiled, names, count, feats)


def _files(suite: Path) -> list[Path]:
    return [
        p
        for p in sorted(suite.rglob("*"))
        if p.is_file() and is_candidate_file(p) and not any(x.startswith(".") for x in p.parts)
    ]


def run_suite(suite: Path, worker: MemoWorker, limit: int | None) -> dict[str, Any]:
    """Both filters over one suite; unique kernels by the hash of their scraped source."""
    context = SourceContext(SourceTree.from_directory(suite))
    sides: dict[str, dict[str, Any]] = {"before": {}, "after": {}}
    files_with_kernels: set[str] = set()
    for path in _files(suite):
        rel = path.relative_to(suite).as_posix()
        text, _ = decode_source(path.read_bytes())
        resolver, flags = context.for_file(rel)
        scraped = {
            "before": scrape_text(text, rel, path, suite).candidates,
            "after": scrape_text(text, rel, path, suite, resolver).candidates,
        }
        for side, cands in scraped.items():
            for cand in cands:
                key = source_hash(cand.source)
                if key in sides[side] or (limit and len(sides[side]) >= limit):
                    continue
                files_with_kernels.add(rel)
                if side == "before":
                    result = legacy_filter(worker, cand.source)
                else:
                    result = rejection_filter(  # type: ignore[arg-type]
                        worker, cand.source, 3, flags.defines, context.type_lookup(cand)
                    )
                sides[side][key] = (rel, cand.name, result)
    return {"sides": sides, "files": len(files_with_kernels)}


def summarise(results: dict[str, tuple[str, str, FilterResult]]) -> dict[str, Any]:
    total = len(results)
    refused = [r for _, _, r in results.values() if not r.accepted]
    reasons = Counter(classify_refusal(r.verdict, r.message, r.source) for r in refused)
    compile_errors = sum(1 for r in refused if r.verdict == "compile-error")
    origins = Counter(a.origin for _, _, r in results.values() if r.accepted for a in r.assumptions)
    return {
        "kernels": total,
        "refused": len(refused),
        "compile_errors": compile_errors,
        "compile_error_rate": round(compile_errors / total, 4) if total else None,
        "refusal_rate": round(len(refused) / total, 4) if total else None,
        "reasons": dict(reasons.most_common()),
        "accepted_with": dict(origins),
        "files_refused": len({f for f, _, r in results.values() if not r.accepted}),
    }


def check_accepted(
    worker: KernelWorker, results: dict[str, tuple[str, str, FilterResult]], timeout: float
) -> dict[str, Any]:
    """The dynamic check of every accepted kernel: CLgen's payload alone (``before``)
    and the policies in order (``after``); the rewritten kernel is run on the policy
    that gave the verdict and must agree with the original."""
    first: Counter[str] = Counter()
    final: Counter[str] = Counter()
    by_policy: Counter[str] = Counter()
    rewrite_checked = rewrite_agree = 0
    disagreements: list[str] = []
    per_kernel: list[dict[str, Any]] = []
    for file, name, result in results.values():
        if not result.accepted:
            continue
        outcome = check_kernel(worker, result.source, name, timeout=timeout)
        tried = outcome.details.get("policies_tried") or [
            {"policy": outcome.details.get("payload_policy", "clgen"), "verdict": outcome.verdict}
        ]
        first[tried[0]["verdict"]] += 1
        final[outcome.verdict] += 1
        policy = outcome.details.get("payload_policy", "clgen")
        by_policy[f"{outcome.verdict} / {policy}"] += 1
        per_kernel.append(
            {
                "file": file,
                "kernel": name,
                "clgen": tried[0]["verdict"],
                "final": outcome.verdict,
                "policy": policy,
            }
        )
        if outcome.verdict in ("useful", "no-output", "input-insensitive", "non-deterministic"):
            try:
                new = rewrite(result.source)
            except (RewriteError, Exception):
                continue
            again = check_kernel(
                worker,
                new.source,
                new.kernel_names.get(name, name),
                timeout=timeout,
                policies=(policy,),
                role_names=parameter_names(result.source, name),
            )
            rewrite_checked += 1
            same = again.verdict == outcome.verdict and all(
                _equal(a[1], b[1]) for a, b in zip(outcome.runs, again.runs, strict=False)
            )
            if same or outcome.verdict == "non-deterministic":
                rewrite_agree += 1
            else:
                disagreements.append(f"{file}::{name} {outcome.verdict} -> {again.verdict}")
    n = sum(final.values())
    return {
        "checked": n,
        "before": dict(first.most_common()),
        "after": dict(final.most_common()),
        "after_by_policy": dict(sorted(by_policy.items())),
        "useful_before": round(first["useful"] / n, 4) if n else None,
        "crash_before": round(first["crash"] / n, 4) if n else None,
        "useful_after": round(final["useful"] / n, 4) if n else None,
        "crash_after": round(final["crash"] / n, 4) if n else None,
        "rewrite_checked": rewrite_checked,
        "rewrite_agree": rewrite_agree,
        "rewrite_disagreements": disagreements,
        "kernels": per_kernel,
    }


def _sample(results: dict[str, Any], size: int | None) -> dict[str, Any]:
    """Every accepted kernel, or ``size`` of them spread evenly over the sorted keys."""
    accepted = sorted(k for k, (_, _, r) in results.items() if r.accepted)
    if size is None or len(accepted) <= size:
        return {k: results[k] for k in accepted}
    step = len(accepted) / size
    return {accepted[int(i * step)]: results[accepted[int(i * step)]] for i in range(size)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", type=Path, nargs="+", help="folders of suites")
    parser.add_argument("--check", action="store_true", help="check the first root's kernels")
    parser.add_argument("--check-sample", type=int, default=None, help="kernels per suite")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    compile_module.measure = _measure  # one clang lowering per source text, both sides
    report: dict[str, Any] = {}
    started = time.perf_counter()

    def save() -> None:
        if args.json:
            args.json.write_text(json.dumps(report, indent=1))

    with KernelWorker() as worker:
        memo = MemoWorker(worker)
        for number, root in enumerate(args.roots):
            part: dict[str, Any] = {"suites": {}}
            report[root.name] = part
            merged: dict[str, dict[str, Any]] = {"before": {}, "after": {}}
            suites = sorted((p for p in root.iterdir() if p.is_dir()), key=_size)
            for suite in suites:
                t0 = time.perf_counter()
                out = run_suite(suite, memo, args.limit)
                entry = {side: summarise(res) for side, res in out["sides"].items()}
                entry["files"] = out["files"]
                entry["seconds"] = round(time.perf_counter() - t0, 1)
                part["suites"][suite.name] = entry
                for side, res in out["sides"].items():
                    merged[side].update({f"{suite.name}:{k}": v for k, v in res.items()})
                part["total"] = {side: summarise(res) for side, res in merged.items()}
                save()
                print(root.name, suite.name, json.dumps(entry), file=sys.stderr, flush=True)
                if args.check and number == 0:
                    picked = _sample(out["sides"]["after"], args.check_sample)
                    entry["check"] = check_accepted(worker, picked, args.timeout)
                    save()
                    print(suite.name, "checked", file=sys.stderr, flush=True)
        report["builds"] = memo.builds
    report["seconds"] = round(time.perf_counter() - started, 1)
    save()
    return 0


def _size(suite: Path) -> int:
    return sum(1 for p in suite.rglob("*.cl"))


if __name__ == "__main__":
    sys.exit(main())
