"""Fine-tuning the student: AdamW with linear warm-up and decay, hard or soft targets,
early stopping on dev F1, fixed seeds, progress reports and a cancel check.

The loss is a cross-entropy against a target distribution. With hard labels the target
is one-hot; with soft labels (``soft=True``) it is the teacher's belief, PerfCurator's
loss ``-[T1 log S + T0 log(1 - S)]``. Human examples always carry one-hot targets, so
one formula serves teacher-only, human-only and mixed training.

Diff dropout: an example whose ``text`` is message || diff and that carries its
``message`` is shown as the message alone with probability ``diff_dropout`` in each
epoch (drawn from a generator of its own, so batching stays as without it).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from engines.labelers.student.data import Example, binary_f1, pad_id_of, shuffled_length_batches
from engines.labelers.student.infer import (
    DEFAULT_MAX_LENGTH,
    META_FILE,
    default_base,
    keep_layers,
    load_encoder,
    pad_batch,
    pick_device,
    positive_probabilities,
    tokenize,
    use_all_cores,
)
from engines.labelers.student.prior import start_from_prior
from engines.labelers.student.replay import write_replay

DEFAULT_LR = 5e-5
PRIOR_LR = 1e-5


@dataclass(frozen=True)
class TrainConfig:
    """Knobs of one training run; ``base`` None means the packaged MiniLM encoder."""

    base: str | None = None
    epochs: int = 3
    batch_size: int = 32
    lr: float | None = None
    """AdamW's step size; None: :data:`DEFAULT_LR`, or :data:`PRIOR_LR` for a student that
    starts from the perf prior (already a trained student: a full step pulls it back
    toward the few examples it fine-tunes on)."""
    max_length: int = DEFAULT_MAX_LENGTH
    seed: int = 0
    init_seed: int | None = None
    """Seed the new classifier head's initial weights with this instead of ``seed``: the
    members of a model soup share one head to start from (None: ``seed``)."""
    soft: bool = False
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    patience: int = 1
    max_steps: int | None = None
    input_field: str = "auto"
    """``message``, ``model_input`` (message || diff) or ``auto``: ``message`` when no
    training example has a diff, else ``model_input`` (resolved before training)."""
    device: str | None = None
    layers: int | None = None
    """Keep this many of the base's transformer layers (evenly spaced); None keeps all."""
    diff_dropout: float = 0.3
    """P(an example with a diff is read as its message alone), per example and epoch."""
    threshold_objective: str = "f1"
    """How the decision threshold is chosen on dev data: ``f1`` or ``precision:P``."""
    rule_floor: str = "keyword"
    """``keyword``: messages the keyword rules match are perf whatever the model believes
    (see engines.labelers.rule_floor); ``none``: the model alone decides."""
    prior: str = "perf"
    """``perf``: a student trained from the packaged base starts from it plus the packaged
    perf prior (engines.labelers.student.prior); ``none``: from the base alone."""
    prior_examples: str = "skip"
    """``skip``: a student starting from the perf prior leaves out of its fine-tuning the
    examples whose message the prior already learned (engines.labelers.student.learned);
    ``train``: it reads them again."""
    holdout: float = 0.15
    """Without a dev set, this stratified share of the training examples is held out for
    early stopping and the threshold (0 turns it off)."""

    def resolved_base(self) -> str:
        return self.base or default_base()


@dataclass(frozen=True)
class TrainProgress:
    """One report: where training is, the running loss, the last dev F1 (if any)."""

    epoch: int
    epochs: int
    step: int
    steps: int
    loss: float | None
    dev_f1: float | None
    phase: str = "train"


@dataclass
class TrainResult:
    """How a run went; ``cancelled`` runs save nothing."""

    cancelled: bool
    epochs_run: int
    best_epoch: int | None
    best_dev_f1: float | None
    final_loss: float | None
    seconds: float
    examples: int
    history: list[dict[str, Any]] = field(default_factory=list)
    with_message: int = 0
    """Examples that carried their message alone (candidates for diff dropout)."""
    prior: dict[str, Any] | None = None
    """The perf prior the run started from (see engines.labelers.student.prior), if any."""
    lr: float = DEFAULT_LR
    """The step size the run took (``config.lr`` resolved)."""


