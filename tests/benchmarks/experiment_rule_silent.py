"""Can anything learned from the shared messages go beyond the keyword rules on commits of
another source? The experiments behind docs/label-quality-rounds.md's "Tried and not adopted".

Usage (from the repository root)::

    python scripts/cross_source_texts.py --clones DIR --out build/cross_source
    python tests/benchmarks/experiment_rule_silent.py --cross build/cross_source \\
        [--data ../shared/data/perf-commit-messages] [--minilm]

1. **Rule-term masking.** A model under the rule floor only decides the messages the
   rules are silent on, yet it learns from messages where the rule words carry the
   signal. Training on messages with every rule match cut out makes it learn the other
   cues. Reported: how well it ranks the rule-silent cross-source commits (ROC AUC), and
   the floored F1 at several thresholds on the cross-source set and on ``test.jsonl``.
2. **A veto of rule matches.** A model trained only on the shared messages the rules
   match (where 19% are not perf) ranks the rule matches of the cross-source set; a match
   it scores below the threshold is turned to non-perf.
3. **In-domain cross-validation.** TF-IDF + LR trained on the cross-source votes
   themselves (5 folds, 3 shuffles), message or message and diff, with and without the
   floor, at threshold 0.5.
4. **Code cues in the diff.** How often a few optimization idioms gain lines in a diff
   (hash containers, caches, ``static``, ``inline``, early exits, moves): on the
   rule-silent commits, perf against not perf.
5. **Votes of other repositories, read in fields.** Leave one repository out: a model
   learns from the votes of the other six (optionally beside the shared messages at a
   lower weight) with the message, the diff's changed lines and "a rule fires" as
   separate features, under the floor, its threshold chosen on out-of-fold scores of
   its own votes; scored on the repository it never saw.
6. **Half of a new source.** The judge's adaptation protocol on our own set: the
   votes split in two at random (stratified, five shuffles), the fielded model of 5
   learns from one half (alone, or beside the shared messages) and is scored on the
   other half, against the rules on the same half.
7. **A prior shift.** Perf commits the rules miss are rarer in the shared data (4% of
   its rule-silent messages) than in other sources'; EM (Saerens et al.) estimates
   their share on the unlabeled target from calibrated TF-IDF scores and re-weights
   the scores before the 0.5 cut.

TF-IDF runs in seconds; ``--minilm`` adds frozen MiniLM sentence embeddings with a
logistic regression (about two minutes on two cores). Nothing here is used by Curator:
it is the record of what was tried.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engines.labelers.keyword import find_matches, packaged_terms  # noqa: E402

THRESHOLDS = (0.3, 0.5, 0.7, 0.8, 0.9)
VETO_THRESHOLDS = (0.4, 0.5, 0.6, 0.7)


def read_shared(path: Path) -> list[tuple[str, int]]:
    """(message, target) of a shared JSONL file; targets other than 0/1 are skipped."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if int(row["target"]) in (0, 1):
            rows.append((row["commit_message"] or "", int(row["target"])))
    return rows


def read_cross(folder: Path) -> list[tuple[str, str, int]]:
    """(message, diff, is perf) of a folder written by scripts/cross_source_texts.py."""
    return [(m, d, y) for m, d, y, _ in read_cross_repos(folder)]


def read_cross_repos(folder: Path) -> list[tuple[str, str, int, str]]:
    """(message, diff, is perf, repository) of a cross-source folder."""
    items = [json.loads(x) for x in (folder / "items.jsonl").read_text().splitlines()]
    votes = {
        v["item"]: v["label"]
        for v in map(json.loads, (folder / "votes.jsonl").read_text().splitlines())
    }
    return [
        (i["message"], i.get("diff") or "", int(votes[i["id"]] == "perf"), i["repo"]) for i in items
    ]


