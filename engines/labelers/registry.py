"""Labelers by name: ``keyword@1``, ``heuristics@1``, ``student@N``, ``tfidf-lr@N``,
``tfidf-svm@N``, ``ensemble@N`` (its members resolved to concrete versions when the
ensemble is resolved). Every trained family also takes ``@latest`` (its newest version) and
``@current`` (its last promoted version, set with ``curator models promote``).

Trained models are looked up in the ``models`` table; rule labelers are built in code.
Teacher labels (``teacher:MODEL``) are not a loadable labeler: they come from
``curator teach`` and already sit in the predictions table.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from engines.labelers.base import Labeler, input_fields
from engines.labelers.inputs import recorded_input
from store import Store
from store.models import ModelRow, current_model, get_model, latest_model, list_models

TRAINED_FAMILIES = ("student", "tfidf-lr", "tfidf-svm", "ensemble")


class LabelerError(ValueError):
    """A labeler name that names nothing loadable."""


def _keyword(version: str, **_: Any) -> Labeler:
    from engines.labelers.keyword import KeywordLabeler, packaged_terms

    if version == "latest":
        return KeywordLabeler()
    if not version.isdecimal():
        raise LabelerError(f"keyword@{version}: a version is a number or 'latest'")
    try:
        return KeywordLabeler(packaged_terms(int(version)))
    except LookupError as exc:
        raise LabelerError(str(exc)) from exc


def _heuristics(version: str, **options: Any) -> Labeler:
    # The heuristic labeling functions are an optional module; this is its hook.
    if importlib.util.find_spec("engines.labelers.heuristics") is None:
        raise LabelerError("heuristics: engines/labelers/heuristics/ is not installed")
    module = importlib.import_module("engines.labelers.heuristics")
    cls = getattr(module, "HeuristicLabeler", None) or getattr(module, "HeuristicsLabeler", None)
    if cls is None:
        raise LabelerError("heuristics: engines.labelers.heuristics defines no labeler class")
    labeler = cls()
    if version not in ("latest", labeler.name.rsplit("@", 1)[-1]):
        raise LabelerError(f"heuristics@{version}: this build provides {labeler.name}")
    return labeler


RULE_LABELERS: dict[str, Callable[..., Labeler]] = {
    "keyword": _keyword,
    "heuristics": _heuristics,
}


def near_miss(family: str, version: str | None = None) -> str:
    """``; did you mean student@1?`` for a mistyped family (``studnet@1``), else ''
    (without ``version``: ``; did you mean student?``)."""
    known = [f for f in (*TRAINED_FAMILIES, *RULE_LABELERS) if f != family]
    close = get_close_matches(family, known, n=1, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean {close[0]}{'' if version is None else '@' + version}?"


def resolve_model(store: Store, name: str, files: bool = True) -> ModelRow:
    """The registered model a trained labeler name points to (``@latest`` and ``@current``
    resolved); with ``files`` (what running it needs), refused when its directory is
    gone."""
    family, _, version = name.rpartition("@")
    if family not in TRAINED_FAMILIES:
        raise LabelerError(
            f"{name!r} is not a trained labeler ({', '.join(TRAINED_FAMILIES)})"
            + near_miss(family, version)
        )
    if version == "latest":
        row = latest_model(store, family)
    elif version == "current":
        row = current_model(store, family)
        if row is None:
            raise LabelerError(not_promoted(store, family))
    else:
        row = get_model(store, name)
    if row is None:
        which = f"no {family} is registered" if version == "latest" else f"no model {name!r}"
        names = [m.name for m in list_models(store, family)]
        also = f" ({_registered(names)})" if names else ""
        raise LabelerError(f"{which}: train one with {train_command(family)}{also}")
    if files and model_missing(row):
        raise LabelerError(f"{row.name}: its directory {row.path!r} is missing")
    return row


def model_missing(row: ModelRow) -> bool:
    """Whether a registered model's directory is gone (deleted or moved since)."""
    return not row.path or not Path(row.path).is_dir()


def train_command(family: str) -> str:
    """The command that trains a version of ``family`` (the student is the default kind)."""
    return "`curator train`" if family == "student" else f"`curator train --kind {family}`"


def _registered(names: list[str]) -> str:
    if len(names) > 5:
        return f"registered: {', '.join(names[:2])}, ..., {', '.join(names[-2:])}"
    return f"registered: {', '.join(names)}"


def not_promoted(store: Store, family: str) -> str:
    """The one-line message for ``FAMILY@current`` when no version has been promoted."""
    names = [m.name for m in list_models(store, family)]
    if not names:
        have = f"no {family} is registered either: train one with {train_command(family)}"
    else:
        have = _registered(names)
    return f"no {family} has been promoted yet: `curator models promote {family}@N` ({have})"


def check_labeler(store: Store, name: str) -> None:
    """Raise :class:`LabelerError`, naming what is registered (:func:`resolve_model`),
    unless :func:`resolve_labeler` knows ``name`` (a rule labeler's version or a
    registered model)."""
    resolve_labeler(store, name)