ProgressFn = Callable[[TrainProgress], None]


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _targets(examples: Sequence[Example], batch: Sequence[int], soft: bool) -> Any:
    import torch

    values = [examples[i].target if soft else float(examples[i].label) for i in batch]
    return torch.tensor(values, dtype=torch.float32)


def soft_cross_entropy(logits: Any, positive: Any) -> Any:
    """Mean of ``-[t log S + (1 - t) log (1 - S)]`` with S the softmax of the logits."""
    import torch

    log_probs = torch.log_softmax(logits.float(), dim=-1)
    return -(positive * log_probs[:, 1] + (1.0 - positive) * log_probs[:, 0]).mean()


def weighted_soft_cross_entropy(logits: Any, positive: Any, weights: Any) -> Any:
    """The weighted mean of the per-example soft cross-entropy (weights sum > 0)."""
    import torch

    log_probs = torch.log_softmax(logits.float(), dim=-1)
    per_example = -(positive * log_probs[:, 1] + (1.0 - positive) * log_probs[:, 0])
    return (weights * per_example).sum() / weights.sum().clamp_min(1e-12)


def batch_loss(
    logits: Any, examples: Sequence[Example], batch: Sequence[int], soft: bool, device: Any
) -> Any:
    """A batch's loss: the plain mean when every example weighs 1, else weighted."""
    import torch

    targets = _targets(examples, batch, soft).to(device)
    weights = [examples[i].weight for i in batch]
    if all(w == 1.0 for w in weights):
        return soft_cross_entropy(logits, targets)
    return weighted_soft_cross_entropy(
        logits, targets, torch.tensor(weights, dtype=torch.float32, device=device)
    )


def _dev_f1(model: Any, tokenizer: Any, dev: Sequence[Example], config: TrainConfig, device: Any):
    probs = positive_probabilities(
        model, tokenizer, [e.text for e in dev], config.max_length, 64, device
    )
    return binary_f1([e.label for e in dev], [1 if p >= 0.5 else 0 for p in probs])


def _epoch_ids(
    full: Sequence[list[int]], messages: dict[int, list[int]], dropout: float, rng: random.Random
) -> list[list[int]]:
    """This epoch's token ids: each example with a message alone in ``messages`` takes it
    with probability ``dropout``, else its full text."""
    if not messages or dropout <= 0:
        return list(full)
    ids = list(full)
    for i in sorted(messages):
        if rng.random() < dropout:
            ids[i] = messages[i]
    return ids