def masked(text: str) -> str:
    """``text`` with every rule match cut out."""
    pieces, last = [], 0
    for match in find_matches(text, packaged_terms()):
        pieces.append(text[last : match.start])
        last = match.end
    pieces.append(text[last:])
    return " ".join(pieces)


def tfidf_scorer(texts: Sequence[str], labels: Sequence[int], c: float = 4.0) -> Callable:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    model = LogisticRegression(C=c, max_iter=3000).fit(vectorizer.fit_transform(texts), labels)
    return lambda xs: model.predict_proba(vectorizer.transform(list(xs)))[:, 1]


def minilm_scorer(texts: Sequence[str], labels: Sequence[int], c: float = 1.0) -> Callable:
    from sentence_transformers import SentenceTransformer
    from sklearn.linear_model import LogisticRegression

    from engines.labelers.student.infer import default_base

    encoder = SentenceTransformer(default_base(), device="cpu")

    def embed(xs: Sequence[str]) -> np.ndarray:
        return encoder.encode(list(xs), batch_size=64, normalize_embeddings=True)

    model = LogisticRegression(C=c, max_iter=3000).fit(embed(texts), labels)
    return lambda xs: model.predict_proba(embed(xs))[:, 1]


def f1(truth: np.ndarray, predicted: np.ndarray) -> float:
    from sklearn.metrics import f1_score

    return float(f1_score(truth, predicted))


def masking(train, test, cross, scorers: dict[str, Callable]) -> None:
    from sklearn.metrics import roc_auc_score

    fires_x = np.array([bool(find_matches(m)) for m, _, _ in cross])
    y_x = np.array([y for _, _, y in cross])
    fires_t = np.array([bool(find_matches(m)) for m, _ in test])
    y_t = np.array([y for _, y in test])
    print(f"rules: cross-source F1 {f1(y_x, fires_x):.3f}, test.jsonl {f1(y_t, fires_t):.3f}")
    for name, build in scorers.items():
        for mask in (False, True):
            shape = masked if mask else (lambda t: t)
            score = build([shape(m) for m, _ in train], [y for _, y in train])
            p_x = score([shape(m) for m, _, _ in cross])
            p_t = score([shape(m) for m, _ in test])
            auc = roc_auc_score(y_x[~fires_x], p_x[~fires_x])
            cells = " ".join(
                f"{t}: {f1(y_x, fires_x | (p_x >= t)):.3f}/{f1(y_t, fires_t | (p_t >= t)):.3f}"
                for t in THRESHOLDS
            )
            print(f"  {name} masked={mask}: rule-silent AUC {auc:.3f}; floored F1 xs/test {cells}")


def veto(train, test, cross, scorers: dict[str, Callable]) -> None:
    from sklearn.metrics import roc_auc_score

    matched = [(m, y) for m, y in train if find_matches(m)]
    fires_x = np.array([bool(find_matches(m)) for m, _, _ in cross])
    y_x = np.array([y for _, _, y in cross])
    fires_t = np.array([bool(find_matches(m)) for m, _ in test])
    y_t = np.array([y for _, y in test])
    print(
        f"rule matches in the shared training messages: {len(matched)},"
        f" {sum(1 - y for _, y in matched)} not perf"
    )
    for name, build in scorers.items():
        score = build([m for m, _ in matched], [y for _, y in matched])
        p_x = score([m for m, _, _ in cross])
        p_t = score([m for m, _ in test])
        auc = roc_auc_score(y_x[fires_x], p_x[fires_x])
        cells = " ".join(
            f"{t}: {f1(y_x, fires_x & (p_x >= t)):.3f}/{f1(y_t, fires_t & (p_t >= t)):.3f}"
            f" (-{int((fires_x & (p_x < t)).sum())})"
            for t in VETO_THRESHOLDS
        )
        print(f"  {name}: AUC on cross-source matches {auc:.3f}; F1 xs/test (vetoed) {cells}")


