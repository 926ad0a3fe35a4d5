"""The Train screen's settings: what a curator can change before retraining, each value
checked as it is typed, and the :class:`TrainRequest` the settings make."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from curator.training import KINDS, TrainRequest
from engines.labelers.student import DEFAULT_MAX_LENGTH, TrainConfig
from engines.labelers.student.bases import check_base

NONE = "none"


class FormError(ValueError):
    """A value the setting cannot take; the message says what it takes."""


@dataclass(frozen=True)
class Setting:
    """One row of the form: ``kind`` says how enter edits it (choice, number, toggle,
    sets, text)."""

    key: str
    label: str
    kind: str
    hint: str


SETTINGS: tuple[Setting, ...] = (
    Setting("kind", "labeler", "choice", "student, or a TF-IDF baseline"),
    Setting("teacher", "teacher labels", "choice", "learn from a teacher's answers"),
    Setting("tau", "tau", "number", "keep teacher labels with confidence >= tau (0-100)"),
    Setting("votes", "human votes", "sets", "learn from these sets' settled votes"),
    Setting("dev", "dev set", "choice", "early stopping on its F1"),
    Setting("eval", "eval set", "choice", "scores and the comparison with the previous model"),
    Setting("epochs", "epochs", "number", "passes over the training data"),
    Setting("batch", "batch size", "number", "examples per step"),
    Setting("lr", "learning rate", "number", "AdamW step size (empty: 5e-5, 1e-5 from the prior)"),
    Setting("max_length", "max length", "number", "tokens the student reads per item"),
    Setting("layers", "layers", "number", "keep N encoder layers (empty: all)"),
    Setting(
        "base", "base model", "text", "Hugging Face directory, minilm or mpnet (empty: packaged)"
    ),
    Setting("from_model", "warm start from", "choice", "a registered student (none: the base)"),
    Setting("replay", "replay", "number", "warm start: old examples mixed in per new one"),
    Setting("soft", "soft labels", "toggle", "learn the teacher's confidence too"),
    Setting("exclude_overlap", "drop overlap", "toggle", "drop training items from dev/eval repos"),
    Setting(
        "same_repos", "same repos", "toggle", "votes may share repos, never items, with dev/eval"
    ),
    Setting("prior", "perf prior", "toggle", "packaged base: start from MiniLM + the perf prior"),
    Setting(
        "skip_learned", "skip prior's votes", "toggle", "leave out votes the perf prior learned"
    ),
)


@dataclass
class TrainForm:
    """The values on screen; :meth:`request` turns them into a training request."""

    kind: str = "student"
    teacher: str | None = None
    tau: float = 85.0
    votes: list[str] = field(default_factory=list)
    dev: str | None = None
    eval: str | None = None
    epochs: int = 3
    batch: int = 32
    lr: float | None = None
    max_length: int = DEFAULT_MAX_LENGTH
    layers: int | None = None
    base: str | None = None
    from_model: str | None = None
    replay: float = 0.5
    soft: bool = False
    exclude_overlap: bool = False
    same_repos: bool = False
    prior: bool = True
    skip_learned: bool = True

    def shown(self, key: str) -> str:
        value = getattr(self, key)
        if key == "votes":
            return ", ".join(value) if value else NONE
        if isinstance(value, bool):
            return "yes" if value else "no"
        if value is None:
            return {"layers": "all", "base": "packaged MiniLM", "lr": "auto"}.get(key, NONE)
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)

    def set_number(self, key: str, text: str) -> None:
        """Parse and check a typed number; raises :class:`FormError` naming the limits."""
        text = text.strip()
        if key in ("layers", "lr") and not text:
            setattr(self, key, None)
            return
        try:
            value: float = float(text) if key in ("tau", "lr", "replay") else int(text)
        except ValueError:
            raise FormError(f"{text!r} is not a number") from None
        if key == "tau" and not 0 <= value <= 100:
            raise FormError("tau is a confidence from 0 to 100")
        if key == "lr" and not 0 < value < 1:
            raise FormError("the learning rate must be above 0 and below 1")
        if key == "replay" and not (math.isfinite(value) and value >= 0):
            raise FormError("replay is a ratio of 0 or more (0.5: one old example per two new)")
        if key in ("epochs", "batch", "layers") and value < 1:
            raise FormError(f"{key} must be at least 1")
        if key == "max_length" and value < 8:
            raise FormError("max length must be at least 8 tokens")
        setattr(self, key, value)

    def set_base(self, text: str) -> None:
        text = text.strip()
        if not text:
            self.base = None
            return
        try:
            # A named base (mpnet) is only checked here; the training worker unpacks it.
            self.base = check_base(text)
        except ValueError as exc:
            raise FormError(str(exc)) from None

    def toggle_set(self, name: str) -> None:
        if name in self.votes:
            self.votes.remove(name)
        else:
            self.votes.append(name)

    def choose(self, key: str, value: str) -> None:
        if key == "kind":
            if value not in KINDS:
                raise FormError(f"labeler must be one of {', '.join(KINDS)}")
            self.kind = value
        else:
            setattr(self, key, None if value == NONE else value)

    def request(self) -> TrainRequest:
        config = replace(
            TrainConfig(),
            base=self.base,
            epochs=self.epochs,
            batch_size=self.batch,
            lr=self.lr,
            max_length=self.max_length,
            layers=self.layers,
            soft=self.soft,
            prior="perf" if self.prior else "none",
            prior_examples="skip" if self.skip_learned else "train",
        )
        return TrainRequest(
            kind=self.kind,
            teacher=self.teacher,
            tau=self.tau,
            vote_sets=tuple(self.votes),
            dev_set=self.dev,
            eval_set=self.eval,
            exclude_overlap=self.exclude_overlap,
            same_repos=self.same_repos,
            config=config,
            from_model=self.from_model if self.kind == "student" else None,
            replay=self.replay,
        )


def initial_form(
    teachers: list[str], set_names: list[str], current_student: str | None = None
) -> TrainForm:
    """Sensible first values: the teacher with the most answers, sets named like the
    docs' dev and eval sets when they exist, a warm start from the current student when
    one has been promoted."""
    form = TrainForm()
    form.from_model = "student@current" if current_student else None
    form.teacher = teachers[0] if teachers else None
    form.dev = next((n for n in set_names if n in ("gt-dev", "dev")), None)
    form.eval = next((n for n in set_names if n in ("gt-eval", "eval")), None)
    return form