@dataclass(frozen=True)
class LabelerSpec:
    """A labeler name resolved to all it takes to build the labeler without the store.

    This is what a cluster task carries to its worker: ``student@latest`` becomes the
    registered version's name and model directory, so every worker builds the same one.
    """

    name: str
    family: str
    version: str
    path: str | None = None
    batch_size: int = 64
    quantized: bool = False
    bf16: bool | None = None
    openvino: bool = False
    members: tuple[LabelerSpec, ...] = ()


def resolve_labeler(
    store: Store,
    name: str,
    batch_size: int = 64,
    quantized: bool = False,
    bf16: bool | None = None,
    openvino: bool = False,
) -> LabelerSpec:
    """The :class:`LabelerSpec` a name refers to; raises :class:`LabelerError` when none."""
    if name.startswith("teacher:"):
        raise LabelerError(
            f"{name}: teacher labels are asked with `curator teach`, not loaded as a labeler"
        )
    family, sep, version = name.rpartition("@")
    if not sep or not family or not version:
        raise LabelerError(f"{name!r}: expected NAME@VERSION, e.g. student@latest")
    if family in RULE_LABELERS:  # built here to check the version and learn @latest's
        built = RULE_LABELERS[family](version).name
        return LabelerSpec(built, family, built.rpartition("@")[2])
    row = resolve_model(store, name)
    members: tuple[LabelerSpec, ...] = ()
    if family == "ensemble":
        members = _ensemble_members(store, row, batch_size, quantized, bf16, openvino)
    return LabelerSpec(
        row.name,
        family,
        row.name.rpartition("@")[2],
        row.path,
        batch_size=batch_size,
        quantized=quantized,
        bf16=bf16,
        openvino=openvino,
        members=members,
    )


def _ensemble_members(store: Store, row: ModelRow, *options: Any) -> tuple[LabelerSpec, ...]:
    """The specs of an ensemble's members, by the concrete names it recorded."""
    from engines.labelers.ensemble import read_spec

    assert row.path is not None
    try:
        names = [m["name"] for m in read_spec(row.path)["members"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LabelerError(f"{row.name}: unreadable ensemble ({exc})") from None
    try:
        return tuple(resolve_labeler(store, n, *options) for n in names)
    except LabelerError as exc:
        raise LabelerError(f"{row.name}: member {exc}") from None


def build_labeler(spec: LabelerSpec, **options: Any) -> Labeler:
    """Build the labeler a spec describes (rule labelers take ``options``)."""
    if spec.family in RULE_LABELERS:
        return RULE_LABELERS[spec.family](spec.version, **options)
    _check_directory(spec)
    if spec.family == "ensemble":
        from engines.labelers.ensemble import EnsembleLabeler

        return EnsembleLabeler(spec.path, spec.name, [build_labeler(m) for m in spec.members])
    if spec.family == "student":
        from engines.labelers.student.infer import StudentLabeler

        return StudentLabeler(
            spec.path,
            spec.name,
            batch_size=spec.batch_size,
            quantized=spec.quantized,
            bf16=spec.bf16,
            openvino=spec.openvino,
        )
    from engines.labelers.tfidf import TfidfLabeler

    return TfidfLabeler(spec.path, spec.name)


def _check_directory(spec: LabelerSpec) -> None:
    """Raise :class:`LabelerError` when a trained labeler's model directory is gone."""
    if not spec.path or not Path(spec.path).is_dir():
        raise LabelerError(f"{spec.name}: its directory {spec.path!r} is missing")


def spec_fields(spec: LabelerSpec, input_field: str | None = None) -> tuple[str, ...]:
    """The commit fields the labeler ``spec`` describes reads (``input_fields`` of the
    built labeler: with a vetoing rule floor, the commit's ``files`` too), from what its
    training recorded: what a driver sends to workers, learned without loading a model.
    ``input_field`` overrides the text a single-field labeler reads, as
    ``curator predict --input`` does (an ensemble's members keep their own)."""
    from engines.labelers.rule_floor import fields_read, recorded_floor

    if spec.family in RULE_LABELERS:
        labeler = build_labeler(spec)
        if input_field is not None:
            labeler.input_field = input_field
        return input_fields(labeler)
    if spec.family == "ensemble":
        fields: list[str] = []
        for member in spec.members:
            fields += [f for f in spec_fields(member) if f not in fields]
        return tuple(fields)
    _check_directory(spec)
    if spec.family == "student":
        from engines.labelers.student.infer import read_meta
    else:
        from engines.labelers.tfidf import read_meta
    meta = read_meta(spec.path)
    return fields_read(input_field or recorded_input(meta)["field"], recorded_floor(meta))


def load_labeler(
    store: Store,
    name: str,
    batch_size: int = 64,
    quantized: bool = False,
    bf16: bool | None = None,
    openvino: bool = False,
    **options: Any,
) -> Labeler:
    """Build the labeler a name refers to; raises :class:`LabelerError` when it cannot."""
    family, _, version = name.rpartition("@")
    if family in RULE_LABELERS and version:  # built once, not to resolve and then build
        return RULE_LABELERS[family](version, **options)
    spec = resolve_labeler(store, name, batch_size, quantized, bf16, openvino)
    return build_labeler(spec, **options)