def in_domain(cross) -> None:
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    messages = [m for m, _, _ in cross]
    diffs = [d for _, d, _ in cross]
    y = np.array([label for _, _, label in cross])
    fires = np.array([bool(find_matches(m)) for m in messages])
    for with_diff in (False, True):
        for floor in (True, False):
            scores = []
            for seed in range(3):
                folds = StratifiedKFold(5, shuffle=True, random_state=seed)
                predicted = np.zeros(len(y), dtype=bool)
                for fit_rows, test_rows in folds.split(messages, y):
                    words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
                    a = [words.fit_transform([messages[i] for i in fit_rows])]
                    b = [words.transform([messages[i] for i in test_rows])]
                    if with_diff:
                        code = TfidfVectorizer(
                            token_pattern=r"[A-Za-z_][A-Za-z0-9_]{2,}",
                            min_df=2,
                            sublinear_tf=True,
                            max_features=20000,
                        )
                        a.append(code.fit_transform([diffs[i] for i in fit_rows]))
                        b.append(code.transform([diffs[i] for i in test_rows]))
                    model = LogisticRegression(C=4, max_iter=3000, class_weight="balanced")
                    model.fit(hstack(a).tocsr(), y[fit_rows])
                    p = model.predict_proba(hstack(b).tocsr())[:, 1]
                    predicted[test_rows] = (p >= 0.5) | (fires[test_rows] & floor)
                scores.append(f1(y, predicted))
            text = "message+diff" if with_diff else "message"
            print(f"  {text}, floor={floor}: F1 {np.mean(scores):.3f} ± {np.std(scores):.3f}")


CODE_CUES = {
    "hash container": r"unordered_(map|set)|HashMap|HashSet|flat_hash|\bdict\(|\bset\(",
    "cache": r"cach(e|ed|es|ing)\b|memo(ize|ized|ization)?\b|lru_cache|functools\.cache",
    "static": r"\bstatic (final )?\w",
    "inline": r"\binline\b|FORCE_INLINE|always_inline|__forceinline",
    "early exit": r"^\s*(break|return)\s*;?\s*$",
    "move": r"std::move|emplace_back|emplace\(",
    "reserve": r"\.reserve\(|ensureCapacity|initialCapacity",
}


def code_cues(cross) -> None:
    import re

    silent = [(d, y) for m, d, y in cross if not find_matches(m)]
    perf = sum(y for _, y in silent)
    print(f"  rule-silent commits: {len(silent)}, {perf} perf")
    for name, pattern in CODE_CUES.items():
        cue = re.compile(pattern, re.MULTILINE)
        counts = [0, 0]
        for diff, y in silent:
            lines = diff.splitlines()
            added = "\n".join(x[1:] for x in lines if x.startswith("+") and not x.startswith("+++"))
            gone = "\n".join(x[1:] for x in lines if x.startswith("-") and not x.startswith("---"))
            if len(cue.findall(added)) > len(cue.findall(gone)):
                counts[y] += 1
        print(f"  {name}: gains lines in {counts[1]} perf and {counts[0]} other commits")


def changed_lines(diff: str) -> str:
    """The lines a diff adds or removes, each with its sign, headers left out."""
    lines = diff.splitlines()
    return "\n".join(x for x in lines if x[:1] in "+-" and x[:3] not in ("+++", "---"))[:20000]