def train_student(
    config: TrainConfig,
    train: Sequence[Example],
    dev: Sequence[Example],
    out_dir: Path,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    replay: Sequence[Example] | None = None,
) -> TrainResult:
    """Fine-tune the base encoder on ``train``; keep the epoch with the best dev F1 (the
    last epoch when ``dev`` is empty) and save it with its tokenizer to ``out_dir``, with
    a replay sample of ``replay`` (default: ``train``).

    With no ``train`` examples the run saves the base plus its perf prior as they are (a
    student whose every example the prior already learned); without a prior that is a
    ValueError."""
    import torch

    if config.epochs < 1 or config.batch_size < 1 or config.max_length < 8:
        raise ValueError("epochs and batch size must be positive, max length at least 8")
    started = time.monotonic()
    use_all_cores()
    seed_everything(config.seed if config.init_seed is None else config.init_seed)
    device = pick_device(config.device)
    tokenizer, model = load_encoder(config.resolved_base())
    if config.init_seed is not None:
        seed_everything(config.seed)
    prior = start_from_prior(model, config)
    if not train and prior is None:
        raise ValueError("no training examples")
    lr = config.lr if config.lr is not None else PRIOR_LR if prior is not None else DEFAULT_LR
    config = replace(config, lr=lr)
    if config.layers is not None:
        keep_layers(model, config.layers)
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and config.max_length > positions:
        raise ValueError(f"--max-length must be at most {positions} for this base")
    model.to(device)
    full_ids = tokenize(tokenizer, [e.text for e in train], config.max_length)
    droppable = [i for i, e in enumerate(train) if e.message is not None]
    message_ids = dict(
        zip(
            droppable,
            tokenize(tokenizer, [train[i].message or "" for i in droppable], config.max_length),
            strict=True,
        )
    )
    dropout_rng = random.Random(config.seed + 1)
    pad_id = pad_id_of(tokenizer)
    per_epoch = -(-len(train) // config.batch_size)
    total = per_epoch * config.epochs
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=config.weight_decay)
    warmup = int(total * config.warmup_ratio)

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / (warmup + 1)
        return max(0.0, (total - step) / max(1, total - warmup))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    rng = random.Random(config.seed)
    history: list[dict[str, Any]] = []
    best_state: dict[str, Any] | None = None
    best_f1: float | None = None
    best_epoch: int | None = None
    stale = 0
    step = 0
    loss_avg: float | None = None
    dev_f1: float | None = None
    epochs_run = 0
    cancelled = False
    for epoch in range(1, config.epochs + 1 if train else 1):
        ids = _epoch_ids(full_ids, message_ids, config.diff_dropout, dropout_rng)
        lengths = [len(x) for x in ids]
        model.train()
        running = 0.0
        seen = 0
        for batch in shuffled_length_batches(lengths, config.batch_size, rng):
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if step >= total:
                break
            inputs = pad_batch([ids[i] for i in batch], pad_id, device)
            logits = model(**inputs).logits
            loss = batch_loss(logits, train, batch, config.soft, device)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            step += 1
            running += float(loss.item()) * len(batch)
            seen += len(batch)
            loss_avg = running / seen
            if progress is not None:
                progress(TrainProgress(epoch, config.epochs, step, total, loss_avg, dev_f1))
        if cancelled:
            break
        epochs_run = epoch
        if dev:
            if progress is not None:
                progress(TrainProgress(epoch, config.epochs, step, total, loss_avg, dev_f1, "dev"))
            dev_f1 = _dev_f1(model, tokenizer, dev, config, device)
        history.append({"epoch": epoch, "steps": step, "loss": loss_avg, "dev_f1": dev_f1})
        if progress is not None:
            progress(TrainProgress(epoch, config.epochs, step, total, loss_avg, dev_f1, "epoch"))
        if dev_f1 is None or best_f1 is None or dev_f1 > best_f1:
            best_f1, best_epoch, stale = dev_f1, epoch, 0
            if dev and epoch < config.epochs and step < total:
                best_state = {
                    k: v.detach().to("cpu").clone() for k, v in model.state_dict().items()
                }
            else:
                best_state = None  # the live weights are the best ones
        else:
            stale += 1
            if stale >= config.patience:
                break
        if step >= total:
            break
    result = TrainResult(
        cancelled=cancelled,
        epochs_run=epochs_run,
        best_epoch=best_epoch,
        best_dev_f1=best_f1,
        final_loss=loss_avg,
        seconds=time.monotonic() - started,
        examples=len(train),
        history=history,
        with_message=len(droppable),
        prior=prior,
        lr=lr,
    )
    if cancelled:
        return result
    if best_state is not None and best_epoch != epochs_run:
        model.load_state_dict(best_state)
    save_student(model, tokenizer, out_dir, config, result)
    # what a warm start from this model replays
    write_replay(out_dir, train if replay is None else replay, config.seed)
    return result


def resolved_field(config: TrainConfig, result: TrainResult) -> str:
    """The text field a run read: ``auto`` left unresolved by the caller means message ||
    diff when some example carried a separate message, else the message."""
    if config.input_field != "auto":
        return config.input_field
    return "model_input" if result.with_message else "message"


def save_student(
    model: Any, tokenizer: Any, out_dir: Path, config: TrainConfig, result: TrainResult
) -> None:
    """Weights, tokenizer and Curator's metadata into ``out_dir`` (created)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    model.to("cpu").save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    meta = {
        "format": 1,
        "base": config.resolved_base(),
        "input_field": resolved_field(config, result),
        "max_length": config.max_length,
        "config": asdict(config),
        "prior": result.prior,
        "training": {
            "epochs_run": result.epochs_run,
            "best_epoch": result.best_epoch,
            "best_dev_f1": result.best_dev_f1,
            "final_loss": result.final_loss,
            "seconds": round(result.seconds, 2),
            "examples": result.examples,
            "history": result.history,
        },
    }
    (out_dir / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