def by_repository(train, rows, shared_weight: float) -> np.ndarray:
    """Leave-one-repository-out predictions of the fielded model (experiment 5)."""
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    messages = [m for m, _, _, _ in rows]
    code = [changed_lines(d) for _, d, _, _ in rows]
    y = np.array([label for _, _, label, _ in rows])
    repos = np.array([r for _, _, _, r in rows])
    shared = [(m, t) for m, t in train] if shared_weight > 0 else []
    fires = np.array([bool(find_matches(m)) for m in messages])
    shared_fires = [bool(find_matches(m)) for m, _ in shared]

    def matrix(own: np.ndarray) -> tuple[Callable, np.ndarray, np.ndarray]:
        texts = [messages[i] for i in own] + [m for m, _ in shared]
        diffs = [code[i] for i in own] + [""] * len(shared)
        flags = np.concatenate([fires[own], shared_fires]).astype(float)[:, None]
        words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
        chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2)
        lines = TfidfVectorizer(
            ngram_range=(1, 2),
            sublinear_tf=True,
            min_df=2,
            max_features=50000,
            token_pattern=r"[A-Za-z][A-Za-z0-9]+|[+\-*/<>=&|]+",
        )
        fitted = hstack(
            [
                words.fit_transform(texts),
                chars.fit_transform(texts),
                0.7 * lines.fit_transform(diffs),
                csr_matrix(flags),
            ]
        ).tocsr()

        def features(idx: np.ndarray) -> Any:
            m = [messages[i] for i in idx]
            return hstack(
                [
                    words.transform(m),
                    chars.transform(m),
                    0.7 * lines.transform([code[i] for i in idx]),
                    csr_matrix(fires[idx].astype(float)[:, None]),
                ]
            ).tocsr()

        labels = np.concatenate([y[own], [t for _, t in shared]])
        weights = np.concatenate([np.ones(len(own)), np.full(len(shared), shared_weight)])
        return features, fitted, np.stack([labels, weights])

    def model(x: Any, lw: np.ndarray) -> Any:
        clf = LogisticRegression(C=4, max_iter=3000, class_weight="balanced")
        return clf.fit(x, lw[0].astype(int), sample_weight=lw[1])

    predicted = np.zeros(len(y), dtype=bool)
    for repo in sorted(set(repos)):
        own, out = np.flatnonzero(repos != repo), np.flatnonzero(repos == repo)
        features, fitted, lw = matrix(own)
        oof = np.zeros(len(own))
        rest = np.arange(len(own), fitted.shape[0])
        folds = StratifiedKFold(4, shuffle=True, random_state=1)
        for a, b in folds.split(own, y[own]):
            keep = np.concatenate([a, rest])
            oof[b] = model(fitted[keep], lw[:, keep]).predict_proba(fitted[b])[:, 1]
        oof = np.where(fires[own], 1.0, oof)
        grid = np.arange(0.05, 0.96, 0.025)
        best = max(grid, key=lambda t: f1(y[own], oof >= t))
        p = model(fitted, lw).predict_proba(features(out))[:, 1]
        predicted[out] = np.where(fires[out], 1.0, p) >= best
    return predicted


def fielded(train, rows) -> None:
    y = np.array([label for _, _, label, _ in rows])
    repos = np.array([r for _, _, _, r in rows])
    runs = {"rules": np.array([bool(find_matches(m)) for m, _, _, _ in rows])}
    for weight in (0.0, 0.3):
        runs[f"votes + shared x{weight}"] = by_repository(train, rows, weight)
    for name, predicted in runs.items():
        each = ", ".join(
            f"{r.split('/')[1]} {f1(y[repos == r], predicted[repos == r]):.2f}"
            for r in sorted(set(repos))
        )
        print(f"  {name}: F1 {f1(y, predicted):.3f} ({each})")


def halves(train, rows, seeds: int = 5) -> None:
    """Experiment 6: a new source's votes split in two at random (stratified, ``seeds``
    shuffles), the fielded model learns from one half and is scored on the other."""
    from sklearn.model_selection import StratifiedKFold

    y = np.array([label for _, _, label, _ in rows])
    fires = np.array([bool(find_matches(m)) for m, _, _, _ in rows])
    scores: dict[str, list[float]] = {"rules": [], "votes": [], "votes + shared x0.3": []}
    for seed in range(seeds):
        for a, b in StratifiedKFold(2, shuffle=True, random_state=seed).split(rows, y):
            side = np.zeros(len(rows), dtype=bool)
            side[a] = True
            split = [
                (m, d, t, "half/a" if side[i] else "half/b") for i, (m, d, t, _) in enumerate(rows)
            ]
            scores["rules"].append(f1(y[b], fires[b]))
            for name, weight in (("votes", 0.0), ("votes + shared x0.3", 0.3)):
                scores[name].append(f1(y[b], by_repository(train, split, weight)[b]))
    for name, values in scores.items():
        print(
            f"  {name}: F1 {np.mean(values):.3f} +- {np.std(values):.3f} over {len(values)} halves"
        )


def prior_shift(train, sets: dict[str, list[tuple[str, int]]]) -> None:
    """Experiment 7: the rule-silent commits of another source may be perf more often
    than the shared ones (4%); estimate their share on the unlabeled target by EM
    (Saerens et al. 2002) from a TF-IDF model's calibrated scores, and re-weight."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict

    texts, y = [m for m, _ in train], np.array([t for _, t in train])
    silent = np.array([not find_matches(m) for m in texts])
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    x = vectorizer.fit_transform(texts)
    model = LogisticRegression(C=4, max_iter=3000)
    oof = cross_val_predict(model, x, y, cv=5, method="predict_proba")[:, 1]
    model.fit(x, y)

    def logit(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, 1e-6, 1 - 1e-6)
        return np.log(p / (1 - p))

    platt = LogisticRegression(C=1e6).fit(logit(oof[silent])[:, None], y[silent])
    prior = float(y[silent].mean())
    for name, rows in sets.items():
        truth = np.array([t for _, t in rows])
        fires = np.array([bool(find_matches(m)) for m, _ in rows])
        raw = model.predict_proba(vectorizer.transform([m for m, _ in rows]))[:, 1]
        p = platt.predict_proba(logit(raw[~fires])[:, None])[:, 1]
        share = prior
        for _ in range(200):
            up, down = share / prior * p, (1 - share) / (1 - prior) * (1 - p)
            adjusted = up / (up + down)
            share = float(adjusted.mean())
        picked = adjusted >= 0.5
        predicted = fires.copy()
        predicted[~fires] = picked
        print(
            f"  {name}: perf share of rule-silent commits {truth[~fires].mean():.3f},"
            f" estimated {share:.3f} (shared {prior:.3f}); F1 rules {f1(truth, fires):.3f},"
            f" re-weighted {f1(truth, predicted):.3f} (+{int(picked.sum())} calls,"
            f" {int((picked & (truth[~fires] == 1)).sum())} right)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cross", type=Path, required=True)
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared" / "data" / "perf-commit-messages"
    )
    parser.add_argument("--minilm", action="store_true", help="add frozen MiniLM + LR")
    args = parser.parse_args(argv)
    train = read_shared(args.data / "train.jsonl") + read_shared(args.data / "extra.jsonl")
    test = read_shared(args.data / "test.jsonl")
    cross = read_cross(args.cross)
    scorers: dict[str, Callable] = {"tfidf-lr": tfidf_scorer}
    if args.minilm:
        scorers["minilm-lr"] = minilm_scorer
    print(
        f"keyword list version {packaged_terms().version}; {len(train)} training messages,"
        f" {len(test)} test, {len(cross)} cross-source commits"
    )
    print("1. rule-term masking")
    masking(train, test, cross, scorers)
    print("2. a veto of rule matches")
    veto(train, test, cross, scorers)
    print("3. in-domain cross-validation on the cross-source votes (TF-IDF + LR)")
    in_domain(cross)
    print("4. code cues in the diffs of rule-silent commits")
    code_cues(cross)
    print("5. votes of the other repositories, message, changed lines and rule as fields")
    fielded(train, read_cross_repos(args.cross))
    print("6. half of a new source's votes, fielded model scored on the other half")
    halves(train, read_cross_repos(args.cross))
    print("7. the rule-silent share estimated on the target (EM) and re-weighted")
    prior_shift(train, {"test.jsonl": test, "cross-source": [(m, t) for m, _, t in cross]})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
